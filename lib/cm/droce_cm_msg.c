/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM messages to and from MADs. Each message is a table of fields: where
 * the field sits in the MAD data (bit offset from the first data byte,
 * big-endian bit order, as IBA Vol. 1 chapter 12's tables give them), its
 * width, and where it lives in the struct. Fields of a whole number of
 * bytes wider than 64 bits are byte strings.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "droce_cm_msg.h"

struct field {
	uint16_t bit;      /**< from the start of the MAD data */
	uint16_t bits;
	uint16_t off;      /**< in the message struct */
	uint8_t size;      /**< of the struct member: 1, 2, 4, 8; 0 for a byte string */
};

#define F(type, bit, bits, member) \
	{ (bit), (bits), offsetof(type, member), \
	  (bits) > 64 ? 0 : sizeof(((type *)0)->member) }

/* A path, at bit offset B of the REQ data. */
#define PATH(B, p) \
	F(struct droce_cm_req, (B), 16, p.local_lid), \
	F(struct droce_cm_req, (B) + 16, 16, p.remote_lid), \
	F(struct droce_cm_req, (B) + 32, 128, p.local_gid), \
	F(struct droce_cm_req, (B) + 160, 128, p.remote_gid), \
	F(struct droce_cm_req, (B) + 288, 20, p.flow_label), \
	F(struct droce_cm_req, (B) + 314, 6, p.packet_rate), \
	F(struct droce_cm_req, (B) + 320, 8, p.traffic_class), \
	F(struct droce_cm_req, (B) + 328, 8, p.hop_limit), \
	F(struct droce_cm_req, (B) + 336, 4, p.sl), \
	F(struct droce_cm_req, (B) + 340, 1, p.subnet_local), \
	F(struct droce_cm_req, (B) + 344, 5, p.local_ack_timeout)

static const struct field req_fields[] = {
	F(struct droce_cm_req, 0, 32, local_comm_id),
	F(struct droce_cm_req, 64, 64, service_id),
	F(struct droce_cm_req, 128, 64, local_ca_guid),
	F(struct droce_cm_req, 224, 32, local_qkey),
	F(struct droce_cm_req, 256, 24, local_qpn),
	F(struct droce_cm_req, 280, 8, responder_resources),
	F(struct droce_cm_req, 288, 24, local_eecn),
	F(struct droce_cm_req, 312, 8, initiator_depth),
	F(struct droce_cm_req, 320, 24, remote_eecn),
	F(struct droce_cm_req, 344, 5, remote_cm_response_timeout),
	F(struct droce_cm_req, 349, 2, transport_type),
	F(struct droce_cm_req, 351, 1, end_to_end_flow_control),
	F(struct droce_cm_req, 352, 24, starting_psn),
	F(struct droce_cm_req, 376, 5, local_cm_response_timeout),
	F(struct droce_cm_req, 381, 3, retry_count),
	F(struct droce_cm_req, 384, 16, pkey),
	F(struct droce_cm_req, 400, 4, path_mtu),
	F(struct droce_cm_req, 404, 1, rdc_exists),
	F(struct droce_cm_req, 405, 3, rnr_retry_count),
	F(struct droce_cm_req, 408, 4, max_cm_retries),
	F(struct droce_cm_req, 412, 1, srq),
	F(struct droce_cm_req, 413, 3, extended_transport),
	PATH(416, primary),
	PATH(768, alternate),
	F(struct droce_cm_req, 1120, DROCE_CM_REQ_PDATA * 8, private_data),
};

static const struct field mra_fields[] = {
	F(struct droce_cm_mra, 0, 32, local_comm_id),
	F(struct droce_cm_mra, 32, 32, remote_comm_id),
	F(struct droce_cm_mra, 64, 2, msg_mraed),
	F(struct droce_cm_mra, 72, 5, service_timeout),
	F(struct droce_cm_mra, 80, DROCE_CM_MRA_PDATA * 8, private_data),
};

static const struct field rej_fields[] = {
	F(struct droce_cm_rej, 0, 32, local_comm_id),
	F(struct droce_cm_rej, 32, 32, remote_comm_id),
	F(struct droce_cm_rej, 64, 2, msg_rejected),
	F(struct droce_cm_rej, 72, 7, reject_info_length),
	F(struct droce_cm_rej, 80, 16, reason),
	F(struct droce_cm_rej, 96, DROCE_CM_REJ_ARI * 8, ari),
	F(struct droce_cm_rej, 672, DROCE_CM_REJ_PDATA * 8, private_data),
};

static const struct field rep_fields[] = {
	F(struct droce_cm_rep, 0, 32, local_comm_id),
	F(struct droce_cm_rep, 32, 32, remote_comm_id),
	F(struct droce_cm_rep, 64, 32, local_qkey),
	F(struct droce_cm_rep, 96, 24, local_qpn),
	F(struct droce_cm_rep, 128, 24, local_eecn),
	F(struct droce_cm_rep, 160, 24, starting_psn),
	F(struct droce_cm_rep, 192, 8, responder_resources),
	F(struct droce_cm_rep, 200, 8, initiator_depth),
	F(struct droce_cm_rep, 208, 5, target_ack_delay),
	F(struct droce_cm_rep, 213, 2, failover_accepted),
	F(struct droce_cm_rep, 215, 1, end_to_end_flow_control),
	F(struct droce_cm_rep, 216, 3, rnr_retry_count),
	F(struct droce_cm_rep, 219, 1, srq),
	F(struct droce_cm_rep, 224, 64, local_ca_guid),
	F(struct droce_cm_rep, 288, DROCE_CM_REP_PDATA * 8, private_data),
};

/* RTU and DREP share a layout. */
static const struct field rtu_fields[] = {
	F(struct droce_cm_rtu, 0, 32, local_comm_id),
	F(struct droce_cm_rtu, 32, 32, remote_comm_id),
	F(struct droce_cm_rtu, 64, DROCE_CM_RTU_PDATA * 8, private_data),
};

static const struct field dreq_fields[] = {
	F(struct droce_cm_dreq, 0, 32, local_comm_id),
	F(struct droce_cm_dreq, 32, 32, remote_comm_id),
	F(struct droce_cm_dreq, 64, 24, remote_qpn),
	F(struct droce_cm_dreq, 96, DROCE_CM_DREQ_PDATA * 8, private_data),
};

static const struct field sidr_req_fields[] = {
	F(struct droce_cm_sidr_req, 0, 32, request_id),
	F(struct droce_cm_sidr_req, 32, 16, pkey),
	F(struct droce_cm_sidr_req, 64, 64, service_id),
	F(struct droce_cm_sidr_req, 128, DROCE_CM_SIDR_REQ_PDATA * 8, private_data),
};

static const struct field sidr_rep_fields[] = {
	F(struct droce_cm_sidr_rep, 0, 32, request_id),
	F(struct droce_cm_sidr_rep, 32, 8, status),
	F(struct droce_cm_sidr_rep, 40, 8, additional_info_length),
	F(struct droce_cm_sidr_rep, 64, 24, qpn),
	F(struct droce_cm_sidr_rep, 96, 64, service_id),
	F(struct droce_cm_sidr_rep, 160, 32, qkey),
	F(struct droce_cm_sidr_rep, 192, DROCE_CM_SIDR_REP_INFO * 8, info),
	F(struct droce_cm_sidr_rep, 768, DROCE_CM_SIDR_REP_PDATA * 8, private_data),
};

struct layout {
	const char *name;
	const struct field *f;
	unsigned n;
};

#define LAYOUT(name, t) { name, t, sizeof(t) / sizeof((t)[0]) }

static const struct layout *
layout_of(uint16_t attr)
{
	static const struct layout l[] = {
		[DROCE_CM_REQ - DROCE_CM_REQ] = LAYOUT("REQ", req_fields),
		[DROCE_CM_MRA - DROCE_CM_REQ] = LAYOUT("MRA", mra_fields),
		[DROCE_CM_REJ - DROCE_CM_REQ] = LAYOUT("REJ", rej_fields),
		[DROCE_CM_REP - DROCE_CM_REQ] = LAYOUT("REP", rep_fields),
		[DROCE_CM_RTU - DROCE_CM_REQ] = LAYOUT("RTU", rtu_fields),
		[DROCE_CM_DREQ - DROCE_CM_REQ] = LAYOUT("DREQ", dreq_fields),
		[DROCE_CM_DREP - DROCE_CM_REQ] = LAYOUT("DREP", rtu_fields),
		[DROCE_CM_SIDR_REQ - DROCE_CM_REQ] = LAYOUT("SIDR_REQ", sidr_req_fields),
		[DROCE_CM_SIDR_REP - DROCE_CM_REQ] = LAYOUT("SIDR_REP", sidr_rep_fields),
	};

	if (attr < DROCE_CM_REQ || attr > DROCE_CM_SIDR_REP)
		return NULL;
	return &l[attr - DROCE_CM_REQ];
}

const char *
droce_cm_attr_name(uint16_t attr_id)
{
	const struct layout *l = layout_of(attr_id);

	return l != NULL ? l->name : "?";
}

/* Read @p bits (at most 64) big-endian bits at bit @p bit of @p p. */
static uint64_t
bits_get(const uint8_t *p, unsigned bit, unsigned bits)
{
	uint64_t v = 0;

	for (unsigned i = bit; i < bit + bits; i++)
		v = (v << 1) | ((p[i / 8] >> (7 - i % 8)) & 1);
	return v;
}

static void
bits_put(uint8_t *p, unsigned bit, unsigned bits, uint64_t v)
{
	for (unsigned i = bit + bits; i-- > bit; v >>= 1) {
		uint8_t m = (uint8_t)(1u << (7 - i % 8));

		p[i / 8] = (uint8_t)((p[i / 8] & ~m) | ((v & 1) ? m : 0));
	}
}

static uint64_t
member_get(const uint8_t *s, const struct field *f)
{
	switch (f->size) {
	case 1: return *(const uint8_t *)(s + f->off);
	case 2: return *(const uint16_t *)(const void *)(s + f->off);
	case 4: return *(const uint32_t *)(const void *)(s + f->off);
	default: return *(const uint64_t *)(const void *)(s + f->off);
	}
}

static void
member_put(uint8_t *s, const struct field *f, uint64_t v)
{
	switch (f->size) {
	case 1: *(uint8_t *)(s + f->off) = (uint8_t)v; break;
	case 2: *(uint16_t *)(void *)(s + f->off) = (uint16_t)v; break;
	case 4: *(uint32_t *)(void *)(s + f->off) = (uint32_t)v; break;
	default: *(uint64_t *)(void *)(s + f->off) = v; break;
	}
}

void
droce_cm_msg_init(struct droce_cm_msg *m, enum droce_cm_attr attr, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = DROCE_MAD_BASE_VERSION;
	m->hdr.mgmt_class = DROCE_MGMT_CLASS_CM;
	m->hdr.class_version = DROCE_CM_CLASS_VERSION;
	m->hdr.method = DROCE_MAD_METHOD_SEND;
	m->hdr.tid = tid;
	m->hdr.attr_id = attr;
}

int
droce_cm_msg_decode(const uint8_t mad[DROCE_MAD_SIZE], struct droce_cm_msg *m)
{
	const uint8_t *d = mad + DROCE_MAD_HDR_SIZE;
	const struct layout *l;
	uint8_t *s = (uint8_t *)&m->req;

	memset(m, 0, sizeof(*m));
	m->hdr.base_version = mad[0];
	m->hdr.mgmt_class = mad[1];
	m->hdr.class_version = mad[2];
	m->hdr.method = mad[3];
	m->hdr.status = (uint16_t)bits_get(mad, 32, 16);
	m->hdr.class_specific = (uint16_t)bits_get(mad, 48, 16);
	m->hdr.tid = bits_get(mad, 64, 64);
	m->hdr.attr_id = (uint16_t)bits_get(mad, 128, 16);
	m->hdr.attr_mod = (uint32_t)bits_get(mad, 160, 32);
	if (m->hdr.base_version != DROCE_MAD_BASE_VERSION ||
	    m->hdr.mgmt_class != DROCE_MGMT_CLASS_CM ||
	    m->hdr.class_version != DROCE_CM_CLASS_VERSION ||
	    m->hdr.method != DROCE_MAD_METHOD_SEND)
		return -EPROTONOSUPPORT;
	l = layout_of(m->hdr.attr_id);
	if (l == NULL)
		return -ENOTSUP;
	for (unsigned i = 0; i < l->n; i++) {
		const struct field *f = &l->f[i];

		if (f->size == 0)
			memcpy(s + f->off, d + f->bit / 8, f->bits / 8);
		else
			member_put(s, f, bits_get(d, f->bit, f->bits));
	}
	return 0;
}

void
droce_cm_msg_encode(const struct droce_cm_msg *m, uint8_t mad[DROCE_MAD_SIZE])
{
	const struct layout *l = layout_of(m->hdr.attr_id);
	const uint8_t *s = (const uint8_t *)&m->req;
	uint8_t *d = mad + DROCE_MAD_HDR_SIZE;

	memset(mad, 0, DROCE_MAD_SIZE);
	mad[0] = m->hdr.base_version;
	mad[1] = m->hdr.mgmt_class;
	mad[2] = m->hdr.class_version;
	mad[3] = m->hdr.method;
	bits_put(mad, 32, 16, m->hdr.status);
	bits_put(mad, 48, 16, m->hdr.class_specific);
	bits_put(mad, 64, 64, m->hdr.tid);
	bits_put(mad, 128, 16, m->hdr.attr_id);
	bits_put(mad, 160, 32, m->hdr.attr_mod);
	for (unsigned i = 0; l != NULL && i < l->n; i++) {
		const struct field *f = &l->f[i];

		if (f->size == 0)
			memcpy(d + f->bit / 8, s + f->off, f->bits / 8);
		else
			bits_put(d, f->bit, f->bits, member_get(s, f));
	}
}

int
droce_cma_hdr_decode(const uint8_t *pdata, struct droce_cma_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->ip_version = pdata[1] >> 4;
	h->src_port = (uint16_t)(pdata[2] << 8 | pdata[3]);
	memcpy(h->src_addr, pdata + 4, 16);
	memcpy(h->dst_addr, pdata + 20, 16);
	if (pdata[0] != DROCE_CMA_VERSION || (h->ip_version != 4 && h->ip_version != 6))
		return -EPROTO;
	return 0;
}

void
droce_cma_hdr_encode(const struct droce_cma_hdr *h, uint8_t *pdata)
{
	pdata[0] = DROCE_CMA_VERSION;
	pdata[1] = (uint8_t)(h->ip_version << 4);
	pdata[2] = (uint8_t)(h->src_port >> 8);
	pdata[3] = (uint8_t)h->src_port;
	memcpy(pdata + 4, h->src_addr, 16);
	memcpy(pdata + 20, h->dst_addr, 16);
}
