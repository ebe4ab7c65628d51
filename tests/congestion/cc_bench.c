/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion bench (docs/congestion.md): two sender devices, N/2 RC
 * QPs each, stream 64 KiB RDMA WRITEs to N QPs of a receiver device,
 * through one bottleneck on the receiver's port (a queue that drains at a
 * set rate, marks CE above a threshold and drops on overflow, as a switch
 * port does). The three devices sit on ring ethdevs in this one process:
 * both senders transmit into the receiver's RX ring, as two hosts into
 * one switch port, and the bench forwards what the receiver sends to the
 * sender whose MAC it names (a copy to each for a broadcast), as the
 * switch would. This thread runs every engine, so the bench needs no NIC,
 * no second process and no second core.
 *
 * It runs the same load twice, with DCQCN off and on, and prints per run:
 * goodput, each sender's and each QP's share and Jain's fairness index
 * over both, the bottleneck's drops, marks and longest queue, CNPs, rate
 * cuts, retransmissions. --csv writes every QP's goodput per millisecond
 * (the plot in docs/congestion.md); --check exits 1 unless DCQCN keeps
 * the queue from overflowing (drops at most 0.1% of the frames), shares
 * the rate between the senders and between the QPs (Jain's index >= 0.9
 * over each) and the run without it lost frames and retransmitted.
 *
 * Usage: cc_bench [--qps N] [--seconds S] [--rate MBPS] [--queue BYTES]
 *                 [--mark BYTES] [--timer-us US] [--csv FILE] [--check]
 * (defaults: 4 QPs, two per sender, 1 s, 1000 Mb/s, 512 KiB, 32 KiB, 300 us).
 *
 * The bottleneck is 1 Gb/s, a fortieth of the paper's 40 Gb/s links, so
 * the bench sets DCQCN's rate and alpha timers to 300 us (ConnectX's
 * rpg_time_reset) instead of the paper's 55 us: at 55 us the additive
 * increase (5 Mb/s a stage, 90 Mb/s a millisecond) outruns the cuts that
 * a queue draining 30 000 frames a second can signal.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "droce.h"
#include "droce_qp.h"
#include "droce_stats.h"
#include "droce_test.h"

#define MAX_QPS 8
#define SENDERS 2
#define MSG (64 * 1024)
#define DEPTH 4                      /* WRITEs outstanding per QP */
#define SAMPLE_US 1000
#define MAX_SAMPLES 20000

struct opts {
	unsigned qps;                /* in all: half from each sender */
	double seconds;
	uint32_t rate_mbps, queue, mark;
	uint32_t timer_us;           /* DCQCN's rate and alpha timers; 0: the default */
	const char *csv;
	bool check;
};

struct side {
	unsigned dev;
	unsigned nqps;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp *qp[MAX_QPS];
	union ibv_gid gid;
};

struct result {
	double gbps, jain, jain_senders;
	double share[MAX_QPS];
	double sender_share[SENDERS];
	uint64_t frames, dropped, marked, max_queue, cnps, cuts, retransmits, timeouts;
	unsigned failed;             /* QPs that gave up (retry counter exceeded) */
};

static uint64_t samples[MAX_SAMPLES][MAX_QPS];

/* Hosts: the receiver is 0, sender s is 1 + s; host h has the address
 * 10.77.0.(1 + h) and the MAC 02:77:00:00:00:(1 + h). */
enum { RECEIVER = 0 };

static struct rte_ring *
ring(const char *what, unsigned run)
{
	char name[32];

	snprintf(name, sizeof(name), "ccb_%s%u", what, run);
	return rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

/* An ethdev on rings @p rx and @p tx, named after @p what and the run. */
static int
ring_port(const char *what, unsigned run, struct rte_ring *rx, struct rte_ring *tx)
{
	char name[32];

	snprintf(name, sizeof(name), "ccb_%s%u", what, run);
	return rte_eth_from_rings(name, &rx, 1, &tx, 1, SOCKET_ID_ANY);
}

static void
side_open(struct side *s, int port, unsigned host, unsigned nqps, const struct opts *o,
	  bool dcqcn)
{
	struct droce_port_conf conf = {
		.port_id = (uint16_t)port, .ipv4 = RTE_IPV4(10, 77, 0, 1 + host), .ipv4_prefix = 24,
		.mtu = 4096, .link_up = true, .mac_set = true,
		.mac.addr_bytes = { 0x02, 0x77, 0, 0, 0, (uint8_t)(1 + host) },
	};

	droce_cc_conf_default(&conf.cc);
	conf.cc.dcqcn = dcqcn;
	if (o->timer_us != 0)
		conf.cc.dcqcn_conf.rate_timer_us = conf.cc.dcqcn_conf.alpha_timer_us = o->timer_us;
	if (host == RECEIVER)
		conf.bottleneck = (struct droce_bottleneck_conf){
			.rate_mbps = o->rate_mbps, .queue_bytes = o->queue, .mark_bytes = o->mark };
	if (droce_dev_attach(&conf, &s->dev) != 0 ||
	    (s->ctx = ibv_open_device(droce_dev_ibv(s->dev))) == NULL) {
		fprintf(stderr, "cc_bench: cannot attach a device\n");
		exit(2);
	}
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, MAX_QPS * DEPTH * 2, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, MSG);
	memset(s->buf, 0xa5, MSG);
	s->mr = ibv_reg_mr(s->pd, s->buf, MSG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (s->pd == NULL || s->cq == NULL || s->mr == NULL ||
	    ibv_query_gid(s->ctx, 1, 1, &s->gid) != 0) {
		fprintf(stderr, "cc_bench: verbs setup failed\n");
		exit(2);
	}
	s->nqps = nqps;
	for (unsigned i = 0; i < nqps; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		s->qp[i] = ibv_create_qp(s->pd, &ia);
		if (s->qp[i] == NULL) {
			fprintf(stderr, "cc_bench: ibv_create_qp failed\n");
			exit(2);
		}
	}
}

static void
side_close(struct side *s)
{
	for (unsigned i = 0; i < s->nqps; i++)
		ibv_destroy_qp(s->qp[i]);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	droce_dev_detach(s->dev);
	free(s->buf);
}

/* Sender @p a's QP @p i to the receiver's QP @p j. */
static void
connect_pair(struct side *a, unsigned i, struct side *b, unsigned j)
{
	/* Timeout 14 (67 ms, what perftest and most programs set): a loss
	 * costs one, then go-back-N resends the rest of the window. */
	struct droce_test_path pa = { .dqpn = b->qp[j]->qp_num, .dgid = b->gid, .psn = 1,
				      .mtu = IBV_MTU_4096, .timeout = 14, .retry_cnt = 7 };
	struct droce_test_path pb = { .dqpn = a->qp[i]->qp_num, .dgid = a->gid, .psn = 1,
				      .mtu = IBV_MTU_4096, .timeout = 14, .retry_cnt = 7 };

	if (droce_test_connect(a->qp[i], &pa) != 0 || droce_test_connect(b->qp[j], &pb) != 0) {
		fprintf(stderr, "cc_bench: connect failed\n");
		exit(2);
	}
}

/* The network of one run: both senders transmit into the receiver's RX
 * ring (to_rx); the receiver transmits into from_rx, which switch_frames()
 * empties into the senders' RX rings (to_tx). */
struct net {
	struct rte_ring *to_rx, *from_rx, *to_tx[SENDERS];
	int port_rx, port_tx[SENDERS];
	struct side rx, tx[SENDERS];
};

/* The switch's other direction: each frame the receiver sent goes to the
 * sender whose MAC it is addressed to, a broadcast (ARP) to both. */
static void
switch_frames(struct net *n)
{
	struct rte_mbuf *m[32], *c;
	unsigned k, nb, s;

	nb = rte_ring_dequeue_burst(n->from_rx, (void **)m, RTE_DIM(m), NULL);
	for (k = 0; k < nb; k++) {
		const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m[k], const struct rte_ether_hdr *);

		if (rte_is_broadcast_ether_addr(&eh->dst_addr)) {
			c = rte_pktmbuf_copy(m[k], m[k]->pool, 0, UINT32_MAX);
			if (c != NULL && rte_ring_enqueue(n->to_tx[1], c) != 0)
				rte_pktmbuf_free(c);
			s = 0;
		} else {
			/* the MACs end in 1 + host: senders are hosts 1 and 2 */
			s = (unsigned)eh->dst_addr.addr_bytes[5] - 2;
		}
		if (s >= SENDERS || rte_ring_enqueue(n->to_tx[s], m[k]) != 0)
			rte_pktmbuf_free(m[k]);
	}
}

/* Every engine once. The senders take turns at going first, so neither
 * finds the bottleneck's queue fuller than the other does. */
static void
poll_all(struct net *n, unsigned turn)
{
	droce_dev_poll(n->tx[turn & 1].dev);
	droce_dev_poll(n->tx[(turn & 1) ^ 1].dev);
	droce_dev_poll(n->rx.dev);
	switch_frames(n);
}

/* The senders' QPs to the error state (they send nothing more), then
 * every engine for a while, so the receiver takes in what is still on
 * its way. */
static void
stop_senders(struct net *n)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 5;
	struct ibv_wc wc[32];
	unsigned turn = 0;

	for (unsigned s = 0; s < SENDERS; s++)
		for (unsigned i = 0; i < n->tx[s].nqps; i++)
			ibv_modify_qp(n->tx[s].qp[i], &attr, IBV_QP_STATE);
	while (rte_get_tsc_cycles() < end) {
		poll_all(n, turn++);
		for (unsigned s = 0; s < SENDERS; s++)
			while (ibv_poll_cq(n->tx[s].cq, 32, wc) > 0)
				;
	}
}

static void
ring_free(struct rte_ring *r)
{
	void *obj;

	while (rte_ring_dequeue(r, &obj) == 0)
		rte_pktmbuf_free(obj);
}

/* Sent frames point into the sender's memory (zero-copy TX over a ring
 * ethdev hands over the mbufs themselves), and a sender's QPs are not
 * destroyed before those frames are let go: stop the senders, let the
 * receiver take in what is on its way, free what it sent, close it, free
 * what it left in its RX ring, then close the senders. */
static void
net_close(struct net *n)
{
	stop_senders(n);
	ring_free(n->from_rx);
	for (unsigned s = 0; s < SENDERS; s++)
		ring_free(n->to_tx[s]);
	side_close(&n->rx);
	ring_free(n->to_rx);
	for (unsigned s = 0; s < SENDERS; s++)
		side_close(&n->tx[s]);
	/* Stopped, not closed: the next run's ethdevs get new port numbers,
	 * so nothing named after a port number meets its old self. */
	rte_eth_dev_stop((uint16_t)n->port_rx);
	for (unsigned s = 0; s < SENDERS; s++)
		rte_eth_dev_stop((uint16_t)n->port_tx[s]);
}

static void
net_open(struct net *n, const struct opts *o, bool dcqcn, unsigned nrun)
{
	static const char *const names[SENDERS] = { "tx0_", "tx1_" };
	unsigned half = o->qps / 2;

	memset(n, 0, sizeof(*n));
	n->to_rx = ring("in", nrun);
	n->from_rx = ring("out", nrun);
	n->port_rx = ring_port("rx", nrun, n->to_rx, n->from_rx);
	if (n->to_rx == NULL || n->from_rx == NULL || n->port_rx < 0)
		goto fail;
	side_open(&n->rx, n->port_rx, RECEIVER, o->qps, o, dcqcn);
	for (unsigned s = 0; s < SENDERS; s++) {
		n->to_tx[s] = ring(names[s], nrun);
		n->port_tx[s] = n->to_tx[s] == NULL ? -1 :
				ring_port(names[s], nrun, n->to_tx[s], n->to_rx);
		if (n->port_tx[s] < 0)
			goto fail;
		side_open(&n->tx[s], n->port_tx[s], 1 + s, half, o, dcqcn);
		for (unsigned i = 0; i < half; i++)
			connect_pair(&n->tx[s], i, &n->rx, s * half + i);
	}
	return;
fail:
	fprintf(stderr, "cc_bench: no ring ethdevs\n");
	exit(2);
}

static int
post_write(struct side *a, struct side *b, unsigned i)
{
	struct ibv_sge sge = { (uintptr_t)a->buf, MSG, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = (uintptr_t)b->buf, .rkey = b->mr->rkey } },
		*bad;

	return ibv_post_send(a->qp[i], &wr, &bad);
}

/* Jain's fairness index of @p n values: (sum x)^2 / (n sum x^2). */
static double
jain(const double *x, unsigned n)
{
	double s = 0, s2 = 0;

	for (unsigned i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	return s2 > 0 ? s * s / (n * s2) : 0;
}

/* The senders' DCQCN and reliability counters, summed. */
struct tx_counts {
	uint64_t cuts, retransmits, timeouts;
};

static void
tx_counts(const struct net *n, struct tx_counts *c)
{
	struct droce_dev_stats st;

	memset(c, 0, sizeof(*c));
	for (unsigned s = 0; s < SENDERS; s++) {
		droce_dev_stats(n->tx[s].dev, &st);
		c->cuts += st.engine.cc.rate_decreases;
		for (unsigned i = 0; i < n->tx[s].nqps; i++) {
			const struct droce_qp *q = droce_qp_of(n->tx[s].qp[i]);

			c->retransmits += q->stats.retransmits;
			c->timeouts += q->stats.timeouts;
		}
	}
}

static void
run(const struct opts *o, bool dcqcn, unsigned nrun, struct result *r, unsigned *nsamples)
{
	struct net n;
	unsigned half = o->qps / 2;
	uint64_t done[MAX_QPS] = { 0 }, hz = rte_get_tsc_hz(), t0, end, next, warm;
	unsigned outstanding[MAX_QPS] = { 0 }, ns = 0, failed = 0, turn = 0;
	bool dead[MAX_QPS] = { false };
	struct droce_dev_stats sb, sb0;
	struct tx_counts c0, c1;
	bool measuring = false;
	struct ibv_wc wc[32];
	uint64_t total = 0;

	net_open(&n, o, dcqcn, nrun);
	/* A quarter second to warm up (ARP, first rate cuts), then measure. */
	t0 = rte_get_tsc_cycles();
	warm = t0 + hz / 4;
	end = warm + (uint64_t)(o->seconds * hz);
	next = warm + hz * SAMPLE_US / 1000000;
	for (;;) {
		uint64_t now = rte_get_tsc_cycles();

		/* Counters from here on: the steady state, not the first burst
		 * every QP sends at line rate before any CNP can come back. */
		if (!measuring && now >= warm) {
			measuring = true;
			droce_dev_stats(n.rx.dev, &sb0);
			tx_counts(&n, &c0);
		}
		/* QP k of the run is sender k / half's QP k % half. */
		for (unsigned k = 0; k < o->qps; k++) {
			struct side *a = &n.tx[k / half];

			while (!dead[k] && outstanding[k] < DEPTH &&
			       post_write(a, &n.rx, k % half) == 0)
				outstanding[k]++;
		}
		poll_all(&n, turn++);
		for (unsigned s = 0; s < SENDERS; s++) {
			int got = ibv_poll_cq(n.tx[s].cq, 32, wc);

			for (int i = 0; i < got; i++) {
				unsigned k = s * half + (unsigned)wc[i].wr_id;

				outstanding[k]--;
				/* Congestion collapse: the QP gave up. It stays dead. */
				if (wc[i].status != IBV_WC_SUCCESS) {
					failed += !dead[k];
					dead[k] = true;
					continue;
				}
				if (now >= warm)
					done[k] += MSG;
			}
		}
		if (now >= next && ns < MAX_SAMPLES) {
			memcpy(samples[ns++], done, sizeof(done));
			next += hz * SAMPLE_US / 1000000;
		}
		if (now >= end)
			break;
	}
	droce_dev_stats(n.rx.dev, &sb);
	tx_counts(&n, &c1);
	memset(r, 0, sizeof(*r));
	for (unsigned k = 0; k < o->qps; k++)
		total += done[k];
	for (unsigned k = 0; k < o->qps; k++) {
		r->share[k] = total != 0 ? (double)done[k] / (double)total : 0;
		r->sender_share[k / half] += r->share[k];
	}
	r->gbps = (double)total * 8 / o->seconds / 1e9;
	r->jain = jain(r->share, o->qps);
	r->jain_senders = jain(r->sender_share, SENDERS);
	r->frames = sb.port.rx_bottleneck.frames - sb0.port.rx_bottleneck.frames;
	r->dropped = sb.port.rx_bottleneck.dropped - sb0.port.rx_bottleneck.dropped;
	r->marked = sb.port.rx_bottleneck.marked - sb0.port.rx_bottleneck.marked;
	r->max_queue = sb.port.rx_bottleneck.max_queue_bytes;
	r->cnps = sb.engine.cc.cnps_sent - sb0.engine.cc.cnps_sent;
	r->cuts = c1.cuts - c0.cuts;
	r->retransmits = c1.retransmits - c0.retransmits;
	r->timeouts = c1.timeouts - c0.timeouts;
	r->failed = failed;
	*nsamples = ns;
	net_close(&n);
}

static void
print(const char *what, const struct opts *o, const struct result *r)
{
	unsigned half = o->qps / 2;

	printf("%-11s goodput %6.3f Gb/s  senders: jain %.3f shares %.3f %.3f; QPs: jain %.3f "
	       "shares", what, r->gbps, r->jain_senders, r->sender_share[0], r->sender_share[1],
	       r->jain);
	for (unsigned k = 0; k < o->qps; k++)
		printf("%s%.3f", k % half == 0 ? (k == 0 ? " " : " | ") : " ", r->share[k]);
	printf("\n            bottleneck: frames %" PRIu64 " dropped %" PRIu64 " marked %" PRIu64
	       " longest queue (warm-up included) %" PRIu64 " B; cnps %" PRIu64 " rate cuts %" PRIu64
	       " retransmits %" PRIu64 " timeouts %" PRIu64 "; QPs failed %u\n",
	       r->frames, r->dropped, r->marked, r->max_queue, r->cnps, r->cuts, r->retransmits,
	       r->timeouts, r->failed);
}

static void
write_csv(const struct opts *o, FILE *f, const char *what, unsigned ns)
{
	for (unsigned s = 0; s < ns; s++) {
		fprintf(f, "%s,%u", what, s + 1);
		for (unsigned i = 0; i < o->qps; i++) {
			uint64_t d = samples[s][i] - (s > 0 ? samples[s - 1][i] : 0);

			/* bytes per SAMPLE_US to Mb/s */
			fprintf(f, ",%.1f", (double)d * 8 / SAMPLE_US);
		}
		fputc('\n', f);
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: cc_bench [--qps N] [--seconds S] [--rate MBPS] [--queue BYTES] "
		"[--mark BYTES] [--timer-us US] [--csv FILE] [--check]\n");
	exit(2);
}

static void
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "qps", required_argument, NULL, 'q' }, { "seconds", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' }, { "queue", required_argument, NULL, 'Q' },
		{ "mark", required_argument, NULL, 'm' }, { "csv", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' }, { "timer-us", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q': o->qps = (unsigned)atoi(optarg); break;
		case 's': o->seconds = atof(optarg); break;
		case 'r': o->rate_mbps = (uint32_t)atoi(optarg); break;
		case 'Q': o->queue = (uint32_t)atoi(optarg); break;
		case 'm': o->mark = (uint32_t)atoi(optarg); break;
		case 'c': o->csv = optarg; break;
		case 'k': o->check = true; break;
		case 't': o->timer_us = (uint32_t)atoi(optarg); break;
		default: usage();
		}
	}
	/* an even number: half from each sender */
	if (o->qps < 2 || o->qps > MAX_QPS || o->qps % 2 != 0 || !(o->seconds > 0 && o->seconds <= 20) ||
	    o->rate_mbps == 0 || o->mark > o->queue)
		usage();
}

int
main(int argc, char **argv)
{
	char *eal[] = { "cc_bench", "-l", "0", "--no-huge", "-m", "1024", "--no-shconf",
			"--no-pci", "--no-telemetry", "--log-level=*:warning", NULL };
	struct opts o = { .qps = 4, .seconds = 1, .rate_mbps = 1000, .queue = 512 * 1024,
			  .mark = 32 * 1024, .timer_us = 300 };
	struct result off, on;
	unsigned ns_off, ns_on;
	FILE *f;
	int bad = 0;

	parse(argc, argv, &o);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "cc_bench: EAL init failed\n");
		return 2;
	}
	printf("2 senders, %u QPs each, 64 KiB WRITEs, bottleneck %u Mb/s, queue %u B, marking above %u B, "
	       "DCQCN timers %u us, %.1f s each\n", o.qps / 2, o.rate_mbps, o.queue, o.mark, o.timer_us,
	       o.seconds);
	run(&o, false, 0, &off, &ns_off);
	if (o.csv != NULL && (f = fopen(o.csv, "w")) != NULL) {
		write_csv(&o, f, "off", ns_off);
		fclose(f);
	}
	print("dcqcn off", &o, &off);
	run(&o, true, 1, &on, &ns_on);
	if (o.csv != NULL && (f = fopen(o.csv, "a")) != NULL) {
		write_csv(&o, f, "on", ns_on);
		fclose(f);
	}
	print("dcqcn on", &o, &on);
	if (o.check) {
		if (on.dropped * 1000 > on.frames) {
			fprintf(stderr, "check: with DCQCN the bottleneck dropped %" PRIu64 " of %" PRIu64
				" frames\n", on.dropped, on.frames);
			bad = 1;
		}
		if (on.failed != 0) {
			fprintf(stderr, "check: with DCQCN %u QPs gave up\n", on.failed);
			bad = 1;
		}
		if (on.jain < 0.9 || on.jain_senders < 0.9) {
			fprintf(stderr, "check: with DCQCN Jain's index is %.3f over the QPs, %.3f "
				"over the senders\n", on.jain, on.jain_senders);
			bad = 1;
		}
		if (off.dropped == 0 || (off.retransmits == 0 && off.failed == 0)) {
			fprintf(stderr, "check: without DCQCN nothing was lost (the load is too light)\n");
			bad = 1;
		}
		if (on.cnps == 0 || on.cuts == 0) {
			fprintf(stderr, "check: no CNP or no rate cut with DCQCN\n");
			bad = 1;
		}
	}
	rte_eal_cleanup();
	return bad;
}
