/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IDs and addresses: create and destroy, bind (the address picks the
 * droce device), resolve address and route, listen, and the
 * rdma_getaddrinfo()/rdma_create_ep() conveniences built on them.
 *
 * Address resolution is local: the source address (bound, given, or the
 * first droce device's of the destination's family) names the device; the
 * destination's MAC is found by droce's ARP/ND when the QP's path is set,
 * so ADDR_RESOLVED and ROUTE_RESOLVED are queued at once.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_rdmacm_priv.h"

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	struct cma_id *c;

	if (id == NULL || (ps != RDMA_PS_TCP && ps != RDMA_PS_IB && ps != RDMA_PS_UDP)) {
		/* RDMA_PS_IPOIB: IPoIB's QPNs and multicast, nothing RoCE has. */
		return cma_fail(id == NULL ? EINVAL : EPROTONOSUPPORT);
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return cma_fail(ENOMEM);
	if (channel == NULL) {
		/* rdma-core's synchronous mode: a private channel the calls wait on. */
		channel = rdma_create_event_channel();
		if (channel == NULL) {
			free(c);
			return -1;
		}
		c->sync = true;
	}
	pthread_cond_init(&c->acked, NULL);
	pthread_mutex_init(&c->mc_lock, NULL);
	LIST_INIT(&c->mcs);
	c->id.channel = channel;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	*id = &c->id;
	return 0;
}

/* Stop listening on every device. */
static void
id_unlisten(struct cma_id *c)
{
	for (unsigned i = 0; i < CMA_MAX_DEVS; i++) {
		struct cma_dev *d;

		if (c->listen[i] == NULL || (d = cma_dev_get(i)) == NULL)
			continue;
		droce_cm_lock(d->cm);
		droce_cm_id_destroy(c->listen[i]);
		c->listen[i] = NULL;
		droce_cm_unlock(d->cm);
	}
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_of(id);

	if (c == NULL)
		return cma_fail(EINVAL);
	id_unlisten(c);
	/* A QP the ID leaves behind is the application's: its destroy must
	 * not call back into the ID. */
	if (id->qp != NULL)
		droce_qp_on_destroy(id->qp, NULL, NULL);
	if (c->dev != NULL) {
		/* After this no CM event names the ID. */
		droce_cm_lock(c->dev->cm);
		droce_cm_id_destroy(c->cm_id);
		c->cm_id = NULL;
		if (c->resolving)
			LIST_REMOVE(c, resolving_link);
		c->resolving = false;
		droce_cm_unlock(c->dev->cm);
	}
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	cma_events_retire(c);
	if (c->sync)
		rdma_destroy_event_channel(id->channel);
	free(id->route.path_rec);
	free(c->ep_qp_attr);
	cma_mc_release(c);
	pthread_mutex_destroy(&c->mc_lock);
	pthread_cond_destroy(&c->acked);
	free(c);
	return 0;
}

/* Take device @p d for @p c, its route's source GID from @p sa. */
static void
id_attach(struct cma_id *c, struct cma_dev *d, const struct sockaddr *sa)
{
	c->dev = d;
	c->id.verbs = d->verbs;
	c->id.port_num = 1;
	cma_addr_gid(sa, &c->id.route.addr.addr.ibaddr.sgid);
	c->id.route.addr.addr.ibaddr.pkey = htons(DROCE_GSI_PKEY);
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c = cma_id_of(id);
	struct sockaddr *src = &id->route.addr.src_addr;
	socklen_t len;

	if (addr == NULL || (len = cma_addr_len(addr)) == 0)
		return cma_fail(addr == NULL ? EINVAL : EAFNOSUPPORT);
	if (!cma_addr_any(addr)) {
		struct cma_dev *d = cma_dev_by_addr(addr);

		if (d == NULL)
			return -1; /* errno: EADDRNOTAVAIL, no droce device has it */
		id_attach(c, d, addr);
	}
	memcpy(src, addr, len);
	/* Port 0 takes one now, as the kernel's bind does: a program may read
	 * it (rdma_get_src_port()) before it listens, and tell its peer. */
	if (cma_addr_port(src) == 0)
		cma_addr_set_port(src, cma_ephemeral_port());
	return 0;
}

/* Address resolution's end for @p c: ADDR_RESOLVED, or ADDR_ERROR with
 * @p rc (no route: -ENETUNREACH, as the kernel's route lookup says it). */
static void
resolve_done(struct cma_id *c, int rc)
{
	if (rc == 0)
		cma_event_queue(c, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, NULL, 0, NULL);
	else
		cma_event_queue(c, RDMA_CM_EVENT_ADDR_ERROR, rc == -EHOSTUNREACH ? -ENETUNREACH : rc,
				NULL, NULL, 0, NULL);
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		  int timeout_ms)
{
	struct cma_id *c = cma_id_of(id);
	struct sockaddr *src = &id->route.addr.src_addr;
	struct sockaddr_storage ss;
	union ibv_gid gid;
	struct cma_dev *d;
	socklen_t len;
	int sgid, rc;

	if (dst_addr == NULL || (len = cma_addr_len(dst_addr)) == 0)
		return cma_fail(dst_addr == NULL ? EINVAL : EAFNOSUPPORT);
	if (c->dev != NULL) {
		bool busy;

		/* One resolution at a time, as the kernel's. */
		droce_cm_lock(c->dev->cm);
		busy = c->resolving;
		droce_cm_unlock(c->dev->cm);
		if (busy)
			return cma_fail(EINVAL);
	}
	if (src_addr != NULL && rdma_bind_addr(id, src_addr) != 0)
		return -1;
	if (c->dev == NULL) {
		/* Unbound, or bound to the wildcard: the destination's family
		 * picks the device and the source address. */
		d = cma_dev_any(dst_addr->sa_family);
		if (d == NULL)
			return -1;
		for (int i = 0; ibv_query_gid(d->verbs, 1, i, &gid) == 0; i++) {
			cma_gid_addr(&gid, 0, &ss);
			if (ss.ss_family == dst_addr->sa_family &&
			    !IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)gid.raw))
				break;
		}
		cma_addr_set_port((struct sockaddr *)&ss, cma_addr_port(src));
		memcpy(src, &ss, cma_addr_len((struct sockaddr *)&ss));
		id_attach(c, d, src);
	}
	if (cma_addr_port(src) == 0)
		cma_addr_set_port(src, cma_ephemeral_port());
	/* A destination the port has no route to is an error now, as the
	 * kernel's route lookup makes it (-ENETUNREACH), not a minute of
	 * unanswered CM requests later; one whose neighbour does not answer
	 * ARP (or ND) within timeout_ms is one too (-ETIMEDOUT), as the
	 * kernel's neighbour resolution makes it. */
	cma_addr_gid(dst_addr, &gid);
	sgid = cma_dev_gid_index(c->dev, &id->route.addr.addr.ibaddr.sgid);
	rc = sgid < 0 ? -EADDRNOTAVAIL : droce_gsi_resolve(c->dev->gsi, sgid, gid.raw);
	if (rc == 0 || rc == -EAGAIN) {
		memcpy(&id->route.addr.dst_addr, dst_addr, len);
		id->route.addr.addr.ibaddr.dgid = gid;
	}
	if (rc == -EAGAIN) {
		/* The GSI's thread asks again (cma_resolve_run()). */
		droce_cm_lock(c->dev->cm);
		c->resolving = true;
		c->resolve_sgid = sgid;
		c->resolve_until = droce_gsi_now_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
		LIST_INSERT_HEAD(&c->dev->resolving, c, resolving_link);
		droce_cm_unlock(c->dev->cm);
		droce_gsi_kick(c->dev->gsi);
	} else {
		resolve_done(c, rc);
	}
	return c->sync ? cma_event_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED) : 0;
}

/* How often a resolution that waits for its neighbour asks again: it
 * ends within this of the answer, which a LAN brings in microseconds. */
#define CMA_RESOLVE_POLL_US 1000

uint64_t
cma_resolve_run(struct cma_dev *d)
{
	uint64_t next = UINT64_MAX;
	struct cma_id *c, *tmp;

	droce_cm_lock(d->cm);
	for (c = LIST_FIRST(&d->resolving); c != NULL; c = tmp) {
		int rc = droce_gsi_resolve(d->gsi, c->resolve_sgid,
					   c->id.route.addr.addr.ibaddr.dgid.raw);
		uint64_t now = droce_gsi_now_us();

		tmp = LIST_NEXT(c, resolving_link);
		if (rc == -EAGAIN && now < c->resolve_until) {
			uint64_t at = now + CMA_RESOLVE_POLL_US;

			at = at < c->resolve_until ? at : c->resolve_until;
			next = at < next ? at : next;
			continue;
		}
		LIST_REMOVE(c, resolving_link);
		c->resolving = false;
		resolve_done(c, rc == -EAGAIN ? -ETIMEDOUT : rc);
	}
	droce_cm_unlock(d->cm);
	return next;
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *c = cma_id_of(id);
	struct ibv_sa_path_rec *p;
	struct ibv_port_attr pa;

	(void)timeout_ms;
	if (c->dev == NULL || ibv_query_port(id->verbs, 1, &pa) != 0)
		return cma_fail(EINVAL);
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return cma_fail(ENOMEM);
	/* What the kernel fills in for a RoCE route: the GIDs, the port's MTU,
	 * no LIDs, hop limit 64, and RoCE's packet lifetime. */
	p->sgid = id->route.addr.addr.ibaddr.sgid;
	p->dgid = id->route.addr.addr.ibaddr.dgid;
	p->pkey = htons(DROCE_GSI_PKEY);
	p->hop_limit = 64;
	p->traffic_class = c->tos;
	p->mtu = (uint8_t)pa.active_mtu;
	p->mtu_selector = 2; /* exactly */
	p->packet_life_time = CMA_IBOE_PACKET_LIFETIME;
	p->packet_life_time_selector = 2;
	p->reversible = 1;
	p->numb_path = 1;
	free(id->route.path_rec);
	id->route.path_rec = p;
	id->route.num_paths = 1;
	cma_event_queue(c, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, NULL, 0, NULL);
	return c->sync ? cma_event_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED) : 0;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = cma_id_of(id);
	struct sockaddr *src = &id->route.addr.src_addr;
	char msg[64];
	uint64_t sid;
	int rc = 0;

	(void)backlog; /* the CM takes every REQ; the application accepts or rejects */
	if (cma_addr_len(src) == 0) {
		errno = EINVAL; /* not bound */
		return -1;
	}
	if (cma_addr_port(src) == 0)
		cma_addr_set_port(src, cma_ephemeral_port());
	sid = DROCE_CMA_SERVICE_ID(id->ps, ntohs(cma_addr_port(src)));
	for (unsigned i = 0; rc == 0 && i < CMA_MAX_DEVS; i++) {
		struct cma_dev *d = cma_dev_get(i);

		/* Bound to an address: its device; to the wildcard: every device. */
		if (d == NULL)
			break;
		if (c->dev != NULL && c->dev != d)
			continue;
		droce_cm_lock(d->cm);
		c->listen[i] = droce_cm_id_create(d->cm, c);
		rc = c->listen[i] == NULL ? -ENOMEM : droce_cm_listen(c->listen[i], sid);
		droce_cm_unlock(d->cm);
	}
	if (rc != 0) {
		id_unlisten(c);
		return cma_fail(-rc);
	}
	/* From here a REQ finds the listener: a script can wait for this. */
	snprintf(msg, sizeof(msg), "rdma_cm: listening on port %u", ntohs(cma_addr_port(src)));
	droce_gsi_log_info(msg);
	return 0;
}

__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	return cma_addr_port(&id->route.addr.src_addr);
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return cma_addr_port(&id->route.addr.dst_addr);
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct cma_id *c = cma_id_of(id);

	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_TOS && optlen == 1) {
		c->tos = *(uint8_t *)optval;
		return 0;
	}
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT && optlen == 1) {
		c->conn.ack_timeout = *(uint8_t *)optval;
		return 0;
	}
	if (level == RDMA_OPTION_ID &&
	    (optname == RDMA_OPTION_ID_REUSEADDR || optname == RDMA_OPTION_ID_AFONLY) &&
	    optlen == sizeof(int))
		return 0; /* droce's listeners never hold a port after they go */
	return cma_fail(level == RDMA_OPTION_IB ? ENOSYS : EINVAL);
}

/* One rdma_addrinfo from one getaddrinfo() answer. */
static struct rdma_addrinfo *
ai_from(const struct addrinfo *a, const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	struct sockaddr *sa;

	if (r == NULL || (sa = malloc(a->ai_addrlen)) == NULL) {
		free(r);
		return NULL;
	}
	memcpy(sa, a->ai_addr, a->ai_addrlen);
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = a->ai_family;
	r->ai_port_space = hints != NULL && hints->ai_port_space != 0 ? hints->ai_port_space :
			   RDMA_PS_TCP;
	r->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ? hints->ai_qp_type :
			r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_addr = sa;
		r->ai_src_len = a->ai_addrlen;
	} else {
		r->ai_dst_addr = sa;
		r->ai_dst_len = a->ai_addrlen;
	}
	return r;
}

int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	int rc;

	if (res == NULL || (node == NULL && service == NULL))
		return cma_fail(EINVAL);
	if (hints != NULL) {
		h.ai_family = hints->ai_family;
		h.ai_flags = (hints->ai_flags & RAI_PASSIVE ? AI_PASSIVE : 0) |
			     (hints->ai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0);
		if (hints->ai_port_space != 0 && hints->ai_port_space != RDMA_PS_TCP &&
		    hints->ai_port_space != RDMA_PS_IB && hints->ai_port_space != RDMA_PS_UDP)
			return cma_fail(EPROTONOSUPPORT);
	}
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc != 0)
		return cma_fail(rc == EAI_SYSTEM ? errno : EADDRNOTAVAIL);
	for (a = ai; a != NULL; a = a->ai_next) {
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		*tail = ai_from(a, hints);
		if (*tail == NULL) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(head);
			return cma_fail(ENOMEM);
		}
		tail = &(*tail)->ai_next;
	}
	freeaddrinfo(ai);
	if (head == NULL)
		return cma_fail(EADDRNOTAVAIL);
	*res = head;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cma_id *c;

	if (id == NULL || res == NULL)
		return cma_fail(EINVAL);
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	c = cma_id_of(cid);
	/* As rdma-core: the QP's type is the address's. */
	if (qp_init_attr != NULL)
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cid, res->ai_src_addr) != 0)
			goto fail;
		/* rdma_get_request() gives each connection a QP made like this. */
		if (qp_init_attr != NULL) {
			c->ep_qp_attr = malloc(sizeof(*qp_init_attr));
			if (c->ep_qp_attr == NULL)
				goto fail;
			*c->ep_qp_attr = *qp_init_attr;
		}
		cid->pd = pd;
	} else {
		if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000) != 0 ||
		    rdma_resolve_route(cid, 2000) != 0)
			goto fail;
		if (qp_init_attr != NULL && rdma_create_qp(cid, pd, qp_init_attr) != 0)
			goto fail;
	}
	*id = cid;
	return 0;
fail:
	{
		int err = errno;

		rdma_destroy_id(cid);
		errno = err;
	}
	return -1;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}
