/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point and pacer against the algorithm as published:
 * each rule on a clock the test moves (a 1 GHz TSC, so one tick is a
 * nanosecond), with the expected figures worked out by hand here.
 */
#include <errno.h>
#include <stdlib.h>

#include <check.h>

#include "droce_dcqcn.h"

#define HZ 1000000000ull
#define US 1000ull
#define BPS(mbps) ((uint64_t)(mbps) * 1000000u / 8u)

static struct droce_dcqcn_conf conf;
static struct droce_dcqcn_params par;
static struct droce_dcqcn d;

/* 10 Gb/s, the default timers and stages, a 4 KiB bucket. */
static void
setup(void)
{
	droce_dcqcn_conf_default(&conf);
	conf.line_rate_mbps = 10000;
	conf.burst = 4096;
	ck_assert_int_eq(droce_dcqcn_conf_check(&conf), 0);
	droce_dcqcn_params_init(&par, &conf, 0, HZ);
	droce_dcqcn_init(&d, &par, 0);
}

START_TEST(starts_at_line_rate)
{
	ck_assert_uint_eq(d.rc, BPS(10000));
	ck_assert_uint_eq(d.rt, BPS(10000));
	ck_assert_uint_eq(d.alpha, DROCE_DCQCN_ALPHA_ONE);
	ck_assert_uint_eq(par.rate_timer_tsc, 55 * US);
	/* No rate of its own: the link's, or 10 Gb/s when it has none. */
	conf.line_rate_mbps = 0;
	droce_dcqcn_params_init(&par, &conf, 25000, HZ);
	ck_assert_uint_eq(par.line_rate, BPS(25000));
	droce_dcqcn_params_init(&par, &conf, 0, HZ);
	ck_assert_uint_eq(par.line_rate, BPS(10000));
}
END_TEST

START_TEST(cnp_cuts_by_half_alpha)
{
	uint64_t rc = d.rc;

	/* alpha 1: the rate halves, the target keeps the old rate, and
	 * alpha = (1 - g) * 1 + g stays 1. */
	droce_dcqcn_on_cnp(&d, &par, 10 * US);
	ck_assert_uint_eq(d.rt, rc);
	ck_assert_uint_eq(d.rc, rc / 2);
	ck_assert_uint_eq(d.alpha, DROCE_DCQCN_ALPHA_ONE);
	ck_assert_uint_eq(d.stats.cnps, 1);
	/* alpha 1/2: a cut by a quarter, alpha = 1/2 * 255/256 + 1/256. */
	d.alpha = DROCE_DCQCN_ALPHA_ONE / 2;
	rc = d.rc;
	droce_dcqcn_on_cnp(&d, &par, 20 * US);
	ck_assert_uint_eq(d.rc, rc - rc / 4);
	ck_assert_uint_eq(d.alpha, 32768 - 128 + 256);
}
END_TEST

START_TEST(alpha_decays_without_cnp)
{
	droce_dcqcn_on_cnp(&d, &par, 0);
	/* The period of the CNP raises nothing more; each later one without
	 * a CNP takes 1/256 of alpha. */
	droce_dcqcn_tick(&d, &par, 55 * US);
	ck_assert_uint_eq(d.alpha, DROCE_DCQCN_ALPHA_ONE);
	droce_dcqcn_tick(&d, &par, 110 * US);
	ck_assert_uint_eq(d.alpha, 65536 - 256);
	droce_dcqcn_tick(&d, &par, 165 * US);
	ck_assert_uint_eq(d.alpha, 65280 - 255);
	/* A long idle: alpha goes to (near) nothing in bounded work. */
	droce_dcqcn_tick(&d, &par, 10 * 1000 * 1000 * US);
	ck_assert_uint_lt(d.alpha, 64);
}
END_TEST

START_TEST(fast_recovery_then_additive_then_hyper)
{
	uint64_t rt, rc;
	unsigned i;

	/* Two CNPs: the target half the line rate, so increases have room. */
	droce_dcqcn_on_cnp(&d, &par, 0);
	droce_dcqcn_on_cnp(&d, &par, 0);
	rt = d.rt;
	rc = d.rc;
	ck_assert_uint_eq(rt, BPS(10000) / 2);
	/* F timer stages of fast recovery: halfway to the target each. */
	for (i = 1; i <= 5; i++) {
		droce_dcqcn_tick(&d, &par, i * 55 * US);
		rc = (rt + rc + 1) / 2;
		ck_assert_uint_eq(d.rt, rt);
		ck_assert_uint_eq(d.rc, rc);
	}
	ck_assert_uint_eq(d.stats.fast_recoveries, 5);
	/* Stage F+1 by the timer alone: additive, the target up by R_AI. */
	droce_dcqcn_tick(&d, &par, 6 * 55 * US);
	rt += BPS(5);
	rc = (rt + rc + 1) / 2;
	ck_assert_uint_eq(d.rt, rt);
	ck_assert_uint_eq(d.rc, rc);
	ck_assert_uint_eq(d.stats.additive, 1);
	/* Both counters past F: hyper-additive, by (min - F) * R_HAI. Push
	 * the byte counter to F + 2 stages with frames the pacer lets go. */
	d.bc_stage = 5;
	d.t_stage = 6;
	d.tokens = (int64_t)d.tokens_max;
	ck_assert(droce_dcqcn_may_send(&d, &par, conf.byte_counter, 6 * 55 * US));
	rt += BPS(50);
	rc = (rt + rc + 1) / 2;
	ck_assert_uint_eq(d.bc_stage, 6);
	ck_assert_uint_eq(d.rt, rt);
	ck_assert_uint_eq(d.rc, rc);
	ck_assert_uint_eq(d.stats.hyper, 1);
}
END_TEST

START_TEST(rates_stay_within_bounds)
{
	uint64_t t = 0;
	unsigned i;

	for (i = 0; i < 100; i++)
		droce_dcqcn_on_cnp(&d, &par, t += US);
	ck_assert_uint_eq(d.rc, BPS(1));
	/* A second of quiet brings it back to line rate, never above. */
	for (i = 0; i < 20000; i++) {
		t += 55 * US;
		droce_dcqcn_tick(&d, &par, t);
	}
	ck_assert_uint_eq(d.rc, BPS(10000));
	ck_assert_uint_eq(d.rt, BPS(10000));
}
END_TEST

/* Frames of 1000 bytes sent whenever the pacer allows, polled every
 * microsecond for @p ms milliseconds: the bytes sent. */
static uint64_t
pace(uint64_t from, unsigned ms)
{
	uint64_t sent = 0, t;

	for (t = from; t < from + ms * 1000 * US; t += US)
		while (droce_dcqcn_may_send(&d, &par, 1000, t))
			sent += 1000;
	return sent;
}

START_TEST(pacer_holds_the_rate)
{
	uint64_t sent;

	/* At 10 Gb/s a 1 GHz clock gives 1.25 bytes a tick: 2 ms carry
	 * 2.5 MB, plus the bucket and the one frame that may overdraw it. */
	sent = pace(0, 2);
	ck_assert_uint_ge(sent, 2500000);
	ck_assert_uint_le(sent, 2500000 + 4096 + 1000);
	/* Cut to 5 Gb/s (and no increase for the test's span). */
	droce_dcqcn_on_cnp(&d, &par, 2000 * US);
	d.rate_timer_at = UINT64_MAX;
	par.byte_counter = UINT64_MAX;
	sent = pace(2000 * US, 1);
	ck_assert_uint_ge(sent, 625000 - 2000);
	ck_assert_uint_le(sent, 625000 + 4096 + 1000);
	ck_assert_uint_gt(d.stats.paced, 0);
}
END_TEST

START_TEST(late_rate_timer_recovers_only)
{
	uint64_t rt, rc0;

	/* After two cuts, a second without a tick (the engine lost its CPU,
	 * or the QP sent nothing): F stages of fast recovery towards the
	 * target, no additive or hyper-additive increase, and the rate
	 * counts and the increases from there on as if the stages had just
	 * begun. */
	droce_dcqcn_on_cnp(&d, &par, 0);
	droce_dcqcn_on_cnp(&d, &par, 0);
	rt = d.rt;
	rc0 = d.rc;
	droce_dcqcn_tick(&d, &par, 1000 * 1000 * US);
	ck_assert_uint_eq(d.t_stage, 5);
	ck_assert_uint_eq(d.stats.fast_recoveries, 5);
	ck_assert_uint_eq(d.stats.additive + d.stats.hyper, 0);
	ck_assert_uint_eq(d.rt, rt);
	ck_assert_uint_gt(d.rc, rc0);
	ck_assert_uint_le(d.rc, rt);
	ck_assert_uint_eq(d.rc_min, rc0);
	ck_assert_uint_eq(droce_dcqcn_increases(&d), 5);
	/* The next period on time: additive increase, one stage. */
	droce_dcqcn_tick(&d, &par, 1000 * 1000 * US + 55 * US);
	ck_assert_uint_eq(d.stats.additive, 1);
	ck_assert_uint_eq(d.rt, rt + BPS(5));
}
END_TEST

START_TEST(pacer_survives_long_idle)
{
	/* An hour without sending fills the bucket, no more, and nothing
	 * overflows. */
	ck_assert(droce_dcqcn_may_send(&d, &par, 5000, 0));
	ck_assert(!droce_dcqcn_may_send(&d, &par, 4096, 1));
	ck_assert(droce_dcqcn_may_send(&d, &par, 1000, 3600ull * HZ));
	ck_assert_int_le(d.tokens, (int64_t)d.tokens_max);
	ck_assert_int_ge(d.tokens, 0);
}
END_TEST

START_TEST(bad_conf_refused)
{
	struct droce_dcqcn_conf c;

	droce_dcqcn_conf_default(&c);
	ck_assert_int_eq(droce_dcqcn_conf_check(&c), 0);
	c.g_shift = 0;
	ck_assert_int_eq(droce_dcqcn_conf_check(&c), -EINVAL);
	droce_dcqcn_conf_default(&c);
	c.rate_timer_us = 0;
	ck_assert_int_eq(droce_dcqcn_conf_check(&c), -EINVAL);
	droce_dcqcn_conf_default(&c);
	c.line_rate_mbps = 100;
	c.min_rate_mbps = 200;
	ck_assert_int_eq(droce_dcqcn_conf_check(&c), -EINVAL);
	droce_dcqcn_conf_default(&c);
	c.burst = 0;
	ck_assert_int_eq(droce_dcqcn_conf_check(&c), -EINVAL);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("dcqcn");
	TCase *tc = tcase_create("reaction point");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, starts_at_line_rate);
	tcase_add_test(tc, cnp_cuts_by_half_alpha);
	tcase_add_test(tc, alpha_decays_without_cnp);
	tcase_add_test(tc, fast_recovery_then_additive_then_hyper);
	tcase_add_test(tc, rates_stay_within_bounds);
	tcase_add_test(tc, pacer_holds_the_rate);
	tcase_add_test(tc, late_rate_timer_recovers_only);
	tcase_add_test(tc, pacer_survives_long_idle);
	tcase_add_test(tc, bad_conf_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
