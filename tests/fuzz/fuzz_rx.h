/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fuzz_rx target: hostile frames into a live droce port (see
 * docs/reliability.md, "Fuzzing").
 *
 *   fuzz_env.c    a droce device on a ring ethdev the harness holds both
 *                 ends of (droce_peer), and the objects that outlive one
 *                 input (PDs, MRs, buffers, the address handle)
 *   fuzz_qps.c    per input: the CQ, SRQs and one QP of each kind,
 *                 connected to peer QPNs the harness makes up; receives
 *                 kept posted; QPs in ERR reconnected
 *   fuzz_track.c  every wr_id posted, every completion checked against
 *                 them (abort() on one completed twice or never posted)
 *   fuzz_rx.c     the input format, frame building and delivery, the
 *                 libFuzzer entry points
 */
#ifndef FUZZ_RX_H
#define FUZZ_RX_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_peer.h"
#include "droce_wire.h"

/* The QPs of one input, by the index the first byte of a frame names. */
enum fz_qp_kind {
	FZ_RC,          /* RC with its own receive queue */
	FZ_UC,
	FZ_UD,
	FZ_XRC_INI,     /* IBV_QPT_XRC_SEND: no receive side at all */
	FZ_XRC_TGT,     /* IBV_QPT_XRC_RECV, receives from the XRC SRQ */
	FZ_RC_SRQ,      /* RC on the basic SRQ */
	FZ_UD_SRQ,      /* UD on the basic SRQ */
	FZ_NQP
};

/* Remote-access targets a frame's RETH/AtomicETH may name. */
enum fz_mr_kind {
	FZ_MR_REMOTE,   /* PD A, every remote access: the usual target */
	FZ_MR_LOCAL,    /* PD A, local write only: remote access is refused */
	FZ_MR_OTHER_PD, /* PD B, every remote access: the wrong PD */
	FZ_NMR
};

/* Buffers of posted work requests: one per tracking slot, each its own
 * heap block, so ASan sees a copy that runs past its SGEs. */
#define FZ_SLOTS 96
#define FZ_SLOT_BUF 4096

#define FZ_QKEY 0x11111111u
#define FZ_PSN 0xfffff0u      /* initial PSNs, just below the 24-bit wrap */
#define FZ_PEER_QPN 0x000100u /* peer QPN of QP i: FZ_PEER_QPN + i */

/* What outlives one input. */
struct fz_env {
	struct droce_peer peer;       /* the device, its context, the rings, the peer's address */
	/* Frames are built in a pool of their own (the port's layout), which
	 * droce frees into but never allocates from: the bytes of a frame's
	 * buffers outside its data can be poisoned for ASan. */
	struct rte_mempool *frames;
	struct ibv_pd *pd, *pd_other;
	struct ibv_ah *ah;            /* UD: to the peer */
	struct ibv_xrcd *xrcd;
	struct ibv_mr *mr[FZ_NMR];
	uint8_t *mr_buf[FZ_NMR];
	uint32_t mr_len[FZ_NMR];
	uint8_t *slot_buf[FZ_SLOTS];
	struct ibv_mr *slot_mr[FZ_SLOTS];
};

extern struct fz_env fz;

/* One input's queues. */
struct fz_qps {
	struct ibv_cq *cq;
	struct ibv_srq *srq, *xsrq;
	uint32_t xsrqn;
	struct ibv_qp *qp[FZ_NQP];
	/* Kept until every QP is gone: completions flushed by a destroy
	 * are checked against them. */
	uint32_t qpn[FZ_NQP];
	const struct ibv_srq *rsrq[FZ_NQP]; /* where QP i takes receives from */
	unsigned reconnects;          /* this input's, bounded */
};

extern struct fz_qps fzq;

/* fuzz_env.c */
/** Start the EAL and the device, make the long-lived objects. abort() on failure. */
void fz_env_init(void);
/** Zero the remote-access regions: atomics find the same values in every input. */
void fz_env_clear(void);
/** Engine iterations until it is idle (bounded); what it sends is freed. */
void fz_env_run(void);

/* fuzz_qps.c */
/** The input's CQ, SRQs and QPs, connected, with receives posted. */
void fz_qps_create(void);
/** Post the send work requests @p mask (FZ_POST_*) asks for. */
void fz_qps_post_sends(uint8_t mask);
/** Poll, repost receives, and reconnect QPs the last frames broke. */
void fz_qps_service(void);
/** Destroy what fz_qps_create() made, checking every completion. */
void fz_qps_destroy(void);
/** @return the PSN a frame for QP @p i is measured from: the responder's
 *  expected PSN for a request, the oldest unacknowledged one otherwise. */
uint32_t fz_qps_psn(unsigned i, bool request);

/* Send work requests fz_qps_post_sends() can post (the setup byte). */
#define FZ_POST_SEND    0x01 /* RC, RC_SRQ: a 2-packet SEND */
#define FZ_POST_WRITE   0x02 /* RC, RC_SRQ: RDMA WRITE with immediate */
#define FZ_POST_READ    0x04 /* RC, RC_SRQ: a 3-packet RDMA READ */
#define FZ_POST_FADD    0x08 /* RC, RC_SRQ: FETCH_AND_ADD */
#define FZ_POST_CSWAP   0x10 /* RC, RC_SRQ: COMPARE_AND_SWAP */
#define FZ_POST_XRC     0x20 /* XRC_INI: SEND and READ */
#define FZ_POST_UNREL   0x40 /* UC: SEND, WRITE; UD, UD_SRQ: SEND */
#define FZ_POST_TWICE   0x80 /* everything above twice */

/* fuzz_track.c */
enum fz_wr_kind { FZ_WR_SEND, FZ_WR_RECV };
/**
 * Take a slot for a work request to be posted on QP @p qp_num (@p srq:
 * to that shared receive queue instead).
 * @return the wr_id to post (its slot's buffer is fz.slot_buf[wr_id & 0xff]),
 *         or 0 when every slot is in use.
 */
uint64_t fz_track_take(enum fz_wr_kind kind, uint32_t qp_num, const struct ibv_srq *srq,
		       uint32_t len);
/** The post failed: give the slot back. */
void fz_track_untake(uint64_t wr_id);
/** Check one completion and retire its work request; abort() on a bad one. */
void fz_track_complete(const struct ibv_wc *wc);
/** Outstanding receives on QP @p qp_num's own RQ, or on @p srq. */
unsigned fz_track_count_recv(uint32_t qp_num, const struct ibv_srq *srq);
/** Forget what is still outstanding on QP @p qp_num's own queues (it goes
 *  to RESET), or everything (@p qp_num 0). */
void fz_track_forget(uint32_t qp_num);

#endif
