/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The [portN] keys of a port's network settings beyond IPv4: ipv6,
 * gateway, route, vlan, pcp, dscp (docs/config.md). Lists are
 * comma-separated; addresses are IPv4 or IPv6, kept in the IPv6 form
 * droce's GIDs use (IPv4-mapped for IPv4).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "droce_conf_net.h"

#define NET_V4MAPPED_BITS 96
#define NET_LIST_MAX 256

typedef int (*net_item_fn)(const char *item, struct droce_net_conf *n,
			   char *err, size_t errlen);

static int
net_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	*out = strtoul(s, &end, 10);
	return *end == '\0' && *out <= max ? 0 : -EINVAL;
}

/* One address, IPv4 or IPv6, into its 16-byte form. */
static int
net_addr(const char *s, uint8_t out[16], bool *v4)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &in, 4);
		*v4 = true;
		return 0;
	}
	*v4 = false;
	return inet_pton(AF_INET6, s, out) == 1 ? 0 : -EINVAL;
}

/* "address/length", the host bits kept (an interface address) or not. */
static int
net_prefix(const char *s, struct droce_prefix *pfx, bool *v4)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	unsigned long len;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (net_addr(addr, pfx->addr, v4) != 0 ||
	    net_uint(slash + 1, *v4 ? 32 : 128, &len) != 0)
		return -EINVAL;
	pfx->len = (uint8_t)(len + (*v4 ? NET_V4MAPPED_BITS : 0));
	return 0;
}

static int
net_route_add(struct droce_net_conf *n, const struct droce_prefix *dst,
	      const uint8_t via[16], char *err, size_t errlen)
{
	if (n->nb_routes == DROCE_NET_MAX_ROUTES) {
		snprintf(err, errlen, "more than %d routes (gateways included)",
			 DROCE_NET_MAX_ROUTES);
		return -EINVAL;
	}
	n->routes[n->nb_routes].dst = *dst;
	memcpy(n->routes[n->nb_routes].via, via, 16);
	n->nb_routes++;
	return 0;
}

static int
net_ipv6_item(const char *item, struct droce_net_conf *n, char *err, size_t errlen)
{
	struct droce_prefix pfx;
	bool v4;

	if (net_prefix(item, &pfx, &v4) != 0 || v4 || pfx.len == 0) {
		snprintf(err, errlen, "'%s' is not an IPv6 address with a prefix length "
			 "(x:x::x/1..128)", item);
		return -EINVAL;
	}
	if (pfx.addr[0] == 0xff || (pfx.addr[0] == 0xfe && (pfx.addr[1] & 0xc0) == 0x80)) {
		snprintf(err, errlen, "%s is multicast or link-local (the link-local "
			 "address comes from the MAC)", item);
		return -EINVAL;
	}
	if (n->nb_ipv6 == DROCE_NET_MAX_IPV6) {
		snprintf(err, errlen, "more than %d addresses", DROCE_NET_MAX_IPV6);
		return -EINVAL;
	}
	n->ipv6[n->nb_ipv6++] = pfx;
	return 0;
}

static int
net_gateway_item(const char *item, struct droce_net_conf *n, char *err, size_t errlen)
{
	struct droce_prefix any = { .len = 0 };
	uint8_t via[16];
	unsigned i;
	bool v4;

	if (net_addr(item, via, &v4) != 0) {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", item);
		return -EINVAL;
	}
	if (v4) {
		any.addr[10] = any.addr[11] = 0xff;
		any.len = NET_V4MAPPED_BITS;
	}
	for (i = 0; i < n->nb_routes; i++)
		if (n->routes[i].dst.len == any.len &&
		    memcmp(n->routes[i].dst.addr, any.addr, 16) == 0) {
			snprintf(err, errlen, "a second %s default gateway", v4 ? "IPv4" : "IPv6");
			return -EINVAL;
		}
	return net_route_add(n, &any, via, err, errlen);
}

static int
net_route_item(const char *item, struct droce_net_conf *n, char *err, size_t errlen)
{
	char dst[INET6_ADDRSTRLEN + 4], via_s[INET6_ADDRSTRLEN], extra;
	struct droce_prefix pfx;
	uint8_t via[16];
	bool v4_dst, v4_via;

	if (sscanf(item, "%49s via %45s %c", dst, via_s, &extra) != 2 ||
	    net_prefix(dst, &pfx, &v4_dst) != 0 || net_addr(via_s, via, &v4_via) != 0) {
		snprintf(err, errlen, "'%s' is not a route (PREFIX/LEN via ADDRESS)", item);
		return -EINVAL;
	}
	if (v4_dst != v4_via) {
		snprintf(err, errlen, "'%s': the next hop is not of the prefix's family", item);
		return -EINVAL;
	}
	return net_route_add(n, &pfx, via, err, errlen);
}

/* Apply @p fn to each comma-separated item of @p val, spaces trimmed. */
static int
net_list(const char *val, net_item_fn fn, struct droce_net_conf *n, char *err,
	 size_t errlen)
{
	char buf[NET_LIST_MAX], *save = NULL, *item;
	int ret;

	if (strlen(val) >= sizeof(buf)) {
		snprintf(err, errlen, "longer than %d characters", NET_LIST_MAX - 1);
		return -EINVAL;
	}
	strcpy(buf, val);
	for (item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		char *end = item + strlen(item);

		while (*item == ' ' || *item == '\t')
			item++;
		while (end > item && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		ret = fn(item, n, err, errlen);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static int
net_vlan(const char *val, struct droce_net_conf *n, char *err, size_t errlen)
{
	unsigned long v;

	if (net_uint(val, 4094, &v) != 0) {
		snprintf(err, errlen, "'%s' is not a VLAN ID (1..4094, 0: untagged)", val);
		return -EINVAL;
	}
	n->vlan = (uint16_t)v;
	return 0;
}

static int
net_pcp(const char *val, struct droce_net_conf *n, char *err, size_t errlen)
{
	unsigned long v;

	if (strcmp(val, "sl") == 0) {
		n->pcp_mode = DROCE_PCP_SL;
	} else if (strcmp(val, "dscp") == 0) {
		n->pcp_mode = DROCE_PCP_DSCP;
	} else if (net_uint(val, 7, &v) == 0) {
		n->pcp_mode = DROCE_PCP_FIXED;
		n->pcp = (uint8_t)v;
	} else {
		snprintf(err, errlen, "'%s' is not a priority (0..7, sl, dscp)", val);
		return -EINVAL;
	}
	return 0;
}

static int
net_dscp(const char *val, struct droce_net_conf *n, char *err, size_t errlen)
{
	unsigned long v;

	if (strcmp(val, "tclass") == 0) {
		n->dscp_fixed = false;
	} else if (net_uint(val, 63, &v) == 0) {
		n->dscp_fixed = true;
		n->dscp = (uint8_t)v;
	} else {
		snprintf(err, errlen, "'%s' is not a DSCP (0..63, tclass)", val);
		return -EINVAL;
	}
	return 0;
}

int
droce_conf_net_key(const char *key, const char *val, struct droce_net_conf *n,
		   char *err, size_t errlen)
{
	if (strcmp(key, "ipv6") == 0)
		return net_list(val, net_ipv6_item, n, err, errlen);
	if (strcmp(key, "gateway") == 0)
		return net_list(val, net_gateway_item, n, err, errlen);
	if (strcmp(key, "route") == 0)
		return net_list(val, net_route_item, n, err, errlen);
	if (strcmp(key, "vlan") == 0)
		return net_vlan(val, n, err, errlen);
	if (strcmp(key, "pcp") == 0)
		return net_pcp(val, n, err, errlen);
	if (strcmp(key, "dscp") == 0)
		return net_dscp(val, n, err, errlen);
	return -ENOENT;
}
