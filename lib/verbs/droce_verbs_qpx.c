/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended QP work-request interface (ibv_wr_start ... ibv_wr_complete).
 *
 * Each ibv_wr_<op>() starts a work request in an ibv_send_wr kept in the
 * handle; setters fill it; the next ibv_wr_<op>() or ibv_wr_complete()
 * writes it into the send ring through the same checks as ibv_post_send().
 * Nothing is visible to the engine before ibv_wr_complete(), which
 * publishes the whole batch at once; an error anywhere drops the batch
 * and is returned by ibv_wr_complete(), and ibv_wr_abort() drops it too.
 * Inline data is copied when it is set, so its buffer may be reused at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "droce_verbs_priv.h"

struct droce_qpx {
	struct ibv_send_wr wr;       /**< the request being built */
	struct ibv_sge sge[DROCE_MAX_SGE];
	bool open;                   /**< wr holds an unwritten request */
	int err;                     /**< first error of this batch */
	uint32_t start;              /**< sq.prod at ibv_wr_start() */
	uint32_t next;               /**< where the next request goes */
	uint8_t inline_buf[DROCE_MAX_INLINE];
};

static struct droce_qp_handle *
handle_of(struct ibv_qp_ex *qpx)
{
	return (struct droce_qp_handle *)qpx;
}

/* Write the open request into the ring (not yet published). */
static void
qpx_flush(struct droce_qp_handle *h)
{
	struct droce_qpx *x = h->x;
	struct droce_qp *qp = h->qp;
	int rc;

	if (!x->open)
		return;
	x->open = false;
	if (x->err != 0)
		return;
	if (!droce_wq_room_at(&qp->sq, x->next)) {
		x->err = ENOMEM;
		return;
	}
	rc = droce_send_wqe_fill(qp, droce_wq_at(&qp->sq, x->next), &x->wr);
	if (rc != 0)
		x->err = rc;
	else
		x->next++;
}

static void
qpx_begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct droce_qp_handle *h = handle_of(qpx);
	struct droce_qpx *x = h->x;

	qpx_flush(h);
	memset(&x->wr, 0, sizeof(x->wr));
	x->wr.wr_id = qpx->wr_id;
	x->wr.send_flags = qpx->wr_flags;
	x->wr.opcode = op;
	x->wr.sg_list = x->sge;
	x->open = true;
}

static void
x_send(struct ibv_qp_ex *q)
{
	qpx_begin(q, IBV_WR_SEND);
}

static void
x_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	qpx_begin(q, IBV_WR_SEND_WITH_IMM);
	handle_of(q)->x->wr.imm_data = imm;
}

static void
x_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	qpx_begin(q, IBV_WR_SEND_WITH_INV);
	handle_of(q)->x->wr.invalidate_rkey = rkey;
}

static void
x_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey,
	  const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr;

	qpx_begin(q, IBV_WR_BIND_MW);
	wr = &handle_of(q)->x->wr;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *info;
}

static void
x_local_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	qpx_begin(q, IBV_WR_LOCAL_INV);
	handle_of(q)->x->wr.invalidate_rkey = rkey;
}

static void
x_rdma(struct ibv_qp_ex *q, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr)
{
	qpx_begin(q, op);
	handle_of(q)->x->wr.wr.rdma.rkey = rkey;
	handle_of(q)->x->wr.wr.rdma.remote_addr = addr;
}

static void
x_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	x_rdma(q, IBV_WR_RDMA_WRITE, rkey, addr);
}

static void
x_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, __be32 imm)
{
	x_rdma(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
	handle_of(q)->x->wr.imm_data = imm;
}

static void
x_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	x_rdma(q, IBV_WR_RDMA_READ, rkey, addr);
}

static void
x_atomic(struct ibv_qp_ex *q, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
	 uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = &handle_of(q)->x->wr;

	qpx_begin(q, op);
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void
x_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	x_atomic(q, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void
x_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, uint64_t add)
{
	x_atomic(q, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void
x_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *sge)
{
	struct droce_qpx *x = handle_of(q)->x;

	if (!x->open || n > DROCE_MAX_SGE) {
		x->err = x->err ? x->err : EINVAL;
		return;
	}
	if (n > 0) /* none may come as NULL */
		memcpy(x->sge, sge, n * sizeof(*sge));
	x->wr.num_sge = (int)n;
}

static void
x_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	x_set_sge_list(q, 1, &sge);
}

static void
x_set_inline_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *buf)
{
	struct droce_qpx *x = handle_of(q)->x;
	size_t len = 0, i;

	for (i = 0; i < n; i++)
		len += buf[i].length;
	if (!x->open || len > sizeof(x->inline_buf)) {
		x->err = x->err ? x->err : EINVAL;
		return;
	}
	len = 0;
	for (i = 0; i < n; i++) {
		memcpy(x->inline_buf + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	x->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)x->inline_buf, .length = (uint32_t)len };
	x->wr.num_sge = 1;
	x->wr.send_flags |= IBV_SEND_INLINE;
}

static void
x_set_inline(struct ibv_qp_ex *q, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	x_set_inline_list(q, 1, &b);
}

static void
x_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = &handle_of(q)->x->wr;

	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

static void
x_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	handle_of(q)->x->wr.qp_type.xrc.remote_srqn = srqn;
}

static void
x_start(struct ibv_qp_ex *q)
{
	struct droce_qp_handle *h = handle_of(q);

	droce_wq_lock(&h->qp->sq);
	h->x->open = false;
	h->x->err = 0;
	h->x->start = h->x->next = h->qp->sq.prod;
}

static int
x_complete(struct ibv_qp_ex *q)
{
	struct droce_qp_handle *h = handle_of(q);
	struct droce_qp *qp = h->qp;
	enum ibv_qp_state st = droce_qp_state(qp);
	bool due = false;
	int err;

	qpx_flush(h);
	err = h->x->err;
	if (err == 0 && (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR))
		err = EINVAL;
	if (err == 0) {
		__atomic_store_n(&qp->sq.prod, h->x->next, __ATOMIC_RELEASE);
		due = droce_wq_batch_due(&qp->sq, h->x->next);
	}
	droce_wq_unlock(&qp->sq);
	if (err == 0)
		droce_post_ring(qp, due);
	return err;
}

static void
x_abort(struct ibv_qp_ex *q)
{
	struct droce_qp_handle *h = handle_of(q);

	h->x->open = false;
	droce_wq_unlock(&h->qp->sq);
}

/*
 * The send operations a QP type may ask for, as rxe's provider allows them:
 * UD sends only, UC no READ, atomics or SEND with invalidate (the wire has
 * no such UC opcodes), RC and XRC everything droce has (TSO and atomic
 * write it has not). Binds and local invalidations send nothing: every
 * connected type has them.
 */
static uint64_t
qpx_ops_of(enum ibv_qp_type type)
{
	const uint64_t sends = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	const uint64_t uc = sends | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			    IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	const uint64_t rc = uc | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_READ |
			    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return rc;
	case IBV_QPT_UC:
		return uc;
	case IBV_QPT_UD:
		return sends;
	default:
		return 0;
	}
}

int
droce_qpx_init(struct droce_qp_handle *h, uint64_t flags)
{
	struct ibv_qp_ex *q = &h->ibv;

	if (flags & ~qpx_ops_of(h->qp->type))
		return EOPNOTSUPP;
	h->x = calloc(1, sizeof(*h->x));
	if (h->x == NULL)
		return ENOMEM;
	q->comp_mask = 0;
	q->wr_start = x_start;
	q->wr_complete = x_complete;
	q->wr_abort = x_abort;
	q->wr_send = x_send;
	q->wr_send_imm = x_send_imm;
	q->wr_send_inv = x_send_inv;
	q->wr_bind_mw = x_bind_mw;
	q->wr_local_inv = x_local_inv;
	q->wr_rdma_write = x_rdma_write;
	q->wr_rdma_write_imm = x_rdma_write_imm;
	q->wr_rdma_read = x_rdma_read;
	q->wr_atomic_cmp_swp = x_cmp_swp;
	q->wr_atomic_fetch_add = x_fetch_add;
	q->wr_set_sge = x_set_sge;
	q->wr_set_sge_list = x_set_sge_list;
	q->wr_set_inline_data = x_set_inline;
	q->wr_set_inline_data_list = x_set_inline_list;
	q->wr_set_ud_addr = x_set_ud_addr;
	q->wr_set_xrc_srqn = x_set_xrc_srqn;
	return 0;
}

void
droce_qpx_fini(struct droce_qp_handle *h)
{
	free(h->x);
	h->x = NULL;
}

struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct droce_qp_handle *h = (struct droce_qp_handle *)qp;

	return h->x != NULL ? &h->ibv : NULL;
}
