/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM state machine. Every ID keeps the last message that waits for an
 * answer (REQ, REP, DREQ: retransmitted until answered or out of retries)
 * and the last one that does not (RTU, DREP, MRA, REJ: sent again when the
 * peer repeats the message it answered), which is all the kernel's cm.c
 * keeps to survive lost MADs.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include "droce_cm.h"

struct droce_cm_id {
	TAILQ_ENTRY(droce_cm_id) link;
	struct droce_cm *cm;
	void *context;
	enum droce_cm_state state;
	uint32_t local_id;
	uint32_t remote_id;
	uint64_t remote_guid;
	uint64_t service_id;             /**< LISTEN, SIDR_REQ_RCVD */
	uint64_t tid;                    /**< the REQ's, for every message of the connection but DREQ/DREP */
	uint32_t remote_qpn;
	uint8_t remote_gid[16];
	uint64_t wait_us;                /**< for an answer to a REQ, REP or DREQ */
	uint64_t pkt_life_us;
	uint8_t max_retries;
	/* the message waiting for an answer */
	bool armed;
	uint8_t retries_left;
	uint64_t deadline;
	uint8_t out[DROCE_MAD_SIZE];
	/* the last answer, repeated when the peer repeats */
	bool has_ans;
	uint8_t ans[DROCE_MAD_SIZE];
};

struct droce_cm {
	pthread_mutex_t lock;            /**< recursive: consumers call back in from events */
	struct droce_cm_ops ops;
	void *arg;
	uint64_t guid;
	uint32_t hi_tid;
	uint32_t next_id;
	uint32_t id_xor;
	TAILQ_HEAD(, droce_cm_id) ids;
};

uint64_t
droce_cm_time_us(uint8_t t)
{
	/* cm.c's cm_convert_to_ms(): 4.096 us << t rounded to 2^(t-8) ms. */
	return 1000ull << (t > 8 ? (t > 31 ? 23 : t - 8) : 0);
}

static uint32_t
seed32(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(ts.tv_nsec ^ ts.tv_sec * 2654435761u ^ (uint32_t)getpid() << 16);
}

struct droce_cm *
droce_cm_create(const struct droce_cm_ops *ops, void *arg, uint64_t guid)
{
	struct droce_cm *cm = calloc(1, sizeof(*cm));
	pthread_mutexattr_t ma;

	if (cm == NULL)
		return NULL;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&cm->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	cm->ops = *ops;
	cm->arg = arg;
	cm->guid = guid;
	/* Communication IDs and TIDs differ from a previous run's, so a peer
	 * still holding the old connection does not take ours for it. */
	cm->hi_tid = seed32();
	cm->id_xor = seed32() * 0x9e3779b1u;
	TAILQ_INIT(&cm->ids);
	return cm;
}

void
droce_cm_destroy(struct droce_cm *cm)
{
	struct droce_cm_id *id;

	if (cm == NULL)
		return;
	while ((id = TAILQ_FIRST(&cm->ids)) != NULL) {
		TAILQ_REMOVE(&cm->ids, id, link);
		free(id);
	}
	pthread_mutex_destroy(&cm->lock);
	free(cm);
}

void
droce_cm_lock(struct droce_cm *cm)
{
	pthread_mutex_lock(&cm->lock);
}

void
droce_cm_unlock(struct droce_cm *cm)
{
	pthread_mutex_unlock(&cm->lock);
}

static struct droce_cm_id *
id_by_local(struct droce_cm *cm, uint32_t local_id)
{
	struct droce_cm_id *id;

	TAILQ_FOREACH(id, &cm->ids, link)
		if (id->local_id == local_id && id->state != DROCE_CM_LISTEN)
			return id;
	return NULL;
}

struct droce_cm_id *
droce_cm_id_create(struct droce_cm *cm, void *context)
{
	struct droce_cm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->cm = cm;
	id->context = context;
	id->state = DROCE_CM_IDLE;
	pthread_mutex_lock(&cm->lock);
	do
		id->local_id = cm->next_id++ ^ cm->id_xor;
	while (id->local_id == 0 || id_by_local(cm, id->local_id) != NULL);
	TAILQ_INSERT_TAIL(&cm->ids, id, link);
	pthread_mutex_unlock(&cm->lock);
	return id;
}

void *
droce_cm_id_context(const struct droce_cm_id *id)
{
	return id->context;
}

void
droce_cm_id_set_context(struct droce_cm_id *id, void *context)
{
	id->context = context;
}

enum droce_cm_state
droce_cm_id_state(const struct droce_cm_id *id)
{
	return id->state;
}

const uint8_t *
droce_cm_id_remote_gid(const struct droce_cm_id *id)
{
	return id->remote_gid;
}

static void
emit(struct droce_cm_id *id, enum droce_cm_event_type type, const struct droce_cm_msg *msg,
     struct droce_cm_id *listener)
{
	struct droce_cm_event ev = { .type = type, .msg = msg, .listener = listener };

	id->cm->ops.event(id->cm->arg, id, &ev);
}

/* Encode @p m and send it; as the message waiting for an answer (armed)
 * or as the answer to repeat. */
static int
id_send(struct droce_cm_id *id, const struct droce_cm_msg *m, bool armed)
{
	struct droce_cm *cm = id->cm;
	uint8_t *buf = armed ? id->out : id->ans;

	droce_cm_msg_encode(m, buf);
	if (armed) {
		id->armed = true;
		id->retries_left = id->max_retries;
		id->deadline = cm->ops.now(cm->arg) + id->wait_us;
	} else {
		id->has_ans = true;
	}
	return cm->ops.send(cm->arg, id->remote_gid, buf);
}

static void
id_resend_ans(struct droce_cm_id *id)
{
	if (id->has_ans)
		id->cm->ops.send(id->cm->arg, id->remote_gid, id->ans);
}

int
droce_cm_listen(struct droce_cm_id *id, uint64_t service_id)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_id *o;
	int rc = 0;

	pthread_mutex_lock(&cm->lock);
	TAILQ_FOREACH(o, &cm->ids, link)
		if (o->state == DROCE_CM_LISTEN && o->service_id == service_id)
			rc = -EADDRINUSE;
	if (id->state != DROCE_CM_IDLE)
		rc = -EINVAL;
	if (rc == 0) {
		id->service_id = service_id;
		id->state = DROCE_CM_LISTEN;
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

int
droce_cm_send_req(struct droce_cm_id *id, const uint8_t gid[16], const struct droce_cm_req *req,
		  const struct droce_cm_timing *t)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_msg m;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_IDLE) {
		droce_cm_msg_init(&m, DROCE_CM_REQ, (uint64_t)cm->hi_tid << 32 | id->local_id);
		m.req = *req;
		m.req.local_comm_id = id->local_id;
		m.req.local_ca_guid = cm->guid;
		m.req.local_cm_response_timeout = t->cm_response_timeout;
		id->tid = m.hdr.tid;
		id->pkt_life_us = droce_cm_time_us(t->packet_life_time);
		/* cm.c: two packet lifetimes plus the time the peer asks for. */
		id->wait_us = 2 * id->pkt_life_us + droce_cm_time_us(req->remote_cm_response_timeout);
		id->max_retries = req->max_cm_retries;
		id->remote_qpn = 0;
		memcpy(id->remote_gid, gid, 16);
		id->state = DROCE_CM_REQ_SENT;
		rc = id_send(id, &m, true);
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

/* A message of connection @p id, the IDs filled in. */
static void
conn_msg(struct droce_cm_msg *m, const struct droce_cm_id *id, enum droce_cm_attr attr)
{
	droce_cm_msg_init(m, attr, id->tid);
	/* Every connection message starts with the two IDs. */
	m->rtu.local_comm_id = id->local_id;
	m->rtu.remote_comm_id = id->remote_id;
}

int
droce_cm_send_rep(struct droce_cm_id *id, const struct droce_cm_rep *rep)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_msg m;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_REQ_RCVD || id->state == DROCE_CM_MRA_REQ_SENT) {
		conn_msg(&m, id, DROCE_CM_REP);
		m.rep = *rep;
		m.rep.local_comm_id = id->local_id;
		m.rep.remote_comm_id = id->remote_id;
		m.rep.local_ca_guid = cm->guid;
		id->state = DROCE_CM_REP_SENT;
		rc = id_send(id, &m, true);
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

/* A message with the two IDs and private data at @p off of the body. */
static int
send_simple(struct droce_cm_id *id, enum droce_cm_attr attr, size_t off, size_t room,
	    const void *pdata, uint8_t len, bool armed)
{
	struct droce_cm_msg m;

	if (len > room)
		return -EINVAL;
	conn_msg(&m, id, attr);
	if (len > 0)
		memcpy((uint8_t *)&m.req + off, pdata, len);
	return id_send(id, &m, armed);
}

int
droce_cm_send_rtu(struct droce_cm_id *id, const void *pdata, uint8_t len)
{
	struct droce_cm *cm = id->cm;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_REP_RCVD) {
		rc = send_simple(id, DROCE_CM_RTU, offsetof(struct droce_cm_rtu, private_data),
				 DROCE_CM_RTU_PDATA, pdata, len, false);
		if (rc == 0)
			id->state = DROCE_CM_ESTABLISHED;
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

/* Reject the connection being set up, whatever its state. */
static int
id_rej(struct droce_cm_id *id, uint16_t reason, const void *pdata, uint8_t len)
{
	struct droce_cm_msg m;

	if (len > DROCE_CM_REJ_PDATA)
		return -EINVAL;
	conn_msg(&m, id, DROCE_CM_REJ);
	switch (id->state) {
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		m.rej.msg_rejected = DROCE_CM_REF_REQ;
		break;
	case DROCE_CM_REP_RCVD:
		m.rej.msg_rejected = DROCE_CM_REF_REP;
		break;
	default:
		m.rej.msg_rejected = DROCE_CM_REF_OTHER;
		break;
	}
	m.rej.reason = reason;
	if (len > 0)
		memcpy(m.rej.private_data, pdata, len);
	id->armed = false;
	id->state = DROCE_CM_IDLE;
	return id_send(id, &m, false);
}

int
droce_cm_send_rej(struct droce_cm_id *id, enum droce_cm_rej_reason reason,
		  const void *pdata, uint8_t len)
{
	struct droce_cm *cm = id->cm;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_REQ_RCVD || id->state == DROCE_CM_MRA_REQ_SENT ||
	    id->state == DROCE_CM_REP_RCVD)
		rc = id_rej(id, reason, pdata, len);
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

int
droce_cm_send_mra(struct droce_cm_id *id, uint8_t service_timeout)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_msg m;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_REQ_RCVD) {
		conn_msg(&m, id, DROCE_CM_MRA);
		m.mra.msg_mraed = DROCE_CM_REF_REQ;
		m.mra.service_timeout = service_timeout;
		id->state = DROCE_CM_MRA_REQ_SENT;
		rc = id_send(id, &m, false);
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

int
droce_cm_send_dreq(struct droce_cm_id *id, const void *pdata, uint8_t len)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_msg m;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_ESTABLISHED && len <= DROCE_CM_DREQ_PDATA) {
		/* cm.c: a DREQ starts a transaction of the sender's own (the
		 * REQ's on the active side), which the DREP answers with. */
		id->tid = (uint64_t)cm->hi_tid << 32 | id->local_id;
		conn_msg(&m, id, DROCE_CM_DREQ);
		m.dreq.remote_qpn = id->remote_qpn;
		if (len > 0)
			memcpy(m.dreq.private_data, pdata, len);
		id->state = DROCE_CM_DREQ_SENT;
		rc = id_send(id, &m, true);
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

int
droce_cm_send_drep(struct droce_cm_id *id, const void *pdata, uint8_t len)
{
	struct droce_cm *cm = id->cm;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_DREQ_RCVD) {
		rc = send_simple(id, DROCE_CM_DREP, offsetof(struct droce_cm_rtu, private_data),
				 DROCE_CM_DREP_PDATA, pdata, len, false);
		id->state = DROCE_CM_TIMEWAIT;
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

int
droce_cm_send_sidr_req(struct droce_cm_id *id, const uint8_t gid[16],
		       const struct droce_cm_sidr_req *req, uint64_t timeout_us,
		       uint8_t max_retries)
{
	struct droce_cm *cm = id->cm;
	struct droce_cm_msg m;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_IDLE) {
		droce_cm_msg_init(&m, DROCE_CM_SIDR_REQ, (uint64_t)cm->hi_tid << 32 | id->local_id);
		m.sidr_req = *req;
		m.sidr_req.request_id = id->local_id;
		id->tid = m.hdr.tid;
		id->wait_us = timeout_us;
		id->max_retries = max_retries;
		memcpy(id->remote_gid, gid, 16);
		id->state = DROCE_CM_SIDR_REQ_SENT;
		rc = id_send(id, &m, true);
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

/* A SIDR REP to the request @p request_id (transaction @p tid) from @p gid. */
static int
sidr_rep_send(struct droce_cm *cm, const uint8_t gid[16], uint64_t tid, uint32_t request_id,
	      uint64_t service_id, const struct droce_cm_sidr_rep *rep)
{
	uint8_t mad[DROCE_MAD_SIZE];
	struct droce_cm_msg m;

	droce_cm_msg_init(&m, DROCE_CM_SIDR_REP, tid);
	m.sidr_rep = *rep;
	m.sidr_rep.request_id = request_id;
	m.sidr_rep.service_id = service_id;
	droce_cm_msg_encode(&m, mad);
	return cm->ops.send(cm->arg, gid, mad);
}

int
droce_cm_send_sidr_rep(struct droce_cm_id *id, const struct droce_cm_sidr_rep *rep)
{
	struct droce_cm *cm = id->cm;
	int rc = -EINVAL;

	pthread_mutex_lock(&cm->lock);
	if (id->state == DROCE_CM_SIDR_REQ_RCVD) {
		/* Answered once: a late copy of the REQ is a new request, as in cm.c. */
		id->state = DROCE_CM_IDLE;
		rc = sidr_rep_send(cm, id->remote_gid, id->tid, id->remote_id, id->service_id, rep);
	}
	pthread_mutex_unlock(&cm->lock);
	return rc;
}

/*
 * What ib_destroy_cm_id() tells the peer of a connection in @p id's
 * state: REJ for one being set up, DREQ for one established, DREP for a
 * DREQ not yet answered, a reject for a SIDR REQ. @return whether a
 * message went out.
 */
static bool
id_farewell(struct droce_cm_id *id)
{
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		/* Tell the peer the attempt is over. */
		return id_rej(id, DROCE_REJ_TIMEOUT, NULL, 0) == 0;
	case DROCE_CM_REQ_RCVD:
	case DROCE_CM_MRA_REQ_SENT:
	case DROCE_CM_REP_RCVD:
		return id_rej(id, DROCE_REJ_CONSUMER_DEFINED, NULL, 0) == 0;
	case DROCE_CM_ESTABLISHED:
		return droce_cm_send_dreq(id, NULL, 0) == 0;
	case DROCE_CM_DREQ_RCVD:
		return droce_cm_send_drep(id, NULL, 0) == 0;
	case DROCE_CM_SIDR_REQ_RCVD: {
		/* cm.c: a request nobody will answer is rejected. */
		struct droce_cm_sidr_rep rep = { .status = DROCE_SIDR_REJECT };

		return droce_cm_send_sidr_rep(id, &rep) == 0;
	}
	default:
		return false;
	}
}

void
droce_cm_id_destroy(struct droce_cm_id *id)
{
	struct droce_cm *cm;

	if (id == NULL)
		return;
	cm = id->cm;
	pthread_mutex_lock(&cm->lock);
	id_farewell(id);
	TAILQ_REMOVE(&cm->ids, id, link);
	pthread_mutex_unlock(&cm->lock);
	free(id);
}

unsigned
droce_cm_farewell(struct droce_cm *cm)
{
	struct droce_cm_id *id;
	unsigned sent = 0;

	pthread_mutex_lock(&cm->lock);
	TAILQ_FOREACH(id, &cm->ids, link)
		sent += id_farewell(id);
	pthread_mutex_unlock(&cm->lock);
	return sent;
}

unsigned
droce_cm_disconnecting(struct droce_cm *cm)
{
	struct droce_cm_id *id;
	unsigned n = 0;

	pthread_mutex_lock(&cm->lock);
	TAILQ_FOREACH(id, &cm->ids, link)
		n += id->state == DROCE_CM_DREQ_SENT;
	pthread_mutex_unlock(&cm->lock);
	return n;
}

/* Answer a message no ID takes: REJ for a REQ, DREP for a DREQ. */
static void
issue_stateless(struct droce_cm *cm, const uint8_t gid[16], const struct droce_cm_msg *in,
		enum droce_cm_attr attr, uint16_t reason)
{
	struct droce_cm_msg m;
	uint8_t mad[DROCE_MAD_SIZE];

	droce_cm_msg_init(&m, attr, in->hdr.tid);
	/* The IDs swap sides: theirs is our remote one. */
	m.rtu.local_comm_id = in->rtu.remote_comm_id;
	m.rtu.remote_comm_id = in->rtu.local_comm_id;
	if (attr == DROCE_CM_REJ) {
		m.rej.msg_rejected = DROCE_CM_REF_REQ;
		m.rej.reason = reason;
	}
	droce_cm_msg_encode(&m, mad);
	cm->ops.send(cm->arg, gid, mad);
}

static void
recv_req(struct droce_cm *cm, const uint8_t gid[16], const struct droce_cm_msg *m)
{
	const struct droce_cm_req *req = &m->req;
	struct droce_cm_id *id, *listener = NULL;

	TAILQ_FOREACH(id, &cm->ids, link) {
		if (id->state == DROCE_CM_LISTEN) {
			if (id->service_id == req->service_id)
				listener = id;
			continue;
		}
		if (id->remote_id != req->local_comm_id || id->remote_guid != req->local_ca_guid)
			continue;
		/* A retransmitted REQ: say again what we said. */
		if (id->state == DROCE_CM_REP_SENT || id->state == DROCE_CM_MRA_REP_RCVD)
			cm->ops.send(cm->arg, id->remote_gid, id->out);
		else if (id->state == DROCE_CM_MRA_REQ_SENT)
			id_resend_ans(id);
		return;
	}
	if (listener == NULL) {
		issue_stateless(cm, gid, m, DROCE_CM_REJ, DROCE_REJ_INVALID_SERVICE_ID);
		return;
	}
	id = droce_cm_id_create(cm, NULL);
	if (id == NULL) {
		issue_stateless(cm, gid, m, DROCE_CM_REJ, DROCE_REJ_NO_RESOURCES);
		return;
	}
	id->state = DROCE_CM_REQ_RCVD;
	id->remote_id = req->local_comm_id;
	id->remote_guid = req->local_ca_guid;
	id->remote_qpn = req->local_qpn;
	id->tid = m->hdr.tid;
	memcpy(id->remote_gid, gid, 16);
	/* cm.c: our REP waits as long as the peer says it takes to answer. */
	id->pkt_life_us = droce_cm_time_us(req->primary.local_ack_timeout);
	id->wait_us = droce_cm_time_us(req->local_cm_response_timeout);
	id->max_retries = req->max_cm_retries;
	emit(id, DROCE_CM_EV_REQ_RECEIVED, m, listener);
}

static void
recv_sidr_req(struct droce_cm *cm, const uint8_t gid[16], const struct droce_cm_msg *m)
{
	const struct droce_cm_sidr_req *req = &m->sidr_req;
	struct droce_cm_id *id, *listener = NULL;

	TAILQ_FOREACH(id, &cm->ids, link) {
		if (id->state == DROCE_CM_LISTEN && id->service_id == req->service_id)
			listener = id;
		/* A retransmission while the consumer decides: it answers once. */
		else if (id->state == DROCE_CM_SIDR_REQ_RCVD && id->remote_id == req->request_id &&
			 memcmp(id->remote_gid, gid, 16) == 0)
			return;
	}
	if (listener == NULL) {
		struct droce_cm_sidr_rep rep = { .status = DROCE_SIDR_UNSUPPORTED };

		sidr_rep_send(cm, gid, m->hdr.tid, req->request_id, req->service_id, &rep);
		return;
	}
	id = droce_cm_id_create(cm, NULL);
	if (id == NULL)
		return; /* the requester retries */
	id->state = DROCE_CM_SIDR_REQ_RCVD;
	id->remote_id = req->request_id;
	id->service_id = req->service_id;
	id->tid = m->hdr.tid;
	memcpy(id->remote_gid, gid, 16);
	emit(id, DROCE_CM_EV_SIDR_REQ_RECEIVED, m, listener);
}

static void
recv_sidr_rep(struct droce_cm *cm, const struct droce_cm_msg *m)
{
	struct droce_cm_id *id = id_by_local(cm, m->sidr_rep.request_id);

	if (id == NULL || id->state != DROCE_CM_SIDR_REQ_SENT)
		return;
	id->armed = false;
	id->state = DROCE_CM_IDLE;
	emit(id, DROCE_CM_EV_SIDR_REP_RECEIVED, m, NULL);
}

static void
recv_rep(struct droce_cm_id *id, const struct droce_cm_msg *m)
{
	switch (id->state) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		id->armed = false;
		id->remote_id = m->rep.local_comm_id;
		id->remote_guid = m->rep.local_ca_guid;
		id->remote_qpn = m->rep.local_qpn;
		id->state = DROCE_CM_REP_RCVD;
		emit(id, DROCE_CM_EV_REP_RECEIVED, m, NULL);
		break;
	case DROCE_CM_ESTABLISHED:
		/* Our RTU was lost. */
		id_resend_ans(id);
		break;
	default:
		break;
	}
}

static void
recv_mra(struct droce_cm_id *id, const struct droce_cm_msg *m)
{
	bool for_req = m->mra.msg_mraed == DROCE_CM_REF_REQ && id->state == DROCE_CM_REQ_SENT;
	bool for_rep = m->mra.msg_mraed == DROCE_CM_REF_REP && id->state == DROCE_CM_REP_SENT;

	if (!for_req && !for_rep)
		return;
	id->state = for_req ? DROCE_CM_MRA_REQ_RCVD : DROCE_CM_MRA_REP_RCVD;
	id->remote_id = m->mra.local_comm_id;
	/* The peer needs service_timeout more; the retries stay what they were. */
	id->deadline = id->cm->ops.now(id->cm->arg) +
		       droce_cm_time_us(m->mra.service_timeout) + id->pkt_life_us;
	emit(id, DROCE_CM_EV_MRA_RECEIVED, m, NULL);
}

static void
recv_conn_msg(struct droce_cm *cm, const uint8_t gid[16], const struct droce_cm_msg *m)
{
	/* Every message but the REQ names our ID as its remote_comm_id. */
	struct droce_cm_id *id = id_by_local(cm, m->rtu.remote_comm_id);

	/* Before the REP (or an MRA) the peer's ID is not known yet. */
	if (id == NULL || (id->remote_id != 0 && m->hdr.attr_id != DROCE_CM_REJ &&
			   id->remote_id != m->rtu.local_comm_id)) {
		/* cm.c answers a DREQ of a connection it has forgotten. */
		if (m->hdr.attr_id == DROCE_CM_DREQ)
			issue_stateless(cm, gid, m, DROCE_CM_DREP, 0);
		return;
	}
	switch (m->hdr.attr_id) {
	case DROCE_CM_REP:
		recv_rep(id, m);
		break;
	case DROCE_CM_MRA:
		recv_mra(id, m);
		break;
	case DROCE_CM_RTU:
		if (id->state == DROCE_CM_REP_SENT || id->state == DROCE_CM_MRA_REP_RCVD) {
			id->armed = false;
			id->state = DROCE_CM_ESTABLISHED;
			emit(id, DROCE_CM_EV_RTU_RECEIVED, m, NULL);
		}
		break;
	case DROCE_CM_REJ:
		if (id->state == DROCE_CM_IDLE || id->state == DROCE_CM_TIMEWAIT ||
		    id->state == DROCE_CM_LISTEN)
			break;
		id->armed = false;
		id->state = id->state == DROCE_CM_ESTABLISHED ? DROCE_CM_TIMEWAIT : DROCE_CM_IDLE;
		emit(id, DROCE_CM_EV_REJ_RECEIVED, m, NULL);
		break;
	case DROCE_CM_DREQ:
		if (id->state == DROCE_CM_ESTABLISHED || id->state == DROCE_CM_DREQ_SENT ||
		    id->state == DROCE_CM_REP_SENT || id->state == DROCE_CM_MRA_REP_RCVD) {
			/* A DREQ before the RTU also means the RTU was sent. */
			id->armed = false;
			id->tid = m->hdr.tid;
			id->state = DROCE_CM_DREQ_RCVD;
			emit(id, DROCE_CM_EV_DREQ_RECEIVED, m, NULL);
		} else if (id->state == DROCE_CM_TIMEWAIT) {
			id_resend_ans(id);
		}
		break;
	case DROCE_CM_DREP:
		if (id->state == DROCE_CM_DREQ_SENT) {
			id->armed = false;
			id->state = DROCE_CM_TIMEWAIT;
			emit(id, DROCE_CM_EV_DREP_RECEIVED, m, NULL);
		}
		break;
	default:
		break;
	}
}

void
droce_cm_recv(struct droce_cm *cm, const uint8_t src_gid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	struct droce_cm_msg m;

	if (droce_cm_msg_decode(mad, &m) != 0)
		return;
	pthread_mutex_lock(&cm->lock);
	if (m.hdr.attr_id == DROCE_CM_REQ)
		recv_req(cm, src_gid, &m);
	else if (m.hdr.attr_id == DROCE_CM_SIDR_REQ)
		recv_sidr_req(cm, src_gid, &m);
	else if (m.hdr.attr_id == DROCE_CM_SIDR_REP)
		recv_sidr_rep(cm, &m);
	else
		recv_conn_msg(cm, src_gid, &m);
	pthread_mutex_unlock(&cm->lock);
}

/* @p id ran out of retries. */
static void
id_expire(struct droce_cm_id *id)
{
	enum droce_cm_state was = id->state;

	id->armed = false;
	switch (was) {
	case DROCE_CM_REQ_SENT:
	case DROCE_CM_MRA_REQ_RCVD:
		/* Nobody answered: nobody to tell. */
		id->state = DROCE_CM_IDLE;
		emit(id, DROCE_CM_EV_REQ_ERROR, NULL, NULL);
		break;
	case DROCE_CM_REP_SENT:
	case DROCE_CM_MRA_REP_RCVD:
		/* The active side may still be there: reject, as cm.c does. */
		id_rej(id, DROCE_REJ_TIMEOUT, NULL, 0);
		emit(id, DROCE_CM_EV_REP_ERROR, NULL, NULL);
		break;
	case DROCE_CM_DREQ_SENT:
		id->state = DROCE_CM_TIMEWAIT;
		emit(id, DROCE_CM_EV_DREQ_ERROR, NULL, NULL);
		break;
	case DROCE_CM_SIDR_REQ_SENT:
		id->state = DROCE_CM_IDLE;
		emit(id, DROCE_CM_EV_SIDR_REQ_ERROR, NULL, NULL);
		break;
	default:
		break;
	}
}

uint64_t
droce_cm_timer(struct droce_cm *cm)
{
	uint64_t next = UINT64_MAX, now_us = cm->ops.now(cm->arg);
	struct droce_cm_id *id, *tmp;

	pthread_mutex_lock(&cm->lock);
	/* An event may destroy its ID (only its own): walk safely. */
	for (id = TAILQ_FIRST(&cm->ids); id != NULL; id = tmp) {
		tmp = TAILQ_NEXT(id, link);
		if (!id->armed)
			continue;
		if (id->deadline <= now_us) {
			if (id->retries_left == 0) {
				id_expire(id);
				continue;
			}
			id->retries_left--;
			id->deadline = now_us + id->wait_us;
			cm->ops.send(cm->arg, id->remote_gid, id->out);
		}
		if (id->deadline < next)
			next = id->deadline;
	}
	pthread_mutex_unlock(&cm->lock);
	return next;
}
