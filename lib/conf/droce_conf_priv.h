/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of lib/conf share and nobody else needs.
 */
#ifndef DROCE_CONF_PRIV_H
#define DROCE_CONF_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "droce_port.h"

/** A decimal number in [min, max]; no sign, no spaces, no other base. */
bool droce_conf_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/** The [portN] keys of congestion control (droce_conf_cc.c). */
#define DROCE_CONF_CC_KEYS "ecn, cnp_interval_us, dcqcn, bottleneck"

#endif /* DROCE_CONF_PRIV_H */
