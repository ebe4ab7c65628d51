/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce's engine alone, in cycles: one device on a ring ethdev (no copy
 * in the port, no second process, no scheduler between the two sides),
 * driven by a raw RoCEv2 peer in the same thread (tests/common/droce_peer.h).
 * Each case runs many times; the lowest and the median TSC cycles per
 * message are reported, and the mean of the faster half of the runs. The
 * minimum moves little on a busy machine: it is the figure to compare two
 * builds by (docs/benchmarks.md, "The engine alone"). The TSC counts in
 * steps (21 cycles here), which hides what a build changes at -n 1: the
 * faster half's mean averages over the steps and resolves a few cycles.
 * droce-perf measures the same work over a real port, with the port's cost
 * and the scheduler's in it.
 *
 *   idle      droce_dev_poll() with nothing to do: an iteration's fixed cost
 *   poll_cq   ibv_poll_cq() on an empty CQ (which runs an iteration)
 *   write_rx  N WRITE ONLY of S bytes from the peer: received, checked,
 *             written, one coalesced ACK sent (the responder's side: the
 *             poll that receives, and the next one, which sends the ACK
 *             the first held back; with N 32, a full burst, the ACK
 *             waits a poll more)
 *   write_tx  N RDMA WRITEs of S bytes posted one per ibv_post_send() and
 *             sent (the requester's side)
 *   ack_rx    the ACK for them received and N completions polled
 *   pingpong  one side's half of an S-byte WRITE ping-pong, what a latency
 *             test's half round trip costs it: the peer's ACK of the
 *             device's last WRITE and the peer's next WRITE arrive in one
 *             burst; ibv_poll_cq() finds the completion (its engine turn
 *             takes both frames), then the answer is posted and goes out
 *             with the ACK held back for the peer's WRITE (-n is 1)
 *
 * Usage: engine_bench [-n N] [-s S] [-o OFF] [-r RUNS] [-c CASE] [-t] [-i] [-C CRC]
 *                     [-e EAL_ARGS] [-j]
 *   N 1..32 messages per run (default 32; 1 shows what a latency test pays
 *   per message), S 0..4096 bytes (default 64), OFF 0..4095: where in the
 *   region the WRITEs' data starts (default 0, a page boundary; a copy's
 *   speed can depend on it), RUNS per case (default
 *   20000), CASE idle, write_rx, write_tx (and ack_rx) or pingpong only, for a
 *   profiler; -t: the QP on a parent domain with a thread domain (posts
 *   take no lock); -i: the device's WRITEs (write_tx, pingpong) posted
 *   inline (IBV_SEND_INLINE, up to 256 bytes), as perftest and droce-perf
 *   post small ones; CRC: the CRC path, lib, sse, avx2, avx512 or vpclmul
 *   (default: the fastest the CPU runs; another shows what a CPU without
 *   the faster one's instructions pays). Prints one line per
 *   case, JSON with -j.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "droce.h"
#include "droce_peer.h"
#include "droce_test.h"
#include "droce_wire.h"

#define PEER_QPN 0x100
#define PSN0 0x10
#define BURST_MAX 32
#define BUF (1u << 20)
/* The most the device's WRITEs carry inline with -i. */
#define INLINE_MAX 256

struct bench {
	struct droce_peer peer;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp *qp;
	uint32_t rx_psn;             /* the next PSN the peer sends */
	uint32_t tx_psn;             /* the next PSN the device sends */
	uint32_t tx_msn;             /* the device's messages the peer acknowledged */
	unsigned n, size, off, runs;
	bool td;                     /* the QP on a parent domain with a thread domain */
	unsigned send_flags;         /* the device's WRITEs: IBV_SEND_INLINE with -i */
	uint64_t *samples;
};

struct result {
	const char *name;
	double min, median;          /* cycles per message */
	double low_mean;             /* the mean of the faster half of the runs */
};

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct result
summarize(const struct bench *b, const char *name, unsigned per)
{
	unsigned half = RTE_MAX(b->runs / 2, 1u);
	double sum = 0;

	qsort(b->samples, b->runs, sizeof(b->samples[0]), cmp_u64);
	for (unsigned i = 0; i < half; i++)
		sum += (double)b->samples[i];
	return (struct result){ name, (double)b->samples[0] / per,
				(double)b->samples[b->runs / 2] / per, sum / half / per };
}

static void
die(const char *what)
{
	fprintf(stderr, "engine_bench: %s\n", what);
	exit(1);
}

/* Take what the device sent. @return the RoCEv2 frames among it (the
 * rest: the ARP probes that keep its neighbour entry fresh). */
static unsigned
drain_roce(struct bench *b)
{
	struct rte_mbuf *m;
	struct droce_pkt pkt;
	unsigned n = 0;

	while (rte_ring_dequeue(b->peer.from_dev, (void **)&m) == 0) {
		n += droce_pkt_parse(m, &pkt, false) == DROCE_PARSE_OK;
		rte_pktmbuf_free(m);
	}
	return n;
}

static void
setup(struct bench *b)
{
	struct droce_test_path path;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = INLINE_MAX },
	};

	if (droce_peer_open(&b->peer, 4096) != 0)
		die("no device (EAL arguments? see -e)");
	droce_peer_verbs(&b->peer, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &b->pd,
			 &b->cq, &b->buf, &b->mr);
	if (b->mr == NULL)
		die("no memory region");
	ia.send_cq = ia.recv_cq = b->cq;
	if (b->td) {
		struct ibv_td_init_attr ta = { 0 };
		struct ibv_parent_domain_init_attr pa = { .pd = b->pd };

		pa.td = ibv_alloc_td(b->peer.ctx, &ta);
		b->pd = pa.td != NULL ? ibv_alloc_parent_domain(b->peer.ctx, &pa) : NULL;
		if (b->pd == NULL)
			die("no thread domain");
	}
	b->qp = ibv_create_qp(b->pd, &ia);
	memset(&path, 0, sizeof(path));
	path.dqpn = PEER_QPN;
	path.dgid = b->peer.gid;
	path.psn = PSN0;
	path.mtu = IBV_MTU_4096;
	if (b->qp == NULL || droce_test_connect(b->qp, &path) != 0)
		die("no connected QP");
	b->rx_psn = b->tx_psn = PSN0;
	/* The connect sent an ARP request, which the peer does not answer. */
	droce_peer_teach(&b->peer);
}

static void
bench_idle(struct bench *b, struct result *poll, struct result *poll_cq)
{
	struct ibv_wc wc;
	uint64_t t;

	for (unsigned r = 0; r < b->runs; r++) {
		t = rte_rdtsc();
		droce_dev_poll(b->peer.dev);
		b->samples[r] = rte_rdtsc() - t;
	}
	*poll = summarize(b, "idle", 1);
	for (unsigned r = 0; r < b->runs; r++) {
		t = rte_rdtsc();
		if (ibv_poll_cq(b->cq, 1, &wc) != 0)
			die("a completion nobody asked for");
		b->samples[r] = rte_rdtsc() - t;
	}
	*poll_cq = summarize(b, "poll_cq", 1);
}

/* The peer's WRITE ONLY of the run's size into the device's region at its
 * offset, its RETH in @p reth. */
static struct droce_peer_frame
peer_write(const struct bench *b, struct droce_reth *reth)
{
	*reth = (struct droce_reth){ .va = rte_cpu_to_be_64((uintptr_t)b->buf + b->off),
				     .rkey = rte_cpu_to_be_32(b->mr->rkey),
				     .len = rte_cpu_to_be_32(b->size) };
	return (struct droce_peer_frame){ .opcode = DROCE_OP_WRITE_ONLY, .dqpn = b->qp->qp_num,
					  .ext = reth, .ext_len = sizeof(*reth),
					  .payload = b->buf + BUF / 2, .len = b->size };
}

/* The peer's ACK of what the device sent up to PSN tx_psn - 1, its
 * messages up to tx_msn (the caller moves both on first). */
static struct rte_mbuf *
peer_ack(struct bench *b)
{
	struct droce_aeth aeth;
	struct droce_peer_frame f = { .opcode = DROCE_OP_ACK, .dqpn = b->qp->qp_num,
				      .psn = (b->tx_psn - 1) & 0xffffff,
				      .ext = &aeth, .ext_len = sizeof(aeth) };

	droce_aeth_set(&aeth, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, b->tx_msn);
	return droce_peer_build(&b->peer, &f);
}

/* N WRITEs from the peer to the device's region, then the ACK it owes. */
static void
bench_write_rx(struct bench *b, struct result *res)
{
	struct droce_reth reth;
	struct droce_peer_frame f = peer_write(b, &reth);
	struct rte_mbuf *m[BURST_MAX];
	uint64_t t;

	for (unsigned r = 0; r < b->runs; r++) {
		for (unsigned i = 0; i < b->n; i++) {
			f.psn = b->rx_psn;
			f.ackreq = i == b->n - 1;
			b->rx_psn = (b->rx_psn + 1) & 0xffffff;
			m[i] = droce_peer_build(&b->peer, &f);
			if (m[i] == NULL)
				die("out of mbufs");
		}
		if (rte_ring_enqueue_bulk(b->peer.to_dev, (void **)m, b->n, NULL) != b->n)
			die("the ring is full");
		/* The poll that receives holds the ACK back for the next entry
		 * into the engine (here another poll; in a ping-pong the post of
		 * the answer); after a full burst the ACK waits a poll more, for
		 * the next burst (droce_resp_run()). Every poll until it is
		 * sent is timed. */
		t = rte_rdtsc();
		droce_dev_poll(b->peer.dev);
		for (unsigned k = 0; k < 2 && rte_ring_count(b->peer.from_dev) == 0; k++)
			droce_dev_poll(b->peer.dev);
		b->samples[r] = rte_rdtsc() - t;
		if (drain_roce(b) != 1)
			die("write_rx: not one ACK per run");
	}
	*res = summarize(b, "write_rx", b->n);
}

/* The half round trip of a WRITE ping-pong (perftest's ib_write_lat),
 * as the side that answers sees it. */
static void
bench_pingpong(struct bench *b, struct result *res)
{
	struct droce_reth reth;
	struct droce_peer_frame wf = peer_write(b, &reth);
	struct ibv_sge sge = { (uintptr_t)b->buf + b->off + BUF / 4, b->size, b->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED | b->send_flags,
				  .wr.rdma = { 0x1000, 0x1234 } },
			   *bad;
	struct rte_mbuf *m[2];
	struct ibv_wc wc;
	uint64_t t;

	/* The device's first WRITE, which the first run's ACK acknowledges. */
	if (ibv_post_send(b->qp, &wr, &bad) != 0)
		die("ibv_post_send");
	droce_dev_poll(b->peer.dev);
	if (drain_roce(b) != 1)
		die("pingpong: the first WRITE did not go out");
	wf.ackreq = true;
	for (unsigned r = 0; r < b->runs; r++) {
		b->tx_msn = (b->tx_msn + 1) & 0xffffff;
		b->tx_psn = (b->tx_psn + 1) & 0xffffff;
		wf.psn = b->rx_psn;
		b->rx_psn = (b->rx_psn + 1) & 0xffffff;
		m[0] = peer_ack(b);
		m[1] = droce_peer_build(&b->peer, &wf);
		if (m[0] == NULL || m[1] == NULL)
			die("out of mbufs");
		if (rte_ring_enqueue_bulk(b->peer.to_dev, (void **)m, 2, NULL) != 2)
			die("the ring is full");
		t = rte_rdtsc();
		if (ibv_poll_cq(b->cq, 1, &wc) != 1 || wc.status != IBV_WC_SUCCESS)
			die("pingpong: no completion for the ACK");
		wr.wr_id = r;
		if (ibv_post_send(b->qp, &wr, &bad) != 0)
			die("ibv_post_send");
		b->samples[r] = rte_rdtsc() - t;
		if (drain_roce(b) != 2)
			die("pingpong: not the answer and its ACK");
	}
	/* The last WRITE's ACK, so that the QP ends idle. */
	b->tx_msn = (b->tx_msn + 1) & 0xffffff;
	b->tx_psn = (b->tx_psn + 1) & 0xffffff;
	m[0] = peer_ack(b);
	if (m[0] == NULL || rte_ring_enqueue(b->peer.to_dev, m[0]) != 0 ||
	    ibv_poll_cq(b->cq, 1, &wc) != 1)
		die("pingpong: the last ACK");
	*res = summarize(b, "pingpong", 1);
}

/* N WRITEs posted and sent; then their ACK in, their completions out. */
static void
bench_write_tx(struct bench *b, struct result *tx, struct result *ack)
{
	struct ibv_sge sge = { (uintptr_t)b->buf + b->off, b->size, b->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .wr.rdma = { 0x1000, 0x1234 } }, *bad;
	uint64_t *ack_samples = malloc(b->runs * sizeof(uint64_t));
	struct ibv_wc wc[BURST_MAX];
	struct rte_mbuf *m;
	uint64_t t;
	int got;

	if (ack_samples == NULL)
		die("no memory");
	for (unsigned r = 0; r < b->runs; r++) {
		t = rte_rdtsc();
		for (unsigned i = 0; i < b->n; i++) {
			wr.wr_id = i;
			wr.send_flags = IBV_SEND_SIGNALED | b->send_flags;
			if (ibv_post_send(b->qp, &wr, &bad) != 0)
				die("ibv_post_send");
		}
		droce_dev_poll(b->peer.dev);
		b->samples[r] = rte_rdtsc() - t;
		if (drain_roce(b) != b->n)
			die("write_tx: not one frame per WRITE");
		b->tx_psn = (b->tx_psn + b->n) & 0xffffff;
		b->tx_msn = (b->tx_msn + b->n) & 0xffffff;
		m = peer_ack(b);
		if (m == NULL || rte_ring_enqueue(b->peer.to_dev, m) != 0)
			die("no ACK");
		t = rte_rdtsc();
		got = ibv_poll_cq(b->cq, BURST_MAX, wc);
		ack_samples[r] = rte_rdtsc() - t;
		if (got != (int)b->n || wc[0].status != IBV_WC_SUCCESS)
			die("ack_rx: not one good completion per WRITE");
	}
	*tx = summarize(b, "write_tx", b->n);
	memcpy(b->samples, ack_samples, b->runs * sizeof(uint64_t));
	free(ack_samples);
	*ack = summarize(b, "ack_rx", b->n);
}

int
main(int argc, char **argv)
{
	struct bench b = { .n = BURST_MAX, .size = 64, .runs = 20000 };
	struct result res[6];
	unsigned nres = 0;
	const char *only = NULL, *crc = NULL;
	bool json = false;
	int opt, path;

	while ((opt = getopt(argc, argv, "n:s:o:r:c:tiC:e:j")) != -1) {
		switch (opt) {
		case 'n': b.n = (unsigned)atoi(optarg); break;
		case 's': b.size = (unsigned)atoi(optarg); break;
		case 'o': b.off = (unsigned)atoi(optarg); break;
		case 'r': b.runs = (unsigned)atoi(optarg); break;
		case 'c': only = optarg; break;
		case 't': b.td = true; break;
		case 'i': b.send_flags = IBV_SEND_INLINE; break;
		case 'C': crc = optarg; break;
		case 'e': setenv("DROCE_TEST_EAL", optarg, 1); break;
		case 'j': json = true; break;
		default:
			fprintf(stderr, "usage: engine_bench [-n 1..32] [-s 0..4096] [-o 0..4095] "
					"[-r RUNS] [-c CASE] [-t] [-i] [-C CRC] [-e EAL_ARGS] [-j]\n");
			return 2;
		}
	}
	if (b.n < 1 || b.n > BURST_MAX || b.size > 4096 || b.off > 4095 || b.runs < 1 ||
	    (b.send_flags != 0 && b.size > INLINE_MAX))
		die("-n 1..32, -s 0..4096 (with -i 0..256), -o 0..4095, -r at least 1");
	b.samples = malloc(b.runs * sizeof(uint64_t));
	if (b.samples == NULL)
		die("no memory");
	setup(&b);
	/* After the device's setup, which chose the fastest path. */
	if (crc != NULL && ((path = droce_crc32_path_by_name(crc)) < 0 ||
			    droce_crc32_path_set((enum droce_crc_path)path) != 0))
		die("-C: lib, sse, avx2, avx512 or vpclmul, one this CPU runs");
	if (only == NULL || strcmp(only, "idle") == 0) {
		bench_idle(&b, &res[nres], &res[nres + 1]);
		nres += 2;
	}
	if (only == NULL || strcmp(only, "write_rx") == 0)
		bench_write_rx(&b, &res[nres++]);
	if (only == NULL || strcmp(only, "write_tx") == 0) {
		bench_write_tx(&b, &res[nres], &res[nres + 1]);
		nres += 2;
	}
	if (only == NULL || strcmp(only, "pingpong") == 0)
		bench_pingpong(&b, &res[nres++]);
	if (nres == 0)
		die("-c: idle, write_rx, write_tx or pingpong");
	if (json)
		printf("{\"n\": %u, \"size\": %u, \"off\": %u, \"runs\": %u, \"td\": %s, "
		       "\"inline\": %s, \"cycles_per_msg\": {", b.n, b.size, b.off, b.runs,
		       b.td ? "true" : "false", b.send_flags != 0 ? "true" : "false");
	else
		printf("engine_bench: %u x %u B at offset %u per run, %u runs%s%s; TSC cycles per "
		       "message\n", b.n, b.size, b.off, b.runs, b.td ? ", thread domain" : "",
		       b.send_flags != 0 ? ", inline" : "");
	for (unsigned i = 0; i < nres; i++) {
		if (json)
			printf("%s\"%s\": {\"min\": %.1f, \"median\": %.1f, \"low_mean\": %.1f}",
			       i ? ", " : "", res[i].name, res[i].min, res[i].median,
			       res[i].low_mean);
		else
			printf("  %-9s min %8.1f  median %8.1f  faster half %8.1f\n", res[i].name,
			       res[i].min, res[i].median, res[i].low_mean);
	}
	if (json)
		printf("}}\n");
	free(b.samples);
	return 0;
}
