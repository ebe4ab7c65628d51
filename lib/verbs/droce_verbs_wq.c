/* SPDX-License-Identifier: BSD-3-Clause */
/* Work queue rings shared by QPs and SRQs: allocation and receive posting. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_verbs_priv.h"

/*
 * DROCE_SINGLE_THREADED set (and not 0): the application promises that
 * each queue has one poster at a time, as rdma-core's mlx5 provider lets
 * MLX5_SINGLE_THREADED promise it, and posts take no lock. (The promise
 * per queue is a thread domain: droce_pd_single_thread().)
 */
static bool
single_threaded(void)
{
	const char *v = getenv("DROCE_SINGLE_THREADED");

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

int
droce_wq_init(struct droce_wq *q, uint32_t max_wr, uint32_t stride)
{
	/* A power of two, so indices wrap with a mask. */
	uint32_t n = rte_align32pow2(RTE_MAX(max_wr, 1u));
	void *buf;

	/* On a cache line: a send WQE's fields are laid out by line. */
	if (posix_memalign(&buf, RTE_CACHE_LINE_SIZE, (size_t)n * stride) != 0)
		return -ENOMEM;
	memset(buf, 0, (size_t)n * stride);
	q->buf = buf;
	q->stride = stride;
	q->mask = n - 1;
	q->max_wr = max_wr;
	q->batch = droce_wq_post_batch(max_wr);
	q->prod = q->cons = q->cons_seen = 0;
	rte_spinlock_init(&q->lock);
	q->single_producer = single_threaded();
	return 0;
}

int
droce_wq_post_recv(struct droce_wq *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	uint32_t prod;
	int rc = 0;

	droce_wq_lock(q);
	for (prod = q->prod; wr != NULL; wr = wr->next, prod++) {
		struct droce_recv_wqe *r;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > q->max_sge) {
			rc = EINVAL;
			break;
		}
		if (!droce_wq_room_at(q, prod)) {
			rc = ENOMEM;
			break;
		}
		r = droce_wq_at(q, prod);
		r->wr_id = wr->wr_id;
		r->num_sge = (uint32_t)wr->num_sge;
		/* A receive of no SGE may come with no list (NULL). */
		if (wr->num_sge > 0)
			memcpy(r->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(struct ibv_sge));
	}
	/* The list, or its part before the bad WR, is published in one step. */
	__atomic_store_n(&q->prod, prod, __ATOMIC_RELEASE);
	droce_wq_unlock(q);
	if (rc != 0)
		*bad = wr;
	return rc;
}
