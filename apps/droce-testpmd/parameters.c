/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-testpmd's own options, after the EAL's and "--". */
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "testpmd.h"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " TP_NAME " <EAL options> -- [options]\n"
		"  --cmdline-file FILE  run the commands in FILE (echoing each), then exit;\n"
		"                       the exit status is 1 if any command failed\n"
		"  --ip A.B.C.D/N,...   IPv4 address of each port, in ethdev order\n"
		"                       (default 10.0.0.<port+1>/24)\n"
		"  --mac M,...          MAC address of each port (default: the ethdev's)\n"
		"  --mtu N              largest IB path MTU of the ports: 256, 512, 1024,\n"
		"                       2048 or 4096 (default 1024)\n"
		"  --help               this text\n"
		"Every probed ethdev becomes a droce port, e.g. the loopback port:\n"
		"  " TP_NAME " -l 0 --no-huge -m 512 --no-pci --vdev=net_ring0\n");
}

/* "a.b.c.d/len" into host-order @p ip and @p prefix. */
static int
parse_ip(const char *s, uint32_t *ip, uint8_t *prefix)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	struct in_addr in;
	uint64_t len;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1 || tp_parse_u64(slash + 1, 32, &len) != 0 ||
	    len == 0)
		return -1;
	*ip = ntohl(in.s_addr);
	*prefix = (uint8_t)len;
	return 0;
}

/* Split @p list at commas; each item goes to @p one. @return items or -1. */
static int
parse_list(const char *opt, const char *list, int (*one)(const char *, struct tp_params *,
							  unsigned), struct tp_params *p)
{
	char buf[1024], *save = NULL, *item;
	unsigned n = 0;

	if (strlen(list) >= sizeof(buf))
		goto bad;
	strcpy(buf, list);
	for (item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		if (n >= TP_MAX_PORTS || one(item, p, n) != 0)
			goto bad;
		n++;
	}
	if (n > 0)
		return (int)n;
bad:
	fprintf(stderr, TP_NAME ": %s: bad value '%s'\n", opt, list);
	return -1;
}

static int
one_ip(const char *s, struct tp_params *p, unsigned i)
{
	return parse_ip(s, &p->ip[i], &p->prefix[i]);
}

static int
one_mac(const char *s, struct tp_params *p, unsigned i)
{
	struct rte_ether_addr ea;

	if (rte_ether_unformat_addr(s, &ea) != 0 || !rte_is_unicast_ether_addr(&ea))
		return -1;
	memcpy(p->mac[i], ea.addr_bytes, sizeof(p->mac[i]));
	return 0;
}

int
tp_params_parse(int argc, char **argv, struct tp_params *p)
{
	enum { OPT_FILE = 256, OPT_IP, OPT_MAC, OPT_MTU, OPT_HELP };
	static const struct option longopts[] = {
		{ "cmdline-file", required_argument, NULL, OPT_FILE },
		{ "ip", required_argument, NULL, OPT_IP },
		{ "mac", required_argument, NULL, OPT_MAC },
		{ "mtu", required_argument, NULL, OPT_MTU },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	enum ibv_mtu mtu;
	int c, n;

	memset(p, 0, sizeof(*p));
	p->mtu = 1024;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FILE:
			p->cmdline_file = optarg;
			break;
		case OPT_IP:
			if ((n = parse_list("--ip", optarg, one_ip, p)) < 0)
				return -1;
			p->nb_ip = (unsigned)n;
			break;
		case OPT_MAC:
			if ((n = parse_list("--mac", optarg, one_mac, p)) < 0)
				return -1;
			p->nb_mac = (unsigned)n;
			break;
		case OPT_MTU:
			if (tp_parse_mtu(optarg, &mtu) != 0) {
				fprintf(stderr, TP_NAME ": --mtu: %s is not an IB MTU (256, 512, "
					"1024, 2048, 4096)\n", optarg);
				return -1;
			}
			p->mtu = (uint16_t)tp_mtu_bytes(mtu);
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, TP_NAME ": unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	return 0;
}
