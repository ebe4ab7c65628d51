/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP1 and its thread. Receives land in a ring of buffers (40 bytes of
 * GRH, then the MAD) kept posted; sends go from a ring of MAD buffers
 * whose slots come back as their completions are polled, under the send
 * lock, from the send CQ.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "droce_gsi.h"
#include "droce_verbs_priv.h"

/* As many receives as the kernel's MAD layer posts on QP1 (ib_mad's
 * recv_queue_size): a listener taking 100 connections at once got more
 * MADs in a burst than 64 receives held, and a lost RTU or DREQ waits
 * for the CM's retry (seconds), or for ever when the peer has gone. */
#define GSI_RECVS 512
#define GSI_SENDS 256
/* How long a send waits for a free slot before it counts as lost. */
#define GSI_SEND_WAIT_US 1000000
#define GSI_GRH 40
#define GSI_RBUF (GSI_GRH + DROCE_MAD_SIZE)
#define GSI_AHS 16

struct gsi_ah {
	uint8_t dgid[16];
	struct ibv_ah *ah;
};

struct droce_gsi {
	struct ibv_context *ctx;
	struct droce_gsi_ops ops;
	void *arg;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *rcq, *scq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;                /**< GSI_RECVS receive buffers, then GSI_SENDS send buffers */
	int wake_fd;                 /**< eventfd: stop, or a new deadline */
	bool stop;
	pthread_t thread;
	pthread_mutex_t send_lock;   /**< the send ring and the AH cache */
	uint32_t sends_posted, sends_done;
	struct gsi_ah ahs[GSI_AHS];
	unsigned next_ah;
};

void
droce_gsi_log_info(const char *msg)
{
	DROCE_LOG(INFO, "%s", msg);
}

uint64_t
droce_gsi_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int
droce_gsi_resolve(const struct droce_gsi *g, int sgid_index, const uint8_t dgid[16])
{
	return droce_port_resolve(droce_dev_of_ctx(g->ctx)->port, sgid_index, dgid);
}

uint32_t
droce_gsi_qpn(const struct droce_gsi *g)
{
	return g->qp->qp_num;
}

static int
gsi_post_recv(struct droce_gsi *g, unsigned i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(g->buf + (size_t)i * GSI_RBUF),
		.length = GSI_RBUF,
		.lkey = g->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(g->qp, &wr, &bad);
}

/* QP1 through RESET -> INIT -> RTR -> RTS, then out of the application's reach. */
static int
gsi_qp_up(struct droce_gsi *g)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = DROCE_GSI_QKEY,
	};
	int rc = ibv_modify_qp(g->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_QKEY);

	a.qp_state = IBV_QPS_RTR;
	if (rc == 0)
		rc = ibv_modify_qp(g->qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (rc == 0)
		rc = ibv_modify_qp(g->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (rc == 0)
		__atomic_store_n(&droce_qp_of(g->qp)->stack_owned, true, __ATOMIC_RELEASE);
	return rc;
}

/* At debug level, every MAD in and out (its class and attribute: 0x07 and
 * 0x0015 is a CM DREQ), so retransmissions show in the log. */
static void
gsi_log_mad(const uint8_t mad[DROCE_MAD_SIZE], const char *what, int rc)
{
	DROCE_LOG(DEBUG, "GSI: MAD class 0x%02x attribute 0x%02x%02x %s%s%s", mad[1], mad[16],
		  mad[17], what, rc != 0 ? ": " : "", rc != 0 ? strerror(-rc) : "");
}

/*
 * A MAD came from @p dgid: its sender may be a new process on a new MAC
 * (a peer that restarted), which the neighbour table has just learned.
 * Have the cached AH to it routed again on its next use, or the answer
 * goes to the old MAC (ib_cm answers with an AH made from the received
 * MAD for the same reason). Not destroyed: posted SENDs may still use it.
 */
static void
gsi_ah_reroute(struct droce_gsi *g, const uint8_t dgid[16])
{
	pthread_mutex_lock(&g->send_lock);
	for (unsigned i = 0; i < GSI_AHS; i++)
		if (g->ahs[i].ah != NULL && memcmp(g->ahs[i].dgid, dgid, 16) == 0)
			__atomic_store_n(&container_of(g->ahs[i].ah, struct droce_ah, ibv)->av.routed,
					 false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&g->send_lock);
}

static void
gsi_recv_done(struct droce_gsi *g, const struct ibv_wc *wc)
{
	const uint8_t *b = g->buf + wc->wr_id * GSI_RBUF;
	struct ibv_ah_attr aa;

	/* The GRH says who sent it, and to which of our GIDs. */
	if (wc->status == IBV_WC_SUCCESS && wc->byte_len == GSI_RBUF &&
	    ibv_init_ah_from_wc(g->ctx, 1, (struct ibv_wc *)(uintptr_t)wc,
				(struct ibv_grh *)(uintptr_t)b, &aa) == 0) {
		union ibv_gid sgid;

		gsi_log_mad(b + GSI_GRH, "received", 0);
		gsi_ah_reroute(g, aa.grh.dgid.raw);
		if (ibv_query_gid(g->ctx, 1, aa.grh.sgid_index, &sgid) == 0)
			g->ops.recv(g->arg, aa.grh.dgid.raw, sgid.raw, b + GSI_GRH);
	}
	if (wc->status != IBV_WC_WR_FLUSH_ERR)
		gsi_post_recv(g, (unsigned)wc->wr_id);
}

static void *
gsi_thread(void *arg)
{
	struct droce_gsi *g = arg;

	while (!__atomic_load_n(&g->stop, __ATOMIC_ACQUIRE)) {
		uint64_t next = g->ops.timer(g->arg), now = droce_gsi_now_us();
		struct pollfd fds[2] = {
			{ .fd = g->ch->fd, .events = POLLIN },
			{ .fd = g->wake_fd, .events = POLLIN },
		};
		struct ibv_wc wc[16];
		int n, timeout;

		/* Arm first, then drain: a completion between the two is not missed. */
		ibv_req_notify_cq(g->rcq, 0);
		while ((n = ibv_poll_cq(g->rcq, 16, wc)) > 0)
			for (int i = 0; i < n; i++)
				gsi_recv_done(g, &wc[i]);
		timeout = next == UINT64_MAX ? -1 :
			  next <= now ? 0 : (int)RTE_MIN((next - now + 999) / 1000, 60000u);
		if (poll(fds, 2, timeout) <= 0)
			continue;
		if (fds[0].revents & POLLIN) {
			struct ibv_cq *cq;
			void *cq_ctx;

			if (ibv_get_cq_event(g->ch, &cq, &cq_ctx) == 0)
				ibv_ack_cq_events(cq, 1);
		}
		if (fds[1].revents & POLLIN) {
			uint64_t v;

			if (read(g->wake_fd, &v, sizeof(v)) < 0)
				continue;
		}
	}
	return NULL;
}

void
droce_gsi_kick(struct droce_gsi *g)
{
	uint64_t one = 1;

	if (write(g->wake_fd, &one, sizeof(one)) < 0)
		DROCE_LOG(WARNING, "GSI: cannot wake its thread");
}

static void
gsi_free(struct droce_gsi *g)
{
	for (unsigned i = 0; i < GSI_AHS; i++)
		if (g->ahs[i].ah != NULL)
			ibv_destroy_ah(g->ahs[i].ah);
	if (g->qp != NULL) {
		__atomic_store_n(&droce_qp_of(g->qp)->stack_owned, false, __ATOMIC_RELEASE);
		ibv_destroy_qp(g->qp);
	}
	if (g->mr != NULL)
		ibv_dereg_mr(g->mr);
	if (g->rcq != NULL)
		ibv_destroy_cq(g->rcq);
	if (g->scq != NULL)
		ibv_destroy_cq(g->scq);
	if (g->ch != NULL)
		ibv_destroy_comp_channel(g->ch);
	if (g->pd != NULL)
		ibv_dealloc_pd(g->pd);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	free(g->buf);
	free(g);
}

struct droce_gsi *
droce_gsi_open(struct ibv_context *ctx, const struct droce_gsi_ops *ops, void *arg)
{
	struct droce_gsi *g = calloc(1, sizeof(*g));
	struct ibv_qp_init_attr_ex ax = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = GSI_SENDS, .max_recv_wr = GSI_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.sq_sig_all = 1,
	};
	size_t len = (size_t)GSI_RECVS * GSI_RBUF + (size_t)GSI_SENDS * DROCE_MAD_SIZE;
	int rc = ENOMEM;

	if (g == NULL)
		goto fail;
	g->ctx = ctx;
	g->ops = *ops;
	g->arg = arg;
	g->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&g->send_lock, NULL);
	g->buf = calloc(1, len);
	if (g->wake_fd < 0 || g->buf == NULL || (g->pd = ibv_alloc_pd(ctx)) == NULL ||
	    (g->ch = ibv_create_comp_channel(ctx)) == NULL ||
	    (g->rcq = ibv_create_cq(ctx, GSI_RECVS, g, g->ch, 0)) == NULL ||
	    (g->scq = ibv_create_cq(ctx, GSI_SENDS, g, NULL, 0)) == NULL ||
	    (g->mr = ibv_reg_mr(g->pd, g->buf, len, IBV_ACCESS_LOCAL_WRITE)) == NULL)
		goto fail_errno;
	ax.pd = g->pd;
	ax.send_cq = g->scq;
	ax.recv_cq = g->rcq;
	g->qp = droce_create_special_qp(ctx, &ax, DROCE_GSI_QPN);
	if (g->qp == NULL) {
		rc = errno == EEXIST ? EBUSY : errno;
		goto fail;
	}
	rc = gsi_qp_up(g);
	for (unsigned i = 0; rc == 0 && i < GSI_RECVS; i++)
		rc = gsi_post_recv(g, i);
	if (rc == 0)
		rc = pthread_create(&g->thread, NULL, gsi_thread, g);
	if (rc != 0)
		goto fail;
	return g;
fail_errno:
	rc = errno != 0 ? errno : ENOMEM;
fail:
	if (g != NULL)
		gsi_free(g);
	errno = rc;
	return NULL;
}

void
droce_gsi_close(struct droce_gsi *g)
{
	if (g == NULL)
		return;
	__atomic_store_n(&g->stop, true, __ATOMIC_RELEASE);
	droce_gsi_kick(g);
	pthread_join(g->thread, NULL);
	gsi_free(g);
}

/* The AH to @p dgid, from the cache or made now (the oldest entry goes). */
static struct ibv_ah *
gsi_ah(struct droce_gsi *g, const uint8_t dgid[16])
{
	bool v4 = memcmp(dgid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct gsi_ah *slot;
	union ibv_gid gid;
	int idx;

	for (unsigned i = 0; i < GSI_AHS; i++)
		if (g->ahs[i].ah != NULL && memcmp(g->ahs[i].dgid, dgid, 16) == 0)
			return g->ahs[i].ah;
	/* Our GID of the same family as the destination's. */
	for (idx = 0; ibv_query_gid(g->ctx, 1, idx, &gid) == 0; idx++) {
		bool gv4 = memcmp(gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0;

		if (gv4 == v4 && (v4 || gid.raw[0] != 0xfe))
			break;
	}
	memcpy(aa.grh.dgid.raw, dgid, 16);
	aa.grh.sgid_index = (uint8_t)idx;
	aa.grh.hop_limit = 64;
	slot = &g->ahs[g->next_ah++ % GSI_AHS];
	if (slot->ah != NULL)
		ibv_destroy_ah(slot->ah);
	slot->ah = ibv_create_ah(g->pd, &aa);
	memcpy(slot->dgid, dgid, 16);
	return slot->ah;
}

/* Count the sends that completed. Under send_lock. */
static void
gsi_reap(struct droce_gsi *g)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(g->scq, 16, wc)) > 0)
		g->sends_done += (uint32_t)n;
}

int
droce_gsi_drain(struct droce_gsi *g, uint64_t deadline_us)
{
	int rc = 0;

	pthread_mutex_lock(&g->send_lock);
	for (gsi_reap(g); g->sends_done != g->sends_posted; gsi_reap(g)) {
		if (droce_gsi_now_us() >= deadline_us) {
			rc = -ETIMEDOUT;
			break;
		}
		sched_yield();
	}
	pthread_mutex_unlock(&g->send_lock);
	return rc;
}

int
droce_gsi_send(struct droce_gsi *g, const uint8_t dgid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND,
		.num_sge = 1,
		.wr.ud = { .remote_qpn = DROCE_GSI_QPN, .remote_qkey = DROCE_GSI_QKEY },
	}, *bad;
	struct ibv_sge sge = { .length = DROCE_MAD_SIZE, .lkey = g->mr->lkey };
	uint8_t *slot;
	int rc;

	pthread_mutex_lock(&g->send_lock);
	for (uint64_t t0 = droce_gsi_now_us();;) {
		gsi_reap(g);
		if (g->sends_posted - g->sends_done < GSI_SENDS)
			break;
		/* A burst (many connections at once): the engine frees slots
		 * soon. A ring that stays full is a lost MAD, which the CM retries. */
		if (droce_gsi_now_us() - t0 > GSI_SEND_WAIT_US) {
			rc = -ENOBUFS;
			goto out;
		}
		sched_yield();
	}
	wr.wr.ud.ah = gsi_ah(g, dgid);
	if (wr.wr.ud.ah == NULL) {
		rc = -errno;
		goto out;
	}
	slot = g->buf + (size_t)GSI_RECVS * GSI_RBUF +
	       (size_t)(g->sends_posted % GSI_SENDS) * DROCE_MAD_SIZE;
	memcpy(slot, mad, DROCE_MAD_SIZE);
	sge.addr = (uintptr_t)slot;
	wr.sg_list = &sge;
	wr.wr_id = g->sends_posted;
	rc = -ibv_post_send(g->qp, &wr, &bad);
	if (rc == 0)
		g->sends_posted++;
out:
	pthread_mutex_unlock(&g->send_lock);
	gsi_log_mad(mad, rc == 0 ? "sent" : "not sent", rc);
	return rc;
}
