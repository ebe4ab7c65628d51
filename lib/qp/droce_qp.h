/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Queue pairs: the real QP (one per QPN) with its send and receive rings,
 * the requester and responder state the engine keeps in it, and the
 * handles applications hold.
 *
 * Ownership: the application side writes WQEs and advances the producer
 * indices; the owning engine consumes them and keeps all protocol state.
 * A WQE belongs to exactly one side at a time. Control operations (modify,
 * destroy) run in application threads under the QP's mutex and meet the
 * engine only through the QP state (release/acquire) and RCU.
 */
#ifndef DROCE_QP_H
#define DROCE_QP_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sys/queue.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rte_common.h>
#include <rte_spinlock.h>

#include "droce_wire.h"
#include "droce_cq.h"
#include "droce_dcqcn.h"
#include "droce_hdr_tmpl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_engine;

/** Most engines a device has (DROCE_PORT_QUEUES_MAX). */
#define DROCE_QP_ENGINES_MAX 16

/** Address vector: what an RC/UC QP or a UD address handle sends to. */
struct droce_av {
	struct ibv_ah_attr attr;     /**< as the application gave it */
	struct droce_l3_addr l3;     /**< headers to send with, once routed */
	bool routed;                 /**< l3 holds a resolved destination MAC */
	/** An RC/UC/XRC QP's frames' headers, kept by its engine (droce_tx_start()). */
	struct droce_hdr_tmpl tmpl;
};

/** A UD address handle. */
struct droce_ah {
	struct ibv_ah ibv;
	struct droce_av av;          /**< routed by the engine on first use */
};

/** Send WQE life cycle, engine side. */
enum droce_wqe_state {
	DROCE_WQE_POSTED = 0,        /**< not started */
	DROCE_WQE_SENDING,           /**< some packets sent */
	DROCE_WQE_SENT,              /**< all packets sent, waiting for the ACK/response */
};

/**
 * One send work request in the send ring, whose slots start on cache
 * lines (droce_wq_init()). The first line holds all a WQE's completion
 * reads and all but the SGEs of an RC or UC request: an ACK retires a run
 * of WQEs, one line each, and the requester's look at one is two lines
 * with its SGE. Atomic, UD and XRC fields come after.
 */
struct droce_send_wqe {
	uint64_t wr_id;
	uint32_t opcode;             /**< enum ibv_wr_opcode */
	uint32_t send_flags;         /**< IBV_SEND_* */
	rte_be32_t imm;              /**< immediate data, network order */
	uint32_t invalidate_rkey;
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t length;             /**< bytes in the message */
	uint16_t num_sge;
	bool is_inline;              /**< data[] holds the payload itself */
	/* engine side */
	uint8_t state;               /**< enum droce_wqe_state */
	uint8_t error;               /**< enum ibv_wc_status it failed with locally; 0: none */
	uint32_t first_psn;          /**< PSN of the first packet (valid once SENDING) */
	uint32_t last_psn;           /**< PSN of the last packet (READ: last response) */
	uint32_t sent;               /**< bytes put on the wire so far (READ: bytes received) */
	/** Frames in TX queues whose payload points into this slot's buffers
	 *  (zero-copy TX): the WQE completes once none is left. Kept across
	 *  reuse of the slot, as posters never write it. */
	uint32_t zc_refs;
	/* the second line */
	uint64_t compare_add, swap;
	struct droce_ah *ah;         /**< UD: where to */
	uint32_t remote_qpn;         /**< UD */
	uint32_t remote_qkey;        /**< UD */
	uint32_t xrc_srqn;           /**< XRC_SEND: the remote SRQ */
	/** The SGE list, or the payload itself when is_inline. */
	uint8_t data[] __rte_aligned(8);
};

static_assert(offsetof(struct droce_send_wqe, zc_refs) + sizeof(uint32_t) <= RTE_CACHE_LINE_SIZE,
	      "a send WQE's completion fields fit its first cache line");

static inline struct ibv_sge *
droce_wqe_sge(struct droce_send_wqe *w)
{
	return (struct ibv_sge *)w->data;
}

/*
 * A send WQE's shape in two 8-byte words, for a run that compares each of
 * its WQEs with the first (req_only_like()) in two loads: its opcode and
 * flags, and its length, SGE count, inline flag and state. A struct of
 * each word's fields, in the WQE's order, builds what is compared with
 * and which bits count, whatever the byte order.
 */
struct droce_wqe_op_word {
	uint32_t opcode;
	uint32_t send_flags;
};

struct droce_wqe_len_word {
	uint32_t length;
	uint16_t num_sge;
	uint8_t is_inline;
	uint8_t state;
};

static_assert(offsetof(struct droce_send_wqe, send_flags) ==
		      offsetof(struct droce_send_wqe, opcode) + 4 &&
	      offsetof(struct droce_send_wqe, num_sge) ==
		      offsetof(struct droce_send_wqe, length) + 4 &&
	      offsetof(struct droce_send_wqe, is_inline) ==
		      offsetof(struct droce_send_wqe, length) + 6 &&
	      offsetof(struct droce_send_wqe, state) ==
		      offsetof(struct droce_send_wqe, length) + 7 &&
	      sizeof(bool) == 1 && sizeof(struct droce_wqe_op_word) == 8 &&
	      sizeof(struct droce_wqe_len_word) == 8,
	      "droce_wqe_op_word and droce_wqe_len_word follow the WQE's fields");

/** The word of a droce_wqe_op_word or droce_wqe_len_word. */
static inline uint64_t
droce_wqe_word_of(const void *fields)
{
	uint64_t v;

	memcpy(&v, fields, sizeof(v));
	return v;
}

/** @p w's opcode and flags, as a droce_wqe_op_word's word. */
static inline uint64_t
droce_wqe_op_word(const struct droce_send_wqe *w)
{
	return droce_wqe_word_of(&w->opcode);
}

/** @p w's length, SGE count, inline flag and state, as a
 *  droce_wqe_len_word's word. */
static inline uint64_t
droce_wqe_len_word(const struct droce_send_wqe *w)
{
	return droce_wqe_word_of(&w->length);
}

/** One receive work request. */
struct droce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t resv;
	struct ibv_sge sge[];
};

/** A ring of fixed-size WQEs. prod is the application's, the rest the engine's. */
struct droce_wq {
	uint8_t *buf;
	uint32_t stride;             /**< bytes per WQE */
	uint32_t mask;               /**< entries - 1 */
	uint32_t max_wr;             /**< what the application may have outstanding */
	uint32_t max_sge;
	uint32_t max_inline;
	/* The posters' fields, a cache line away from the engine's (padding
	 * rather than alignment: QPs come from calloc()). */
	uint8_t pad0[RTE_CACHE_LINE_SIZE];
	rte_spinlock_t lock;         /**< serialises posters, unless single_producer */
	/** One thread posts at a time (DROCE_SINGLE_THREADED, or a QP or SRQ
	 *  created on a parent domain with a thread domain): no lock taken. */
	bool single_producer;
	uint32_t prod;               /**< next free slot, written by posters */
	uint32_t cons_seen;          /**< posters' last look at @ref cons */
	uint32_t batch_mark;         /**< prod when posts last ran the engine (droce_wq_batch_due()) */
	/** Posts between two such runs: droce_wq_post_batch() of max_wr, kept
	 *  (worked out per post it cost each post 7 instructions). */
	uint32_t batch;
	uint8_t pad1[RTE_CACHE_LINE_SIZE];
	/* The engine's: posters read it only when the ring looks full. */
	uint32_t cons;               /**< oldest WQE not yet completed */
	uint8_t pad2[RTE_CACHE_LINE_SIZE];
};

/** Poster side: serialise with other posters, unless there is only one. */
static inline void
droce_wq_lock(struct droce_wq *q)
{
	if (!q->single_producer)
		rte_spinlock_lock(&q->lock);
}

static inline void
droce_wq_unlock(struct droce_wq *q)
{
	if (!q->single_producer)
		rte_spinlock_unlock(&q->lock);
}

/**
 * Poster side, under the posters' lock: is there room for a WQE at index
 * @p prod? Reads the engine's cache line only when the ring looks full
 * from what the posters saw last.
 */
static inline bool
droce_wq_room_at(struct droce_wq *q, uint32_t prod)
{
	if (prod - q->cons_seen < q->max_wr)
		return true;
	q->cons_seen = __atomic_load_n(&q->cons, __ATOMIC_ACQUIRE);
	return prod - q->cons_seen < q->max_wr;
}

/** Posts to an active QP between two runs of the engine's send half, at most. */
#define DROCE_POST_BATCH 32

/**
 * The posts between two runs of the engine's send half for a queue of
 * @p max_wr WQEs: three sixteenths of it, DROCE_POST_BATCH at most. An
 * application that keeps its queue full waits for a completion with only
 * part of the queue still to post: perftest's defaults (128 WQEs, one in
 * 100 signaled) leave 28. A batch longer than that slack sent nothing
 * until the queue was full and the application polled, and every round
 * trip to the signaled WQE's completion stalled the sender (at 64 bytes,
 * some 27 cycles per message spent polling an idle engine, against 9
 * with 16 posts per batch: docs/benchmarks.md, twenty-sixth session).
 * Within it, a longer batch pays the send half's fixed cost less often:
 * 24 (the slack less 4) sent 2-4% more 64-byte messages than 16 (an
 * eighth, until the twenty-eighth session), once a message cost less.
 */
static inline uint32_t
droce_wq_post_batch(uint32_t max_wr)
{
	return RTE_MIN(RTE_MAX(max_wr * 3 / 16, 1u), (uint32_t)DROCE_POST_BATCH);
}

/**
 * Poster side, under the posters' lock, after publishing up to @p prod:
 * have @ref droce_wq.batch WQEs been posted since the last time this said
 * yes? A long series of posts then sends its frames as it goes, a burst
 * at a time, as a NIC's doorbell would, instead of all of them at the
 * next poll, after the last post.
 */
static inline bool
droce_wq_batch_due(struct droce_wq *q, uint32_t prod)
{
	if (prod - q->batch_mark < q->batch)
		return false;
	q->batch_mark = prod;
	return true;
}

static inline void *
droce_wq_at(const struct droce_wq *q, uint32_t idx)
{
	return q->buf + (size_t)(idx & q->mask) * q->stride;
}

/**
 * An XRC domain. Opened with a file, it is shared by every open of the
 * same inode on the device (the man page's O_CREAT/O_EXCL rules).
 */
struct droce_xrcd {
	uint32_t refs;               /**< opens (each gets its own handle) */
	uint32_t users;              /**< XRC SRQs and XRC_RECV QPs (EBUSY on last close) */
	dev_t st_dev;                /**< identity of the file, when opened with one */
	ino_t st_ino;
	bool shared;
	LIST_ENTRY(droce_xrcd) link;
};

/** A shared receive queue (basic or XRC). */
struct droce_srq {
	struct ibv_srq ibv;
	struct droce_wq rq;
	uint32_t pd_handle;
	enum ibv_srq_type type;
	uint32_t srqn;               /**< XRC: its number in the device's SRQ table */
	struct droce_xrcd *xrcd;     /**< XRC */
	struct droce_cq *cq;         /**< XRC: receives complete here */
	/** Raise IBV_EVENT_SRQ_LIMIT_REACHED when fewer WQEs remain; 0: disarmed. */
	uint32_t limit;
	uint32_t users;              /**< QPs attached (EBUSY on destroy) */
	struct droce_engine *engine;
	uint32_t events_reported;    /**< async events ibv_get_async_event() handed out */
	/** Told first when the application destroys the handle (rdma_cm's
	 *  ID forgets its QP: droce_qp_on_destroy()), or NULL. */
	void (*on_destroy)(void *arg);
	void *on_destroy_arg;
};

static inline struct droce_srq *
droce_srq_of(struct ibv_srq *srq)
{
	return (struct droce_srq *)srq;
}

/** An RDMA READ or atomic the responder answers, and keeps for replay. */
struct droce_read_res {
	bool pending;                /**< responses still to send */
	bool atomic;
	uint32_t psn;                /**< PSN of the request (first response) */
	uint32_t start_psn;          /**< where the responses (re)started: FIRST goes there */
	uint32_t last_psn;           /**< PSN of the last response */
	uint32_t msn;                /**< MSN the responses carry */
	uint32_t rkey;
	uint64_t orig_va;            /**< where the READ starts */
	uint32_t total;              /**< bytes the READ asked for */
	uint64_t va;                 /**< next byte to send */
	uint32_t resid;              /**< bytes still to send */
	uint32_t cur_psn;            /**< PSN of the next response packet */
	uint64_t atomic_orig;        /**< atomic result, replayed for duplicates */
	uint32_t pd_handle;          /**< PD the memory is checked against */
};

/** Most READs/atomics a responder keeps (max_dest_rd_atomic). */
#define DROCE_MAX_RD_ATOMIC 128

/** The real queue pair. */
struct droce_qp {
	uint32_t qpn;
	enum ibv_qp_type type;
	/** enum ibv_qp_state; written under @ref mutex with release order. */
	uint32_t state;
	pthread_mutex_t mutex;       /**< serialises modify/query/destroy */
	uint32_t handles;            /**< external references (creator + opens) */
	/** The handles, for events that reach every one; under hlock, which
	 *  the engine may take (it never waits for the QP mutex). */
	LIST_HEAD(, droce_qp_handle) handle_list;
	rte_spinlock_t hlock;
	struct droce_xrcd *xrcd;     /**< XRC_RECV */
	struct droce_engine *engine;
	void *dev;                   /**< the device (struct droce_dev) */
	struct ibv_pd *pd;            /**< the PD it holds a reference on (none for XRC_RECV) */
	uint32_t pd_handle;          /**< XRC_RECV: set per packet from the SRQ */
	struct droce_cq *scq, *rcq;
	struct droce_srq *srq;       /**< receives come from here when set */
	/** The receive WQE being filled, copied out of the RQ or SRQ when a
	 *  message starts, so the ring slot is free for new posts at once. */
	struct droce_recv_wqe *rwqe;
	bool sq_sig_all;
	/** The send opcodes its type takes, a bit per enum ibv_wr_opcode. */
	uint32_t send_opcodes;
	/** Of those, the SENDs, WRITEs and READs of an RC or UC QP, whose
	 *  post needs nothing but the common fields (none for other types). */
	uint32_t send_plain;
	/** droce's own QP1: applications can neither modify nor destroy it. */
	bool stack_owned;

	/* attributes (ibv_query_qp returns them) */
	struct ibv_qp_attr attr;
	uint32_t mtu;                /**< path MTU in bytes */
	struct droce_av av;

	struct droce_wq sq, rq;

	/* requester (engine) */
	struct {
		uint32_t next;       /**< index of the next WQE to start or continue */
		uint32_t psn;        /**< next PSN to send */
		uint32_t rd_out;     /**< READs/atomics outstanding */
		uint32_t retries;    /**< left before RETRY_EXC */
		uint32_t rnr_retries;
		uint64_t timeout_tsc;   /**< ACK deadline; 0: none armed */
		uint64_t timeout_cycles; /**< the ACK timeout in TSC cycles, for... */
		uint8_t timeout_for;    /**< ...this attr.timeout (0: not computed) */
		uint64_t rnr_tsc;       /**< RNR wait ends; 0: not waiting */
		bool need_retry;     /**< go back to the oldest unacked WQE */
		/** A go-back for a sequence NAK or an implied NAK is under way:
		 *  until something new is acknowledged or the ACK timer runs
		 *  out, that NAK again and responses past the same gap start
		 *  no other (and cost no retry). */
		bool retrying;
		bool sqd_notified;   /**< SQ_DRAINED raised for this visit to SQD */
		bool stopped;        /**< a WQE failed locally: send nothing more */
	} req;

	/* completer (engine) */
	struct {
		uint32_t psn;        /**< oldest PSN not yet acknowledged */
		/** One past the newest PSN an ACK, NAK or response acknowledged:
		 *  only a response that moves it (or brings READ data not yet
		 *  received) is progress. Unlike psn it never goes back when a
		 *  READ or atomic before it has to be asked again. */
		uint32_t acked;
		bool in_read;        /**< READ response FIRST/MIDDLE taken, LAST due */
	} comp;
	/** The send ring's quiet bits (droce_sq_quiet.h), one per slot. */
	uint64_t *sq_quiet;

	/* congestion control (engine, droce_cc.c) */
	struct {
		bool limited;        /**< a CNP came: DCQCN paces the QP from now on */
		uint64_t cnp_next;   /**< TSC before which no CNP goes to the peer */
		struct droce_dcqcn dcqcn;
	} cc;

	/* engine bookkeeping */
	TAILQ_ENTRY(droce_qp) active_link;
	bool active;                 /**< on the engine's active list */
	uint32_t kicked;             /**< a kick is queued */
	/** 1 while the QP is off the engine's active list: a poster must
	 *  kick it (droce_engine_doorbell()). Written by the engine. */
	uint32_t idle;
	/** 1 while the QP lingers on the active list with everything sent
	 *  and completed (droce_engine_drained()). Written by the engine. */
	uint32_t drained;
	uint32_t linger_prod;        /**< sq.prod at the engine's last sweep */
	uint32_t engine_refs;        /**< kicks queued + active-list membership */
	/** Frames in TX queues that point into its send WQEs' buffers (the
	 *  sum of their zc_refs): the QP is freed once none is left. */
	uint32_t zc_refs;
	bool destroying;
	/** On its device's list of destroyed QPs whose memory waits for such
	 *  frames to leave (ibv_destroy_qp() does not wait for them forever). */
	LIST_ENTRY(droce_qp) kept_link;

	/** QP counters. */
	struct {
		uint64_t tx_pkts, rx_pkts, retransmits, timeouts, seq_naks_sent,
			 seq_naks_rcvd, rnr_naks_sent, rnr_naks_rcvd, duplicates,
			 dropped, cnps_sent, cnps_rcvd;
	} stats;
	/** Work each engine of the device did for the QP (frames of it
	 *  received, passes over its queues), by engine index: only its
	 *  owner's entry grows, which tests of ownership check. */
	uint64_t engine_work[DROCE_QP_ENGINES_MAX];

	/* Last: the responder's READ and atomic ring is some 11 KiB, and
	 * everything above it that the engine touches per packet stays on a
	 * few cache lines. */
	/* responder (engine) */
	struct {
		uint32_t epsn;       /**< next expected PSN */
		uint32_t msn;
		bool nak_sent;       /**< a sequence NAK is outstanding */
		bool ack_pending;    /**< an ACK for epsn - 1 is owed */
		uint32_t acked_psn;  /**< epsn when the last ACK went out */
		uint32_t ack_wait_psn; /**< epsn when an owed ACK last waited */
		uint8_t pending_syndrome; /**< NAK/RNR to send instead of an ACK */
		uint32_t pending_psn;
		bool has_wqe;        /**< rwqe holds the receive being filled */
		bool comm_est;       /**< COMM_EST raised (first packet in RTR) */
		bool last_wqe;       /**< LAST_WQE_REACHED raised (SRQ QP in error) */
		/* the message being received */
		bool in_send;
		uint32_t send_offset;
		bool in_write;
		uint64_t write_va;
		uint32_t write_rkey;
		uint32_t write_resid;
		/* READ and atomic resources, a ring in PSN order */
		struct droce_read_res res[DROCE_MAX_RD_ATOMIC];
		uint32_t res_next;           /**< next slot to fill, below the depth */
		uint32_t res_count;          /**< valid slots before res_next */
		/** How many of the newest slots may have responses to send:
		 *  the responder scans no further back. */
		uint32_t res_scan;
	} resp;
};

/** What an application holds: ibv_create_qp's result, or ibv_open_qp's. */
struct droce_qp_handle {
	struct ibv_qp_ex ibv;        /**< first: an ibv_qp is its prefix */
	struct droce_qp *qp;
	LIST_ENTRY(droce_qp_handle) link;
	/** The ibv_wr_*() builder (created with send_ops_flags), or NULL. */
	struct droce_qpx *x;
	uint32_t events_reported;    /**< async events ibv_get_async_event() handed out */
	/** Told first when the application destroys the handle (rdma_cm's
	 *  ID forgets its QP: droce_qp_on_destroy()), or NULL. */
	void (*on_destroy)(void *arg);
	void *on_destroy_arg;
};

/** Raise @p type on every handle of @p qp (shared QPs: each context sees it). */
void droce_qp_event(struct droce_qp *qp, enum ibv_event_type type);

static inline struct droce_qp *
droce_qp_of(struct ibv_qp *qp)
{
	return ((struct droce_qp_handle *)qp)->qp;
}

/**
 * Raise an asynchronous event on a verbs object (@p element is the ibv_qp,
 * ibv_srq or ibv_cq, or NULL for port events of @p ctx). Set by the verbs
 * layer; the transport calls it from the engine.
 */
extern void (*droce_event_hook)(struct ibv_context *ctx, enum ibv_event_type type,
				void *element);

static inline enum ibv_qp_state
droce_qp_state(const struct droce_qp *qp)
{
	return (enum ibv_qp_state)__atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

static inline bool
droce_wr_is_atomic(uint32_t op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/** READs and atomics: the operations max_rd_atomic limits. */
static inline bool
droce_wr_is_rd_atomic(uint32_t op)
{
	return op == IBV_WR_RDMA_READ || droce_wr_is_atomic(op);
}

/**
 * Engine side: the receive WQE a new message lands in. Copies the next
 * WQE of the QP's SRQ or RQ into qp->rwqe and frees its ring slot, and
 * raises IBV_EVENT_SRQ_LIMIT_REACHED when an armed SRQ drops below its
 * limit. @return qp->rwqe, or NULL when no receive is posted.
 */
struct droce_recv_wqe *droce_recv_claim(struct droce_qp *qp);

/** The BTH service (opcode bits 7:5) of a QP's packets, both ways. */
static inline uint8_t
droce_qp_service(const struct droce_qp *qp)
{
	switch (qp->type) {
	case IBV_QPT_UC:
		return DROCE_SVC_UC;
	case IBV_QPT_UD:
		return DROCE_SVC_UD;
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		return DROCE_SVC_XRC;
	default:
		return DROCE_SVC_RC;
	}
}

/**
 * Whole path-MTU packets in @p n bytes: a shift, as the MTU is a power of
 * two (no division per packet).
 */
static inline uint32_t
droce_qp_mtu_pkts(const struct droce_qp *qp, uint32_t n)
{
	return n >> rte_bsf32(qp->mtu);
}

/** IB MTU enum to bytes. */
static inline uint32_t
droce_mtu_bytes(enum ibv_mtu m)
{
	return (m >= IBV_MTU_256 && m <= IBV_MTU_4096) ? 128u << m : 0;
}

#ifdef __cplusplus
}
#endif
#endif /* DROCE_QP_H */
