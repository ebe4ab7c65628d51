/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: each input is a setup byte and a sequence of frames
 * for a live droce port.
 *
 *   input  := setup frame*
 *   setup  := 1 byte: which send work requests the harness posts before
 *             the frames (FZ_POST_*), so ACKs, NAKs and READ/atomic
 *             responses find requests to answer
 *   frame  := len (2 bytes, little-endian) record[len]
 *   record := qp op flags psn split extend body
 *     qp      bits 2:0: the QP (enum fz_qp_kind; 7: a QPN nobody has,
 *             whose low bits are bits 7:4); bit 3: deliver with the next
 *             frame, without engine iterations in between
 *     op      the opcode's operation (bits 4:0) under the QP's service,
 *             or the whole opcode with FZ_F_RAW_OPCODE
 *     flags   FZ_F_*
 *     psn     signed distance from the PSN the QP expects (requests) or
 *             the oldest one it waits to hear about (responses)
 *     split   where a chained frame's first segment ends, counted from
 *             32 bytes before the end of the transport headers
 *     extend  bits 5:0: 64-byte units of filler added to the payload (a
 *             short input makes MTU-sized frames); bits 7:6: BTH pad count
 *     body    the extension headers after the BTH, then the payload
 *
 * Unless FZ_F_RAW_HDRS, keys, addresses, Q_Key and SRQ number in the
 * extension headers are mapped onto valid ones most of the time (see
 * fix_headers()), and the ICRC is correct unless FZ_F_BAD_ICRC: the
 * frames get past the port's checks into the transport.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_rx.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

#define FZ_F_SEGS        0x03 /* segments - 1 */
#define FZ_F_BAD_ICRC    0x04
#define FZ_F_RAW_OPCODE  0x08
#define FZ_F_ACKREQ      0x10
#define FZ_F_SE          0x20
#define FZ_F_RAW_HDRS    0x40
#define FZ_F_BAD_PKEY    0x80

#define FZ_Q_MASK        0x07
#define FZ_Q_NONE        0x07 /* a QPN nobody has */
#define FZ_Q_BATCH       0x08
#define FZ_NO_QPN        0xabcde0u /* no QP has it */

#define REC_HDR 6
/* The largest frame the port's mbufs hold in one segment. */
#define MAX_FRAME 8192

struct fz_frame {
	uint8_t qp, op, flags, psn, split, extend;
	const uint8_t *body;
	size_t body_len;
};

static uint64_t
get64(const uint8_t *p)
{
	rte_be64_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_64(v);
}

static uint32_t
get32(const uint8_t *p)
{
	rte_be32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_32(v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	rte_be64_t b = rte_cpu_to_be_64(v);

	memcpy(p, &b, sizeof(b));
}

static void
put32(uint8_t *p, uint32_t v)
{
	rte_be32_t b = rte_cpu_to_be_32(v);

	memcpy(p, &b, sizeof(b));
}

/* A key and address from the fuzzed ones: the low two bits of the fuzzed
 * key pick a region (the usual one twice as often), the fuzzed address
 * becomes an offset into it. */
static void
fix_key_va(uint8_t *rkey, uint8_t *va, bool align8)
{
	static const enum fz_mr_kind pick[4] = { FZ_MR_REMOTE, FZ_MR_REMOTE, FZ_MR_LOCAL,
						 FZ_MR_OTHER_PD };
	enum fz_mr_kind k = pick[get32(rkey) & 3];
	uint64_t off = get64(va) % fz.mr_len[k];

	/* The top bit of the address keeps a misaligned atomic possible. */
	if (align8 && !(get64(va) >> 63))
		off &= ~7ull;
	put32(rkey, fz.mr[k]->rkey);
	put64(va, (uintptr_t)fz.mr_buf[k] + off);
}

/*
 * The RETH length: bits 31:30 of the fuzzed one say how it relates to the
 * payload: exactly it (an ONLY packet), a few packets' worth (a FIRST),
 * any 16-bit length, or the fuzzed value itself.
 */
static uint32_t
fix_reth_len(uint32_t fuzzed, uint32_t payload)
{
	switch (fuzzed >> 30) {
	case 0:
		return payload;
	case 1:
		return payload * ((fuzzed & 7) + 1);
	case 2:
		return fuzzed & 0xffff;
	default:
		return fuzzed;
	}
}

/* Valid keys, addresses, Q_Key and SRQ number where the headers have them. */
static void
fix_headers(uint8_t *bth, const struct droce_opcode_info *op, uint32_t payload)
{
	uint8_t *h;

	if (op->off[DROCE_HDR_RETH] != 0) {
		h = bth + op->off[DROCE_HDR_RETH];
		fix_key_va(h + offsetof(struct droce_reth, rkey), h, false);
		put32(h + offsetof(struct droce_reth, len),
		      fix_reth_len(get32(h + offsetof(struct droce_reth, len)), payload));
	}
	if (op->off[DROCE_HDR_ATMETH] != 0) {
		h = bth + op->off[DROCE_HDR_ATMETH];
		fix_key_va(h + offsetof(struct droce_atomic_eth, rkey), h, true);
	}
	if (op->off[DROCE_HDR_IETH] != 0) {
		h = bth + op->off[DROCE_HDR_IETH];
		put32(h, fz.mr[FZ_MR_REMOTE]->rkey);
	}
	/* The top bit of the fuzzed Q_Key or SRQ number keeps it as it is. */
	if (op->off[DROCE_HDR_DETH] != 0) {
		h = bth + op->off[DROCE_HDR_DETH];
		if (!(h[0] & 0x80))
			put32(h, FZ_QKEY);
	}
	if (op->off[DROCE_HDR_XRCETH] != 0) {
		h = bth + op->off[DROCE_HDR_XRCETH];
		if (!(h[1] & 0x80))
			droce_put24(h + 1, fzq.xsrqn);
	}
}

/* An mbuf of the frame pool, every byte of its buffer usable again. */
static struct rte_mbuf *
frame_alloc(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(fz.frames);

	if (m != NULL)
		ASAN_UNPOISON_MEMORY_REGION(m->buf_addr, m->buf_len);
	return m;
}

/* Poison every buffer byte of @p m's segments outside their data: a read
 * past a segment's end (a copy that ignores the chain) is reported. */
static void
frame_poison(struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next) {
		uint8_t *b = m->buf_addr, *d = rte_pktmbuf_mtod(m, uint8_t *);

		ASAN_POISON_MEMORY_REGION(b, (size_t)(d - b));
		ASAN_POISON_MEMORY_REGION(d + m->data_len, (size_t)(b + m->buf_len - d - m->data_len));
	}
}

/* The BTH service of QP kind @p q. */
static uint8_t
qp_service(unsigned q)
{
	switch (q) {
	case FZ_UC:
		return DROCE_SVC_UC;
	case FZ_UD:
	case FZ_UD_SRQ:
		return DROCE_SVC_UD;
	case FZ_XRC_INI:
	case FZ_XRC_TGT:
		return DROCE_SVC_XRC;
	default:
		return DROCE_SVC_RC;
	}
}

/*
 * Lay the frame out in one mbuf: the peer's Ethernet/IPv4/UDP headers,
 * the BTH, the body, the filler, the pad and the ICRC (or four wrong
 * bytes). @return the mbuf, or NULL when the pool is empty.
 */
static struct rte_mbuf *
frame_build(const struct fz_frame *f, uint32_t *hdr_end)
{
	unsigned q = f->qp & FZ_Q_MASK;
	uint8_t opcode = (f->flags & FZ_F_RAW_OPCODE) ? f->op :
			 (uint8_t)(qp_service(q < FZ_NQP ? q : FZ_RC) | (f->op & DROCE_OP_MASK));
	const struct droce_opcode_info *op = &droce_opcode_table[opcode];
	uint32_t hdr = op->name != NULL ? op->hdr_len : (uint32_t)sizeof(struct droce_bth);
	unsigned l3 = droce_l3_hdr_len(&fz.peer.l3), pad = f->extend >> 6;
	uint32_t ext = hdr - (uint32_t)sizeof(struct droce_bth), payload, l4, qpn, psn, i;
	struct rte_mbuf *m;
	uint8_t *p, *bth;

	payload = (f->body_len > ext ? (uint32_t)(f->body_len - ext) : 0) + (f->extend & 0x3f) * 64u;
	payload = RTE_MIN(payload, MAX_FRAME - l3 - hdr - pad - DROCE_ICRC_LEN);
	l4 = (uint32_t)sizeof(struct droce_bth) + ext + payload + pad;
	m = frame_alloc();
	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(l3 + l4));
	droce_l3_hdr_write(m, &fz.peer.l3, l4);
	bth = p + l3;
	/* Extension headers and payload from the body, then filler, then pad. */
	memset(bth + sizeof(struct droce_bth), 0, l4 - sizeof(struct droce_bth));
	memcpy(bth + sizeof(struct droce_bth), f->body,
	       RTE_MIN(f->body_len, (size_t)(ext + payload)));
	for (i = (uint32_t)RTE_MIN(f->body_len, (size_t)(ext + payload)); i < ext + payload; i++)
		bth[sizeof(struct droce_bth) + i] = (uint8_t)(i * 7);
	if (q < FZ_NQP) {
		qpn = fzq.qpn[q];
		psn = fz_qps_psn(q, op->name == NULL || (op->flags & DROCE_OPF_REQ));
	} else {
		qpn = FZ_NO_QPN | (f->qp >> 4);
		psn = FZ_PSN;
	}
	psn = droce_psn_add(psn, (uint32_t)(int32_t)(int8_t)f->psn);
	droce_bth_set((struct droce_bth *)bth, opcode, f->flags & FZ_F_SE, pad,
		      (f->flags & FZ_F_BAD_PKEY) ? 0x7fff : DROCE_PKEY_DEFAULT, qpn,
		      f->flags & FZ_F_ACKREQ, psn);
	if (op->name != NULL && !(f->flags & FZ_F_RAW_HDRS))
		fix_headers(bth, op, payload);
	*hdr_end = l3 + hdr;
	if (!(f->flags & FZ_F_BAD_ICRC)) {
		droce_icrc_append(m, (uint16_t)sizeof(struct rte_ether_hdr));
	} else {
		uint8_t *t = (uint8_t *)rte_pktmbuf_append(m, DROCE_ICRC_LEN);

		memcpy(t, "\xde\xad\xbe\xef", DROCE_ICRC_LEN);
	}
	return m;
}

/*
 * The same bytes in @p nseg segments: the first ends @p split bytes
 * after 32 before the end of the headers (so headers can be cut too),
 * the rest share what is left; segments may be empty.
 * @return the chain (and @p m freed), or @p m when the pool is empty.
 */
static struct rte_mbuf *
frame_chain(struct rte_mbuf *m, unsigned nseg, uint32_t hdr_end, uint8_t split)
{
	uint32_t len = rte_pktmbuf_pkt_len(m), off = 0, cut, i;
	const uint8_t *src = rte_pktmbuf_mtod(m, const uint8_t *);
	struct rte_mbuf *head = NULL, *seg;

	cut = RTE_MIN(len, (uint32_t)RTE_MAX((int32_t)hdr_end - 32 + split, 0));
	for (i = 0; i < nseg; i++) {
		uint32_t n = i == 0 ? cut : i + 1 == nseg ? len - off : (len - cut) / (nseg - 1);

		seg = frame_alloc();
		if (seg == NULL) {
			rte_pktmbuf_free(head);
			return m;
		}
		memcpy(rte_pktmbuf_append(seg, (uint16_t)n), src + off, n);
		off += n;
		if (head == NULL)
			head = seg;
		else if (rte_pktmbuf_chain(head, seg) != 0)
			abort(); /* at most 4 segments */
	}
	rte_pktmbuf_free(m);
	return head;
}

static void
frame_deliver(const struct fz_frame *f)
{
	unsigned nseg = 1 + (f->flags & FZ_F_SEGS);
	struct rte_mbuf *m;
	uint32_t hdr_end;

	m = frame_build(f, &hdr_end);
	if (m == NULL)
		return;
	if (nseg > 1)
		m = frame_chain(m, nseg, hdr_end, f->split);
	frame_poison(m);
	if (rte_ring_enqueue(fz.peer.to_dev, m) != 0)
		rte_pktmbuf_free(m);
	if (!(f->qp & FZ_Q_BATCH)) {
		fz_env_run();
		fz_qps_service();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t aeth[4];

	(void)argc;
	(void)argv;
	fz_env_init();
	/* One frame from the peer (to a QPN nobody has) teaches the port its
	 * MAC before the first input: every input finds the same neighbours. */
	frame_deliver(&(struct fz_frame){ .qp = FZ_Q_NONE | FZ_Q_BATCH, .op = DROCE_OP_ACK,
					  .body = aeth, .body_len = sizeof(aeth) });
	fz_env_run();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 1;

	if (size < 1)
		return 0;
	fz_env_clear();
	fz_qps_create();
	fz_qps_post_sends(data[0]);
	while (off + 2 <= size) {
		size_t len = RTE_MIN((size_t)(data[off] | data[off + 1] << 8), size - off - 2);
		const uint8_t *r = data + off + 2;

		off += 2 + len;
		if (len < REC_HDR)
			continue;
		frame_deliver(&(struct fz_frame){ r[0], r[1], r[2], r[3], r[4], r[5],
						 r + REC_HDR, len - REC_HDR });
	}
	fz_env_run();
	fz_qps_service();
	fz_qps_destroy();
	return 0;
}
