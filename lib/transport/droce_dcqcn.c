/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point and pacer (see droce_dcqcn.h).
 */
#include <string.h>

#include <rte_common.h>

#include "droce_dcqcn.h"

/* A timer that fell this many periods behind (the engine slept, or the
 * QP had nothing to send) catches up in one step: by then alpha has
 * decayed to nothing and the rate has climbed back to where it goes. */
#define DCQCN_CATCH_UP_MAX 4096u

/* Megabits per second to bytes per second. */
#define MBPS_TO_BPS(m) ((uint64_t)(m) * 1000000u / 8u)

void
droce_dcqcn_params_init(struct droce_dcqcn_params *p, const struct droce_dcqcn_conf *c,
			uint32_t link_mbps, uint64_t tsc_hz)
{
	uint32_t line = c->line_rate_mbps != 0 ? c->line_rate_mbps :
			link_mbps != 0 ? link_mbps : 10000;

	p->line_rate = MBPS_TO_BPS(line);
	p->min_rate = MBPS_TO_BPS(c->min_rate_mbps < line ? c->min_rate_mbps : line);
	p->rai = MBPS_TO_BPS(c->rai_mbps);
	p->rhai = MBPS_TO_BPS(c->rhai_mbps);
	p->rate_timer_tsc = tsc_hz * c->rate_timer_us / 1000000u;
	p->alpha_timer_tsc = tsc_hz * c->alpha_timer_us / 1000000u;
	if (p->rate_timer_tsc == 0)
		p->rate_timer_tsc = 1;
	if (p->alpha_timer_tsc == 0)
		p->alpha_timer_tsc = 1;
	p->byte_counter = c->byte_counter;
	p->burst = c->burst;
	p->tsc_hz = tsc_hz;
	p->g_shift = c->g_shift;
	p->fast_recovery = c->fast_recovery;
}

/* R_C changed: the pacer fills at the new rate. Tokens stay as they are. */
static void
pacer_rate_set(struct droce_dcqcn *d, const struct droce_dcqcn_params *p)
{
	/* bytes/s << 32 / ticks/s: doubles, since rc << 32 does not fit in
	 * 64 bits at 100 Gb/s, and this runs only when the rate changes. */
	d->per_tsc = (uint64_t)((double)d->rc * 4294967296.0 / (double)p->tsc_hz);
	if (d->per_tsc == 0)
		d->per_tsc = 1;
	d->refill_cap = d->tokens_max / d->per_tsc + 1;
}

static void
rate_clamp(struct droce_dcqcn *d, const struct droce_dcqcn_params *p)
{
	if (d->rt > p->line_rate)
		d->rt = p->line_rate;
	if (d->rc > p->line_rate)
		d->rc = p->line_rate;
	if (d->rc < p->min_rate)
		d->rc = p->min_rate;
}

/* One stage of increase, after the timer or the byte counter counted it. */
static void
rate_increase(struct droce_dcqcn *d, const struct droce_dcqcn_params *p)
{
	uint32_t hi = d->t_stage > d->bc_stage ? d->t_stage : d->bc_stage;
	uint32_t lo = d->t_stage < d->bc_stage ? d->t_stage : d->bc_stage;

	if (d->rc == p->line_rate && d->rt == p->line_rate)
		return;
	if (hi <= p->fast_recovery) {
		d->stats.fast_recoveries++;
	} else if (lo > p->fast_recovery) {
		d->rt += (uint64_t)(lo - p->fast_recovery) * p->rhai;
		d->stats.hyper++;
	} else {
		d->rt += p->rai;
		d->stats.additive++;
	}
	if (d->rt > p->line_rate)
		d->rt = p->line_rate;
	/* Rounded up, so R_C reaches R_T instead of stopping a byte short. */
	d->rc = (d->rt + d->rc + 1) / 2;
	rate_clamp(d, p);
	pacer_rate_set(d, p);
}

void
droce_dcqcn_init(struct droce_dcqcn *d, const struct droce_dcqcn_params *p, uint64_t now)
{
	memset(d, 0, sizeof(*d));
	d->rc = d->rt = d->rc_min = p->line_rate;
	d->alpha = DROCE_DCQCN_ALPHA_ONE;
	d->rate_timer_at = now + p->rate_timer_tsc;
	d->alpha_timer_at = now + p->alpha_timer_tsc;
	d->tokens_max = p->burst << 32;
	d->tokens = (int64_t)d->tokens_max;
	d->refilled_at = now;
	pacer_rate_set(d, p);
}

void
droce_dcqcn_on_cnp(struct droce_dcqcn *d, const struct droce_dcqcn_params *p, uint64_t now)
{
	d->stats.cnps++;
	d->stats.decreases++;
	d->rt = d->rc;
	/* R_C (1 - alpha/2), alpha in 1/65536: rc < 2^41 up to 10 Tb/s, so
	 * the product stays within 64 bits. */
	d->rc -= (d->rc * d->alpha) >> 17;
	d->alpha = d->alpha - (d->alpha >> p->g_shift) + (DROCE_DCQCN_ALPHA_ONE >> p->g_shift);
	d->cnp_in_period = true;
	d->t_stage = 0;
	d->bc_stage = 0;
	d->bytes = 0;
	d->rate_timer_at = now + p->rate_timer_tsc;
	d->alpha_timer_at = now + p->alpha_timer_tsc;
	rate_clamp(d, p);
	if (d->rc < d->rc_min)
		d->rc_min = d->rc;
	pacer_rate_set(d, p);
}

/* How many periods of @p period ending at or before @p now have passed
 * since @p *at, at most DCQCN_CATCH_UP_MAX; moves @p *at past them. */
static uint32_t
periods_due(uint64_t *at, uint64_t period, uint64_t now)
{
	uint64_t n;

	if (now < *at)
		return 0;
	n = (now - *at) / period + 1;
	*at += n * period;
	return n > DCQCN_CATCH_UP_MAX ? DCQCN_CATCH_UP_MAX : (uint32_t)n;
}

void
droce_dcqcn_tick(struct droce_dcqcn *d, const struct droce_dcqcn_params *p, uint64_t now)
{
	uint32_t n;

	n = periods_due(&d->alpha_timer_at, p->alpha_timer_tsc, now);
	if (n != 0) {
		/* The period that saw a CNP already raised alpha then. */
		if (d->cnp_in_period) {
			d->cnp_in_period = false;
			n--;
		}
		while (n-- != 0 && d->alpha != 0)
			d->alpha -= (d->alpha >> p->g_shift) != 0 ? d->alpha >> p->g_shift : 1;
	}
	/* Rate stages that fell behind count F at most (one when F is 0):
	 * fast recovery back to the target, the rate before the last cut.
	 * Increases beyond it probe the path, and a QP that did not send
	 * (its engine lost the CPU, or it had nothing) probed nothing: all
	 * of them at once would send every such QP back at line rate into
	 * the queue that cut it. */
	n = RTE_MIN(periods_due(&d->rate_timer_at, p->rate_timer_tsc, now),
		    RTE_MAX((uint32_t)p->fast_recovery, 1u));
	while (n-- != 0 && (d->rc != p->line_rate || d->rt != p->line_rate)) {
		d->t_stage++;
		rate_increase(d, p);
	}
}

bool
droce_dcqcn_may_send(struct droce_dcqcn *d, const struct droce_dcqcn_params *p,
		     uint32_t bytes, uint64_t now)
{
	uint64_t dt = now - d->refilled_at;

	/* Refill: at most a full bucket's worth of ticks, so the product
	 * cannot overflow whatever the idle time. */
	if (dt > d->refill_cap)
		dt = d->refill_cap;
	d->refilled_at = now;
	d->tokens += (int64_t)(dt * d->per_tsc);
	if (d->tokens > (int64_t)d->tokens_max)
		d->tokens = (int64_t)d->tokens_max;
	if (d->tokens < 0) {
		d->stats.paced++;
		return false;
	}
	d->tokens -= (int64_t)((uint64_t)bytes << 32);
	d->bytes += bytes;
	if (d->bytes >= p->byte_counter) {
		d->bytes -= p->byte_counter;
		d->bc_stage++;
		rate_increase(d, p);
	}
	return true;
}
