/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every frame of every capture in tests/vectors/: it parses, its ICRC is
 * good, it re-encodes byte for byte, and its fields say what
 * tests/vectors/README.md says they do.
 */
#include <stdlib.h>
#include <string.h>

#include "wire_test.h"

/* One parsed frame; the offsets in pkt index d. */
struct vframe {
	const uint8_t *d;
	uint32_t len;
	struct droce_pkt pkt;
};

struct vfile {
	struct pcap_file pcap;
	struct vframe *f;
	size_t n;
};

static void
vfile_load(const char *name, struct vfile *v)
{
	test_pcap_load(name, &v->pcap);
	v->n = v->pcap.n;
	v->f = calloc(v->n, sizeof(*v->f));
	ck_assert_ptr_nonnull(v->f);
	for (size_t i = 0; i < v->n; i++) {
		struct vframe *f = &v->f[i];
		struct rte_mbuf *m;
		enum droce_parse_err err;

		f->d = v->pcap.frames[i].data;
		f->len = v->pcap.frames[i].len;
		m = test_mbuf(f->d, f->len);
		err = droce_pkt_parse(m, &f->pkt, true);
		rte_pktmbuf_free(m);
		ck_assert_msg(err == DROCE_PARSE_OK, "%s frame %zu: parse error %d",
			      name, i + 1, err);
	}
}

static void
vfile_free(struct vfile *v)
{
	free(v->f);
	pcap_free(&v->pcap);
}

/* Header @p h of a frame, or NULL when its opcode has none. */
static const void *
vhdr(const struct vframe *f, enum droce_hdr h)
{
	if (h != DROCE_HDR_BTH && f->pkt.op->off[h] == 0)
		return NULL;
	return f->d + f->pkt.bth_off + f->pkt.op->off[h];
}

static const void *
vhdr_must(const struct vframe *f, enum droce_hdr h)
{
	const void *p = vhdr(f, h);

	ck_assert_msg(p != NULL, "%s lacks header %d", f->pkt.op->name, h);
	return p;
}

#define BTH(f)    ((const struct droce_bth *)vhdr(f, DROCE_HDR_BTH))
#define RETH(f)   ((const struct droce_reth *)vhdr_must(f, DROCE_HDR_RETH))
#define AETH(f)   ((const struct droce_aeth *)vhdr_must(f, DROCE_HDR_AETH))
#define DETH(f)   ((const struct droce_deth *)vhdr_must(f, DROCE_HDR_DETH))
#define ATMETH(f) ((const struct droce_atomic_eth *)vhdr_must(f, DROCE_HDR_ATMETH))
#define ATMACK(f) ((const struct droce_atomic_ack_eth *)vhdr_must(f, DROCE_HDR_ATMACK))

static uint8_t
ipv4_tos(const struct vframe *f)
{
	return ((const struct rte_ipv4_hdr *)(f->d + f->pkt.l3_off))->type_of_service;
}

/* ---- every file: parse, ICRC, opcode totals, re-encoding ---- */

#define UD(op) (DROCE_SVC_UD | DROCE_OP_##op)

static const struct vdesc {
	const char *name;
	size_t frames;
	struct { uint8_t opcode; unsigned count; } totals[10];
} vdesc[] = {
	{ "roce-v2.pcap", 22, {
		{ DROCE_OP_SEND_ONLY, 2 }, { DROCE_OP_ACK, 6 },
		{ DROCE_OP_WRITE_FIRST, 2 }, { DROCE_OP_WRITE_MIDDLE, 2 },
		{ DROCE_OP_WRITE_LAST, 2 }, { DROCE_OP_READ_REQUEST, 2 },
		{ DROCE_OP_READ_RESP_ONLY, 2 }, { DROCE_OP_WRITE_ONLY, 2 },
		{ UD(SEND_ONLY), 2 } } },
	{ "rxe-rc-send.pcap", 70, {
		{ DROCE_OP_SEND_FIRST, 10 }, { DROCE_OP_SEND_MIDDLE, 20 },
		{ DROCE_OP_SEND_LAST, 10 }, { DROCE_OP_SEND_ONLY, 10 },
		{ DROCE_OP_ACK, 20 } } },
	{ "rxe-rc-write.pcap", 65, {
		{ DROCE_OP_WRITE_FIRST, 5 }, { DROCE_OP_WRITE_MIDDLE, 30 },
		{ DROCE_OP_WRITE_LAST, 5 }, { DROCE_OP_WRITE_ONLY, 10 },
		{ DROCE_OP_ACK, 15 } } },
	{ "rxe-rc-read.pcap", 45, {
		{ DROCE_OP_READ_REQUEST, 5 }, { DROCE_OP_READ_RESP_FIRST, 5 },
		{ DROCE_OP_READ_RESP_MIDDLE, 30 }, { DROCE_OP_READ_RESP_LAST, 5 } } },
	{ "rxe-rc-atomic.pcap", 20, {
		{ DROCE_OP_FETCH_ADD, 5 }, { DROCE_OP_CMP_SWAP, 5 },
		{ DROCE_OP_ATOMIC_ACK, 10 } } },
	{ "rxe-ud-send.pcap", 20, { { UD(SEND_ONLY), 20 } } },
	{ "rxe-rc-mtu4096.pcap", 50, {
		{ DROCE_OP_SEND_FIRST, 10 }, { DROCE_OP_SEND_MIDDLE, 20 },
		{ DROCE_OP_SEND_LAST, 10 }, { DROCE_OP_ACK, 10 } } },
};

/*
 * Build the frame again from what parsing found (and the IP fields it
 * does not keep: TOS, TTL, IP id, flow label, the destination MAC) with
 * droce_l3_hdr_write() and droce_icrc_append(): it must come out the same.
 */
static void
reencode(const struct vframe *f)
{
	const struct droce_pkt *pkt = &f->pkt;
	uint32_t l4_len = pkt->payload_off + pkt->payload_len + pkt->pad - pkt->bth_off;
	struct droce_l3_addr a = {
		.ipv6 = pkt->ipv6,
		.src_mac = pkt->src_mac,
		.vlan_tci = pkt->vlan_tci,
		.udp_sport = pkt->udp_sport,
	};
	struct rte_mbuf *m;
	uint8_t *p;
	unsigned off;

	memcpy(&a.dst_mac, f->d, sizeof(a.dst_mac));
	memcpy(a.sgid, pkt->sgid, sizeof(a.sgid));
	memcpy(a.dgid, pkt->dgid, sizeof(a.dgid));
	if (pkt->ipv6) {
		const struct rte_ipv6_hdr *ip = (const void *)(f->d + pkt->l3_off);
		uint32_t vtc = rte_be_to_cpu_32(ip->vtc_flow);

		a.tclass = (uint8_t)(vtc >> 20);
		a.flow_label = vtc & 0xfffff;
		a.ttl = ip->hop_limits;
	} else {
		const struct rte_ipv4_hdr *ip = (const void *)(f->d + pkt->l3_off);

		a.tclass = ip->type_of_service;
		a.ttl = ip->time_to_live;
		a.ip_id = rte_be_to_cpu_16(ip->packet_id);
	}
	ck_assert_uint_eq(droce_l3_hdr_len(&a), pkt->bth_off);

	m = rte_pktmbuf_alloc(test_pool);
	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(pkt->bth_off + l4_len));
	ck_assert_ptr_nonnull(p);
	off = droce_l3_hdr_write(m, &a, l4_len);
	ck_assert_uint_eq(off, pkt->bth_off);
	memcpy(p + off, f->d + off, l4_len);
	ck_assert_int_eq(droce_icrc_append(m, pkt->l3_off), 0);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f->len);
	ck_assert_msg(memcmp(p, f->d, f->len) == 0, "%s re-encodes differently",
		      pkt->op->name);
	rte_pktmbuf_free(m);
}

START_TEST(test_every_frame)
{
	const struct vdesc *vd = &vdesc[_i];
	unsigned count[256] = { 0 };
	unsigned listed = 0;
	struct vfile v;

	vfile_load(vd->name, &v);
	ck_assert_uint_eq(v.n, vd->frames);
	for (size_t i = 0; i < v.n; i++) {
		count[v.f[i].pkt.opcode]++;
		reencode(&v.f[i]);
	}
	for (size_t t = 0; t < RTE_DIM(vd->totals) && vd->totals[t].count; t++) {
		ck_assert_msg(count[vd->totals[t].opcode] == vd->totals[t].count,
			      "%s: %u x %s", vd->name, count[vd->totals[t].opcode],
			      droce_opcode_table[vd->totals[t].opcode].name);
		listed += vd->totals[t].count;
	}
	ck_assert_uint_eq(listed, v.n);
	vfile_free(&v);
}
END_TEST

/* ---- roce-v2.pcap, frame by frame ---- */

static const struct {
	uint8_t opcode;
	uint32_t qpn, psn;
	uint16_t sport;
	uint32_t payload;
	bool ackreq;
	bool from_requester;
} roce_v2_seq[11] = {
	{ DROCE_OP_SEND_ONLY,      0x34, 256, 49170, 13,  true,  true },
	{ DROCE_OP_ACK,            0x12, 256, 49204, 0,   false, false },
	{ DROCE_OP_WRITE_FIRST,    0x34, 257, 49170, 256, false, true },
	{ DROCE_OP_WRITE_MIDDLE,   0x34, 258, 49170, 256, false, true },
	{ DROCE_OP_WRITE_LAST,     0x34, 259, 49170, 128, true,  true },
	{ DROCE_OP_ACK,            0x12, 259, 49204, 0,   false, false },
	{ DROCE_OP_READ_REQUEST,   0x34, 260, 49170, 0,   true,  true },
	{ DROCE_OP_READ_RESP_ONLY, 0x12, 260, 49204, 64,  false, false },
	{ DROCE_OP_WRITE_ONLY,     0x34, 261, 49170, 16,  true,  true },
	{ DROCE_OP_ACK,            0x12, 261, 49204, 0,   false, false },
	{ UD(SEND_ONLY),           0x78, 0,   49238, 32,  false, true },
};

static const uint8_t gid_v4_1[16] = { [10] = 0xff, [11] = 0xff, 192, 168, 10, 1 };
static const uint8_t gid_v4_2[16] = { [10] = 0xff, [11] = 0xff, 192, 168, 10, 2 };
static const uint8_t gid_v6_1[16] = { 0xfd, 0x00, 0x00, 0x10, [15] = 1 };
static const uint8_t gid_v6_2[16] = { 0xfd, 0x00, 0x00, 0x10, [15] = 2 };

START_TEST(test_roce_v2)
{
	struct vfile v;

	vfile_load("roce-v2.pcap", &v);
	ck_assert_uint_eq(v.n, 2 * RTE_DIM(roce_v2_seq));
	for (size_t i = 0; i < v.n; i++) {
		size_t k = i % RTE_DIM(roce_v2_seq);
		bool v6 = i >= RTE_DIM(roce_v2_seq);
		const struct vframe *f = &v.f[i];
		const struct droce_pkt *pkt = &f->pkt;
		const uint8_t *req = v6 ? gid_v6_1 : gid_v4_1;
		const uint8_t *rsp = v6 ? gid_v6_2 : gid_v4_2;

		ck_assert_uint_eq(pkt->opcode, roce_v2_seq[k].opcode);
		ck_assert_uint_eq(pkt->qpn, roce_v2_seq[k].qpn);
		ck_assert_uint_eq(pkt->psn, roce_v2_seq[k].psn);
		ck_assert_uint_eq(pkt->udp_sport, roce_v2_seq[k].sport);
		ck_assert_uint_eq(pkt->payload_len, roce_v2_seq[k].payload);
		ck_assert_uint_eq(droce_bth_ackreq(BTH(f)), roce_v2_seq[k].ackreq);
		ck_assert_uint_eq(pkt->ipv6, v6);
		ck_assert_uint_eq(pkt->vlan_tci, 0);
		ck_assert_mem_eq(pkt->sgid, roce_v2_seq[k].from_requester ? req : rsp, 16);
		ck_assert_mem_eq(pkt->dgid, roce_v2_seq[k].from_requester ? rsp : req, 16);
		ck_assert_uint_eq(droce_bth_se(BTH(f)), k == 0);
		ck_assert_uint_eq(pkt->pad, k == 0 ? 3 : 0);
		if (v6) {
			const struct rte_ipv6_hdr *ip = (const void *)(f->d + pkt->l3_off);
			uint32_t vtc = rte_be_to_cpu_32(ip->vtc_flow);

			ck_assert_uint_eq((vtc >> 20) & 0xff, 0x02);
			ck_assert_uint_eq(vtc & 0xfffff, 0x12345);
			ck_assert_uint_eq(ip->hop_limits, 64);
		} else {
			ck_assert_uint_eq(ipv4_tos(f), 0x02);
		}
	}
	for (size_t base = 0; base < v.n; base += RTE_DIM(roce_v2_seq)) {
		const struct vframe *f = &v.f[base];

		ck_assert_uint_eq(rte_be_to_cpu_32(RETH(&f[2])->len), 640);
		ck_assert_uint_eq(rte_be_to_cpu_32(RETH(&f[6])->len), 64);
		ck_assert_uint_eq(rte_be_to_cpu_32(RETH(&f[8])->rkey), 0xdeadbeef);
		ck_assert_uint_eq(droce_aeth_syndrome(AETH(&f[1])), 0x1f);
		ck_assert_uint_eq(droce_aeth_msn(AETH(&f[1])), 1);
		ck_assert_uint_eq(droce_aeth_msn(AETH(&f[5])), 2);
		ck_assert_uint_eq(droce_aeth_msn(AETH(&f[7])), 3);
		ck_assert_uint_eq(droce_aeth_syndrome(AETH(&f[9])),
				  DROCE_AETH_NAK | DROCE_NAK_REM_ACCESS_ERR);
		ck_assert_uint_eq(droce_aeth_msn(AETH(&f[9])), 3);
		ck_assert_uint_eq(rte_be_to_cpu_32(DETH(&f[10])->qkey), 0x11111111);
		ck_assert_uint_eq(droce_get24(DETH(&f[10])->sqpn), 0x56);
	}
	vfile_free(&v);
}
END_TEST

/* ---- the rxe captures: what README.md says of every frame and flow ---- */

#define NO_PSN UINT32_MAX
#define MAX_MSGS 8
#define MAX_FLOWS 8

/* One run of a tool: its QPN (the same on both hosts) and first PSNs. */
struct vrun {
	uint32_t qpn;
	uint16_t sport;
	uint32_t psn_client, psn_server;  /**< first request PSN, or NO_PSN */
	uint32_t payload;  /**< of every packet that carries payload */
};

static const struct rxe_desc {
	const char *name;
	uint32_t mtu;
	unsigned nruns;
	struct vrun runs[2];
} rxe_desc[] = {
	{ "rxe-rc-send.pcap", 1024, 2, {
		{ 0x11, 49441, 0xb906ae, 0x39e071, 1024 },
		{ 0x12, 49476, 0xa8b602, 0xc9f34d, 16 } } },
	{ "rxe-rc-write.pcap", 1024, 2, {
		{ 0x13, 49513, 0x121116, NO_PSN, 1024 },
		{ 0x14, 49552, 0x845dfc, 0x57bd80, 8 } } },
	{ "rxe-rc-read.pcap", 1024, 1, {
		{ 0x15, 49593, 0x17ed3e, NO_PSN, 1024 } } },
	{ "rxe-rc-atomic.pcap", 1024, 2, {
		{ 0x16, 49636, 0x9c156e, NO_PSN, 0 },
		{ 0x17, 49681, 0xca9b26, NO_PSN, 0 } } },
	{ "rxe-ud-send.pcap", 1024, 2, {
		{ 0x18, 51891, 0x0afc28, 0x3ebe00, 1024 },
		{ 0x19, 58149, 0x2a1ace, 0x781331, 16 } } },
	{ "rxe-rc-mtu4096.pcap", 4096, 1, {
		{ 0x11, 49441, 0xb4464e, 0x701b42, 4096 } } },
};

#define RXE_SERVER 11
#define RXE_CLIENT 12

/* Last byte of an rxe host's address ::ffff:10.77.0.x. */
static uint8_t
rxe_host(const uint8_t gid[16])
{
	static const uint8_t prefix[15] = { [10] = 0xff, [11] = 0xff, 10, 77, 0 };

	ck_assert_mem_eq(gid, prefix, sizeof(prefix));
	ck_assert(gid[15] == RXE_SERVER || gid[15] == RXE_CLIENT);
	return gid[15];
}

/*
 * The requests one host sends to one QP, and the responses it gets back.
 * Both hosts use the same QPN in a run, so (requester, QPN) names a flow
 * from either end.
 */
struct flow {
	uint8_t host;
	uint32_t qpn;
	bool reliable;
	uint32_t first_psn, next_psn;
	uint32_t msg_first[MAX_MSGS], msg_last[MAX_MSGS];
	unsigned nmsg;      /**< messages requested */
	unsigned acked;     /**< MSN of the last message completed */
	uint32_t resp_next; /**< PSN of the next READ response */
};

struct flows {
	struct flow f[MAX_FLOWS];
	unsigned n;
};

static struct flow *
flow_get(struct flows *fl, uint8_t host, uint32_t qpn, bool create)
{
	for (unsigned i = 0; i < fl->n; i++)
		if (fl->f[i].host == host && fl->f[i].qpn == qpn)
			return &fl->f[i];
	ck_assert_msg(create, "response to host %u QP 0x%x before any request", host, qpn);
	ck_assert_uint_lt(fl->n, MAX_FLOWS);
	fl->f[fl->n] = (struct flow){ .host = host, .qpn = qpn, .first_psn = NO_PSN };
	return &fl->f[fl->n++];
}

/* Requests: PSNs without gaps, a READ taking one PSN per response packet. */
static void
flow_request(struct flows *fl, const struct vframe *f, uint32_t mtu)
{
	const struct droce_pkt *pkt = &f->pkt;
	struct flow *w = flow_get(fl, rxe_host(pkt->sgid), pkt->qpn, true);
	uint32_t npkts = 1;

	if (w->first_psn == NO_PSN) {
		w->first_psn = w->next_psn = pkt->psn;
		w->reliable = (pkt->opcode & DROCE_SVC_MASK) == DROCE_SVC_RC;
	}
	ck_assert_uint_eq(pkt->psn, w->next_psn);
	if (pkt->opcode == DROCE_OP_READ_REQUEST)
		npkts = (rte_be_to_cpu_32(RETH(f)->len) + mtu - 1) / mtu;
	if (pkt->op->flags & DROCE_OPF_FIRST)
		w->msg_first[w->nmsg] = pkt->psn;
	if (pkt->op->flags & DROCE_OPF_LAST) {
		ck_assert_uint_lt(w->nmsg, MAX_MSGS);
		w->msg_last[w->nmsg++] = droce_psn_add(pkt->psn, npkts - 1);
	}
	w->next_psn = droce_psn_add(pkt->psn, npkts);
}

/*
 * Responses: one ACK (or ATOMIC ACK, or last READ response) per message,
 * MSN counting messages from 1, carrying the PSN of the message's last
 * packet; READ responses walk the PSNs of their request.
 */
static void
flow_response(struct flows *fl, const struct vframe *f)
{
	const struct droce_pkt *pkt = &f->pkt;
	struct flow *w = flow_get(fl, rxe_host(pkt->dgid), pkt->qpn, false);
	uint32_t flags = pkt->op->flags;
	uint32_t msn = 0;

	if (flags & DROCE_OPF_AETH) {
		ck_assert_uint_eq(droce_aeth_syndrome(AETH(f)), DROCE_AETH_CREDIT_INVALID);
		msn = droce_aeth_msn(AETH(f));
	}
	if (flags & DROCE_OPF_READ) {
		if (flags & DROCE_OPF_FIRST) {
			ck_assert_uint_eq(msn, w->acked + 1);
			ck_assert_uint_eq(pkt->psn, w->msg_first[msn - 1]);
			w->resp_next = pkt->psn;
		}
		ck_assert_uint_eq(pkt->psn, w->resp_next);
		w->resp_next = droce_psn_add(w->resp_next, 1);
	}
	if (flags & DROCE_OPF_LAST) {
		ck_assert_uint_eq(msn, w->acked + 1);
		ck_assert_uint_le(msn, w->nmsg);
		ck_assert_uint_eq(pkt->psn, w->msg_last[msn - 1]);
		w->acked = msn;
	}
}

static bool
rxe_ackreq_expected(uint8_t opcode)
{
	switch (opcode) {
	case DROCE_OP_SEND_LAST: case DROCE_OP_SEND_ONLY:
	case DROCE_OP_WRITE_LAST: case DROCE_OP_WRITE_ONLY:
	case DROCE_OP_READ_REQUEST: case DROCE_OP_FETCH_ADD: case DROCE_OP_CMP_SWAP:
		return true;
	default:
		return false;
	}
}

/* "Common properties of every rxe-* frame". */
static void
check_rxe_common(const struct vframe *f, const struct vrun *run)
{
	const struct droce_pkt *pkt = &f->pkt;
	const struct rte_ipv4_hdr *ip = (const void *)(f->d + pkt->l3_off);
	const struct rte_udp_hdr *udp = (const void *)(f->d + pkt->l4_off);
	const struct droce_bth *bth = BTH(f);

	ck_assert(!pkt->ipv6);
	ck_assert_uint_eq(pkt->vlan_tci, 0);
	ck_assert_uint_eq(pkt->l3_off, sizeof(struct rte_ether_hdr));
	ck_assert_uint_eq(ip->type_of_service, 0);
	ck_assert_uint_eq(ip->time_to_live, 64);
	ck_assert_uint_eq(ip->fragment_offset, RTE_BE16(RTE_IPV4_HDR_DF_FLAG));
	ck_assert_uint_ne(ip->packet_id, 0);
	ck_assert_uint_eq(udp->dgram_cksum, 0);
	ck_assert_uint_eq(pkt->udp_sport, run->sport);
	ck_assert_uint_ne(rxe_host(pkt->sgid), rxe_host(pkt->dgid));
	ck_assert_uint_eq(bth->pkey, RTE_BE16(DROCE_PKEY_DEFAULT));
	/* SE, MigReq, pad count, TVer and FECN/BECN all 0. */
	ck_assert_uint_eq(bth->flags, 0);
	ck_assert_uint_eq(bth->resv8a, 0);
	ck_assert_uint_eq(droce_bth_ackreq(bth),
			  (pkt->opcode & DROCE_SVC_MASK) == DROCE_SVC_RC &&
			  rxe_ackreq_expected(pkt->opcode));
	if (pkt->op->flags & DROCE_OPF_PAYLOAD)
		ck_assert_uint_eq(pkt->payload_len, run->payload);
	if (pkt->op->flags & DROCE_OPF_DETH) {
		ck_assert_uint_eq(rte_be_to_cpu_32(DETH(f)->qkey), 0x11111111);
		ck_assert_uint_eq(droce_get24(DETH(f)->sqpn), pkt->qpn);
	}
}

START_TEST(test_rxe_flows)
{
	const struct rxe_desc *rd = &rxe_desc[_i];
	struct flows fl = { .n = 0 };
	struct vfile v;

	vfile_load(rd->name, &v);
	for (size_t i = 0; i < v.n; i++) {
		const struct vframe *f = &v.f[i];
		const struct vrun *run = NULL;

		for (unsigned r = 0; r < rd->nruns; r++)
			if (rd->runs[r].qpn == f->pkt.qpn)
				run = &rd->runs[r];
		ck_assert_msg(run != NULL, "%s frame %zu: QPN 0x%x", rd->name, i + 1,
			      f->pkt.qpn);
		check_rxe_common(f, run);
		if (f->pkt.op->flags & DROCE_OPF_REQ)
			flow_request(&fl, f, rd->mtu);
		else
			flow_response(&fl, f);
	}
	/* Each run's first PSNs, and every reliable message acknowledged. */
	for (unsigned r = 0; r < rd->nruns; r++) {
		const struct vrun *run = &rd->runs[r];

		ck_assert_uint_eq(flow_get(&fl, RXE_CLIENT, run->qpn, true)->first_psn,
				  run->psn_client);
		ck_assert_uint_eq(flow_get(&fl, RXE_SERVER, run->qpn, true)->first_psn,
				  run->psn_server);
	}
	for (unsigned i = 0; i < fl.n; i++)
		if (fl.f[i].reliable)
			ck_assert_uint_eq(fl.f[i].acked, fl.f[i].nmsg);
	vfile_free(&v);
}
END_TEST

START_TEST(test_rxe_write_reth)
{
	unsigned nfirst = 0, nonly = 0;
	struct vfile v;

	vfile_load("rxe-rc-write.pcap", &v);
	for (size_t i = 0; i < v.n; i++) {
		const struct vframe *f = &v.f[i];
		bool server = rxe_host(f->pkt.sgid) == RXE_SERVER;

		if (f->pkt.opcode == DROCE_OP_WRITE_FIRST) {
			ck_assert_uint_eq(rte_be_to_cpu_64(RETH(f)->va), 0x557213bec000);
			ck_assert_uint_eq(rte_be_to_cpu_32(RETH(f)->rkey), 0x41c);
			ck_assert_uint_eq(rte_be_to_cpu_32(RETH(f)->len), 8192);
			nfirst++;
		} else if (f->pkt.opcode == DROCE_OP_WRITE_ONLY) {
			/* The first WRITE_ONLY on the wire is the server's. */
			if (nonly++ == 0)
				ck_assert(server);
			ck_assert_uint_eq(rte_be_to_cpu_64(RETH(f)->va),
					  server ? 0x5604c1658000 : 0x55ab90e22000);
			ck_assert_uint_eq(rte_be_to_cpu_32(RETH(f)->rkey),
					  server ? 0x5aa : 0x515);
			ck_assert_uint_eq(rte_be_to_cpu_32(RETH(f)->len), 8);
		} else {
			ck_assert_ptr_null(vhdr(f, DROCE_HDR_RETH));
		}
	}
	ck_assert_uint_eq(nfirst, 5);
	ck_assert_uint_eq(nonly, 10);
	vfile_free(&v);
}
END_TEST

START_TEST(test_rxe_read)
{
	unsigned nreq = 0;
	uint32_t msn = 0;
	struct vfile v;

	vfile_load("rxe-rc-read.pcap", &v);
	for (size_t i = 0; i < v.n; i++) {
		const struct vframe *f = &v.f[i];

		switch (f->pkt.opcode) {
		case DROCE_OP_READ_REQUEST:
			/* Each request advances the PSN by its 8 response packets. */
			ck_assert_uint_eq(f->pkt.psn, droce_psn_add(0x17ed3e, 8 * nreq++));
			ck_assert_uint_eq(rte_be_to_cpu_64(RETH(f)->va), 0x562e95d30000);
			ck_assert_uint_eq(rte_be_to_cpu_32(RETH(f)->rkey), 0x6ea);
			ck_assert_uint_eq(rte_be_to_cpu_32(RETH(f)->len), 8192);
			ck_assert(droce_bth_ackreq(BTH(f)));
			break;
		case DROCE_OP_READ_RESP_MIDDLE:
			ck_assert_ptr_null(vhdr(f, DROCE_HDR_AETH));
			break;
		case DROCE_OP_READ_RESP_LAST:
			ck_assert_uint_eq(droce_aeth_msn(AETH(f)), ++msn);
			break;
		default:
			ck_assert_uint_eq(droce_aeth_syndrome(AETH(f)), 0x1f);
		}
	}
	ck_assert_uint_eq(nreq, 5);
	ck_assert_uint_eq(msn, 5);
	vfile_free(&v);
}
END_TEST

START_TEST(test_rxe_atomic)
{
	unsigned nack = 0;
	struct vfile v;

	vfile_load("rxe-rc-atomic.pcap", &v);
	for (size_t i = 0; i < v.n; i++) {
		const struct vframe *f = &v.f[i];

		switch (f->pkt.opcode) {
		case DROCE_OP_FETCH_ADD:
			ck_assert_uint_eq(rte_be_to_cpu_64(ATMETH(f)->swap_add), 1);
			ck_assert_uint_eq(ATMETH(f)->compare, 0);
			break;
		case DROCE_OP_CMP_SWAP:
			ck_assert_uint_eq(ATMETH(f)->swap_add, 0);
			ck_assert_uint_eq(ATMETH(f)->compare, 0);
			break;
		default:
			ck_assert_uint_eq(f->pkt.opcode, DROCE_OP_ATOMIC_ACK);
			ck_assert_uint_eq(droce_aeth_msn(AETH(f)), nack % 5 + 1);
			ck_assert_uint_ne(ATMACK(f)->orig, 0);
			nack++;
		}
	}
	ck_assert_uint_eq(nack, 10);
	vfile_free(&v);
}
END_TEST

START_TEST(test_rxe_ud)
{
	struct vfile v;

	vfile_load("rxe-ud-send.pcap", &v);
	/* Client and server take turns, the client first, in both runs. */
	for (size_t i = 0; i < v.n; i++)
		ck_assert_uint_eq(rxe_host(v.f[i].pkt.sgid),
				  i % 2 ? RXE_SERVER : RXE_CLIENT);
	vfile_free(&v);
}
END_TEST

Suite *
suite_vectors(void)
{
	Suite *s = suite_create("vectors");
	TCase *tc = tcase_create("all");

	tcase_add_loop_test(tc, test_every_frame, 0, RTE_DIM(vdesc));
	suite_add_tcase(s, tc);
	tc = tcase_create("readme");
	tcase_add_test(tc, test_roce_v2);
	tcase_add_loop_test(tc, test_rxe_flows, 0, RTE_DIM(rxe_desc));
	tcase_add_test(tc, test_rxe_write_reth);
	tcase_add_test(tc, test_rxe_read);
	tcase_add_test(tc, test_rxe_atomic);
	tcase_add_test(tc, test_rxe_ud);
	suite_add_tcase(s, tc);
	return s;
}
