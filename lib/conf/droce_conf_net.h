/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Parsing of a port's network keys (ipv6, gateway, route, vlan, pcp, dscp;
 * see docs/config.md), for droce_conf.c.
 */
#ifndef DROCE_CONF_NET_H
#define DROCE_CONF_NET_H

#include <stddef.h>

#include "droce_port.h"

/** The [portN] keys droce_conf_net_key() takes, for messages. */
#define DROCE_CONF_NET_KEYS "ipv6, gateway, route, vlan, pcp, dscp"

/**
 * Apply [portN] @p key = @p val to @p n. List keys (ipv6, gateway, route)
 * add to what is there.
 * @return 0; -EINVAL with a message in @p err; -ENOENT when @p key is not
 * one of DROCE_CONF_NET_KEYS.
 */
int droce_conf_net_key(const char *key, const char *val, struct droce_net_conf *n,
		       char *err, size_t errlen);

#endif /* DROCE_CONF_NET_H */
