/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/port: two ring ethdevs connected back to back, a
 * droce port on each (A 10.0.0.1/24, B 10.0.0.2/24).
 */
#include <check.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_random.h>
#include <rte_ring.h>

#include "droce_port.h"
#include "droce_port_priv.h"

#define IP_A RTE_IPV4(10, 0, 0, 1)
#define IP_B RTE_IPV4(10, 0, 0, 2)
/* Size of the rings between the two ethdevs. */
#define WIRE_RING 256
#define BURST 32u
#define MAX_FRAME 4300

static uint16_t eth_a, eth_b;
static struct droce_port *pa, *pb;
static const struct rte_ether_addr mac_a = {{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a }};

/* ---- helpers ---- */

static struct droce_port_stats
stats(const struct droce_port *p)
{
	struct droce_port_stats s;

	droce_port_stats_get(p, &s);
	return s;
}

static void
gid_of_ipv4(uint32_t ip, uint8_t gid[16])
{
	rte_be32_t be = rte_cpu_to_be_32(ip);

	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &be, 4);
}

/* Receive once; the RoCE frames returned are freed unless @p keep. */
static uint16_t
pump(struct droce_port *p, struct rte_mbuf **keep)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = droce_port_rx(p, 0, pkts, BURST, rte_get_tsc_cycles()), i, good = 0;

	/* As the engine does: a frame counts once its ICRC is right. */
	for (i = 0; i < n; i++) {
		bool ok = droce_port_rx_verify(p, 0, pkts[i], rte_get_tsc_cycles(), NULL);

		if (ok && keep != NULL)
			keep[good] = pkts[i];
		else
			rte_pktmbuf_free(pkts[i]);
		good += ok;
	}
	return good;
}

static void
drain(struct droce_port *p)
{
	unsigned i;

	/* Nothing in flight outlives a few empty polls on ring ethdevs. */
	for (i = 0; i < 4; i++)
		while (pump(p, NULL) != 0)
			;
}

/* Route A (GID index 1, IPv4) to B: ARP request, B's reply, done. */
static void
resolve_a_to_b(struct droce_l3_addr *a)
{
	uint8_t dgid[16];

	gid_of_ipv4(IP_B, dgid);
	if (droce_port_route(pa, 0, 1, dgid, a) == 0)
		return;
	ck_assert_uint_eq(pump(pb, NULL), 0);
	ck_assert_uint_eq(pump(pa, NULL), 0);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, a), 0);
}

/* A SEND_ONLY frame with @p len payload bytes (a multiple of 4). */
static struct rte_mbuf *
build_roce(struct droce_port *p, const struct droce_l3_addr *a, uint8_t opcode,
	   uint32_t qpn, uint32_t psn, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(droce_port_mempool(p));
	uint32_t l4 = sizeof(struct droce_bth) + len, i;
	uint16_t l3_off = sizeof(struct rte_ether_hdr) +
			  (a->vlan_tci ? sizeof(struct rte_vlan_hdr) : 0);
	unsigned off;
	uint8_t *d;

	ck_assert_ptr_nonnull(m);
	d = (uint8_t *)rte_pktmbuf_append(m, droce_l3_hdr_len(a) + l4);
	ck_assert_ptr_nonnull(d);
	off = droce_l3_hdr_write(m, a, l4);
	droce_bth_set((struct droce_bth *)(d + off), opcode, false, 0,
		      DROCE_PKEY_DEFAULT, qpn, true, psn);
	for (i = 0; i < len; i++)
		d[off + sizeof(struct droce_bth) + i] = (uint8_t)i;
	ck_assert_int_eq(droce_icrc_append(m, l3_off), 0);
	return m;
}

static void
send_one(struct droce_port *p, struct rte_mbuf *m)
{
	ck_assert_uint_eq(droce_port_tx(p, 0, &m, 1), 1);
}

/* ---- fixture ---- */

static void
setup(void)
{
	struct droce_port_conf ca = {
		.port_id = eth_a, .mac_set = true, .mac = mac_a,
		.ipv4 = IP_A, .ipv4_prefix = 24, .mtu = 4096, .nb_mbufs = 1023,
	};
	struct droce_port_conf cb = {
		.port_id = eth_b,
		.ipv4 = IP_B, .ipv4_prefix = 24, .mtu = 4096, .nb_mbufs = 1023,
	};

	ck_assert_int_eq(droce_port_attach(&ca, &pa), 0);
	ck_assert_int_eq(droce_port_attach(&cb, &pb), 0);
}

static void
teardown(void)
{
	/* Frames still on the wire rings belong to the pools about to go. */
	drain(pa);
	drain(pb);
	drain(pa);
	droce_port_detach(pa);
	droce_port_detach(pb);
	pa = pb = NULL;
}

/* ---- tests ---- */

START_TEST(test_attach_conf)
{
	struct droce_port_conf c = { .port_id = eth_a, .mtu = 3000 };
	struct rte_ether_addr mac;
	struct droce_port *p;
	struct rte_mbuf *m;

	ck_assert_int_eq(droce_port_attach(&c, &p), -EINVAL);
	c.mtu = 1024;
	c.ipv4 = IP_A;
	c.ipv4_prefix = 0;
	ck_assert_int_eq(droce_port_attach(&c, &p), -EINVAL);
	c.ipv4_prefix = 24;
	c.port_id = RTE_MAX_ETHPORTS - 1;
	ck_assert_int_eq(droce_port_attach(&c, &p), -ENODEV);

	ck_assert_uint_eq(droce_port_ethdev(pa), eth_a);
	ck_assert_uint_eq(droce_port_ipv4(pa), IP_A);
	ck_assert_uint_eq(droce_port_mtu(pa), 4096);
	droce_port_mac(pa, &mac);
	ck_assert(rte_is_same_ether_addr(&mac, &mac_a));
	/* B took the ethdev's MAC or made one: a usable unicast either way. */
	droce_port_mac(pb, &mac);
	ck_assert(rte_is_valid_assigned_ether_addr(&mac));
	ck_assert(!rte_is_same_ether_addr(&mac, &mac_a));
	/* A 4096-MTU frame fits one mbuf of the pool. */
	ck_assert_uint_ge(rte_pktmbuf_data_room_size(droce_port_mempool(pa)) -
			  RTE_PKTMBUF_HEADROOM, 4096 + 110);
	ck_assert_uint_ge(rte_pktmbuf_priv_size(droce_port_mempool(pa)),
			  sizeof(struct droce_pkt));
	/* Its frames start on a cache line (where a PMD writes them). */
	m = rte_pktmbuf_alloc(droce_port_mempool(pa));
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq((uintptr_t)rte_pktmbuf_mtod(m, void *) % RTE_CACHE_LINE_SIZE, 0);
	rte_pktmbuf_free(m);
}
END_TEST

/* Frame of IB MTU @p mtu with every header droce may put around it. */
static uint32_t
largest_frame(uint16_t mtu)
{
	return mtu + DROCE_PORT_L3_OVERHEAD + DROCE_PORT_L2_OVERHEAD;
}

START_TEST(test_buf_plan)
{
	static const struct droce_driver_ops tiny = {
		.name = "tiny", .mbuf_obj_max = 1024, .rx_headroom = 256,
	};
	struct droce_port_buf b;
	struct rte_mempool *mp;

	/* Any size: the default room, the MTU asked for. */
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_generic, 0, 4096, &b), 0);
	ck_assert_uint_eq(b.data_room, DROCE_PORT_DATA_ROOM);
	ck_assert_uint_eq(b.ib_mtu, 4096);

	/* AF_XDP: a whole pool object fits in a page, as the pool really
	 * lays it out, and 4096 comes down to the 2048 its frames allow. */
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_af_xdp, 0, 4096, &b), 0);
	ck_assert_uint_eq(b.ib_mtu, 2048);
	ck_assert_uint_ge(b.data_room - droce_drv_af_xdp.rx_headroom, largest_frame(2048));
	mp = rte_pktmbuf_pool_create("test_buf_plan", 63, 0, DROCE_PORT_MBUF_PRIV,
				     RTE_PKTMBUF_HEADROOM + b.data_room, SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(mp);
	ck_assert_uint_le(mp->header_size + mp->elt_size + mp->trailer_size, 4096);
	rte_mempool_free(mp);
	/* A smaller MTU is kept. */
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_af_xdp, 0, 1024, &b), 0);
	ck_assert_uint_eq(b.ib_mtu, 1024);

	/* Frames of one memif buffer: 2048 bytes (memif's default) take IB
	 * MTU 1024, 4352 (bsize=4352) take 4096, in full-sized mbufs. */
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_memif, 2048, 4096, &b), 0);
	ck_assert_uint_eq(b.ib_mtu, 1024);
	ck_assert_uint_eq(b.data_room, DROCE_PORT_DATA_ROOM);
	ck_assert_uint_eq(b.frame_room, 2048);
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_memif, 4352, 4096, &b), 0);
	ck_assert_uint_eq(b.ib_mtu, 4096);
	/* af_packet: a ring frame less the kernel's offset, 2048 by default. */
	ck_assert_uint_eq(droce_drv_af_packet.frame_max(&(struct rte_eth_dev_info){ 0 }), 1968);

	/* Room for no RoCE frame at all. */
	ck_assert_int_eq(droce_port_buf_plan(&tiny, 0, 256, &b), -ENOSPC);
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_generic, 300, 256, &b), -ENOSPC);
}
END_TEST

START_TEST(test_gid_table)
{
	static const uint8_t ll[16] = {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x0a };
	uint8_t gid[16], v4[16];

	ck_assert_int_eq(droce_port_gid_count(pa), 2);
	ck_assert_int_eq(droce_port_gid(pa, 0, gid), 0);
	ck_assert_mem_eq(gid, ll, 16);
	ck_assert_int_eq(droce_port_gid(pa, 1, gid), 0);
	gid_of_ipv4(IP_A, v4);
	ck_assert_mem_eq(gid, v4, 16);
	ck_assert_int_eq(droce_port_gid(pa, 2, gid), -EINVAL);
	ck_assert_int_eq(droce_port_gid(pa, -1, gid), -EINVAL);
	ck_assert_int_eq(droce_port_gid_find(pa, ll), 0);
	ck_assert_int_eq(droce_port_gid_find(pa, v4), 1);
	gid_of_ipv4(IP_B, v4);
	ck_assert_int_eq(droce_port_gid_find(pa, v4), -1);
	ck_assert_int_eq(droce_port_gid_find(pb, v4), 1);
}
END_TEST

START_TEST(test_route_arp)
{
	struct rte_ether_addr mac_b;
	struct droce_l3_addr a;
	uint8_t dgid[16], sgid[16];

	droce_port_mac(pb, &mac_b);
	gid_of_ipv4(IP_B, dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EAGAIN);
	ck_assert_uint_eq(stats(pa).tx_arp, 1);
	/* Rate-limited: asking again at once sends nothing. */
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EAGAIN);
	ck_assert_uint_eq(stats(pa).tx_arp, 1);

	/* B answers and learns A from the request. */
	ck_assert_uint_eq(pump(pb, NULL), 0);
	ck_assert_uint_eq(stats(pb).rx_arp, 1);
	ck_assert_uint_eq(stats(pb).tx_arp, 1);
	ck_assert_uint_eq(pump(pa, NULL), 0);
	ck_assert_uint_eq(stats(pa).rx_arp, 1);

	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), 0);
	ck_assert(!a.ipv6);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_b));
	ck_assert(rte_is_same_ether_addr(&a.src_mac, &mac_a));
	ck_assert_mem_eq(a.dgid, dgid, 16);
	gid_of_ipv4(IP_A, sgid);
	ck_assert_mem_eq(a.sgid, sgid, 16);
	ck_assert_uint_eq(a.ttl, 64);
	ck_assert_uint_eq(a.tclass, 0);
	ck_assert_uint_eq(a.vlan_tci, 0);
	ck_assert_uint_ge(a.udp_sport, 0xc000);
	ck_assert_uint_eq(stats(pa).tx_arp, 1);

	/* B learned A from its request: no ARP the other way. */
	ck_assert_int_eq(droce_port_route(pb, 0, 1, sgid, &a), 0);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_a));
	ck_assert_uint_eq(stats(pb).tx_arp, 1);
}
END_TEST

/* A host on VLAN 5 asks B: B answers on VLAN 5 and reaches it there. */
START_TEST(test_arp_vlan)
{
	static const struct rte_ether_addr host = {{ 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 }};
	const uint32_t host_ip = RTE_IPV4(10, 0, 0, 9);
	struct rte_ether_addr mac_b;
	struct rte_ether_hdr *eh;
	struct rte_vlan_hdr *vh;
	struct rte_arp_hdr *arp;
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	uint8_t dgid[16];

	droce_port_mac(pb, &mac_b);
	m = rte_pktmbuf_alloc(droce_port_mempool(pa));
	ck_assert_ptr_nonnull(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, 60);
	ck_assert_ptr_nonnull(eh);
	memset(eh, 0, 60);
	memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	eh->src_addr = host;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
	vh = (struct rte_vlan_hdr *)(eh + 1);
	vh->vlan_tci = RTE_BE16(5);
	vh->eth_proto = RTE_BE16(RTE_ETHER_TYPE_ARP);
	arp = (struct rte_arp_hdr *)(vh + 1);
	arp->arp_hardware = RTE_BE16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = RTE_BE16(RTE_ARP_OP_REQUEST);
	arp->arp_data.arp_sha = host;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(host_ip);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(IP_B);
	ck_assert_uint_eq(rte_eth_tx_burst(eth_a, 0, &m, 1), 1);
	ck_assert_uint_eq(pump(pb, NULL), 0);
	ck_assert_uint_eq(stats(pb).tx_arp, 1);

	/* The reply, read from ethdev A under port A's feet. */
	ck_assert_uint_eq(rte_eth_rx_burst(eth_a, 0, &m, 1), 1);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), 60);
	eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ck_assert(rte_is_same_ether_addr(&eh->dst_addr, &host));
	ck_assert(rte_is_same_ether_addr(&eh->src_addr, &mac_b));
	ck_assert_uint_eq(eh->ether_type, RTE_BE16(RTE_ETHER_TYPE_VLAN));
	vh = (struct rte_vlan_hdr *)(eh + 1);
	ck_assert_uint_eq(rte_be_to_cpu_16(vh->vlan_tci), 5);
	ck_assert_uint_eq(vh->eth_proto, RTE_BE16(RTE_ETHER_TYPE_ARP));
	arp = (struct rte_arp_hdr *)(vh + 1);
	ck_assert_uint_eq(arp->arp_opcode, RTE_BE16(RTE_ARP_OP_REPLY));
	ck_assert(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &mac_b));
	ck_assert_uint_eq(arp->arp_data.arp_sip, rte_cpu_to_be_32(IP_B));
	ck_assert(rte_is_same_ether_addr(&arp->arp_data.arp_tha, &host));
	ck_assert_uint_eq(arp->arp_data.arp_tip, rte_cpu_to_be_32(host_ip));
	rte_pktmbuf_free(m);

	gid_of_ipv4(host_ip, dgid);
	ck_assert_int_eq(droce_port_route(pb, 0, 1, dgid, &a), 0);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &host));
	ck_assert_uint_eq(a.vlan_tci, 5);
}
END_TEST

START_TEST(test_route_other)
{
	static const uint8_t global6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct rte_ether_addr mac_b;
	struct droce_l3_addr a;
	uint8_t dgid[16];

	droce_port_mac(pb, &mac_b);
	gid_of_ipv4(IP_A, dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 2, dgid, &a), -EINVAL);
	ck_assert_int_eq(droce_port_route(pa, 0, -1, dgid, &a), -EINVAL);
	/* Our own address: our own MAC, looped back by TX. */
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), 0);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_a));
	/* Another subnet (no gateway), the subnet's broadcast and network
	 * addresses, an IPv4 destination from an IPv6 source. */
	gid_of_ipv4(RTE_IPV4(10, 0, 1, 2), dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EHOSTUNREACH);
	gid_of_ipv4(RTE_IPV4(10, 0, 0, 255), dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EHOSTUNREACH);
	gid_of_ipv4(RTE_IPV4(10, 0, 0, 0), dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EHOSTUNREACH);
	gid_of_ipv4(IP_B, dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 0, dgid, &a), -EHOSTUNREACH);
	ck_assert_uint_eq(stats(pa).tx_arp, 0);

	/* B's link-local GID carries B's MAC: no neighbour discovery. */
	ck_assert_int_eq(droce_port_gid(pb, 0, dgid), 0);
	ck_assert_int_eq(droce_port_route(pa, 0, 0, dgid, &a), 0);
	ck_assert(a.ipv6);
	ck_assert(rte_is_same_ether_addr(&a.dst_mac, &mac_b));
	ck_assert_int_eq(droce_port_route(pa, 0, 0, global6, &a), -EHOSTUNREACH);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, global6, &a), -EHOSTUNREACH);
	ck_assert_uint_eq(stats(pa).tx_arp, 0);
}
END_TEST

/* A frame sent by A arrives parsed at B; @p a says how. */
static void
check_a_to_b(struct droce_l3_addr *a, uint32_t len)
{
	struct rte_mbuf *got[BURST];
	struct droce_pkt *pkt;
	uint64_t roce = stats(pb).rx_roce;

	send_one(pa, build_roce(pa, a, DROCE_OP_SEND_ONLY, 0x123456, 0xabcdef, len));
	ck_assert_uint_eq(pump(pb, got), 1);
	pkt = droce_pkt_of(got[0]);
	ck_assert_uint_eq(pkt->opcode, DROCE_OP_SEND_ONLY);
	ck_assert_uint_eq(pkt->qpn, 0x123456);
	ck_assert_uint_eq(pkt->psn, 0xabcdef);
	ck_assert_uint_eq(pkt->payload_len, len);
	ck_assert_uint_eq(pkt->ipv6, a->ipv6);
	ck_assert_uint_eq(pkt->vlan_tci, a->vlan_tci);
	ck_assert_mem_eq(pkt->dgid, a->dgid, 16);
	ck_assert_mem_eq(pkt->sgid, a->sgid, 16);
	ck_assert(rte_is_same_ether_addr(&pkt->src_mac, &mac_a));
	ck_assert_uint_eq(*rte_pktmbuf_mtod_offset(got[0], uint8_t *,
						   pkt->payload_off + len - 1),
			  (uint8_t)(len - 1));
	rte_pktmbuf_free(got[0]);
	ck_assert_uint_eq(stats(pb).rx_roce, roce + 1);
}

START_TEST(test_roce_a_to_b)
{
	struct droce_l3_addr a;
	uint8_t dgid[16];

	resolve_a_to_b(&a);
	check_a_to_b(&a, 256);
	/* A full 4096-byte payload in one frame. */
	check_a_to_b(&a, 4096);
	/* VLAN-tagged. */
	a.vlan_tci = 7;
	check_a_to_b(&a, 64);
	/* IPv6 link-local GIDs. */
	ck_assert_int_eq(droce_port_gid(pb, 0, dgid), 0);
	ck_assert_int_eq(droce_port_route(pa, 0, 0, dgid, &a), 0);
	check_a_to_b(&a, 128);
	ck_assert_uint_eq(stats(pa).tx_frames, 1 + 4);
	ck_assert_uint_eq(stats(pb).rx_frames, 1 + 4);
}
END_TEST

START_TEST(test_roce_rejected)
{
	struct droce_port_stats s;
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	uint8_t bad_op = 0;

	resolve_a_to_b(&a);
	/* One byte of payload changed after the ICRC. */
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, 1, 64);
	*rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 10) ^= 0x40;
	send_one(pa, m);
	/* An opcode nobody defines, with a right ICRC. */
	while (droce_opcode_valid(bad_op))
		bad_op++;
	send_one(pa, build_roce(pa, &a, bad_op, 1, 1, 0));
	/* To a host that is not B, through B's MAC. */
	gid_of_ipv4(RTE_IPV4(10, 0, 0, 3), a.dgid);
	send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, 1, 0));
	/* Truncated by 4 bytes: the IP header claims more than there is. */
	gid_of_ipv4(IP_B, a.dgid);
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, 1, 64);
	rte_pktmbuf_trim(m, 4);
	send_one(pa, m);

	ck_assert_uint_eq(pump(pb, NULL), 0);
	s = stats(pb);
	ck_assert_uint_eq(s.rx_bad_icrc, 1);
	ck_assert_uint_eq(s.rx_bad_opcode, 1);
	ck_assert_uint_eq(s.rx_not_ours, 1);
	ck_assert_uint_eq(s.rx_malformed, 1);
	ck_assert_uint_eq(s.rx_roce, 0);
}
END_TEST

/* Header prediction: a frame like the last one the queue kept, in a
 * burst of its own, takes that one's parse (other PSN, length or opcode);
 * another QP is parsed; what it takes is still checked (ICRC). */
START_TEST(test_roce_predicted)
{
	struct droce_port_stats s0, s;
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	uint32_t k;

	resolve_a_to_b(&a);
	drain(pb);
	s0 = stats(pb);
	for (k = 0; k < 4; k++) {
		send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, k, 64 + 4 * k));
		ck_assert_uint_eq(pump(pb, NULL), 1);
	}
	send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_FIRST, 1, k++, 4096));
	ck_assert_uint_eq(pump(pb, NULL), 1);
	s = stats(pb);
	ck_assert_uint_eq(s.rx_roce - s0.rx_roce, 5);
	/* The first after the ARP exchange was parsed. */
	ck_assert_uint_eq(s.rx_predicted - s0.rx_predicted, 4);
	send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 2, k++, 64));
	ck_assert_uint_eq(pump(pb, NULL), 1);
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 2, k++, 64);
	*rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 10) ^= 0x40;
	send_one(pa, m);
	ck_assert_uint_eq(pump(pb, NULL), 0);
	s0 = s;
	s = stats(pb);
	ck_assert_uint_eq(s.rx_roce - s0.rx_roce, 1);
	ck_assert_uint_eq(s.rx_bad_icrc - s0.rx_bad_icrc, 1);
	ck_assert_uint_eq(s.rx_predicted - s0.rx_predicted, 1);
}
END_TEST

/* Short frames four at a time (droce_port_rx_verify4()), as the engine
 * checks them: runs of four alike (one length, IPv4), broken by another
 * length; a changed payload byte and a changed ICRC byte in them are
 * dropped and counted; frames outside the runs are left to
 * droce_port_rx_verify(). On a CRC path without four lanes it checks
 * none, and every frame gets its own check. */
static void
check_verify4(bool wide)
{
	static const uint32_t len[] = { 64, 64, 64, 64, 128, 64, 64, 64, 64, 64 };
	struct rte_mbuf *pkts[BURST], *m;
	struct droce_port_stats s0, s;
	struct droce_l3_addr a;
	uint64_t checked, good;
	uint16_t n, i, ok = 0;

	resolve_a_to_b(&a);
	drain(pb);
	s0 = stats(pb);
	for (i = 0; i < RTE_DIM(len); i++) {
		m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, i, len[i]);
		if (i == 2)
			*rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 10) ^= 0x40;
		if (i == 7)
			*rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 1) ^= 0x01;
		send_one(pa, m);
	}
	n = droce_port_rx(pb, 0, pkts, BURST, rte_get_tsc_cycles());
	ck_assert_uint_eq(n, RTE_DIM(len));
	checked = droce_port_rx_verify4(pb, 0, pkts, n, rte_get_tsc_cycles(), &good);
	/* Frames 0-3 and 5-8; the 128-byte one breaks the run, the last one
	 * has no three to go with. */
	ck_assert_uint_eq(checked, wide ? 0x1efu : 0);
	ck_assert_uint_eq(good, wide ? 0x16bu : 0);
	s = stats(pb);
	ck_assert_uint_eq(s.rx_bad_icrc - s0.rx_bad_icrc, wide ? 2 : 0);
	ck_assert_uint_eq(s.rx_roce - s0.rx_roce, wide ? 6 : 0);
	for (i = 0; i < n; i++) {
		if (!(checked & (UINT64_C(1) << i)))
			good |= (uint64_t)droce_port_rx_verify(pb, 0, pkts[i], rte_get_tsc_cycles(),
							      NULL) << i;
		ok += (good >> i) & 1;
		rte_pktmbuf_free(pkts[i]);
	}
	ck_assert_uint_eq(ok, 8);
	ck_assert_uint_eq(good, 0x37bu);
	s = stats(pb);
	ck_assert_uint_eq(s.rx_bad_icrc - s0.rx_bad_icrc, 2);
	ck_assert_uint_eq(s.rx_roce - s0.rx_roce, 8);
}

START_TEST(test_roce_verify4)
{
	/* On every CRC path the CPU runs: four at once on those with
	 * VPCLMULQDQ, calls on the others. */
	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++) {
		if (droce_crc32_path_set((enum droce_crc_path)path) != 0)
			continue;
		ck_assert(droce_crc32_masked4_wide() ==
			  (path == DROCE_CRC_AVX2 || path == DROCE_CRC_VPCLMUL));
		check_verify4(droce_crc32_masked4_wide());
	}
	droce_crc32_init();
}
END_TEST

/* Send raw frames from ethdev A straight to port B. */
static void
inject(struct rte_mbuf **m, unsigned n)
{
	unsigned sent = 0;

	while (sent < n) {
		sent += rte_eth_tx_burst(eth_a, 0, m + sent, (uint16_t)RTE_MIN(n - sent, BURST));
		pump(pb, NULL);
	}
	drain(pb);
}

START_TEST(test_garbage)
{
	static const rte_be16_t types[] = {
		RTE_BE16(RTE_ETHER_TYPE_IPV4), RTE_BE16(RTE_ETHER_TYPE_IPV6),
		RTE_BE16(RTE_ETHER_TYPE_ARP), RTE_BE16(RTE_ETHER_TYPE_VLAN),
	};
	struct rte_mempool *mp = droce_port_mempool(pa);
	struct rte_mbuf *frames[BURST];
	struct rte_ether_addr mac_b;
	struct droce_port_stats s;
	struct rte_udp_hdr *udp;
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	unsigned i, j, len, full, nb = 0;

	droce_port_mac(pb, &mac_b);
	resolve_a_to_b(&a);
	drain(pb);
	/* UDP, but not to port 4791. */
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, 1, 16);
	udp = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *,
				      sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr));
	udp->dst_port = RTE_BE16(53);
	inject(&m, 1);
	ck_assert_uint_eq(stats(pb).rx_not_roce, 1);
	nb++;

	/* Random bytes, random lengths, some in two segments; most to B's
	 * MAC with an Ethernet type B parses further. */
	rte_srand(42);
	for (i = 0; i < 20; i++) {
		for (j = 0; j < BURST; j++) {
			uint8_t *d;

			m = rte_pktmbuf_alloc(mp);
			ck_assert_ptr_nonnull(m);
			len = (unsigned)(rte_rand() % 1600);
			d = (uint8_t *)rte_pktmbuf_append(m, len);
			ck_assert_ptr_nonnull(d);
			for (full = 0; full < len; full++)
				d[full] = (uint8_t)rte_rand();
			if (len >= 14 && j % 3 != 0)
				rte_ether_addr_copy(&mac_b, (struct rte_ether_addr *)d);
			if (len >= 14 && j % 2 == 0)
				memcpy(d + 12, &types[j / 2 % RTE_DIM(types)], 2);
			if (j % 5 == 0) {
				struct rte_mbuf *m2 = rte_pktmbuf_alloc(mp);

				ck_assert_ptr_nonnull(m2);
				d = (uint8_t *)rte_pktmbuf_append(m2, j);
				memset(d, (int)j, j);
				ck_assert_int_eq(rte_pktmbuf_chain(m, m2), 0);
			}
			frames[j] = m;
		}
		inject(frames, BURST);
		nb += BURST;
	}
	/* A good frame cut at every length. */
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, 1, 64);
	full = rte_pktmbuf_pkt_len(m);
	for (len = 0; len < full; len++) {
		struct rte_mbuf *c = rte_pktmbuf_copy(m, mp, 0, len);

		ck_assert_ptr_nonnull(c);
		inject(&c, 1);
		nb++;
	}
	rte_pktmbuf_free(m);

	s = stats(pb);
	ck_assert_uint_eq(s.rx_roce, 0);
	/* Every frame was counted once, under one reason. */
	ck_assert_uint_eq(s.rx_frames, nb + 1 /* the ARP request */);
	ck_assert_uint_eq(s.rx_frames, s.rx_roce + s.rx_arp + s.rx_not_roce +
			  s.rx_malformed + s.rx_bad_opcode + s.rx_bad_icrc +
			  s.rx_not_ours);
	ck_assert_uint_gt(s.rx_malformed, 0);
	ck_assert_uint_gt(s.rx_not_ours, 0);
	/* B still works. */
	check_a_to_b(&a, 32);
}
END_TEST

START_TEST(test_loopback)
{
	struct rte_mbuf *got[BURST];
	struct droce_l3_addr a;
	struct rte_ether_addr other = {{ 0x02, 1, 2, 3, 4, 5 }};
	uint8_t dgid[16];

	/* IPv4 and IPv6 to A's own GIDs. */
	ck_assert_int_eq(droce_port_gid(pa, 1, dgid), 0);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), 0);
	send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32));
	ck_assert_int_eq(droce_port_gid(pa, 0, dgid), 0);
	ck_assert_int_eq(droce_port_route(pa, 0, 0, dgid, &a), 0);
	send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 7, 32));
	/* Our IP with somebody else's MAC is still ours. */
	a.dst_mac = other;
	send_one(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 8, 32));

	ck_assert_uint_eq(pump(pb, NULL), 0);
	ck_assert_uint_eq(stats(pb).rx_frames, 0);
	ck_assert_uint_eq(pump(pa, got), 3);
	ck_assert_uint_eq(droce_pkt_of(got[0])->psn, 6);
	ck_assert(!droce_pkt_of(got[0])->ipv6);
	ck_assert_uint_eq(droce_pkt_of(got[1])->psn, 7);
	ck_assert(droce_pkt_of(got[1])->ipv6);
	ck_assert_uint_eq(droce_pkt_of(got[2])->psn, 8);
	rte_pktmbuf_free_bulk(got, 3);
	ck_assert_uint_eq(stats(pa).rx_loopback, 3);
	ck_assert_uint_eq(stats(pa).rx_roce, 3);
	ck_assert_uint_eq(stats(pa).rx_frames, 0);
	ck_assert_uint_eq(stats(pa).tx_frames, 3);
}
END_TEST

/* The frame @p m is for port @p p itself by droce_port_frame_local(),
 * which the transport asks once per header template: @p want. */
static void
check_frame_local(struct droce_port *p, struct rte_mbuf *m, bool want)
{
	ck_assert_int_eq(droce_port_frame_local(p, rte_pktmbuf_mtod(m, const void *),
						rte_pktmbuf_data_len(m)), want);
	rte_pktmbuf_free(m);
}

/* droce_port_frame_local() says what droce_port_tx() does with a frame;
 * droce_port_tx_remote() sends without asking. */
START_TEST(test_frame_local)
{
	struct rte_ether_addr other = {{ 0x02, 1, 2, 3, 4, 5 }};
	struct rte_mbuf *m, *got[BURST];
	struct droce_l3_addr a;
	uint8_t dgid[16];
	uint8_t short_frame[RTE_ETHER_HDR_LEN - 1];
	uint64_t sent;

	/* A's own GIDs, IPv4 and IPv6; its IP with another MAC. */
	for (unsigned i = 0; i < 2; i++) {
		ck_assert_int_eq(droce_port_gid(pa, i, dgid), 0);
		ck_assert_int_eq(droce_port_route(pa, 0, i, dgid, &a), 0);
		check_frame_local(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32), true);
	}
	a.dst_mac = other;
	check_frame_local(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32), true);
	/* B, as IPv4 and as IPv6; B's IP as A sees it from B. */
	resolve_a_to_b(&a);
	check_frame_local(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32), false);
	check_frame_local(pb, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32), true);
	a.vlan_tci = 7;
	check_frame_local(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32), false);
	a.vlan_tci = 0;
	ck_assert_int_eq(droce_port_gid(pb, 0, dgid), 0);
	ck_assert_int_eq(droce_port_route(pa, 0, 0, dgid, &a), 0);
	check_frame_local(pa, build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 6, 32), false);
	/* Too short to say: not for us. */
	memset(short_frame, 0, sizeof(short_frame));
	ck_assert(!droce_port_frame_local(pa, short_frame, sizeof(short_frame)));
	/* Sent without the look, a frame for B goes to B. */
	sent = stats(pa).tx_frames;
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 5, 9, 32);
	ck_assert_uint_eq(droce_port_tx_remote(pa, 0, &m, 1), 1);
	ck_assert_uint_eq(pump(pb, got), 1);
	ck_assert_uint_eq(droce_pkt_of(got[0])->psn, 9);
	rte_pktmbuf_free(got[0]);
	ck_assert_uint_eq(stats(pa).tx_frames, sent + 1);
	ck_assert_uint_eq(stats(pa).rx_loopback, 0);
}
END_TEST

START_TEST(test_tx_busy)
{
	struct rte_mbuf *m[WIRE_RING + 40];
	struct droce_l3_addr a;
	unsigned i, n = RTE_DIM(m);
	uint16_t sent;

	resolve_a_to_b(&a);
	for (i = 0; i < n; i++)
		m[i] = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, i, 0);
	/* The wire ring holds WIRE_RING - 1: the rest stays the caller's. */
	sent = droce_port_tx(pa, 0, m, (uint16_t)n);
	ck_assert_uint_eq(sent, WIRE_RING - 1);
	ck_assert_uint_eq(stats(pa).tx_busy, n - sent);
	drain(pb);
	ck_assert_uint_eq(stats(pb).rx_roce, sent);
	ck_assert_uint_eq(droce_port_tx(pa, 0, m + sent, (uint16_t)(n - sent)), n - sent);
	drain(pb);
	ck_assert_uint_eq(stats(pb).rx_roce, n);
}
END_TEST

START_TEST(test_neigh_expiry)
{
	struct droce_l3_addr a;
	struct droce_neigh *e = NULL;
	uint8_t dgid[16];
	unsigned i;

	resolve_a_to_b(&a);
	gid_of_ipv4(IP_B, dgid);
	for (i = 0; i < DROCE_NEIGH_MAX; i++)
		if (pa->neigh[i].state == DROCE_NEIGH_VALID &&
		    memcmp(pa->neigh[i].ip, dgid, 16) == 0)
			e = &pa->neigh[i];
	ck_assert_ptr_nonnull(e);

	/* Old but not expired: still used, asked for again (the first
	 * request is made old too, past the rate limit). */
	e->updated -= 250 * rte_get_tsc_hz();
	e->solicited -= rte_get_tsc_hz();
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), 0);
	ck_assert_uint_eq(stats(pa).tx_arp, 2);
	drain(pb);
	drain(pa);
	ck_assert_uint_lt(rte_get_tsc_cycles() - e->updated, rte_get_tsc_hz());

	/* Expired: forgotten at the next tick, resolved again. */
	e->updated -= 400 * rte_get_tsc_hz();
	pa->neigh_gc_next = 0;
	droce_port_tick(pa, 0, rte_get_tsc_cycles());
	ck_assert_uint_eq(e->state, DROCE_NEIGH_FREE);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EAGAIN);
	ck_assert_uint_eq(stats(pa).tx_arp, 3);
	drain(pb);
	drain(pa);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), 0);
}
END_TEST

START_TEST(test_dump)
{
	struct droce_l3_addr a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	resolve_a_to_b(&a);
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	droce_port_dump(pa, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "ipv4 10.0.0.1/24"));
	ck_assert_ptr_nonnull(strstr(buf, "gid[0] fe80::ff:fe00:a"));
	ck_assert_ptr_nonnull(strstr(buf, "gid[1] ::ffff:10.0.0.1"));
	ck_assert_ptr_nonnull(strstr(buf, "10.0.0.2"));
	ck_assert_ptr_nonnull(strstr(buf, "tx_arp         1"));
	free(buf);
}
END_TEST

/* ---- capture ---- */

/* The direction flags (1 in, 2 out) of the first @p max packet blocks of
 * a pcapng file, in order: libpcap does not expose them.
 * @return the number of packet blocks. */
static int
pcapng_directions(const char *path, int *dir, int max)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;
	size_t off = 0;
	int n = 0;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc((size_t)size);
	ck_assert_uint_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	while (off + 12 <= (size_t)size) {
		uint32_t type, len, caplen;

		memcpy(&type, buf + off, 4);
		memcpy(&len, buf + off + 4, 4);
		ck_assert_uint_ge(len, 12);
		ck_assert_uint_le(off + len, (size_t)size);
		if (type == 6 && n >= max) {
			n++;
		} else if (type == 6) {
			size_t o, end = off + len - 4;

			memcpy(&caplen, buf + off + 20, 4);
			dir[n] = 0;
			for (o = off + 28 + RTE_ALIGN(caplen, 4); o + 4 <= end;) {
				uint16_t code, olen;
				uint32_t flags;

				memcpy(&code, buf + o, 2);
				memcpy(&olen, buf + o + 2, 2);
				if (code == 0)
					break;
				if (code == 2 && olen == 4) {
					memcpy(&flags, buf + o + 4, 4);
					dir[n] = (int)(flags & 3);
				}
				o += 4 + RTE_ALIGN(olen, 4);
			}
			n++;
		}
		off += len;
	}
	free(buf);
	return n;
}

struct frame {
	uint32_t len;
	uint8_t data[MAX_FRAME];
};

static void
frame_save(struct frame *fr, const struct rte_mbuf *m)
{
	const void *d;

	fr->len = rte_pktmbuf_pkt_len(m);
	ck_assert_uint_le(fr->len, MAX_FRAME);
	/* rte_pktmbuf_read() copies only a chained frame. */
	d = rte_pktmbuf_read(m, 0, fr->len, fr->data);
	ck_assert_ptr_nonnull(d);
	if (d != fr->data)
		memcpy(fr->data, d, fr->len);
}

START_TEST(test_capture)
{
	static struct frame fr[4];
	static const int want_dir[6] = { 2, 1, 2, 1, 2, 1 };
	char path[64], err[PCAP_ERRBUF_SIZE];
	struct droce_l3_addr a, back, self;
	struct pcap_pkthdr *h;
	const u_char *data;
	struct rte_mbuf *m;
	uint8_t gid[16];
	int dir[8], n = 0;
	pcap_t *pc;

	snprintf(path, sizeof(path), "/tmp/droce-test-port-%d.pcapng", getpid());
	ck_assert_int_eq(droce_port_capture_start(pa, path), 0);
	ck_assert_int_eq(droce_port_capture_start(pa, path), -EBUSY);

	resolve_a_to_b(&a);                        /* ARP out, ARP in */
	m = build_roce(pa, &a, DROCE_OP_SEND_ONLY, 1, 1, 1024);
	frame_save(&fr[0], m);
	send_one(pa, m);                           /* RoCE out */
	drain(pb);
	droce_port_gid(pa, 1, gid);
	ck_assert_int_eq(droce_port_route(pb, 0, 1, gid, &back), 0);
	m = build_roce(pb, &back, DROCE_OP_SEND_ONLY, 2, 2, 100);
	frame_save(&fr[1], m);
	send_one(pb, m);
	drain(pa);                                 /* RoCE in */
	ck_assert_int_eq(droce_port_route(pa, 0, 1, gid, &self), 0);
	m = build_roce(pa, &self, DROCE_OP_SEND_ONLY, 3, 3, 4096);
	frame_save(&fr[2], m);
	send_one(pa, m);                           /* loopback out */
	drain(pa);                                 /* loopback in */
	droce_port_capture_stop(pa);
	droce_port_capture_stop(pa);
	/* Not captured any more. */
	send_one(pa, build_roce(pa, &self, DROCE_OP_SEND_ONLY, 3, 3, 0));
	drain(pa);

	ck_assert_int_eq(pcapng_directions(path, dir, 8), 6);
	ck_assert_mem_eq(dir, want_dir, sizeof(want_dir));

	pc = pcap_open_offline(path, err);
	ck_assert_msg(pc != NULL, "%s", err);
	ck_assert_int_eq(pcap_datalink(pc), DLT_EN10MB);
	while (pcap_next_ex(pc, &h, &data) == 1) {
		ck_assert_uint_eq(h->caplen, h->len);
		/* Time of day, not TSC ticks. */
		ck_assert_int_lt(labs(h->ts.tv_sec - time(NULL)), 60);
		switch (n) {
		case 0: /* ARP request and reply, padded */
		case 1:
			ck_assert_uint_eq(h->len, 60);
			ck_assert_uint_eq(data[12], 0x08);
			ck_assert_uint_eq(data[13], 0x06);
			break;
		case 2:
		case 3:
		case 4:
			ck_assert_uint_eq(h->len, fr[n - 2].len);
			ck_assert_mem_eq(data, fr[n - 2].data, h->len);
			break;
		case 5:
			ck_assert_uint_eq(h->len, fr[2].len);
			ck_assert_mem_eq(data, fr[2].data, h->len);
			break;
		}
		n++;
	}
	pcap_close(pc);
	ck_assert_int_eq(n, 6);
	unlink(path);
}
END_TEST

struct engine_arg {
	bool stop;
	uint64_t frames;
};

/* An engine thread looping frames through port A as fast as it can. */
static void *
engine_loop(void *arg)
{
	struct engine_arg *e = arg;
	struct rte_mbuf *pkts[BURST];
	struct droce_l3_addr self;
	uint8_t gid[16];
	uint16_t n, i;

	droce_port_gid(pa, 1, gid);
	droce_port_route(pa, 0, 1, gid, &self);
	while (!__atomic_load_n(&e->stop, __ATOMIC_RELAXED)) {
		for (i = 0; i < 4; i++) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(droce_port_mempool(pa));
			uint32_t l4 = sizeof(struct droce_bth);
			unsigned off;

			if (m == NULL)
				break;
			rte_pktmbuf_append(m, droce_l3_hdr_len(&self) + l4);
			off = droce_l3_hdr_write(m, &self, l4);
			droce_bth_set(rte_pktmbuf_mtod_offset(m, struct droce_bth *, off),
				      DROCE_OP_SEND_ONLY, false, 0, DROCE_PKEY_DEFAULT, 1,
				      false, 0);
			droce_icrc_append(m, sizeof(struct rte_ether_hdr));
			if (droce_port_tx(pa, 0, &m, 1) != 1)
				rte_pktmbuf_free(m);
		}
		n = droce_port_rx(pa, 0, pkts, BURST, rte_get_tsc_cycles());
		for (uint16_t i = 0; i < n; i++)
			e->frames += droce_port_rx_verify(pa, 0, pkts[i], rte_get_tsc_cycles(), NULL);
		rte_pktmbuf_free_bulk(pkts, n);
	}
	return NULL;
}

START_TEST(test_capture_threads)
{
	struct engine_arg e = { 0 };
	char path[64], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pthread_t t;
	pcap_t *pc;
	int i, n;

	snprintf(path, sizeof(path), "/tmp/droce-test-port-%d-t.pcapng", getpid());
	ck_assert_int_eq(pthread_create(&t, NULL, engine_loop, &e), 0);
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(droce_port_capture_start(pa, path), 0);
		rte_delay_us_sleep(5000);
		droce_port_capture_stop(pa);
	}
	__atomic_store_n(&e.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	ck_assert_uint_gt(e.frames, 0);
	ck_assert_uint_eq(stats(pa).rx_roce, e.frames);

	/* The last file is whole. */
	pc = pcap_open_offline(path, err);
	ck_assert_msg(pc != NULL, "%s", err);
	for (n = 0; pcap_next_ex(pc, &h, &data) == 1; n++)
		ck_assert_uint_eq(h->caplen, h->len);
	pcap_close(pc);
	ck_assert_int_eq(pcapng_directions(path, NULL, 0), n);
	unlink(path);
}
END_TEST

/* ---- link: ethdevs that start late, peers that come and go ---- */

static int link_events[2];     /* [0]: went down, [1]: came up */

static void
link_cb(void *arg, bool up)
{
	(void)arg;
	link_events[up]++;
}

/* The socket file of the memif link @p tag names. */
static const char *
memif_sock(const char *tag)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/droce-test-port-%d-%s.sock", (int)getpid(), tag);
	return path;
}

/* A memif vdev of @p role on the socket file @p tag names, with the
 * devargs @p extra (NULL: none) after those. */
static uint16_t
memif_create(unsigned id, const char *role, const char *tag, const char *extra)
{
	char args[256], name[32];
	uint16_t port;

	snprintf(name, sizeof(name), "net_memif%u", id);
	snprintf(args, sizeof(args), "%s,role=%s,socket=%s,socket-abstract=no%s%s", name, role,
		 memif_sock(tag), extra != NULL ? "," : "", extra != NULL ? extra : "");
	ck_assert_int_eq(rte_dev_probe(args), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(name, &port), 0);
	return port;
}

/* Tick @p p and @p q (if any) for @p ms, or until droce_port_link_up(p)
 * is @p up (@p stop). @return the milliseconds that took. */
static uint64_t
tick(struct droce_port *p, struct droce_port *q, bool stop, bool up, unsigned ms)
{
	uint64_t t0 = rte_get_timer_cycles(), hz = rte_get_timer_hz(), now;

	do {
		droce_port_tick(p, 0, rte_get_tsc_cycles());
		if (q != NULL)
			droce_port_tick(q, 0, rte_get_tsc_cycles());
		now = rte_get_timer_cycles();
		if (stop && droce_port_link_up(p) == up)
			break;
		rte_delay_us_sleep(1000);
	} while ((now - t0) * 1000 / hz < ms);
	return (now - t0) * 1000 / hz;
}

/* Until droce_port_link_up(p) is @p up (@p ms at most), then long enough
 * for the port's link watch (every 100 ms) to tell its callback.
 * @return the milliseconds until the state changed. */
static uint64_t
tick_until(struct droce_port *p, struct droce_port *q, bool up, unsigned ms)
{
	uint64_t took = tick(p, q, true, up, ms);

	tick(p, q, false, up, 250);
	return took;
}

/* The longest frame the driver of the af_packet vdev @p id, on the
 * loopback interface with the devargs @p extra (NULL: none), takes. */
static uint32_t
af_packet_frame_max(unsigned id, const char *extra)
{
	char args[128], name[32];
	struct rte_eth_dev_info info;
	uint16_t port;

	snprintf(name, sizeof(name), "net_af_packet%u", id);
	snprintf(args, sizeof(args), "%s,iface=lo%s%s", name, extra != NULL ? "," : "",
		 extra != NULL ? extra : "");
	ck_assert_int_eq(rte_dev_probe(args), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(name, &port), 0);
	ck_assert_int_eq(rte_eth_dev_info_get(port, &info), 0);
	ck_assert_ptr_eq(droce_driver_find(&info), &droce_drv_af_packet);
	return droce_drv_af_packet.frame_max(&info);
}

/*
 * memif and af_packet ports offer the largest IB MTU whose frames fit in
 * one of their buffers (drivers/memif, drivers/af_packet): 1024 with the
 * PMDs' default 2048-byte buffers, the 4096 asked for with buffers large
 * enough (bsize=4352, framesz=8192). The memif ports are attached, and
 * droce_port_mtu_offered() says so before; the af_packet ones only probed
 * (attaching sets the interface's MAC, which the loopback interface
 * refuses), their limit planned as the port does.
 */
START_TEST(test_frame_max_mtu)
{
	static const char *const bsize[] = { NULL, "bsize=4352" };
	static const char *const tag[] = { "mtu-default", "mtu-4352" };
	static const uint16_t mtu[] = { 1024, 4096 };
	struct droce_port_buf b;

	for (unsigned i = 0; i < RTE_DIM(bsize); i++) {
		struct droce_port_conf c = {
			.port_id = memif_create(93 + i, "client", tag[i], bsize[i]),
			.ipv4 = IP_A, .ipv4_prefix = 24, .mtu = 4096, .nb_mbufs = 255,
		};
		struct droce_port *p;

		ck_assert_int_eq(droce_port_mtu_offered(c.port_id, 4096), mtu[i]);
		ck_assert_int_eq(droce_port_mtu_offered(c.port_id, 512), 512);
		ck_assert_int_eq(droce_port_mtu_offered(c.port_id, 1000), -EINVAL);
		ck_assert_int_eq(droce_port_mtu_offered(c.port_id, 8192), -EINVAL);
		ck_assert_int_eq(droce_port_attach(&c, &p), 0);
		ck_assert_uint_eq(droce_port_mtu(p), mtu[i]);
		droce_port_detach(p);
	}
	ck_assert_int_lt(droce_port_mtu_offered(RTE_MAX_ETHPORTS, 1024), 0);
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_af_packet, af_packet_frame_max(95, NULL),
					     4096, &b), 0);
	ck_assert_uint_eq(b.ib_mtu, 1024);
	ck_assert_int_eq(droce_port_buf_plan(&droce_drv_af_packet,
					     af_packet_frame_max(96, "framesz=8192,blocksz=8192"),
					     4096, &b), 0);
	ck_assert_uint_eq(b.ib_mtu, 4096);
}
END_TEST

/*
 * A memif client whose server is not there: the ethdev cannot start, the
 * port attaches anyway with its link down, takes and gives no frames, and
 * with link = up counts as active for link_wait_ms only.
 */
START_TEST(test_link_no_server)
{
	struct droce_port_conf c = {
		.port_id = memif_create(90, "client", "none", NULL), .ipv4 = IP_A, .ipv4_prefix = 24,
		.mtu = 1024, .nb_mbufs = 255, .link_up = true, .link_wait_ms = 300,
	};
	struct droce_port *p;
	struct rte_mbuf *m;

	ck_assert_int_eq(droce_port_attach(&c, &p), 0);
	ck_assert(!droce_port_started(p));
	ck_assert(droce_port_link_up(p));
	memset(link_events, 0, sizeof(link_events));
	droce_port_on_link(p, link_cb, NULL);
	ck_assert_uint_eq(pump(p, NULL), 0);
	m = rte_pktmbuf_alloc(droce_port_mempool(p));
	ck_assert_ptr_nonnull(m);
	memset(rte_pktmbuf_append(m, 64), 0xff, 64);   /* broadcast: to the wire */
	ck_assert_uint_eq(droce_port_tx(p, 0, &m, 1), 0);
	rte_pktmbuf_free(m);
	ck_assert_uint_ge(tick_until(p, NULL, false, 2000), 250);
	ck_assert(!droce_port_link_up(p));
	ck_assert_int_eq(link_events[0], 1);
	ck_assert_int_eq(link_events[1], 0);
	droce_port_detach(p);
}
END_TEST

/*
 * A memif server whose client leaves and comes back: with link = up it
 * stays active for link_wait_ms, then reports down, and up again when
 * the client is back.
 */
START_TEST(test_link_client_restarts)
{
	struct droce_port_conf cs = {
		.port_id = memif_create(91, "server", "restart", NULL), .ipv4 = IP_A, .ipv4_prefix = 24,
		.mtu = 1024, .nb_mbufs = 255, .link_up = true, .link_wait_ms = 300,
	};
	struct droce_port_conf cc = {
		.port_id = memif_create(92, "client", "restart", NULL), .ipv4 = IP_B, .ipv4_prefix = 24,
		.mtu = 1024, .nb_mbufs = 255,
	};
	struct droce_port *server, *client;

	ck_assert_int_eq(droce_port_attach(&cs, &server), 0);
	ck_assert_int_eq(droce_port_attach(&cc, &client), 0);
	ck_assert(droce_port_started(client));
	tick_until(client, server, true, 3000);
	ck_assert(droce_port_link_up(client));
	memset(link_events, 0, sizeof(link_events));
	droce_port_on_link(server, link_cb, NULL);
	/* The client goes: the server waits 300 ms for it, then gives up. */
	droce_port_detach(client);
	ck_assert(droce_port_link_up(server));
	ck_assert_uint_ge(tick_until(server, NULL, false, 3000), 250);
	ck_assert(!droce_port_link_up(server));
	ck_assert_int_eq(link_events[0], 1);
	/* It comes back. */
	ck_assert_int_eq(droce_port_attach(&cc, &client), 0);
	tick_until(server, client, true, 3000);
	ck_assert(droce_port_link_up(server));
	ck_assert_int_eq(link_events[1], 1);
	droce_port_detach(client);
	droce_port_detach(server);
	/* The server's ethdev stays (and keeps its socket file) until exit. */
	unlink(memif_sock("restart"));
}
END_TEST

/* ---- main ---- */

/* The EAL keeps pointers into its arguments: they stay to the end. */
static char *eal_args;

static void
eal_init(void)
{
	const char *env = getenv("DROCE_TEST_EAL");
	char *args = strdup(env ? env : "-l 0 --no-huge -m 256 --no-shconf --no-pci --no-telemetry");
	char *argv[32] = { "test_port" };
	int argc = 1;
	char *tok, *save = NULL;

	for (tok = strtok_r(args, " ", &save); tok != NULL && argc < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	eal_args = args;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(EXIT_FAILURE);
	}
	droce_icrc_init();
}

/* Two ring ethdevs, each one's TX ring the other's RX ring. */
static void
wire_create(void)
{
	struct rte_ring *ab = rte_ring_create("wire_ab", WIRE_RING, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *ba = rte_ring_create("wire_ba", WIRE_RING, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	int a, b;

	if (ab == NULL || ba == NULL)
		exit(EXIT_FAILURE);
	a = rte_eth_from_rings("droce_ring_a", &ba, 1, &ab, 1, 0);
	b = rte_eth_from_rings("droce_ring_b", &ab, 1, &ba, 1, 0);
	if (a < 0 || b < 0)
		exit(EXIT_FAILURE);
	eth_a = (uint16_t)a;
	eth_b = (uint16_t)b;
}

int
main(void)
{
	Suite *s = suite_create("port");
	TCase *tc = tcase_create("port");
	SRunner *sr;
	int failed;

	eal_init();
	wire_create();
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_attach_conf);
	tcase_add_test(tc, test_gid_table);
	tcase_add_test(tc, test_route_arp);
	tcase_add_test(tc, test_arp_vlan);
	tcase_add_test(tc, test_route_other);
	tcase_add_test(tc, test_roce_a_to_b);
	tcase_add_test(tc, test_roce_rejected);
	tcase_add_test(tc, test_roce_predicted);
	tcase_add_test(tc, test_roce_verify4);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_loopback);
	tcase_add_test(tc, test_frame_local);
	tcase_add_test(tc, test_tx_busy);
	tcase_add_test(tc, test_neigh_expiry);
	tcase_add_test(tc, test_dump);
	tcase_add_test(tc, test_capture);
	tcase_add_test(tc, test_capture_threads);
	suite_add_tcase(s, tc);
	/* memif ports of their own. */
	tc = tcase_create("link");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_link_no_server);
	tcase_add_test(tc, test_frame_max_mtu);
	tcase_add_test(tc, test_link_client_restarts);
	suite_add_tcase(s, tc);
	/* No ports needed. */
	tc = tcase_create("buffers");
	tcase_add_test(tc, test_buf_plan);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	/* No rte_eal_cleanup(), as libdroce does at exit (droce_lib.c): in
	 * DPDK 22.11 it unmaps the EAL's memory while the interrupt thread,
	 * which it does not stop, may still be in a memif port's source (a
	 * SEGV at exit, some 1 run in 20). The memory is anonymous
	 * (--no-huge, --no-shconf): the process's end frees it. Nothing reads
 * the EAL's arguments any more. */
	free(eal_args);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
