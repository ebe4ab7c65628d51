/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The engine: droce's poll loop for one port queue.
 *
 * A device has one engine per queue of its port. One iteration receives a
 * burst on the engine's queue, hands each RoCE packet to the responder or
 * completer of the QP it names, runs the requester and responder output
 * of every active QP, checks their timers and transmits on the queue.
 * Every QP belongs to exactly one engine, the one droce_qpn_engine() names
 * for its QPN (the port hands it every frame of its QPs, whichever queue
 * they arrive on), so nothing on this path takes a lock shared with
 * another engine.
 *
 * An iteration runs in whichever thread gets the engine first: a service
 * lcore (the engine is an rte_service), droce's progress thread, or an
 * application thread inside ibv_poll_cq()/ibv_post_send()
 * (run-to-completion). A try-lock makes them take turns; the holder is an
 * RCU (QSBR) reader for the iteration's duration, so the control path
 * frees nothing an iteration may still use.
 */
#ifndef DROCE_ENGINE_H
#define DROCE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/queue.h>

#include <rte_cycles.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "droce_transport.h"
#include "droce_num_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/** QPs an engine keeps by number between iterations (a power of two). */
#define DROCE_ENGINE_QP_CACHE 64

/** A QP an engine found by number. */
struct droce_engine_qp_slot {
	uint32_t qpn;                /**< 0: empty (no QP has number 0) */
	struct droce_qp *qp;
};

/** One engine iteration in this many (a power of two) is timed for the
 *  cycle counters of struct droce_engine_stats... */
#define DROCE_ENGINE_TIME_EVERY 8
/** ...once this many iterations that moved frames were timed: until then
 *  every one is, so that a short run (a test's thousand messages may take
 *  fifty iterations) is measured and not guessed from a handful. */
#define DROCE_ENGINE_TIME_ALL_FIRST 1024

/** Engine counters (per port queue). */
struct droce_engine_stats {
	uint64_t iterations;
	uint64_t tx_stall_drops;     /**< frames dropped because the link took nothing for long */
	uint64_t tx_no_mbuf;         /**< frames not built for want of an mbuf (built later) */
	struct droce_rx_stats rx;    /**< received packets dropped or refused, by cause */
	struct droce_cc_stats cc;    /**< ECN, CNPs and DCQCN */
	struct droce_zc_stats zc;    /**< payloads sent from the region or copied, and why */
	/* What the engine costs, per unit of work: TSC cycles of the
	 * iterations that moved frames (in or out), and of those the cycles
	 * the port's burst calls took; busy minus both is droce's own. The
	 * four are estimates from a sample: after the first
	 * DROCE_ENGINE_TIME_ALL_FIRST busy iterations, one iteration in
	 * DROCE_ENGINE_TIME_EVERY, picked at random, is timed and counts that
	 * many times (every one with DROCE_STAGE_CYCLES). The TSC reads of a
	 * timed iteration cost as much as a frame's header (20-40 cycles
	 * each, three or four per iteration). */
	uint64_t busy_cycles;        /**< TSC cycles of iterations that moved frames */
	uint64_t rx_burst_cycles;    /**< of those, inside rte_eth_rx_burst() */
	uint64_t tx_burst_cycles;    /**< of those, inside rte_eth_tx_burst() */
	/** Iterations that moved frames but took longer than 20 us plus 2 us
	 *  per frame, left out of the three above: the thread lost its CPU
	 *  meanwhile (no iteration needs that long), and a TSC counts that
	 *  time too. */
	uint64_t long_iterations;
	/* The work, each way: messages (counted at the frame that ends one:
	 * last or only, not an ACK) and payload bytes. The frames are the
	 * port's rx_roce and tx_frames. */
	uint64_t rx_msgs;            /**< frames received that end a message */
	uint64_t rx_payload_bytes;   /**< payload bytes received */
	uint64_t tx_msgs;            /**< frames built that end a message (tx_stall_drops may drop some) */
	uint64_t tx_payload_bytes;   /**< payload bytes built */
	/** Busy cycles per stage, with DROCE_STAGE_CYCLES set (droce_stage.h). */
	struct droce_stage_cycles stage;
};

struct droce_engine {
	struct droce_port *port;
	uint16_t queue;              /**< its port queue, and its index in the device */
	/** The device's next engine (NULL after the last): what an
	 *  application thread runs when it helps every engine. */
	struct droce_engine *next;
	struct droce_num_table *qpt;
	struct rte_rcu_qsbr *rcu;
	unsigned rcu_id;             /**< this engine's reader id in @ref rcu */
	uint32_t busy;               /**< the try-lock */
	/** 1 while a progress thread or service lcore busy-polls the engine
	 *  (not while it sleeps): application threads leave it alone. */
	uint32_t spinning;
	/** A progress thread or service lcore runs the engine: an
	 *  application's poll holds no ACK (engine_hold_acks()). */
	bool has_runner;
	uint64_t beat_tsc;           /**< TSC when the last iteration started, whoever ran it */
	/** A spinning runner whose last iteration is older than this (TSC
	 *  cycles) spins on paper only: it lost its CPU. */
	uint64_t stale_tsc;
	struct rte_ring *kicks;      /**< QPs with new work, from any thread */
	/** QPs found by number (engine_qp_lookup()), direct-mapped, kept
	 *  while the QPN table's generation is @ref qpc_gen. */
	struct droce_engine_qp_slot qpc[DROCE_ENGINE_QP_CACHE];
	uint32_t qpc_gen;
	TAILQ_HEAD(, droce_qp) active;
	/** TSC of the next engine_sweep(), and the linger period between two. */
	uint64_t sweep_tsc, linger_tsc;
	struct droce_tx tx;
	uint64_t tx_stall_tsc;       /**< when the link last stopped taking frames; 0: it takes them */
	/** Staged frames an application's poll held back: ACKs that leave
	 *  with the next entry's frames (engine_hold_acks()). */
	uint16_t tx_held;
	struct droce_port_cycles *burst; /**< the port's burst cycle totals */
	uint32_t time_rng;           /**< xorshift state: which iterations are timed */
	uint32_t time_mask;          /**< timed when (rng & mask) == 0 */
	uint32_t time_all_left;      /**< busy iterations still all timed (time_mask 0) */
	uint64_t long_base, long_frame; /**< an iteration longer than base + frame per frame is not counted busy */
	uint32_t service_id;
	/* progress thread */
	pthread_t thread;
	bool thread_running;
	bool stop;                   /**< tells the progress thread to end (atomic) */
	unsigned idle_sleep_us;
	struct droce_engine_stats stats;
};

/**
 * Create the engine of @p port's queue @p queue, registered as an
 * rte_service named @p name. @p qpt and @p srqt are the device's QPN and
 * XRC SRQ number tables; @p rcu_id its reader id in the device's @p rcu.
 * @return 0 or a negative errno.
 */
int droce_engine_create(struct droce_port *port, uint16_t queue, struct droce_num_table *qpt,
			const struct droce_num_table *srqt, const struct droce_mr_table *mrt, struct rte_rcu_qsbr *rcu,
			unsigned rcu_id, const char *name, struct droce_engine **out);

/** Stop running the engine: join its progress thread, stop its service,
 *  then send what is still staged or owed and give the peer a moment. */
void droce_engine_stop(struct droce_engine *e);

/** Stop the engine, unregister the service, free the engine. */
void droce_engine_destroy(struct droce_engine *e);

/**
 * Run one iteration if no other thread is running one.
 * @return the amount of work done (packets and completions), 0 when idle,
 * -EBUSY when another thread holds the engine.
 */
int droce_engine_poll(struct droce_engine *e);

/**
 * droce_engine_poll() without the receive side and the port's
 * housekeeping: the kicked and active QPs send, and the frames go out.
 * What a post that woke its QP needs at once; the next poll receives.
 * @return as droce_engine_poll().
 */
int droce_engine_send(struct droce_engine *e);

/**
 * droce_engine_send() for @p qp, which a post found idle
 * (droce_engine_doorbell()): holding the engine, the QP goes on its active
 * list directly, without a kick through the ring (an exchange, a
 * reference and a ring slot, then the engine's dequeue, all on a latency
 * test's critical path). When another thread holds the engine, the QP is
 * kicked instead, and that thread or the next serves it.
 * @return as droce_engine_poll().
 */
int droce_engine_send_woken(struct droce_engine *e, struct droce_qp *qp);

/** Tell the engine @p qp has new work. Any thread; cheap when already told. */
void droce_engine_kick(struct droce_engine *e, struct droce_qp *qp);

/** Posters order the doorbell by the compiler alone: the engine's
 *  droce_doorbell_heavy() is a membarrier(2) (droce_doorbell.c). Set by
 *  droce_doorbell_init(), cleared for good if a membarrier ever fails. */
extern bool droce_doorbell_light;

/** Register for membarrier(2), once per process (the first engine). */
void droce_doorbell_init(void);

/** The engine's side of the doorbell: after it marked QPs idle, before it
 *  reads their producer indexes again. */
void droce_doorbell_heavy(void);

/**
 * A poster published new send WQEs of @p qp (sq.prod): is the QP off its
 * engine's active list, so that the engine must be told? The engine
 * serves an active QP's new WQEs without being told, so the common post
 * costs a read of a line the engine rarely writes, kept after the store
 * of sq.prod by a compiler barrier (or by a fence where membarrier(2) is
 * missing). It pairs with the barrier the engine makes before it lets a
 * QP go (engine_sweep()): either the engine sees the new WQEs, or the
 * poster sees the QP idle.
 * @return true when the QP is idle: the caller kicks it, or sends with
 * droce_engine_send_woken().
 */
static inline bool
droce_engine_doorbell(const struct droce_qp *qp)
{
	if (likely(__atomic_load_n(&droce_doorbell_light, __ATOMIC_RELAXED)))
		rte_compiler_barrier();
	else
		rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&qp->idle, __ATOMIC_RELAXED) != 0;
}

/**
 * After droce_engine_doorbell() found @p qp on the active list: had the
 * engine sent and completed everything before (drained)? Then nothing of
 * the QP's will run the engine soon, and a post that wants its WQE on the
 * wire at once (a latency test's) sends it itself. A hint only: the
 * engine serves an active QP's new WQEs in its next iteration anyway.
 */
static inline bool
droce_engine_drained(const struct droce_qp *qp)
{
	return __atomic_load_n(&qp->drained, __ATOMIC_RELAXED) != 0;
}

/**
 * Should an application thread run an iteration of @p e (inside
 * ibv_post_send() or ibv_poll_cq())? Not while a progress thread or
 * service lcore is busy-polling it: that would only bounce the engine's
 * try-lock between cores. Yes when nobody runs it, or its runner sleeps,
 * or its runner has not started an iteration for a while: a thread that
 * spins but lost its CPU (more busy threads than CPUs, as with two
 * busy-polling processes and their progress threads on two cores) would
 * otherwise hold every poller up for a scheduler time slice.
 */
static inline bool
droce_engine_wants_help(const struct droce_engine *e)
{
	return !__atomic_load_n(&e->spinning, __ATOMIC_RELAXED) ||
	       rte_get_tsc_cycles() - __atomic_load_n(&e->beat_tsc, __ATOMIC_RELAXED) >
	       e->stale_tsc;
}

/**
 * Start droce's progress thread for @p e: it runs iterations and sleeps
 * (up to @p idle_sleep_us) while there is nothing to do.
 */
int droce_engine_thread_start(struct droce_engine *e, unsigned idle_sleep_us);

/** Map the engine's service to service lcore @p lcore and start it. */
int droce_engine_lcore_start(struct droce_engine *e, unsigned lcore);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_ENGINE_H */
