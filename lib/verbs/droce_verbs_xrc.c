/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XRC: domains, XRC SRQs (addressed by number), and opening a shared XRC
 * target QP from another context (ibv_open_qp).
 *
 * An XRC domain opened with a file descriptor is identified by the file's
 * inode, so every process context that opens the same file gets the same
 * domain (the device keeps one list per device); with fd -1 it is private.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "droce_verbs_priv.h"

struct droce_xrcd_handle {
	struct ibv_xrcd ibv;
	struct droce_xrcd *x;
};

struct droce_xrcd *
droce_xrcd_of(struct ibv_xrcd *xrcd)
{
	return ((struct droce_xrcd_handle *)xrcd)->x;
}

static struct droce_xrcd *
xrcd_find(struct droce_dev *d, const struct stat *st)
{
	struct droce_xrcd *x;

	LIST_FOREACH(x, &d->xrcds, link)
		if (x->shared && x->st_dev == st->st_dev && x->st_ino == st->st_ino)
			return x;
	return NULL;
}

static struct ibv_xrcd *
droce_open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *attr)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	struct droce_xrcd_handle *h;
	struct droce_xrcd *x = NULL;
	struct stat st;
	int fd = -1, oflags = 0;

	if (attr->comp_mask & ~(uint32_t)(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_XRCD_INIT_ATTR_FD)
		fd = attr->fd;
	if (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)
		oflags = attr->oflags;
	if (fd >= 0 && fstat(fd, &st) != 0)
		return NULL; /* errno from fstat: EBADF */
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&d->lock);
	if (fd >= 0) {
		x = xrcd_find(d, &st);
		/* As the kernel: no domain without O_CREAT, none twice with O_EXCL. */
		if ((x == NULL && !(oflags & O_CREAT)) || (x != NULL && (oflags & O_EXCL))) {
			pthread_mutex_unlock(&d->lock);
			free(h);
			errno = EINVAL;
			return NULL;
		}
	}
	if (x == NULL) {
		x = calloc(1, sizeof(*x));
		if (x == NULL) {
			pthread_mutex_unlock(&d->lock);
			free(h);
			errno = ENOMEM;
			return NULL;
		}
		x->shared = fd >= 0;
		if (x->shared) {
			x->st_dev = st.st_dev;
			x->st_ino = st.st_ino;
		}
		LIST_INSERT_HEAD(&d->xrcds, x, link);
	}
	x->refs++;
	pthread_mutex_unlock(&d->lock);
	h->x = x;
	h->ibv.context = ctx;
	return &h->ibv;
}

static int
droce_close_xrcd(struct ibv_xrcd *ibx)
{
	struct droce_dev *d = droce_dev_of_ctx(ibx->context);
	struct droce_xrcd *x = droce_xrcd_of(ibx);

	pthread_mutex_lock(&d->lock);
	/* The last close of a domain still in use fails; others just let go. */
	if (x->refs == 1 && __atomic_load_n(&x->users, __ATOMIC_ACQUIRE) != 0) {
		pthread_mutex_unlock(&d->lock);
		return EBUSY;
	}
	if (--x->refs == 0) {
		LIST_REMOVE(x, link);
		free(x);
	}
	pthread_mutex_unlock(&d->lock);
	free(ibx);
	return 0;
}

static struct ibv_qp *
droce_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr)
{
	const uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	struct droce_qp_handle *h;
	struct droce_qp *qp;

	if ((attr->comp_mask & need) != need ||
	    (attr->comp_mask & ~(uint32_t)(need | IBV_QP_OPEN_ATTR_CONTEXT)) ||
	    attr->qp_type != IBV_QPT_XRC_RECV) {
		errno = EINVAL;
		return NULL;
	}
	/* The table lock keeps the QP from being torn down while we take a handle. */
	pthread_mutex_lock(&d->qpt.lock);
	qp = droce_num_table_lookup(&d->qpt, attr->qp_num);
	if (qp == NULL || qp->type != IBV_QPT_XRC_RECV || qp->xrcd != droce_xrcd_of(attr->xrcd)) {
		pthread_mutex_unlock(&d->qpt.lock);
		errno = qp == NULL ? ENOENT : EINVAL;
		return NULL;
	}
	/* A QP whose last handle is gone is being torn down: too late to join. */
	pthread_mutex_lock(&qp->mutex);
	if (qp->handles == 0) {
		pthread_mutex_unlock(&qp->mutex);
		pthread_mutex_unlock(&d->qpt.lock);
		errno = ENOENT;
		return NULL;
	}
	qp->handles++;
	pthread_mutex_unlock(&qp->mutex);
	pthread_mutex_unlock(&d->qpt.lock);
	h = droce_qp_handle_new(qp, ctx, (attr->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ?
				attr->qp_context : NULL, NULL, NULL, NULL, NULL);
	if (h == NULL) {
		pthread_mutex_lock(&qp->mutex);
		qp->handles--; /* the creator's handle keeps it alive: never the last */
		pthread_mutex_unlock(&qp->mutex);
		errno = ENOMEM;
		return NULL;
	}
	return &h->ibv.qp_base;
}

static int
droce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct droce_srq *srq = droce_srq_of(ibsrq);

	if (srq->type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->srqn;
	return 0;
}

static struct ibv_srq *
droce_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *ax)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	struct ibv_srq_init_attr ia = { .srq_context = ax->srq_context, .attr = ax->attr };
	enum ibv_srq_type type = (ax->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? ax->srq_type :
				 IBV_SRQT_BASIC;
	struct droce_srq *srq;
	struct ibv_srq *ib;

	if (ax->comp_mask & ~known) {
		errno = (ax->comp_mask & IBV_SRQ_INIT_ATTR_TM) ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	if (!(ax->comp_mask & IBV_SRQ_INIT_ATTR_PD) || ax->pd == NULL ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) ||
	    (type == IBV_SRQT_XRC && (!(ax->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
				      ax->xrcd == NULL || !(ax->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
				      ax->cq == NULL))) {
		errno = type == IBV_SRQT_TM ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	ib = ibv_create_srq(ax->pd, &ia);
	if (ib == NULL || type == IBV_SRQT_BASIC) {
		if (ib != NULL)
			ax->attr = ia.attr;
		return ib;
	}
	srq = droce_srq_of(ib);
	srq->type = IBV_SRQT_XRC;
	srq->xrcd = droce_xrcd_of(ax->xrcd);
	srq->cq = droce_cq_of(ax->cq);
	if (droce_num_table_add(&d->srqt, srq, &srq->srqn) != 0) {
		ibv_destroy_srq(ib);
		errno = ENOMEM;
		return NULL;
	}
	__atomic_add_fetch(&srq->xrcd->users, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&srq->cq->users, 1, __ATOMIC_RELAXED);
	ax->attr = ia.attr;
	return ib;
}

void
droce_xrc_ops_set(struct verbs_context *vctx)
{
	vctx->open_xrcd = droce_open_xrcd;
	vctx->close_xrcd = droce_close_xrcd;
	vctx->open_qp = droce_open_qp;
	vctx->get_srq_num = droce_get_srq_num;
	vctx->create_srq_ex = droce_create_srq_ex;
}
