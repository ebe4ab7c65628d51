/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events: a queue per context behind its async_fd, an
 * eventfd in semaphore mode (one read, one event), so the fd works with
 * poll/epoll, blocking or not, as in rdma-core.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "droce_verbs_priv.h"

struct droce_async_ev {
	struct ibv_async_event ev;
	struct droce_async_ev *next;
};

static void
event_post(struct ibv_context *ctx, enum ibv_event_type type, void *element)
{
	struct droce_context *c = droce_ctx_of(ctx);
	struct droce_async_ev *e = calloc(1, sizeof(*e));
	uint64_t one = 1;

	if (e == NULL) {
		DROCE_LOG(ERR, "async event %s lost: no memory", ibv_event_type_str(type));
		return;
	}
	e->ev.event_type = type;
	switch (type) {
	case IBV_EVENT_CQ_ERR:
		e->ev.element.cq = element;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		e->ev.element.srq = element;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_DEVICE_FATAL:
		e->ev.element.port_num = 1;
		break;
	default:
		e->ev.element.qp = element;
		break;
	}
	pthread_mutex_lock(&c->ev_lock);
	*c->ev_tail = e;
	c->ev_tail = &e->next;
	pthread_mutex_unlock(&c->ev_lock);
	if (write(ctx->async_fd, &one, sizeof(one)) != sizeof(one))
		DROCE_LOG(WARNING, "async event fd write failed");
}

RTE_INIT(droce_event_init)
{
	droce_event_hook = event_post;
}

/* The counters of the object an event is about: events handed out, and
 * acknowledged (with the lock and condition its destroy waits on). NULL
 * for port and device events. */
struct ev_counts {
	uint32_t *reported, *completed;
	pthread_mutex_t *m;
	pthread_cond_t *cv;
};

static bool
event_counts(const struct ibv_async_event *ev, struct ev_counts *c)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		*c = (struct ev_counts){ &droce_cq_of(ev->element.cq)->async_reported,
					 &ev->element.cq->async_events_completed,
					 &ev->element.cq->mutex, &ev->element.cq->cond };
		return true;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		*c = (struct ev_counts){ &droce_srq_of(ev->element.srq)->events_reported,
					 &ev->element.srq->events_completed,
					 &ev->element.srq->mutex, &ev->element.srq->cond };
		return true;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_DEVICE_FATAL:
		return false;
	default:
		*c = (struct ev_counts){
			&((struct droce_qp_handle *)ev->element.qp)->events_reported,
			&ev->element.qp->events_completed,
			&ev->element.qp->mutex, &ev->element.qp->cond };
		return true;
	}
}

int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct droce_context *c = droce_ctx_of(ctx);
	struct droce_async_ev *e = NULL;
	struct ev_counts n;
	uint64_t one;

	/* One count per event posted; an event dropped because its object
	 * was destroyed leaves its count behind, so read on past it. */
	while (e == NULL) {
		if (read(ctx->async_fd, &one, sizeof(one)) != sizeof(one))
			return -1;
		pthread_mutex_lock(&c->ev_lock);
		e = c->ev_head;
		if (e != NULL) {
			c->ev_head = e->next;
			if (c->ev_head == NULL)
				c->ev_tail = &c->ev_head;
			if (event_counts(&e->ev, &n))
				__atomic_add_fetch(n.reported, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&c->ev_lock);
	}
	*event = e->ev;
	free(e);
	return 0;
}

/* Objects count acknowledged events, so their destroy can wait for them. */
void
ibv_ack_async_event(struct ibv_async_event *event)
{
	struct ev_counts n;

	if (!event_counts(event, &n))
		return;
	pthread_mutex_lock(n.m);
	++*n.completed;
	pthread_cond_signal(n.cv);
	pthread_mutex_unlock(n.m);
}

void
droce_events_retire(struct ibv_context *ctx, const struct ibv_async_event *about)
{
	struct droce_context *c = droce_ctx_of(ctx);
	struct droce_async_ev **pp, *e;
	struct ev_counts obj, n;

	if (!event_counts(about, &obj))
		return;
	/* An event is about the same object when it counts in the same place. */
	pthread_mutex_lock(&c->ev_lock);
	for (pp = &c->ev_head; (e = *pp) != NULL;) {
		if (event_counts(&e->ev, &n) && n.reported == obj.reported) {
			*pp = e->next;
			free(e);
		} else {
			pp = &e->next;
		}
	}
	c->ev_tail = pp;
	pthread_mutex_unlock(&c->ev_lock);
	pthread_mutex_lock(obj.m);
	while (*obj.completed != __atomic_load_n(obj.reported, __ATOMIC_ACQUIRE))
		pthread_cond_wait(obj.cv, obj.m);
	pthread_mutex_unlock(obj.m);
}

void
droce_context_events_free(struct droce_context *c)
{
	while (c->ev_head != NULL) {
		struct droce_async_ev *e = c->ev_head;

		c->ev_head = e->next;
		free(e);
	}
}
