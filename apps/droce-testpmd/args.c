/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsing the console's arguments: numbers, sizes, options and names. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>

#include "testpmd.h"

int
tp_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	/* strtoull takes a sign and blanks; a number here has neither. */
	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

int
tp_arg_u64(const char *s, const char *what, uint64_t max, uint64_t *v)
{
	if (tp_parse_u64(s, max, v) != 0)
		return tp_error(-EINVAL, "%s: '%s' is not a number from 0 to %" PRIu64, what, s,
				max);
	return 0;
}

int
tp_arg_u32(const char *s, const char *what, uint32_t max, uint32_t *v)
{
	uint64_t x;
	int rc = tp_arg_u64(s, what, max, &x);

	if (rc == 0)
		*v = (uint32_t)x;
	return rc;
}

int
tp_arg_size(const char *s, const char *what, uint64_t max, uint64_t *v)
{
	static const struct {
		char suffix;
		unsigned shift;
	} units[] = { { 'K', 10 }, { 'M', 20 }, { 'G', 30 } };
	char num[32];
	size_t len = strlen(s);
	unsigned shift = 0, i;
	uint64_t x;

	if (len == 0 || len >= sizeof(num))
		goto bad;
	strcpy(num, s);
	for (i = 0; i < RTE_DIM(units); i++)
		if (toupper((unsigned char)num[len - 1]) == units[i].suffix) {
			shift = units[i].shift;
			num[len - 1] = '\0';
		}
	if (tp_parse_u64(num, max >> shift, &x) != 0)
		goto bad;
	*v = x << shift;
	return 0;
bad:
	return tp_error(-EINVAL, "%s: '%s' is not a size from 0 to %" PRIu64
			" (a number, K, M or G after it)", what, s, max);
}

int
tp_arg_port(const char *s, unsigned *port)
{
	uint64_t v;

	if (tp_parse_u64(s, UINT32_MAX, &v) != 0 || v >= tp_nb_ports)
		return tp_error(-ENODEV, "'%s' is not a port (0..%u)", s, tp_nb_ports - 1);
	*port = (unsigned)v;
	return 0;
}

int
tp_opts_parse(const struct tp_args *a, unsigned from, const struct tp_opt *opts, unsigned n,
	      const char **val)
{
	unsigned i, k;

	for (k = 0; k < n; k++)
		val[k] = NULL;
	for (i = from; i < a->argc; i++) {
		for (k = 0; k < n && strcmp(a->argv[i], opts[k].name) != 0; k++)
			;
		if (k == n)
			return tp_error(-EINVAL, "unknown option '%s'", a->argv[i]);
		if (val[k] != NULL)
			return tp_error(-EINVAL, "option '%s' given twice", opts[k].name);
		if (!opts[k].has_value) {
			val[k] = "";
			continue;
		}
		if (i + 1 >= a->argc)
			return tp_error(-EINVAL, "option '%s' needs a value", opts[k].name);
		val[k] = a->argv[++i];
	}
	return 0;
}

int
tp_parse_access(const char *s, int *flags)
{
	static const struct {
		const char *name;
		int flag;
	} names[] = {
		{ "lw", IBV_ACCESS_LOCAL_WRITE }, { "rw", IBV_ACCESS_REMOTE_WRITE },
		{ "rr", IBV_ACCESS_REMOTE_READ }, { "ra", IBV_ACCESS_REMOTE_ATOMIC },
	};
	char buf[64], *save = NULL, *tok;
	unsigned i;

	*flags = 0;
	if (strcmp(s, "none") == 0)
		return 0;
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < RTE_DIM(names) && strcmp(tok, names[i].name) != 0; i++)
			;
		if (i == RTE_DIM(names))
			return -EINVAL;
		*flags |= names[i].flag;
	}
	return *flags != 0 ? 0 : -EINVAL;
}

int
tp_parse_state(const char *s, enum ibv_qp_state *st)
{
	static const enum ibv_qp_state all[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR,
	};
	unsigned i;

	for (i = 0; i < RTE_DIM(all); i++)
		if (strcasecmp(s, tp_qp_state_name(all[i])) == 0) {
			*st = all[i];
			return 0;
		}
	return -EINVAL;
}

int
tp_parse_mtu(const char *s, enum ibv_mtu *mtu)
{
	uint64_t v;

	if (tp_parse_u64(s, 4096, &v) != 0 || tp_mtu_from_bytes((unsigned)v) == 0)
		return -EINVAL;
	*mtu = tp_mtu_from_bytes((unsigned)v);
	return 0;
}

int
tp_parse_qp_type(const char *s, enum ibv_qp_type *t)
{
	static const enum ibv_qp_type all[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
	};
	unsigned i;

	for (i = 0; i < RTE_DIM(all); i++)
		if (strcasecmp(s, tp_qp_type_name(all[i])) == 0) {
			*t = all[i];
			return 0;
		}
	return -EINVAL;
}

int
tp_parse_gid(const char *s, union ibv_gid *gid)
{
	struct in_addr in;

	if (inet_pton(AF_INET6, s, gid->raw) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &in) != 1)
		return -EINVAL;
	memset(gid->raw, 0, sizeof(gid->raw));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &in.s_addr, 4);
	return 0;
}

int
tp_errno_by_name(const char *name)
{
	const char *n;
	int e;

	/* Linux's errno values end well below 200. */
	for (e = 1; e < 200; e++)
		if ((n = strerrorname_np(e)) != NULL && strcmp(n, name) == 0)
			return e;
	return 0;
}
