/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_mbuf_runs() and droce_mbuf_copy(): every range of a frame, cut
 * into segments anywhere, reads back the bytes it holds; a range past
 * the end is refused without reading it. droce_mbuf_free_bulk(): every
 * mbuf goes back to its pool exactly once, whatever the burst holds.
 */
#include <string.h>

#include "wire_test.h"

#define LEN 600

static uint8_t data[LEN];

/* Cuts: one segment, every 100 bytes, at 1 and 599, uneven. */
static const uint32_t cut_sets[][5] = {
	{ 0 }, { 100, 200, 300, 400, 500 }, { 1, 599 }, { 7, 64, 65, 333, 590 },
};
static const unsigned cut_counts[] = { 0, 5, 2, 5 };

struct runs {
	uint32_t off;      /* where the range starts in the frame */
	uint32_t next;     /* where the next run must start */
	unsigned calls;
};

static int
check_run(void *arg, uint32_t pos, const void *p, uint32_t n)
{
	struct runs *r = arg;

	/* The run's bytes are the frame's, at the offset it says. */
	ck_assert_int_eq(memcmp(p, data + r->off + pos, n), 0);
	ck_assert_uint_eq(pos, r->next);
	r->next += n;
	r->calls++;
	return 0;
}

static int
stop_run(void *arg, uint32_t pos, const void *p, uint32_t n)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(pos);
	RTE_SET_USED(p);
	RTE_SET_USED(n);
	return 42;
}

START_TEST(copy_any_range_of_any_chain)
{
	uint8_t out[LEN];

	for (unsigned i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 13 + 1);
	for (unsigned c = 0; c < RTE_DIM(cut_sets); c++) {
		struct rte_mbuf *m = test_mbuf_split(data, LEN, cut_sets[c], cut_counts[c]);

		for (uint32_t off = 0; off <= LEN; off += 37) {
			for (uint32_t len = 0; off + len <= LEN; len += 53) {
				struct runs r = { off, 0, 0 };

				memset(out, 0, sizeof(out));
				ck_assert_int_eq(droce_mbuf_copy(m, off, len, out), 0);
				ck_assert_int_eq(memcmp(out, data + off, len), 0);
				ck_assert_int_eq(droce_mbuf_runs(m, off, len, check_run, &r), 0);
				ck_assert_uint_eq(r.next, len);
				ck_assert_uint_le(r.calls, cut_counts[c] + 1);
			}
		}
		/* Past the end: refused, nothing read. */
		ck_assert_int_eq(droce_mbuf_copy(m, LEN - 10, 11, out), -EINVAL);
		ck_assert_int_eq(droce_mbuf_copy(m, UINT32_MAX, 2, out), -EINVAL);
		/* A callback that stops the walk has the last word. */
		ck_assert_int_eq(droce_mbuf_runs(m, 0, LEN, stop_run, NULL), 42);
		rte_pktmbuf_free(m);
	}
}
END_TEST

/* Mbufs of @p mp in use. */
static unsigned
in_use(struct rte_mempool *mp)
{
	return rte_mempool_in_use_count(mp);
}

START_TEST(free_bulk_any_burst)
{
	struct rte_mempool *other = rte_pktmbuf_pool_create("free_bulk_other", 63, 0, 0,
							    RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	unsigned base = in_use(test_pool);
	struct rte_mbuf *m[8], *shared, *direct;
	static const uint32_t cuts[] = { 10 };

	ck_assert_ptr_nonnull(other);
	/* Plain: all back at once. */
	for (unsigned i = 0; i < RTE_DIM(m); i++)
		m[i] = rte_pktmbuf_alloc(test_pool);
	ck_assert_uint_eq(in_use(test_pool), base + RTE_DIM(m));
	droce_mbuf_free_bulk(m, RTE_DIM(m));
	ck_assert_uint_eq(in_use(test_pool), base);
	droce_mbuf_free_bulk(m, 0);
	ck_assert_uint_eq(in_use(test_pool), base);

	/* Each kind that is not plain, behind a plain one: let go of as
	 * rte_pktmbuf_free() would. A chain: every segment back (direct
	 * segments, then external ones). */
	m[0] = rte_pktmbuf_alloc(test_pool);
	m[1] = rte_pktmbuf_alloc(test_pool);
	ck_assert_int_eq(rte_pktmbuf_chain(m[1], rte_pktmbuf_alloc(test_pool)), 0);
	droce_mbuf_free_bulk(m, 2);
	ck_assert_uint_eq(in_use(test_pool), base);
	m[0] = rte_pktmbuf_alloc(test_pool);
	m[1] = test_mbuf_split(data, LEN, cuts, 1);
	droce_mbuf_free_bulk(m, 2);
	ck_assert_uint_eq(in_use(test_pool), base);
	/* Another pool's: back to that pool. */
	m[0] = rte_pktmbuf_alloc(test_pool);
	m[1] = rte_pktmbuf_alloc(other);
	droce_mbuf_free_bulk(m, 2);
	ck_assert_uint_eq(in_use(test_pool), base);
	ck_assert_uint_eq(in_use(other), 0);
	/* Referenced elsewhere too: one reference less, still out. */
	m[0] = rte_pktmbuf_alloc(test_pool);
	shared = m[1] = rte_pktmbuf_alloc(test_pool);
	rte_mbuf_refcnt_update(shared, 1);
	droce_mbuf_free_bulk(m, 2);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(shared), 1);
	ck_assert_uint_eq(in_use(test_pool), base + 1);
	rte_pktmbuf_free(shared);
	/* Indirect: detached, its direct mbuf keeps its own reference. */
	m[0] = rte_pktmbuf_alloc(test_pool);
	direct = rte_pktmbuf_alloc(test_pool);
	m[1] = rte_pktmbuf_alloc(test_pool);
	rte_pktmbuf_attach(m[1], direct);
	droce_mbuf_free_bulk(m, 2);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(direct), 1);
	ck_assert_uint_eq(in_use(test_pool), base + 1);
	rte_pktmbuf_free(direct);
	ck_assert_uint_eq(in_use(test_pool), base);
	rte_mempool_free(other);
}
END_TEST

Suite *
suite_mbuf(void)
{
	Suite *s = suite_create("mbuf");
	TCase *tc = tcase_create("chains");

	tcase_add_test(tc, copy_any_range_of_any_chain);
	tcase_add_test(tc, free_bulk_any_burst);
	suite_add_tcase(s, tc);
	return s;
}
