/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a hostile peer's MADs into the IB CM (lib/cm), what
 * QP1 hands it from the wire. The CM has a listener, makes connections
 * and SIDR requests of its own, and its consumer answers as rdma_cm does
 * (accept, reject, go away), all as the input says: a run of steps, each
 * one byte saying what happens next and the bytes after it the details.
 *
 *   deliver    a CM message built from a well-formed template of the kind
 *              the input names (its IDs those the CM uses, so it reaches
 *              the states past the first message), then bytes of it
 *              overwritten where the input says
 *   raw        256 bytes of the input as they come
 *   time       the clock moved on (up to minutes) and the CM's timer run
 *   connect    a REQ or SIDR REQ of the CM's own, to one of two peers
 *   act        a disconnect or a destroy of one of the CM's IDs, or the
 *              farewell of them all (a process's exit)
 *
 * Besides the sanitizers' checks (ASan, UBSan, leaks), every MAD the CM
 * sends must decode as a CM message: it never answers hostile input with
 * a malformed one. Built with the fuzzing build (-Dfuzz=true); CI runs it
 * a fixed number of times (tests/fuzz/run_fuzz.sh).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "droce_cm.h"

#define MAX_IDS 32
/* Slots 0 and 1: the listeners (connections, UD services), which stay. */
#define LISTENERS 2
#define SERVICE DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_TCP, 7174)
#define SERVICE_UD DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174)

enum step { STEP_DELIVER, STEP_RAW, STEP_TIME, STEP_CONNECT, STEP_ACT, STEP_KINDS };

static const uint8_t peers[2][16] = {
	{ [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
	{ 0xfe, 0x80, [8] = 0x02, [11] = 0xff, [12] = 0xfe, [15] = 3 },
};
static const uint16_t attrs[] = {
	DROCE_CM_REQ, DROCE_CM_MRA, DROCE_CM_REJ, DROCE_CM_REP, DROCE_CM_RTU,
	DROCE_CM_DREQ, DROCE_CM_DREP, DROCE_CM_SIDR_REQ, DROCE_CM_SIDR_REP,
};

static const uint8_t *in;
static size_t in_left;
static uint64_t clock_us;
static struct droce_cm_id *ids[MAX_IDS];
/* Let go of by the consumer in an event: destroyed after the call that
 * delivered it returns (the handler may only queue, droce_cm.h). */
static bool doomed[MAX_IDS];
/* What the CM said last: the IDs a peer's answer names. */
static uint32_t cm_comm_id, cm_request_id, cm_qpn;
static uint64_t cm_tid;

static uint8_t
take(void)
{
	if (in_left == 0)
		return 0;
	in_left--;
	return *in++;
}

static uint32_t
take32(void)
{
	return (uint32_t)take() | (uint32_t)take() << 8 | (uint32_t)take() << 16 |
	       (uint32_t)take() << 24;
}

static int
id_slot(const struct droce_cm_id *id)
{
	for (int i = 0; i < MAX_IDS; i++)
		if (ids[i] == id)
			return i;
	return -1;
}

/* Remember @p id (a new one of an event, or of a connect); with no room
 * left it stays in the CM until the CM goes. */
static void
id_keep(struct droce_cm_id *id)
{
	int i = id_slot(NULL);

	if (i >= 0) {
		ids[i] = id;
		doomed[i] = false;
	}
}

static void
ids_reap(void)
{
	for (int i = LISTENERS; i < MAX_IDS; i++)
		if (doomed[i]) {
			droce_cm_id_destroy(ids[i]);
			ids[i] = NULL;
			doomed[i] = false;
		}
}

static uint64_t
fz_now(void *arg)
{
	(void)arg;
	return clock_us;
}

static int
fz_send(void *arg, const uint8_t gid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	struct droce_cm_msg m;

	(void)arg;
	(void)gid;
	/* What the CM sends is a message it would take itself. */
	if (droce_cm_msg_decode(mad, &m) != 0)
		abort();
	cm_tid = m.hdr.tid;
	switch (m.hdr.attr_id) {
	case DROCE_CM_REQ:
		cm_comm_id = m.req.local_comm_id;
		cm_qpn = m.req.local_qpn;
		break;
	case DROCE_CM_SIDR_REQ:
		cm_request_id = m.sidr_req.request_id;
		break;
	case DROCE_CM_SIDR_REP:
		break;
	default:
		cm_comm_id = m.rtu.local_comm_id; /* every other message starts so */
		break;
	}
	/* A send that fails now and then, as a full send ring does. */
	return take() == 0xff ? -ENOMEM : 0;
}

/* The consumer, as rdma_cm answers: what the input says. */
static void
fz_event(void *arg, struct droce_cm_id *id, const struct droce_cm_event *ev)
{
	struct droce_cma_hdr h;
	uint8_t choice = take();

	(void)arg;
	switch (ev->type) {
	case DROCE_CM_EV_REQ_RECEIVED:
		/* The rdma_cm header of its private data, as lib/rdmacm reads it. */
		(void)droce_cma_hdr_decode(ev->msg->req.private_data, &h);
		if (choice % 4 == 0) {
			struct droce_cm_rep rep = { .local_qpn = take32() & 0xffffff,
						    .starting_psn = take32() & 0xffffff,
						    .responder_resources = take(),
						    .initiator_depth = take() };

			droce_cm_send_rep(id, &rep);
		} else if (choice % 4 == 1) {
			droce_cm_send_rej(id, DROCE_REJ_CONSUMER_DEFINED, in, in_left < 148 ? 0 : 148);
		} else if (choice % 4 == 2) {
			droce_cm_send_mra(id, take());
		}
		id_keep(id);
		break;
	case DROCE_CM_EV_SIDR_REQ_RECEIVED:
		(void)droce_cma_hdr_decode(ev->msg->sidr_req.private_data, &h);
		if (choice & 1) {
			struct droce_cm_sidr_rep rep = { .status = take() % 8, .qpn = take32() & 0xffffff,
							 .qkey = take32() };

			droce_cm_send_sidr_rep(id, &rep);
		}
		id_keep(id);
		break;
	case DROCE_CM_EV_REP_RECEIVED:
		if (choice & 1)
			droce_cm_send_rtu(id, NULL, 0);
		else
			droce_cm_send_rej(id, DROCE_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case DROCE_CM_EV_DREQ_RECEIVED:
		if (choice & 1)
			droce_cm_send_drep(id, NULL, 0);
		break;
	default:
		/* An error or an answer: the consumer may let go of the ID. */
		if (choice % 8 == 0) {
			int i = id_slot(id);

			if (i >= LISTENERS)
				doomed[i] = true;
		}
		break;
	}
}

static const struct droce_cm_ops ops = { .send = fz_send, .event = fz_event, .now = fz_now };

/* A well-formed message of kind @p attr, its IDs the CM's where it has
 * some, its transaction ID the CM's last. */
static void
template(struct droce_cm_msg *m, uint16_t attr)
{
	droce_cm_msg_init(m, (enum droce_cm_attr)attr, take() & 1 ? cm_tid : take32());
	switch (attr) {
	case DROCE_CM_REQ:
		m->req.local_comm_id = take32();
		m->req.service_id = take() & 1 ? SERVICE : SERVICE_UD;
		m->req.local_qpn = take32() & 0xffffff;
		m->req.starting_psn = take32() & 0xffffff;
		m->req.path_mtu = take() % 6;
		m->req.local_cm_response_timeout = take() % 32;
		m->req.max_cm_retries = take() % 16;
		m->req.primary.local_ack_timeout = take() % 32;
		m->req.pkey = DROCE_GSI_PKEY;
		break;
	case DROCE_CM_SIDR_REQ:
		m->sidr_req.request_id = take32();
		m->sidr_req.service_id = take() & 1 ? SERVICE_UD : SERVICE;
		m->sidr_req.pkey = DROCE_GSI_PKEY;
		break;
	case DROCE_CM_SIDR_REP:
		m->sidr_rep.request_id = cm_request_id;
		m->sidr_rep.status = take() % 8;
		m->sidr_rep.qpn = take32() & 0xffffff;
		m->sidr_rep.service_id = SERVICE_UD;
		break;
	case DROCE_CM_REP:
		m->rep.local_comm_id = take32();
		m->rep.remote_comm_id = cm_comm_id;
		m->rep.local_qpn = take32() & 0xffffff;
		m->rep.starting_psn = take32() & 0xffffff;
		break;
	case DROCE_CM_DREQ:
		m->dreq.local_comm_id = take32();
		m->dreq.remote_comm_id = cm_comm_id;
		m->dreq.remote_qpn = cm_qpn;
		break;
	default: /* MRA, REJ, RTU, DREP: the two IDs first */
		m->rtu.local_comm_id = take32();
		m->rtu.remote_comm_id = cm_comm_id;
		if (attr == DROCE_CM_REJ) {
			m->rej.reason = take();
			m->rej.msg_rejected = take() % 4;
			m->rej.reject_info_length = take();
		} else if (attr == DROCE_CM_MRA) {
			m->mra.msg_mraed = take() % 4;
			m->mra.service_timeout = take();
		}
		break;
	}
}

static void
step_deliver(struct droce_cm *cm)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];
	unsigned n;

	template(&m, attrs[take() % (sizeof(attrs) / sizeof(attrs[0]))]);
	droce_cm_msg_encode(&m, mad);
	/* Then some bytes, anywhere in the MAD, as the input has them. */
	for (n = take() % 8; n > 0; n--) {
		uint8_t at = take();

		mad[at] = take();
	}
	droce_cm_recv(cm, peers[take() & 1], mad);
}

static void
step_raw(struct droce_cm *cm)
{
	uint8_t mad[DROCE_MAD_SIZE] = { 0 };
	size_t n = in_left < sizeof(mad) ? in_left : sizeof(mad);

	memcpy(mad, in, n);
	in += n;
	in_left -= n;
	droce_cm_recv(cm, peers[mad[0] & 1], mad);
}

static void
step_connect(struct droce_cm *cm)
{
	struct droce_cm_id *id = droce_cm_id_create(cm, NULL);
	const uint8_t *gid = peers[take() & 1];

	if (id == NULL)
		return;
	if (take() & 1) {
		struct droce_cm_sidr_req req = { .service_id = SERVICE_UD, .pkey = DROCE_GSI_PKEY };

		droce_cm_send_sidr_req(id, gid, &req, 1000u << (take() % 16), take() % 16);
	} else {
		struct droce_cm_timing t = { .packet_life_time = take() % 32,
					     .cm_response_timeout = take() % 32 };
		struct droce_cm_req req = { .service_id = SERVICE, .local_qpn = take32() & 0xffffff,
					    .starting_psn = take32() & 0xffffff,
					    .path_mtu = 5, .max_cm_retries = take() % 16,
					    .pkey = DROCE_GSI_PKEY };

		droce_cm_send_req(id, gid, &req, &t);
	}
	id_keep(id);
}

static void
step_act(struct droce_cm *cm)
{
	int i = LISTENERS + take() % (MAX_IDS - LISTENERS);

	switch (take() % 3) {
	case 0:
		if (ids[i] != NULL)
			droce_cm_send_dreq(ids[i], NULL, 0);
		break;
	case 1:
		if (ids[i] != NULL)
			doomed[i] = true;
		break;
	default:
		/* The process's exit: every ID says goodbye, and stays. */
		droce_cm_farewell(cm);
		droce_cm_disconnecting(cm);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_cm *cm;

	in = data;
	in_left = size;
	clock_us = 1000000;
	cm_comm_id = cm_request_id = cm_qpn = 0;
	cm_tid = 0;
	memset(ids, 0, sizeof(ids));
	memset(doomed, 0, sizeof(doomed));
	cm = droce_cm_create(&ops, NULL, 0x0200000000000001ull);
	if (cm == NULL)
		return 0;
	ids[0] = droce_cm_id_create(cm, NULL);
	ids[1] = droce_cm_id_create(cm, NULL);
	if (ids[0] == NULL || ids[1] == NULL || droce_cm_listen(ids[0], SERVICE) != 0 ||
	    droce_cm_listen(ids[1], SERVICE_UD) != 0) {
		droce_cm_destroy(cm);
		return 0;
	}
	droce_cm_lock(cm);
	while (in_left > 0) {
		switch (take() % STEP_KINDS) {
		case STEP_DELIVER:
			step_deliver(cm);
			break;
		case STEP_RAW:
			step_raw(cm);
			break;
		case STEP_TIME:
			clock_us += (uint64_t)take() << (take() % 28);
			droce_cm_timer(cm);
			break;
		case STEP_CONNECT:
			step_connect(cm);
			break;
		default:
			step_act(cm);
			break;
		}
		ids_reap();
	}
	droce_cm_unlock(cm);
	droce_cm_destroy(cm);
	return 0;
}
