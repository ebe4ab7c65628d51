/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic: buffer patterns, batches of work requests (one after the other
 * in the memory region, so a batch moves one contiguous range that `verify
 * mr` can check), and polling with a deadline.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_random.h>

#include "testpmd.h"

/* Every work request gets the next id, receives and sends alike. */
static uint64_t next_wr_id = 1;

int
tp_parse_pattern(const char *s, struct tp_pattern *p)
{
	uint64_t v;

	if (strcmp(s, "inc") == 0)
		p->kind = TP_PAT_INC;
	else if (strcmp(s, "zero") == 0)
		p->kind = TP_PAT_ZERO;
	else if (strcmp(s, "rand") == 0)
		p->kind = TP_PAT_RAND;
	else if (strncmp(s, "0x", 2) == 0 && tp_parse_u64(s, UINT8_MAX, &v) == 0) {
		p->kind = TP_PAT_BYTE;
		p->byte = (uint8_t)v;
	} else
		return -EINVAL;
	return 0;
}

void
tp_pattern_fill(uint8_t *buf, size_t len, const struct tp_pattern *p)
{
	size_t i;

	switch (p->kind) {
	case TP_PAT_INC:
		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)i;
		break;
	case TP_PAT_ZERO:
		memset(buf, 0, len);
		break;
	case TP_PAT_BYTE:
		memset(buf, p->byte, len);
		break;
	case TP_PAT_RAND:
		for (i = 0; i < len; i += sizeof(uint64_t)) {
			uint64_t r = rte_rand();

			memcpy(buf + i, &r, RTE_MIN(sizeof(r), len - i));
		}
		break;
	}
}

static bool
is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static void
send_wr_fill(const struct tp_send *s, uint32_t i, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	sge->addr = (uintptr_t)s->mr->mr.buf + (uint64_t)i * s->len;
	sge->length = s->len;
	sge->lkey = s->mr->mr.mr->lkey;
	wr->wr_id = next_wr_id + i;
	wr->sg_list = sge;
	wr->num_sge = s->len > 0 ? 1 : 0;
	wr->opcode = s->op;
	wr->send_flags = s->flags;
	if (s->imm_set)
		wr->imm_data = htobe32(s->imm);
	if (is_atomic(s->op)) {
		wr->wr.atomic.remote_addr = s->raddr + (uint64_t)i * s->len;
		wr->wr.atomic.rkey = s->rkey;
		wr->wr.atomic.compare_add = s->compare_add;
		wr->wr.atomic.swap = s->swap;
	} else if (s->remote_set) {
		wr->wr.rdma.remote_addr = s->raddr + (uint64_t)i * s->len;
		wr->wr.rdma.rkey = s->rkey;
	}
	if (s->qp->qp.type == IBV_QPT_UD) {
		wr->wr.ud.ah = s->ah;
		wr->wr.ud.remote_qpn = s->dqpn;
		wr->wr.ud.remote_qkey = s->qkey;
	}
	if (s->qp->qp.type == IBV_QPT_XRC_SEND)
		wr->qp_type.xrc.remote_srqn = s->srqn;
}

int
tp_post_send(const struct tp_send *s, uint64_t *first, unsigned *posted)
{
	struct ibv_send_wr *wr, *bad = NULL;
	struct ibv_sge *sge;
	uint32_t i;
	int rc;

	*first = next_wr_id;
	*posted = 0;
	wr = calloc(s->count, sizeof(*wr));
	sge = calloc(s->count, sizeof(*sge));
	if (wr == NULL || sge == NULL) {
		free(wr);
		free(sge);
		return -ENOMEM;
	}
	for (i = 0; i < s->count; i++) {
		send_wr_fill(s, i, &wr[i], &sge[i]);
		wr[i].next = i + 1 < s->count ? &wr[i + 1] : NULL;
	}
	rc = tp_verbs_rc(ibv_post_send(s->qp->qp.qp, wr, &bad));
	*posted = rc == 0 ? s->count : bad != NULL ? (unsigned)(bad - wr) : 0;
	next_wr_id += s->count;
	free(wr);
	free(sge);
	return rc;
}

int
tp_post_recv(struct tp_obj *target, struct tp_obj *mr, uint32_t len, uint32_t count,
	     uint64_t *first, unsigned *posted)
{
	struct ibv_recv_wr *wr, *bad = NULL;
	struct ibv_sge *sge;
	uint32_t i;
	int rc;

	*first = next_wr_id;
	*posted = 0;
	wr = calloc(count, sizeof(*wr));
	sge = calloc(count, sizeof(*sge));
	if (wr == NULL || sge == NULL) {
		free(wr);
		free(sge);
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		sge[i].addr = (uintptr_t)mr->mr.buf + (uint64_t)i * len;
		sge[i].length = len;
		sge[i].lkey = mr->mr.mr->lkey;
		wr[i].wr_id = next_wr_id + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = len > 0 ? 1 : 0;
		wr[i].next = i + 1 < count ? &wr[i + 1] : NULL;
	}
	rc = target->kind == TP_SRQ ? ibv_post_srq_recv(target->srq.srq, wr, &bad) :
		ibv_post_recv(target->qp.qp, wr, &bad);
	rc = tp_verbs_rc(rc);
	*posted = rc == 0 ? count : bad != NULL ? (unsigned)(bad - wr) : 0;
	next_wr_id += count;
	free(wr);
	free(sge);
	return rc;
}

/* Take up to @p max completions from @p cq's backlog. */
static unsigned
backlog_take(struct tp_obj *cq, struct ibv_wc *wc, unsigned max)
{
	unsigned n = RTE_MIN(max, cq->cq.nb_backlog);

	memcpy(wc, cq->cq.backlog, n * sizeof(*wc));
	memmove(cq->cq.backlog, cq->cq.backlog + n, (cq->cq.nb_backlog - n) * sizeof(*wc));
	cq->cq.nb_backlog -= n;
	return n;
}

int
tp_poll(struct tp_obj *cq, struct ibv_wc *wc, unsigned max, unsigned want, unsigned timeout_ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * timeout_ms / 1000;
	unsigned n = backlog_take(cq, wc, max);
	int r;

	while (n < max) {
		r = ibv_poll_cq(cq->cq.cq, (int)(max - n), wc + n);
		if (r < 0)
			return tp_verbs_rc(r);
		n += (unsigned)r;
		if (r > 0)
			continue;
		if (n >= want || tp_stop || rte_get_timer_cycles() >= end)
			break;
		/* The engine runs on its own thread; give it a moment. */
		usleep(20);
	}
	return (int)n;
}

int
tp_cq_pending(struct tp_obj *cq)
{
	unsigned room = (unsigned)cq->cq.cq->cqe - cq->cq.nb_backlog;
	int r;

	if (room > 0) {
		r = ibv_poll_cq(cq->cq.cq, (int)room, cq->cq.backlog + cq->cq.nb_backlog);
		if (r < 0)
			return tp_verbs_rc(r);
		cq->cq.nb_backlog += (unsigned)r;
	}
	return (int)cq->cq.nb_backlog;
}
