/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Membership reports for the groups the port's QPs joined, so that a
 * switch that snoops them (and a multicast router) sends the groups'
 * frames to this port: IGMP for IPv4 groups (droce_igmp.c), MLD for IPv6
 * ones (droce_mld.c), the host's part of RFC 2236 and RFC 2710, which
 * share it. The kernel's IP stack does it for rxe's rdma_cm joins;
 * droce's port has no IP stack beside it.
 *
 * A group's first member has two unsolicited version 2 (IGMP) or version
 * 1 (MLD) reports sent, a second apart (the RFCs' robustness), its last
 * member's going a leave or done to all routers; a query, general or for
 * one of the groups, is answered at once with a report for each group it
 * asks about (a host may answer anywhere in the query's max response
 * time, zero included; reports are not suppressed: on a switched LAN each
 * port's must reach the switch), general ones at most every 100 ms (each
 * is answered with a report per group: a flood of them must not make a
 * flood of reports). Queries of every version are answered
 * with those reports, which routers of the later versions take (RFC 3376
 * 7.3.2, RFC 3810 8.3.2: compatibility mode).
 *
 * A port given IPv6 addresses also reports the solicited-node group of
 * each of its IPv6 GIDs, as a host's IP stack does (RFC 4861 7.2.1): a
 * switch that snoops MLD and floods no unregistered multicast passes a
 * neighbour solicitation for an address only to the ports that reported
 * its group. They are reported once the port runs, as its addresses are
 * announced (droce_neigh.c), and in answer to queries.
 *
 * Joins and leaves come from verbs threads (ibv_attach_mcast()), which
 * only note what is due; queue 0's engine sends it. A port without an
 * IPv4 address has no IGMP; every port has MLD, whose messages go from
 * its link-local address (GID 0). Frames are counted with ARP's (rx_arp,
 * tx_arp), as ND's are.
 */
#include <string.h>

#include <rte_cycles.h>

#include "droce_port_priv.h"

/* Unsolicited reports of a new group (the RFCs' "Robustness Variable"). */
#define REPORTS 2
/* Between them: RFC 2236's and RFC 2710's Unsolicited Report Interval is
 * 10 s, RFC 3376's and RFC 3810's (and Linux's default) 1 s; droce takes
 * the shorter (about: queue 0's engine looks every second). */
#define REPEAT_S 1
/* General queries answered at most this often: each is answered with a
 * report per group, and a flood of them must not make the port a flood
 * of reports. A router sends one every 125 s by default. */
#define GENERAL_EVERY_MS 100

/* Send the report (or, @p leave, the leave or done) of group @p gid. */
static void
report_send(struct droce_port *p, struct droce_port_queue *pq, const uint8_t gid[16], bool leave)
{
	if (droce_gid_is_v4mapped(gid))
		droce_igmp_send(p, pq, gid, leave);
	else
		droce_mld_send(p, pq, gid, leave);
}

/* Is @p gid a group the port reports? Not all systems (224.0.0.1) nor
 * all nodes (ff02::1), which every host is in and nobody reports (RFC
 * 2236 6, RFC 2710 5), nor an IPv6 group of a scope under the link's
 * (interface-local: it never leaves the host); IPv4 groups only from a
 * port with an address. */
static bool
report_wanted(const struct droce_port *p, const uint8_t gid[16])
{
	static const uint8_t all_nodes[16] = {
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01
	};
	uint8_t all_systems[16];

	if (droce_gid_is_v4mapped(gid)) {
		droce_gid_from_ipv4(DROCE_IGMP_ALL_SYSTEMS, all_systems);
		return p->ipv4 != 0 && memcmp(gid, all_systems, 16) != 0;
	}
	return (gid[1] & 0x0f) >= 2 && memcmp(gid, all_nodes, 16) != 0;
}

/* Under the write lock: the report (or, @p leave, the leave) of @p gid
 * is due now, in place of what was due for it. */
static void
report_due(struct droce_port *p, const uint8_t gid[16], bool leave)
{
	struct droce_mcast *mc = &p->mcast;
	struct droce_mcast_report_due *d = NULL;
	unsigned i;

	if (!report_wanted(p, gid))
		return;
	for (i = 0; i < mc->nb_report_due && d == NULL; i++)
		if (memcmp(mc->report_due[i].gid, gid, 16) == 0)
			d = &mc->report_due[i];
	if (d == NULL) {
		/* Full only if groups come and go faster than a second: the
		 * next query tells the router what holds. */
		if (mc->nb_report_due == RTE_DIM(mc->report_due))
			return;
		d = &mc->report_due[mc->nb_report_due++];
	}
	memcpy(d->gid, gid, 16);
	d->leave = leave;
	d->left = leave ? 1 : REPORTS;
	d->at = 0;
	__atomic_store_n(&mc->report_next, 0, __ATOMIC_RELAXED);
	/* Queue 0's engine runs its port tick now (the neighbour table's
	 * scan comes along: it is due every second anyway). */
	__atomic_store_n(&p->neigh_gc_next, 0, __ATOMIC_RELAXED);
}

void
droce_mcast_report_joined(struct droce_port *p, const uint8_t gid[16])
{
	report_due(p, gid, false);
}

void
droce_mcast_report_left(struct droce_port *p, const uint8_t gid[16])
{
	report_due(p, gid, true);
}

/* The solicited-node groups of the port's IPv6 GIDs, each once, into
 * @p out (room for DROCE_GID_TABLE_LEN), when it was given IPv6
 * addresses. @return how many. */
static unsigned
solicited_groups(const struct droce_port *p, uint8_t out[][16])
{
	unsigned n = 0, i, k;
	uint8_t sn[16];

	if (p->net.nb_ipv6 == 0)
		return 0;
	for (i = 0; i < (unsigned)p->nb_gids; i++) {
		if (droce_gid_is_v4mapped(p->gids[i]))
			continue;
		droce_nd_solicited_node(p->gids[i], sn);
		for (k = 0; k < n && memcmp(out[k], sn, 16) != 0; k++)
			;
		if (k == n)
			memcpy(out[n++], sn, 16);
	}
	return n;
}

void
droce_mcast_report_solicited(struct droce_port *p)
{
	uint8_t sn[DROCE_GID_TABLE_LEN][16];
	unsigned n = solicited_groups(p, sn), i;

	rte_rwlock_write_lock(&p->mcast.lock);
	for (i = 0; i < n; i++)
		report_due(p, sn[i], false);
	rte_rwlock_write_unlock(&p->mcast.lock);
}

void
droce_mcast_report_tick(struct droce_port *p, struct droce_port_queue *pq, uint64_t now)
{
	struct droce_mcast *mc = &p->mcast;
	struct droce_mcast_report_due send[RTE_DIM(mc->report_due)];
	uint64_t next = UINT64_MAX;
	unsigned n = 0, i = 0;

	if (now < __atomic_load_n(&mc->report_next, __ATOMIC_RELAXED))
		return;
	rte_rwlock_write_lock(&mc->lock);
	while (i < mc->nb_report_due) {
		struct droce_mcast_report_due *d = &mc->report_due[i];

		if (d->at <= now) {
			send[n++] = *d;
			d->at = now + p->tsc_hz * REPEAT_S;
			if (--d->left == 0) {
				*d = mc->report_due[--mc->nb_report_due];
				continue;
			}
		}
		next = RTE_MIN(next, d->at);
		i++;
	}
	__atomic_store_n(&mc->report_next, next, __ATOMIC_RELAXED);
	rte_rwlock_write_unlock(&mc->lock);
	for (i = 0; i < n; i++)
		report_send(p, pq, send[i].gid, send[i].leave);
}

void
droce_mcast_report_answer(struct droce_port *p, struct droce_port_queue *pq, bool v4,
			  const uint8_t *asked)
{
	struct droce_mcast *mc = &p->mcast;
	uint8_t gids[DROCE_MCAST_MAX + DROCE_GID_TABLE_LEN][16];
	unsigned n = 0, i;

	if (asked == NULL) {
		uint64_t now = rte_get_tsc_cycles(),
			 last = __atomic_load_n(&mc->general_answered[v4], __ATOMIC_RELAXED);

		if (last != 0 && now - last < p->tsc_hz / 1000 * GENERAL_EVERY_MS)
			return;
		__atomic_store_n(&mc->general_answered[v4], now, __ATOMIC_RELAXED);
	}
	if (!v4) {
		uint8_t sn[DROCE_GID_TABLE_LEN][16];
		unsigned k = solicited_groups(p, sn);

		for (i = 0; i < k; i++)
			if (asked == NULL || memcmp(asked, sn[i], 16) == 0)
				memcpy(gids[n++], sn[i], 16);
	}
	rte_rwlock_read_lock(&mc->lock);
	for (i = 0; i < mc->nb_groups; i++) {
		const uint8_t *g = mc->groups[i].gid;

		if (droce_gid_is_v4mapped(g) == v4 && report_wanted(p, g) &&
		    (asked == NULL || memcmp(asked, g, 16) == 0))
			memcpy(gids[n++], g, 16);
	}
	rte_rwlock_read_unlock(&mc->lock);
	for (i = 0; i < n; i++)
		report_send(p, pq, gids[i], false);
}
