/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA measurements, with perftest's semantics (perftest_resources.c):
 *
 * bandwidth (run_iter_bw): each QP keeps up to tx-depth work requests
 * outstanding, one in cq-mod is signaled; the time of every post and of
 * every completion is kept, the average is all messages over first post
 * to last completion, the peak the best run of messages. A SEND receiver
 * measures its receive completions. -b: both sides send and each prints
 * the sum of both directions.
 *
 * latency: ib_write_lat ping-pongs RDMA WRITEs, each side polling the
 * last byte of its buffer for the peer's write; ib_send_lat ping-pongs
 * SENDs; both report half the round trip. ib_read_lat and ib_atomic_lat
 * time one operation after another: the full round trip. A sample is the
 * time between two consecutive posts.
 *
 * -D replaces the iteration count by a duration: messages are counted in
 * a window that leaves out -f seconds at each end.
 *
 * Every loop runs the engine: the verbs calls do, and waits on memory
 * call droce_dev_poll().
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "droce.h"
#include "droce_stats.h"
#include "perf_rdma.h"

#define POLL_BATCH 16
/* The bandwidth loop's passes per look at the clock (bw_loop()). */
#define BW_CLOCK_EVERY 16
/* A send WR's wr_id: its QP's index above, its sequence number + 1 below. */
#define WRID_QP_SHIFT 40
#define WRID_SEQ_MASK ((UINT64_C(1) << WRID_QP_SHIFT) - 1)

static int
wc_check(const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	fprintf(stderr, PERF_NAME ": completion with error: %s (QP %#x, wr_id %#" PRIx64 ")\n",
		ibv_wc_status_str(wc->status), wc->qp_num, wc->wr_id);
	return -1;
}

static enum ibv_wr_opcode
wr_opcode(const struct perf_opts *o)
{
	switch (o->test) {
	case PERF_SEND:
		return IBV_WR_SEND;
	case PERF_READ:
		return IBV_WR_RDMA_READ;
	case PERF_ATOMIC:
		return o->atomic_cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
	default:
		return IBV_WR_RDMA_WRITE;
	}
}

/* Fill the post list's WRs for QP @p q and messages of @p size: like
 * perftest, which fills them once per QP,
 * a post sets only the WR ids, the links and which WR is signaled. (A
 * memset and a dozen stores per post cost the sender some 10 cycles per
 * 64-byte message, and the WR's fields it stored just before the post
 * are loaded again by ibv_post_send(): perftest's sender does neither.) */
static void __rte_noinline
wr_fill(struct rdma *r, struct rdma_qp *q, uint64_t size)
{
	const struct perf_opts *o = r->o;
	unsigned k;

	r->wrs_flags = size <= (uint64_t)r->inline_size &&
		       (o->test == PERF_WRITE || o->test == PERF_SEND) ? IBV_SEND_INLINE : 0;
	for (k = 0; k < o->post_list; k++) {
		struct ibv_send_wr *wr = &r->wrs[k];

		memset(wr, 0, sizeof(*wr));
		wr->next = k + 1 < o->post_list ? wr + 1 : NULL;
		r->sges[k] = (struct ibv_sge){
			.addr = (uintptr_t)q->local,
			.length = (uint32_t)size,
			.lkey = r->mr->lkey,
		};
		wr->sg_list = &r->sges[k];
		wr->num_sge = 1;
		wr->opcode = wr_opcode(o);
		wr->send_flags = r->wrs_flags;
		if (o->test == PERF_ATOMIC) {
			wr->wr.atomic.remote_addr = q->rvaddr;
			wr->wr.atomic.rkey = q->rrkey;
			wr->wr.atomic.compare_add = 1;
			wr->wr.atomic.swap = 1;
		} else if (o->test != PERF_SEND) {
			wr->wr.rdma.remote_addr = q->rvaddr;
			wr->wr.rdma.rkey = q->rrkey;
		}
	}
	r->wrs_qp = q;
	r->wrs_size = size;
}

/* wr_fill(), unless the WRs are filled for @p q and @p size already:
 * the check inline, as it is made before every post. */
static inline void
wr_prepare(struct rdma *r, struct rdma_qp *q, uint64_t size)
{
	if (r->wrs_qp != q || r->wrs_size != size)
		wr_fill(r, q, size);
}

static void
counters_reset(struct rdma *r)
{
	unsigned i;

	for (i = 0; i < r->nqps; i++) {
		r->qps[i].scnt = r->qps[i].ccnt = r->qps[i].rcnt = 0;
		r->qps[i].next_signaled = r->o->cq_mod;
	}
}

/* Take the receive completions a measurement left behind (-D stops in the
 * middle of the traffic), so the next size starts clean. Called after the
 * end meeting: every message of the peer's has completed by then. */
static int
recvs_drain(struct rdma *r)
{
	struct ibv_wc wc[POLL_BATCH];
	int n, i;

	while ((n = ibv_poll_cq(r->rcq, POLL_BATCH, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (wc_check(&wc[i]) != 0)
				return -1;
			r->qps[wc[i].wr_id].rposted--;
		}
	return n;
}

static int
recvs_post_all(struct rdma *r)
{
	unsigned i;

	for (i = 0; i < r->nqps; i++)
		if (rdma_post_recvs(r, &r->qps[i]) != 0)
			return -1;
	return 0;
}

/* The counters of the device and of each of its engines at one moment. */
struct cycles_mark {
	struct droce_dev_stats dev;
	struct droce_dev_stats engine[PERF_MAX_ENGINES];
};

static const char *const stage_names[] = {
#define STAGE_NAME(name) #name,
	DROCE_STAGES(STAGE_NAME)
#undef STAGE_NAME
};

/* This side's cycles per stage between @p s0 and @p s1, when its engine
 * measured them (DROCE_STAGE_CYCLES). */
static void
stages_delta(const struct droce_dev_stats *s0, const struct droce_dev_stats *s1,
	     struct perf_stages *st)
{
	const uint64_t *a = (const uint64_t *)&s0->engine.stage;
	const uint64_t *b = (const uint64_t *)&s1->engine.stage;
	unsigned i;

	RTE_BUILD_BUG_ON(RTE_DIM(stage_names) > PERF_STAGES_MAX);
	if (getenv("DROCE_STAGE_CYCLES") == NULL)
		return;
	for (i = 0; i < RTE_DIM(stage_names); i++)
		st->cycles[i] = b[i] - a[i];
	st->n = RTE_DIM(stage_names);
}

/* This side's congestion control: its engines' counters between @p s0 and
 * @p s1, and the rates its paced QPs run at now. */
static void
cc_delta(const struct rdma *r, const struct droce_dev_stats *s0,
	 const struct droce_dev_stats *s1, struct perf_side_cc *cc)
{
	const struct droce_cc_stats *a = &s0->engine.cc, *b = &s1->engine.cc;
	struct droce_qp_cc q;
	unsigned i;

	cc->known = true;
	cc->ce_received = b->ce_received - a->ce_received;
	cc->cnps_sent = b->cnps_sent - a->cnps_sent;
	cc->cnps_received = b->cnps_received - a->cnps_received;
	cc->rate_decreases = b->rate_decreases - a->rate_decreases;
	cc->rate_increases = b->rate_increases - a->rate_increases;
	cc->paced = b->paced - a->paced;
	for (i = 0; i < r->nqps; i++) {
		if (droce_qp_cc(r->qps[i].qp, &q) != 0 || !q.paced)
			continue;
		if (cc->paced_qps++ == 0) {
			cc->rate_min_mbps = cc->rate_max_mbps = q.rate_mbps;
			cc->lowest_mbps = q.min_rate_mbps;
		}
		cc->rate_min_mbps = RTE_MIN(cc->rate_min_mbps, q.rate_mbps);
		cc->rate_max_mbps = RTE_MAX(cc->rate_max_mbps, q.rate_mbps);
		cc->lowest_mbps = RTE_MIN(cc->lowest_mbps, q.min_rate_mbps);
	}
}

static int
cycles_mark(struct rdma *r, struct cycles_mark *m)
{
	unsigned e;

	if (droce_dev_stats(r->dev, &m->dev) != 0)
		return -1;
	for (e = 0; e < r->o->engines; e++)
		if (droce_dev_engine_stats(r->dev, e, &m->engine[e]) != 0)
			return -1;
	return 0;
}

/* This side's engine cycles since @p m0 and the @p sent messages, swapped
 * with the peer's into @p cost (after the end meeting: both are done);
 * each engine's cycles and messages since @p m0 too. */
static int
cycles_swap(struct rdma *r, const struct cycles_mark *m0, uint64_t sent,
	    struct perf_cost *cost)
{
	struct perf_side_cycles mine = { .sent = sent };
	const struct droce_engine_stats *a, *b;
	struct cycles_mark m1;
	unsigned e;

	if (cycles_mark(r, &m1) != 0)
		return -1;
	a = &m0->dev.engine;
	b = &m1.dev.engine;
	mine.busy = b->busy_cycles - a->busy_cycles;
	mine.rx_burst = b->rx_burst_cycles - a->rx_burst_cycles;
	mine.tx_burst = b->tx_burst_cycles - a->tx_burst_cycles;
	mine.skipped = b->long_iterations - a->long_iterations;
	mine.tx_frames = m1.dev.port.tx_frames - m0->dev.port.tx_frames;
	mine.rx_frames = m1.dev.port.rx_frames - m0->dev.port.rx_frames;
	stages_delta(&m0->dev, &m1.dev, &mine.stages);
	cc_delta(r, &m0->dev, &m1.dev, &mine.cc);
	cost->stage_names = stage_names;
	cost->nb_engines = r->o->engines;
	for (e = 0; e < r->o->engines; e++) {
		a = &m0->engine[e].engine;
		b = &m1.engine[e].engine;
		cost->engine[e].busy = b->busy_cycles - a->busy_cycles;
		cost->engine[e].rx_burst = b->rx_burst_cycles - a->rx_burst_cycles;
		cost->engine[e].tx_burst = b->tx_burst_cycles - a->tx_burst_cycles;
		cost->engine[e].msgs = b->rx_msgs + b->tx_msgs - a->rx_msgs - a->tx_msgs;
	}
	return perf_oob_swap_cycles(&r->oob, r->o, &mine, cost, rdma_idle, r);
}

/* ---- bandwidth ---- */

struct bw_run {
	struct rdma *r;
	uint64_t size;
	uint64_t per_qp;             /* messages per QP; UINT64_MAX with -D */
	bool tx, rx, dur;
	bool stopping;               /* -D: past the end, finishing the signaled run */
	bool tx_done, rx_done;
	uint64_t totscnt, totccnt, totrcnt;
	uint64_t rx_first, rx_last;  /* tsc of the first and last receive */
	struct perf_window wtx, wrx;
};

/* WR @p wr, of QP number @p qi, is message number @p seq1, and signaled
 * when @p on. */
static void
bw_signal_one(struct rdma *r, unsigned qi, struct ibv_send_wr *wr, uint64_t seq1, bool on)
{
	wr->wr_id = ((uint64_t)qi << WRID_QP_SHIFT) | seq1;
	wr->send_flags = on ? r->wrs_flags | IBV_SEND_SIGNALED : r->wrs_flags;
}

/* Signal (@p on) or no longer signal the WRs of the next list of @p n
 * WRs of QP @p q (number @p qi) that ask for a completion: one in -Q from
 * message number @p first on, and a run's last. A signaled WR's wr_id
 * is its message's number. */
static void
bw_signal(struct bw_run *b, const struct rdma_qp *q, unsigned qi, uint64_t first, uint64_t n,
	  bool on)
{
	struct rdma *r = b->r;
	uint64_t seq1;

	for (seq1 = first; seq1 <= q->scnt + n; seq1 += r->o->cq_mod)
		bw_signal_one(r, qi, &r->wrs[seq1 - q->scnt - 1], seq1, on);
	if (b->per_qp <= q->scnt + n)
		bw_signal_one(r, qi, &r->wrs[n - 1], b->per_qp, on);
}

/* Post what QP @p qi may: up to tx-depth outstanding, a post list at a time. */
static int
bw_post(struct bw_run *b, unsigned qi)
{
	struct rdma *r = b->r;
	const struct perf_opts *o = r->o;
	struct rdma_qp *q = &r->qps[qi];
	struct ibv_send_wr *bad;
	uint64_t now, first;
	bool sig;
	int rc;

	for (;;) {
		uint64_t n = RTE_MIN((uint64_t)o->post_list, b->per_qp - q->scnt), k;

		/* -D ends where the last posted WR is signaled, so every
		 * outstanding WR completes visibly. */
		if (b->stopping) {
			uint64_t to_signal = (o->cq_mod - q->scnt % o->cq_mod) % o->cq_mod;

			n = RTE_MIN(n, to_signal);
		}
		if (n == 0 || q->scnt - q->ccnt + n > o->tx_depth)
			return 0;
		wr_prepare(r, q, b->size);
		/* The list is chained and flagged once (wr_fill()); a post
		 * changes only the WRs it signals (their flag, and their wr_id,
		 * which says how many completed) and a shorter list's end, and
		 * puts them back after. perftest too posts its list as it
		 * stands: the loop spends nothing per WR that perftest's does
		 * not. */
		first = q->next_signaled;
		/* Most posts of one WR signal none: they call nothing. One in
		 * -Q signaled, counted down: a division per post would cost
		 * the sender some 20 cycles. */
		sig = first <= q->scnt + n || b->per_qp <= q->scnt + n;
		if (sig) {
			bw_signal(b, q, qi, first, n, true);
			while (q->next_signaled <= q->scnt + n)
				q->next_signaled += o->cq_mod;
		}
		r->wrs[n - 1].next = NULL;
		/* Only -n runs keep post times (for the peak), as perftest's
		 * duration runs do not: a TSC read is some 25 cycles per post. */
		if (!b->dur) {
			now = rte_rdtsc();
			for (k = 0; k < n; k++)
				r->tposted[b->totscnt + k] = now;
		}
		rc = ibv_post_send(q->qp, r->wrs, &bad);
		if (sig)
			bw_signal(b, q, qi, first, n, false);
		if (n < o->post_list)
			r->wrs[n - 1].next = &r->wrs[n];
		if (rc != 0) {
			fprintf(stderr, PERF_NAME ": ibv_post_send failed on QP %#x\n", q->qp->qp_num);
			return -1;
		}
		q->scnt += n;
		b->totscnt += n;
	}
}

static int
bw_poll_tx(struct bw_run *b)
{
	struct rdma *r = b->r;
	struct ibv_wc wc[POLL_BATCH];
	uint64_t now;
	int n, i;

	n = ibv_poll_cq(r->scq, POLL_BATCH, wc);
	/* Only -n runs keep completion times: a TSC read per poll is some 25
	 * cycles, a good part of a 64-byte message's. */
	now = n > 0 && !b->dur ? rte_rdtsc() : 0;
	for (i = 0; i < n; i++) {
		struct rdma_qp *q;
		uint64_t seq1, covered, k;

		if (wc_check(&wc[i]) != 0)
			return -1;
		q = &r->qps[wc[i].wr_id >> WRID_QP_SHIFT];
		seq1 = wc[i].wr_id & WRID_SEQ_MASK;
		/* A signaled completion stands for every WR before it. */
		covered = seq1 - q->ccnt;
		q->ccnt = seq1;
		if (!b->dur)
			for (k = b->totccnt; k < b->totccnt + covered; k++)
				r->tcompleted[k] = now;
		b->totccnt += covered;
	}
	return n < 0 ? -1 : 0;
}

static int
bw_poll_rx(struct bw_run *b)
{
	struct rdma *r = b->r;
	struct ibv_wc wc[POLL_BATCH];
	uint64_t now;
	int n, i;

	n = ibv_poll_cq(r->rcq, POLL_BATCH, wc);
	now = n > 0 ? rte_rdtsc() : 0;
	for (i = 0; i < n; i++) {
		struct rdma_qp *q;

		if (wc_check(&wc[i]) != 0)
			return -1;
		q = &r->qps[wc[i].wr_id];
		q->rcnt++;
		q->rposted--;
		if (b->totrcnt++ == 0)
			b->rx_first = now;
		b->rx_last = now;
		if (rdma_post_recvs(r, q) != 0)
			return -1;
	}
	return n < 0 ? -1 : 0;
}

static bool
bw_tx_finished(const struct bw_run *b)
{
	unsigned i;

	if (!b->dur)
		return b->totccnt == b->per_qp * b->r->nqps;
	if (!b->stopping)
		return false;
	for (i = 0; i < b->r->nqps; i++) {
		const struct rdma_qp *q = &b->r->qps[i];

		if (q->ccnt != q->scnt || q->scnt % b->r->o->cq_mod != 0)
			return false;
	}
	return true;
}

/* Does the other side send SENDs to this one (and so wait for its DONE)? */
static bool
peer_receives(const struct perf_opts *o)
{
	return o->test == PERF_SEND && (o->bidir || !o->server);
}

static int
bw_loop(struct bw_run *b)
{
	struct rdma *r = b->r;
	const struct perf_opts *o = r->o;
	char line[64];
	unsigned i, pass = 0;

	while (!b->tx_done || !b->rx_done) {
		/* The clock every BW_CLOCK_EVERY passes: a pass posts what it may
		 * and polls once, some hundreds of cycles, and a TSC read costs
		 * about 25. A window takes its count with the time it read. */
		if (pass++ % BW_CLOCK_EVERY == 0) {
			uint64_t now = rte_rdtsc();

			if (b->dur) {
				perf_window_update(&b->wtx, &r->clk, now, b->totccnt);
				perf_window_update(&b->wrx, &r->clk, now, b->totrcnt);
				if (now >= r->clk.end)
					b->stopping = true;
			}
			if (perf_clock_tick(&r->clk, now, b->tx ? b->totccnt : b->totrcnt) != 0)
				return -1;
		}
		if (!b->tx_done) {
			for (i = 0; i < r->nqps; i++)
				if (bw_post(b, i) != 0)
					return -1;
			if (bw_poll_tx(b) != 0)
				return -1;
			if (bw_tx_finished(b)) {
				b->tx_done = true;
				/* -D: a receiving peer cannot count to the end */
				if (b->dur && peer_receives(o) && perf_oob_send(&r->oob, "DONE") != 0)
					return -1;
			}
		}
		if (!b->rx_done) {
			if (bw_poll_rx(b) != 0)
				return -1;
			if (!b->dur) {
				b->rx_done = b->totrcnt == b->per_qp * r->nqps;
			} else {
				int got = perf_oob_poll(&r->oob, line, sizeof(line));

				if (got < 0)
					return -1;
				if (got > 0 && strcmp(line, "DONE") != 0) {
					fprintf(stderr, PERF_NAME ": the peer is out of step ('%s')\n", line);
					return -1;
				}
				b->rx_done = got > 0;
			}
		}
	}
	return 0;
}

static void
bw_result(struct bw_run *b, struct perf_bw_result *res)
{
	struct rdma *r = b->r;
	const struct perf_opts *o = r->o;
	uint64_t now = rte_rdtsc();

	memset(res, 0, sizeof(*res));
	res->size = b->size;
	if (b->dur) {
		struct perf_window *w = b->tx ? &b->wtx : &b->wrx;
		double secs = perf_window_finish(w, &r->clk, now, b->tx ? b->totccnt : b->totrcnt);
		uint64_t n = w->n1 - w->n0;

		res->iters = n;
		if (secs > 0) {
			res->avg_Bps = (double)b->size * (double)n / secs;
			res->msg_rate = (double)n / secs;
		}
	} else if (b->tx) {
		perf_bw_stats(r->tposted, r->tcompleted, b->totccnt, o->cq_mod, !o->no_peak,
			      r->clk.hz, res);
	} else {
		/* a receiver times from its first receive to its last (perftest) */
		double secs = (double)(b->rx_last - b->rx_first) / (double)r->clk.hz;

		res->iters = b->totrcnt;
		if (secs > 0) {
			res->avg_Bps = (double)b->size * (double)b->totrcnt / secs;
			res->msg_rate = (double)b->totrcnt / secs;
		}
	}
}

/* -b: each side prints both directions together. */
static int
bw_add_peer(struct rdma *r, struct perf_bw_result *res)
{
	char line[256];
	double peak, avg, rate;

	if (perf_oob_send(&r->oob, "RESULT %.17g %.17g %.17g", res->peak_Bps, res->avg_Bps,
			  res->msg_rate) != 0 ||
	    perf_oob_recv(&r->oob, line, sizeof(line), rdma_idle, r) != 0)
		return -1;
	if (sscanf(line, "RESULT %lg %lg %lg", &peak, &avg, &rate) != 3) {
		fprintf(stderr, PERF_NAME ": bad result line from the peer: '%s'\n", line);
		return -1;
	}
	res->peak_Bps += peak;
	res->avg_Bps += avg;
	res->msg_rate += rate;
	return 0;
}

int
rdma_bw(struct rdma *r, uint64_t size)
{
	const struct perf_opts *o = r->o;
	struct bw_run b = {
		.r = r,
		.size = size,
		.dur = o->duration > 0,
		.tx = !o->server || o->bidir,
		.rx = o->test == PERF_SEND && (o->server || o->bidir),
	};
	struct perf_bw_result res;
	struct cycles_mark m0;

	b.per_qp = b.dur ? UINT64_MAX : o->iters;
	b.tx_done = !b.tx;
	b.rx_done = !b.rx;
	counters_reset(r);
	if (b.rx && recvs_post_all(r) != 0)
		return -1;
	if (cycles_mark(r, &m0) != 0 || perf_oob_sync(&r->oob, rdma_idle, r) != 0)
		return -1;
	perf_clock_start(&r->clk, o);
	if (bw_loop(&b) != 0)
		return -1;
	bw_result(&b, &res);
	if (perf_oob_sync(&r->oob, rdma_idle, r) != 0 || recvs_drain(r) < 0 ||
	    cycles_swap(r, &m0, b.totscnt, &res.cost) != 0)
		return -1;
	if (o->bidir && bw_add_peer(r, &res) != 0)
		return -1;
	if (perf_side_reports(o))
		perf_report_bw(o, &res);
	return 0;
}

/* ---- latency ---- */

struct lat_run {
	struct rdma *r;
	struct rdma_qp *q;
	uint64_t size;
	bool dur;
	bool stopped;                /* -D: the time is up */
	uint64_t scnt, rcnt, ccnt;
	struct perf_window w;
};

/* Between operations: the -D window and end, progress. @return -1 on a stall. */
static int
lat_tick(struct lat_run *l, uint64_t now)
{
	struct rdma *r = l->r;

	if (l->dur) {
		perf_window_update(&l->w, &r->clk, now, l->scnt);
		if (now >= r->clk.end)
			l->stopped = true;
	}
	return perf_clock_tick(&r->clk, now, l->scnt);
}

/* Wait for one completion on @p cq. @return 1, 0 when -D ran out, -1. */
static int
lat_wait(struct lat_run *l, struct ibv_cq *cq, bool stoppable)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		if (lat_tick(l, rte_rdtsc()) != 0)
			return -1;
		if (stoppable && l->stopped)
			return 0;
	}
	if (n < 0 || wc_check(&wc) != 0)
		return -1;
	if (cq == l->r->rcq) {
		l->q->rposted--;
		if (rdma_post_recvs(l->r, l->q) != 0)
			return -1;
	}
	return 1;
}

/* The peer's WRITE number @p n has landed when the last byte of the
 * buffer says so (perftest's poll_buf). @return 1, 0 when -D ran out, -1. */
static int
lat_wait_write(struct lat_run *l, uint64_t n)
{
	volatile uint8_t *poll_buf = l->q->target + l->size - 1;

	while (*poll_buf != (uint8_t)n) {
		droce_dev_poll(l->r->dev);
		if (lat_tick(l, rte_rdtsc()) != 0)
			return -1;
		if (l->stopped)
			return 0;
	}
	return 1;
}

static int
lat_post(struct lat_run *l)
{
	struct rdma *r = l->r;
	struct ibv_send_wr *bad;
	uint64_t now = rte_rdtsc();

	if (!l->dur)
		r->tposted[l->scnt] = now;
	l->scnt++;
	if (r->o->test == PERF_WRITE)
		/* the byte the peer polls: which WRITE this is */
		l->q->local[l->size - 1] = (uint8_t)l->scnt;
	r->wrs[0].wr_id = l->scnt;
	r->wrs[0].send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(l->q->qp, r->wrs, &bad) != 0) {
		fprintf(stderr, PERF_NAME ": ibv_post_send failed\n");
		return -1;
	}
	return lat_tick(l, now);
}

/* ib_write_lat and ib_send_lat: the client sends first, then each side
 * answers what it receives. */
static int
lat_pingpong(struct lat_run *l)
{
	const struct perf_opts *o = l->r->o;
	bool client = !o->server;
	uint64_t iters = o->iters;
	int rc;

	while (l->dur ? !l->stopped : (l->scnt < iters || l->rcnt < iters || l->ccnt < iters)) {
		if ((l->dur || l->rcnt < iters) && !(l->scnt < 1 && client)) {
			rc = o->test == PERF_WRITE ? lat_wait_write(l, l->rcnt + 1) :
				lat_wait(l, l->r->rcq, true);
			if (rc <= 0)
				return rc;
			l->rcnt++;
		}
		if (l->dur || l->scnt < iters) {
			if (lat_post(l) != 0)
				return -1;
		}
		if (l->dur || l->ccnt < iters) {
			rc = lat_wait(l, l->r->scq, true);
			if (rc <= 0)
				return rc;
			l->ccnt++;
		}
	}
	return 0;
}

/* ib_read_lat and ib_atomic_lat: one operation at a time. */
static int
lat_one_sided(struct lat_run *l)
{
	const struct perf_opts *o = l->r->o;
	int rc;

	if (o->server)
		return 0;
	while (l->dur ? !l->stopped : l->scnt < o->iters) {
		if (lat_post(l) != 0)
			return -1;
		rc = lat_wait(l, l->r->scq, true);
		if (rc <= 0)
			return rc;
		l->ccnt++;
	}
	return 0;
}

int
rdma_lat(struct rdma *r, uint64_t size)
{
	const struct perf_opts *o = r->o;
	struct lat_run l = {
		.r = r,
		.q = &r->qps[0],
		.size = size,
		.dur = o->duration > 0,
	};
	struct perf_lat_result res = { .size = size };
	struct cycles_mark m0;
	int rc;

	counters_reset(r);
	wr_prepare(r, l.q, size);
	r->wrs[0].next = NULL;
	/* a stale byte from an earlier size must not look like a WRITE */
	memset(l.q->local, 0, size);
	memset(l.q->target, 0, size);
	if (o->test == PERF_SEND && recvs_post_all(r) != 0)
		return -1;
	if (cycles_mark(r, &m0) != 0 || perf_oob_sync(&r->oob, rdma_idle, r) != 0)
		return -1;
	perf_sched_mark(&res.sched);
	perf_clock_start(&r->clk, o);
	rc = (o->test == PERF_WRITE || o->test == PERF_SEND) ? lat_pingpong(&l) : lat_one_sided(&l);
	if (rc < 0)
		return -1;
	perf_sched_since(&res.sched);
	/* -D may stop with a WRITE or SEND still unacknowledged */
	while (l.ccnt < l.scnt) {
		if (lat_wait(&l, r->scq, false) < 0)
			return -1;
		l.ccnt++;
	}
	if (l.dur) {
		double secs = perf_window_finish(&l.w, &r->clk, rte_rdtsc(), l.scnt);
		uint64_t n = l.w.n1 - l.w.n0;

		res.duration = true;
		res.iters = n;
		if (n > 0 && secs > 0) {
			res.t_avg = secs * 1e6 / (double)n / perf_rtt_factor(o);
			res.tps = (double)n / secs;
		}
	} else if (perf_side_reports(o) &&
		   perf_lat_stats(o, r->tposted, r->clk.hz, &res) != 0) {
		fprintf(stderr, PERF_NAME ": no memory for the latency statistics\n");
		return -1;
	}
	res.size = size;
	if (perf_oob_sync(&r->oob, rdma_idle, r) != 0 || recvs_drain(r) < 0 ||
	    cycles_swap(r, &m0, l.scnt, &res.cost) != 0)
		return -1;
	if (perf_side_reports(o))
		perf_report_lat(o, &res);
	return 0;
}
