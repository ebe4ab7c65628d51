/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bottleneck queue of the congestion bench: it drains at its rate,
 * marks ECN-capable frames CE above its threshold (IPv4 checksum kept
 * right, IPv6 and VLAN-tagged frames too), leaves Not-ECT frames alone
 * and drops what does not fit. On a clock the test moves (a 1 GHz TSC).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "droce_bottleneck.h"

#define HZ 1000000000ull
#define US 1000ull

static struct rte_mempool *pool;
static struct droce_bottleneck bn;
static struct droce_bottleneck_stats st;

/* An Ethernet frame of @p len bytes with an IPv4 (or IPv6) header whose
 * ECN bits are @p ecn, optionally VLAN-tagged. */
static struct rte_mbuf *
frame(uint32_t len, uint8_t ecn, bool v6, bool vlan)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;
	struct rte_ether_hdr *eth;
	uint32_t off = sizeof(*eth);

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	ck_assert_ptr_nonnull(p);
	memset(p, 0, len);
	eth = (struct rte_ether_hdr *)p;
	if (vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(p + off);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(7);
		vh->eth_proto = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
		off += sizeof(*vh);
	} else {
		eth->ether_type = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	}
	if (v6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(p + off);

		ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)(0x68 | ecn) << 20 | 0x12345);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + off);

		ip->version_ihl = 0x45;
		ip->type_of_service = (uint8_t)(0x68 | ecn);
		ip->total_length = rte_cpu_to_be_16((uint16_t)(len - off));
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		ip->src_addr = rte_cpu_to_be_32(0x0a000001);
		ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	return m;
}

static const struct rte_ipv4_hdr *
ipv4_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
}

/* 80 Mb/s: 10 bytes a microsecond; a 10 000-byte buffer marking above 3 000. */
static void
setup(void)
{
	const struct droce_bottleneck_conf c = {
		.rate_mbps = 80, .queue_bytes = 10000, .mark_bytes = 3000,
	};

	ck_assert_int_eq(droce_bottleneck_conf_check(&c), 0);
	memset(&st, 0, sizeof(st));
	droce_bottleneck_init(&bn, &c, &st, HZ, 0);
}

static void
teardown(void)
{
	droce_bottleneck_fini(&bn);
}

START_TEST(drains_at_its_rate)
{
	struct rte_mbuf *in[8], *out[8];
	uint16_t n;
	unsigned i;

	for (i = 0; i < 8; i++)
		in[i] = frame(1000, 0, false, false);
	droce_bottleneck_input(&bn, in, 8);
	ck_assert_uint_eq(bn.queued_bytes, 8000);
	/* 100 us send one 1000-byte frame at 10 bytes a microsecond... */
	ck_assert_uint_eq(droce_bottleneck_output(&bn, out, 8, 99 * US), 0);
	n = droce_bottleneck_output(&bn, out, 8, 100 * US);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_eq(out[0], in[0]);
	rte_pktmbuf_free(out[0]);
	/* ... and 400 us more, four more, in order. */
	n = droce_bottleneck_output(&bn, out, 8, 500 * US);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(out[i], in[1 + i]);
		rte_pktmbuf_free(out[i]);
	}
	ck_assert_uint_eq(st.frames, 5);
}
END_TEST

START_TEST(marks_above_threshold_only_ect)
{
	static const uint8_t ecn[6] = { 2, 1, 0, 2, 2, 2 };
	struct rte_mbuf *m[6], *out[6];
	unsigned i;

	/* Each is marked as it leaves by what it leaves behind it, itself
	 * included: 6000, 5000, 4000 (marked: above 3000), then 3000, 2000,
	 * 1000 (not). The third is Not-ECT and cannot be marked. */
	for (i = 0; i < 6; i++)
		m[i] = frame(1000, ecn[i], false, false);
	droce_bottleneck_input(&bn, m, 6);
	ck_assert_uint_eq(st.marked, 0);
	ck_assert_uint_eq(droce_bottleneck_output(&bn, out, 6, 600 * US), 6);
	ck_assert_uint_eq(ipv4_of(m[0])->type_of_service, 0x68 | 3);
	ck_assert_uint_eq(ipv4_of(m[1])->type_of_service, 0x68 | 3);
	/* Not-ECT stays as it is: a switch would drop it at RED instead. */
	ck_assert_uint_eq(ipv4_of(m[2])->type_of_service, 0x68);
	for (i = 3; i < 6; i++)
		ck_assert_uint_eq(ipv4_of(m[i])->type_of_service, 0x68 | 2);
	ck_assert_uint_eq(st.marked, 2);
	ck_assert_uint_eq(st.not_ect, 1);
	/* The checksum of a marked header is right again. */
	{
		struct rte_ipv4_hdr h = *ipv4_of(m[0]);

		h.hdr_checksum = 0;
		ck_assert_uint_eq(rte_ipv4_cksum(&h), ipv4_of(m[0])->hdr_checksum);
	}
	for (i = 0; i < 6; i++)
		rte_pktmbuf_free(out[i]);
}
END_TEST

START_TEST(marks_ipv6_and_tagged)
{
	struct rte_mbuf *a = frame(200, 1, true, false);
	struct rte_mbuf *b = frame(200, 2, false, true);
	struct rte_mbuf *c = frame(200, 0, true, true);
	const struct rte_ipv6_hdr *ip;

	ck_assert(droce_ecn_mark_ce(a));
	ip = rte_pktmbuf_mtod_offset(a, const struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	/* The class's DSCP and the flow label stay; ECN becomes CE. */
	ck_assert_uint_eq(rte_be_to_cpu_32(ip->vtc_flow), 6u << 28 | 0x6bu << 20 | 0x12345);
	ck_assert(droce_ecn_mark_ce(b));
	ck_assert(!droce_ecn_mark_ce(c));
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(b);
	rte_pktmbuf_free(c);
}
END_TEST

START_TEST(tail_drop_when_full)
{
	struct rte_mbuf *m[12];
	unsigned i;

	for (i = 0; i < 12; i++)
		m[i] = frame(1000, 2, false, false);
	droce_bottleneck_input(&bn, m, 12);
	ck_assert_uint_eq(bn.queued_bytes, 10000);
	ck_assert_uint_eq(st.dropped, 2);
	ck_assert_uint_eq(st.max_queue_bytes, 10000);
}
END_TEST

START_TEST(idle_link_builds_no_burst)
{
	struct rte_mbuf *in[8], *out[8];
	unsigned i;
	uint16_t n;

	/* A second of idle link, then a full queue: what goes at once is the
	 * burst allowance (64 KiB), and 8 frames of 1000 bytes are within
	 * it; the next 8 go at the rate again. */
	ck_assert_uint_eq(droce_bottleneck_output(&bn, out, 8, 1000000 * US), 0);
	for (i = 0; i < 8; i++)
		in[i] = frame(1000, 0, false, false);
	droce_bottleneck_input(&bn, in, 8);
	n = droce_bottleneck_output(&bn, out, 8, 1000000 * US);
	ck_assert_uint_eq(n, 8);
	for (i = 0; i < n; i++)
		rte_pktmbuf_free(out[i]);
	ck_assert_uint_le(bn.credit >> 32, 64 * 1024);
}
END_TEST

int
main(void)
{
	const char *env = getenv("DROCE_TEST_EAL");
	char buf[512], *argv[32];
	int argc = 0, failed;
	Suite *s = suite_create("bottleneck");
	TCase *tc = tcase_create("queue");
	SRunner *sr;

	snprintf(buf, sizeof(buf), "test_bottleneck %s", env != NULL ? env : "-l 0 --no-huge -m 256");
	for (char *t = strtok(buf, " "); t != NULL && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0)
		return EXIT_FAILURE;
	pool = rte_pktmbuf_pool_create("bn", 1024, 0, 0, 2048, SOCKET_ID_ANY);
	if (pool == NULL)
		return EXIT_FAILURE;
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, drains_at_its_rate);
	tcase_add_test(tc, marks_above_threshold_only_ect);
	tcase_add_test(tc, marks_ipv6_and_tagged);
	tcase_add_test(tc, tail_drop_when_full);
	tcase_add_test(tc, idle_link_builds_no_burst);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* One process: the EAL cannot be initialised again in a fork. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_eal_cleanup();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
