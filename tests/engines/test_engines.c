/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several engines per port, in one process: two droce devices A and B
 * with 2 engines each, on two ring ethdevs joined queue to queue (A's TX
 * queue i is B's RX queue i and the other way round), 64 RC QPs on each
 * side, connected in pairs, SENDs both ways.
 *
 * - owned: each QP is paired with a peer on the engine of the same
 *   number, so every frame arrives on its owner's queue: both engines
 *   carry traffic, nothing is redirected, and every QP's work counters
 *   grow only at its owner.
 * - redirected: each QP is paired with a peer on the other engine, so
 *   every RoCE frame lands on the wrong queue and goes to its owner
 *   through the redirect ring; still only owners touch their QPs.
 *
 * - af_packet (its own test case, run by run_af_packet.sh): the same
 *   over two af_packet ports with two queues each on a veth pair, where
 *   the kernel, not the test, decides each frame's queue.
 * - least_loaded: the placement policy that gives a new QP to the engine
 *   with the fewest live QPs.
 * - local: QPs of one device paired with each other, their frames through
 *   the port's loopback ring.
 *
 * The engines run on droce's progress threads (one per engine, idle
 * sleep) while the test thread posts and polls. Under ThreadSanitizer
 * (TEST_ENGINES_INLINE) the test thread runs them all: the ring PMD hands
 * frames from one device's engine to the other's inside uninstrumented
 * DPDK, where TSan cannot see the handover, so with threads every frame
 * would be reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "droce_stats.h"
#include "droce_test.h"

#define ENGINES 2
#define NB_QPS 64
#define MSGS 8                /* each way, per QP */
#define MSG_LEN 512
#define RING_SIZE 1024

/* One side: a device, its context and the objects its QPs share. */
struct side {
	unsigned dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[NB_QPS];
	uint8_t *buf;             /* NB_QPS x MSGS receive slots, then one send slot */
	struct ibv_mr *mr;
	union ibv_gid gid;
};

static void
eal_start(void)
{
	static int done;
	char *argv[] = { "test_engines", "-l", "0", "--no-huge", "-m", "512", "--no-shconf",
			 "--no-pci", "--no-telemetry", NULL };

	if (done)
		return;
	ck_assert_int_ge(rte_eal_init(RTE_DIM(argv) - 1, argv), 0);
	done = 1;
}

/* Two ring ethdevs joined queue to queue. */
static void
rings_make(const char *tag, uint16_t port[2])
{
	struct rte_ring *ab[ENGINES], *ba[ENGINES];
	char name[RTE_RING_NAMESIZE];
	int i, p;

	for (i = 0; i < ENGINES; i++) {
		snprintf(name, sizeof(name), "%s_ab%d", tag, i);
		ab[i] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "%s_ba%d", tag, i);
		ba[i] = rte_ring_create(name, RING_SIZE, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		ck_assert(ab[i] != NULL && ba[i] != NULL);
	}
	snprintf(name, sizeof(name), "%s_a", tag);
	p = rte_eth_from_rings(name, ba, ENGINES, ab, ENGINES, SOCKET_ID_ANY);
	ck_assert_int_ge(p, 0);
	port[0] = (uint16_t)p;
	snprintf(name, sizeof(name), "%s_b", tag);
	p = rte_eth_from_rings(name, ab, ENGINES, ba, ENGINES, SOCKET_ID_ANY);
	ck_assert_int_ge(p, 0);
	port[1] = (uint16_t)p;
}

static void
side_open(struct side *s, uint16_t port, uint32_t ipv4)
{
	struct droce_port_conf conf = {
		.port_id = port, .ipv4 = ipv4, .ipv4_prefix = 24, .mtu = 1024,
		.nb_queues = ENGINES, .nb_mbufs = 4096,
	};
	size_t len = (NB_QPS * MSGS + 1) * MSG_LEN;

	ck_assert_int_eq(droce_dev_attach(&conf, &s->dev), 0);
	ck_assert_int_eq(droce_dev_engines(s->dev), ENGINES);
	s->ctx = ibv_open_device(droce_dev_ibv(s->dev));
	ck_assert_ptr_nonnull(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 2 * NB_QPS * MSGS + 16, NULL, NULL, 0);
	s->buf = calloc(1, len);
	ck_assert(s->pd != NULL && s->cq != NULL && s->buf != NULL);
	s->mr = ibv_reg_mr(s->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(s->mr);
	ck_assert_int_eq(ibv_query_gid(s->ctx, 1, 1, &s->gid), 0);
}

/* QP i on engine @p engine_of(i) (through droce_set_qp_engine()). */
static void
side_qps(struct side *s, unsigned flip)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = MSGS, .max_recv_wr = MSGS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	unsigned i;

	for (i = 0; i < NB_QPS; i++) {
		droce_set_qp_engine((int)((i + flip) % ENGINES));
		s->qp[i] = ibv_create_qp(s->pd, &ia);
		ck_assert_ptr_nonnull(s->qp[i]);
		ck_assert_int_eq(droce_qp_engine(s->qp[i]), (int)((i + flip) % ENGINES));
		/* The QPN names its owner. */
		ck_assert_uint_eq(s->qp[i]->qp_num & (ENGINES - 1), (i + flip) % ENGINES);
	}
	droce_set_qp_engine(-1);
}

static void
sides_connect(struct side *a, struct side *b)
{
	/* A 1 s ACK timeout (18): 128 QPs at once on a shared machine, or
	 * under ThreadSanitizer, can leave one waiting longer than 67 ms. */
	struct droce_test_path pa = { .dgid = b->gid, .psn = 100, .timeout = 18 };
	struct droce_test_path pb = { .dgid = a->gid, .psn = 100, .timeout = 18 };
	unsigned i, k;

	for (i = 0; i < NB_QPS; i++) {
		pa.dqpn = b->qp[i]->qp_num;
		pb.dqpn = a->qp[i]->qp_num;
		ck_assert_int_eq(droce_test_connect(a->qp[i], &pa), 0);
		ck_assert_int_eq(droce_test_connect(b->qp[i], &pb), 0);
		for (k = 0; k < MSGS; k++) {
			uint8_t *slot = a->buf + (i * MSGS + k) * MSG_LEN;

			droce_test_post_recv(a->qp[i], i, slot, MSG_LEN, a->mr->lkey);
			slot = b->buf + (i * MSGS + k) * MSG_LEN;
			droce_test_post_recv(b->qp[i], i, slot, MSG_LEN, b->mr->lkey);
		}
	}
}

static void
side_send(struct side *s)
{
	uint8_t *src = s->buf + NB_QPS * MSGS * MSG_LEN;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = MSG_LEN, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned i, k;

	droce_test_fill(src, MSG_LEN, 7);
	for (i = 0; i < NB_QPS; i++)
		for (k = 0; k < MSGS; k++) {
			wr.wr_id = i;
			ck_assert_int_eq(ibv_post_send(s->qp[i], &wr, &bad), 0);
		}
}

/* Every send and receive of @p s completed, each receive whole. The
 * wait runs @p peer's engines too, for runs without progress threads. */
static void
side_complete(struct side *s, const struct side *peer)
{
	unsigned done = 0, got[NB_QPS] = { 0 }, i;
	double end = droce_test_now() + 20;
	struct ibv_wc wc[16];
	int n;

	while (done < 2 * NB_QPS * MSGS) {
		ck_assert_msg(droce_test_now() < end, "%u of %u completions", done,
			      2 * NB_QPS * MSGS);
		droce_dev_poll(peer->dev);
		n = ibv_poll_cq(s->cq, RTE_DIM(wc), wc);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < (unsigned)n; i++, done++) {
			ck_assert_msg(wc[i].status == IBV_WC_SUCCESS, "QP %lu: %s",
				      (unsigned long)wc[i].wr_id, ibv_wc_status_str(wc[i].status));
			if (wc[i].opcode == IBV_WC_RECV) {
				ck_assert_uint_eq(wc[i].byte_len, MSG_LEN);
				got[wc[i].wr_id]++;
			}
		}
	}
	for (i = 0; i < NB_QPS; i++)
		ck_assert_uint_eq(got[i], MSGS);
}

/* Only each QP's owner did work for it; every engine moved messages.
 * @return the frames the side's queues handed to another engine. */
static uint64_t
side_check(const struct side *s)
{
	struct droce_dev_stats st;
	uint64_t redirected = 0;
	unsigned i, e, owner;

	for (i = 0; i < NB_QPS; i++) {
		owner = (unsigned)droce_qp_engine(s->qp[i]);
		for (e = 0; e < ENGINES; e++) {
			uint64_t w = droce_qp_engine_work(s->qp[i], e);

			if (e == owner)
				ck_assert_msg(w > 0, "QP %u: its owner did nothing", i);
			else
				ck_assert_msg(w == 0, "QP %u: engine %u touched it", i, e);
		}
	}
	for (e = 0; e < ENGINES; e++) {
		ck_assert_int_eq(droce_dev_engine_stats(s->dev, e, &st), 0);
		ck_assert_msg(st.engine.rx_msgs >= NB_QPS / ENGINES * MSGS &&
			      st.engine.tx_msgs >= NB_QPS / ENGINES * MSGS,
			      "engine %u: %lu messages in, %lu out", e,
			      (unsigned long)st.engine.rx_msgs, (unsigned long)st.engine.tx_msgs);
		ck_assert_uint_eq(st.port.rx_redirect_drops, 0);
		ck_assert_uint_eq(st.engine.rx.rx_unknown_qpn, 0);
		redirected += st.port.rx_redirected_out;
	}
	ck_assert_int_eq(droce_dev_stats(s->dev, &st), 0);
	/* What one queue handed over, another took in. */
	ck_assert_uint_eq(st.port.rx_redirected_out, st.port.rx_redirected_in);
	return redirected;
}

static void
side_close(struct side *s)
{
	unsigned i;

	for (i = 0; i < NB_QPS; i++)
		ck_assert_int_eq(ibv_destroy_qp(s->qp[i]), 0);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

/* Frames each engine of @p s took from its ethdev queue: both > 0 when
 * the port spread them. */
static void
side_rx_spread(const struct side *s)
{
	struct droce_dev_stats st;
	unsigned e;

	for (e = 0; e < ENGINES; e++) {
		ck_assert_int_eq(droce_dev_engine_stats(s->dev, e, &st), 0);
		ck_assert_msg(st.port.rx_frames > 0, "engine %u: no frame from its queue", e);
	}
}

/* Run 64 QP pairs on @p port; B's QP i is on the engine A's is on plus
 * @p flip. @return frames redirected on A and on B. With @p spread, each
 * engine of both sides must have received frames from its own queue. */
static void
run_pairs(const uint16_t port[2], unsigned flip, bool spread, uint64_t redirected[2])
{
	struct side a = { 0 }, b = { 0 };

	side_open(&a, port[0], 0x0a630101u);
	side_open(&b, port[1], 0x0a630102u);
#ifndef TEST_ENGINES_INLINE
	ck_assert_int_eq(droce_dev_run_thread(a.dev, 100), 0);
	ck_assert_int_eq(droce_dev_run_thread(b.dev, 100), 0);
#endif
	side_qps(&a, 0);
	side_qps(&b, flip);
	sides_connect(&a, &b);
	side_send(&a);
	side_send(&b);
	side_complete(&a, &b);
	side_complete(&b, &a);
	redirected[0] = side_check(&a);
	redirected[1] = side_check(&b);
	if (spread) {
		side_rx_spread(&a);
		side_rx_spread(&b);
	}
	side_close(&b);
	side_close(&a);
	ck_assert_int_eq(droce_dev_detach(b.dev), 0);
	ck_assert_int_eq(droce_dev_detach(a.dev), 0);
}

START_TEST(owned)
{
	uint64_t redirected[2];
	uint16_t port[2];

	eal_start();
	rings_make("own", port);
	run_pairs(port, 0, false, redirected);
	ck_assert_uint_eq(redirected[0], 0);
	ck_assert_uint_eq(redirected[1], 0);
}
END_TEST

START_TEST(redirected)
{
	uint64_t redirected[2];
	uint16_t port[2];

	eal_start();
	rings_make("red", port);
	run_pairs(port, 1, false, redirected);
	/* Every request and every ACK came in on the other engine's queue. */
	ck_assert_uint_ge(redirected[0], NB_QPS * MSGS);
	ck_assert_uint_ge(redirected[1], NB_QPS * MSGS);
}
END_TEST

/*
 * QPs of one device talking to each other over a port whose ethdev does
 * not loop back (A's TX ring is B's RX ring, and no device is attached to
 * B): QP i with QP i ^ 1, on the other engine, SENDs both ways. Each frame
 * must take A's loopback ring; sent to the ethdev it would be lost.
 */
START_TEST(local)
{
	struct droce_test_path path = { .psn = 100, .timeout = 18 };
	struct side a = { 0 };
	struct droce_dev_stats st;
	uint16_t port[2];
	unsigned i, k;

	eal_start();
	rings_make("loc", port);
	side_open(&a, port[0], 0x0a630401u);
#ifndef TEST_ENGINES_INLINE
	ck_assert_int_eq(droce_dev_run_thread(a.dev, 100), 0);
#endif
	side_qps(&a, 0);
	path.dgid = a.gid;
	for (i = 0; i < NB_QPS; i++) {
		path.dqpn = a.qp[i ^ 1]->qp_num;
		ck_assert_int_eq(droce_test_connect(a.qp[i], &path), 0);
		for (k = 0; k < MSGS; k++)
			droce_test_post_recv(a.qp[i], i, a.buf + (i * MSGS + k) * MSG_LEN, MSG_LEN,
					     a.mr->lkey);
	}
	side_send(&a);
	side_complete(&a, &a);
	ck_assert_int_eq(droce_dev_stats(a.dev, &st), 0);
	/* Every request and every ACK came back through the loopback ring. */
	ck_assert_uint_ge(st.port.rx_loopback, NB_QPS * MSGS);
	side_close(&a);
	ck_assert_int_eq(droce_dev_detach(a.dev), 0);
}
END_TEST

/*
 * Least-loaded placement: each new QP goes to the engine with the fewest
 * live QPs, whatever was destroyed before.
 */
START_TEST(least_loaded)
{
	struct droce_port_conf conf = {
		.ipv4 = 0x0a630301u, .ipv4_prefix = 24, .mtu = 1024, .nb_queues = ENGINES,
		.nb_mbufs = 4096, .placement = DROCE_PLACE_LEAST_LOADED,
	};
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[6];
	uint16_t port[2];
	unsigned dev, i;

	eal_start();
	rings_make("ll", port);
	conf.port_id = port[0];
	ck_assert_int_eq(droce_dev_attach(&conf, &dev), 0);
	ctx = ibv_open_device(droce_dev_ibv(dev));
	ck_assert_ptr_nonnull(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	ck_assert(pd != NULL && cq != NULL);
	/* Ties go to the lower engine: 0, 1, 0, 1. */
	for (i = 0; i < 4; i++) {
		qp[i] = droce_test_qp_new(pd, cq, IBV_QPT_RC, 0);
		ck_assert_int_eq(droce_qp_engine(qp[i]), (int)(i % ENGINES));
	}
	/* Engine 1 loses its two: the next two QPs are its. */
	ck_assert_int_eq(ibv_destroy_qp(qp[1]), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp[3]), 0);
	qp[1] = droce_test_qp_new(pd, cq, IBV_QPT_RC, 0);
	qp[3] = droce_test_qp_new(pd, cq, IBV_QPT_RC, 0);
	ck_assert_int_eq(droce_qp_engine(qp[1]), 1);
	ck_assert_int_eq(droce_qp_engine(qp[3]), 1);
	/* The application's choice still wins. */
	droce_set_qp_engine(1);
	qp[4] = droce_test_qp_new(pd, cq, IBV_QPT_RC, 0);
	droce_set_qp_engine(-1);
	qp[5] = droce_test_qp_new(pd, cq, IBV_QPT_RC, 0);
	ck_assert_int_eq(droce_qp_engine(qp[4]), 1);
	ck_assert_int_eq(droce_qp_engine(qp[5]), 0);
	for (i = 0; i < RTE_DIM(qp); i++)
		ck_assert_int_eq(ibv_destroy_qp(qp[i]), 0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ck_assert_int_eq(droce_dev_detach(dev), 0);
}
END_TEST

/* An af_packet port with 2 queue pairs (qpairs=2: one packet socket per
 * queue in a fanout group) on interface @p iface, named @p name. */
static uint16_t
af_packet_make(const char *name, const char *iface)
{
	char args[128];
	uint16_t port;

	snprintf(args, sizeof(args), "%s,iface=%s,qpairs=%u", name, iface, ENGINES);
	ck_assert_int_eq(rte_dev_probe(args), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(name, &port), 0);
	return port;
}

/*
 * The same 64 QP pairs between two af_packet ports on the two ends of a
 * veth pair (DROCE_TEST_VETH=A,B; tests/engines/run_af_packet.sh makes
 * it): the kernel spreads the frames over each port's two sockets by
 * flow hash (the QPs' UDP source ports differ), so every engine receives
 * from its own queue and hands strays to their owner; still only owners
 * touch their QPs.
 */
START_TEST(af_packet)
{
	const char *veth = getenv("DROCE_TEST_VETH");
	char ifs[64], *comma;
	uint64_t redirected[2];
	uint16_t port[2];

	ck_assert_msg(veth != NULL && strlen(veth) < sizeof(ifs) && strchr(veth, ',') != NULL,
		      "DROCE_TEST_VETH=A,B names the veth pair");
	snprintf(ifs, sizeof(ifs), "%s", veth);
	comma = strchr(ifs, ',');
	*comma = '\0';
	eal_start();
	port[0] = af_packet_make("net_af_packet_a", ifs);
	port[1] = af_packet_make("net_af_packet_b", comma + 1);
	run_pairs(port, 0, true, redirected);
	ck_assert_uint_gt(redirected[0] + redirected[1], 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("engines");
	TCase *t = tcase_create("engines");
	TCase *af = tcase_create("af_packet");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, owned);
	tcase_add_test(t, redirected);
	tcase_add_test(t, least_loaded);
	tcase_add_test(t, local);
	suite_add_tcase(s, t);
	/* Needs a veth pair: run_af_packet.sh runs it (CK_RUN_CASE). */
	tcase_set_timeout(af, 60);
	tcase_add_test(af, af_packet);
	suite_add_tcase(s, af);
	return droce_test_run(s) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
