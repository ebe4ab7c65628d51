/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of droce as a network citizen: IPv6 neighbour discovery on
 * the wire and between two ports, the neighbour cache's states, VLAN
 * tags and priorities, DSCP, static routes and gateways. Two ring
 * ethdevs back to back, a droce port on each; every test attaches the
 * pair with the network settings it needs.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ip.h>
#include <rte_ethdev.h>
#include <rte_string_fns.h>

#include "droce_port.h"
#include "droce_port_priv.h"

#define BURST 32
#define RING_SIZE 256
/* GID indexes: 0 link-local, 1 IPv4, 2 the first configured IPv6. */
#define GID_V4 1
#define GID_V6 2

static uint16_t eth_a, eth_b;
static struct droce_port *pa, *pb;

/* ---- helpers ---- */

static void
ip6(const char *s, uint8_t out[16])
{
	ck_assert_int_eq(inet_pton(AF_INET6, s, out), 1);
}

static void
ip4(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	ck_assert_int_eq(inet_pton(AF_INET, s, out + 12), 1);
}

static struct droce_net_conf
net_v6(const char *addr)
{
	struct droce_net_conf n = { .nb_ipv6 = 1 };

	ip6(addr, n.ipv6[0].addr);
	n.ipv6[0].len = 64;
	return n;
}

static void
route_add(struct droce_net_conf *n, const char *dst, unsigned len, const char *via)
{
	struct droce_route_conf *r = &n->routes[n->nb_routes++];
	bool v4 = strchr(via, ':') == NULL;

	if (v4) {
		ip4(dst, r->dst.addr);
		ip4(via, r->via);
	} else {
		ip6(dst, r->dst.addr);
		ip6(via, r->via);
	}
	r->dst.len = (uint8_t)(len + (v4 ? 96 : 0));
}

/* A is 10.0.0.1/24, B 10.0.0.2/24; the rest from @p na and @p nb. */
static int
attach(const struct droce_net_conf *na, const struct droce_net_conf *nb)
{
	struct droce_port_conf c = {
		.port_id = eth_a, .ipv4 = RTE_IPV4(10, 0, 0, 1), .ipv4_prefix = 24,
		.mtu = 1024, .nb_mbufs = 511, .net = *na,
	};
	int ret = droce_port_attach(&c, &pa);

	if (ret != 0)
		return ret;
	c.port_id = eth_b;
	c.ipv4 = RTE_IPV4(10, 0, 0, 2);
	c.net = *nb;
	return droce_port_attach(&c, &pb);
}

/* Receive and free what is there; @return the RoCE frames among it. */
static unsigned
pump(struct droce_port *p, struct droce_pkt *last)
{
	struct rte_mbuf *pkts[BURST];
	unsigned n = 0, got, i;

	do {
		got = droce_port_rx(p, 0, pkts, BURST, rte_get_tsc_cycles());
		for (i = 0; i < got; i++) {
			ck_assert(droce_port_rx_verify(p, 0, pkts[i], rte_get_tsc_cycles(), NULL));
			if (last != NULL)
				*last = *droce_pkt_of(pkts[i]);
			rte_pktmbuf_free(pkts[i]);
		}
		n += got;
	} while (got != 0);
	return n;
}

/* Route from A's GID @p sgid to @p dst, letting B answer ARP or ND. */
static int
route_via_b(int sgid, const uint8_t dst[16], struct droce_l3_addr *a)
{
	int ret = droce_port_route(pa, 0, sgid, dst, a);

	if (ret != -EAGAIN)
		return ret;
	pump(pb, NULL);
	pump(pa, NULL);
	return droce_port_route(pa, 0, sgid, dst, a);
}

static const struct droce_neigh *
neigh_find(const struct droce_port *p, const uint8_t ip[16])
{
	unsigned i;

	for (i = 0; i < DROCE_NEIGH_MAX; i++)
		if (p->neigh[i].state != DROCE_NEIGH_FREE && memcmp(p->neigh[i].ip, ip, 16) == 0)
			return &p->neigh[i];
	return NULL;
}

/* Send one SEND_ONLY from A as @p a says; @return what B parsed. */
static struct droce_pkt
roce_a_to_b(const struct droce_l3_addr *a)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(droce_port_mempool(pa));
	uint32_t l4 = sizeof(struct droce_bth);
	struct droce_pkt pkt;
	unsigned off;

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(rte_pktmbuf_append(m, (uint16_t)(droce_l3_hdr_len(a) + l4)));
	off = droce_l3_hdr_write(m, a, l4);
	droce_bth_set(rte_pktmbuf_mtod_offset(m, struct droce_bth *, off), DROCE_OP_SEND_ONLY,
		      false, 0, DROCE_PKEY_DEFAULT, 7, false, 1);
	ck_assert_int_eq(droce_icrc_append(m, RTE_ETHER_HDR_LEN +
					   (a->vlan_tci ? RTE_VLAN_HLEN : 0)), 0);
	ck_assert_uint_eq(droce_port_tx(pa, 0, &m, 1), 1);
	ck_assert_uint_eq(pump(pb, &pkt), 1);
	return pkt;
}

static void
teardown(void)
{
	unsigned i;

	/* Frames left on the rings belong to the pools about to go. */
	for (i = 0; i < 2; i++) {
		if (pa != NULL)
			pump(pa, NULL);
		if (pb != NULL)
			pump(pb, NULL);
	}
	if (pa != NULL)
		droce_port_detach(pa);
	if (pb != NULL)
		droce_port_detach(pb);
	pa = pb = NULL;
}

/* ---- neighbour discovery on the wire ---- */

/* Offset of the ICMPv6 checksum from the IPv6 header. */
#define ND_CKSUM_AT (40 + 2)

/* Build @p msg into a frame, patch byte @p at (from the IPv6 header) with
 * @p val unless @p at is 0, and parse it back. The checksum is made right
 * again after the patch, unless the patch is to the checksum. */
static enum droce_nd_err
nd_roundtrip(struct rte_mempool *mp, const struct droce_nd_msg *msg, unsigned at,
	     uint8_t val, struct droce_nd_msg *out)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint32_t l3 = RTE_ETHER_HDR_LEN + (msg->vlan_tci ? RTE_VLAN_HLEN : 0);
	struct rte_ipv6_hdr *ip;
	enum droce_nd_err err;
	uint16_t ck = 0;

	ck_assert_int_eq(droce_nd_write(m, msg), 0);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, l3);
	if (at != 0)
		((uint8_t *)ip)[at] = val;
	if (at != 0 && at != ND_CKSUM_AT) {
		memcpy((uint8_t *)ip + ND_CKSUM_AT, &ck, sizeof(ck));
		ck = rte_ipv6_udptcp_cksum(ip, ip + 1);
		memcpy((uint8_t *)ip + ND_CKSUM_AT, &ck, sizeof(ck));
	}
	err = droce_nd_parse(m, l3, msg->vlan_tci, out);
	rte_pktmbuf_free(m);
	return err;
}

START_TEST(test_nd_wire)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create("nd_wire", 63, 0, 0, 2048,
							 SOCKET_ID_ANY);
	struct droce_nd_msg ns = {
		.type = DROCE_ND_NS, .vlan_tci = 0x2064, .has_lladdr = true,
		.eth_src = {{ 2, 0, 0, 0, 0, 1 }}, .lladdr = {{ 2, 0, 0, 0, 0, 1 }},
	}, na, out;
	uint8_t want[16];

	ck_assert_ptr_nonnull(mp);
	ip6("2001:db8::1", ns.src);
	ip6("2001:db8::2:3:4", ns.target);
	droce_nd_solicited_node(ns.target, ns.dst);
	ip6("ff02::1:ff03:4", want);
	ck_assert_mem_eq(ns.dst, want, 16);
	droce_ipv6_mcast_mac(ns.dst, &ns.eth_dst);
	ck_assert(rte_is_same_ether_addr(&ns.eth_dst,
					 &(struct rte_ether_addr){{ 0x33, 0x33, 0xff, 3, 0, 4 }}));

	/* A solicitation and an advertisement come back as they went. */
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 0, 0, &out), DROCE_ND_OK);
	ck_assert_uint_eq(out.type, DROCE_ND_NS);
	ck_assert_uint_eq(out.vlan_tci, 0x2064);
	ck_assert_mem_eq(out.target, ns.target, 16);
	ck_assert_mem_eq(out.src, ns.src, 16);
	ck_assert(out.has_lladdr && rte_is_same_ether_addr(&out.lladdr, &ns.lladdr));
	na = ns;
	na.type = DROCE_ND_NA;
	na.flags = DROCE_ND_NA_SOLICITED | DROCE_ND_NA_OVERRIDE;
	ip6("2001:db8::1", na.dst);
	ck_assert_int_eq(nd_roundtrip(mp, &na, 0, 0, &out), DROCE_ND_OK);
	ck_assert_uint_eq(out.flags, DROCE_ND_NA_SOLICITED | DROCE_ND_NA_OVERRIDE);
	/* Without the option. */
	na.has_lladdr = false;
	ck_assert_int_eq(nd_roundtrip(mp, &na, 0, 0, &out), DROCE_ND_OK);
	ck_assert(!out.has_lladdr);

	/* RFC 4861 7.1: a hop limit other than 255 (routed), a bad checksum,
	 * a code other than 0, an option of length 0, a multicast target. */
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 7, 64, &out), DROCE_ND_INVALID);
	ck_assert_int_eq(nd_roundtrip(mp, &ns, ND_CKSUM_AT, 0x55, &out), DROCE_ND_INVALID);
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 40 + 1, 1, &out), DROCE_ND_INVALID);
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 40 + 24 + 1, 0, &out), DROCE_ND_INVALID);
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 40 + 8, 0xff, &out), DROCE_ND_INVALID);
	/* A solicited advertisement to a multicast group. */
	na.flags = DROCE_ND_NA_SOLICITED;
	ip6("ff02::1", na.dst);
	ck_assert_int_eq(nd_roundtrip(mp, &na, 0, 0, &out), DROCE_ND_INVALID);
	na.flags = DROCE_ND_NA_OVERRIDE;
	ck_assert_int_eq(nd_roundtrip(mp, &na, 0, 0, &out), DROCE_ND_OK);
	/* Duplicate address detection: from ::, never with the option. */
	memset(ns.src, 0, 16);
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 0, 0, &out), DROCE_ND_INVALID);
	ns.has_lladdr = false;
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 0, 0, &out), DROCE_ND_OK);
	/* Other ICMPv6 (an echo request) and other next headers are not ND. */
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 40, 128, &out), DROCE_ND_NOT_ND);
	ck_assert_int_eq(nd_roundtrip(mp, &ns, 6, 17, &out), DROCE_ND_NOT_ND);
	rte_mempool_free(mp);
}
END_TEST

/* ---- IPv6 between two ports ---- */

START_TEST(test_nd_resolve)
{
	struct droce_net_conf na = net_v6("2001:db8::1"), nb = net_v6("2001:db8::2");
	struct rte_ether_addr mac_a, mac_b;
	const struct droce_neigh *e;
	struct droce_l3_addr a;
	struct droce_pkt pkt;
	uint8_t gb[16], ga[16];

	ck_assert_int_eq(attach(&na, &nb), 0);
	droce_port_mac(pa, &mac_a);
	droce_port_mac(pb, &mac_b);
	/* rxe's order: link-local, IPv4, then the configured address. */
	ck_assert_int_eq(droce_port_gid_count(pb), 3);
	ck_assert_int_eq(droce_port_gid(pb, GID_V6, gb), 0);
	ck_assert_mem_eq(gb, nb.ipv6[0].addr, 16);
	droce_port_gid(pa, GID_V6, ga);

	/* Unknown: an NS goes out and the entry waits for the answer. */
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V6, gb, &a), -EAGAIN);
	e = neigh_find(pa, gb);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->state, DROCE_NEIGH_PENDING);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 1);
	/* B answers, and learns A from the solicitation's option. */
	pump(pb, NULL);
	ck_assert_uint_eq(pb->q[0].stats.rx_arp, 1);
	ck_assert_uint_eq(pb->q[0].stats.tx_arp, 1);
	ck_assert_ptr_nonnull(neigh_find(pb, ga));
	pump(pa, NULL);
	ck_assert_uint_eq(e->state, DROCE_NEIGH_VALID);
	ck_assert(rte_is_same_ether_addr(&e->mac, &mac_b));
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V6, gb, &a), 0);
	ck_assert(a.ipv6);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_b));

	/* RoCEv2 over IPv6, ICRC and all, with a flow label and hop limit. */
	a.flow_label = 0xabcde;
	a.ttl = 9;
	pkt = roce_a_to_b(&a);
	ck_assert(pkt.ipv6);
	ck_assert_mem_eq(pkt.dgid, gb, 16);
	ck_assert_mem_eq(pkt.sgid, ga, 16);

	/* The families do not mix; a global address off the prefix has no route. */
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V4, gb, &a), -EHOSTUNREACH);
	ip6("2001:db9::2", gb);
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V6, gb, &a), -EHOSTUNREACH);
}
END_TEST

START_TEST(test_nd_unsolicited)
{
	struct droce_net_conf na = net_v6("2001:db8::1"), nb = net_v6("2001:db8::2");
	const struct droce_neigh *e;
	struct droce_l3_addr a;
	uint8_t gb[16];

	ck_assert_int_eq(attach(&na, &nb), 0);
	droce_port_gid(pb, GID_V6, gb);
	/* B's first housekeeping advertises its link-local and global GIDs,
	 * and reports their solicited-node groups (MLD, test_mld_solicited). */
	pb->neigh_gc_next = 0;
	droce_port_tick(pb, 0, rte_get_tsc_cycles());
	ck_assert_uint_eq(pb->q[0].stats.tx_arp, 4);
	pump(pa, NULL);
	ck_assert_uint_eq(pa->q[0].stats.rx_arp, 2);
	e = neigh_find(pa, gb);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->state, DROCE_NEIGH_VALID);
	/* So A routes without asking. */
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V6, gb, &a), 0);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 0);
	/* Once only. */
	pb->neigh_gc_next = 0;
	droce_port_tick(pb, 0, rte_get_tsc_cycles());
	ck_assert_uint_eq(pb->q[0].stats.tx_arp, 4);
}
END_TEST

START_TEST(test_neigh_states)
{
	struct droce_net_conf na = net_v6("2001:db8::1"), nb = net_v6("2001:db8::2");
	uint64_t hz = rte_get_tsc_hz();
	struct droce_neigh *e;
	struct droce_l3_addr a;
	uint8_t gb[16], nobody[16];

	ck_assert_int_eq(attach(&na, &nb), 0);
	/* No unsolicited advertisements in the counts. */
	pa->nd_announced = true;
	droce_port_gid(pb, GID_V6, gb);
	ip6("2001:db8::99", nobody);
	ck_assert_int_eq(route_via_b(GID_V6, gb, &a), 0);
	/* Nobody answers for ::99: pending, asked again on each scan. */
	ck_assert_int_eq(route_via_b(GID_V6, nobody, &a), -EAGAIN);
	ck_assert_uint_eq(neigh_find(pa, nobody)->state, DROCE_NEIGH_PENDING);
	e = (struct droce_neigh *)neigh_find(pa, nobody);
	e->solicited -= hz;
	pa->neigh_gc_next = 0;
	droce_neigh_gc(pa, &pa->q[0], rte_get_tsc_cycles());
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 3);
	/* Unanswered for long: forgotten. Valid and old: refreshed when used... */
	e->updated -= 11 * hz;
	e = (struct droce_neigh *)neigh_find(pa, gb);
	e->updated -= 250 * hz;
	e->solicited -= hz;
	pa->neigh_gc_next = 0;
	droce_neigh_gc(pa, &pa->q[0], rte_get_tsc_cycles());
	ck_assert_ptr_null(neigh_find(pa, nobody));
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V6, gb, &a), 0);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 4);
	pump(pb, NULL);
	pump(pa, NULL);
	ck_assert_uint_lt(rte_get_tsc_cycles() - e->updated, hz);
	/* ...and expired when nothing refreshed it. */
	e->updated -= 301 * hz;
	pa->neigh_gc_next = 0;
	droce_neigh_gc(pa, &pa->q[0], rte_get_tsc_cycles());
	ck_assert_ptr_null(neigh_find(pa, gb));
}
END_TEST

/*
 * droce_port_resolve(), from a thread that is no engine (rdma_resolve_addr's):
 * it sends nothing itself, queue 0's engine solicits at its next scan, and
 * the answer resolves it; through a route, the router is what it waits for.
 */
START_TEST(test_resolve_any_thread)
{
	struct droce_net_conf na = net_v6("2001:db8::1"), nb = net_v6("2001:db8::2");
	uint8_t gb[16], dst[16];

	route_add(&na, "10.9.0.0", 16, "10.0.0.2");
	ck_assert_int_eq(attach(&na, &nb), 0);
	pa->nd_announced = true;
	droce_port_gid(pb, GID_V4, gb);
	/* As if a scan had just run: the next is a second away. */
	pa->neigh_gc_next = UINT64_MAX;
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, gb), -EAGAIN);
	ck_assert_uint_eq(neigh_find(pa, gb)->state, DROCE_NEIGH_PENDING);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 0);
	/* Asked again at once: no second request is due. */
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, gb), -EAGAIN);
	droce_neigh_gc(pa, &pa->q[0], rte_get_tsc_cycles());
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 1);
	pump(pb, NULL);
	pump(pa, NULL);
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, gb), 0);
	/* Behind the route: B, now known. */
	ip4("10.9.1.1", dst);
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, dst), 0);
	/* Ours, a group, no route, the other family, a bad index. */
	droce_port_gid(pa, GID_V4, dst);
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, dst), 0);
	ip4("239.1.1.1", dst);
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, dst), 0);
	ip4("10.8.1.1", dst);
	ck_assert_int_eq(droce_port_resolve(pa, GID_V4, dst), -EHOSTUNREACH);
	ck_assert_int_eq(droce_port_resolve(pa, GID_V6, gb), -EHOSTUNREACH);
	ck_assert_int_eq(droce_port_resolve(pa, 99, gb), -EINVAL);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, 1);
}
END_TEST

/* ---- VLAN, priority and DSCP ---- */

START_TEST(test_vlan)
{
	struct droce_net_conf na = net_v6("2001:db8::1"), nb = net_v6("2001:db8::2");
	const struct droce_neigh *e;
	struct droce_l3_addr a;
	struct droce_pkt pkt;
	uint8_t gb[16];

	na.vlan = nb.vlan = 100;
	ck_assert_int_eq(attach(&na, &nb), 0);
	/* ARP over the VLAN: B learns A with its tag, A learns B. */
	ip4("10.0.0.2", gb);
	ck_assert_int_eq(route_via_b(GID_V4, gb, &a), 0);
	e = neigh_find(pa, gb);
	ck_assert_uint_eq(e->vlan_tci & RTE_VLAN_ID_MASK, 100);
	/* Trust PCP (the default): the AH's SL is the priority; the traffic
	 * class is the AH's. */
	droce_port_qos(pa, 3, 0x68, &a);
	ck_assert_uint_eq(a.vlan_tci, 100 | 3 << 13);
	ck_assert_uint_eq(a.tclass, 0x68);
	pkt = roce_a_to_b(&a);
	ck_assert_uint_eq(pkt.vlan_tci, 100 | 3 << 13);
	/* ND over the VLAN too. */
	droce_port_gid(pb, GID_V6, gb);
	ck_assert_int_eq(route_via_b(GID_V6, gb, &a), 0);
	ck_assert_uint_eq(a.vlan_tci, 100);
	droce_port_qos(pa, 1, 0, &a);
	pkt = roce_a_to_b(&a);
	ck_assert_uint_eq(pkt.vlan_tci, 100 | 1 << 13);
	teardown();

	/* A on VLAN 100, B on 200: neither hears the other. */
	nb.vlan = 200;
	ck_assert_int_eq(attach(&na, &nb), 0);
	ip4("10.0.0.2", gb);
	ck_assert_int_eq(route_via_b(GID_V4, gb, &a), -EAGAIN);
	ck_assert_uint_eq(pb->q[0].stats.rx_arp, 0);
	ck_assert_uint_eq(pb->q[0].stats.rx_not_ours, 1);
	droce_port_gid(pb, GID_V6, gb);
	ck_assert_int_eq(route_via_b(GID_V6, gb, &a), -EAGAIN);
	ck_assert_uint_eq(pb->q[0].stats.rx_not_ours, 2);
}
END_TEST

/* A port whose ethdev inserts VLAN tags (the capability set by hand: the
 * ring PMD has none): what it sends leaves untagged, the tag in the mbuf
 * for the NIC; tagged as a NIC would, B takes it as before. */
START_TEST(test_vlan_insert_offload)
{
	struct droce_net_conf na = { .vlan = 100 }, nb = { .vlan = 100 };
	struct rte_ring *ab = rte_ring_lookup("net_ab");
	const struct rte_ether_hdr *eh;
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	uint8_t gb[16];

	ck_assert_ptr_nonnull(ab);
	ck_assert_int_eq(attach(&na, &nb), 0);
	pa->drv_ctx.caps.tx_vlan_insert = true;
	ip4("10.0.0.2", gb);
	/* A's ARP request, as A's ethdev got it */
	ck_assert_int_eq(droce_port_route(pa, 0, GID_V4, gb, &a), -EAGAIN);
	ck_assert_int_eq(rte_ring_dequeue(ab, (void **)&m), 0);
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ck_assert_uint_eq(eh->ether_type, RTE_BE16(RTE_ETHER_TYPE_ARP));
	ck_assert(m->ol_flags & RTE_MBUF_F_TX_VLAN);
	ck_assert_uint_eq(m->vlan_tci, 100);
	/* the shortest frame droce sends (60 bytes with the tag) less the tag */
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m),
			  RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN - RTE_VLAN_HLEN);
	/* the NIC's part */
	ck_assert_int_eq(rte_vlan_insert(&m), 0);
	ck_assert_int_eq(rte_ring_enqueue(ab, m), 0);
	ck_assert_int_eq(route_via_b(GID_V4, gb, &a), 0);
	ck_assert_uint_eq(neigh_find(pb, (uint8_t[16]){ [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 })->vlan_tci &
			  RTE_VLAN_ID_MASK, 100);
}
END_TEST

START_TEST(test_qos)
{
	struct droce_net_conf na = { .vlan = 5, .pcp_mode = DROCE_PCP_DSCP };
	struct droce_net_conf nb = { .pcp_mode = DROCE_PCP_FIXED, .pcp = 6, .dscp_fixed = true,
				     .dscp = 46 };
	struct droce_l3_addr a = { 0 };

	ck_assert_int_eq(attach(&na, &nb), 0);
	/* DSCP from the traffic class (26: AF31), its ECN bits kept (the
	 * frame builder sets congestion control's), priority DSCP / 8. */
	droce_port_qos(pa, 7, 26 << 2 | 1, &a);
	ck_assert_uint_eq(a.tclass, 26 << 2 | 1);
	ck_assert_uint_eq(a.vlan_tci, 5 | 3 << 13);
	/* A fixed DSCP; no VLAN: no tag, whatever the PCP. */
	a.vlan_tci = 0;
	droce_port_qos(pb, 7, 2, &a);
	ck_assert_uint_eq(a.tclass, 46 << 2 | 2);
	ck_assert_uint_eq(a.vlan_tci, 0);
}
END_TEST

/* ---- routes ---- */

START_TEST(test_routes)
{
	struct droce_net_conf na = net_v6("2001:db8::1"), nb = net_v6("2001:db8::2");
	struct rte_ether_addr mac_b;
	struct droce_l3_addr a;
	uint8_t dst[16];

	/* B is A's router for 10.9/16 and IPv6's default; 10.0.0.254, the
	 * IPv4 default, never answers. */
	route_add(&na, "10.9.0.0", 16, "10.0.0.2");
	route_add(&na, "0.0.0.0", 0, "10.0.0.254");
	route_add(&na, "::", 0, "2001:db8::2");
	ck_assert_int_eq(attach(&na, &nb), 0);
	droce_port_mac(pb, &mac_b);
	ip4("10.9.1.1", dst);
	ck_assert_int_eq(route_via_b(GID_V4, dst, &a), 0);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_b));
	/* The GID stays the destination; the hop limit is the AH's business. */
	ck_assert_mem_eq(a.dgid, dst, 16);
	ip4("10.0.0.2", dst);
	ck_assert_ptr_nonnull(neigh_find(pa, dst));
	ip4("10.9.1.1", dst);
	ck_assert_ptr_null(neigh_find(pa, dst));
	/* Longest prefix: anything else takes the default, which is unresolved. */
	ip4("10.8.1.1", dst);
	ck_assert_int_eq(route_via_b(GID_V4, dst, &a), -EAGAIN);
	ip4("10.0.0.254", dst);
	ck_assert_ptr_nonnull(neigh_find(pa, dst));
	/* IPv6 off the prefix goes through B too. */
	ip6("2001:db9::5", dst);
	ck_assert_int_eq(route_via_b(GID_V6, dst, &a), 0);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_b));
	ck_assert_mem_eq(a.dgid, dst, 16);
	teardown();

	/* A next hop off the link is refused at attach. */
	na = net_v6("2001:db8::1");
	route_add(&na, "10.9.0.0", 16, "10.1.0.2");
	ck_assert_int_eq(attach(&na, &nb), -EINVAL);
	na.nb_routes = 0;
	route_add(&na, "2001:db9::", 32, "2001:db7::1");
	ck_assert_int_eq(attach(&na, &nb), -EINVAL);
}
END_TEST

/* ---- main ---- */

static void
setup_eal(void)
{
	const char *env = getenv("DROCE_TEST_EAL");
	/* The EAL keeps pointers into argv: a buffer that lives as long. */
	static char args[512];
	char *argv[32] = { "test_net" };
	struct rte_ring *r[2];
	int n, id[2], i;

	snprintf(args, sizeof(args), "%s", env != NULL ? env : "-l 0 --no-huge -m 256 --no-shconf --no-pci");
	n = rte_strsplit(args, (int)strlen(args), argv + 1, RTE_DIM(argv) - 1, ' ');
	if (rte_eal_init(n + 1, argv) < 0)
		exit(EXIT_FAILURE);
	droce_icrc_init();
	/* Two ring ethdevs, each one's TX ring the other's RX ring. */
	r[0] = rte_ring_create("net_ab", RING_SIZE, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	r[1] = rte_ring_create("net_ba", RING_SIZE, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	for (i = 0; i < 2; i++) {
		char name[16];

		snprintf(name, sizeof(name), "net_ring%d", i);
		id[i] = r[0] && r[1] ? rte_eth_from_rings(name, &r[1 - i], 1, &r[i], 1, 0) : -1;
		if (id[i] < 0)
			exit(EXIT_FAILURE);
	}
	eth_a = (uint16_t)id[0];
	eth_b = (uint16_t)id[1];
}

/* Is @p mac among the @p n of @p macs? */
static bool
mac_in(const struct rte_ether_addr *macs, unsigned n, const uint8_t mac[6])
{
	for (unsigned i = 0; i < n; i++)
		if (memcmp(macs[i].addr_bytes, mac, 6) == 0)
			return true;
	return false;
}

/* The multicast MACs a port asks its ethdev's filter for: IPv6 ND's (all
 * nodes, the solicited-node group of each IPv6 GID, once each) and the
 * UD groups joined; none for IPv4 GIDs. */
START_TEST(test_mcast_filter)
{
	struct droce_net_conf na = net_v6("2001:db8::1:2:3"), nb = net_v6("2001:db8::2");
	static const uint8_t all_nodes[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	struct rte_ether_addr macs[DROCE_PORT_MCAST_MACS];
	uint8_t ll[16], grp[16], sn[6] = { 0x33, 0x33, 0xff };
	unsigned n;

	ck_assert_int_eq(attach(&na, &nb), 0);
	n = droce_port_mcast_macs(pa, macs);
	/* all nodes, link-local's and 2001:db8::1:2:3's solicited-node groups */
	ck_assert_uint_eq(n, 3);
	ck_assert(mac_in(macs, n, all_nodes));
	droce_port_gid(pa, 0, ll);
	memcpy(sn + 3, ll + 13, 3);
	ck_assert(mac_in(macs, n, sn));
	memcpy(sn + 3, na.ipv6[0].addr + 13, 3);
	ck_assert(mac_in(macs, n, sn));
	/* A UD group joined adds its MAC, leaving takes it out again. */
	ip6("ff0e::1234:5678", grp);
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp, 0x11), 0);
	n = droce_port_mcast_macs(pa, macs);
	ck_assert_uint_eq(n, 4);
	ck_assert(mac_in(macs, n, (const uint8_t[]){ 0x33, 0x33, 0x12, 0x34, 0x56, 0x78 }));
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp, 0x11), 0);
	ck_assert_uint_eq(droce_port_mcast_macs(pa, macs), 3);
}
END_TEST

/* ---- IGMP ---- */

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* Hand every frame on @p eth's ring to @p take, then free it. */
static void
ring_drain(uint16_t eth, void (*take)(const struct rte_mbuf *m, void *arg), void *arg)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t k, i;

	while ((k = rte_eth_rx_burst(eth, 0, pkts, BURST)) != 0) {
		for (i = 0; i < k; i++)
			take(pkts[i], arg);
		rte_pktmbuf_free_bulk(pkts, k);
	}
}

/* What igmp_rx() and mld_rx() collect. */
struct rx_got {
	void *got;
	unsigned n, max;
};

static void
igmp_take(const struct rte_mbuf *m, void *arg)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);
	struct rx_got *g = arg;
	struct droce_igmp_msg msg;

	if (eh->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    droce_igmp_parse(m, RTE_ETHER_HDR_LEN, 0, &msg) != DROCE_IGMP_OK)
		return;
	ck_assert_uint_lt(g->n, g->max);
	ck_assert_uint_eq(eh->dst_addr.addr_bytes[0], 0x01);
	ck_assert_uint_eq(eh->dst_addr.addr_bytes[5], msg.dst & 0xff);
	ck_assert_uint_eq(ip->time_to_live, 1);
	ck_assert_uint_eq(ip->version_ihl, 0x46);
	ck_assert_uint_eq(((const uint8_t *)(ip + 1))[0], 0x94);
	ck_assert_uint_eq(rte_ipv4_cksum(ip), 0);
	((struct droce_igmp_msg *)g->got)[g->n++] = msg;
}

/* The IGMP frames on @p eth's ring, parsed into @p got (at most @p max),
 * each checked as the wire must carry it: to the multicast MAC of its
 * destination, TTL 1, router alert, both checksums right. Other frames
 * are dropped. @return how many. */
static unsigned
igmp_rx(uint16_t eth, struct droce_igmp_msg *got, unsigned max)
{
	struct rx_got g = { .got = got, .max = max };

	ring_drain(eth, igmp_take, &g);
	return g.n;
}

/* B sends a query for @p group (0: all), to all systems or to the group;
 * with @p bad its checksum is wrong. A takes it. */
static void
igmp_query_from_b(uint32_t group, bool bad)
{
	struct droce_igmp_msg q = {
		.type = DROCE_IGMP_QUERY,
		.src = IP4(10, 0, 0, 2),
		.dst = group != 0 ? group : DROCE_IGMP_ALL_SYSTEMS,
		.group = group,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(droce_port_mempool(pb));

	ck_assert_ptr_nonnull(m);
	droce_port_mac(pb, &q.eth_src);
	ck_assert_int_eq(droce_igmp_write(m, &q), 0);
	if (bad)
		rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 1)[0] ^= 1;
	ck_assert_uint_eq(droce_port_tx(pb, 0, &m, 1), 1);
	pump(pa, NULL);
}

/* @p m's bytes after the first @p split moved into a second segment. */
static void
split_after(struct rte_mbuf *m, uint16_t split)
{
	struct rte_mbuf *tail = rte_pktmbuf_alloc(m->pool);
	uint16_t rest = (uint16_t)(rte_pktmbuf_data_len(m) - split);

	ck_assert_ptr_nonnull(tail);
	memcpy(rte_pktmbuf_append(tail, rest), rte_pktmbuf_mtod_offset(m, void *, split), rest);
	rte_pktmbuf_trim(m, rest);
	ck_assert_int_eq(rte_pktmbuf_chain(m, tail), 0);
}

/* @p msg written, byte @p at of the frame set to @p val unless @p at is 0
 * (the IPv4 header's checksum made right again, unless @p at is in it), split into two segments after @p split bytes
 * unless 0, then parsed back. */
static enum droce_igmp_err
igmp_roundtrip(const struct droce_igmp_msg *msg, unsigned at, uint8_t val, uint16_t split,
	       struct droce_igmp_msg *out)
{
	struct rte_mempool *mp = droce_port_mempool(pa);
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	enum droce_igmp_err err;

	ck_assert_int_eq(droce_igmp_write(m, msg), 0);
	if (at != 0) {
		struct rte_ipv4_hdr *ip =
			rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);

		rte_pktmbuf_mtod_offset(m, uint8_t *, at)[0] = val;
		if (at < RTE_ETHER_HDR_LEN + 10 || at > RTE_ETHER_HDR_LEN + 11) {
			ip->hdr_checksum = 0;
			ip->hdr_checksum = (uint16_t)~rte_raw_cksum(ip, 24);
		}
	}
	if (split != 0)
		split_after(m, split);
	err = droce_igmp_parse(m, RTE_ETHER_HDR_LEN, 0, out);
	rte_pktmbuf_free(m);
	return err;
}

/* IGMP on the wire: what is written parses back, in one segment or two
 * (split in the IPv4 header, in the IGMP message); what RFC 2236 and
 * 3376 say to drop is refused, and other IPv4 is not IGMP. */
START_TEST(test_igmp_wire)
{
	struct droce_net_conf none = { 0 };
	struct droce_igmp_msg q = {
		.type = DROCE_IGMP_QUERY, .src = IP4(10, 0, 0, 2),
		.dst = DROCE_IGMP_ALL_SYSTEMS, .group = 0,
	}, out;
	/* Offsets in the frame: the IPv4 header's fields (its 24 bytes with
	 * the router alert), the group's last byte. */
	enum {
		IHL = RTE_ETHER_HDR_LEN, TOTAL_LEN = IHL + 3, FRAG = IHL + 6, TTL = IHL + 8,
		PROTO = IHL + 9, GROUP_LO = IHL + 24 + 7,
	};

	ck_assert_int_eq(attach(&none, &none), 0);
	ck_assert_int_eq(igmp_roundtrip(&q, 0, 0, 0, &out), DROCE_IGMP_OK);
	ck_assert_uint_eq(out.type, DROCE_IGMP_QUERY);
	ck_assert_uint_eq(out.group, 0);
	ck_assert_uint_eq(out.src, q.src);
	ck_assert_uint_eq(out.dst, q.dst);
	for (uint16_t split = RTE_ETHER_HDR_LEN + 5; split < RTE_ETHER_HDR_LEN + 32; split += 7) {
		ck_assert_int_eq(igmp_roundtrip(&q, 0, 0, split, &out), DROCE_IGMP_OK);
		ck_assert_uint_eq(out.group, 0);
	}
	q.group = IP4(239, 1, 1, 1);
	ck_assert_int_eq(igmp_roundtrip(&q, 0, 0, RTE_ETHER_HDR_LEN + 26, &out), DROCE_IGMP_OK);
	ck_assert_uint_eq(out.group, q.group);
	/* The checksum; a group that is not one; a query routed here; a
	 * fragment; header and total lengths that do not hold. */
	ck_assert_int_eq(igmp_roundtrip(&q, GROUP_LO, 2, 0, &out), DROCE_IGMP_INVALID);
	q.group = IP4(10, 1, 1, 1);
	ck_assert_int_eq(igmp_roundtrip(&q, 0, 0, 0, &out), DROCE_IGMP_INVALID);
	q.group = 0;
	ck_assert_int_eq(igmp_roundtrip(&q, TTL, 2, 0, &out), DROCE_IGMP_INVALID);
	ck_assert_int_eq(igmp_roundtrip(&q, FRAG, 0x20, 0, &out), DROCE_IGMP_INVALID);
	ck_assert_int_eq(igmp_roundtrip(&q, IHL, 0x44, 0, &out), DROCE_IGMP_INVALID);
	ck_assert_int_eq(igmp_roundtrip(&q, IHL, 0x4f, 0, &out), DROCE_IGMP_INVALID);
	ck_assert_int_eq(igmp_roundtrip(&q, TOTAL_LEN, 31, 0, &out), DROCE_IGMP_INVALID);
	ck_assert_int_eq(igmp_roundtrip(&q, TOTAL_LEN, 200, 0, &out), DROCE_IGMP_INVALID);
	ck_assert_int_eq(igmp_roundtrip(&q, PROTO, 17, 0, &out), DROCE_IGMP_NOT_IGMP);
	ck_assert_int_eq(igmp_roundtrip(&q, IHL + 10, 0x55, 0, &out), DROCE_IGMP_INVALID);
	/* Reports and leaves parse, whatever their TTL: not ours to check. */
	q.type = DROCE_IGMP_V2_LEAVE;
	q.group = IP4(239, 1, 1, 1);
	ck_assert_int_eq(igmp_roundtrip(&q, TTL, 9, 0, &out), DROCE_IGMP_OK);
	ck_assert_uint_eq(out.type, DROCE_IGMP_V2_LEAVE);
}
END_TEST

START_TEST(test_igmp)
{
	static const uint8_t all_systems[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	struct droce_net_conf none = { 0 };
	struct rte_ether_addr macs[DROCE_PORT_MCAST_MACS], mac_a;
	const uint32_t g1 = IP4(239, 1, 1, 1), g2 = IP4(239, 2, 2, 2);
	uint64_t hz = rte_get_tsc_hz(), now, malformed;
	struct droce_igmp_msg got[4];
	uint8_t grp[16], grp6[16];

	ck_assert_int_eq(attach(&none, &none), 0);
	droce_port_mac(pa, &mac_a);
	ip4("239.1.1.1", grp);
	ck_assert(!mac_in(macs, droce_port_mcast_macs(pa, macs), all_systems));
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp, 0x11), 0);
	/* With an IPv4 group the port takes the general queries too. */
	ck_assert(mac_in(macs, droce_port_mcast_macs(pa, macs), all_systems));

	/* A report at once (from the next tick of queue 0's engine), and one
	 * a second later; then none. */
	now = rte_get_tsc_cycles();
	droce_mcast_report_tick(pa, &pa->q[0], now);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_IGMP_V2_REPORT);
	ck_assert_uint_eq(got[0].group, g1);
	ck_assert_uint_eq(got[0].dst, g1);
	ck_assert_uint_eq(got[0].src, IP4(10, 0, 0, 1));
	ck_assert(rte_is_same_ether_addr(&got[0].eth_src, &mac_a));
	droce_mcast_report_tick(pa, &pa->q[0], now + hz / 2);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + hz);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_IGMP_V2_REPORT);
	droce_mcast_report_tick(pa, &pa->q[0], now + 5 * hz);
	/* A second member of the group changes nothing. */
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp, 0x12), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 6 * hz);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 0);

	/* Queries: general, and for the group, are answered; for another
	 * group (not even received: its MAC is not the port's), and with a
	 * bad checksum (malformed), not. */
	igmp_query_from_b(0, false);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_IGMP_V2_REPORT);
	ck_assert_uint_eq(got[0].group, g1);
	igmp_query_from_b(g1, false);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 1);
	igmp_query_from_b(g2, false);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 0);
	malformed = pa->q[0].stats.rx_malformed;
	igmp_query_from_b(0, true);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 0);
	ck_assert_uint_eq(pa->q[0].stats.rx_malformed, malformed + 1);

	/* The last member's going: a leave to all routers. */
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 7 * hz);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 0);
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp, 0x12), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 8 * hz);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_IGMP_V2_LEAVE);
	ck_assert_uint_eq(got[0].dst, DROCE_IGMP_ALL_ROUTERS);
	ck_assert_uint_eq(got[0].group, g1);
	ck_assert(!mac_in(macs, droce_port_mcast_macs(pa, macs), all_systems));
	/* An IPv6 group has no IGMP. */
	ip6("ff0e::1234", grp6);
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp6, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 9 * hz);
	ck_assert_uint_eq(igmp_rx(eth_b, got, 4), 0);
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp6, 0x11), 0);
}
END_TEST

static void
mld_take(const struct rte_mbuf *m, void *arg)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eh + 1);
	struct rx_got *g = arg;
	struct droce_mld_msg msg;

	if (eh->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV6) ||
	    droce_mld_parse(m, RTE_ETHER_HDR_LEN, 0, &msg) != DROCE_MLD_OK)
		return;
	ck_assert_uint_lt(g->n, g->max);
	ck_assert_uint_eq(eh->dst_addr.addr_bytes[0], 0x33);
	ck_assert_mem_eq(eh->dst_addr.addr_bytes + 2, msg.dst + 12, 4);
	ck_assert_uint_eq(ip->hop_limits, 1);
	ck_assert_uint_eq(ip->proto, 0);
	((struct droce_mld_msg *)g->got)[g->n++] = msg;
}

/* MLD frames that reach @p eth, checked as RFC 2710 sends them (hop
 * limit 1, a Hop-by-Hop header, the group's MAC): @return how many. */
static unsigned
mld_rx(uint16_t eth, struct droce_mld_msg *got, unsigned max)
{
	struct rx_got g = { .got = got, .max = max };

	ring_drain(eth, mld_take, &g);
	return g.n;
}

/* B sends an MLD query for @p group (NULL: all) from its link-local
 * address, to all nodes or to the group; with @p bad its checksum is
 * wrong. A takes it. */
static void
mld_query_from_b(const uint8_t *group, bool bad)
{
	struct droce_mld_msg q = { .type = DROCE_MLD_QUERY };
	struct rte_mbuf *m = rte_pktmbuf_alloc(droce_port_mempool(pb));

	ck_assert_ptr_nonnull(m);
	droce_port_mac(pb, &q.eth_src);
	ck_assert_int_eq(droce_port_gid(pb, 0, q.src), 0);
	if (group != NULL) {
		memcpy(q.group, group, 16);
		memcpy(q.dst, group, 16);
	} else {
		ip6("ff02::1", q.dst);
	}
	ck_assert_int_eq(droce_mld_write(m, &q), 0);
	if (bad)
		rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 1)[0] ^= 1;
	ck_assert_uint_eq(droce_port_tx(pb, 0, &m, 1), 1);
	pump(pa, NULL);
}

/* @p msg written, byte @p at of the frame set to @p val unless @p at is 0,
 * split into two segments after @p split bytes unless 0, parsed back. */
static enum droce_mld_err
mld_roundtrip(const struct droce_mld_msg *msg, unsigned at, uint8_t val, uint16_t split,
	      struct droce_mld_msg *out)
{
	struct rte_mempool *mp = droce_port_mempool(pa);
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	enum droce_mld_err err;

	ck_assert_int_eq(droce_mld_write(m, msg), 0);
	if (at != 0)
		rte_pktmbuf_mtod_offset(m, uint8_t *, at)[0] = val;
	if (split != 0)
		split_after(m, split);
	err = droce_mld_parse(m, RTE_ETHER_HDR_LEN, 0, out);
	rte_pktmbuf_free(m);
	return err;
}

/* MLD on the wire: what is written parses back, in one segment or two
 * (split in the IPv6 header, the Hop-by-Hop header, the message); what
 * RFC 2710, 2711 and 3810 say to drop is refused; ICMPv6 without the
 * Hop-by-Hop header, or behind one with something else, is not MLD. */
START_TEST(test_mld_wire)
{
	struct droce_net_conf none = { 0 };
	struct droce_mld_msg q = { .type = DROCE_MLD_QUERY }, out;
	/* Offsets in the frame: the IPv6 header's, the Hop-by-Hop header's
	 * (its next header, the Router Alert's type and value), the group's
	 * last byte. */
	enum {
		IP = RTE_ETHER_HDR_LEN, PLEN_LO = IP + 5, NEXT = IP + 6, HOPS = IP + 7,
		HBH = IP + 40, HBH_NEXT = HBH, RA = HBH + 2, RA_VAL = HBH + 4, PADN = HBH + 6,
		GROUP_LO = HBH + 8 + 23,
	};

	ck_assert_int_eq(attach(&none, &none), 0);
	ip6("fe80::2", q.src);
	ip6("ff02::1", q.dst);
	ck_assert_int_eq(mld_roundtrip(&q, 0, 0, 0, &out), DROCE_MLD_OK);
	ck_assert_uint_eq(out.type, DROCE_MLD_QUERY);
	ck_assert_mem_eq(out.src, q.src, 16);
	ck_assert_mem_eq(out.dst, q.dst, 16);
	ck_assert_mem_eq(out.group, (uint8_t[16]){ 0 }, 16);
	for (uint16_t split = IP + 5; split < GROUP_LO; split += 7)
		ck_assert_int_eq(mld_roundtrip(&q, 0, 0, split, &out), DROCE_MLD_OK);
	ip6("ff0e::1234", q.group);
	ck_assert_int_eq(mld_roundtrip(&q, 0, 0, HBH + 8 + 11, &out), DROCE_MLD_OK);
	ck_assert_mem_eq(out.group, q.group, 16);
	/* The checksum; a query routed here; no Router Alert, or another
	 * one's; an option that asks to drop; payload lengths that do not
	 * hold. */
	ck_assert_int_eq(mld_roundtrip(&q, GROUP_LO, 0x35, 0, &out), DROCE_MLD_INVALID);
	ck_assert_int_eq(mld_roundtrip(&q, HOPS, 2, 0, &out), DROCE_MLD_INVALID);
	ck_assert_int_eq(mld_roundtrip(&q, RA, 1, 0, &out), DROCE_MLD_INVALID);
	ck_assert_int_eq(mld_roundtrip(&q, RA_VAL, 1, 0, &out), DROCE_MLD_INVALID);
	ck_assert_int_eq(mld_roundtrip(&q, PADN, 0xc1, 0, &out), DROCE_MLD_INVALID);
	ck_assert_int_eq(mld_roundtrip(&q, PLEN_LO, 31, 0, &out), DROCE_MLD_INVALID);
	ck_assert_int_eq(mld_roundtrip(&q, PLEN_LO, 33, 0, &out), DROCE_MLD_INVALID);
	/* An unknown option that may be skipped is. */
	ck_assert_int_eq(mld_roundtrip(&q, PADN, 0x1e, 0, &out), DROCE_MLD_OK);
	/* A query from an address that is not link-local, for a group that
	 * is not one. */
	ip6("2001:db8::2", q.src);
	ck_assert_int_eq(mld_roundtrip(&q, 0, 0, 0, &out), DROCE_MLD_INVALID);
	ip6("fe80::2", q.src);
	ip6("2001:db8::9", q.group);
	ck_assert_int_eq(mld_roundtrip(&q, 0, 0, 0, &out), DROCE_MLD_INVALID);
	ip6("ff0e::1234", q.group);
	ck_assert_int_eq(mld_roundtrip(&q, NEXT, 58, 0, &out), DROCE_MLD_NOT_MLD);
	ck_assert_int_eq(mld_roundtrip(&q, HBH_NEXT, 17, 0, &out), DROCE_MLD_NOT_MLD);
	/* Reports and dones parse; their source is not checked. */
	q.type = DROCE_MLD_V1_DONE;
	ip6("2001:db8::2", q.src);
	ck_assert_int_eq(mld_roundtrip(&q, 0, 0, 0, &out), DROCE_MLD_OK);
	ck_assert_uint_eq(out.type, DROCE_MLD_V1_DONE);
}
END_TEST

/* A port's MLD: reports of a new IPv6 group from its link-local address,
 * queries answered, a done when the group goes; none for IPv4 groups. */
START_TEST(test_mld)
{
	struct droce_net_conf none = { 0 };
	uint64_t hz = rte_get_tsc_hz(), now, malformed, tx_arp;
	uint8_t grp[16], other[16], grp4[16], ll_a[16], all_routers[16];
	struct droce_mld_msg got[4];

	ck_assert_int_eq(attach(&none, &none), 0);
	ck_assert_int_eq(droce_port_gid(pa, 0, ll_a), 0);
	ip6("ff0e::1234", grp);
	ip6("ff0e::99", other);
	ip6("ff02::2", all_routers);
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp, 0x11), 0);

	/* A report at once, one a second later, then none. */
	now = rte_get_tsc_cycles();
	droce_mcast_report_tick(pa, &pa->q[0], now);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_MLD_V1_REPORT);
	ck_assert_mem_eq(got[0].group, grp, 16);
	ck_assert_mem_eq(got[0].dst, grp, 16);
	ck_assert_mem_eq(got[0].src, ll_a, 16);
	droce_mcast_report_tick(pa, &pa->q[0], now + hz / 2);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + hz);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 1);
	droce_mcast_report_tick(pa, &pa->q[0], now + 5 * hz);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);

	/* Queries: general (to all nodes), and for the group, are answered;
	 * for another group (its MAC not the port's), and with a bad
	 * checksum (malformed), not. */
	mld_query_from_b(NULL, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_MLD_V1_REPORT);
	ck_assert_mem_eq(got[0].group, grp, 16);
	/* General queries are answered at most every 100 ms: a flood of
	 * them is no flood of reports. */
	mld_query_from_b(NULL, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	rte_delay_ms(110);
	mld_query_from_b(NULL, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 1);
	mld_query_from_b(grp, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 1);
	mld_query_from_b(other, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	malformed = pa->q[0].stats.rx_malformed;
	mld_query_from_b(NULL, true);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	ck_assert_uint_eq(pa->q[0].stats.rx_malformed, malformed + 1);

	/* The last member's going: a done to all routers. */
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 6 * hz);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 1);
	ck_assert_uint_eq(got[0].type, DROCE_MLD_V1_DONE);
	ck_assert_mem_eq(got[0].dst, all_routers, 16);
	ck_assert_mem_eq(got[0].group, grp, 16);
	/* An IPv4 group has no MLD; a general MLD query does not report it. */
	ip4("239.1.1.1", grp4);
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp4, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 7 * hz);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 8 * hz); /* its second IGMP report */
	rte_delay_ms(110);
	mld_query_from_b(NULL, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp4, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 8 * hz + 1); /* its leave */
	tx_arp = pa->q[0].stats.tx_arp;
	/* Nobody reports all nodes, nor a group that never leaves the host
	 * (interface-local), nor all systems with IGMP: joined and left,
	 * nothing is sent, and a general query names none of them. */
	ip6("ff02::1", grp);
	ip6("ff01::5", other);
	ip4("224.0.0.1", grp4);
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp, 0x11), 0);
	ck_assert_int_eq(droce_port_mcast_attach(pa, other, 0x11), 0);
	ck_assert_int_eq(droce_port_mcast_attach(pa, grp4, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 9 * hz);
	rte_delay_ms(110);
	mld_query_from_b(NULL, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 4), 0);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, tx_arp);
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp, 0x11), 0);
	ck_assert_int_eq(droce_port_mcast_detach(pa, other, 0x11), 0);
	ck_assert_int_eq(droce_port_mcast_detach(pa, grp4, 0x11), 0);
	droce_mcast_report_tick(pa, &pa->q[0], now + 10 * hz);
	ck_assert_uint_eq(pa->q[0].stats.tx_arp, tx_arp);
}
END_TEST

/* @p want among the @p n reports of @p got. */
static bool
mld_reported(const struct droce_mld_msg *got, unsigned n, const uint8_t want[16])
{
	for (unsigned i = 0; i < n; i++)
		if (got[i].type == DROCE_MLD_V1_REPORT && memcmp(got[i].group, want, 16) == 0 &&
		    memcmp(got[i].dst, want, 16) == 0)
			return true;
	return false;
}

/* A port given IPv6 addresses reports the solicited-node groups of its
 * IPv6 GIDs once it runs, as a host's stack does, and names them in
 * answer to queries: a switch that snoops MLD passes neighbour
 * solicitations for its addresses to it only so. */
START_TEST(test_mld_solicited)
{
	struct droce_net_conf na = net_v6("2001:db8::1:2:3"), nb = net_v6("2001:db8::2");
	struct droce_mld_msg got[8];
	uint8_t g[16], sn_ll[16], sn_v6[16];

	ck_assert_int_eq(attach(&na, &nb), 0);
	ck_assert_int_eq(droce_port_gid(pa, 0, g), 0);
	droce_nd_solicited_node(g, sn_ll);
	ck_assert_int_eq(droce_port_gid(pa, GID_V6, g), 0);
	droce_nd_solicited_node(g, sn_v6);
	pa->neigh_gc_next = 0;
	droce_port_tick(pa, 0, rte_get_tsc_cycles());
	ck_assert_uint_eq(mld_rx(eth_b, got, 8), 2);
	ck_assert(mld_reported(got, 2, sn_ll));
	ck_assert(mld_reported(got, 2, sn_v6));
	mld_query_from_b(NULL, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 8), 2);
	ck_assert(mld_reported(got, 2, sn_ll));
	ck_assert(mld_reported(got, 2, sn_v6));
	mld_query_from_b(sn_v6, false);
	ck_assert_uint_eq(mld_rx(eth_b, got, 8), 1);
	ck_assert(mld_reported(got, 1, sn_v6));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("net");
	TCase *tc = tcase_create("net");
	SRunner *sr;
	int failed;

	setup_eal();
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_nd_wire);
	tcase_add_test(tc, test_nd_resolve);
	tcase_add_test(tc, test_nd_unsolicited);
	tcase_add_test(tc, test_neigh_states);
	tcase_add_test(tc, test_resolve_any_thread);
	tcase_add_test(tc, test_vlan);
	tcase_add_test(tc, test_vlan_insert_offload);
	tcase_add_test(tc, test_qos);
	tcase_add_test(tc, test_routes);
	tcase_add_test(tc, test_mcast_filter);
	tcase_add_test(tc, test_igmp_wire);
	tcase_add_test(tc, test_igmp);
	tcase_add_test(tc, test_mld_wire);
	tcase_add_test(tc, test_mld);
	tcase_add_test(tc, test_mld_solicited);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_eal_cleanup();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
