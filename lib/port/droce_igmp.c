/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IGMP for the IPv4 groups the port's QPs joined: the host's part of
 * RFC 2236, so that a switch that snoops IGMP (and a multicast router)
 * sends the group's frames to this port. The kernel's IP stack does it
 * for rxe's rdma_cm joins; droce's port has no IP stack beside it.
 *
 * A group's first member has two unsolicited version 2 reports sent, a
 * second apart (RFC 2236's robustness), its last member's going a leave
 * to all routers; a query, general or for one of the groups, is answered
 * at once with a report for each group it asks about (a host may answer
 * anywhere in the query's max response time, zero included; reports are
 * not suppressed: on a switched LAN each port's must reach the switch).
 * Queries of all three versions are answered with version 2 reports,
 * which version 3 routers take (RFC 3376 7.3.2, compatibility mode).
 *
 * Joins and leaves come from verbs threads (ibv_attach_mcast()), which
 * only note what is due; queue 0's engine sends it. A port without an
 * IPv4 address has no IGMP. Frames are counted with ARP's (rx_arp,
 * tx_arp), as ND's are.
 */
#include <string.h>

#include <rte_cycles.h>

#include "droce_port_priv.h"

/* Unsolicited reports of a new group (RFC 2236 "Robustness Variable"). */
#define IGMP_REPORTS 2
/* Between them: RFC 2236's Unsolicited Report Interval is 10 s, RFC
 * 3376's (and Linux's default, IGMPv3) 1 s; droce takes the shorter
 * (about: queue 0's engine looks every second). */
#define IGMP_REPEAT_S 1

static bool
igmp_group_of(const uint8_t gid[16], uint32_t *group)
{
	rte_be32_t be;

	if (!droce_gid_is_v4mapped(gid) || !droce_gid_is_mcast(gid))
		return false;
	memcpy(&be, gid + 12, sizeof(be));
	*group = rte_be_to_cpu_32(be);
	return true;
}

static void
igmp_send(struct droce_port *p, struct droce_port_queue *pq, uint8_t type, uint32_t group)
{
	struct droce_igmp_msg msg = {
		.type = type,
		.vlan_tci = droce_net_vlan_tci(p, p->net.pcp),
		.eth_src = p->mac,
		.src = p->ipv4,
		.dst = type == DROCE_IGMP_V2_LEAVE ? DROCE_IGMP_ALL_ROUTERS : group,
		.group = group,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->mp);

	if (m == NULL)
		return;
	if (droce_igmp_write(m, &msg) != 0 || droce_port_queue_tx(p, pq, &m, 1, true) == 0) {
		rte_pktmbuf_free(m);
		return;
	}
	DROCE_STAT_ADD(pq, tx_arp, 1);
}

/* Under the write lock: @p type for @p group is due now, in place of
 * what was due for it. */
static void
igmp_due(struct droce_port *p, const uint8_t gid[16], uint8_t type)
{
	struct droce_mcast *mc = &p->mcast;
	struct droce_igmp_due *d = NULL;
	uint32_t group;
	unsigned i;

	if (p->ipv4 == 0 || !igmp_group_of(gid, &group))
		return;
	for (i = 0; i < mc->nb_igmp_due && d == NULL; i++)
		if (mc->igmp_due[i].group == group)
			d = &mc->igmp_due[i];
	if (d == NULL) {
		/* Full only if groups come and go faster than a second: the
		 * next query tells the router what holds. */
		if (mc->nb_igmp_due == RTE_DIM(mc->igmp_due))
			return;
		d = &mc->igmp_due[mc->nb_igmp_due++];
	}
	*d = (struct droce_igmp_due){
		.group = group,
		.type = type,
		.left = type == DROCE_IGMP_V2_REPORT ? IGMP_REPORTS : 1,
		.at = 0,
	};
	__atomic_store_n(&mc->igmp_next, 0, __ATOMIC_RELAXED);
	/* Queue 0's engine runs its port tick now (the neighbour table's
	 * scan comes along: it is due every second anyway). */
	__atomic_store_n(&p->neigh_gc_next, 0, __ATOMIC_RELAXED);
}

void
droce_igmp_joined(struct droce_port *p, const uint8_t gid[16])
{
	igmp_due(p, gid, DROCE_IGMP_V2_REPORT);
}

void
droce_igmp_left(struct droce_port *p, const uint8_t gid[16])
{
	igmp_due(p, gid, DROCE_IGMP_V2_LEAVE);
}

void
droce_igmp_tick(struct droce_port *p, struct droce_port_queue *pq, uint64_t now)
{
	struct droce_mcast *mc = &p->mcast;
	struct droce_igmp_due send[RTE_DIM(mc->igmp_due)];
	uint64_t next = UINT64_MAX;
	unsigned n = 0, i = 0;

	if (now < __atomic_load_n(&mc->igmp_next, __ATOMIC_RELAXED))
		return;
	rte_rwlock_write_lock(&mc->lock);
	while (i < mc->nb_igmp_due) {
		struct droce_igmp_due *d = &mc->igmp_due[i];

		if (d->at <= now) {
			send[n++] = *d;
			d->at = now + p->tsc_hz * IGMP_REPEAT_S;
			if (--d->left == 0) {
				*d = mc->igmp_due[--mc->nb_igmp_due];
				continue;
			}
		}
		next = RTE_MIN(next, d->at);
		i++;
	}
	__atomic_store_n(&mc->igmp_next, next, __ATOMIC_RELAXED);
	rte_rwlock_write_unlock(&mc->lock);
	for (i = 0; i < n; i++)
		igmp_send(p, pq, send[i].type, send[i].group);
}

/* A query: a report for each IPv4 group it asks about that the port has. */
static void
igmp_answer(struct droce_port *p, struct droce_port_queue *pq, uint32_t asked)
{
	struct droce_mcast *mc = &p->mcast;
	uint32_t groups[DROCE_MCAST_MAX];
	unsigned n = 0, i;

	rte_rwlock_read_lock(&mc->lock);
	for (i = 0; i < mc->nb_groups; i++) {
		uint32_t g;

		if (igmp_group_of(mc->groups[i].gid, &g) && (asked == 0 || asked == g))
			groups[n++] = g;
	}
	rte_rwlock_read_unlock(&mc->lock);
	for (i = 0; i < n; i++)
		igmp_send(p, pq, DROCE_IGMP_V2_REPORT, groups[i]);
}

bool
droce_igmp_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		 uint32_t off, uint16_t vlan_tci)
{
	uint8_t proto_buf;
	/* The IPv4 header's protocol byte: RoCE pays one read and one compare. */
	const uint8_t *proto = rte_pktmbuf_read(m, off + 9, 1, &proto_buf);
	struct droce_igmp_msg msg;
	enum droce_igmp_err err;

	if (proto == NULL || *proto != 2)
		return false;
	err = droce_igmp_parse(m, off, vlan_tci, &msg);
	if (err == DROCE_IGMP_NOT_IGMP)
		return false;
	/* Other hosts' reports and leaves are theirs: nothing to do. */
	if (droce_port_ctl_take(p, pq, m, err == DROCE_IGMP_OK, vlan_tci) &&
	    msg.type == DROCE_IGMP_QUERY && p->ipv4 != 0)
		igmp_answer(p, pq, msg.group);
	return true;
}
