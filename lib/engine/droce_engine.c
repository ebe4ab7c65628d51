/* SPDX-License-Identifier: BSD-3-Clause */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_service.h>
#include <rte_service_component.h>

#include "droce_driver.h"
#include "droce_engine.h"
#include "droce_port.h"
#include "droce_tsan.h"

static_assert(DROCE_QP_ENGINES_MAX == DROCE_PORT_QUEUES_MAX,
	      "a QP counts the work of every engine a port can have");

#define RX_BURST 32
/* A spinning runner that has not started an iteration for this long is
 * not on a CPU: application threads run the engine themselves. Well above
 * one iteration (a few microseconds with a full burst), well below a
 * scheduler time slice (milliseconds). */
#define STALE_US 20
/* Empty iterations before an idle engine starts to sleep: long enough to
 * keep latency low under load, short enough to free the core soon. */
#define IDLE_SPIN 2048
/* No iteration takes longer than LONG_BASE_US plus LONG_FRAME_US per frame
 * it moved unless its thread lost the CPU (a 4 KiB frame takes well under
 * a microsecond to build or take in, the port's copy included). */
#define LONG_BASE_US 20
#define LONG_FRAME_US 2
/* ... in a release build: under AddressSanitizer or ThreadSanitizer a
 * READ responder's iteration of sixteen 4 KiB frames took longer than
 * that without losing its CPU, and every one was left out. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LONG_SCALE 10
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LONG_SCALE 10
#endif
#endif
#ifndef LONG_SCALE
#define LONG_SCALE 1
#endif
/* A drained QP lingers on the active list for one to two of these
 * (engine_sweep()): far longer than a ping-pong's round trip, short
 * enough that the sweep's membarrier(2) (1-4 us) costs little. */
#define LINGER_US 250

/* Count @p n units of work for @p qp (its owner only): one writer, read
 * by any thread. */
static inline void
engine_count_work(struct droce_engine *e, struct droce_qp *qp, uint64_t n)
{
	uint64_t *w = &qp->engine_work[e->queue];

	__atomic_store_n(w, *w + n, __ATOMIC_RELAXED);
}

static void
engine_release(struct droce_qp *qp)
{
	__atomic_sub_fetch(&qp->engine_refs, 1, __ATOMIC_RELEASE);
}

/*
 * Put @p qp on the active list. A kicked QP tells its posters to stop
 * kicking (not idle) until engine_sweep() lets it go; one that a received
 * packet woke (to answer it, or to complete) leaves them kicking, so it
 * can leave the list again without the barrier that sweep needs. Either
 * way a drained QP is served again.
 */
static void
engine_activate(struct droce_engine *e, struct droce_qp *qp, bool kicked)
{
	if (__atomic_load_n(&qp->destroying, __ATOMIC_ACQUIRE))
		return;
	if (kicked)
		__atomic_store_n(&qp->idle, 0, __ATOMIC_RELAXED);
	if (qp->drained)
		__atomic_store_n(&qp->drained, 0, __ATOMIC_RELAXED);
	if (qp->active)
		return;
	qp->active = true;
	__atomic_add_fetch(&qp->engine_refs, 1, __ATOMIC_RELAXED);
	TAILQ_INSERT_TAIL(&e->active, qp, active_link);
}

void
droce_engine_kick(struct droce_engine *e, struct droce_qp *qp)
{
	if (__atomic_exchange_n(&qp->kicked, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_add_fetch(&qp->engine_refs, 1, __ATOMIC_RELAXED);
	/* The ring holds every QP of the device at most once: it cannot fill. */
	while (rte_ring_mp_enqueue(e->kicks, qp) != 0)
		rte_pause();
}

static void
engine_take_kicks(struct droce_engine *e)
{
	void *qps[RX_BURST];
	unsigned n, i;

	n = rte_ring_sc_dequeue_burst(e->kicks, qps, RX_BURST, NULL);
	for (i = 0; i < n; i++) {
		struct droce_qp *qp = qps[i];

		/* Clear first: a post that lands after this re-kicks. */
		__atomic_store_n(&qp->kicked, 0, __ATOMIC_RELEASE);
		engine_activate(e, qp, true);
		engine_release(qp);
	}
}

/* Resolve an RC/UC QP's destination. @return true when it can send. */
static bool
engine_route(struct droce_engine *e, struct droce_qp *qp)
{
	int rc;

	if (qp->type == IBV_QPT_UD)
		return true; /* each WQE names its own address handle */
	rc = droce_av_route(&e->tx, &qp->av);
	if (rc == 0)
		return true;
	if (rc != -EAGAIN)
		droce_qp_fatal(qp, IBV_WC_RETRY_EXC_ERR);
	return false;
}

/*
 * A responder that refused a request went to the error state owing the
 * NAK that tells its peer why: it still goes out (routing the QP first
 * if it never sent anything). @return true while it is still owed.
 */
static bool
engine_last_word(struct droce_engine *e, struct droce_qp *qp)
{
	if (qp->type == IBV_QPT_UC || qp->type == IBV_QPT_UD ||
	    (qp->resp.pending_syndrome == 0 && !qp->resp.ack_pending))
		return false;
	if (!qp->av.routed && droce_av_route(&e->tx, &qp->av) == -EAGAIN)
		return true;
	return droce_resp_send_owed(&e->tx, qp);
}

static bool
engine_serve_qp(struct droce_engine *e, struct droce_qp *qp)
{
	enum ibv_qp_state st = droce_qp_state(qp);
	bool more = false;

	switch (st) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
	case IBV_QPS_RTR:
		if (!engine_route(e, qp))
			return droce_qp_state(qp) != IBV_QPS_ERR || engine_serve_qp(e, qp);
		if (st != IBV_QPS_RTR && qp->type != IBV_QPT_XRC_RECV)
			more |= droce_req_run(&e->tx, qp);
		more |= droce_resp_run(&e->tx, qp);
		/* SQD: tell once every WQE started before the drain completed. */
		if (st == IBV_QPS_SQD && !qp->req.sqd_notified && qp->sq.cons == qp->req.next &&
		    qp->attr.en_sqd_async_notify) {
			qp->req.sqd_notified = true;
			droce_qp_event(qp, IBV_EVENT_SQ_DRAINED);
		}
		break;
	case IBV_QPS_ERR:
		more = engine_last_word(e, qp);
		droce_qp_flush(qp);
		break;
	case IBV_QPS_SQE:
		droce_qp_flush_sq(qp); /* what is posted in SQE is flushed */
		break;
	default:
		break;
	}
	return more;
}

static void
engine_deactivate(struct droce_engine *e, struct droce_qp *qp)
{
	TAILQ_REMOVE(&e->active, qp, active_link);
	qp->active = false;
	__atomic_store_n(&qp->idle, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&qp->drained, 0, __ATOMIC_RELAXED);
	engine_release(qp);
}

/*
 * The QP has nothing to do. One that was idle all along (a received
 * packet woke it) leaves: its posters kick it. One in SQD leaves too: its
 * new WQEs wait for RTS, whose modify kicks it. Any other lingers on the
 * list, drained, until engine_sweep() finds it quiet for a whole period:
 * letting it go takes a barrier its posters pair with, too dear for a QP
 * that drains after every message (a latency test's), and while it
 * lingers its posts need no kick. A drained QP costs an iteration one
 * read of its producer index.
 * @return true when the QP stays on the list.
 */
static bool
engine_qp_stays(struct droce_qp *qp)
{
	if (__atomic_load_n(&qp->idle, __ATOMIC_RELAXED))
		return false;
	if (droce_qp_state(qp) == IBV_QPS_SQD)
		return false;
	__atomic_store_n(&qp->drained, 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * Let go of the drained QPs that nobody posted to since the last sweep:
 * tell their posters to kick (idle), one barrier that pairs with every
 * droce_engine_doorbell() (droce_doorbell.c), then look once more for
 * WQEs posted meanwhile. A poster that did not see idle published its
 * WQEs before, and they are seen here: that QP stays.
 */
static void
engine_sweep(struct droce_engine *e)
{
	struct droce_qp *qp, *next;
	bool any = false;

	TAILQ_FOREACH(qp, &e->active, active_link) {
		uint32_t prod = __atomic_load_n(&qp->sq.prod, __ATOMIC_RELAXED);

		if (qp->drained && prod == qp->linger_prod && prod == qp->req.next) {
			__atomic_store_n(&qp->idle, 1, __ATOMIC_RELAXED);
			any = true;
		}
		qp->linger_prod = prod;
	}
	if (!any)
		return;
	droce_doorbell_heavy();
	for (qp = TAILQ_FIRST(&e->active); qp != NULL; qp = next) {
		next = TAILQ_NEXT(qp, active_link);
		if (!qp->drained || !__atomic_load_n(&qp->idle, __ATOMIC_RELAXED))
			continue;
		if (__atomic_load_n(&qp->sq.prod, __ATOMIC_RELAXED) == qp->req.next)
			engine_deactivate(e, qp);
		else
			__atomic_store_n(&qp->idle, 0, __ATOMIC_RELAXED);
	}
}

static unsigned
engine_run_active(struct droce_engine *e)
{
	struct droce_qp *qp, *next;
	unsigned work = 0;

	for (qp = TAILQ_FIRST(&e->active); qp != NULL; qp = next) {
		next = TAILQ_NEXT(qp, active_link);
		/* A QP being destroyed is let go of even when the link is stuck,
		 * after sending the ACK it owes if there is room. */
		if (__atomic_load_n(&qp->destroying, __ATOMIC_ACQUIRE)) {
			droce_resp_send_owed(&e->tx, qp);
			engine_deactivate(e, qp);
			continue;
		}
		if (droce_tx_room(&e->tx) == 0)
			continue;
		/* Drained, and nothing new posted: nothing to serve (a kick or a
		 * received packet would have activated it afresh). */
		if (qp->drained) {
			if (__atomic_load_n(&qp->sq.prod, __ATOMIC_ACQUIRE) == qp->req.next)
				continue;
			__atomic_store_n(&qp->drained, 0, __ATOMIC_RELAXED);
		}
		work++;
		engine_count_work(e, qp, 1);
		if (!engine_serve_qp(e, qp) && !engine_qp_stays(qp))
			engine_deactivate(e, qp);
	}
	if (e->tx.now >= e->sweep_tsc) {
		e->sweep_tsc = e->tx.now + e->linger_tsc;
		engine_sweep(e);
	}
	return work;
}

/*
 * After @p qp took frames: on the active list, to answer or complete them.
 * A QP its application is destroying right now is not served again: only
 * the ACK it owes for them goes out. Most frames find it active already,
 * with work left (not drained): then nothing is to be done, and the call
 * of engine_activate() is not made.
 */
static __rte_always_inline void
engine_rx_after(struct droce_engine *e, struct droce_qp *qp)
{
	if (__atomic_load_n(&qp->destroying, __ATOMIC_ACQUIRE))
		droce_resp_send_owed(&e->tx, qp);
	else if (!qp->active || qp->drained)
		engine_activate(e, qp, false);
}

static void
engine_rx_qp(struct droce_engine *e, struct droce_qp *qp, struct rte_mbuf *m)
{
	struct droce_pkt *pkt = droce_pkt_of(m);

	if (qp == NULL || __atomic_load_n(&qp->destroying, __ATOMIC_ACQUIRE)) {
		e->stats.rx.rx_unknown_qpn++;
		return;
	}
	qp->stats.rx_pkts++;
	engine_count_work(e, qp, 1);
	/* One check before any handler: the handlers trust what passed. */
	if (!droce_rx_check(&e->tx, qp, m, pkt)) {
		qp->stats.dropped++;
		return;
	}
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_validity);
	if (unlikely(pkt->op->flags & DROCE_OPF_CNP)) {
		droce_cc_rx_cnp(&e->tx, qp);
		return;
	}
	/* A request marked CE on its way: tell the sender (a CNP). */
	if (unlikely((pkt->tclass & 0x3u) == 0x3u) && (pkt->op->flags & DROCE_OPF_REQ) &&
	    qp->type != IBV_QPT_UD)
		droce_cc_rx_ce(&e->tx, qp);
	/* The first packet of a QP in RTR establishes the connection. */
	if (droce_qp_state(qp) == IBV_QPS_RTR && !qp->resp.comm_est) {
		qp->resp.comm_est = true;
		droce_qp_event(qp, IBV_EVENT_COMM_EST);
	}
	if (pkt->op->flags & DROCE_OPF_REQ) {
		droce_resp_rx(&e->tx, qp, m, pkt);
		droce_stage_lap(&e->tx.stage, DROCE_STAGE_responder);
	} else {
		droce_comp_rx(&e->tx, qp, m, pkt);
		droce_stage_lap(&e->tx.stage, DROCE_STAGE_completion);
	}
	engine_rx_after(e, qp);
}

/*
 * The QP numbered @p qpn. A hash lookup costs some 30 cycles, which a
 * latency test pays per frame: the QPs found are kept in a small
 * direct-mapped cache, across iterations. A QP destroyed meanwhile is
 * still there, marked destroying: its teardown removes its number from
 * the table, which bumps the table's generation, and frees it only after
 * grace periods, so every iteration that may still hold it in the cache
 * is over by then, and every later one finds the new generation
 * (engine_qp_cache_check()) and drops what it held.
 */
static __rte_always_inline struct droce_qp *
engine_qp_lookup(struct droce_engine *e, uint32_t qpn)
{
	struct droce_engine_qp_slot *slot = &e->qpc[qpn & (DROCE_ENGINE_QP_CACHE - 1)];
	struct droce_qp *qp;

	if (slot->qpn == qpn)
		return slot->qp;
	qp = droce_num_table_lookup(e->qpt, qpn);
	if (qp != NULL) {
		slot->qpn = qpn;
		slot->qp = qp;
	}
	return qp;
}

/* At the start of an iteration (inside its read-side section): a QP
 * left the table since the cache was filled, so it starts again. */
static void
engine_qp_cache_check(struct droce_engine *e)
{
	uint32_t gen = __atomic_load_n(&e->qpt->gen, __ATOMIC_ACQUIRE);

	if (likely(gen == e->qpc_gen))
		return;
	memset(e->qpc, 0, sizeof(e->qpc));
	e->qpc_gen = gen;
}

/* A frame to one QP, or to every QP attached to a multicast group. */
static void
engine_rx_one(struct droce_engine *e, struct rte_mbuf *m)
{
	struct droce_pkt *pkt = droce_pkt_of(m);
	uint32_t qpn[DROCE_MCAST_QPS];
	unsigned n;

	if (pkt->qpn != DROCE_QPN_MCAST) {
		engine_rx_qp(e, engine_qp_lookup(e, pkt->qpn), m);
		return;
	}
	/* Every engine gets a copy (droce_port_rx()) and serves its own
	 * members; the port's first engine counts a group nobody joined. */
	n = droce_port_mcast_qpns(e->port, pkt->dgid, qpn);
	if (n == 0 && e->queue == 0)
		e->stats.rx.rx_unknown_qpn++;
	for (unsigned i = 0; i < n; i++)
		if (droce_qpn_engine(qpn[i], droce_port_nb_queues(e->port)) == e->queue)
			engine_rx_qp(e, droce_num_table_lookup(e->qpt, qpn[i]), m);
}

/* A run of requests the RX loop is in (droce_rx_run). */
struct engine_run {
	struct droce_qp *qp;
	unsigned left;               /**< its frames still to come (0: none) */
	struct droce_rx_run w;
};

/*
 * May a run start at @p pkts[i] of @p n? A long WRITE's MIDDLE packet, or
 * a small WRITE's or SEND's only packet with another alike behind it: a
 * message alone, as in a latency test, has no check to share and pays
 * nothing more than this look. Inlined: every frame takes it.
 */
static __rte_always_inline bool
engine_run_begins(struct rte_mbuf *const *pkts, unsigned i, unsigned n)
{
	const struct droce_pkt *p = droce_pkt_of(pkts[i]), *next;
	uint8_t op = p->opcode & DROCE_OP_MASK;

	if (likely(!((DROCE_RX_RUN_OPCODES >> op) & 1)))
		return false;
	if (op == DROCE_OP_WRITE_MIDDLE)
		return true;
	if (i + 1 >= n)
		return false;
	next = droce_pkt_of(pkts[i + 1]);
	return next->opcode == p->opcode && next->qpn == p->qpn;
}

/*
 * Do the frames from @p pkts[0] on make a run
 * (droce_resp_rx_run_start())? Then @p run holds it: each of its
 * frames has its ICRC checked and is taken (engine_run_frame()), and
 * what the engine does per frame for its QP (engine_rx_qp()) is done
 * once, as it ends (engine_run_end()). Out of line: other frames pay only
 * the loop's look at their opcode.
 */
static void __rte_noinline
engine_run_start(struct droce_engine *e, struct engine_run *run, struct rte_mbuf **pkts,
		 unsigned n)
{
	struct droce_qp *qp = engine_qp_lookup(e, droce_pkt_of(pkts[0])->qpn);

	if (qp == NULL || __atomic_load_n(&qp->destroying, __ATOMIC_ACQUIRE))
		return;
	run->left = droce_resp_rx_run_start(&e->tx, qp, pkts, n, &run->w);
	run->qp = qp;
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_validity);
}

static void __rte_noinline
engine_run_end(struct droce_engine *e, struct engine_run *run)
{
	struct droce_qp *qp = run->qp;

	droce_resp_rx_run_end(&e->tx, qp, &run->w);
	qp->stats.rx_pkts += run->w.n;
	engine_count_work(e, qp, run->w.n);
	engine_rx_after(e, qp);
}

/*
 * The run's next frame @p m, its ICRC checked: good (@p ok), it is taken;
 * wrong, it was dropped, and it ends the run (those after it go their own
 * way: a sequence NAK). @return false when a good one is not the run's
 * after all (an ONLY packet whose RETH the run does not take): the run
 * ended before it, and it goes the general way, which refuses it as it
 * would have.
 */
static inline bool
engine_run_frame(struct droce_engine *e, struct engine_run *run, struct rte_mbuf *m, bool ok)
{
	if (ok) {
		droce_stage_lap(&e->tx.stage, DROCE_STAGE_icrc);
		if (unlikely(!droce_resp_rx_run_frame(&e->tx, run->qp, &run->w, m))) {
			run->left = 0;
			engine_run_end(e, run);
			return false;
		}
		droce_stage_lap(&e->tx.stage, DROCE_STAGE_responder);
		run->left--;
	} else {
		run->left = 0;
	}
	if (run->left == 0)
		engine_run_end(e, run);
	return true;
}

/*
 * Send what is staged. A link that takes nothing for TX_STALL_MS (a peer
 * that went away) has its backlog dropped: the reliable services resend,
 * and the engine keeps running its timers instead of waiting forever. Long
 * enough that a peer which is merely off its CPU for a while (two busy
 * processes on two cores) is not taken for gone.
 */
#define TX_STALL_MS 250

static void
engine_count_rx(struct droce_engine *e, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t msgs = 0, bytes = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		const struct droce_pkt *pkt = droce_pkt_of(pkts[i]);

		msgs += (pkt->op->flags & (DROCE_OPF_LAST | DROCE_OPF_ACK)) == DROCE_OPF_LAST;
		bytes += pkt->payload_len;
	}
	e->stats.rx_msgs += msgs;
	e->stats.rx_payload_bytes += bytes;
}

static unsigned
engine_flush_tx(struct droce_engine *e)
{
	uint16_t sent;

	if (e->tx.n == 0)
		return 0;
	droce_tx_seal(&e->tx);
	sent = e->tx.local ? droce_port_tx(e->port, e->queue, e->tx.pkts, e->tx.n) :
			     droce_port_tx_remote(e->port, e->queue, e->tx.pkts, e->tx.n);
	if (sent < e->tx.n)
		memmove(e->tx.pkts, e->tx.pkts + sent, (e->tx.n - sent) * sizeof(e->tx.pkts[0]));
	e->tx.n -= sent;
	/* What a full link left over keeps the look at each frame. */
	if (e->tx.n == 0)
		e->tx.local = false;
	/* The budget counts what was built since the last burst: frames a
	 * full link left over are few, and go first in the next. */
	e->tx.staged_bytes = 0;
	e->tx.room_max = DROCE_TX_BURST;
	e->tx_held = 0; /* what is left is the full link's */
	if (sent > 0 || e->tx.n == 0) {
		e->tx_stall_tsc = 0;
	} else if (e->tx_stall_tsc == 0) {
		e->tx_stall_tsc = e->tx.now;
	} else if (e->tx.now - e->tx_stall_tsc > rte_get_tsc_hz() / 1000 * TX_STALL_MS) {
		e->stats.tx_stall_drops += e->tx.n;
		rte_pktmbuf_free_bulk(e->tx.pkts, e->tx.n);
		e->tx.n = 0;
		e->tx_stall_tsc = 0;
	}
	return sent;
}

/* Time this iteration? One in DROCE_ENGINE_TIME_EVERY, picked by a
 * xorshift: a fixed period could line up with the workload's own (a
 * ping-pong alternates a post's iteration and a poll's). */
static bool
engine_timed(struct droce_engine *e)
{
	uint32_t x = e->time_rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	e->time_rng = x;
	return (x & e->time_mask) == 0;
}

/* A timed iteration that moved @p frames, from @p start to @p end: its
 * cycles, and those its burst calls took (the port's totals were @p rx0
 * and @p tx0 at the start), each counted for the iterations it stands
 * for; the first DROCE_ENGINE_TIME_ALL_FIRST stand for themselves, and
 * then sampling starts. One that took too long was preempted: it would
 * count another thread's time. */
static void
engine_count_busy(struct droce_engine *e, uint64_t start, uint64_t end, uint64_t rx0,
		  uint64_t tx0, unsigned frames)
{
	uint64_t busy = end - start, per = (uint64_t)e->time_mask + 1;

	if (e->time_all_left != 0 && --e->time_all_left == 0)
		e->time_mask = DROCE_ENGINE_TIME_EVERY - 1;
	if (busy > e->long_base + frames * e->long_frame) {
		e->stats.long_iterations += per;
		return;
	}
	e->stats.busy_cycles += busy * per;
	e->stats.rx_burst_cycles += (e->burst->rx - rx0) * per;
	e->stats.tx_burst_cycles += (e->burst->tx - tx0) * per;
	droce_stage_commit(&e->tx.stage, &e->stats.stage, e->burst->rx - rx0, e->burst->tx - tx0);
}

/*
 * At the end of an application's poll, hold back what it staged when
 * that is only ACKs (or NAKs): the application runs next, and what it
 * does about the frames just received (in a ping-pong, its answer) is
 * posted before the engine is entered again. That entry sends the held
 * ACKs with its own frames, in one burst: a burst call less between a
 * frame's arrival and the application seeing it, and one less for the
 * peer to receive. Held at most until the next entry into the engine by
 * anyone (a poll sends them first, before its RX; a post's send half
 * with what it built); a progress thread or service lcore never holds.
 * Not when the link left frames over: those go first, as always. Not
 * when the engine has a runner of its own either: an application thread
 * polls it only while that runner sleeps (or lost its CPU), and an
 * application that then stops calling verbs (waits on a completion
 * channel, or on its peer) would leave the ACKs until the runner wakes,
 * up to its idle sleep later.
 */
static bool
engine_hold_acks(struct droce_engine *e)
{
	uint16_t i;

	if (__atomic_load_n(&e->has_runner, __ATOMIC_RELAXED))
		return false;
	for (i = 0; i < e->tx.n; i++) {
		const uint8_t *bth = droce_tx_hdr(e->tx.pkts[i], DROCE_HDR_BTH);

		if ((bth[0] & DROCE_OP_MASK) != DROCE_OP_ACK)
			return false;
	}
	e->tx_held = e->tx.n;
	return true;
}

/* One iteration: what is staged, the port's RX (@p rx), the kicked and
 * active QPs, TX, the port's housekeeping (@p rx). Without @p rx it only
 * sends: all a post that woke its QP needs (droce_engine_send()). An
 * application's poll (@p app with @p rx) may hold ACKs back
 * (engine_hold_acks()). */
static int
engine_iteration(struct droce_engine *e, bool rx, bool app)
{
	struct rte_mbuf *pkts[RX_BURST];
	struct engine_run run;
	uint64_t start, end, rx0 = e->burst->rx, tx0 = e->burst->tx;
	uint16_t n = 0, i, left;
	unsigned moved, served;
	uint64_t checked = 0, good = 0;
	bool timed = engine_timed(e);

	e->stats.iterations++;
	e->burst->timed = timed;
	start = rte_get_tsc_cycles();
	e->tx.now = start;
	__atomic_store_n(&e->beat_tsc, start, __ATOMIC_RELAXED);
	droce_stage_start(&e->tx.stage, start);
	/* Frames left over from a full link go first, in order; ACKs a poll
	 * held go now, unless this only sends: then with what it builds. */
	moved = rx || e->tx.n != e->tx_held ? engine_flush_tx(e) : 0;
	left = e->tx.n;
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_tx);
	/* The TSC just read starts the RX burst's time, unless TX took some. */
	if (rx)
		n = droce_port_rx(e->port, e->queue, pkts, RX_BURST,
				  moved != 0 && timed ? rte_get_tsc_cycles() : start);
	if (n == RX_BURST)
		e->tx.rx_full_at = start;
	engine_qp_cache_check(e);
	engine_count_rx(e, pkts, n);
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_rx);
	/* A long payload's copy waits for the next frame's check, and is
	 * made beside it (droce_payload_to_mem()); the last one here. */
	e->tx.rx_defer = true;
	run.left = 0;
	/* Short frames in runs of four alike are checked first, at once
	 * (their time goes to the first frame's icrc lap below). */
	checked = n >= 4 ? droce_port_rx_verify4(e->port, e->queue, pkts, n, e->tx.now, &good) : 0;
	for (i = 0; i < n; i++) {
		bool ok;

		if (run.left == 0 && engine_run_begins(pkts, i, n))
			engine_run_start(e, &run, pkts + i, n - i);
		/* One call for every frame, in a run or not: inlined. */
		if (checked & (UINT64_C(1) << i)) {
			droce_side_copy_run(&e->tx.rx_copy);
			ok = (good & (UINT64_C(1) << i)) != 0;
		} else {
			ok = droce_port_rx_verify(e->port, e->queue, pkts[i], e->tx.now,
						  &e->tx.rx_copy);
		}
		if (run.left != 0 && engine_run_frame(e, &run, pkts[i], ok))
			continue;
		if (ok) {
			droce_stage_lap(&e->tx.stage, DROCE_STAGE_icrc);
			engine_rx_one(e, pkts[i]);
		}
		droce_stage_lap(&e->tx.stage, DROCE_STAGE_rx);
	}
	e->tx.rx_defer = false;
	droce_side_copy_run(&e->tx.rx_copy);
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_copy);
	/* No handler keeps a frame: each copies what it needs. */
	if (n != 0)
		droce_mbuf_free_bulk(pkts, n);
	moved += n;
	engine_take_kicks(e);
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_engine);
	served = engine_run_active(e);
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_requester);
	if (rx)
		droce_port_tick(e->port, e->queue, start);
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_engine);
	/* TX last: when it calls the ethdev, the TSC the port read as the
	 * call returned ends the iteration (one TSC read less). */
	end = e->burst->tx_end;
	if (!(app && rx && left == 0 && e->tx.n != 0 && engine_hold_acks(e)))
		moved += engine_flush_tx(e);
	droce_stage_lap(&e->tx.stage, DROCE_STAGE_tx);
	/* Busy means frames moved: a QP waiting for its ACK is served in
	 * every iteration, and that is polling. */
	if (moved > 0 && timed)
		engine_count_busy(e, start, e->burst->tx_end != end ? e->burst->tx_end :
				  rte_get_tsc_cycles(), rx0, tx0, moved);
	/* Burst calls outside iterations (a stopping engine's drain) are not timed. */
	e->burst->timed = false;
	return (int)(moved + served);
}

/* One iteration, if no other thread is running one. @p woken: a QP a
 * post found idle, put on the active list first. */
static int
engine_run(struct droce_engine *e, bool rx, bool app, struct droce_qp *woken)
{
	uint32_t idle = 0;
	int work;

	if (!__atomic_compare_exchange_n(&e->busy, &idle, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return -EBUSY;
	rte_rcu_qsbr_thread_online(e->rcu, e->rcu_id);
	if (woken != NULL)
		engine_activate(e, woken, true);
	work = engine_iteration(e, rx, app);
	/* For TSan: pairs with droce_dev_sync() (the grace period's own
	 * atomics are inside DPDK, which it does not see). */
	DROCE_TSAN_RELEASE(e->rcu);
	rte_rcu_qsbr_thread_offline(e->rcu, e->rcu_id);
	__atomic_store_n(&e->busy, 0, __ATOMIC_RELEASE);
	return work;
}

int
droce_engine_poll(struct droce_engine *e)
{
	return engine_run(e, true, true, NULL);
}

int
droce_engine_send(struct droce_engine *e)
{
	return engine_run(e, false, true, NULL);
}

int
droce_engine_send_woken(struct droce_engine *e, struct droce_qp *qp)
{
	int rc = engine_run(e, false, true, qp);

	if (rc == -EBUSY)
		droce_engine_kick(e, qp);
	return rc;
}

/* An iteration of the engine's own runner (progress thread, service
 * lcore, the drain of a stopping engine): nothing is held back. */
static int
engine_run_own(struct droce_engine *e)
{
	return engine_run(e, true, false, NULL);
}

/* Sleep a little longer each time nothing happens, up to the limit;
 * while asleep, application threads may run the engine themselves. */
static void
engine_idle_backoff(struct droce_engine *e, unsigned *idle)
{
	struct timespec ts;
	unsigned us;

	if (++*idle < IDLE_SPIN) {
		rte_pause();
		return;
	}
	us = 1u << RTE_MIN(*idle - IDLE_SPIN, 20u);
	us = RTE_MIN(us, e->idle_sleep_us);
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000;
	__atomic_store_n(&e->spinning, 0, __ATOMIC_RELAXED);
	nanosleep(&ts, NULL);
	__atomic_store_n(&e->spinning, 1, __ATOMIC_RELAXED);
}

static int32_t
engine_service(void *arg)
{
	struct droce_engine *e = arg;
	static RTE_DEFINE_PER_LCORE(unsigned, idle);

	__atomic_store_n(&e->spinning, 1, __ATOMIC_RELAXED);
	if (engine_run_own(e) > 0)
		RTE_PER_LCORE(idle) = 0;
	else
		engine_idle_backoff(e, &RTE_PER_LCORE(idle));
	return 0;
}

static void *
engine_thread(void *arg)
{
	struct droce_engine *e = arg;
	unsigned idle = 0;
	/* An lcore id gives the thread its mempool caches: without one every
	 * mbuf it allocates or frees goes through the pool's shared ring. No
	 * id left (or a multi-process EAL): it runs without, as before. */
	bool registered = rte_thread_register() == 0;

	/* Its first sleeps after going idle are meant to be short (1, 2, 4
	 * us): the default timer slack would stretch each to 50 us, and a
	 * frame that comes meanwhile waits that long. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	__atomic_store_n(&e->spinning, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&e->stop, __ATOMIC_RELAXED)) {
		if (engine_run_own(e) > 0)
			idle = 0;
		else
			engine_idle_backoff(e, &idle);
	}
	__atomic_store_n(&e->spinning, 0, __ATOMIC_RELAXED);
	if (registered)
		rte_thread_unregister();
	return NULL;
}

int
droce_engine_thread_start(struct droce_engine *e, unsigned idle_sleep_us)
{
	char name[16]; /* the kernel's limit, with the NUL */
	int rc;

	e->idle_sleep_us = idle_sleep_us;
	e->stop = false;
	__atomic_store_n(&e->has_runner, true, __ATOMIC_RELAXED);
	rc = pthread_create(&e->thread, NULL, engine_thread, e);
	if (rc != 0) {
		__atomic_store_n(&e->has_runner, false, __ATOMIC_RELAXED);
		return -rc;
	}
	snprintf(name, sizeof(name), "droce-engine%u", e->queue % DROCE_PORT_QUEUES_MAX);
	pthread_setname_np(e->thread, name);
	e->thread_running = true;
	return 0;
}

int
droce_engine_lcore_start(struct droce_engine *e, unsigned lcore)
{
	int rc;

	rc = rte_service_lcore_add(lcore);
	if (rc != 0 && rc != -EALREADY)
		return rc;
	rc = rte_service_map_lcore_set(e->service_id, lcore, 1);
	if (rc != 0)
		return rc;
	rte_service_runstate_set(e->service_id, 1);
	rc = rte_service_lcore_start(lcore);
	if (rc == -EALREADY)
		rc = 0;
	if (rc == 0)
		__atomic_store_n(&e->has_runner, true, __ATOMIC_RELAXED);
	return rc;
}

int
droce_engine_create(struct droce_port *port, uint16_t queue, struct droce_num_table *qpt,
		    const struct droce_num_table *srqt, const struct droce_mr_table *mrt, struct rte_rcu_qsbr *rcu,
		    unsigned rcu_id, const char *name, struct droce_engine **out)
{
	struct rte_service_spec spec = {
		.callback = engine_service,
		.capabilities = 0, /* MT-unsafe: the engine is one thread at a time */
	};
	struct droce_engine *e;
	char rname[RTE_RING_NAMESIZE];
	int rc;

	e = rte_zmalloc(name, sizeof(*e), RTE_CACHE_LINE_SIZE);
	if (e == NULL)
		return -ENOMEM;
	e->port = port;
	e->queue = queue;
	e->tx.queue = queue;
	e->tx.room_max = DROCE_TX_BURST;
	e->qpt = qpt;
	e->rcu = rcu;
	e->rcu_id = rcu_id;
	e->idle_sleep_us = 1000;
	e->stale_tsc = rte_get_tsc_hz() / 1000000 * STALE_US;
	e->linger_tsc = rte_get_tsc_hz() / 1000000 * LINGER_US;
	droce_doorbell_init();
	TAILQ_INIT(&e->active);
	e->tx.port = port;
	e->tx.mp = droce_port_mempool(port);
	e->tx.frame_room = (uint16_t)(rte_pktmbuf_data_room_size(e->tx.mp) -
				      RTE_MIN(RTE_PKTMBUF_HEADROOM,
					      rte_pktmbuf_data_room_size(e->tx.mp)));
	e->tx.frame_off = (uint16_t)(sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(e->tx.mp) +
				     RTE_PKTMBUF_HEADROOM);
	e->tx.mrt = mrt;
	e->tx.no_mbuf = &e->stats.tx_no_mbuf;
	e->tx.msgs = &e->stats.tx_msgs;
	e->tx.payload_bytes = &e->stats.tx_payload_bytes;
	e->tx.rxs = &e->stats.rx;
	e->tx.ccs = &e->stats.cc;
	droce_cc_init(&e->tx.cc, droce_port_cc_conf(port), droce_port_link_mbps(port),
		      rte_get_tsc_hz());
	e->tx.zcs = &e->stats.zc;
	e->tx.zc_gate_at = UINT64_MAX;  /* no TSC: read at the first payload */
	e->burst = droce_port_cycles(port, queue);
	e->long_base = rte_get_tsc_hz() / 1000000 * LONG_BASE_US * LONG_SCALE;
	e->long_frame = rte_get_tsc_hz() / 1000000 * LONG_FRAME_US * LONG_SCALE;
	e->tx.srqt = srqt;
	e->tx.stage.on = getenv("DROCE_STAGE_CYCLES") != NULL;
	e->time_rng = 0x9e3779b9u ^ queue;
	/* Every iteration timed at first; with DROCE_STAGE_CYCLES, always. */
	e->time_mask = 0;
	e->time_all_left = e->tx.stage.on ? 0 : DROCE_ENGINE_TIME_ALL_FIRST;
	snprintf(rname, sizeof(rname), "%s_kick", name);
	e->kicks = rte_ring_create(rname, rte_align32pow2(qpt->max + 1), SOCKET_ID_ANY,
				   RING_F_SC_DEQ);
	if (e->kicks == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	rc = rte_rcu_qsbr_thread_register(rcu, rcu_id);
	if (rc != 0)
		goto fail;
	snprintf(spec.name, sizeof(spec.name), "%s", name);
	spec.callback_userdata = e;
	rc = rte_service_component_register(&spec, &e->service_id);
	if (rc != 0)
		goto fail_rcu;
	rte_service_component_runstate_set(e->service_id, 1);
	*out = e;
	return 0;
fail_rcu:
	rte_rcu_qsbr_thread_unregister(rcu, rcu_id);
fail:
	rte_ring_free(e->kicks);
	rte_free(e);
	return rc;
}

/*
 * A stopping engine takes its transport with it, unlike a NIC that keeps
 * answering after its process exits. Send what is still staged and owed
 * (a last ACK, say) and give the peer a moment to read it before the link
 * goes away, so a peer that waits for that ACK does not time out.
 */
#define DRAIN_MS 50

static void
engine_drain(struct droce_engine *e)
{
	uint64_t end = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * DRAIN_MS;

	while (rte_get_tsc_cycles() < end) {
		if (engine_run_own(e) <= 0 && e->tx.n == 0 && TAILQ_EMPTY(&e->active))
			rte_delay_us_sleep(1000);
	}
}

void
droce_engine_stop(struct droce_engine *e)
{
	if (e->thread_running) {
		__atomic_store_n(&e->stop, true, __ATOMIC_RELAXED);
		pthread_join(e->thread, NULL);
		e->thread_running = false;
	}
	rte_service_runstate_set(e->service_id, 0);
	rte_service_component_runstate_set(e->service_id, 0);
	/* Wait for a service lcore that may be inside an iteration. */
	while (rte_service_may_be_active(e->service_id) == 1)
		rte_pause();
	__atomic_store_n(&e->spinning, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->has_runner, false, __ATOMIC_RELAXED);
	engine_drain(e);
}

void
droce_engine_destroy(struct droce_engine *e)
{
	droce_engine_stop(e);
	rte_service_component_unregister(e->service_id);
	rte_pktmbuf_free_bulk(e->tx.pkts, e->tx.n);
	droce_tx_release(&e->tx);
	rte_rcu_qsbr_thread_unregister(e->rcu, e->rcu_id);
	rte_ring_free(e->kicks);
	rte_free(e);
}
