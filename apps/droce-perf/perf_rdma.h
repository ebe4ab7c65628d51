/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the RDMA tests: the verbs objects of a run (perf_rdma.c sets them
 * up and connects them; perf_rdma_tests.c runs the measurements on them).
 */
#ifndef DROCE_PERF_RDMA_H
#define DROCE_PERF_RDMA_H

#include <infiniband/verbs.h>

#include "perf.h"

/* One QP and its two buffer slots. */
struct rdma_qp {
	struct ibv_qp *qp;
	uint8_t *local;              /* WRITE/SEND source, READ/atomic destination */
	uint8_t *target;             /* what the peer writes, reads or sends into */
	uint32_t psn;
	/* the peer's QP */
	uint32_t rqpn, rpsn, rrkey;
	uint64_t rvaddr;             /* the peer's target slot */
	union ibv_gid rgid;
	/* counters of one measurement */
	uint64_t scnt, ccnt, rcnt;
	uint64_t next_signaled;      /* the number (scnt + 1) of the next WR signaled for -Q */
	unsigned rposted;            /* receives posted and not completed */
};

struct rdma {
	const struct perf_opts *o;
	unsigned dev;                /* droce device index (droce_dev_poll) */
	bool attached;
	struct perf_oob oob;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	/* One thread posts and polls each queue: they live on a parent domain
	 * with a thread domain and take no lock (unless --no-td). */
	struct ibv_td *td;
	struct ibv_pd *qpd;          /* the parent domain of the QPs and CQs, or pd */
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t slot;                 /* bytes per slot: the largest message */
	struct rdma_qp *qps;
	unsigned nqps;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	unsigned mtu_bytes;
	int outs;                    /* outstanding READs/atomics agreed with the peer */
	int inline_size;
	uint64_t *tposted, *tcompleted;
	struct ibv_send_wr *wrs;     /* one post list */
	struct ibv_sge *sges;
	/* What wrs holds (wr_prepare()): for this QP and size, with these
	 * send flags besides IBV_SEND_SIGNALED. */
	const struct rdma_qp *wrs_qp;
	uint64_t wrs_size;
	unsigned int wrs_flags;
	struct perf_clock clk;
};

/* Runs the engine once: the idle callback of every wait. */
void rdma_idle(void *arg);

/* Post the receives that keep @p q at the receive depth. @return 0 or -1. */
int rdma_post_recvs(struct rdma *r, struct rdma_qp *q);

/* Measure one message size. @return 0 or -1. */
int rdma_bw(struct rdma *r, uint64_t size);
int rdma_lat(struct rdma *r, uint64_t size);

#endif /* DROCE_PERF_RDMA_H */
