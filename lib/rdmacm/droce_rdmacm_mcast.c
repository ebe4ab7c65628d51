/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast on UD IDs (RDMA_PS_UDP), as the kernel's cma.c joins on RoCE
 * (cma_iboe_join_multicast()): no SA and no MAD, the group is the IP
 * multicast address itself, its GID the IPv4-mapped address (RoCEv2) or
 * the IPv6 one. rdma_join_multicast() attaches the ID's UD QP to the
 * group (not for a send-only join) and queues MULTICAST_JOIN, whose UD
 * parameters are what a sender needs: an address handle's attributes for
 * the group, QPN 0xffffff, the port space's Q_Key, and the join's context
 * as private_data. rdma_leave_multicast() detaches the QP.
 *
 * Where this differs from rdma-core's librdmacm, errors are told sooner:
 * the QP attached is the one the ID has when rdma_join_multicast() is
 * called (librdmacm attaches the one it has when the event is read), and
 * a failed attach fails the call with its errno (librdmacm turns the event
 * into MULTICAST_ERROR). The kernel refuses IPv6 groups on RoCEv2, having
 * no MLD for them; droce's port joins them as it joins IPv4 groups. The
 * port reports its groups to the network, IPv4 ones by IGMP and IPv6 ones
 * by MLD (lib/port/droce_mcast_report.c, docs/rdma-cm.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "droce_rdmacm_priv.h"

/* What MULTICAST_JOIN names as the remote QP: every QP attached. */
#define CMA_MC_QPN 0xffffffu

struct cma_mc {
	LIST_ENTRY(cma_mc) link;
	struct sockaddr_storage addr;  /**< as rdma_join_multicast() was given it */
	union ibv_gid mgid;
	bool attached;                 /**< the ID's QP joined (not send-only) */
};

/* An IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address. */
static bool
mc_addr_ok(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	return IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* From here the group's datagrams reach the ID's QP (when @p attached): a
 * script can wait for this line before it starts the sender. */
static void
mc_log_join(const struct sockaddr *sa, bool attached)
{
	char addr[INET6_ADDRSTRLEN], msg[96];
	const void *a = sa->sa_family == AF_INET ?
		(const void *)&((const struct sockaddr_in *)sa)->sin_addr :
		(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (inet_ntop(sa->sa_family, a, addr, sizeof(addr)) == NULL)
		return;
	snprintf(msg, sizeof(msg), "rdma_cm: joined %s%s", addr, attached ? "" : " (send only)");
	droce_gsi_log_info(msg);
}

/* As the kernel asks: a UD ID with a device, whose address is bound or
 * resolved and nothing more (no route, no SIDR, not listening). */
static bool
mc_id_ok(const struct cma_id *c)
{
	if (c->dev == NULL || c->id.qp_type != IBV_QPT_UD || c->id.route.path_rec != NULL ||
	    c->cm_id != NULL)
		return false;
	for (unsigned i = 0; i < CMA_MAX_DEVS; i++)
		if (c->listen[i] != NULL)
			return false;
	return true;
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
		       void *context)
{
	struct cma_id *c = cma_id_of(id);
	struct rdma_ud_param p = { .private_data = context, .qp_num = CMA_MC_QPN,
				   .qkey = DROCE_RDMA_UDP_QKEY };
	struct rdma_cm_event *ev;
	struct cma_mc *mc;
	socklen_t len;
	int sgid, rc;

	if (c == NULL || attr == NULL || attr->addr == NULL ||
	    (attr->comp_mask & ~(RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return cma_fail(EINVAL);
	len = cma_addr_len(attr->addr);
	if (len == 0)
		return cma_fail(EAFNOSUPPORT);
	/* A group of the ID's own family: RoCEv2 sends IPv4 to IPv4 only. */
	if (!mc_addr_ok(attr->addr) || !mc_id_ok(c) ||
	    attr->addr->sa_family != id->route.addr.src_addr.sa_family)
		return cma_fail(EINVAL);
	sgid = cma_dev_gid_index(c->dev, &id->route.addr.addr.ibaddr.sgid);
	if (sgid < 0)
		return cma_fail(EADDRNOTAVAIL);
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL)
		return cma_fail(ENOMEM);
	memcpy(&mc->addr, attr->addr, len);
	cma_addr_gid(attr->addr, &mc->mgid);
	if (attr->join_flags == RDMA_MC_JOIN_FLAG_FULLMEMBER && id->qp != NULL) {
		rc = ibv_attach_mcast(id->qp, &mc->mgid, 0);
		if (rc != 0) {
			free(mc);
			return cma_fail(rc);
		}
		mc->attached = true;
	}
	pthread_mutex_lock(&c->mc_lock);
	LIST_INSERT_HEAD(&c->mcs, mc, link);
	pthread_mutex_unlock(&c->mc_lock);
	mc_log_join(attr->addr, mc->attached);

	cma_ud_ah_attr(c, &mc->mgid, sgid, &p.ah_attr);
	cma_event_queue_ud(c, RDMA_CM_EVENT_MULTICAST_JOIN, 0, &p, NULL, 0, NULL);
	if (!c->sync)
		return 0;
	/* Without a channel the event is the ID's, as rdma-core leaves it. */
	if (rdma_get_cm_event(id->channel, &ev) != 0)
		return -1;
	if (id->event != NULL)
		rdma_ack_cm_event(id->event);
	id->event = ev;
	return 0;
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = addr,
	};

	return rdma_join_multicast_ex(id, &attr, context);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c = cma_id_of(id);
	struct cma_mc *mc;
	socklen_t len;

	if (c == NULL || addr == NULL)
		return cma_fail(EINVAL);
	len = cma_addr_len(addr);
	pthread_mutex_lock(&c->mc_lock);
	LIST_FOREACH(mc, &c->mcs, link)
		if (len != 0 && memcmp(&mc->addr, addr, len) == 0)
			break;
	if (mc != NULL)
		LIST_REMOVE(mc, link);
	pthread_mutex_unlock(&c->mc_lock);
	if (mc == NULL)
		return cma_fail(EADDRNOTAVAIL);
	/* As librdmacm: the QP the ID has now, which rdma_destroy_qp() may
	 * have taken already (and its groups with it). */
	if (mc->attached && id->qp != NULL)
		ibv_detach_mcast(id->qp, &mc->mgid, 0);
	free(mc);
	return 0;
}

void
cma_mc_release(struct cma_id *c)
{
	struct cma_mc *mc;

	while ((mc = LIST_FIRST(&c->mcs)) != NULL) {
		LIST_REMOVE(mc, link);
		free(mc);
	}
}
