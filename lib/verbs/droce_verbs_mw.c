/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows: ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw (type 1), and
 * the send work requests that bind (type 2) and invalidate. As in rxe,
 * ibv_bind_mw() is a bind work request on the QP's send queue, with the
 * window's next key (ibv_inc_rkey()) handed back at once; the engine binds
 * when it reaches the request, and a bind that fails completes with
 * IBV_WC_MW_BIND_ERR (droce_mw.h has the checks).
 */
#include <errno.h>
#include <stdlib.h>

#include "droce_verbs_priv.h"

struct ibv_mw *
droce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct droce_dev *d = droce_dev_of_ctx(ibpd->context);
	struct droce_mw *mw;
	int rc;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mw->ibv.context = ibpd->context;
	mw->ibv.pd = ibpd;
	mw->ibv.type = type;
	mw->pd_handle = ibpd->handle;
	rc = droce_mw_publish(d->mrt->mwt, mw);
	if (rc != 0) {
		free(mw);
		errno = -rc;
		return NULL;
	}
	__atomic_add_fetch(&droce_pd_of(ibpd)->users, 1, __ATOMIC_RELAXED);
	return &mw->ibv;
}

/* A window is deallocated whether bound or not: its region is let go. */
int
droce_dealloc_mw(struct ibv_mw *ibmw)
{
	struct droce_dev *d = droce_dev_of_ctx(ibmw->context);
	struct droce_mw *mw = (struct droce_mw *)ibmw;

	droce_mw_unpublish(d->mrt->mwt, mw);
	/* An engine may still be binding it or checking an access through it. */
	droce_dev_sync(d);
	droce_mw_release(mw);
	__atomic_sub_fetch(&droce_pd_of(ibmw->pd)->users, 1, __ATOMIC_RELEASE);
	free(mw);
	return 0;
}

/* Type 1: verbs.h checked the type, the MR's PD and an empty bind's range. */
int
droce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int rc;

	if (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	if (mw_bind->bind_info.mr != NULL && mw_bind->bind_info.mr->pd != qp->pd)
		return EPERM;
	rc = droce_post_send(qp, &wr, &bad);
	if (rc != 0)
		return rc;
	/* The key the window will answer to; an error completion means the
	 * application takes it back, as with rxe. */
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

int
droce_local_wqe_fill(struct droce_send_wqe *w, const struct ibv_send_wr *wr)
{
	if (wr->opcode == IBV_WR_BIND_MW) {
		const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;
		struct droce_mw_bind b = {
			.new_key = wr->bind_mw.rkey,
			.mr_lkey = bi->mr != NULL ? bi->mr->lkey : 0,
			.access = bi->mw_access_flags,
			.addr = bi->addr,
			.length = bi->length,
		};

		if (wr->bind_mw.mw == NULL)
			return EINVAL;
		b.mw_key = wr->bind_mw.mw->rkey;
		droce_wqe_bind_set(w, &b);
	} else {
		w->invalidate_rkey = wr->invalidate_rkey;
	}
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags & ~IBV_SEND_INLINE;
	w->length = 0;
	w->num_sge = 0;
	w->is_inline = false;
	w->state = DROCE_WQE_POSTED;
	return 0;
}
