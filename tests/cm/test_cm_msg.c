/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's message codec against the CM MADs two rxe peers exchanged
 * (tests/vectors/rxe-rdmacm.pcap: rping, then ucmatose with two
 * connections; tests/cm/vectors/rxe-cm-rej-sidr.pcap: REJ, SIDR REQ and
 * REP, see tests/cm/vectors/README.md): every MAD decodes, re-encodes byte
 * for byte, droce's CM answers rxe's requests with rxe's answers, and its
 * fields are what the kernel's rdma_cm put there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "droce_cm.h"
#include "droce_cm_msg.h"
#include "pcap_reader.h"

Suite *cm_msg_suite(void);

static struct pcap_file cap;
/* MADs of the capture, in order, and their frame numbers. */
static const uint8_t *mads[32];
static unsigned mad_frame[32];
static unsigned nmads;

/* The MAD of a UD SEND_ONLY to QPN 1 in an IPv4 RoCEv2 frame, or NULL. */
static const uint8_t *
frame_mad(const uint8_t *d, uint32_t len)
{
	const uint8_t *bth;

	if (len < 14 + 20 + 8 + 12 + 8 + DROCE_MAD_SIZE + 4 || d[12] != 0x08 || d[13] != 0)
		return NULL;
	bth = d + 14 + (d[14] & 0xf) * 4 + 8;
	if (bth[0] != 0x64 || bth[5] != 0 || bth[6] != 0 || bth[7] != DROCE_GSI_QPN)
		return NULL;
	return bth + 12 + 8;
}

/* The BTH PSN of frame @p n (from 1) of the capture, IPv4. */
static uint32_t
bth_psn(unsigned n)
{
	const uint8_t *d = cap.frames[n - 1].data;
	const uint8_t *bth = d + 14 + (d[14] & 0xf) * 4 + 8;

	return (uint32_t)(bth[9] << 16 | bth[10] << 8 | bth[11]);
}

/* Load @p name from the folder $@p env names, and its MADs. */
static void
load(const char *env, const char *name)
{
	const char *dir = getenv(env);
	char path[4096];

	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(pcap_load(path, &cap), 0);
	for (size_t i = 0; i < cap.n; i++) {
		const uint8_t *m = frame_mad(cap.frames[i].data, cap.frames[i].len);

		if (m != NULL && nmads < 32) {
			mad_frame[nmads] = (unsigned)i + 1;
			mads[nmads++] = m;
		}
	}
}

static void
setup(void)
{
	load("DROCE_VECTORS", "rxe-rdmacm.pcap");
}

static void
setup_rej_sidr(void)
{
	load("DROCE_CM_VECTORS", "rxe-cm-rej-sidr.pcap");
}

static void
teardown(void)
{
	pcap_free(&cap);
	nmads = 0;
}

/* Every MAD of the capture is @p want[i], and re-encodes byte for byte. */
static void
round_trips(const uint16_t *want, unsigned n)
{
	ck_assert_uint_eq(nmads, n);
	for (unsigned i = 0; i < nmads; i++) {
		struct droce_cm_msg m;
		uint8_t out[DROCE_MAD_SIZE];

		ck_assert_int_eq(droce_cm_msg_decode(mads[i], &m), 0);
		ck_assert_msg(m.hdr.attr_id == want[i], "frame %u: %s", mad_frame[i],
			      droce_cm_attr_name(m.hdr.attr_id));
		droce_cm_msg_encode(&m, out);
		ck_assert_msg(memcmp(out, mads[i], DROCE_MAD_SIZE) == 0,
			      "frame %u (%s) does not re-encode", mad_frame[i],
			      droce_cm_attr_name(m.hdr.attr_id));
	}
}

START_TEST(every_mad_round_trips)
{
	static const uint16_t want[] = {
		DROCE_CM_REQ, DROCE_CM_REP, DROCE_CM_RTU, DROCE_CM_DREQ, DROCE_CM_DREP,
		DROCE_CM_REQ, DROCE_CM_REQ, DROCE_CM_REP, DROCE_CM_REP, DROCE_CM_RTU,
		DROCE_CM_RTU, DROCE_CM_DREQ, DROCE_CM_DREQ, DROCE_CM_DREP, DROCE_CM_DREP,
	};

	round_trips(want, sizeof(want) / sizeof(want[0]));
}
END_TEST

/* rping's REQ, REP, RTU, DREQ, DREP: what rdma_cm negotiates, field by field. */
START_TEST(rping_connection_fields)
{
	static const uint8_t client_gid[16] = { [10] = 0xff, 0xff, 10, 77, 0, 12 };
	static const uint8_t server_gid[16] = { [10] = 0xff, 0xff, 10, 77, 0, 11 };
	struct droce_cm_msg req, rep, rtu, dreq, drep;
	struct droce_cma_hdr ch;

	ck_assert_int_eq(droce_cm_msg_decode(mads[0], &req), 0);
	ck_assert_int_eq(droce_cm_msg_decode(mads[1], &rep), 0);
	ck_assert_int_eq(droce_cm_msg_decode(mads[2], &rtu), 0);
	ck_assert_int_eq(droce_cm_msg_decode(mads[3], &dreq), 0);
	ck_assert_int_eq(droce_cm_msg_decode(mads[4], &drep), 0);

	/* One transaction ID for the whole connection, both directions. */
	ck_assert_uint_eq(req.hdr.tid, 0x0000000285ff1a43ull);
	ck_assert_uint_eq(rep.hdr.tid, req.hdr.tid);
	ck_assert_uint_eq(drep.hdr.tid, req.hdr.tid);

	ck_assert_uint_eq(req.req.local_comm_id, 0x431aff85);
	/* RDMA_PS_TCP, rping's port 7174. */
	ck_assert_uint_eq(req.req.service_id, DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_TCP, 7174));
	ck_assert_uint_eq(req.req.local_ca_guid, 0x505400fffe77000cull);
	ck_assert_uint_eq(req.req.local_qpn, 0x11);
	ck_assert_uint_eq(req.req.responder_resources, 1);
	ck_assert_uint_eq(req.req.initiator_depth, 1);
	ck_assert_uint_eq(req.req.starting_psn, 0xffd33e);
	ck_assert_uint_eq(req.req.remote_cm_response_timeout, 20);
	ck_assert_uint_eq(req.req.local_cm_response_timeout, 20);
	ck_assert_uint_eq(req.req.retry_count, 7);
	ck_assert_uint_eq(req.req.rnr_retry_count, 7);
	ck_assert_uint_eq(req.req.max_cm_retries, 15);
	ck_assert_uint_eq(req.req.pkey, 0xffff);
	ck_assert_uint_eq(req.req.path_mtu, 3); /* IBV_MTU_1024 */
	ck_assert_uint_eq(req.req.transport_type, 0);
	ck_assert_uint_eq(req.req.primary.local_lid, 0xffff);
	ck_assert_mem_eq(req.req.primary.local_gid, client_gid, 16);
	ck_assert_mem_eq(req.req.primary.remote_gid, server_gid, 16);
	ck_assert_uint_eq(req.req.primary.hop_limit, 64);
	ck_assert_uint_eq(req.req.primary.local_ack_timeout, 19);

	ck_assert_int_eq(droce_cma_hdr_decode(req.req.private_data, &ch), 0);
	ck_assert_uint_eq(ch.ip_version, 4);
	ck_assert_uint_eq(ch.src_port, 0xe118);
	ck_assert_mem_eq(ch.src_addr + 12, client_gid + 12, 4);
	ck_assert_mem_eq(ch.dst_addr + 12, server_gid + 12, 4);

	ck_assert_uint_eq(rep.rep.local_comm_id, 0x6258be0e);
	ck_assert_uint_eq(rep.rep.remote_comm_id, req.req.local_comm_id);
	ck_assert_uint_eq(rep.rep.local_qpn, 0x11);
	ck_assert_uint_eq(rep.rep.starting_psn, 0xfb14b3);
	ck_assert_uint_eq(rep.rep.responder_resources, 1);
	ck_assert_uint_eq(rep.rep.initiator_depth, 1);
	ck_assert_uint_eq(rep.rep.target_ack_delay, 15);
	ck_assert_uint_eq(rep.rep.rnr_retry_count, 7);
	ck_assert_uint_eq(rep.rep.local_ca_guid, 0x505400fffe77000bull);

	/* Each side sends from the PSN the other's message carries: the
	 * client's first SEND (frame 4) from the REP's, the server's RDMA
	 * READ request (frame 6) from the REQ's. */
	ck_assert_uint_eq(bth_psn(4), rep.rep.starting_psn);
	ck_assert_uint_eq(bth_psn(6), req.req.starting_psn);

	ck_assert_uint_eq(rtu.rtu.local_comm_id, req.req.local_comm_id);
	ck_assert_uint_eq(rtu.rtu.remote_comm_id, rep.rep.local_comm_id);
	/* The client disconnects: its DREQ names the server's QP. */
	ck_assert_uint_eq(dreq.dreq.local_comm_id, req.req.local_comm_id);
	ck_assert_uint_eq(dreq.dreq.remote_qpn, rep.rep.local_qpn);
	ck_assert_uint_eq(drep.rtu.local_comm_id, rep.rep.local_comm_id);
}
END_TEST

/* The messages the capture lacks: encode, decode, same struct. */
START_TEST(rej_mra_round_trip)
{
	struct droce_cm_msg a, b;
	uint8_t mad[DROCE_MAD_SIZE];

	droce_cm_msg_init(&a, DROCE_CM_REJ, 0x1234567890abcdefull);
	a.rej.local_comm_id = 7;
	a.rej.remote_comm_id = 0xdeadbeef;
	a.rej.msg_rejected = DROCE_CM_REF_REQ;
	a.rej.reason = DROCE_REJ_INVALID_SERVICE_ID;
	a.rej.private_data[0] = 0x5a;
	a.rej.private_data[DROCE_CM_REJ_PDATA - 1] = 0xa5;
	droce_cm_msg_encode(&a, mad);
	/* The reason at MAD data byte 10, big-endian (IBA Table 109). */
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 10], 0);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 11], DROCE_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(mad[DROCE_MAD_SIZE - 1], 0xa5);
	ck_assert_int_eq(droce_cm_msg_decode(mad, &b), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));

	droce_cm_msg_init(&a, DROCE_CM_MRA, 1);
	a.mra.local_comm_id = 1;
	a.mra.remote_comm_id = 2;
	a.mra.msg_mraed = DROCE_CM_REF_REP;
	a.mra.service_timeout = 31;
	droce_cm_msg_encode(&a, mad);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 8], DROCE_CM_REF_REP << 6);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 9], 31 << 3);
	ck_assert_int_eq(droce_cm_msg_decode(mad, &b), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
}
END_TEST

/* SIDR REQ and REP: the fields where IBA Tables 117 and 118 put them. */
START_TEST(sidr_round_trip)
{
	static const uint8_t rep_head[24] = {
		0x11, 0x22, 0x33, 0x44,         /* request ID */
		DROCE_SIDR_SUCCESS, 0, 0, 0,    /* status, info length */
		0x00, 0x00, 0x12, 0,            /* QPN */
		0, 0, 0, 0, 0x01, 0x11, 0x1c, 0x06, /* service ID: UDP port 7174 */
		0x01, 0x23, 0x45, 0x67,         /* Q_Key */
	};
	struct droce_cm_msg a, b;
	uint8_t mad[DROCE_MAD_SIZE];

	droce_cm_msg_init(&a, DROCE_CM_SIDR_REQ, 0x1234567890abcdefull);
	a.sidr_req.request_id = 0x11223344;
	a.sidr_req.pkey = 0xffff;
	a.sidr_req.service_id = DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174);
	a.sidr_req.private_data[0] = 0x5a;
	a.sidr_req.private_data[DROCE_CM_SIDR_REQ_PDATA - 1] = 0xa5;
	droce_cm_msg_encode(&a, mad);
	ck_assert_uint_eq(mad[17], DROCE_CM_SIDR_REQ);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 3], 0x44);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 4], 0xff);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 15], 0x06);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 16], 0x5a);
	ck_assert_uint_eq(mad[DROCE_MAD_SIZE - 1], 0xa5);
	ck_assert_int_eq(droce_cm_msg_decode(mad, &b), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
	ck_assert_str_eq(droce_cm_attr_name(DROCE_CM_SIDR_REQ), "SIDR_REQ");

	droce_cm_msg_init(&a, DROCE_CM_SIDR_REP, 1);
	a.sidr_rep.request_id = 0x11223344;
	a.sidr_rep.qpn = 0x12;
	a.sidr_rep.service_id = DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174);
	a.sidr_rep.qkey = DROCE_RDMA_UDP_QKEY;
	a.sidr_rep.info[0] = 0x77;
	a.sidr_rep.private_data[0] = 0x5a;
	a.sidr_rep.private_data[DROCE_CM_SIDR_REP_PDATA - 1] = 0xa5;
	droce_cm_msg_encode(&a, mad);
	ck_assert_mem_eq(mad + DROCE_MAD_HDR_SIZE, rep_head, sizeof(rep_head));
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 24], 0x77);
	ck_assert_uint_eq(mad[DROCE_MAD_HDR_SIZE + 96], 0x5a);
	ck_assert_uint_eq(mad[DROCE_MAD_SIZE - 1], 0xa5);
	ck_assert_int_eq(droce_cm_msg_decode(mad, &b), 0);
	ck_assert_mem_eq(&a, &b, sizeof(a));
}
END_TEST

/*
 * tests/cm/vectors/rxe-cm-rej-sidr.pcap: rping to a port nobody listens on
 * (REQ, REJ 8); ucmatose, 2 connections to a server that takes 1 (REQ,
 * REQ, REP, REJ 28, RTU, then the server's DREQ and the DREP); udaddy
 * (SIDR REQ, SIDR REP, UD SENDs); udaddy with nobody listening (SIDR REQ,
 * SIDR REP status 1).
 */
enum { REQ_NOBODY, REJ_8, REQ_OK, REQ_REFUSED, REP_OK, REJ_28, RTU_OK, DREQ_SRV, DREP_CLI,
       SIDR_REQ_OK, SIDR_REP_OK, SIDR_REQ_NOBODY, SIDR_REP_1, REJ_SIDR_MADS };

START_TEST(rej_sidr_round_trip)
{
	static const uint16_t want[REJ_SIDR_MADS] = {
		DROCE_CM_REQ, DROCE_CM_REJ, DROCE_CM_REQ, DROCE_CM_REQ, DROCE_CM_REP,
		DROCE_CM_REJ, DROCE_CM_RTU, DROCE_CM_DREQ, DROCE_CM_DREP,
		DROCE_CM_SIDR_REQ, DROCE_CM_SIDR_REP, DROCE_CM_SIDR_REQ, DROCE_CM_SIDR_REP,
	};

	round_trips(want, REJ_SIDR_MADS);
}
END_TEST

static struct droce_cm_msg
msg(unsigned i)
{
	struct droce_cm_msg m;

	ck_assert_int_eq(droce_cm_msg_decode(mads[i], &m), 0);
	return m;
}

START_TEST(rej_sidr_fields)
{
	static const uint8_t server_ip[4] = { 10, 77, 0, 11 }, client_ip[4] = { 10, 77, 0, 12 };
	struct droce_cm_msg m = msg(REJ_8), req = msg(REQ_NOBODY);
	struct droce_cma_hdr ch;

	/* The stateless REJ: no ID of its own, the REQ's transaction. */
	ck_assert_uint_eq(m.rej.reason, DROCE_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(m.rej.msg_rejected, DROCE_CM_REF_REQ);
	ck_assert_uint_eq(m.rej.local_comm_id, 0);
	ck_assert_uint_eq(m.rej.remote_comm_id, req.req.local_comm_id);
	ck_assert_uint_eq(m.hdr.tid, req.hdr.tid);
	/* ucmatose's server refuses the second connection. */
	m = msg(REJ_28);
	req = msg(REQ_REFUSED);
	ck_assert_uint_eq(m.rej.reason, DROCE_REJ_CONSUMER_DEFINED);
	ck_assert_uint_eq(m.rej.remote_comm_id, req.req.local_comm_id);
	ck_assert_uint_eq(m.hdr.tid, req.hdr.tid);
	/* The passive side's DREQ is a transaction of its own; the DREP answers it. */
	ck_assert_uint_ne(msg(DREQ_SRV).hdr.tid, msg(REQ_OK).hdr.tid);
	ck_assert_uint_eq(msg(DREP_CLI).hdr.tid, msg(DREQ_SRV).hdr.tid);

	m = msg(SIDR_REQ_OK);
	ck_assert_uint_eq(m.sidr_req.pkey, 0xffff);
	ck_assert_uint_eq(m.sidr_req.service_id, DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174));
	ck_assert_int_eq(droce_cma_hdr_decode(m.sidr_req.private_data, &ch), 0);
	ck_assert_uint_eq(ch.ip_version, 4);
	ck_assert_mem_eq(ch.src_addr + 12, client_ip, 4);
	ck_assert_mem_eq(ch.dst_addr + 12, server_ip, 4);
	req = m;
	m = msg(SIDR_REP_OK);
	ck_assert_uint_eq(m.hdr.tid, req.hdr.tid);
	ck_assert_uint_eq(m.sidr_rep.request_id, req.sidr_req.request_id);
	ck_assert_uint_eq(m.sidr_rep.status, DROCE_SIDR_SUCCESS);
	ck_assert_uint_eq(m.sidr_rep.qpn, 0x12);
	ck_assert_uint_eq(m.sidr_rep.qkey, DROCE_RDMA_UDP_QKEY);
	ck_assert_uint_eq(m.sidr_rep.service_id, req.sidr_req.service_id);
	/* udaddy's UD SENDs (with immediate) carry that Q_Key in their DETH. */
	for (unsigned f = mad_frame[SIDR_REP_OK]; f < mad_frame[SIDR_REQ_NOBODY] - 1; f++) {
		const uint8_t *d = cap.frames[f].data;
		const uint8_t *bth = d + 14 + (d[14] & 0xf) * 4 + 8;

		ck_assert_uint_eq(bth[0], 0x65); /* UD SEND_ONLY_WITH_IMMEDIATE */
		ck_assert_uint_eq((uint32_t)bth[12] << 24 | bth[13] << 16 | bth[14] << 8 | bth[15],
				  DROCE_RDMA_UDP_QKEY);
	}
	/* Nobody listens: status 1, the service ID echoed, no QP. */
	m = msg(SIDR_REP_1);
	ck_assert_uint_eq(m.sidr_rep.status, DROCE_SIDR_UNSUPPORTED);
	ck_assert_uint_eq(m.sidr_rep.service_id, DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174));
	ck_assert_uint_eq(m.sidr_rep.qpn, 0);
	ck_assert_uint_eq(m.sidr_rep.qkey, 0);
}
END_TEST

/* droce's CM in rxe's server's place: what it sends, and its events. */
static uint8_t answer[DROCE_MAD_SIZE];
static unsigned answers;
static struct droce_cm_id *asked;

static int
answer_send(void *arg, const uint8_t gid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	(void)arg;
	(void)gid;
	memcpy(answer, mad, DROCE_MAD_SIZE);
	answers++;
	return 0;
}

static void
answer_event(void *arg, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	(void)arg;
	(void)ev;
	asked = id;
}

static uint64_t
answer_now(void *arg)
{
	(void)arg;
	return 0;
}

/* Give droce's CM MAD @p in; its answer must be MAD @p out, byte for byte. */
static void
answers_as_rxe(struct droce_cm *cm, unsigned in, unsigned out)
{
	static const uint8_t client_gid[16] = { [10] = 0xff, 0xff, 10, 77, 0, 12 };

	answers = 0;
	droce_cm_recv(cm, client_gid, mads[in]);
	ck_assert_uint_eq(answers, 1);
	ck_assert_msg(memcmp(answer, mads[out], DROCE_MAD_SIZE) == 0,
		      "frame %u: droce's %s differs", mad_frame[out],
		      droce_cm_attr_name(msg(out).hdr.attr_id));
}

START_TEST(droce_answers_as_rxe)
{
	static const struct droce_cm_ops ops = { .send = answer_send, .event = answer_event,
						 .now = answer_now };
	struct droce_cm *cm = droce_cm_create(&ops, NULL, 0x505400fffe77000bull);
	struct droce_cm_id *udp = droce_cm_id_create(cm, NULL), *tcp = droce_cm_id_create(cm, NULL);
	struct droce_cm_sidr_rep rep = { .qpn = 0x12, .qkey = DROCE_RDMA_UDP_QKEY };
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	ck_assert_ptr_nonnull(cm);
	/* Nobody listens: REJ 8, SIDR REP status 1. */
	answers_as_rxe(cm, REQ_NOBODY, REJ_8);
	answers_as_rxe(cm, SIDR_REQ_NOBODY, SIDR_REP_1);
	/* udaddy's server: the SIDR REP naming QP 0x12. */
	ck_assert_int_eq(droce_cm_listen(udp, DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174)), 0);
	asked = NULL;
	droce_cm_recv(cm, mads[0], mads[SIDR_REQ_OK]);
	ck_assert_ptr_nonnull(asked);
	ck_assert_int_eq(droce_cm_send_sidr_rep(asked, &rep), 0);
	ck_assert_mem_eq(answer, mads[SIDR_REP_OK], DROCE_MAD_SIZE);
	/* A consumer's REJ, but for the communication ID, which is droce's own. */
	ck_assert_int_eq(droce_cm_listen(tcp, DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_TCP, 7471)), 0);
	asked = NULL;
	droce_cm_recv(cm, mads[0], mads[REQ_REFUSED]);
	ck_assert_ptr_nonnull(asked);
	ck_assert_int_eq(droce_cm_send_rej(asked, DROCE_REJ_CONSUMER_DEFINED, NULL, 0), 0);
	ck_assert_int_eq(droce_cm_msg_decode(answer, &m), 0);
	m.rej.local_comm_id = msg(REJ_28).rej.local_comm_id;
	droce_cm_msg_encode(&m, mad);
	ck_assert_mem_eq(mad, mads[REJ_28], DROCE_MAD_SIZE);
	droce_cm_destroy(cm);
}
END_TEST

START_TEST(foreign_mads_refused)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	droce_cm_msg_init(&m, DROCE_CM_RTU, 1);
	droce_cm_msg_encode(&m, mad);
	mad[1] = 0x03; /* SA class */
	ck_assert_int_eq(droce_cm_msg_decode(mad, &m), -EPROTONOSUPPORT);
	mad[1] = DROCE_MGMT_CLASS_CM;
	mad[DROCE_MAD_HDR_SIZE - 8 + 1] = 0x19; /* LAP */
	ck_assert_int_eq(droce_cm_msg_decode(mad, &m), -ENOTSUP);
	ck_assert_str_eq(droce_cm_attr_name(0x19), "?");
}
END_TEST

Suite *
cm_msg_suite(void)
{
	Suite *s = suite_create("cm_msg");
	TCase *tc = tcase_create("codec");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, every_mad_round_trips);
	tcase_add_test(tc, rping_connection_fields);
	tcase_add_test(tc, rej_mra_round_trip);
	tcase_add_test(tc, sidr_round_trip);
	tcase_add_test(tc, foreign_mads_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("rxe_rej_sidr");
	tcase_add_checked_fixture(tc, setup_rej_sidr, teardown);
	tcase_add_test(tc, rej_sidr_round_trip);
	tcase_add_test(tc, rej_sidr_fields);
	tcase_add_test(tc, droce_answers_as_rxe);
	suite_add_tcase(s, tc);
	return s;
}
