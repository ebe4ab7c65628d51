/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The [portN] keys of congestion control: ecn, cnp_interval_us, dcqcn
 * and bottleneck (docs/congestion.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_kvargs.h>

#include "droce_conf.h"
#include "droce_conf_priv.h"

/* One number of a key=value list: where it goes and what it may be. */
struct cc_field {
	const char *name;
	size_t off;
	uint8_t size;            /* 1 or 4 bytes */
	unsigned long min, max;
};

#define DCQCN_FIELD(n, lo, hi) \
	{ #n, offsetof(struct droce_dcqcn_conf, n), \
	  sizeof(((struct droce_dcqcn_conf *)NULL)->n), lo, hi }
static const struct cc_field dcqcn_fields[] = {
	DCQCN_FIELD(line_rate_mbps, 0, 10000000),
	DCQCN_FIELD(min_rate_mbps, 1, 10000000),
	DCQCN_FIELD(rai_mbps, 1, 10000000),
	DCQCN_FIELD(rhai_mbps, 1, 10000000),
	DCQCN_FIELD(g_shift, 1, 16),
	DCQCN_FIELD(rate_timer_us, 1, 1000000),
	DCQCN_FIELD(alpha_timer_us, 1, 1000000),
	DCQCN_FIELD(byte_counter, 1, 1u << 30),
	DCQCN_FIELD(fast_recovery, 0, 255),
	DCQCN_FIELD(burst, 64, 1u << 30),
};

#define BN_FIELD(n, f, lo, hi) \
	{ n, offsetof(struct droce_bottleneck_conf, f), 4, lo, hi }
static const struct cc_field bottleneck_fields[] = {
	BN_FIELD("rate_mbps", rate_mbps, 1, 10000000),
	BN_FIELD("queue", queue_bytes, 1, 1u << 30),
	BN_FIELD("mark", mark_bytes, 0, 1u << 30),
};

static int
cc_err(char *err, size_t errlen, const char *key, const char *msg, const char *val)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s '%s'", key, msg, val);
	return -EINVAL;
}

/* A key=value list of @p f's numbers into @p base (keys left out keep
 * their value). */
static int
cc_list(void *base, const struct cc_field *f, unsigned nf, const char *key, const char *val,
	char *err, size_t errlen)
{
	struct rte_kvargs *kv = rte_kvargs_parse(val, NULL);
	unsigned i, j;
	int ret = 0;

	if (kv == NULL)
		return cc_err(err, errlen, key, "not a key=value list:", val);
	for (i = 0; i < kv->count && ret == 0; i++) {
		const char *k = kv->pairs[i].key, *v = kv->pairs[i].value;
		unsigned long n;

		for (j = 0; j < nf && strcmp(f[j].name, k) != 0; j++)
			;
		if (j == nf)
			ret = cc_err(err, errlen, key, "unknown parameter", k);
		else if (v == NULL || !droce_conf_uint(v, f[j].min, f[j].max, &n))
			ret = cc_err(err, errlen, key, "out of range or not a number:", k);
		else if (f[j].size == 1)
			*((uint8_t *)base + f[j].off) = (uint8_t)n;
		else
			*(uint32_t *)(void *)((uint8_t *)base + f[j].off) = (uint32_t)n;
	}
	rte_kvargs_free(kv);
	return ret;
}

int
droce_conf_cc_set(struct droce_port_conf *pc, const char *key, const char *val,
		  char *err, size_t errlen)
{
	struct droce_cc_conf *cc = &pc->cc;
	unsigned long n;

	if (strcmp(key, "ecn") == 0) {
		if (strcmp(val, "ect0") == 0)
			cc->ecn = DROCE_ECN_ECT0;
		else if (strcmp(val, "ect1") == 0)
			cc->ecn = DROCE_ECN_ECT1;
		else if (strcmp(val, "off") == 0)
			cc->ecn = DROCE_ECN_NOT_ECT;
		else
			return cc_err(err, errlen, key, "expected ect0, ect1 or off, not", val);
		return 0;
	}
	if (strcmp(key, "cnp_interval_us") == 0) {
		if (!droce_conf_uint(val, 0, 1000000, &n))
			return cc_err(err, errlen, key, "not a number of microseconds (0..1000000):",
				      val);
		cc->cnp_interval_us = (uint32_t)n;
		return 0;
	}
	if (strcmp(key, "dcqcn") == 0) {
		if (strcmp(val, "off") == 0) {
			cc->dcqcn = false;
			return 0;
		}
		cc->dcqcn = true;
		if (strcmp(val, "on") != 0 &&
		    cc_list(&cc->dcqcn_conf, dcqcn_fields, RTE_DIM(dcqcn_fields), key, val,
			    err, errlen) != 0)
			return -EINVAL;
		if (droce_dcqcn_conf_check(&cc->dcqcn_conf) != 0)
			return cc_err(err, errlen, key, "inconsistent (min_rate_mbps above line rate?):",
				      val);
		return 0;
	}
	if (strcmp(key, "bottleneck") == 0) {
		memset(&pc->bottleneck, 0, sizeof(pc->bottleneck));
		if (strcmp(val, "off") == 0)
			return 0;
		if (cc_list(&pc->bottleneck, bottleneck_fields, RTE_DIM(bottleneck_fields), key,
			    val, err, errlen) != 0)
			return -EINVAL;
		if (pc->bottleneck.rate_mbps == 0 || droce_bottleneck_conf_check(&pc->bottleneck) != 0)
			return cc_err(err, errlen, key,
				      "needs rate_mbps and queue, with mark at most queue:", val);
		return 0;
	}
	return cc_err(err, errlen, key, "not a key of", DROCE_CONF_CC_KEYS);
}
