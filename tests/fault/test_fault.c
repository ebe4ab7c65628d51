/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of fault injection: the fault stage on its own (with the
 * time it is given, so delays are exact), its configuration syntax, and
 * ports with faults on two ring ethdevs connected back to back.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_ring.h>

#include "droce_conf.h"
#include "droce_fault.h"
#include "droce_port.h"

#define BURST 32u
/* The TSC the stage tests start at: any value works, the stage is given
 * its time. */
#define T0 1000000000ull

static struct rte_mempool *mp;
static uint16_t eth_a, eth_b;
static struct droce_port *pa, *pb;

/* ---- frames ---- */

static void
gid_of_ipv4(uint32_t ip, uint8_t gid[16])
{
	rte_be32_t be = rte_cpu_to_be_32(ip);

	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &be, 4);
}

/* Addresses of the frames the stage tests use (no port involved). */
static struct droce_l3_addr
addr(bool ipv6, uint16_t vlan_tci)
{
	struct droce_l3_addr a = {
		.ipv6 = ipv6, .vlan_tci = vlan_tci, .ttl = 64, .udp_sport = 0xc011,
		.src_mac = {{ 0x02, 0, 0, 0, 0, 1 }}, .dst_mac = {{ 0x02, 0, 0, 0, 0, 2 }},
	};

	if (ipv6) {
		a.sgid[0] = a.dgid[0] = 0xfe;
		a.sgid[1] = a.dgid[1] = 0x80;
		a.sgid[15] = 1;
		a.dgid[15] = 2;
	} else {
		gid_of_ipv4(RTE_IPV4(10, 0, 0, 1), a.sgid);
		gid_of_ipv4(RTE_IPV4(10, 0, 0, 2), a.dgid);
	}
	return a;
}

/* A SEND_ONLY frame from @p pool whose payload (len >= 4, a multiple of 4)
 * starts with @p id. */
static struct rte_mbuf *
frame(struct rte_mempool *pool, const struct droce_l3_addr *a, uint32_t id, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint32_t l4 = sizeof(struct droce_bth) + len, i;
	uint16_t l3_off = sizeof(struct rte_ether_hdr) +
			  (a->vlan_tci ? sizeof(struct rte_vlan_hdr) : 0);
	unsigned off;
	uint8_t *d;

	ck_assert_ptr_nonnull(m);
	d = (uint8_t *)rte_pktmbuf_append(m, droce_l3_hdr_len(a) + l4);
	ck_assert_ptr_nonnull(d);
	off = droce_l3_hdr_write(m, a, l4);
	droce_bth_set((struct droce_bth *)(d + off), DROCE_OP_SEND_ONLY, false, 0,
		      DROCE_PKEY_DEFAULT, 0x11, true, id & DROCE_PSN_MASK);
	for (i = 0; i < len; i++)
		d[off + sizeof(struct droce_bth) + i] = (uint8_t)(i * 7);
	memcpy(d + off + sizeof(struct droce_bth), &id, sizeof(id));
	ck_assert_int_eq(droce_icrc_append(m, l3_off), 0);
	return m;
}

/* The number frame() put in @p m (an untagged IPv4 frame). */
static uint32_t
frame_id(const struct rte_mbuf *m)
{
	uint32_t id;

	memcpy(&id, rte_pktmbuf_mtod_offset(m, const uint8_t *,
		    RTE_ETHER_HDR_LEN + 20 + 8 + sizeof(struct droce_bth)), sizeof(id));
	return id;
}

static bool
same_bytes(const struct rte_mbuf *a, const struct rte_mbuf *b)
{
	return rte_pktmbuf_pkt_len(a) == rte_pktmbuf_pkt_len(b) &&
	       memcmp(rte_pktmbuf_mtod(a, const void *), rte_pktmbuf_mtod(b, const void *),
		      rte_pktmbuf_data_len(a)) == 0;
}

/* ---- the stage on its own ---- */

static struct droce_fault stage;
static struct droce_fault_stats stage_stats;

static void
stage_open(const struct droce_fault_conf *c)
{
	memset(&stage_stats, 0, sizeof(stage_stats));
	droce_fault_init(&stage, c, mp, &stage_stats);
}

static uint64_t
us_to_tsc(uint64_t us)
{
	return rte_get_tsc_hz() * us / 1000000;
}

/* Feed @p n frames in one call (they must fit droce_fault_room()). */
static void
stage_feed(uint32_t first_id, unsigned n, uint64_t now)
{
	struct droce_l3_addr a = addr(false, 0);
	struct rte_mbuf *pkts[BURST];
	unsigned i;

	ck_assert_uint_le(n, BURST);
	ck_assert_uint_le(n, droce_fault_room(&stage));
	for (i = 0; i < n; i++)
		pkts[i] = frame(mp, &a, first_id + i, 64);
	droce_fault_input(&stage, pkts, (uint16_t)n, now);
}

/* Take everything ready at @p now: the ids in @p ids (up to @p max), frames freed. */
static unsigned
stage_drain(uint64_t now, uint32_t *ids, unsigned max)
{
	struct rte_mbuf *pkts[BURST];
	unsigned got = 0;
	uint16_t n, i;

	while ((n = droce_fault_ready(&stage, pkts, BURST, now)) != 0) {
		for (i = 0; i < n; i++, got++) {
			if (got < max)
				ids[got] = frame_id(pkts[i]);
			rte_pktmbuf_free(pkts[i]);
		}
		droce_fault_taken(&stage, n);
	}
	return got;
}

/*
 * Pass @p nframes numbered frames through a stage with @p c, a burst every
 * @p step TSC cycles, taking what is ready after each; then wait out every
 * delay. @p sig (may be NULL) gets a CRC of each frame that came out.
 * @return the number of frames that came out.
 */
static unsigned
stage_stream(const struct droce_fault_conf *c, unsigned nframes, uint64_t step,
	     uint32_t *sig, unsigned sig_max)
{
	struct droce_l3_addr a = addr(false, 0);
	struct rte_mbuf *pkts[BURST];
	uint64_t now = T0;
	unsigned sent = 0, out = 0;
	uint16_t n, i, k;

	stage_open(c);
	for (;;) {
		k = (uint16_t)RTE_MIN(RTE_MIN(BURST, nframes - sent), droce_fault_room(&stage));
		for (i = 0; i < k; i++)
			pkts[i] = frame(mp, &a, sent + i, 64);
		droce_fault_input(&stage, pkts, k, now);
		sent += k;
		if (sent == nframes)
			now += us_to_tsc(2 * DROCE_FAULT_DELAY_US_MAX);
		while ((n = droce_fault_ready(&stage, pkts, BURST, now)) != 0) {
			for (i = 0; i < n; i++, out++) {
				if (sig != NULL && out < sig_max)
					sig[out] = rte_hash_crc(rte_pktmbuf_mtod(pkts[i], void *),
								rte_pktmbuf_data_len(pkts[i]), 0);
				rte_pktmbuf_free(pkts[i]);
			}
			droce_fault_taken(&stage, n);
		}
		if (sent == nframes)
			break;
		now += step;
	}
	ck_assert(!droce_fault_busy(&stage) || droce_fault_conf_active(c));
	droce_fault_fini(&stage);
	return out;
}

START_TEST(test_conf_check)
{
	struct droce_fault_conf c = { 0 };

	ck_assert_int_eq(droce_fault_conf_check(&c), 0);
	ck_assert(!droce_fault_conf_active(&c));
	c.drop = 1;
	ck_assert_int_eq(droce_fault_conf_check(&c), 0);
	ck_assert(droce_fault_conf_active(&c));
	c.drop = 1.01;
	ck_assert_int_eq(droce_fault_conf_check(&c), -EINVAL);
	c.drop = -0.1;
	ck_assert_int_eq(droce_fault_conf_check(&c), -EINVAL);
	c.drop = NAN;
	ck_assert_int_eq(droce_fault_conf_check(&c), -EINVAL);
	c.drop = 0;
	c.delay = 0.5;
	ck_assert_int_eq(droce_fault_conf_check(&c), -EINVAL);
	c.delay_us = DROCE_FAULT_DELAY_US_MAX + 1;
	ck_assert_int_eq(droce_fault_conf_check(&c), -EINVAL);
	c.delay_us = 200;
	ck_assert_int_eq(droce_fault_conf_check(&c), 0);
}
END_TEST

START_TEST(test_conf_parse)
{
	static const struct {
		const char *in, *err;
	} bad[] = {
		{ "drop=2", "drop: '2' is not a probability (0..1)" },
		{ "drop=-0", "drop: '-0' is not a probability (0..1)" },
		{ "drop=nan", "drop: 'nan' is not a probability (0..1)" },
		{ "drop=0.1x", "drop: '0.1x' is not a probability (0..1)" },
		{ "drop", "drop: no value" },
		{ "drop=0.1,drop=0.2", "drop: repeated" },
		{ "lose=0.1", "lose: unknown fault (expected drop, dup, reorder, corrupt, delay, delay_us, segment, seed)" },
		{ "segment=64", "segment: '64' is not a segment size (128..65535 bytes)" },
		{ "delay=0.1", "delay: needs delay_us (how long)" },
		{ "delay_us=0", "delay_us: '0' is not a number of microseconds (1..1000000)" },
		{ "seed=0x10", "seed: '0x10' is not a decimal number" },
		{ "drop=0.1,=0.2", "a value without a key" },
		{ "drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,"
		  "drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,"
		  "drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0,drop=0",
		  "not a list of key=value pairs (e.g. drop=0.01,seed=42)" },
	};
	struct droce_fault_conf c;
	char err[256];
	unsigned i;

	ck_assert_int_eq(droce_conf_fault_parse(
		"drop=0.01,dup=0.02,reorder=0.03,corrupt=0.04,delay=0.05,delay_us=200,seed=42",
		&c, err, sizeof(err)), 0);
	ck_assert(c.drop == 0.01 && c.duplicate == 0.02 && c.reorder == 0.03 &&
		  c.corrupt == 0.04 && c.delay == 0.05);
	ck_assert_uint_eq(c.delay_us, 200);
	ck_assert_uint_eq(c.seed, 42);
	ck_assert_int_eq(droce_conf_fault_parse("segment=200", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.segment, 200);
	ck_assert(droce_fault_conf_active(&c));
	ck_assert_int_eq(droce_conf_fault_parse("seed=18446744073709551615,drop=1", &c,
						err, sizeof(err)), 0);
	ck_assert_uint_eq(c.seed, UINT64_MAX);
	ck_assert(c.drop == 1 && c.duplicate == 0 && c.delay_us == 0);
	for (i = 0; i < RTE_DIM(bad); i++) {
		ck_assert_msg(droce_conf_fault_parse(bad[i].in, &c, err, sizeof(err)) == -EINVAL,
			      "%s parsed", bad[i].in);
		ck_assert_msg(strstr(err, bad[i].err) != NULL, "%s: got \"%s\"", bad[i].in, err);
		ck_assert(!droce_fault_conf_active(&c));
	}
}
END_TEST

/* The fault keys in a configuration file; errors name line and key. */
START_TEST(test_conf_file)
{
	char path[64], err[512];
	struct droce_conf conf;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/droce-test-fault-%d.conf", getpid());
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[port0]\ndevice = net_ring0\n"
		"fault_rx = drop=0.5,seed=7\n"
		"fault_tx = delay=1,delay_us=300,reorder=0.25\n");
	fclose(f);
	ck_assert_int_eq(droce_conf_load(path, &conf, err, sizeof(err)), 0);
	ck_assert(conf.ports[0].port.fault_rx.drop == 0.5);
	ck_assert_uint_eq(conf.ports[0].port.fault_rx.seed, 7);
	ck_assert(conf.ports[0].port.fault_tx.delay == 1);
	ck_assert(conf.ports[0].port.fault_tx.reorder == 0.25);
	ck_assert_uint_eq(conf.ports[0].port.fault_tx.delay_us, 300);
	droce_conf_free(&conf);

	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[port0]\ndevice = net_ring0\n\nfault_tx = drop=0.5,corrupt=3\n");
	fclose(f);
	ck_assert_int_eq(droce_conf_load(path, &conf, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, ":4: [port0] fault_tx: corrupt: '3' is not a probability (0..1)") != NULL,
		      "%s", err);
	unlink(path);
}
END_TEST

/* Same seed, same frames: the same frames come out, bit for bit, in the
 * same order; another seed gives another outcome. */
START_TEST(test_same_seed)
{
	enum { N = 20000, MAX_OUT = 2 * N };
	struct droce_fault_conf c = {
		.drop = 0.05, .duplicate = 0.05, .reorder = 0.05, .corrupt = 0.05,
		.delay = 0.05, .delay_us = 50, .seed = 42,
	};
	static uint32_t sig1[MAX_OUT], sig2[MAX_OUT];
	struct droce_fault_stats st1;
	uint64_t step = us_to_tsc(10);
	unsigned n1, n2;

	n1 = stage_stream(&c, N, step, sig1, MAX_OUT);
	st1 = stage_stats;
	ck_assert_uint_gt(st1.dropped, 0);
	ck_assert_uint_gt(st1.duplicated, 0);
	ck_assert_uint_gt(st1.reordered, 0);
	ck_assert_uint_gt(st1.corrupted, 0);
	ck_assert_uint_gt(st1.delayed, 0);
	ck_assert_uint_eq(n1, N - st1.dropped + st1.duplicated);
	n2 = stage_stream(&c, N, step, sig2, MAX_OUT);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(&st1, &stage_stats, sizeof(st1));
	ck_assert_mem_eq(sig1, sig2, n1 * sizeof(sig1[0]));

	c.seed = 43;
	n2 = stage_stream(&c, N, step, sig2, MAX_OUT);
	ck_assert(n1 != n2 || memcmp(sig1, sig2, n1 * sizeof(sig1[0])) != 0);
}
END_TEST

/* |got - want| within 5 standard deviations of a binomial count. */
static void
check_rate(const char *what, uint64_t got, double trials, double p)
{
	double want = trials * p, sd = sqrt(trials * p * (1 - p));

	ck_assert_msg(fabs((double)got - want) <= 5 * sd,
		      "%s: %" PRIu64 " times, expected %.0f +- %.0f", what, got, want, 5 * sd);
}

/* Each action alone at 10% over 100k frames. */
START_TEST(test_rates)
{
	enum { N = 100000 };
	const double p = 0.1;
	struct droce_fault_conf c = { .seed = 1 };
	uint64_t step = us_to_tsc(10);
	unsigned out;

	c.drop = p;
	out = stage_stream(&c, N, step, NULL, 0);
	check_rate("drop", stage_stats.dropped, N, p);
	ck_assert_uint_eq(out, N - stage_stats.dropped);

	c.drop = 0;
	c.duplicate = p;
	out = stage_stream(&c, N, step, NULL, 0);
	check_rate("duplicate", stage_stats.duplicated, N, p);
	ck_assert_uint_eq(out, N + stage_stats.duplicated);

	c.duplicate = 0;
	c.corrupt = p;
	out = stage_stream(&c, N, step, NULL, 0);
	check_rate("corrupt", stage_stats.corrupted, N, p);
	ck_assert_uint_eq(out, N);

	c.corrupt = 0;
	c.delay = p;
	c.delay_us = 25;
	out = stage_stream(&c, N, step, NULL, 0);
	check_rate("delay", stage_stats.delayed, N, p);
	ck_assert_uint_eq(out, N);

	/* A frame that comes while another is held is not held: the slot
	 * is free for a fraction 1 / (1 + p) of the frames. */
	c.delay = 0;
	c.reorder = p;
	out = stage_stream(&c, N, step, NULL, 0);
	check_rate("reorder", stage_stats.reordered, N / (1 + p), p);
	ck_assert_uint_eq(out, N);
}
END_TEST

/* Every corrupted frame differs from its original in one bit, and
 * droce_pkt_parse() rejects it: mostly for its ICRC. */
START_TEST(test_corrupt)
{
	enum { N = 2000 };
	struct droce_fault_conf c = { .corrupt = 1, .seed = 5 };
	unsigned i, b, bad_icrc = 0, diff_bits;
	struct rte_mbuf *orig, *m;
	struct droce_pkt pkt;

	stage_open(&c);
	for (i = 0; i < N; i++) {
		struct droce_l3_addr a = addr(i & 1, (i & 2) ? 5 : 0);
		const uint8_t *x, *y;

		orig = frame(mp, &a, i, 4 * (i % 300) + 4);
		ck_assert_int_eq(droce_pkt_parse(orig, &pkt, true), DROCE_PARSE_OK);
		m = rte_pktmbuf_copy(orig, mp, 0, UINT32_MAX);
		ck_assert_ptr_nonnull(m);
		droce_fault_input(&stage, &m, 1, T0);
		ck_assert_uint_eq(droce_fault_ready(&stage, &m, 1, T0), 1);
		droce_fault_taken(&stage, 1);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), rte_pktmbuf_pkt_len(orig));
		x = rte_pktmbuf_mtod(m, const uint8_t *);
		y = rte_pktmbuf_mtod(orig, const uint8_t *);
		ck_assert_mem_eq(x, y, RTE_ETHER_HDR_LEN);
		for (b = diff_bits = 0; b < rte_pktmbuf_data_len(m); b++)
			diff_bits += (unsigned)__builtin_popcount(x[b] ^ y[b]);
		ck_assert_uint_eq(diff_bits, 1);
		switch (droce_pkt_parse(m, &pkt, true)) {
		case DROCE_PARSE_OK:
			ck_abort_msg("frame %u: corrupted frame parsed", i);
			break;
		case DROCE_PARSE_BAD_ICRC:
			bad_icrc++;
			break;
		default:
			break;
		}
		rte_pktmbuf_free(m);
		rte_pktmbuf_free(orig);
	}
	ck_assert_uint_eq(stage_stats.corrupted, N);
	ck_assert_uint_gt(bad_icrc, N * 8 / 10);
	droce_fault_fini(&stage);
}
END_TEST

/* A shared frame (a clone's target) is corrupted in a copy, never in place. */
START_TEST(test_corrupt_shared)
{
	struct droce_fault_conf c = { .corrupt = 1, .seed = 5 };
	struct droce_l3_addr a = addr(false, 0);
	struct rte_mbuf *orig = frame(mp, &a, 1, 64), *keep, *m;

	keep = rte_pktmbuf_copy(orig, mp, 0, UINT32_MAX);
	ck_assert_ptr_nonnull(keep);
	rte_mbuf_refcnt_update(orig, 1);
	stage_open(&c);
	m = orig;
	droce_fault_input(&stage, &m, 1, T0);
	ck_assert_uint_eq(droce_fault_ready(&stage, &m, 1, T0), 1);
	droce_fault_taken(&stage, 1);
	ck_assert_ptr_ne(m, orig);
	ck_assert(!same_bytes(m, orig));
	ck_assert(same_bytes(keep, orig));
	ck_assert_uint_eq(rte_mbuf_refcnt_read(orig), 1);
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(orig);
	rte_pktmbuf_free(keep);
	droce_fault_fini(&stage);
}
END_TEST

/* Reordering swaps neighbours; a frame without a successor goes out
 * alone after DROCE_FAULT_HOLD_US. */
START_TEST(test_reorder)
{
	struct droce_fault_conf c = { .reorder = 1, .seed = 9 };
	uint64_t hold = us_to_tsc(DROCE_FAULT_HOLD_US);
	uint32_t ids[8];

	stage_open(&c);
	stage_feed(0, 6, T0);
	ck_assert_uint_eq(stage_drain(T0, ids, 8), 6);
	ck_assert_uint_eq(ids[0], 1);
	ck_assert_uint_eq(ids[1], 0);
	ck_assert_uint_eq(ids[2], 3);
	ck_assert_uint_eq(ids[3], 2);
	ck_assert_uint_eq(ids[4], 5);
	ck_assert_uint_eq(ids[5], 4);
	ck_assert_uint_eq(stage_stats.reordered, 3);

	/* One at a time, across calls. */
	stage_feed(10, 1, T0);
	ck_assert_uint_eq(stage_drain(T0, ids, 8), 0);
	stage_feed(11, 1, T0 + 1);
	ck_assert_uint_eq(stage_drain(T0 + 1, ids, 8), 2);
	ck_assert_uint_eq(ids[0], 11);
	ck_assert_uint_eq(ids[1], 10);

	/* Alone. */
	stage_feed(20, 1, T0);
	ck_assert_uint_eq(stage_drain(T0 + hold - 1, ids, 8), 0);
	ck_assert_uint_eq(stage_drain(T0 + hold, ids, 8), 1);
	ck_assert_uint_eq(ids[0], 20);
	droce_fault_fini(&stage);
}
END_TEST

/* Delayed frames wait exactly delay_us, keep their order, and when the
 * delay queue is full the rest go on at once. */
START_TEST(test_delay)
{
	struct droce_fault_conf c = { .delay = 1, .delay_us = 200, .seed = 3 };
	uint64_t d = us_to_tsc(200), t;
	uint32_t ids[BURST];
	unsigned i, got;

	stage_open(&c);
	stage_feed(0, 10, T0);
	ck_assert(droce_fault_busy(&stage));
	ck_assert_uint_eq(stage_drain(T0, ids, BURST), 0);
	ck_assert_uint_eq(stage_drain(T0 + d - 1, ids, BURST), 0);
	ck_assert_uint_eq(stage_drain(T0 + d, ids, BURST), 10);
	for (i = 0; i < 10; i++)
		ck_assert_uint_eq(ids[i], i);
	ck_assert_uint_eq(stage_stats.delayed, 10);

	/* Fill the delay queue; one more frame passes. */
	t = T0 + 2 * d;
	for (i = 0; i < DROCE_FAULT_DELAYED; i += BURST)
		stage_feed(100 + i, BURST, t);
	stage_feed(1000, 1, t);
	ck_assert_uint_eq(stage_drain(t, ids, BURST), 1);
	ck_assert_uint_eq(ids[0], 1000);
	ck_assert_uint_eq(stage_stats.delayed, 10 + DROCE_FAULT_DELAYED);
	got = stage_drain(t + d, ids, 1);
	ck_assert_uint_eq(got, DROCE_FAULT_DELAYED);
	ck_assert_uint_eq(ids[0], 100);
	ck_assert(droce_fault_busy(&stage));
	droce_fault_fini(&stage);
}
END_TEST

/* A duplicate follows its frame and is a copy of its own. */
START_TEST(test_duplicate)
{
	struct droce_fault_conf c = { .duplicate = 1, .seed = 11 };
	struct rte_mbuf *pkts[BURST];
	uint16_t n, i;

	stage_open(&c);
	stage_feed(0, 5, T0);
	n = droce_fault_ready(&stage, pkts, BURST, T0);
	ck_assert_uint_eq(n, 10);
	for (i = 0; i < n; i += 2) {
		ck_assert_uint_eq(frame_id(pkts[i]), i / 2);
		ck_assert_ptr_ne(pkts[i], pkts[i + 1]);
		ck_assert(same_bytes(pkts[i], pkts[i + 1]));
		ck_assert(RTE_MBUF_DIRECT(pkts[i + 1]));
		ck_assert_uint_eq(rte_mbuf_refcnt_read(pkts[i]), 1);
		ck_assert_uint_eq(rte_mbuf_refcnt_read(pkts[i + 1]), 1);
		ck_assert_ptr_ne(pkts[i]->buf_addr, pkts[i + 1]->buf_addr);
		*rte_pktmbuf_mtod_offset(pkts[i + 1], uint8_t *, 60) ^= 0xff;
		ck_assert(!same_bytes(pkts[i], pkts[i + 1]));
	}
	droce_fault_taken(&stage, n);
	rte_pktmbuf_free_bulk(pkts, n);
	ck_assert_uint_eq(stage_stats.duplicated, 5);
	ck_assert(droce_fault_busy(&stage));
	droce_fault_fini(&stage);
}
END_TEST

/* segment=: frames longer than a segment come out chained, same bytes. */
START_TEST(test_segment)
{
	struct droce_fault_conf c = { .segment = 128, .seed = 5 };
	const struct droce_l3_addr a = addr(false, 0);
	struct rte_mbuf *in[2], *pkts[BURST];
	uint8_t want[2][1200], got[1200];
	uint16_t n, i;

	stage_open(&c);
	in[0] = frame(mp, &a, 1, 1000);
	in[1] = frame(mp, &a, 2, 40);
	for (i = 0; i < 2; i++)
		ck_assert_int_eq(droce_mbuf_copy(in[i], 0, rte_pktmbuf_pkt_len(in[i]), want[i]), 0);
	droce_fault_input(&stage, in, 2, T0);
	n = droce_fault_ready(&stage, pkts, BURST, T0);
	ck_assert_uint_eq(n, 2);
	/* 1058 bytes in 9 segments of 128 but the last; the short one whole. */
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(pkts[0]), 1058);
	ck_assert_uint_eq(pkts[0]->nb_segs, 9);
	for (struct rte_mbuf *seg = pkts[0]; seg != NULL; seg = seg->next)
		ck_assert_uint_eq(seg->data_len, seg->next != NULL ? 128 : 1058 - 8 * 128);
	ck_assert_uint_eq(pkts[1]->nb_segs, 1);
	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(droce_mbuf_copy(pkts[i], 0, rte_pktmbuf_pkt_len(pkts[i]), got), 0);
		ck_assert_int_eq(memcmp(got, want[i], rte_pktmbuf_pkt_len(pkts[i])), 0);
	}
	droce_fault_taken(&stage, n);
	rte_pktmbuf_free_bulk(pkts, n);
	ck_assert_uint_eq(stage_stats.segmented, 1);
	droce_fault_fini(&stage);
}
END_TEST

/* The room a stage gives never lets it overflow, whatever it does. */
START_TEST(test_room)
{
	struct droce_fault_conf c = { .duplicate = 1, .reorder = 0.5, .seed = 2 };
	struct rte_mbuf *pkts[BURST];
	unsigned fed = 0;
	uint16_t room;

	stage_open(&c);
	while ((room = droce_fault_room(&stage)) != 0) {
		stage_feed(fed, RTE_MIN(room, BURST), T0);
		fed += RTE_MIN(room, BURST);
	}
	ck_assert_uint_ge(fed, DROCE_FAULT_READY / 2 - 1);
	ck_assert_uint_eq(droce_fault_ready(&stage, pkts, BURST, T0), BURST);
	droce_fault_taken(&stage, BURST);
	ck_assert_uint_gt(droce_fault_room(&stage), 0);
	droce_fault_fini(&stage);
}
END_TEST

static void *
set_thread(void *arg)
{
	droce_fault_set(&stage, arg);
	return NULL;
}

/* Configurations published from another thread reach the path on its
 * next sync; turning faults off lets held frames go and the stage idle. */
START_TEST(test_runtime_set)
{
	struct droce_fault_conf off = { 0 }, on = { .reorder = 1, .seed = 4 }, got;
	uint32_t ids[4];
	pthread_t t;

	stage_open(&off);
	ck_assert(!droce_fault_busy(&stage));
	ck_assert_int_eq(pthread_create(&t, NULL, set_thread, &on), 0);
	pthread_join(t, NULL);
	ck_assert(droce_fault_busy(&stage));
	droce_fault_get(&stage, &got);
	ck_assert_mem_eq(&got, &on, sizeof(got));
	droce_fault_sync(&stage);
	stage_feed(0, 1, T0);
	ck_assert_uint_eq(stage_drain(T0, ids, 4), 0);
	ck_assert_uint_eq(stage_stats.reordered, 1);

	ck_assert_int_eq(pthread_create(&t, NULL, set_thread, &off), 0);
	pthread_join(t, NULL);
	droce_fault_sync(&stage);
	ck_assert(droce_fault_busy(&stage));
	ck_assert_uint_eq(stage_drain(T0, ids, 4), 1);
	ck_assert_uint_eq(ids[0], 0);
	ck_assert(!droce_fault_busy(&stage));
	droce_fault_fini(&stage);
}
END_TEST

/* ---- ports ---- */

#define IP_A RTE_IPV4(10, 0, 0, 1)
#define IP_B RTE_IPV4(10, 0, 0, 2)
#define WIRE_RING 256

static struct droce_port_stats
stats(const struct droce_port *p)
{
	struct droce_port_stats s;

	droce_port_stats_get(p, &s);
	return s;
}

/* Receive once; RoCE frames are freed. @return how many. */
static uint16_t
pump(struct droce_port *p)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n = droce_port_rx(p, 0, pkts, BURST, rte_get_tsc_cycles()), i, good = 0;

	for (i = 0; i < n; i++)
		good += droce_port_rx_verify(p, 0, pkts[i], rte_get_tsc_cycles(), NULL);
	rte_pktmbuf_free_bulk(pkts, n);
	return good;
}

static unsigned
pump_all(struct droce_port *p)
{
	unsigned n = 0, got, empty = 0;

	/* Nothing in flight outlives a few empty polls on ring ethdevs. */
	while (empty < 4) {
		got = pump(p);
		n += got;
		empty = got ? 0 : empty + 1;
	}
	return n;
}

static void
ports_open(const struct droce_fault_conf *a_tx)
{
	struct droce_port_conf ca = {
		.port_id = eth_a, .ipv4 = IP_A, .ipv4_prefix = 24, .mtu = 1024,
	};
	struct droce_port_conf cb = {
		.port_id = eth_b, .ipv4 = IP_B, .ipv4_prefix = 24, .mtu = 1024,
	};

	if (a_tx != NULL)
		ca.fault_tx = *a_tx;
	ck_assert_int_eq(droce_port_attach(&ca, &pa), 0);
	ck_assert_int_eq(droce_port_attach(&cb, &pb), 0);
}

static void
ports_close(void)
{
	droce_port_tick(pa, 0, rte_get_tsc_cycles());
	pump_all(pb);
	pump_all(pa);
	droce_port_detach(pa);
	droce_port_detach(pb);
	pa = pb = NULL;
}

/* Route A to B (ARP request and reply); @return 0 once resolved. */
static int
route_a_to_b(struct droce_l3_addr *a)
{
	uint8_t dgid[16];
	int rc;

	gid_of_ipv4(IP_B, dgid);
	rc = droce_port_route(pa, 0, 1, dgid, a);
	if (rc == -EAGAIN) {
		pump_all(pb);
		pump_all(pa);
		rc = droce_port_route(pa, 0, 1, dgid, a);
	}
	return rc;
}

/* Half the frames A sends are dropped on purpose, and counted. */
START_TEST(test_port_tx_drop)
{
	struct droce_fault_conf c = { .drop = 0.5, .seed = 7 };
	enum { N = 2000 };
	struct rte_mbuf *pkts[BURST];
	struct droce_l3_addr a;
	struct droce_port_stats sa;
	unsigned sent, i, got = 0;
	char *dump = NULL;
	size_t len = 0;
	FILE *f;

	ports_open(NULL);
	ck_assert_int_eq(route_a_to_b(&a), 0);
	ck_assert_int_eq(droce_port_fault_set(pa, false, &c), 0);
	for (sent = 0; sent < N; sent += BURST) {
		for (i = 0; i < BURST; i++)
			pkts[i] = frame(droce_port_mempool(pa), &a, sent + i, 64);
		ck_assert_uint_eq(droce_port_tx(pa, 0, pkts, BURST), BURST);
		got += pump_all(pb);
	}
	sa = stats(pa);
	check_rate("port drop", sa.tx_fault.dropped, sent, 0.5);
	ck_assert_uint_eq(got + sa.tx_fault.dropped, sent);
	ck_assert_uint_eq(stats(pb).rx_roce, got);

	f = open_memstream(&dump, &len);
	ck_assert_ptr_nonnull(f);
	droce_port_dump(pa, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(dump, "fault_tx drop=0.5,dup=0,reorder=0,corrupt=0,delay=0,delay_us=0,segment=0,seed=7"));
	ck_assert_ptr_nonnull(strstr(dump, "fault_rx off"));
	ck_assert_ptr_nonnull(strstr(dump, "tx_fault_dropped"));
	free(dump);

	/* Off again: nothing more is dropped. */
	ck_assert_int_eq(droce_port_fault_set(pa, false, NULL), 0);
	for (i = 0; i < BURST; i++)
		pkts[i] = frame(droce_port_mempool(pa), &a, i, 64);
	ck_assert_uint_eq(droce_port_tx(pa, 0, pkts, BURST), BURST);
	ck_assert_uint_eq(pump_all(pb), BURST);
	ck_assert_uint_eq(stats(pa).tx_fault.dropped, sa.tx_fault.dropped);
	c.drop = 2;
	ck_assert_int_eq(droce_port_fault_set(pa, true, &c), -EINVAL);
	ports_close();
}
END_TEST

/* Duplicating everything into a wire that fills up: droce_port_tx()
 * takes less, the caller sends the rest later, and every frame and its
 * duplicate arrive. */
START_TEST(test_port_tx_full_ring)
{
	struct droce_fault_conf c = { .duplicate = 1, .seed = 8 };
	enum { N = 4 * WIRE_RING };
	struct rte_mbuf *pkts[N];
	struct droce_l3_addr a;
	unsigned sent = 0, got = 0, i, stalls = 0;
	uint16_t k;

	ports_open(NULL);
	ck_assert_int_eq(route_a_to_b(&a), 0);
	ck_assert_int_eq(droce_port_fault_set(pa, false, &c), 0);
	for (i = 0; i < N; i++)
		pkts[i] = frame(droce_port_mempool(pa), &a, i, 64);
	while (sent < N) {
		k = droce_port_tx(pa, 0, pkts + sent, (uint16_t)RTE_MIN(N - sent, 64u));
		sent += k;
		if (k == 0) {
			stalls++;
			got += pump_all(pb);
		}
	}
	for (i = 0; i < 8 && got < 2 * N; i++) {
		droce_port_tick(pa, 0, rte_get_tsc_cycles());
		got += pump_all(pb);
	}
	ck_assert_uint_gt(stalls, 0);
	ck_assert_uint_gt(stats(pa).tx_busy, 0);
	ck_assert_uint_eq(stats(pa).tx_fault.duplicated, N);
	ck_assert_uint_eq(got, 2 * N);
	ck_assert_uint_eq(stats(pa).tx_frames, 1 + 2 * N);
	ports_close();
}
END_TEST

/* Faults from the attach configuration: A's TX delays everything, ARP
 * included; held frames go out from droce_port_tick() once due. */
START_TEST(test_port_tx_delay_attach)
{
	struct droce_fault_conf c = { .delay = 1, .delay_us = 2000, .seed = 1 };
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	uint8_t dgid[16];

	ports_open(&c);
	gid_of_ipv4(IP_B, dgid);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), -EAGAIN);
	pump_all(pb);
	ck_assert_uint_eq(stats(pb).rx_arp, 0);
	rte_delay_us_sleep(2500);
	droce_port_tick(pa, 0, rte_get_tsc_cycles());
	pump_all(pb);
	ck_assert_uint_eq(stats(pb).rx_arp, 1);
	pump_all(pa);
	ck_assert_int_eq(droce_port_route(pa, 0, 1, dgid, &a), 0);

	m = frame(droce_port_mempool(pa), &a, 1, 64);
	ck_assert_uint_eq(droce_port_tx(pa, 0, &m, 1), 1);
	ck_assert_uint_eq(pump_all(pb), 0);
	rte_delay_us_sleep(2500);
	droce_port_tick(pa, 0, rte_get_tsc_cycles());
	ck_assert_uint_eq(pump_all(pb), 1);
	ck_assert_uint_eq(stats(pa).tx_fault.delayed, 2);
	ports_close();
}
END_TEST

/* RX faults act on what the ethdev gives, before classification:
 * corrupted frames are counted as bad ICRC (or malformed) and dropped. */
START_TEST(test_port_rx_corrupt)
{
	struct droce_fault_conf c = { .corrupt = 1, .seed = 6 };
	enum { N = 64 };
	struct rte_mbuf *pkts[BURST];
	struct droce_port_stats sb;
	struct droce_l3_addr a;
	unsigned sent, i, got = 0;

	ports_open(NULL);
	ck_assert_int_eq(route_a_to_b(&a), 0);
	ck_assert_int_eq(droce_port_fault_set(pb, true, &c), 0);
	for (sent = 0; sent < N; sent += BURST) {
		for (i = 0; i < BURST; i++)
			pkts[i] = frame(droce_port_mempool(pa), &a, sent + i, 256);
		ck_assert_uint_eq(droce_port_tx(pa, 0, pkts, BURST), BURST);
		got += pump_all(pb);
	}
	sb = stats(pb);
	ck_assert_uint_eq(got, 0);
	ck_assert_uint_eq(sb.rx_fault.corrupted, N);
	ck_assert_uint_eq(sb.rx_frames, 1 + N);
	ck_assert_uint_gt(sb.rx_bad_icrc, N / 2);
	ck_assert_uint_eq(sb.rx_bad_icrc + sb.rx_malformed + sb.rx_not_roce + sb.rx_bad_opcode +
			  sb.rx_not_ours, N);
	ck_assert_int_eq(droce_port_fault_set(pb, true, NULL), 0);
	ports_close();
}
END_TEST

/* ---- main ---- */

/* The EAL may keep pointers into its arguments until rte_eal_cleanup(). */
static char *eal_args;

static void
eal_init(void)
{
	const char *env = getenv("DROCE_TEST_EAL");
	char *args = strdup(env ? env : "-l 0 --no-huge -m 256 --no-shconf --no-pci --no-telemetry");
	char *argv[32] = { "test_fault" };
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
	mp = rte_pktmbuf_pool_create("fault_mp", 4095, 256,
				     RTE_ALIGN(sizeof(struct droce_pkt), RTE_MBUF_PRIV_ALIGN),
				     RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
	if (mp == NULL) {
		fprintf(stderr, "no mbuf pool\n");
		exit(EXIT_FAILURE);
	}
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
	a = rte_eth_from_rings("fault_ring_a", &ba, 1, &ab, 1, 0);
	b = rte_eth_from_rings("fault_ring_b", &ab, 1, &ba, 1, 0);
	if (a < 0 || b < 0)
		exit(EXIT_FAILURE);
	eth_a = (uint16_t)a;
	eth_b = (uint16_t)b;
}

int
main(void)
{
	Suite *s = suite_create("fault");
	TCase *tc = tcase_create("stage"), *tp = tcase_create("port");
	SRunner *sr;
	int failed;

	eal_init();
	wire_create();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_conf_check);
	tcase_add_test(tc, test_conf_parse);
	tcase_add_test(tc, test_conf_file);
	tcase_add_test(tc, test_segment);
	tcase_add_test(tc, test_same_seed);
	tcase_add_test(tc, test_rates);
	tcase_add_test(tc, test_corrupt);
	tcase_add_test(tc, test_corrupt_shared);
	tcase_add_test(tc, test_reorder);
	tcase_add_test(tc, test_delay);
	tcase_add_test(tc, test_duplicate);
	tcase_add_test(tc, test_room);
	tcase_add_test(tc, test_runtime_set);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tp, 30);
	tcase_add_test(tp, test_port_tx_drop);
	tcase_add_test(tp, test_port_tx_full_ring);
	tcase_add_test(tp, test_port_tx_delay_attach);
	tcase_add_test(tp, test_port_rx_corrupt);
	suite_add_tcase(s, tp);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	free(eal_args);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
