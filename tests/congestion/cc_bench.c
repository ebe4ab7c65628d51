/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion bench (docs/congestion.md): N RC QPs of one droce device
 * stream 64 KiB RDMA WRITEs to N QPs of a second device, through one
 * bottleneck on the receiver's port (a queue that drains at a set rate,
 * marks CE above a threshold and drops on overflow, as a switch port
 * does). The two devices sit on ring ethdevs connected back to back in
 * this one process, and this thread runs both engines, so the bench needs
 * no NIC, no second process and no second core.
 *
 * It runs the same load twice, with DCQCN off and on, and prints per run:
 * goodput, each QP's share and Jain's fairness index, the bottleneck's
 * drops, marks and longest queue, CNPs, rate cuts, retransmissions.
 * --csv writes every QP's goodput per millisecond (the plot in
 * docs/congestion.md); --check exits 1 unless DCQCN keeps the queue from
 * overflowing (drops at most 0.1% of the frames), shares the rate (Jain's
 * index >= 0.9) and the run without it lost frames and retransmitted.
 *
 * Usage: cc_bench [--qps N] [--seconds S] [--rate MBPS] [--queue BYTES]
 *                 [--mark BYTES] [--timer-us US] [--csv FILE] [--check]
 * (defaults: 4 QPs, 1 s, 1000 Mb/s, 512 KiB, 32 KiB, 300 us).
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
#define MSG (64 * 1024)
#define DEPTH 4                      /* WRITEs outstanding per QP */
#define SAMPLE_US 1000
#define MAX_SAMPLES 20000

struct opts {
	unsigned qps;
	double seconds;
	uint32_t rate_mbps, queue, mark;
	uint32_t timer_us;           /* DCQCN's rate and alpha timers; 0: the default */
	const char *csv;
	bool check;
};

struct side {
	unsigned dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp *qp[MAX_QPS];
	union ibv_gid gid;
};

struct result {
	double gbps, jain;
	double share[MAX_QPS];
	uint64_t frames, dropped, marked, max_queue, cnps, cuts, retransmits, timeouts;
	unsigned failed;             /* QPs that gave up (retry counter exceeded) */
};

static uint64_t samples[MAX_SAMPLES][MAX_QPS];

static struct rte_ring *
ring(const char *what, unsigned run)
{
	char name[32];

	snprintf(name, sizeof(name), "ccb_%s%u", what, run);
	return rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

static void
side_open(struct side *s, int port, uint32_t ip, const struct opts *o, bool receiver,
	  bool dcqcn)
{
	struct droce_port_conf conf = {
		.port_id = (uint16_t)port, .ipv4 = ip, .ipv4_prefix = 24, .mtu = 4096,
		.link_up = true,
	};

	droce_cc_conf_default(&conf.cc);
	conf.cc.dcqcn = dcqcn;
	if (o->timer_us != 0)
		conf.cc.dcqcn_conf.rate_timer_us = conf.cc.dcqcn_conf.alpha_timer_us = o->timer_us;
	if (receiver)
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
	for (unsigned i = 0; i < o->qps; i++) {
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
side_close(struct side *s, unsigned qps)
{
	for (unsigned i = 0; i < qps; i++)
		ibv_destroy_qp(s->qp[i]);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	droce_dev_detach(s->dev);
	free(s->buf);
}

static void
connect_pair(struct side *a, struct side *b, unsigned i)
{
	/* Timeout 14 (67 ms, what perftest and most programs set): a loss
	 * costs one, then go-back-N resends the rest of the window. */
	struct droce_test_path pa = { .dqpn = b->qp[i]->qp_num, .dgid = b->gid, .psn = 1,
				      .mtu = IBV_MTU_4096, .timeout = 14, .retry_cnt = 7 };
	struct droce_test_path pb = { .dqpn = a->qp[i]->qp_num, .dgid = a->gid, .psn = 1,
				      .mtu = IBV_MTU_4096, .timeout = 14, .retry_cnt = 7 };

	if (droce_test_connect(a->qp[i], &pa) != 0 || droce_test_connect(b->qp[i], &pb) != 0) {
		fprintf(stderr, "cc_bench: connect failed\n");
		exit(2);
	}
}

/* The senders' QPs to the error state (they send nothing more), then
 * both engines for a while, so the receiver takes in what is still on
 * its way. */
static void
stop_senders(struct side *a, struct side *b, unsigned qps)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 5;
	struct ibv_wc wc[32];

	for (unsigned i = 0; i < qps; i++)
		ibv_modify_qp(a->qp[i], &attr, IBV_QP_STATE);
	while (rte_get_tsc_cycles() < end) {
		droce_dev_poll(a->dev);
		droce_dev_poll(b->dev);
		while (ibv_poll_cq(a->cq, 32, wc) > 0)
			;
	}
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

static void
run(const struct opts *o, bool dcqcn, unsigned nrun, struct result *r, unsigned *nsamples)
{
	struct rte_ring *ab = ring("ab", nrun), *ba = ring("ba", nrun);
	char name[32];
	int pa, pb;
	struct side a = { 0 }, b = { 0 };
	uint64_t done[MAX_QPS] = { 0 }, hz = rte_get_tsc_hz(), t0, end, next, warm;
	unsigned outstanding[MAX_QPS] = { 0 }, ns = 0, failed = 0;
	bool dead[MAX_QPS] = { false };
	struct droce_dev_stats sa, sb, sa0, sb0;
	uint64_t rt0[MAX_QPS], to0[MAX_QPS];
	bool measuring = false;
	struct ibv_wc wc[32];
	uint64_t total = 0;
	void *obj = NULL;

	snprintf(name, sizeof(name), "ccb_a%u", nrun);
	pa = rte_eth_from_rings(name, &ba, 1, &ab, 1, SOCKET_ID_ANY);
	snprintf(name, sizeof(name), "ccb_b%u", nrun);
	pb = rte_eth_from_rings(name, &ab, 1, &ba, 1, SOCKET_ID_ANY);
	if (ab == NULL || ba == NULL || pa < 0 || pb < 0) {
		fprintf(stderr, "cc_bench: no ring ethdevs\n");
		exit(2);
	}
	side_open(&a, pa, RTE_IPV4(10, 77, 0, 1), o, false, dcqcn);
	side_open(&b, pb, RTE_IPV4(10, 77, 0, 2), o, true, dcqcn);
	for (unsigned i = 0; i < o->qps; i++)
		connect_pair(&a, &b, i);
	/* A quarter second to warm up (ARP, first rate cuts), then measure. */
	t0 = rte_get_tsc_cycles();
	warm = t0 + hz / 4;
	end = warm + (uint64_t)(o->seconds * hz);
	next = warm + hz * SAMPLE_US / 1000000;
	for (;;) {
		uint64_t now = rte_get_tsc_cycles();
		int n;

		/* Counters from here on: the steady state, not the first burst
		 * every QP sends at line rate before any CNP can come back. */
		if (!measuring && now >= warm) {
			measuring = true;
			droce_dev_stats(a.dev, &sa0);
			droce_dev_stats(b.dev, &sb0);
			for (unsigned i = 0; i < o->qps; i++) {
				rt0[i] = droce_qp_of(a.qp[i])->stats.retransmits;
				to0[i] = droce_qp_of(a.qp[i])->stats.timeouts;
			}
		}

		for (unsigned i = 0; i < o->qps; i++)
			while (!dead[i] && outstanding[i] < DEPTH && post_write(&a, &b, i) == 0)
				outstanding[i]++;
		droce_dev_poll(a.dev);
		droce_dev_poll(b.dev);
		n = ibv_poll_cq(a.cq, 32, wc);
		for (int k = 0; k < n; k++) {
			outstanding[wc[k].wr_id]--;
			/* Congestion collapse: the QP gave up. It stays dead. */
			if (wc[k].status != IBV_WC_SUCCESS) {
				failed += !dead[wc[k].wr_id];
				dead[wc[k].wr_id] = true;
				continue;
			}
			if (now >= warm)
				done[wc[k].wr_id] += MSG;
		}
		if (now >= next && ns < MAX_SAMPLES) {
			memcpy(samples[ns++], done, sizeof(done));
			next += hz * SAMPLE_US / 1000000;
		}
		if (now >= end)
			break;
	}
	droce_dev_stats(a.dev, &sa);
	droce_dev_stats(b.dev, &sb);
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < o->qps; i++) {
		const struct droce_qp *q = droce_qp_of(a.qp[i]);

		total += done[i];
		r->retransmits += q->stats.retransmits - rt0[i];
		r->timeouts += q->stats.timeouts - to0[i];
	}
	for (unsigned i = 0; i < o->qps; i++)
		r->share[i] = total != 0 ? (double)done[i] / (double)total : 0;
	r->gbps = (double)total * 8 / o->seconds / 1e9;
	r->jain = jain(r->share, o->qps);
	r->frames = sb.port.rx_bottleneck.frames - sb0.port.rx_bottleneck.frames;
	r->dropped = sb.port.rx_bottleneck.dropped - sb0.port.rx_bottleneck.dropped;
	r->marked = sb.port.rx_bottleneck.marked - sb0.port.rx_bottleneck.marked;
	r->max_queue = sb.port.rx_bottleneck.max_queue_bytes;
	r->cnps = sb.engine.cc.cnps_sent - sb0.engine.cc.cnps_sent;
	r->cuts = sa.engine.cc.rate_decreases - sa0.engine.cc.rate_decreases;
	r->failed = failed;
	*nsamples = ns;
	/* Sent frames point into the sender's memory (zero-copy TX over a
	 * ring ethdev hands over the mbufs themselves), and the sender's QPs
	 * are not destroyed before those frames are let go: stop the
	 * senders, let the receiver take in what is on its way, close it,
	 * free what it left in its RX ring, then close the senders. */
	stop_senders(&a, &b, o->qps);
	side_close(&b, o->qps);
	while (rte_ring_dequeue(ab, &obj) == 0)
		rte_pktmbuf_free(obj);
	side_close(&a, o->qps);
	/* Stopped, not closed: the next run's ethdevs get new port numbers,
	 * so nothing named after a port number meets its old self. */
	rte_eth_dev_stop((uint16_t)pa);
	rte_eth_dev_stop((uint16_t)pb);
}

static void
print(const char *what, const struct opts *o, const struct result *r)
{
	printf("%-11s goodput %6.3f Gb/s  jain %.3f  shares", what, r->gbps, r->jain);
	for (unsigned i = 0; i < o->qps; i++)
		printf(" %.3f", r->share[i]);
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
	if (o->qps < 2 || o->qps > MAX_QPS || !(o->seconds > 0 && o->seconds <= 20) ||
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
	printf("%u QPs, 64 KiB WRITEs, bottleneck %u Mb/s, queue %u B, marking above %u B, "
	       "DCQCN timers %u us, %.1f s each\n", o.qps, o.rate_mbps, o.queue, o.mark, o.timer_us,
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
		if (on.jain < 0.9) {
			fprintf(stderr, "check: with DCQCN Jain's index is %.3f\n", on.jain);
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
