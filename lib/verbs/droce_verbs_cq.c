/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues, the extended CQ interface, and completion channels.
 *
 * A completion channel is a pipe: the engine writes one byte per CQ event
 * (non-blocking: an engine never waits) and ibv_get_cq_event() reads one,
 * so the channel's fd works with poll/epoll, blocking or not, as in
 * rdma-core.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_verbs_priv.h"

static void
channel_fire(struct droce_cq *cq)
{
	struct droce_comp_channel *ch = cq->channel;
	uint8_t one = 1;

	pthread_mutex_lock(&ch->lock);
	if (ch->nfired == RTE_DIM(ch->fired)) {
		/* Every slot holds an event not yet taken: the app will see this CQ's. */
		pthread_mutex_unlock(&ch->lock);
		return;
	}
	ch->fired[ch->nfired++] = cq;
	pthread_mutex_unlock(&ch->lock);
	if (write(ch->wfd, &one, 1) != 1)
		DROCE_LOG(WARNING, "completion channel write failed: %s", strerror(errno));
}

static void
cq_notify(struct droce_cq *cq)
{
	if (cq->channel != NULL)
		channel_fire(cq);
}

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct droce_comp_channel *ch = calloc(1, sizeof(*ch));
	int fds[2];

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		free(ch);
		return NULL;
	}
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	droce_cq_notify_hook = cq_notify;
	pthread_mutex_init(&ch->lock, NULL);
	ch->ibv.context = ctx;
	ch->ibv.fd = fds[0];
	ch->wfd = fds[1];
	return &ch->ibv;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *ibch)
{
	struct droce_comp_channel *ch = (struct droce_comp_channel *)ibch;

	if (__atomic_load_n(&ch->users, __ATOMIC_ACQUIRE) != 0) {
		errno = EBUSY;
		return -1;
	}
	close(ch->ibv.fd);
	close(ch->wfd);
	free(ch);
	return 0;
}

int
ibv_get_cq_event(struct ibv_comp_channel *ibch, struct ibv_cq **cq, void **cq_context)
{
	struct droce_comp_channel *ch = (struct droce_comp_channel *)ibch;
	struct droce_cq *c;
	uint8_t b;

	if (read(ch->ibv.fd, &b, 1) != 1)
		return -1;
	pthread_mutex_lock(&ch->lock);
	if (ch->nfired == 0) {
		pthread_mutex_unlock(&ch->lock);
		errno = EAGAIN;
		return -1;
	}
	c = ch->fired[0];
	memmove(ch->fired, ch->fired + 1, --ch->nfired * sizeof(ch->fired[0]));
	pthread_mutex_unlock(&ch->lock);
	__atomic_add_fetch(&c->events, 1, __ATOMIC_RELAXED);
	*cq = ibv_cq_ex_to_cq(&c->ibv);
	*cq_context = c->ibv.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
	pthread_mutex_lock(&ibcq->mutex);
	ibcq->comp_events_completed += nevents;
	pthread_cond_signal(&ibcq->cond);
	pthread_mutex_unlock(&ibcq->mutex);
}

int
droce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	__atomic_store_n(&droce_cq_of(ibcq)->armed, solicited_only ? 2u : 1u, __ATOMIC_RELEASE);
	return 0;
}

int
droce_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct droce_cq *cq = droce_cq_of(ibcq);
	int got = droce_cq_pop(cq, n, wc);

	if (got == 0) {
		/* Nothing yet: give the engine a turn in this thread, then look again. */
		droce_engine_nudge_all(cq->engine);
		got = droce_cq_pop(cq, n, wc);
	}
	return got;
}

/* ---- the extended CQ: one completion at a time, read field by field ---- */

static int
cqx_next(struct ibv_cq_ex *ibcq)
{
	struct droce_cq *cq = (struct droce_cq *)ibcq;

	if (droce_poll_cq(ibv_cq_ex_to_cq(ibcq), 1, &cq->cur) != 1)
		return ENOENT;
	ibcq->wr_id = cq->cur.wr_id;
	ibcq->status = cq->cur.status;
	return 0;
}

static int
cqx_start(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask != 0)
		return EINVAL;
	return cqx_next(ibcq);
}

static void cqx_end(struct ibv_cq_ex *ibcq) { (void)ibcq; }
#define CUR(ibcq) (((struct droce_cq *)(ibcq))->cur)
static enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *c) { return CUR(c).opcode; }
static uint32_t cqx_vendor_err(struct ibv_cq_ex *c) { return CUR(c).vendor_err; }
static uint32_t cqx_byte_len(struct ibv_cq_ex *c) { return CUR(c).byte_len; }
static __be32 cqx_imm(struct ibv_cq_ex *c) { return CUR(c).imm_data; }
static uint32_t cqx_qp_num(struct ibv_cq_ex *c) { return CUR(c).qp_num; }
static uint32_t cqx_src_qp(struct ibv_cq_ex *c) { return CUR(c).src_qp; }
static unsigned int cqx_wc_flags(struct ibv_cq_ex *c) { return CUR(c).wc_flags; }
static uint32_t cqx_slid(struct ibv_cq_ex *c) { return CUR(c).slid; }
static uint8_t cqx_sl(struct ibv_cq_ex *c) { return CUR(c).sl; }
static uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *c) { return CUR(c).dlid_path_bits; }
#undef CUR
static uint64_t cqx_ts(struct ibv_cq_ex *c) { return ((struct droce_cq *)c)->cur_ts; }
static uint64_t
cqx_wallclock(struct ibv_cq_ex *c)
{
	return droce_clock_wall_ns(((struct droce_cq *)c)->cur_ts);
}

/* Timestamps: when the completion entered the CQ, in TSC cycles. */
#define CQX_WC_TS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* The fields a droce completion carries; VLANs, flow tags and tag matching it has not. */
#define CQX_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
		      IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
		      IBV_WC_EX_WITH_DLID_PATH_BITS | CQX_WC_TS)

static struct droce_cq *
cq_create(struct ibv_context *ctx, uint32_t cqe, void *cq_context,
	  struct ibv_comp_channel *channel)
{
	struct droce_cq *cq;
	int rc;

	if (cqe < 1 || cqe > DROCE_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = droce_cq_init(cq, cqe);
	if (rc != 0) {
		free(cq);
		errno = -rc;
		return NULL;
	}
	cq->ibv.context = ctx;
	cq->ibv.channel = channel;
	cq->ibv.cq_context = cq_context;
	cq->ibv.cqe = (int)cq->mask;
	pthread_mutex_init(&cq->ibv.mutex, NULL);
	pthread_cond_init(&cq->ibv.cond, NULL);
	cq->engine = droce_dev_of_ctx(ctx)->engines[0];
	if (channel != NULL) {
		cq->channel = (struct droce_comp_channel *)channel;
		__atomic_add_fetch(&cq->channel->users, 1, __ATOMIC_RELAXED);
	}
	return cq;
}

struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct droce_cq *cq;

	if (comp_vector < 0 || comp_vector >= ctx->num_comp_vectors || cqe < 1) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_create(ctx, (uint32_t)cqe, cq_context, channel);
	return cq != NULL ? ibv_cq_ex_to_cq(&cq->ibv) : NULL;
}

/*
 * As mlx5: unknown creation flags are EINVAL, and IBV_CQ_INIT_ATTR_MASK_PD
 * takes a parent domain (EINVAL for a plain PD). A single-threaded CQ, or
 * one on a parent domain with a thread domain, has one poller at a time.
 */
struct ibv_cq_ex *
droce_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t known_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	const uint32_t known_flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				     IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	uint32_t flags = attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS ? attr->flags : 0;
	struct ibv_pd *pd = attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD ? attr->parent_domain : NULL;
	struct droce_cq *cq;

	if (attr->comp_mask & ~known_mask || attr->comp_vector >= (uint32_t)ctx->num_comp_vectors ||
	    (flags & ~known_flags) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	     (pd == NULL || pd->context != ctx || droce_pd_of(pd)->inner == NULL))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)CQX_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = cq_create(ctx, attr->cqe, attr->cq_context, attr->channel);
	if (cq == NULL)
		return NULL;
	cq->single_consumer = (flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED) ||
			      droce_pd_single_thread(pd);
	cq->pd = pd;
	if (pd != NULL)
		__atomic_add_fetch(&droce_pd_of(pd)->users, 1, __ATOMIC_RELAXED);
	if ((attr->wc_flags & CQX_WC_TS) && droce_cq_enable_ts(cq) != 0) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(&cq->ibv));
		errno = ENOMEM;
		return NULL;
	}
	cq->ibv.read_completion_ts = cqx_ts;
	cq->ibv.read_completion_wallclock_ns = cqx_wallclock;
	cq->ibv.start_poll = cqx_start;
	cq->ibv.next_poll = cqx_next;
	cq->ibv.end_poll = cqx_end;
	cq->ibv.read_opcode = cqx_opcode;
	cq->ibv.read_vendor_err = cqx_vendor_err;
	cq->ibv.read_byte_len = cqx_byte_len;
	cq->ibv.read_imm_data = cqx_imm;
	cq->ibv.read_qp_num = cqx_qp_num;
	cq->ibv.read_src_qp = cqx_src_qp;
	cq->ibv.read_wc_flags = cqx_wc_flags;
	cq->ibv.read_slid = cqx_slid;
	cq->ibv.read_sl = cqx_sl;
	cq->ibv.read_dlid_path_bits = cqx_dlid_path_bits;
	return &cq->ibv;
}

int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct droce_cq *cq = droce_cq_of(ibcq);

	if (__atomic_load_n(&cq->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	/* As rdma-core: wait until every event handed out was acknowledged. */
	pthread_mutex_lock(&ibcq->mutex);
	while (ibcq->comp_events_completed != __atomic_load_n(&cq->events, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
	pthread_mutex_unlock(&ibcq->mutex);
	droce_events_retire(ibcq->context, &(struct ibv_async_event){
		.event_type = IBV_EVENT_CQ_ERR, .element.cq = ibcq });
	if (cq->channel != NULL) {
		struct droce_comp_channel *ch = cq->channel;
		uint32_t i, j;

		/* Forget events of this CQ nobody took. */
		pthread_mutex_lock(&ch->lock);
		for (i = j = 0; i < ch->nfired; i++)
			if (ch->fired[i] != cq)
				ch->fired[j++] = ch->fired[i];
		ch->nfired = j;
		pthread_mutex_unlock(&ch->lock);
		__atomic_sub_fetch(&ch->users, 1, __ATOMIC_RELEASE);
	}
	if (cq->pd != NULL)
		__atomic_sub_fetch(&droce_pd_of(cq->pd)->users, 1, __ATOMIC_RELEASE);
	droce_cq_fini(cq);
	free(cq);
	return 0;
}

/* As rxe: a size the device cannot have, or one below the completions
 * still pending, is EINVAL; the CQ keeps what it holds, in order. */
int
ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct droce_cq *cq = droce_cq_of(ibcq);
	int rc;

	if (cqe < 1 || cqe > DROCE_MAX_CQE)
		return EINVAL;
	rc = droce_cq_resize(cq, (uint32_t)cqe);
	if (rc != 0)
		return -rc;
	ibcq->cqe = (int)cq->mask;
	return 0;
}
