/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion-control parts of a port's configuration: their defaults
 * and checks (the keys that set them are in lib/conf and
 * docs/congestion.md).
 */
#include <errno.h>
#include <string.h>

#include "droce_port.h"

void
droce_dcqcn_conf_default(struct droce_dcqcn_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->line_rate_mbps = 0;          /* the link's speed */
	c->min_rate_mbps = 1;           /* ConnectX rpg_min_rate */
	c->rai_mbps = 5;                /* ConnectX rpg_ai_rate */
	c->rhai_mbps = 50;              /* ConnectX rpg_hai_rate */
	c->g_shift = 8;                 /* g = 1/256, the paper's */
	c->rate_timer_us = 55;          /* the paper's T */
	c->alpha_timer_us = 55;         /* the paper's K */
	c->byte_counter = 150 * 1024;   /* the paper's B, scaled to one QP */
	c->fast_recovery = 5;           /* the paper's F */
	c->burst = 64 * 1024;           /* an engine iteration's frames at 100 Gb/s */
}

int
droce_dcqcn_conf_check(const struct droce_dcqcn_conf *c)
{
	if (c->min_rate_mbps == 0 || c->rai_mbps == 0 || c->rhai_mbps == 0 ||
	    c->g_shift < 1 || c->g_shift > 16 || c->rate_timer_us == 0 ||
	    c->alpha_timer_us == 0 || c->byte_counter == 0 || c->burst < 64 ||
	    c->burst > (1u << 30) ||
	    (c->line_rate_mbps != 0 && c->min_rate_mbps > c->line_rate_mbps))
		return -EINVAL;
	return 0;
}

void
droce_cc_conf_default(struct droce_cc_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->ecn = DROCE_ECN_ECT0;
	c->cnp_interval_us = 50;
	c->dcqcn = true;
	droce_dcqcn_conf_default(&c->dcqcn_conf);
}

int
droce_cc_conf_check(const struct droce_cc_conf *c)
{
	if (c->ecn > DROCE_ECN_ECT0)
		return -EINVAL;
	return c->dcqcn ? droce_dcqcn_conf_check(&c->dcqcn_conf) : 0;
}

int
droce_bottleneck_conf_check(const struct droce_bottleneck_conf *c)
{
	if (c->rate_mbps == 0)
		return 0;
	if (c->queue_bytes == 0 || c->queue_bytes > (1u << 30) || c->mark_bytes > c->queue_bytes)
		return -EINVAL;
	return 0;
}
