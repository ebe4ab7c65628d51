/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every work request the harness posts, and the invariants of their
 * completions: each completes at most once, only posted ones complete, on
 * the QP (or a QP of the SRQ) it was posted to, and a receive never
 * reports more bytes than its buffers hold. A violation aborts, which
 * libFuzzer reports as a crash with the input that caused it.
 *
 * wr_id = sequence number << 8 | slot; the sequence never repeats, so a
 * stale or duplicated completion cannot match a slot's current request.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_common.h>

#include "fuzz_rx.h"

struct fz_slot {
	uint64_t seq;                 /* 0: free */
	enum fz_wr_kind kind;
	uint32_t qp_num;              /* the QP it was posted to; 0 for an SRQ receive */
	const struct ibv_srq *srq;
	uint32_t len;
};

static struct fz_slot slots[FZ_SLOTS];
static uint64_t next_seq = 1;

uint64_t
fz_track_take(enum fz_wr_kind kind, uint32_t qp_num, const struct ibv_srq *srq, uint32_t len)
{
	unsigned i;

	for (i = 0; i < FZ_SLOTS; i++) {
		if (slots[i].seq != 0)
			continue;
		slots[i] = (struct fz_slot){ next_seq++, kind, srq != NULL ? 0 : qp_num, srq, len };
		return slots[i].seq << 8 | i;
	}
	return 0;
}

void
fz_track_untake(uint64_t wr_id)
{
	slots[wr_id & 0xff].seq = 0;
}

static void __rte_noreturn
bad_wc(const struct ibv_wc *wc, const char *why)
{
	fprintf(stderr, "fuzz_rx: INVARIANT: %s: wr_id 0x%" PRIx64 " status %s opcode %d "
		"byte_len %u qp_num 0x%x\n", why, wc->wr_id, ibv_wc_status_str(wc->status),
		wc->opcode, wc->byte_len, wc->qp_num);
	abort();
}

/* May @p qp_num complete a request taken from @p s? */
static bool
qp_num_ok(const struct fz_slot *s, uint32_t qp_num)
{
	unsigned i;

	if (s->srq == NULL)
		return s->qp_num == qp_num;
	for (i = 0; i < FZ_NQP; i++)
		if (fzq.qpn[i] == qp_num && fzq.rsrq[i] == s->srq)
			return true;
	return false;
}

void
fz_track_complete(const struct ibv_wc *wc)
{
	unsigned slot = wc->wr_id & 0xff;
	struct fz_slot *s = &slots[slot < FZ_SLOTS ? slot : 0];

	if (slot >= FZ_SLOTS || s->seq == 0 || s->seq != wc->wr_id >> 8)
		bad_wc(wc, "completion of a work request completed before, or never posted");
	if (!qp_num_ok(s, wc->qp_num))
		bad_wc(wc, "completion on a QP the work request was not posted to");
	if (wc->status == IBV_WC_SUCCESS) {
		if (((wc->opcode & IBV_WC_RECV) != 0) != (s->kind == FZ_WR_RECV))
			bad_wc(wc, "completion of the wrong kind (send/receive)");
		if (s->kind == FZ_WR_RECV && wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM &&
		    wc->byte_len > s->len)
			bad_wc(wc, "receive longer than its buffers");
	}
	s->seq = 0;
}

unsigned
fz_track_count_recv(uint32_t qp_num, const struct ibv_srq *srq)
{
	unsigned i, n = 0;

	for (i = 0; i < FZ_SLOTS; i++)
		if (slots[i].seq != 0 && slots[i].kind == FZ_WR_RECV &&
		    (srq != NULL ? slots[i].srq == srq : slots[i].qp_num == qp_num))
			n++;
	return n;
}

void
fz_track_forget(uint32_t qp_num)
{
	unsigned i;

	for (i = 0; i < FZ_SLOTS; i++)
		if (qp_num == 0 || (slots[i].srq == NULL && slots[i].qp_num == qp_num))
			slots[i].seq = 0;
}
