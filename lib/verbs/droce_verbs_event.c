/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events: a queue per context behind its async_fd, an
 * eventfd in semaphore mode (one read, one event), so the fd works with
 * poll/epoll, blocking or not, as in rdma-core.
 */
#include <errno.h>
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

int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct droce_context *c = droce_ctx_of(ctx);
	struct droce_async_ev *e;
	uint64_t n;

	if (read(ctx->async_fd, &n, sizeof(n)) != sizeof(n))
		return -1;
	pthread_mutex_lock(&c->ev_lock);
	e = c->ev_head;
	if (e != NULL) {
		c->ev_head = e->next;
		if (c->ev_head == NULL)
			c->ev_tail = &c->ev_head;
	}
	pthread_mutex_unlock(&c->ev_lock);
	if (e == NULL) {
		errno = EAGAIN;
		return -1;
	}
	*event = e->ev;
	free(e);
	return 0;
}

/* Objects count acknowledged events, so their destroy can wait for them. */
void
ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *m;
	pthread_cond_t *cv;
	uint32_t *count;

	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		m = &event->element.cq->mutex;
		cv = &event->element.cq->cond;
		count = &event->element.cq->async_events_completed;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		m = &event->element.srq->mutex;
		cv = &event->element.srq->cond;
		count = &event->element.srq->events_completed;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_DEVICE_FATAL:
		return;
	default:
		m = &event->element.qp->mutex;
		cv = &event->element.qp->cond;
		count = &event->element.qp->events_completed;
		break;
	}
	pthread_mutex_lock(m);
	++*count;
	pthread_cond_signal(cv);
	pthread_mutex_unlock(m);
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
