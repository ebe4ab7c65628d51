/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's state machine: two CMs joined by a queue of MADs that the test
 * can lose, on a clock the test moves. Connect, disconnect, refuse,
 * reject, lose messages, outlive a peer; resolve a UD service (SIDR).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "droce_cm.h"

#define NSIDE 2
#define QLEN 64
#define NEV 32
#define SERVICE DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_TCP, 7174)

struct ev {
	struct droce_cm_id *id;
	enum droce_cm_event_type type;
	struct droce_cm_id *listener;
	struct droce_cm_msg msg;
};

/* One side: its CM, what it sent, what it was told. */
struct side {
	struct droce_cm *cm;
	uint8_t gid[16];
	unsigned drop;                 /**< lose this many of the next MADs it sends */
	bool dead;                     /**< lose everything it sends */
	unsigned sent[DROCE_CM_SIDR_REP + 1];
	struct ev ev[NEV];
	unsigned nev;
};

static struct side sides[NSIDE];
static uint64_t clock_us;
/* What side 0's REQs say: 2^8 ms packet lifetime, 2^12 ms to answer. */
static struct droce_cm_timing req_timing;
static struct {
	int to;
	uint8_t mad[DROCE_MAD_SIZE];
} q[QLEN];
static unsigned qhead, qtail;

static uint64_t
now(void *arg)
{
	(void)arg;
	return clock_us;
}

static int
send_mad(void *arg, const uint8_t gid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	struct side *s = arg;
	uint16_t attr = (uint16_t)(mad[16] << 8 | mad[17]);

	ck_assert_uint_le(attr, DROCE_CM_SIDR_REP);
	s->sent[attr]++;
	if (s->dead || (s->drop > 0 && s->drop--))
		return 0;
	ck_assert_uint_lt(qtail - qhead, QLEN);
	q[qtail % QLEN].to = memcmp(gid, sides[0].gid, 16) == 0 ? 0 : 1;
	memcpy(q[qtail % QLEN].mad, mad, DROCE_MAD_SIZE);
	qtail++;
	return 0;
}

static void
on_event(void *arg, struct droce_cm_id *id, const struct droce_cm_event *e)
{
	struct side *s = arg;
	struct ev *v = &s->ev[s->nev++];

	ck_assert_uint_lt(s->nev, NEV);
	v->id = id;
	v->type = e->type;
	v->listener = e->listener;
	if (e->msg != NULL)
		v->msg = *e->msg;
}

static const struct droce_cm_ops ops = { .send = send_mad, .event = on_event, .now = now };

/* Deliver every queued MAD, and what the deliveries send. */
static void
pump(void)
{
	while (qhead != qtail) {
		int to = q[qhead % QLEN].to;
		uint8_t mad[DROCE_MAD_SIZE];

		memcpy(mad, q[qhead % QLEN].mad, DROCE_MAD_SIZE);
		qhead++;
		droce_cm_recv(sides[to].cm, sides[!to].gid, mad);
	}
}

/* Move the clock to each side's next deadline until @p until. */
static void
run_until(uint64_t until)
{
	for (;;) {
		uint64_t next = UINT64_MAX;

		for (int i = 0; i < NSIDE; i++) {
			uint64_t n = droce_cm_timer(sides[i].cm);

			next = n < next ? n : next;
		}
		pump();
		if (next > until)
			break;
		clock_us = next;
	}
	clock_us = until;
}

static struct ev *
last(int side)
{
	ck_assert_uint_gt(sides[side].nev, 0);
	return &sides[side].ev[sides[side].nev - 1];
}

static void
setup(void)
{
	memset(sides, 0, sizeof(sides));
	qhead = qtail = 0;
	clock_us = 1000000;
	req_timing.packet_life_time = 16;
	req_timing.cm_response_timeout = 20;
	for (int i = 0; i < NSIDE; i++) {
		sides[i].gid[10] = sides[i].gid[11] = 0xff;
		sides[i].gid[15] = (uint8_t)(11 + i);
		sides[i].cm = droce_cm_create(&ops, &sides[i], 0x505400fffe770000ull + i);
		ck_assert_ptr_nonnull(sides[i].cm);
	}
}

static void
teardown(void)
{
	for (int i = 0; i < NSIDE; i++)
		droce_cm_destroy(sides[i].cm);
}

/* Side 0 connects to side 1's listener; returns side 0's ID. */
static struct droce_cm_id *
send_req(void)
{
	struct droce_cm_id *a = droce_cm_id_create(sides[0].cm, NULL);
	struct droce_cm_req req = {
		.service_id = SERVICE, .local_qpn = 0x11, .starting_psn = 0xabcdef,
		.responder_resources = 1, .initiator_depth = 1, .remote_cm_response_timeout = 20,
		.retry_count = 7, .rnr_retry_count = 7, .max_cm_retries = 15, .pkey = 0xffff,
		.path_mtu = 3,
	};

	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(droce_cm_send_req(a, sides[1].gid, &req, &req_timing), 0);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_REQ_SENT);
	return a;
}

static struct droce_cm_id *
listen1(void)
{
	struct droce_cm_id *l = droce_cm_id_create(sides[1].cm, NULL);

	ck_assert_int_eq(droce_cm_listen(l, SERVICE), 0);
	return l;
}

/* A full connection to listener @p l; *@p pa and *@p pb are the two ends. */
static void
connect_via(struct droce_cm_id *l, struct droce_cm_id **pa, struct droce_cm_id **pb)
{
	unsigned nev = sides[1].nev;
	struct droce_cm_id *a = send_req(), *b;
	struct droce_cm_rep rep = { .local_qpn = 0x12, .starting_psn = 0x123456,
				    .responder_resources = 1, .initiator_depth = 1,
				    .rnr_retry_count = 7 };

	pump();
	ck_assert_uint_eq(sides[1].nev, nev + 1);
	ck_assert_int_eq(last(1)->type, DROCE_CM_EV_REQ_RECEIVED);
	ck_assert_ptr_eq(last(1)->listener, l);
	ck_assert_uint_eq(last(1)->msg.req.local_qpn, 0x11);
	ck_assert_uint_eq(last(1)->msg.req.starting_psn, 0xabcdef);
	b = last(1)->id;
	ck_assert_int_eq(droce_cm_id_state(b), DROCE_CM_REQ_RCVD);
	ck_assert_mem_eq(droce_cm_id_remote_gid(b), sides[0].gid, 16);
	ck_assert_int_eq(droce_cm_send_rep(b, &rep), 0);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_REP_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.rep.local_qpn, 0x12);
	ck_assert_uint_eq(last(0)->msg.hdr.tid, last(1)->msg.hdr.tid);
	ck_assert_int_eq(droce_cm_send_rtu(a, "hi", 2), 0);
	pump();
	ck_assert_int_eq(last(1)->type, DROCE_CM_EV_RTU_RECEIVED);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_ESTABLISHED);
	ck_assert_int_eq(droce_cm_id_state(b), DROCE_CM_ESTABLISHED);
	*pa = a;
	*pb = b;
}

/* A full connection to a new listener. */
static void
connect(struct droce_cm_id **pa, struct droce_cm_id **pb)
{
	connect_via(listen1(), pa, pb);
}

START_TEST(connect_and_disconnect)
{
	struct droce_cm_id *a, *b;

	connect(&a, &b);
	ck_assert_int_eq(droce_cm_send_dreq(a, NULL, 0), 0);
	pump();
	ck_assert_int_eq(last(1)->type, DROCE_CM_EV_DREQ_RECEIVED);
	ck_assert_uint_eq(last(1)->msg.dreq.remote_qpn, 0x12);
	ck_assert_int_eq(droce_cm_send_drep(b, NULL, 0), 0);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_DREP_RECEIVED);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT);
	/* Nothing is left to retransmit. */
	run_until(clock_us + 600000000ull);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_DREQ], 1);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 1);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_REP], 1);
}
END_TEST

START_TEST(no_listener_is_refused)
{
	struct droce_cm_id *a = send_req();

	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_REJ_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.rej.reason, DROCE_REJ_INVALID_SERVICE_ID);
	ck_assert_uint_eq(last(0)->msg.rej.msg_rejected, DROCE_CM_REF_REQ);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_IDLE);
	ck_assert_uint_eq(sides[1].nev, 0);
	/* A second listener on the same service is refused. */
	listen1();
	ck_assert_int_eq(droce_cm_listen(droce_cm_id_create(sides[1].cm, NULL), SERVICE),
			 -EADDRINUSE);
}
END_TEST

START_TEST(consumer_reject_carries_private_data)
{
	struct droce_cm_id *a;

	listen1();
	a = send_req();
	pump();
	ck_assert_int_eq(droce_cm_send_rej(last(1)->id, DROCE_REJ_CONSUMER_DEFINED, "nope", 4), 0);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_REJ_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.rej.reason, DROCE_REJ_CONSUMER_DEFINED);
	ck_assert_mem_eq(last(0)->msg.rej.private_data, "nope", 4);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_IDLE);
}
END_TEST

/* Lost REQs are sent again after 2 packet lifetimes + the response timeout
 * (2 * 256 ms + 4096 ms); the listener sees one REQ. */
START_TEST(lost_req_is_retransmitted)
{
	uint64_t t0 = clock_us;

	listen1();
	sides[0].drop = 2;
	send_req();
	run_until(t0 + 4608000 - 1);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 1);
	run_until(t0 + 2 * 4608000);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 3);
	ck_assert_uint_eq(sides[1].nev, 1);
	ck_assert_int_eq(last(1)->type, DROCE_CM_EV_REQ_RECEIVED);
}
END_TEST

/* A REQ sent again while our REP is out gets the REP again, no new ID. */
START_TEST(duplicate_req_gets_the_rep_again)
{
	struct droce_cm_rep rep = { .local_qpn = 0x12 };

	/* The REP is retried after 16 s, the REQ after 4.6 s. */
	req_timing.cm_response_timeout = 22;
	listen1();
	send_req();
	pump();
	sides[1].drop = 1;
	ck_assert_int_eq(droce_cm_send_rep(last(1)->id, &rep), 0);
	pump();
	ck_assert_uint_eq(sides[0].nev, 0);
	run_until(clock_us + 4608000);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 2);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_REP], 2);
	ck_assert_uint_eq(sides[1].nev, 1);
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_REP_RECEIVED);
}
END_TEST

/* A peer that never answers: 1 + max_cm_retries REQs, then REQ_ERROR. */
START_TEST(silent_peer_times_out)
{
	struct droce_cm_id *a;

	sides[1].dead = true;
	a = send_req();
	run_until(clock_us + 16 * 4608000ull - 1);
	ck_assert_uint_eq(sides[0].nev, 0);
	run_until(clock_us + 2);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 16);
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_REQ_ERROR);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_IDLE);
}
END_TEST

/* The server goes away mid-connection: our DREQ is retried, then given up. */
START_TEST(dreq_to_a_dead_peer)
{
	struct droce_cm_id *a, *b;

	connect(&a, &b);
	sides[1].dead = true;
	ck_assert_int_eq(droce_cm_send_dreq(a, NULL, 0), 0);
	run_until(clock_us + 20 * 4608000ull);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_DREQ], 16);
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_DREQ_ERROR);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_TIMEWAIT);
}
END_TEST

/* A peer that destroyed its end still answers a DREQ (cm.c's stateless DREP);
 * destroying an established end sends a DREQ. */
START_TEST(destroyed_end)
{
	struct droce_cm_id *a, *b;

	connect(&a, &b);
	sides[1].dead = true;
	droce_cm_id_destroy(b);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_DREQ], 1);
	sides[1].dead = false;
	ck_assert_int_eq(droce_cm_send_dreq(a, NULL, 0), 0);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_DREP_RECEIVED);
}
END_TEST

/*
 * A process's exit: every ID says what its destroy would, and stays. An
 * established end sends a DREQ (retried until the DREP), an end that got
 * a DREQ answers it, a request not yet accepted is rejected; listeners
 * and ended connections send nothing, and a second farewell nothing more.
 */
START_TEST(farewell_keeps_the_ids)
{
	struct droce_cm_id *l = listen1(), *a, *b, *c, *d, *e;
	unsigned nev;

	connect_via(l, &a, &b);
	connect_via(l, &c, &d);
	ck_assert_int_eq(droce_cm_send_dreq(c, NULL, 0), 0);
	pump();
	ck_assert_int_eq(droce_cm_id_state(d), DROCE_CM_DREQ_RCVD);
	e = send_req();
	pump();
	ck_assert_int_eq(last(1)->type, DROCE_CM_EV_REQ_RECEIVED);
	/* Side 1: b established, d with a DREQ to answer, the new request. */
	nev = sides[0].nev;
	ck_assert_uint_eq(droce_cm_farewell(sides[1].cm), 3);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_DREQ], 1);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_DREP], 1);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_REJ], 1);
	ck_assert_int_eq(droce_cm_id_state(b), DROCE_CM_DREQ_SENT);
	ck_assert_int_eq(droce_cm_id_state(d), DROCE_CM_TIMEWAIT);
	ck_assert_int_eq(droce_cm_id_state(last(1)->id), DROCE_CM_IDLE);
	ck_assert_uint_eq(droce_cm_disconnecting(sides[1].cm), 1);
	ck_assert_uint_eq(droce_cm_farewell(sides[1].cm), 0);
	pump();
	ck_assert_uint_eq(sides[0].nev, nev + 3);
	ck_assert_int_eq(sides[0].ev[nev].type, DROCE_CM_EV_DREQ_RECEIVED);
	ck_assert_ptr_eq(sides[0].ev[nev].id, a);
	ck_assert_int_eq(sides[0].ev[nev + 1].type, DROCE_CM_EV_DREP_RECEIVED);
	ck_assert_ptr_eq(sides[0].ev[nev + 1].id, c);
	ck_assert_int_eq(droce_cm_id_state(c), DROCE_CM_TIMEWAIT);
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_REJ_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.rej.reason, DROCE_REJ_CONSUMER_DEFINED);
	ck_assert_int_eq(droce_cm_id_state(e), DROCE_CM_IDLE);
	/* The DREQ is retried while side 0 does not answer; its DREP ends it. */
	run_until(clock_us + 4608000);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_DREQ], 2);
	ck_assert_int_eq(droce_cm_send_drep(a, NULL, 0), 0);
	pump();
	ck_assert_int_eq(droce_cm_id_state(b), DROCE_CM_TIMEWAIT);
	ck_assert_uint_eq(droce_cm_disconnecting(sides[1].cm), 0);
	droce_cm_id_destroy(b);
	droce_cm_id_destroy(d);
}
END_TEST

/* MRA: the active side waits service_timeout longer before retrying. */
START_TEST(mra_extends_the_wait)
{
	struct droce_cm_id *a;

	listen1();
	a = send_req();
	pump();
	ck_assert_int_eq(droce_cm_send_mra(last(1)->id, 24), 0);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_MRA_RECEIVED);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_MRA_REQ_RCVD);
	/* 2^16 ms + 256 ms from now, no REQ again. */
	run_until(clock_us + 65536000 + 256000 - 1);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 1);
	run_until(clock_us + 2);
	/* The retransmitted REQ is answered with the MRA again. */
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_REQ], 2);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_MRA], 2);
}
END_TEST

#define UD_SERVICE DROCE_CMA_SERVICE_ID(DROCE_RDMA_PS_UDP, 7174)

/* Side 0 asks side 1 which QP serves UD_SERVICE, 4.096 s a try. */
static struct droce_cm_id *
send_sidr_req(void)
{
	struct droce_cm_id *a = droce_cm_id_create(sides[0].cm, NULL);
	struct droce_cm_sidr_req req = { .pkey = 0xffff, .service_id = UD_SERVICE,
					 .private_data = { 0, 0x40 } };

	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(droce_cm_send_sidr_req(a, sides[1].gid, &req, 4096000, 15), 0);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_SIDR_REQ_SENT);
	return a;
}

/* The listener gets the request on a new ID, its answer names the QP. */
START_TEST(sidr_resolves_a_service)
{
	struct droce_cm_id *l = droce_cm_id_create(sides[1].cm, NULL), *a, *b;
	struct droce_cm_sidr_rep rep = { .qpn = 0x12, .qkey = DROCE_RDMA_UDP_QKEY,
					 .private_data = "ok" };

	ck_assert_int_eq(droce_cm_listen(l, UD_SERVICE), 0);
	a = send_sidr_req();
	pump();
	ck_assert_uint_eq(sides[1].nev, 1);
	ck_assert_int_eq(last(1)->type, DROCE_CM_EV_SIDR_REQ_RECEIVED);
	ck_assert_ptr_eq(last(1)->listener, l);
	ck_assert_uint_eq(last(1)->msg.sidr_req.private_data[1], 0x40);
	b = last(1)->id;
	ck_assert_int_eq(droce_cm_id_state(b), DROCE_CM_SIDR_REQ_RCVD);
	ck_assert_int_eq(droce_cm_send_sidr_rep(b, &rep), 0);
	ck_assert_int_eq(droce_cm_id_state(b), DROCE_CM_IDLE);
	/* Answered once. */
	ck_assert_int_eq(droce_cm_send_sidr_rep(b, &rep), -EINVAL);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_SIDR_REP_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.sidr_rep.status, DROCE_SIDR_SUCCESS);
	ck_assert_uint_eq(last(0)->msg.sidr_rep.qpn, 0x12);
	ck_assert_uint_eq(last(0)->msg.sidr_rep.qkey, DROCE_RDMA_UDP_QKEY);
	ck_assert_uint_eq(last(0)->msg.sidr_rep.service_id, UD_SERVICE);
	ck_assert_str_eq((const char *)last(0)->msg.sidr_rep.private_data, "ok");
	ck_assert_uint_eq(last(0)->msg.hdr.tid, last(1)->msg.hdr.tid);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_IDLE);
	/* Nothing is retransmitted after. */
	run_until(clock_us + 100000000ull);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_SIDR_REQ], 1);
	ck_assert_uint_eq(sides[1].sent[DROCE_CM_SIDR_REP], 1);
}
END_TEST

/* Nobody listens: status UNSUPPORTED at once, no event on side 1. */
START_TEST(sidr_no_listener)
{
	struct droce_cm_id *a = send_sidr_req();

	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_SIDR_REP_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.sidr_rep.status, DROCE_SIDR_UNSUPPORTED);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_IDLE);
	ck_assert_uint_eq(sides[1].nev, 0);
}
END_TEST

/* A retransmitted REQ while the consumer decides is not a second request;
 * a consumer that goes away rejects; a silent peer times out. */
START_TEST(sidr_retries_and_rejects)
{
	struct droce_cm_id *l = droce_cm_id_create(sides[1].cm, NULL), *a;

	ck_assert_int_eq(droce_cm_listen(l, UD_SERVICE), 0);
	a = send_sidr_req();
	run_until(clock_us + 4096000);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_SIDR_REQ], 2);
	ck_assert_uint_eq(sides[1].nev, 1);
	droce_cm_id_destroy(last(1)->id);
	pump();
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_SIDR_REP_RECEIVED);
	ck_assert_uint_eq(last(0)->msg.sidr_rep.status, DROCE_SIDR_REJECT);
	droce_cm_id_destroy(a);

	sides[1].dead = true;
	a = send_sidr_req();
	run_until(clock_us + 16 * 4096000ull - 1);
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_SIDR_REP_RECEIVED);
	run_until(clock_us + 2);
	ck_assert_uint_eq(sides[0].sent[DROCE_CM_SIDR_REQ], 2 + 16);
	ck_assert_int_eq(last(0)->type, DROCE_CM_EV_SIDR_REQ_ERROR);
	ck_assert_int_eq(droce_cm_id_state(a), DROCE_CM_IDLE);
}
END_TEST

/* tests/cm/test_cm_msg.c */
Suite *cm_msg_suite(void);

int
main(void)
{
	Suite *s = suite_create("cm");
	TCase *tc = tcase_create("state_machine");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, connect_and_disconnect);
	tcase_add_test(tc, no_listener_is_refused);
	tcase_add_test(tc, consumer_reject_carries_private_data);
	tcase_add_test(tc, lost_req_is_retransmitted);
	tcase_add_test(tc, duplicate_req_gets_the_rep_again);
	tcase_add_test(tc, silent_peer_times_out);
	tcase_add_test(tc, dreq_to_a_dead_peer);
	tcase_add_test(tc, destroyed_end);
	tcase_add_test(tc, farewell_keeps_the_ids);
	tcase_add_test(tc, mra_extends_the_wait);
	tcase_add_test(tc, sidr_resolves_a_service);
	tcase_add_test(tc, sidr_no_listener);
	tcase_add_test(tc, sidr_retries_and_rejects);
	suite_add_tcase(s, tc);
	sr = srunner_create(cm_msg_suite());
	srunner_add_suite(sr, s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
