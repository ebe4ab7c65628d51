/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_mbuf_runs() and droce_mbuf_copy(): every range of a frame, cut
 * into segments anywhere, reads back the bytes it holds; a range past
 * the end is refused without reading it.
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

Suite *
suite_mbuf(void)
{
	Suite *s = suite_create("mbuf");
	TCase *tc = tcase_create("chains");

	tcase_add_test(tc, copy_any_range_of_any_chain);
	suite_add_tcase(s, tc);
	return s;
}
