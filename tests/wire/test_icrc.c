/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ICRC on chained mbufs, appending it, and frames built with
 * droce_l3_hdr_write() (VLAN, IPv4, IPv6) parsed back.
 */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include <rte_cpuflags.h>
#include <rte_net_crc.h>

#include "wire_test.h"

/* @p n bytes of xorshift32 from @p x. */
static void
fill_random(uint8_t *buf, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

/* droce_icrc joins rte_net_crc results with zlib: they must agree. */
START_TEST(test_crc_is_zlib)
{
	static uint8_t buf[9000];

	fill_random(buf, sizeof(buf), 2463534242u);
	ck_assert_uint_eq(rte_net_crc_calc("123456789", 9, RTE_NET_CRC32_ETH), 0xcbf43926);
	for (uint32_t off = 0; off < 4; off++)
		for (uint32_t len = 1; len <= 300; len++)
			ck_assert_uint_eq(rte_net_crc_calc(buf + off, len, RTE_NET_CRC32_ETH),
					  crc32(0, buf + off, len));
	ck_assert_uint_eq(rte_net_crc_calc(buf, 4154, RTE_NET_CRC32_ETH),
			  crc32(0, buf, 4154));
	ck_assert_uint_eq(rte_net_crc_calc(buf + 1, 8999, RTE_NET_CRC32_ETH),
			  crc32(0, buf + 1, 8999));
}
END_TEST

static bool
has(enum rte_cpu_flag_t flag)
{
	return rte_cpu_get_flag_enabled(flag) > 0;
}

/* The instructions each CRC path needs, as the CPU's flags. */
static const struct {
	unsigned n;
	enum rte_cpu_flag_t flag[8];
} path_needs[] = {
	[DROCE_CRC_LIB] = { 0, { 0 } },
	[DROCE_CRC_SSE] = { 3, { RTE_CPUFLAG_PCLMULQDQ, RTE_CPUFLAG_SSSE3, RTE_CPUFLAG_SSE4_1 } },
	[DROCE_CRC_AVX2] = { 5, { RTE_CPUFLAG_PCLMULQDQ, RTE_CPUFLAG_SSSE3, RTE_CPUFLAG_SSE4_1,
				  RTE_CPUFLAG_AVX2, RTE_CPUFLAG_VPCLMULQDQ } },
	[DROCE_CRC_AVX512] = { 5, { RTE_CPUFLAG_PCLMULQDQ, RTE_CPUFLAG_SSSE3, RTE_CPUFLAG_SSE4_1,
				    RTE_CPUFLAG_AVX512BW, RTE_CPUFLAG_AVX512VL } },
	[DROCE_CRC_VPCLMUL] = { 8, { RTE_CPUFLAG_PCLMULQDQ, RTE_CPUFLAG_SSSE3, RTE_CPUFLAG_SSE4_1,
				     RTE_CPUFLAG_AVX512BW, RTE_CPUFLAG_AVX512VL, RTE_CPUFLAG_AVX512F,
				     RTE_CPUFLAG_AVX512VBMI, RTE_CPUFLAG_VPCLMULQDQ } },
};

static bool
cpu_runs(int path)
{
	for (unsigned i = 0; i < path_needs[path].n; i++)
		if (!has(path_needs[path].flag[i]))
			return false;
	return true;
}

/* droce_crc32_path_set() takes each path whose instructions the CPU has
 * (otherwise the tests below would only test rte_net_crc again) and no
 * other, and droce_crc32_init() the fastest of them. The tests below then
 * run on each path droce_crc32_path_set() takes. */
static void
crc_paths_check(void)
{
	enum droce_crc_path best = DROCE_CRC_LIB;

	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++) {
		ck_assert_int_eq(droce_crc32_path_set((enum droce_crc_path)path),
				 cpu_runs(path) ? 0 : -ENOTSUP);
		if (cpu_runs(path)) {
			best = (enum droce_crc_path)path;
			ck_assert_int_eq(droce_crc32_path(), path);
		}
		/* Each path by its name, as the benchmarks' -C takes it. */
		ck_assert_int_eq(droce_crc32_path_by_name(
					 droce_crc32_path_name((enum droce_crc_path)path)), path);
	}
	ck_assert_ptr_null(droce_crc32_path_name((enum droce_crc_path)(DROCE_CRC_VPCLMUL + 1)));
	ck_assert_int_eq(droce_crc32_path_by_name("avx"), -EINVAL);
	ck_assert_int_eq(droce_crc32_path_set((enum droce_crc_path)(DROCE_CRC_VPCLMUL + 1)),
			 -ENOTSUP);
	ck_assert_int_eq(droce_crc32_init(), best);
}

/* droce_crc32() is zlib's CRC at every length and alignment, around the
 * short paths' limits too, on each path the CPU runs. */
START_TEST(test_droce_crc32_is_zlib)
{
	static uint8_t buf[9000 + 64];

	crc_paths_check();
	fill_random(buf, sizeof(buf), 88172645u);
	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++) {
		if (droce_crc32_path_set((enum droce_crc_path)path) != 0)
			continue;
		ck_assert_uint_eq(droce_crc32("0123456789abcdefg", 17),
				  crc32(0, (const Bytef *)"0123456789abcdefg", 17));
		for (uint32_t off = 0; off < 64; off++)
			for (uint32_t len = 0; len <= 600; len++)
				ck_assert_uint_eq(droce_crc32(buf + off, len),
						  crc32(0, buf + off, len));
		ck_assert_uint_eq(droce_crc32(buf + 3, 4096), crc32(0, buf + 3, 4096));
		/* Long runs: every count of blocks after the 256-bit path's last
		 * step, 4 KiB frames, a jumbo one. */
		for (uint32_t len = 1000; len < 1300; len += 3)
			ck_assert_uint_eq(droce_crc32(buf + len % 64, len),
					  crc32(0, buf + len % 64, len));
		for (uint32_t len = 4096; len < 4096 + 80; len++)
			ck_assert_uint_eq(droce_crc32(buf + len % 64, len),
					  crc32(0, buf + len % 64, len));
		ck_assert_uint_eq(droce_crc32(buf + 5, 9000), crc32(0, buf + 5, 9000));
	}
	droce_crc32_init();
}
END_TEST

/* zlib's CRC of @p len bytes at @p p with @p mask ORed into them. */
static uint32_t
crc_of_masked(const uint8_t *p, uint32_t len, const struct droce_crc_mask *mask)
{
	uint8_t copy[DROCE_CRC_MASKED_MAX];

	memcpy(copy, p, len);
	for (uint32_t i = 0; i < len && i < DROCE_CRC_MASK_LEN; i++)
		copy[i] |= mask->b[16 + i];
	return (uint32_t)crc32(0, copy, len);
}

/* The runs the masked CRCs are checked on: the buffer's own space. */
#define MASKED_RUN_ROOM (DROCE_CRC_MASKED_MAX + 64)

/*
 * Call @p check for every length a masked CRC takes, on each path the CPU
 * runs, with a mask on every byte it can set bits in (only where the run
 * has them), over @p size random bytes at @p buf (from @p seed), which
 * must be left as they were.
 */
static void
each_masked_len(uint8_t *buf, size_t size, uint32_t seed,
		void (*check)(const uint8_t *buf, uint32_t len, const struct droce_crc_mask *mask))
{
	static uint8_t before[4 * MASKED_RUN_ROOM];
	uint8_t bits[DROCE_CRC_MASK_LEN];
	struct droce_crc_mask mask;

	ck_assert_uint_le(size, sizeof(before));
	fill_random(buf, size, seed);
	fill_random(bits, sizeof(bits), seed ^ 2654435761u);
	memcpy(before, buf, size);
	crc_paths_check();
	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++) {
		if (droce_crc32_path_set((enum droce_crc_path)path) != 0)
			continue;
		for (uint32_t len = 16; len < DROCE_CRC_MASKED_MAX; len++) {
			memset(&mask, 0, sizeof(mask));
			for (uint32_t i = 0; i < len && i < DROCE_CRC_MASK_LEN; i++)
				droce_crc_mask_set(&mask, i, bits[(i + len) % DROCE_CRC_MASK_LEN]);
			check(buf, len, &mask);
		}
	}
	droce_crc32_init();
	ck_assert_mem_eq(buf, before, size);
}

/* droce_crc32_masked() at every alignment. */
static void
check_masked(const uint8_t *buf, uint32_t len, const struct droce_crc_mask *mask)
{
	for (uint32_t off = 0; off < 64; off += 7)
		ck_assert_uint_eq(droce_crc32_masked(buf + off, len, mask),
				  crc_of_masked(buf + off, len, mask));
}

/* droce_crc32_masked4() of four runs, aligned alike and not. */
static void
check_masked4(const uint8_t *buf, uint32_t len, const struct droce_crc_mask *mask)
{
	static const uint32_t offs[][4] = { { 0, 0, 0, 0 }, { 1, 22, 47, 63 }, { 15, 8, 3, 30 } };

	for (unsigned o = 0; o < RTE_DIM(offs); o++) {
		const uint8_t *p[4];
		uint32_t crc[4];

		for (unsigned i = 0; i < 4; i++)
			p[i] = buf + i * MASKED_RUN_ROOM + offs[o][i];
		droce_crc32_masked4(p, len, mask, crc);
		for (unsigned i = 0; i < 4; i++)
			ck_assert_uint_eq(crc[i], crc_of_masked(p[i], len, mask));
	}
}

/* droce_crc32_masked() is zlib's CRC of the masked bytes at every length
 * and alignment, with masks on every byte it can set bits in, on each
 * path the CPU runs, and leaves the run as it was. */
START_TEST(test_droce_crc32_masked)
{
	static uint8_t buf[MASKED_RUN_ROOM];

	each_masked_len(buf, sizeof(buf), 1812433253u, check_masked);
}
END_TEST

/* droce_crc32_masked4() is that CRC of each of its four runs, the runs at
 * different alignments. */
START_TEST(test_droce_crc32_masked4)
{
	static uint8_t buf[4 * MASKED_RUN_ROOM];

	each_masked_len(buf, sizeof(buf), 362436069u, check_masked4);
}
END_TEST

/* A bit changed in any byte of @p m the ICRC covers is caught, in none it
 * masks, by droce_icrc_check_pkt() (which must leave the frame as it was)
 * and droce_icrc_check(); with @p side, its copy is made each time. */
static void
check_icrc_flips(struct rte_mbuf *m, const struct droce_pkt *pkt, bool v6,
		 struct droce_side_copy *side)
{
	static uint8_t before[TEST_MBUF_DATA], src[512], dst[512];
	uint32_t len = rte_pktmbuf_pkt_len(m);

	memcpy(before, rte_pktmbuf_mtod(m, const uint8_t *), len);
	for (uint32_t i = 0; i < len; i++) {
		uint8_t *b = rte_pktmbuf_mtod_offset(m, uint8_t *, i);
		uint32_t off = i - (pkt->l3_off - 8u); /* from the LRH's place */
		uint8_t bits = i >= pkt->l3_off - 8u && off < DROCE_CRC_MASK_LEN ?
			       droce_icrc_mask(v6)->b[16 + off] : 0;
		bool masked = i < pkt->l3_off - 8u || bits == 0xff;

		if (bits == 0x0f)
			continue; /* the IPv6 version nibble: half of it counts */
		*b ^= 0x01;
		if (side != NULL) {
			fill_random(src, sizeof(src), i + 1);
			memset(dst, 0, sizeof(dst));
			*side = (struct droce_side_copy){ .dst = dst, .src = src, .n = sizeof(src) };
		}
		ck_assert_int_eq(droce_icrc_check_pkt(m, pkt, side), masked);
		if (side != NULL) {
			ck_assert_uint_eq(side->n, 0);
			ck_assert_mem_eq(dst, src, sizeof(src));
		}
		ck_assert_int_eq(droce_icrc_check(m, pkt->l3_off), masked);
		*b ^= 0x01;
		ck_assert_mem_eq(rte_pktmbuf_mtod(m, const uint8_t *), before, len);
	}
}

/* The ICRC's masks for droce_crc32_masked() set the bits the masking in
 * place does (what the frames of the vectors and of rxe are checked
 * with): a frame whose ICRC is checked both ways, IPv4 and IPv6, short
 * and long (a long one in one segment takes droce_crc32_beside_masked(),
 * which masks as it reads on the CPUs with the fused loop), on each
 * CRC path the CPU runs, with a copy beside the check and without. */
START_TEST(test_icrc_masks)
{
	static const uint32_t payloads[] = { 16, 300, 1000 };
	struct droce_side_copy side;
	struct droce_l3_addr a;

	crc_paths_check();
	for (int path = DROCE_CRC_LIB; path <= DROCE_CRC_VPCLMUL; path++) {
		if (droce_crc32_path_set((enum droce_crc_path)path) != 0)
			continue;
		for (unsigned k = 0; k < RTE_DIM(payloads); k++) {
			for (int v6 = 0; v6 < 2; v6++) {
				static uint8_t l4[sizeof(struct droce_bth) + 1000];
				struct rte_mbuf *m, *c;
				struct droce_pkt pkt;
				uint32_t cuts[1];

				test_addr(&a, v6 != 0, 0);
				/* Bits in every masked field: the TTL, the class, FECN and BECN. */
				a.ttl = 0x5a;
				a.tclass = 0xa6;
				a.flow_label = 0x12345;
				droce_bth_set((struct droce_bth *)l4, DROCE_OP_SEND_ONLY, false, 0,
					      DROCE_PKEY_DEFAULT, 0x123456, true, 0x654321);
				((struct droce_bth *)l4)->resv8a = 0xc0;
				fill_random(l4 + sizeof(struct droce_bth), payloads[k], 3u + k);
				m = test_build(&a, l4, sizeof(struct droce_bth) + payloads[k]);
				ck_assert_int_eq(droce_pkt_parse(m, &pkt, false), DROCE_PARSE_OK);
				ck_assert(droce_icrc_check(m, pkt.l3_off));
				/* The same frame with its last byte in a segment of its
				 * own takes the masking in place; both agree with the ICRC. */
				cuts[0] = rte_pktmbuf_pkt_len(m) - 1;
				c = test_mbuf_split(rte_pktmbuf_mtod(m, const uint8_t *),
						    rte_pktmbuf_pkt_len(m), cuts, 1);
				ck_assert_uint_eq(droce_icrc_calc(c, pkt.l3_off),
						  droce_icrc_calc(m, pkt.l3_off));
				ck_assert(droce_icrc_check(c, pkt.l3_off));
				ck_assert(droce_icrc_check_pkt(c, &pkt, NULL));
				rte_pktmbuf_free(c);
				check_icrc_flips(m, &pkt, v6 != 0, NULL);
				check_icrc_flips(m, &pkt, v6 != 0, &side);
				rte_pktmbuf_free(m);
			}
		}
	}
	droce_crc32_init();
}
END_TEST

/* The whole frame of @p m equals @p d: the ICRC put every byte back. */
static void
assert_frame(const struct rte_mbuf *m, const uint8_t *d, uint32_t len)
{
	static uint8_t copy[TEST_MBUF_DATA];
	const void *p;

	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), len);
	p = rte_pktmbuf_read(m, 0, len, copy);
	ck_assert_ptr_nonnull(p);
	ck_assert_mem_eq(p, d, len);
}

/* Split at @p cuts: the ICRC and the parse must not change. */
static void
check_split(const uint8_t *d, uint32_t len, const struct droce_pkt *want,
	    uint32_t icrc, const uint32_t *cuts, unsigned ncuts)
{
	struct rte_mbuf *m = test_mbuf_split(d, len, cuts, ncuts);
	struct droce_pkt pkt;
	enum droce_parse_err err;
	uint32_t first = cuts[0];

	if (first >= want->bth_off + sizeof(struct droce_bth)) {
		ck_assert_uint_eq(droce_icrc_calc(m, want->l3_off), icrc);
		ck_assert(droce_icrc_check(m, want->l3_off));
		ck_assert(droce_icrc_check_pkt(m, want, NULL));
	} else {
		/* The masked headers must be in the first segment. */
		ck_assert(!droce_icrc_check(m, want->l3_off));
	}
	assert_frame(m, d, len);
	err = droce_pkt_parse(m, &pkt, true);
	if (first >= want->payload_off) {
		ck_assert_int_eq(err, DROCE_PARSE_OK);
		ck_assert_uint_eq(pkt.payload_off, want->payload_off);
		ck_assert_uint_eq(pkt.payload_len, want->payload_len);
		ck_assert_uint_eq(pkt.psn, want->psn);
	} else {
		ck_assert_int_eq(err, DROCE_PARSE_MALFORMED);
	}
	assert_frame(m, d, len);
	rte_pktmbuf_free(m);
}

/* Every 2-way split (every @p step bytes), and 3-way ones around the ICRC. */
static void
check_chained(const uint8_t *d, uint32_t len, uint32_t step)
{
	struct rte_mbuf *m = test_mbuf(d, len);
	struct droce_pkt want;
	uint32_t icrc, wire;

	ck_assert_int_eq(droce_pkt_parse(m, &want, true), DROCE_PARSE_OK);
	icrc = droce_icrc_calc(m, want.l3_off);
	rte_pktmbuf_free(m);
	memcpy(&wire, d + len - DROCE_ICRC_LEN, sizeof(wire));
	ck_assert_uint_eq(icrc, rte_le_to_cpu_32(wire));

	for (uint32_t c = 1; c < len; c += step)
		check_split(d, len, &want, icrc, &c, 1);
	for (uint32_t c = want.payload_off; c < len; c += step) {
		/* Second cut anywhere after, the ICRC split, an empty segment. */
		const uint32_t seconds[] = { c, c + 1, (c + len) / 2, len - 3, len - 1 };

		for (size_t j = 0; j < RTE_DIM(seconds); j++) {
			uint32_t cuts[2] = { c, seconds[j] };

			if (cuts[1] >= c && cuts[1] < len)
				check_split(d, len, &want, icrc, cuts, 2);
		}
	}
}

START_TEST(test_chained)
{
	struct pcap_file f;

	test_pcap_load("roce-v2.pcap", &f);
	for (size_t i = 0; i < f.n; i++)
		check_chained(f.frames[i].data, f.frames[i].len, 1);
	pcap_free(&f);
	/* A READ response with AETH and a 4096-byte SEND, coarser. */
	test_pcap_load("rxe-rc-read.pcap", &f);
	check_chained(f.frames[5].data, f.frames[5].len, 13);
	pcap_free(&f);
	test_pcap_load("rxe-rc-mtu4096.pcap", &f);
	check_chained(f.frames[0].data, f.frames[0].len, 97);
	pcap_free(&f);
}
END_TEST

/* A WRITE_ONLY with a RETH and @p payload bytes, in @p l4. */
static uint32_t
write_only(uint8_t *l4, uint32_t payload)
{
	struct droce_reth *reth = (struct droce_reth *)(l4 + sizeof(struct droce_bth));

	droce_bth_set((struct droce_bth *)l4, DROCE_OP_WRITE_ONLY, false, 0,
		      DROCE_PKEY_DEFAULT, 0xabcdef, true, 0xfffffe);
	reth->va = rte_cpu_to_be_64(0x7f0012345000);
	reth->rkey = rte_cpu_to_be_32(0x1234);
	reth->len = rte_cpu_to_be_32(payload);
	for (uint32_t i = 0; i < payload; i++)
		l4[28 + i] = (uint8_t)(i * 7);
	return 28 + payload;
}

START_TEST(test_append)
{
	static uint8_t l4[TEST_MBUF_DATA];
	struct droce_l3_addr a;
	struct rte_mbuf *m, *seg;
	uint32_t l4_len = write_only(l4, 600);
	unsigned hdr;
	uint8_t *p;

	test_addr(&a, false, 0);
	hdr = droce_l3_hdr_len(&a);

	/* Headers in one segment, payload in a second: the ICRC goes there. */
	m = rte_pktmbuf_alloc(test_pool);
	seg = rte_pktmbuf_alloc(test_pool);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(seg);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdr + 28));
	ck_assert_ptr_nonnull(p);
	droce_l3_hdr_write(m, &a, l4_len);
	memcpy(p + hdr, l4, 28);
	p = (uint8_t *)rte_pktmbuf_append(seg, (uint16_t)(l4_len - 28));
	ck_assert_ptr_nonnull(p);
	memcpy(p, l4 + 28, l4_len - 28);
	ck_assert_int_eq(rte_pktmbuf_chain(m, seg), 0);
	ck_assert_int_eq(droce_icrc_append(m, 14), 0);
	ck_assert_uint_eq(rte_pktmbuf_data_len(seg), l4_len - 28 + DROCE_ICRC_LEN);
	ck_assert(droce_icrc_check(m, 14));
	{
		struct rte_mbuf *one = test_build(&a, l4, l4_len);

		ck_assert_uint_eq(droce_icrc_calc(m, 14), droce_icrc_calc(one, 14));
		assert_frame(m, rte_pktmbuf_mtod(one, uint8_t *), rte_pktmbuf_pkt_len(one));
		rte_pktmbuf_free(one);
	}
	/* A changed payload byte is caught. */
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, 100) ^= 0x10;
	ck_assert(!droce_icrc_check(m, 14));
	/* Appending twice: the IP length no longer ends the frame. */
	ck_assert_int_eq(droce_icrc_append(m, 14), -EINVAL);
	rte_pktmbuf_free(m);

	/* The IP length says more than the frame holds. */
	m = rte_pktmbuf_alloc(test_pool);
	ck_assert_ptr_nonnull(rte_pktmbuf_append(m, (uint16_t)(hdr + l4_len - 4)));
	droce_l3_hdr_write(m, &a, l4_len);
	ck_assert_int_eq(droce_icrc_append(m, 14), -EINVAL);
	ck_assert_uint_eq(droce_icrc_calc(m, 14), 0);
	ck_assert_int_eq(droce_icrc_append(m, 0), -EINVAL);
	rte_pktmbuf_free(m);

	/* No room for the ICRC. */
	m = rte_pktmbuf_alloc(test_pool);
	l4_len = rte_pktmbuf_tailroom(m) - hdr - 2;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdr + l4_len));
	ck_assert_ptr_nonnull(p);
	droce_l3_hdr_write(m, &a, l4_len);
	memcpy(p + hdr, l4, l4_len);
	ck_assert_int_eq(droce_icrc_append(m, 14), -ENOMEM);
	rte_pktmbuf_free(m);
}
END_TEST

/* Build with droce_l3_hdr_write(), check the bytes, parse it back. */
static void
check_build(bool ipv6, uint16_t vlan)
{
	static uint8_t l4[256];
	const uint32_t l4_len = write_only(l4, 100);
	const uint32_t udp_len = 8 + l4_len + DROCE_ICRC_LEN;
	const unsigned l3 = vlan ? 18 : 14;
	struct droce_l3_addr a;
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	const uint8_t *p;
	const struct rte_udp_hdr *udp;

	test_addr(&a, ipv6, vlan);
	ck_assert_uint_eq(droce_l3_hdr_len(&a), l3 + (ipv6 ? 40 : 20) + 8);
	m = test_build(&a, l4, l4_len);
	p = rte_pktmbuf_mtod(m, const uint8_t *);

	ck_assert_mem_eq(p, a.dst_mac.addr_bytes, 6);
	ck_assert_mem_eq(p + 6, a.src_mac.addr_bytes, 6);
	if (vlan) {
		ck_assert_uint_eq(p[12] << 8 | p[13], RTE_ETHER_TYPE_VLAN);
		ck_assert_uint_eq(p[14] << 8 | p[15], vlan);
	}
	ck_assert_uint_eq(p[l3 - 2] << 8 | p[l3 - 1],
			  ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (ipv6) {
		const struct rte_ipv6_hdr *ip = (const void *)(p + l3);

		ck_assert_uint_eq(rte_be_to_cpu_32(ip->vtc_flow),
				  6u << 28 | 0x68u << 20 | 0xabcde);
		ck_assert_uint_eq(rte_be_to_cpu_16(ip->payload_len), udp_len);
		ck_assert_uint_eq(ip->proto, IPPROTO_UDP);
		ck_assert_uint_eq(ip->hop_limits, 17);
		ck_assert_mem_eq(ip->src_addr, a.sgid, 16);
		ck_assert_mem_eq(ip->dst_addr, a.dgid, 16);
		udp = (const void *)(ip + 1);
	} else {
		const struct rte_ipv4_hdr *ip = (const void *)(p + l3);

		ck_assert_uint_eq(ip->version_ihl, 0x45);
		ck_assert_uint_eq(ip->type_of_service, 0x68);
		ck_assert_uint_eq(rte_be_to_cpu_16(ip->total_length), 20 + udp_len);
		ck_assert_uint_eq(rte_be_to_cpu_16(ip->packet_id), 0x4321);
		ck_assert_uint_eq(rte_be_to_cpu_16(ip->fragment_offset), RTE_IPV4_HDR_DF_FLAG);
		ck_assert_uint_eq(ip->time_to_live, 17);
		ck_assert_uint_eq(ip->next_proto_id, IPPROTO_UDP);
		/* A correct header sums to all ones. */
		ck_assert_uint_eq(rte_raw_cksum(ip, sizeof(*ip)), 0xffff);
		ck_assert_mem_eq(&ip->src_addr, a.sgid + 12, 4);
		ck_assert_mem_eq(&ip->dst_addr, a.dgid + 12, 4);
		udp = (const void *)(ip + 1);
	}
	ck_assert_uint_eq(rte_be_to_cpu_16(udp->src_port), a.udp_sport);
	ck_assert_uint_eq(rte_be_to_cpu_16(udp->dst_port), DROCE_UDP_PORT);
	ck_assert_uint_eq(rte_be_to_cpu_16(udp->dgram_len), udp_len);
	ck_assert_uint_eq(udp->dgram_cksum, 0);

	ck_assert_int_eq(droce_pkt_parse(m, &pkt, true), DROCE_PARSE_OK);
	ck_assert_uint_eq(pkt.ipv6, ipv6);
	ck_assert_uint_eq(pkt.vlan_tci, vlan);
	ck_assert_uint_eq(pkt.l3_off, l3);
	ck_assert_uint_eq(pkt.bth_off, droce_l3_hdr_len(&a));
	ck_assert_uint_eq(pkt.opcode, DROCE_OP_WRITE_ONLY);
	ck_assert_uint_eq(pkt.qpn, 0xabcdef);
	ck_assert_uint_eq(pkt.psn, 0xfffffe);
	ck_assert_uint_eq(pkt.payload_len, 100);
	ck_assert_uint_eq(pkt.payload_off, pkt.bth_off + 28);
	ck_assert_uint_eq(pkt.udp_sport, a.udp_sport);
	ck_assert_mem_eq(pkt.sgid, a.sgid, 16);
	ck_assert_mem_eq(pkt.dgid, a.dgid, 16);
	ck_assert(rte_is_same_ether_addr(&pkt.src_mac, &a.src_mac));
	ck_assert_uint_eq(rte_be_to_cpu_64(((const struct droce_reth *)
			  droce_pkt_hdr(m, &pkt, DROCE_HDR_RETH))->va), 0x7f0012345000);
	ck_assert_ptr_null(droce_pkt_hdr(m, &pkt, DROCE_HDR_AETH));
	rte_pktmbuf_free(m);
}

START_TEST(test_build_frames)
{
	check_build(false, 0);
	check_build(false, 0x2064);
	check_build(true, 0);
	check_build(true, 0x0fff);
}
END_TEST

Suite *
suite_icrc(void)
{
	Suite *s = suite_create("icrc");
	TCase *tc = tcase_create("icrc");

	tcase_add_test(tc, test_crc_is_zlib);
	tcase_add_test(tc, test_droce_crc32_is_zlib);
	tcase_add_test(tc, test_droce_crc32_masked);
	tcase_add_test(tc, test_droce_crc32_masked4);
	tcase_add_test(tc, test_icrc_masks);
	tcase_add_test(tc, test_chained);
	tcase_add_test(tc, test_append);
	tcase_add_test(tc, test_build_frames);
	suite_add_tcase(s, tc);
	return s;
}
