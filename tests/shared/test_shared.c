/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port shared with the application, in one process: ring ethdevs X and
 * Y joined queue to queue (X's TX queue i is Y's RX queue i and the other
 * way round), 2 queue pairs each.
 *
 * X is the application's: the test configures and starts it, promiscuous,
 * with its own mbuf pool, keeps queue 0 and attaches droce to queue 1
 * (shared mode). Y is an ordinary droce device with 2 engines, so its
 * engine 0 sends to X's queue 0 (the application's, which hands the
 * frames to droce_dev_rx_burst()) and its engine 1 to X's queue 1
 * (droce's). RC QPs between them exchange SENDs while the test thread
 * pumps X's queue 0, copying every other frame into a pool without
 * droce's private area (droce must copy those), and injects frames that
 * are not droce's (another EtherType, ARP for another address): those
 * must come back, exactly. droce must leave X as the application set it:
 * started, promiscuous, its MTU; the ring PMD has no flow API, so no rule.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "droce_driver.h"
#include "droce_test.h"

#define QUEUES 2
#define NB_QPS 8
#define MSGS 8                /* each way, per QP */
#define MSG_LEN 512
#define RING_SIZE 1024
#define INJECTED 16           /* frames of another EtherType */
#define ETHER_TYPE_LOCAL 0x88b5
#define IP_X 0x0a630201u      /* 10.99.2.1, droce on X */
#define IP_Y 0x0a630202u

struct side {
	unsigned dev;
	/* buf[0]: NB_QPS x MSGS receive slots, then one send slot */
	struct droce_test_loop l;
	struct ibv_qp *qp[NB_QPS];
};

/* The application's side of X. */
static struct {
	uint16_t x, y;
	struct rte_mempool *pool;     /* with droce's private area */
	struct rte_mempool *bare;     /* without */
	struct rte_ring *to_x0;       /* what Y's queue 0 sends, X's queue 0 receives */
	unsigned frames;              /* frames offered to droce */
	unsigned returned;            /* frames droce handed back */
	unsigned returned_ours;       /* ... that the test injected */
} app;

static void
eal_start(void)
{
	char *argv[] = { "test_shared", "-l", "0", "--no-huge", "-m", "512", "--no-shconf",
			 "--no-pci", "--no-telemetry", NULL };

	ck_assert_int_ge(rte_eal_init(RTE_DIM(argv) - 1, argv), 0);
}

/* X and Y, joined queue to queue. Multi-producer rings: the test thread
 * injects into X's queue 0 while Y's engine 0 sends there. */
static void
rings_make(void)
{
	struct rte_ring *xy[QUEUES], *yx[QUEUES];
	char name[RTE_RING_NAMESIZE];
	int i, p;

	for (i = 0; i < QUEUES; i++) {
		snprintf(name, sizeof(name), "xy%d", i);
		xy[i] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY, 0);
		snprintf(name, sizeof(name), "yx%d", i);
		yx[i] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY, 0);
		ck_assert(xy[i] != NULL && yx[i] != NULL);
	}
	app.to_x0 = yx[0];
	p = rte_eth_from_rings("x", yx, QUEUES, xy, QUEUES, SOCKET_ID_ANY);
	ck_assert_int_ge(p, 0);
	app.x = (uint16_t)p;
	p = rte_eth_from_rings("y", xy, QUEUES, yx, QUEUES, SOCKET_ID_ANY);
	ck_assert_int_ge(p, 0);
	app.y = (uint16_t)p;
}

/* What the application does with X before it attaches droce. */
static void
app_port_start(void)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;

	app.pool = rte_pktmbuf_pool_create("app", 4095, 0, DROCE_MBUF_PRIV_SIZE,
					   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	app.bare = rte_pktmbuf_pool_create("app_bare", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   SOCKET_ID_ANY);
	ck_assert(app.pool != NULL && app.bare != NULL);
	ck_assert_int_eq(rte_eth_dev_configure(app.x, QUEUES, QUEUES, &conf), 0);
	for (q = 0; q < QUEUES; q++) {
		ck_assert_int_eq(rte_eth_rx_queue_setup(app.x, q, 256, SOCKET_ID_ANY, NULL,
							app.pool), 0);
		ck_assert_int_eq(rte_eth_tx_queue_setup(app.x, q, 256, SOCKET_ID_ANY, NULL), 0);
	}
	ck_assert_int_eq(rte_eth_dev_start(app.x), 0);
	ck_assert_int_eq(rte_eth_promiscuous_enable(app.x), 0);
}

static void
side_open(struct side *s, const struct droce_port_conf *conf)
{
	unsigned i;

	ck_assert_int_eq(droce_dev_attach(conf, &s->dev), 0);
	ck_assert_int_eq(droce_dev_run_thread(s->dev, 100), 0);
	ck_assert_int_eq(droce_test_dev_open(&s->l, droce_dev_ibv(s->dev),
					     RTE_ALIGN_CEIL((NB_QPS * MSGS + 1) * MSG_LEN, 4096),
					     IBV_ACCESS_LOCAL_WRITE), 0);
	for (i = 0; i < NB_QPS; i++)
		s->qp[i] = droce_test_qp_new(s->l.pd, s->l.cq, IBV_QPT_RC, 0);
}

static void
side_close(struct side *s)
{
	unsigned i;

	for (i = 0; i < NB_QPS; i++)
		ck_assert_int_eq(ibv_destroy_qp(s->qp[i]), 0);
	droce_test_loop_close(&s->l);
	ck_assert_int_eq(droce_dev_detach(s->dev), 0);
}

/* Connect the QP pairs, post every receive, then every SEND both ways. */
static void
sides_start(struct side *a, struct side *b)
{
	struct side *s[2] = { a, b };
	struct ibv_sge sge = { .length = MSG_LEN };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned i, k, j;

	for (i = 0; i < NB_QPS; i++)
		for (j = 0; j < 2; j++) {
			struct droce_test_path p = { .dgid = s[!j]->l.gid, .psn = 7,
						     .dqpn = s[!j]->qp[i]->qp_num, .timeout = 18 };

			ck_assert_int_eq(droce_test_connect(s[j]->qp[i], &p), 0);
			for (k = 0; k < MSGS; k++)
				droce_test_post_recv(s[j]->qp[i], i,
						     s[j]->l.buf[0] + (i * MSGS + k) * MSG_LEN,
						     MSG_LEN, s[j]->l.mr[0]->lkey);
		}
	for (j = 0; j < 2; j++) {
		sge.addr = (uintptr_t)(s[j]->l.buf[0] + NB_QPS * MSGS * MSG_LEN);
		sge.lkey = s[j]->l.mr[0]->lkey;
		droce_test_fill(s[j]->l.buf[0] + NB_QPS * MSGS * MSG_LEN, MSG_LEN, j);
		for (i = 0; i < NB_QPS; i++)
			for (k = 0; k < MSGS; k++)
				ck_assert_int_eq(ibv_post_send(s[j]->qp[i], &wr, &bad), 0);
	}
}

/* One burst of X's queue 0 through droce_dev_rx_burst(), as the
 * application's loop does; every other frame first copied into the pool
 * without droce's private area. */
static void
app_pump(unsigned xdev)
{
	struct rte_mbuf *pkts[32];
	uint16_t n = rte_eth_rx_burst(app.x, 0, pkts, RTE_DIM(pkts)), back, i;

	if (n == 0)
		return;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *c;

		if (app.frames++ % 2 == 0)
			continue;
		c = rte_pktmbuf_copy(pkts[i], app.bare, 0, UINT32_MAX);
		ck_assert_ptr_nonnull(c);
		rte_pktmbuf_free(pkts[i]);
		pkts[i] = c;
	}
	back = droce_dev_rx_burst(xdev, pkts, n);
	for (i = 0; i < back; i++) {
		const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);

		app.returned++;
		if (eh->ether_type == RTE_BE16(ETHER_TYPE_LOCAL) ||
		    eh->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP))
			app.returned_ours++;
	}
	rte_pktmbuf_free_bulk(pkts, back);
}

/* Into X's queue 0: INJECTED frames of another EtherType to droce's MAC
 * (@p mac), and an ARP request for an address that is not droce's. */
static void
app_inject(const struct rte_ether_addr *mac)
{
	unsigned i;

	for (i = 0; i <= INJECTED; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(app.pool);
		struct rte_ether_hdr *eh;
		struct rte_arp_hdr *arp;

		ck_assert_ptr_nonnull(m);
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, 64);
		ck_assert_ptr_nonnull(eh);
		memset(eh, 0, 64);
		eh->dst_addr = *mac;
		eh->src_addr.addr_bytes[0] = 0x02;
		eh->ether_type = RTE_BE16(ETHER_TYPE_LOCAL);
		if (i == INJECTED) {
			eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
			arp = (struct rte_arp_hdr *)(eh + 1);
			arp->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
			arp->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
			arp->arp_hlen = RTE_ETHER_ADDR_LEN;
			arp->arp_plen = 4;
			arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
			arp->arp_data.arp_tip = rte_cpu_to_be_32(IP_X + 10);
		}
		ck_assert_int_eq(rte_ring_enqueue(app.to_x0, m), 0);
	}
}

/* Every completion of @p a and @p b, pumping X's queue 0 meanwhile. */
static void
sides_complete(unsigned xdev, struct side *a, struct side *b)
{
	struct side *s[2] = { a, b };
	unsigned done = 0, j;
	double end = droce_test_now() + 20;
	struct ibv_wc wc[16];
	int n, i;

	while (done < 4 * NB_QPS * MSGS) {
		ck_assert_msg(droce_test_now() < end, "%u of %u completions", done,
			      4 * NB_QPS * MSGS);
		app_pump(xdev);
		for (j = 0; j < 2; j++) {
			n = ibv_poll_cq(s[j]->l.cq, RTE_DIM(wc), wc);
			ck_assert_int_ge(n, 0);
			for (i = 0; i < n; i++, done++)
				ck_assert_msg(wc[i].status == IBV_WC_SUCCESS, "%s",
					      ibv_wc_status_str(wc[i].status));
		}
	}
	/* The injected frames are behind the ones that completed: drain. */
	for (end = droce_test_now() + 2; droce_test_now() < end &&
	     app.returned_ours < INJECTED + 1;)
		app_pump(xdev);
}

START_TEST(shared_port)
{
	struct droce_port_conf xc = {
		.port_id = 0, .ipv4 = IP_X, .ipv4_prefix = 24, .mtu = 4096, .nb_queues = 1,
		.nb_mbufs = 4096, .shared = true, .queues = { 1 },
	};
	struct droce_port_conf yc = {
		.port_id = 0, .ipv4 = IP_Y, .ipv4_prefix = 24, .mtu = 1024,
		.nb_queues = QUEUES, .nb_mbufs = 4096,
	};
	struct side x = { 0 }, y = { 0 };
	struct droce_port_stats st;
	struct droce_drv_caps caps;
	struct rte_eth_link link;
	struct rte_ether_addr mac;
	char pool[RTE_MEMPOOL_NAMESIZE];

	eal_start();
	rings_make();
	app_port_start();
	xc.port_id = app.x;
	yc.port_id = app.y;
	/* Queues the application did not configure, or twice the same. */
	xc.queues[0] = QUEUES;
	ck_assert_int_eq(droce_dev_attach(&xc, &x.dev), -EINVAL);
	xc.queues[0] = 1;
	side_open(&x, &xc);
	side_open(&y, &yc);
	ck_assert_uint_eq(droce_dev_rx_burst(y.dev, NULL, 5), 5);

	/* The ethdev as the application set it; its 1500-byte MTU carries
	 * IB MTU 1024, and the ring PMD takes no flow rule. */
	ck_assert_int_eq(rte_eth_promiscuous_get(app.x), 1);
	ck_assert_uint_eq(droce_port_mtu(droce_dev_port(x.dev)), 1024);
	droce_port_driver(droce_dev_port(x.dev), &caps);
	ck_assert(!caps.rx_flow_qpn && !caps.rx_rss_udp);

	droce_port_mac(droce_dev_port(x.dev), &mac);
	app_inject(&mac);
	sides_start(&x, &y);
	sides_complete(x.dev, &x, &y);

	droce_port_stats_get(droce_dev_port(x.dev), &st);
	ck_assert_uint_eq(app.returned_ours, INJECTED + 1);
	ck_assert_uint_eq(st.rx_app_returned, app.returned);
	/* Y's engine 0 sent its ARP and its QPs' frames to the application. */
	ck_assert_uint_gt(st.rx_app_taken, NB_QPS / 2 * MSGS);
	ck_assert_uint_gt(st.rx_app_copied, 0);
	ck_assert_uint_lt(st.rx_app_copied, st.rx_app_taken);
	ck_assert_uint_eq(st.rx_app_drops, 0);
	ck_assert_uint_ge(st.rx_roce, NB_QPS * MSGS);

	side_close(&y);
	side_close(&x);
	/* Every mbuf of droce's pool on X came back, those its engine kept
	 * for frames to come too: the pool is freed, not left to the ethdev. */
	snprintf(pool, sizeof(pool), "droce_mp%u", app.x);
	ck_assert_ptr_null(rte_mempool_lookup(pool));
	/* Detached, X still runs, promiscuous, for the application. */
	ck_assert_int_eq(rte_eth_link_get_nowait(app.x, &link), 0);
	ck_assert_int_eq(link.link_status, RTE_ETH_LINK_UP);
	ck_assert_int_eq(rte_eth_promiscuous_get(app.x), 1);
	ck_assert_int_eq(rte_eth_dev_stop(app.x), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("shared");
	TCase *t = tcase_create("shared");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, shared_port);
	suite_add_tcase(s, t);
	return droce_test_run(s) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
