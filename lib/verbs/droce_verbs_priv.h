/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the verbs layer: devices, contexts and the verbs objects that
 * are not queues. A device is one droce port with its engine, QPN table,
 * key table and RCU; a context is what ibv_open_device() returns, laid
 * out as rdma-core's struct verbs_context so the inline verbs of
 * <infiniband/verbs.h> dispatch into droce.
 */
#ifndef DROCE_VERBS_PRIV_H
#define DROCE_VERBS_PRIV_H

#include <pthread.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_log.h>
#include <rte_rcu_qsbr.h>

#include "droce_log.h"
#include "droce_port.h"
#include "droce_engine.h"
#include "droce_mr.h"
#include "droce_mw.h"
#include "droce_qp.h"
#include "droce_num_table.h"
#include "droce_tsan.h"

/** Most devices (ports) in one process. */
#define DROCE_MAX_DEVS 8
/** Most QPs per device. */
#define DROCE_MAX_QP 16384
#define DROCE_MAX_QP_WR 16384
#define DROCE_MAX_SGE 32u
#define DROCE_MAX_INLINE 512
#define DROCE_MAX_CQE 65536
#define DROCE_MAX_MSG DROCE_MAX_MSG_LEN


struct droce_context;

/** One device: a port, its engine and the tables its QPs and MRs live in. */
struct droce_dev {
	struct ibv_device ibdev;     /**< first: handed out as struct ibv_device * */
	unsigned index;
	struct droce_port *port;
	/** One per port queue: engine i owns the QPNs droce_qpn_engine()
	 *  gives i (see droce_dev_engine_pick()). */
	struct droce_engine *engines[DROCE_QP_ENGINES_MAX];
	unsigned nb_engines;
	uint32_t next_engine;        /**< round robin of droce_dev_engine_pick() */
	enum droce_qp_placement placement; /**< how droce_dev_engine_pick() chooses */
	/** Live QPs per engine, for DROCE_PLACE_LEAST_LOADED (droce_dev_engine_qps()). */
	uint32_t engine_qps[DROCE_QP_ENGINES_MAX];
	bool shared;                 /**< the port shares its ethdev with the application */
	struct droce_num_table qpt;
	struct droce_mr_table *mrt;
	struct rte_rcu_qsbr *rcu;
	uint64_t guid;               /**< network order, from the MAC (EUI-64) */
	struct droce_num_table srqt; /**< XRC SRQ numbers */
	uint32_t next_handle;        /**< PD handles */
	pthread_mutex_t lock;        /**< the context, XRC domain and kept QP lists */
	LIST_HEAD(, droce_context) contexts;
	LIST_HEAD(, droce_xrcd) xrcds;
	/** Destroyed QPs whose memory zero-copy frames still point into
	 *  (droce_qp.zc_refs): freed once those frames are (droce_dev_qps_reap()). */
	LIST_HEAD(, droce_qp) kept_qps;
};

/** An open device. */
struct droce_context {
	struct verbs_context vctx;   /**< ends with the struct ibv_context */
	struct droce_dev *dev;
	LIST_ENTRY(droce_context) link;
	/* async events: a queue behind an eventfd (ctx->async_fd) */
	pthread_mutex_t ev_lock;
	struct droce_async_ev *ev_head, **ev_tail;
};

static inline struct droce_context *
droce_ctx_of(struct ibv_context *ctx)
{
	return (struct droce_context *)((uint8_t *)ctx - offsetof(struct verbs_context, context));
}

static inline struct droce_dev *
droce_dev_of_ctx(struct ibv_context *ctx)
{
	return droce_ctx_of(ctx)->dev;
}

struct droce_td;

/** A protection domain, or a parent domain (ibv_alloc_parent_domain()). */
struct droce_pd {
	struct ibv_pd ibv;
	uint32_t users;              /**< MRs, QPs, AHs, parent domains (EBUSY on dealloc) */
	/** A parent domain: the PD it extends. It has that PD's handle, so
	 *  what is created on either is in the same protection domain.
	 *  NULL for a plain PD. */
	struct droce_pd *inner;
	/** A parent domain's thread domain, or NULL. */
	struct droce_td *td;
};

static inline struct droce_pd *
droce_pd_of(struct ibv_pd *pd)
{
	return (struct droce_pd *)pd;
}

/* droce_verbs_pd.c: the context's thread and parent domain verbs. */
void droce_pd_ops_set(struct verbs_context *vctx);

/**
 * Whether the queues created on @p pd (NULL: none) have one posting or
 * polling thread at a time, so take no lock: @p pd is a parent domain
 * with a thread domain.
 */
bool droce_pd_single_thread(struct ibv_pd *pd);

/** A completion channel: an eventfd and the CQs that fired. */
struct droce_comp_channel {
	struct ibv_comp_channel ibv;  /**< ibv.fd: the pipe's read end */
	int wfd;                     /**< the pipe's write end, non-blocking */
	pthread_mutex_t lock;
	uint32_t nfired;
	struct droce_cq *fired[64];  /**< CQs with an event not yet taken */
	uint32_t users;              /**< CQs bound to it */
};

/* droce_verbs_post.c: check @p wr and write it into @p w. @return 0 or
 * the errno rdma-core's providers use. */
int droce_send_wqe_fill(const struct droce_qp *qp, struct droce_send_wqe *w,
			const struct ibv_send_wr *wr);

/* droce_verbs_mw.c: the context's window verbs, and the send WQE of a
 * bind or local invalidation (@return 0 or EINVAL). */
struct ibv_mw *droce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int droce_dealloc_mw(struct ibv_mw *mw);
int droce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
/* droce_verbs_post.c: the send opcodes a QP of type @p t takes, a bit
 * per enum ibv_wr_opcode (droce_qp::send_opcodes). */
uint32_t droce_send_opcodes(enum ibv_qp_type t);
/* droce_verbs_post.c: of those, the ones droce_send_wqe_fill() takes on
 * its short path (droce_qp::send_plain). */
uint32_t droce_send_plain_opcodes(enum ibv_qp_type t);
int droce_local_wqe_fill(struct droce_send_wqe *w, const struct ibv_send_wr *wr);

/* droce_verbs_clock.c: the clock of completion timestamps (the TSC), its
 * rate in kHz, a reading of it on CLOCK_REALTIME, ibv_query_rt_values_ex. */
uint64_t droce_clock_khz(void);
uint64_t droce_clock_wall_ns(uint64_t tsc);
int droce_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values);

/* droce_verbs_qpx.c: the ibv_qp_ex builder of a handle created with
 * send_ops_flags. @return 0, or EOPNOTSUPP for operations droce lacks. */
int droce_qpx_init(struct droce_qp_handle *h, uint64_t send_ops_flags);
void droce_qpx_fini(struct droce_qp_handle *h);

/* droce_verbs_wq.c */
int droce_wq_init(struct droce_wq *q, uint32_t max_wr, uint32_t stride);
int droce_wq_post_recv(struct droce_wq *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/* droce_verbs_event.c: drop the events nobody took (context closing). */
void droce_context_events_free(struct droce_context *c);

/**
 * Before a QP handle, CQ or SRQ of context @p ctx is freed, as rdma-core
 * does: the async events about it that nobody has read are dropped, and
 * the call waits until every one that was read has been acknowledged
 * (ibv_ack_async_event()). @p about names the object: an event of its
 * kind with its element set (the event type is otherwise unused).
 */
void droce_events_retire(struct ibv_context *ctx, const struct ibv_async_event *about);

/* droce_verbs_xrc.c */
struct droce_xrcd *droce_xrcd_of(struct ibv_xrcd *xrcd);
void droce_xrc_ops_set(struct verbs_context *vctx);

/* droce_verbs_qp.c: a new handle on @p qp (creation, ibv_open_qp). */
struct droce_qp_handle *droce_qp_handle_new(struct droce_qp *qp, struct ibv_context *ctx,
					    void *qp_context, struct ibv_pd *pd,
					    struct ibv_cq *scq, struct ibv_cq *rcq,
					    struct ibv_srq *srq);

/* droce_dev.c */
struct droce_dev *droce_dev_get(unsigned index);
unsigned droce_dev_count(void);

/* droce_lib.c: start the EAL and devices from the configuration if the
 * application has not attached any itself. @return 0 or a negative errno. */
int droce_lib_init(void);

/* Object operations the context's ops table points at. */
int droce_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int droce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int droce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int droce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int droce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int droce_query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
			size_t len);
int droce_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			  struct ibv_device_attr_ex *attr, size_t len);
struct ibv_cq_ex *droce_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *droce_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
/* droce_verbs_qp.c: a QP under the fixed number @p qpn (lib/cm's QP1). */
struct ibv_qp *droce_create_special_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
				       uint32_t qpn);

/*
 * Wait one RCU grace period of @p d: no engine iteration still holds
 * anything the caller unpublished before. The grace period is waited for
 * inside DPDK, where ThreadSanitizer cannot see it: the annotation pairs
 * with the one an engine makes as it goes offline.
 */
static inline void
droce_dev_sync(struct droce_dev *d)
{
	rte_rcu_qsbr_synchronize(d->rcu, RTE_QSBR_THRID_INVALID);
	DROCE_TSAN_ACQUIRE(d->rcu);
}

/**
 * Wait until the count @p refs of frames in flight (zero-copy TX) drops
 * to 0, running @p d's engine when nobody else does, at most @p ms
 * milliseconds. @return false when some are left.
 */
bool droce_dev_wait_refs(struct droce_dev *d, const uint32_t *refs, unsigned ms);

/**
 * Free the destroyed QPs of @p d that no frame points into any more.
 * @return how many are still kept.
 */
unsigned droce_dev_qps_reap(struct droce_dev *d);

/* Run the engine a CQ or QP belongs to once, from an application thread,
 * unless its own runner is busy-polling it anyway. */
static inline void
droce_engine_nudge(struct droce_engine *e)
{
	if (e != NULL && droce_engine_wants_help(e))
		droce_engine_poll(e);
}

/* The same for a post that woke its QP: only the sending half, its frames
 * out now (a latency test's critical path); the receiving half waits for
 * the next poll, which the application runs to see its completions. */
static inline void
droce_engine_nudge_send(struct droce_engine *e)
{
	if (e != NULL && droce_engine_wants_help(e))
		droce_engine_send(e);
}

/* After WQEs were published on @p qp's send ring: ring the engine's
 * doorbell, and run the engine's send half here if that woke the QP or a
 * batch is @p due (droce_wq_batch_due()) and nobody else runs the engine.
 * Inline: it is part of every post. */
static inline void
droce_post_ring(struct droce_qp *qp, bool due)
{
	struct droce_engine *e = qp->engine;

	/* An active QP's new WQEs go out in the engine's next iteration, with
	 * whatever else is due: running one here per post would pay its fixed
	 * cost per WQE. Only a QP the doorbell woke gets one at once, or one
	 * that had sent and completed everything (a latency test's next
	 * message), or one with a batch of WQEs waiting, and only its sending
	 * half: the application polls for what comes back. An idle QP that
	 * the engine's own runner serves is kicked. */
	if (droce_engine_doorbell(qp)) {
		if (droce_engine_wants_help(e))
			droce_engine_send_woken(e, qp);
		else
			droce_engine_kick(e, qp);
	} else if (due || droce_engine_drained(qp)) {
		droce_engine_nudge_send(e);
	}
}

/* Nudge @p e and the device's engines after it: a CQ's QPs may belong to
 * any engine of the device, so ibv_poll_cq() starts from the first. */
static inline void
droce_engine_nudge_all(struct droce_engine *e)
{
	for (; e != NULL; e = e->next)
		droce_engine_nudge(e);
}

/*
 * The engine a new QP of type @p type (with SRQ @p srq, or NULL) or a new
 * SRQ (@p type IBV_QPT_DRIVER: basic, IBV_QPT_XRC_RECV: XRC) belongs to,
 * and so the residue class of its QPN. See droce_set_qp_engine() in
 * droce.h for the rules.
 */
struct droce_engine *droce_dev_engine_pick(struct droce_dev *d, enum ibv_qp_type type,
					   const struct droce_srq *srq);

/** A QP of engine @p e was created (@p delta 1) or destroyed (-1). */
void droce_dev_engine_qps(struct droce_dev *d, const struct droce_engine *e, int delta);

#endif /* DROCE_VERBS_PRIV_H */
