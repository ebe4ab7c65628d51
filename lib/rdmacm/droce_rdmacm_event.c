/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event channels: a queue behind an eventfd in semaphore mode. Each queued
 * event adds one to the count, and the count is read down only under the
 * channel's lock, together with taking an event off the queue: the count
 * is always the queue's length, so the fd polls readable exactly while an
 * event waits. rdma_get_cm_event() waits in poll() (unless the application
 * made the fd non-blocking) and takes the head of the queue. Events of a
 * destroyed ID leave the queue with their counts, so no reader wakes for
 * them. A thread still inside rdma_get_cm_event() when the application
 * destroys the channel (rping's event thread, which the main thread does
 * not join, may be anywhere in it: in poll(), or on its way there after
 * the last event) sleeps on, as a read() on rdma-core's closed channel
 * fd does: the channel's memory stays for it, and it never returns into
 * freed memory or a closed fd. A thread that has not entered yet when the
 * channel goes (rping's, between its last event and its next call) finds
 * the memory too: a destroyed channel is kept among the last
 * CHANNEL_TOMBS destroyed ones, and freed only when a later one takes
 * its place with no thread left inside it. An event stays the application's until
 * rdma_ack_cm_event(); rdma_destroy_id() waits for its ID's, as
 * rdma-core's does.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "droce_rdmacm_priv.h"

/* Destroyed channels kept for threads still on their way into them. */
#define CHANNEL_TOMBS 64
static struct cma_channel *tombs[CHANNEL_TOMBS];
static unsigned tomb_next;
static pthread_mutex_t tomb_lock = PTHREAD_MUTEX_INITIALIZER;

/* Keep @p c a while; free the channel it displaces, unless a thread came
 * into that one after all (it sleeps there for good: channel_orphaned()). */
static void
channel_bury(struct cma_channel *c)
{
	struct cma_channel *old;
	bool inside;

	pthread_mutex_lock(&tomb_lock);
	old = tombs[tomb_next];
	tombs[tomb_next] = c;
	tomb_next = (tomb_next + 1) % CHANNEL_TOMBS;
	pthread_mutex_unlock(&tomb_lock);
	if (old == NULL)
		return;
	pthread_mutex_lock(&old->lock);
	inside = old->waiters != 0;
	pthread_mutex_unlock(&old->lock);
	if (inside)
		return;
	pthread_mutex_destroy(&old->lock);
	free(old);
}

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cma_channel *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	TAILQ_INIT(&c->q);
	return &c->ch;
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *c = (struct cma_channel *)channel;
	struct cma_event *e;
	bool orphans;

	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	while ((e = TAILQ_FIRST(&c->q)) != NULL) {
		TAILQ_REMOVE(&c->q, e, link);
		free(e);
	}
	orphans = c->waiters != 0;
	c->destroyed = true;
	pthread_mutex_unlock(&c->lock);
	close(c->ch.fd);
	if (orphans)
		return; /* theirs now, for good (channel_orphaned()) */
	channel_bury(c);
}

void
cma_event_queue_param(struct cma_id *c, enum rdma_cm_event_type type, int status,
		      const void *param, size_t size, const void *pdata, uint8_t len,
		      struct cma_id *listener)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;
	struct cma_event *e = calloc(1, sizeof(*e));
	uint64_t one = 1;

	if (e == NULL)
		return;
	e->ev.id = &c->id;
	e->ev.listen_id = listener != NULL ? &listener->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (param != NULL)
		memcpy(&e->ev.param, param, size);
	if (len > 0) {
		/* param.conn and param.ud both start with the private data. */
		len = len > sizeof(e->pdata) ? sizeof(e->pdata) : len;
		memcpy(e->pdata, pdata, len);
		e->ev.param.conn.private_data = e->pdata;
		e->ev.param.conn.private_data_len = len;
	}
	/* The count with the queue, under the lock (see the top). */
	pthread_mutex_lock(&ch->lock);
	TAILQ_INSERT_TAIL(&ch->q, e, link);
	if (write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd only refuses at 2^64 - 1 events */
	pthread_mutex_unlock(&ch->lock);
}

/* The application destroyed the channel while this thread waited on it
 * (under its lock, which this lets go): wait for ever, as a read() on
 * rdma-core's closed channel fd does. pause() is a cancellation point. */
static __attribute__((noreturn)) void
channel_orphaned(struct cma_channel *ch)
{
	pthread_mutex_unlock(&ch->lock);
	for (;;)
		pause();
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e;
	bool nonblock;
	int rc = 0;
	uint64_t v;

	if (ch == NULL || event == NULL)
		return cma_fail(EINVAL);
	pthread_mutex_lock(&ch->lock);
	ch->waiters++;
	for (;;) {
		struct pollfd pfd = { .fd = ch->ch.fd, .events = POLLIN };

		if (ch->destroyed)
			channel_orphaned(ch);
		e = TAILQ_FIRST(&ch->q);
		if (e != NULL) {
			/* Its count: there, as the queue is not empty. */
			if (read(ch->ch.fd, &v, sizeof(v)) != sizeof(v))
				abort();
			TAILQ_REMOVE(&ch->q, e, link);
			/* A child's events come on its listener's channel: one
			 * lock for both. */
			cma_id_of(e->ev.id)->events_out++;
			if (e->ev.listen_id != NULL)
				cma_id_of(e->ev.listen_id)->events_out++;
			*event = &e->ev;
			break;
		}
		/* The fd is open while the lock is held and the channel stands. */
		nonblock = (fcntl(ch->ch.fd, F_GETFL) & O_NONBLOCK) != 0;
		pthread_mutex_unlock(&ch->lock);
		if (nonblock) {
			errno = EAGAIN;
			rc = -1;
		} else if (poll(&pfd, 1, -1) < 0) {
			rc = -1; /* errno: EINTR */
		}
		pthread_mutex_lock(&ch->lock);
		if (rc != 0 && !ch->destroyed)
			break;
	}
	ch->waiters--;
	pthread_mutex_unlock(&ch->lock);
	return rc;
}

static void
id_ack(struct cma_id *c)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;

	pthread_mutex_lock(&ch->lock);
	if (--c->events_out == 0)
		pthread_cond_broadcast(&c->acked);
	pthread_mutex_unlock(&ch->lock);
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (e == NULL)
		return cma_fail(EINVAL);
	if (e->ev.listen_id != NULL)
		id_ack(cma_id_of(e->ev.listen_id));
	id_ack(cma_id_of(e->ev.id));
	free(e);
	return 0;
}

int
cma_event_wait(struct cma_id *c, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int status;
	bool ok;

	if (rdma_get_cm_event(c->id.channel, &ev) != 0)
		return -1;
	ok = ev->event == want && ev->status == 0;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (!ok)
		return cma_fail(status < 0 ? -status : status != 0 ? ECONNREFUSED : EINVAL);
	return 0;
}

void
cma_events_retire(struct cma_id *c)
{
	struct cma_channel *ch = (struct cma_channel *)c->id.channel;
	struct cma_event *e;

	struct cma_event *next;
	uint64_t v;

	pthread_mutex_lock(&ch->lock);
	/* Queued ones go, each with its count. */
	for (e = TAILQ_FIRST(&ch->q); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->ev.id != &c->id && e->ev.listen_id != &c->id)
			continue;
		if (read(ch->ch.fd, &v, sizeof(v)) != sizeof(v))
			abort();
		TAILQ_REMOVE(&ch->q, e, link);
		free(e);
	}
	while (c->events_out != 0)
		pthread_cond_wait(&c->acked, &ch->lock);
	pthread_mutex_unlock(&ch->lock);
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_id *c = cma_id_of(id);

	if (channel == NULL)
		return cma_fail(EINVAL);
	/* The old channel's events about it go with it, as rdma-core's do:
	 * here, they are dropped and the handed-out ones awaited first. */
	if (c->dev != NULL)
		droce_cm_lock(c->dev->cm);
	cma_events_retire(c);
	id->channel = channel;
	c->sync = false;
	if (c->dev != NULL)
		droce_cm_unlock(c->dev->cm);
	return 0;
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned)event < sizeof(names) / sizeof(names[0]))
		return names[event];
	return "UNKNOWN EVENT";
}
