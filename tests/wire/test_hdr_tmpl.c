/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header templates (lib/transport/droce_hdr_tmpl.c) against the general
 * path: a frame started from a template and finished with its ICRC must
 * be the same bytes as droce_l3_hdr_write() and droce_icrc_append() make,
 * for IPv4, IPv6 and VLAN, every pad, in one segment or chained, the
 * ICRC of a short frame sealed after it was built (as the engine's TX
 * does).
 */
#include <string.h>

#include "droce_hdr_tmpl.h"
#include "wire_test.h"

/* A SEND_ONLY's BTH and @p payload bytes in @p l4 (pad included). */
static uint32_t
send_only(uint8_t *l4, uint32_t payload)
{
	unsigned pad = (4 - (payload & 3)) & 3;

	droce_bth_set((struct droce_bth *)l4, DROCE_OP_SEND_ONLY, false, pad,
		      DROCE_PKEY_DEFAULT, 0x123456, true, 0x654321);
	for (uint32_t i = 0; i < payload + pad; i++)
		l4[sizeof(struct droce_bth) + i] = i < payload ? (uint8_t)(i * 13 + 1) : 0;
	return (uint32_t)sizeof(struct droce_bth) + payload + pad;
}

/* Build @p l4 from template @p t, in one segment or with the L4 bytes
 * from @p cut on in a second one, its ICRC appended and (a short frame in
 * one segment) sealed afterwards, as the engine's TX does, and compare
 * with test_build(). */
static void
check_same(const struct droce_hdr_tmpl *t, const struct droce_l3_addr *a,
	   const uint8_t *l4, uint32_t l4_len, uint32_t cut)
{
	static uint8_t want_buf[TEST_MBUF_DATA], got_buf[TEST_MBUF_DATA];
	struct rte_mbuf *want = test_build(a, l4, l4_len);
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
	uint32_t first = cut < l4_len ? cut : l4_len;
	const void *w, *g;
	uint8_t *p;
	int rc;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(t->len + first));
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(droce_hdr_tmpl_start(t, p, l4_len), t->len);
	memcpy(p + t->len, l4, first);
	if (first < l4_len) {
		struct rte_mbuf *seg = rte_pktmbuf_alloc(test_pool);

		ck_assert_ptr_nonnull(seg);
		p = (uint8_t *)rte_pktmbuf_append(seg, (uint16_t)(l4_len - first));
		ck_assert_ptr_nonnull(p);
		memcpy(p, l4 + first, l4_len - first);
		ck_assert_int_eq(rte_pktmbuf_chain(m, seg), 0);
	}
	/* What droce_tx_start() records for the seal: the header lengths. */
	m->tx_offload = t->tx_offload;
	ck_assert_uint_eq(m->l2_len, RTE_ETHER_HDR_LEN + (a->vlan_tci ? RTE_VLAN_HLEN : 0));
	ck_assert_uint_eq(m->l3_len, a->ipv6 ? sizeof(struct rte_ipv6_hdr) :
					       sizeof(struct rte_ipv4_hdr));
	ck_assert_uint_eq(m->l4_len, sizeof(struct rte_udp_hdr));
	rc = droce_hdr_tmpl_finish_later(t, m);
	/* Only a short frame in one segment is left to seal. */
	ck_assert_int_eq(rc, first == l4_len && t->len + l4_len + 8 - t->l2_len <
				     DROCE_CRC_MASKED_MAX ? 1 : 0);
	if (rc == 1) {
		/* Nothing of the ICRC is there before the seal. */
		memset(rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) -
					       DROCE_ICRC_LEN), 0xa5, DROCE_ICRC_LEN);
		droce_hdr_tmpl_seal(m);
	}
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), rte_pktmbuf_pkt_len(want));
	w = rte_pktmbuf_read(want, 0, rte_pktmbuf_pkt_len(want), want_buf);
	g = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), got_buf);
	ck_assert_mem_eq(g, w, rte_pktmbuf_pkt_len(want));
	ck_assert(droce_icrc_check(m, t->l2_len));
	rte_pktmbuf_free(want);
	rte_pktmbuf_free(m);
}

/* A short frame of @p payload bytes built from @p t and left to seal,
 * its ICRC's place filled with 0xa5. */
static struct rte_mbuf *
built_unsealed(const struct droce_hdr_tmpl *t, uint32_t payload)
{
	static uint8_t l4[512];
	uint32_t l4_len = send_only(l4, payload);
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
	uint8_t *p;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(t->len + l4_len));
	ck_assert_ptr_nonnull(p);
	droce_hdr_tmpl_start(t, p, l4_len);
	memcpy(p + t->len, l4, l4_len);
	m->tx_offload = t->tx_offload;
	ck_assert_int_eq(droce_hdr_tmpl_finish_later(t, m), 1);
	memset(rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - DROCE_ICRC_LEN),
	       0xa5, DROCE_ICRC_LEN);
	return m;
}

/* droce_hdr_tmpl_seal_burst() seals exactly the frames it is told to,
 * each as droce_icrc_append() would: runs of four alike (IPv4 with and
 * without a VLAN tag share a length), runs broken by another IP version
 * or length, frames left out in the middle of a run, and the rest. */
static void
seal_burst_once(void)
{
	/* Per frame: the template (0 IPv4, 1 IPv6, 2 IPv4 with VLAN) and
	 * the payload (IPv6's 44 bytes make the ICRC as long as IPv4's 64). */
	static const struct { unsigned v; uint32_t payload; } f[] = {
		{ 0, 64 }, { 0, 64 }, { 1, 44 }, { 0, 64 }, { 0, 64 }, { 2, 64 }, { 0, 64 },
		{ 0, 64 }, { 1, 44 }, { 1, 44 }, { 1, 44 }, { 1, 44 }, { 0, 61 }, { 0, 61 },
		{ 0, 0 }, { 0, 0 }, { 0, 0 }, { 2, 0 }, { 1, 150 }, { 1, 150 }, { 0, 150 },
	};
	struct droce_hdr_tmpl t[3];
	struct droce_l3_addr a[3];
	struct rte_mbuf *m[RTE_DIM(f)];
	uint64_t which = 0;
	unsigned i;

	for (i = 0; i < 3; i++) {
		test_addr(&a[i], i == 1, i == 2 ? 0x0123 : 0);
		memset(&t[i], 0, sizeof(t[i]));
		droce_hdr_tmpl_get(&t[i], &a[i], a[i].udp_sport, a[i].tclass);
	}
	for (i = 0; i < RTE_DIM(f); i++) {
		m[i] = built_unsealed(&t[f[i].v], f[i].payload);
		/* Left out: one in a run of four, one between runs. */
		if (i != 3 && i != 12)
			which |= UINT64_C(1) << i;
	}
	droce_hdr_tmpl_seal_burst(m, which);
	for (i = 0; i < RTE_DIM(f); i++) {
		const uint8_t *icrc = rte_pktmbuf_mtod_offset(m[i], const uint8_t *,
							      rte_pktmbuf_data_len(m[i]) -
							      DROCE_ICRC_LEN);
		bool left = !(which & (UINT64_C(1) << i));

		ck_assert_msg(droce_icrc_check(m[i], t[f[i].v].l2_len) == !left, "frame %u", i);
		ck_assert_int_eq(icrc[0] == 0xa5 && icrc[1] == 0xa5 && icrc[2] == 0xa5 &&
				 icrc[3] == 0xa5, left);
		rte_pktmbuf_free(m[i]);
	}
}

START_TEST(test_tmpl_seal_burst)
{
	/* On every CRC path the CPU runs: four lanes where it has them, calls else. */
	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++) {
		if (droce_crc32_path_set((enum droce_crc_path)path) != 0)
			continue;
		seal_burst_once();
	}
	droce_crc32_init();
}
END_TEST

START_TEST(test_tmpl_same_bytes)
{
	static const uint32_t payloads[] = { 0, 1, 2, 3, 8, 61, 64, 1000, 1499 };
	static uint8_t l4[2048];
	struct droce_hdr_tmpl t;
	struct droce_l3_addr a;
	unsigned v, i;

	for (v = 0; v < 3; v++) {
		test_addr(&a, v == 1, v == 2 ? 0x0123 : 0);
		memset(&t, 0, sizeof(t));
		ck_assert_ptr_eq(droce_hdr_tmpl_get(&t, &a, a.udp_sport, a.tclass), &t);
		ck_assert_uint_eq(t.len, droce_l3_hdr_len(&a));
		for (i = 0; i < RTE_DIM(payloads); i++) {
			uint32_t l4_len = send_only(l4, payloads[i]);

			check_same(&t, &a, l4, l4_len, l4_len);
			check_same(&t, &a, l4, l4_len, sizeof(struct droce_bth));
		}
	}
}
END_TEST

START_TEST(test_tmpl_rebuilt)
{
	static uint8_t l4[64];
	struct droce_hdr_tmpl t;
	struct droce_l3_addr a;
	uint32_t l4_len = send_only(l4, 20);

	memset(&t, 0, sizeof(t));
	test_addr(&a, false, 0);
	droce_hdr_tmpl_get(&t, &a, a.udp_sport, a.tclass);
	/* Other addresses, another UDP source port or traffic class: built
	 * again for them. */
	a.ttl = 3;
	a.dst_mac.addr_bytes[5] = 0x77;
	droce_hdr_tmpl_get(&t, &a, a.udp_sport, a.tclass);
	check_same(&t, &a, l4, l4_len, l4_len);
	a.udp_sport = 49999;
	droce_hdr_tmpl_get(&t, &a, a.udp_sport, a.tclass);
	check_same(&t, &a, l4, l4_len, l4_len);
	/* A BTH with bits in resv8a (a CNP's BECN) keeps them. */
	((struct droce_bth *)l4)->resv8a = 0x40;
	check_same(&t, &a, l4, l4_len, l4_len);
	((struct droce_bth *)l4)->resv8a = 0;
	/* Another ECN codepoint in the traffic class (the IPv4 checksum with it). */
	a.tclass = 0x6a;
	droce_hdr_tmpl_get(&t, &a, a.udp_sport, a.tclass);
	check_same(&t, &a, l4, l4_len, l4_len);
}
END_TEST

/* A QP's own template: its UDP source port from the flow label or the
 * two QPNs, built again for another destination QP or traffic class, and
 * for new addresses only once its owner invalidates it. */
START_TEST(test_tmpl_owned)
{
	static uint8_t l4[64];
	struct droce_hdr_tmpl t;
	struct droce_l3_addr a;
	uint32_t l4_len = send_only(l4, 20);

	memset(&t, 0, sizeof(t));
	test_addr(&a, false, 0);
	a.flow_label = 0;
	droce_hdr_tmpl_get_owned(&t, &a, 0x11, 0x22, a.tclass);
	a.udp_sport = droce_udp_sport(0, 0x11, 0x22);
	check_same(&t, &a, l4, l4_len, l4_len);
	droce_hdr_tmpl_get_owned(&t, &a, 0x11, 0x23, a.tclass);
	ck_assert_uint_ne(droce_udp_sport(0, 0x11, 0x23), a.udp_sport);
	a.udp_sport = droce_udp_sport(0, 0x11, 0x23);
	check_same(&t, &a, l4, l4_len, l4_len);
	a.tclass = 0x6a;
	droce_hdr_tmpl_get_owned(&t, &a, 0x11, 0x23, a.tclass);
	check_same(&t, &a, l4, l4_len, l4_len);
	/* New addresses and flow label: the old template until invalidated. */
	a.ttl = 3;
	a.flow_label = 0x12345;
	ck_assert_ptr_eq(droce_hdr_tmpl_get_owned(&t, &a, 0x11, 0x23, a.tclass), &t);
	ck_assert_uint_eq(t.l3.ttl, 17);
	droce_hdr_tmpl_invalidate(&t);
	droce_hdr_tmpl_get_owned(&t, &a, 0x11, 0x23, a.tclass);
	a.udp_sport = droce_udp_sport(0x12345, 0x11, 0x23);
	check_same(&t, &a, l4, l4_len, l4_len);
}
END_TEST

Suite *
suite_hdr_tmpl(void)
{
	Suite *s = suite_create("hdr_tmpl");
	TCase *tc = tcase_create("hdr_tmpl");

	tcase_add_test(tc, test_tmpl_same_bytes);
	tcase_add_test(tc, test_tmpl_rebuilt);
	tcase_add_test(tc, test_tmpl_owned);
	tcase_add_test(tc, test_tmpl_seal_burst);
	suite_add_tcase(s, tc);
	return s;
}
