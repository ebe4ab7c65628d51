/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command line after the EAL's "--": perftest's options with
 * perftest's meanings and defaults, the test chosen with --test/--mode
 * instead of by binary name (ib_write_bw is --test write --mode bw), and
 * the port's own settings (--ethdev, --ip, --mac).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_common.h>

#include "droce_conf.h"
#include "perf.h"

static const char *const test_args[] = { "write", "send", "read", "atomic" };
static const char *const test_names[] = { "RDMA_Write", "Send", "RDMA_Read", "Atomic" };
static const char *const conn_names[] = { "RC", "UC", "UD", "XRC", "DC" };
static const char *const mode_args[] = { "bw", "lat" };
/* -A, in the order of perf_opts.atomic_cas */
static const char *const atomic_names[] = { "FETCH_AND_ADD", "CMP_AND_SWAP" };

const char *
perf_test_name(enum perf_test t)
{
	return test_names[t];
}

const char *
perf_test_arg(enum perf_test t)
{
	return test_args[t];
}

const char *
perf_conn_name(enum perf_conn c)
{
	return conn_names[c];
}

void
perf_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage:\n"
"  %s <EAL options> -- [options]            start a server and wait for a client\n"
"  %s <EAL options> -- [options] <server>   connect to the server at <server>\n"
"  %s --demo [--demo-seconds N]             run a server and a client over memif\n"
"\n"
"Test:\n"
"      --test=<write|send|read|atomic>  the operation (default write)\n"
"      --mode=<bw|lat>       bandwidth or latency (default bw)\n"
"      --raw-l2              the same frames as plain Ethernet on the bare port\n"
"      --touch               with --raw-l2: an ideal RoCE endpoint (CRC32 of each\n"
"                            payload from the source buffer, one copy in; checked\n"
"                            and copied into a destination buffer on receive)\n"
"\n"
"perftest's options:\n"
"  -a, --all                 run sizes from 2 till 2^23\n"
"  -A, --atomic_type=<type>  CMP_AND_SWAP or FETCH_AND_ADD (default FETCH_AND_ADD)\n"
"  -b, --bidirectional       measure bidirectional bandwidth\n"
"  -c, --connection=<type>   RC/UC/UD/XRC/DC (default RC; droce runs RC only)\n"
"  -D, --duration=<s>        run for <s> seconds instead of -n iterations\n"
"  -f, --margin=<s>          -D: seconds left out at each end (default 2, at most D/4)\n"
"  -H, --report-histogram    latency: print every sample, sorted\n"
"  -I, --inline_size=<size>  largest message sent inline\n"
"  -l, --post_list=<n>       post lists of <n> work requests\n"
"  -m, --mtu=<mtu>           IB MTU 256..4096 (default the port's)\n"
"  -n, --iters=<n>           exchanges (default 5000 for write bw, else 1000)\n"
"  -N, --noPeak              skip the peak bandwidth search\n"
"  -o, --outs=<n>            outstanding READs/atomics (default the device's max)\n"
"  -p, --port=<port>         TCP port of the out-of-band exchange (default %d)\n"
"  -q, --qp=<n>              QPs (bw tests, default 1)\n"
"  -Q, --cq-mod=<n>          one completion every <n> work requests (default 100)\n"
"  -r, --rx-depth=<n>        receive queue depth (send tests, default 512)\n"
"  -s, --size=<size>         message size (default 65536 bw, 2 lat)\n"
"  -t, --tx-depth=<n>        send queue depth (default 128 bw, 1 lat)\n"
"  -u, --qp-timeout=<t>      ACK timeout, 4.096 us * 2^t (default %d)\n"
"  -U, --report-unsorted     latency: print every sample in the order measured\n"
"  -x, --gid-index=<index>   source GID index (default 1, the IPv4-mapped GID)\n"
"      --report_gbits        report Gb/sec instead of MB/sec\n"
"      --json                print the results as JSON (stdout), nothing else\n"
"      --no-td               QPs and CQs without a thread domain: their posts and\n"
"                            polls take a lock (as with several posting threads)\n"
"\n"
"The port:\n"
"      --ethdev=<name|id>    the ethdev to test (default the only one)\n"
"      --ip=<a.b.c.d/len>    its IPv4 address (default 10.0.0.1/24 server, 10.0.0.2/24 client)\n"
"      --mac=<xx:..:xx>      its MAC (default the ethdev's)\n"
"      --capture=<file>      write every RoCE frame to a pcapng file\n"
"      --engines=<n>         droce engines on the port, one queue pair each: 1, 2, 4, 8\n"
"                            or 16 (default 1; both sides the same); the cycles are\n"
"                            then also shown per engine of this side\n"
"      --cc=<key>=<value>    a congestion-control key of the port as droce.conf takes\n"
"                            it (ecn, cnp_interval_us, dcqcn, bottleneck; see\n"
"                            docs/congestion.md), repeatable: e.g.\n"
"                            --cc=bottleneck=rate_mbps=1000,queue=524288,mark=32768\n"
"  -h, --help                this text\n",
		prog, prog, prog, PERF_DEF_TCP_PORT, PERF_DEF_QP_TIMEOUT);
}

enum {
	OPT_TEST = 256,
	OPT_MODE,
	OPT_RAW,
	OPT_TOUCH,
	OPT_GBITS,
	OPT_JSON,
	OPT_NO_TD,
	OPT_ETHDEV,
	OPT_IP,
	OPT_MAC,
	OPT_CAPTURE,
	OPT_ENGINES,
	OPT_CC,
};

static const struct option long_opts[] = {
	{ "test", required_argument, NULL, OPT_TEST },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "raw-l2", no_argument, NULL, OPT_RAW },
	{ "touch", no_argument, NULL, OPT_TOUCH },
	{ "all", no_argument, NULL, 'a' },
	{ "atomic_type", required_argument, NULL, 'A' },
	{ "bidirectional", no_argument, NULL, 'b' },
	{ "connection", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, 'D' },
	{ "margin", required_argument, NULL, 'f' },
	{ "inline_size", required_argument, NULL, 'I' },
	{ "post_list", required_argument, NULL, 'l' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "iters", required_argument, NULL, 'n' },
	{ "noPeak", no_argument, NULL, 'N' },
	{ "outs", required_argument, NULL, 'o' },
	{ "port", required_argument, NULL, 'p' },
	{ "qp", required_argument, NULL, 'q' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "rx-depth", required_argument, NULL, 'r' },
	{ "size", required_argument, NULL, 's' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "qp-timeout", required_argument, NULL, 'u' },
	{ "gid-index", required_argument, NULL, 'x' },
	{ "report-histogram", no_argument, NULL, 'H' },
	{ "report-unsorted", no_argument, NULL, 'U' },
	{ "report_gbits", no_argument, NULL, OPT_GBITS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "no-td", no_argument, NULL, OPT_NO_TD },
	{ "ethdev", required_argument, NULL, OPT_ETHDEV },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "mac", required_argument, NULL, OPT_MAC },
	{ "capture", required_argument, NULL, OPT_CAPTURE },
	{ "engines", required_argument, NULL, OPT_ENGINES },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* An integer in [lo, hi], or an error that names the option. */
static int
parse_u64(const char *name, const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || x < lo || x > hi) {
		fprintf(stderr, PERF_NAME ": %s: '%s' is not a number in %" PRIu64 "..%" PRIu64 "\n",
			name, s, lo, hi);
		return -1;
	}
	*v = x;
	return 0;
}

static int
parse_uint(const char *name, const char *s, unsigned lo, unsigned hi, unsigned *v)
{
	uint64_t x;

	if (parse_u64(name, s, lo, hi, &x) != 0)
		return -1;
	*v = (unsigned)x;
	return 0;
}

static int
parse_seconds(const char *name, const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(*v > 0) || *v > 86400) {
		fprintf(stderr, PERF_NAME ": %s: '%s' is not a number of seconds\n", name, s);
		return -1;
	}
	return 0;
}

static int
parse_enum(const char *name, const char *s, const char *const *names, unsigned n, int *v)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcasecmp(s, names[i]) == 0) {
			*v = (int)i;
			return 0;
		}
	fprintf(stderr, PERF_NAME ": %s: unknown value '%s'\n", name, s);
	return -1;
}

static int
parse_ipv4(const char *s, struct perf_opts *o)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t len = slash != NULL ? (size_t)(slash - s) : strlen(s);
	struct in_addr in;
	unsigned prefix = 24;

	if (len >= sizeof(addr))
		goto bad;
	memcpy(addr, s, len);
	addr[len] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		goto bad;
	if (slash != NULL && parse_uint("--ip prefix", slash + 1, 1, 32, &prefix) != 0)
		return -1;
	o->ipv4 = ntohl(in.s_addr);
	o->ipv4_prefix = (uint8_t)prefix;
	return 0;
bad:
	fprintf(stderr, PERF_NAME ": --ip: '%s' is not an IPv4 address (a.b.c.d/len)\n", s);
	return -1;
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned b[6];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		goto bad;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			goto bad;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
bad:
	fprintf(stderr, PERF_NAME ": --mac: '%s' is not a MAC address\n", s);
	return -1;
}

int
perf_cc_apply(const struct perf_opts *o, struct droce_port_conf *conf)
{
	char key[32], err[160];
	unsigned i;

	droce_cc_conf_default(&conf->cc);
	for (i = 0; i < o->nb_cc; i++) {
		const char *eq = strchr(o->cc[i], '=');
		size_t n = eq != NULL ? (size_t)(eq - o->cc[i]) : 0;

		if (n == 0 || n >= sizeof(key)) {
			fprintf(stderr, PERF_NAME ": --cc: '%s' is not <key>=<value>\n", o->cc[i]);
			return -1;
		}
		memcpy(key, o->cc[i], n);
		key[n] = '\0';
		if (droce_conf_cc_set(conf, key, eq + 1, err, sizeof(err)) != 0) {
			fprintf(stderr, PERF_NAME ": --cc: %s\n", err);
			return -1;
		}
	}
	return 0;
}

/* Another --cc, checked now on a configuration of its own, so a mistake
 * shows before the EAL and the peer are waited for. */
static int
parse_cc(const char *arg, struct perf_opts *o)
{
	struct droce_port_conf scratch;

	if (o->nb_cc == PERF_MAX_CC) {
		fprintf(stderr, PERF_NAME ": --cc: at most %d of them\n", PERF_MAX_CC);
		return -1;
	}
	o->cc[o->nb_cc++] = arg;
	memset(&scratch, 0, sizeof(scratch));
	return perf_cc_apply(o, &scratch);
}

static bool
is_ib_mtu(unsigned m)
{
	return m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096;
}

/* What was given explicitly, so defaults can depend on the test. */
struct given {
	bool size, iters, tx_depth, rx_depth, margin, ip, qps;
};

static int
parse_one(int c, const char *arg, struct perf_opts *o, struct given *g)
{
	uint64_t v;
	int e;

	switch (c) {
	case OPT_TEST:
		if (parse_enum("--test", arg, test_args, 4, &e) != 0)
			return -1;
		o->test = (enum perf_test)e;
		return 0;
	case OPT_MODE:
		if (parse_enum("--mode", arg, mode_args, 2, &e) != 0)
			return -1;
		o->mode = e == 0 ? PERF_BW : PERF_LAT;
		return 0;
	case OPT_RAW:
		o->raw = true;
		return 0;
	case OPT_TOUCH:
		o->touch = true;
		return 0;
	case OPT_NO_TD:
		o->no_td = true;
		return 0;
	case 'a':
		o->all_sizes = true;
		return 0;
	case 'A':
		if (parse_enum("-A", arg, atomic_names, 2, &e) != 0)
			return -1;
		o->atomic_cas = e == 1;
		return 0;
	case 'b':
		o->bidir = true;
		return 0;
	case 'c':
		if (parse_enum("-c", arg, conn_names, 5, &e) != 0)
			return -1;
		o->conn = (enum perf_conn)e;
		return 0;
	case 'D':
		return parse_seconds("-D", arg, &o->duration);
	case 'f':
		g->margin = true;
		if (strcmp(arg, "0") == 0) {
			o->margin = 0;
			return 0;
		}
		return parse_seconds("-f", arg, &o->margin);
	case 'I':
		if (parse_u64("-I", arg, 0, 912, &v) != 0)
			return -1;
		o->inline_size = (int)v;
		return 0;
	case 'l':
		return parse_uint("-l", arg, 1, 2048, &o->post_list);
	case 'm':
		if (parse_uint("-m", arg, 256, 4096, &o->mtu) != 0)
			return -1;
		if (!is_ib_mtu(o->mtu)) {
			fprintf(stderr, PERF_NAME ": -m: %u is not an IB MTU (256, 512, 1024, 2048, 4096)\n",
				o->mtu);
			return -1;
		}
		return 0;
	case 'n':
		g->iters = true;
		return parse_u64("-n", arg, PERF_MIN_ITERS, PERF_MAX_ITERS, &o->iters);
	case 'N':
		o->no_peak = true;
		return 0;
	case 'o':
		if (parse_u64("-o", arg, 1, 65535, &v) != 0)
			return -1;
		o->outs = (int)v;
		return 0;
	case 'p':
		if (parse_u64("-p", arg, 1, 65535, &v) != 0)
			return -1;
		o->tcp_port = (uint16_t)v;
		return 0;
	case 'q':
		g->qps = true;
		return parse_uint("-q", arg, 1, PERF_MAX_QPS, &o->qps);
	case 'Q':
		return parse_uint("-Q", arg, 1, 1024, &o->cq_mod);
	case 'r':
		g->rx_depth = true;
		return parse_uint("-r", arg, 1, 16384, &o->rx_depth);
	case 's':
		g->size = true;
		return parse_u64("-s", arg, 1, PERF_MAX_SIZE, &o->size);
	case 't':
		g->tx_depth = true;
		return parse_uint("-t", arg, 1, 15000, &o->tx_depth);
	case 'H':
		o->histogram = true;
		return 0;
	case 'U':
		o->unsorted = true;
		return 0;
	case 'u':
		return parse_uint("-u", arg, 1, 31, &o->qp_timeout);
	case 'x':
		if (parse_u64("-x", arg, 0, 15, &v) != 0)
			return -1;
		o->gid_index = (int)v;
		return 0;
	case OPT_GBITS:
		o->gbits = true;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_ETHDEV:
		o->ethdev = arg;
		return 0;
	case OPT_IP:
		g->ip = true;
		return parse_ipv4(arg, o);
	case OPT_MAC:
		o->mac_set = true;
		return parse_mac(arg, o->mac);
	case OPT_CAPTURE:
		o->capture = arg;
		return 0;
	case OPT_ENGINES:
		if (parse_uint("--engines", arg, 1, PERF_MAX_ENGINES, &o->engines) != 0)
			return -1;
		if (!rte_is_power_of_2(o->engines)) {
			fprintf(stderr, PERF_NAME ": --engines: %u is not a power of two\n", o->engines);
			return -1;
		}
		return 0;
	case OPT_CC:
		return parse_cc(arg, o);
	default:
		return -1;
	}
}

/* perftest's defaults that depend on the test, then the combinations it
 * refuses. */
static int
finish(struct perf_opts *o, const struct given *g)
{
	bool lat = o->mode == PERF_LAT;

	if (o->conn != PERF_RC) {
		fprintf(stderr, PERF_NAME ": -c %s: droce runs RC QPs only for now "
			"(UC, UD, XRC and DC are not supported yet)\n", perf_conn_name(o->conn));
		return -1;
	}
	if (o->touch && !o->raw) {
		fprintf(stderr, PERF_NAME ": --touch is a raw-L2 baseline: give --raw-l2 too\n");
		return -1;
	}
	if (o->test == PERF_ATOMIC) {
		if ((g->size && o->size != 8) || o->all_sizes) {
			fprintf(stderr, PERF_NAME ": atomic tests move 8 bytes: no -s or -a\n");
			return -1;
		}
		o->size = 8;
	} else if (!g->size) {
		o->size = lat ? PERF_DEF_SIZE_LAT : PERF_DEF_SIZE_BW;
	}
	if (!g->iters)
		o->iters = (o->test == PERF_WRITE && !lat) ? PERF_DEF_ITERS_WRITE_BW : PERF_DEF_ITERS;
	if (o->raw && o->engines != 1) {
		fprintf(stderr, PERF_NAME ": --engines is for droce; --raw-l2 uses one queue\n");
		return -1;
	}
	if (lat && (o->bidir || (g->qps && o->qps != 1))) {
		fprintf(stderr, PERF_NAME ": latency tests run one QP one way: no -b or -q\n");
		return -1;
	}
	if (!g->tx_depth)
		o->tx_depth = lat ? PERF_DEF_TX_LAT : PERF_DEF_TX_BW;
	if (o->duration == 0 && o->tx_depth > o->iters)
		o->tx_depth = (unsigned)o->iters;
	if (o->cq_mod > o->tx_depth)
		o->cq_mod = o->tx_depth;
	if (o->post_list > o->tx_depth) {
		fprintf(stderr, PERF_NAME ": -l %u is more than the tx depth (%u)\n",
			o->post_list, o->tx_depth);
		return -1;
	}
	if (o->duration == 0 && !g->rx_depth && o->rx_depth > o->iters)
		o->rx_depth = (unsigned)o->iters;
	if (o->duration > 0) {
		if (!g->margin && 2 * o->margin >= o->duration)
			o->margin = o->duration / 4;
		if (2 * o->margin >= o->duration) {
			fprintf(stderr, PERF_NAME ": -f %g: the margins leave nothing of -D %g\n",
				o->margin, o->duration);
			return -1;
		}
	}
	if (o->iters > PERF_PEAK_MAX_ITERS || o->duration > 0)
		o->no_peak = true;
	if (!g->ip) {
		/* The demo's addresses: one subnet, server .1, client .2. */
		o->ipv4 = o->server ? 0x0a000001 : 0x0a000002;
		o->ipv4_prefix = 24;
	}
	return 0;
}

int
perf_options_parse(int argc, char **argv, struct perf_opts *o)
{
	struct given g = { 0 };
	int c;

	memset(o, 0, sizeof(*o));
	o->test = PERF_WRITE;
	o->mode = PERF_BW;
	o->conn = PERF_RC;
	o->tcp_port = PERF_DEF_TCP_PORT;
	o->qps = 1;
	o->engines = 1;
	o->rx_depth = PERF_DEF_RX_SEND;
	o->cq_mod = PERF_DEF_CQ_MOD;
	o->post_list = 1;
	o->inline_size = -1;
	o->margin = PERF_DEF_MARGIN;
	o->gid_index = 1;
	o->qp_timeout = PERF_DEF_QP_TIMEOUT;

	optind = 1;
	while ((c = getopt_long(argc, argv, "aA:bc:D:f:hHI:l:m:n:No:p:q:Q:r:s:t:u:Ux:",
				long_opts, NULL)) != -1) {
		if (c == 'h') {
			perf_usage(stdout, PERF_NAME);
			return 1;
		}
		if (c == '?' || parse_one(c, optarg, o, &g) != 0) {
			fprintf(stderr, PERF_NAME ": see --help\n");
			return -1;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, PERF_NAME ": one server address at most ('%s' is extra)\n",
			argv[optind + 1]);
		return -1;
	}
	o->server = optind == argc;
	o->server_addr = o->server ? NULL : argv[optind];
	return finish(o, &g);
}

unsigned
perf_sizes(const struct perf_opts *o, uint64_t sizes[24])
{
	unsigned n = 0, i;

	if (!o->all_sizes) {
		sizes[0] = o->size;
		return 1;
	}
	for (i = 1; i <= 23; i++)
		sizes[n++] = UINT64_C(1) << i;
	return n;
}

bool
perf_side_reports(const struct perf_opts *o)
{
	bool one_sided = o->test == PERF_READ || o->test == PERF_ATOMIC;

	if (!o->server)
		return true;
	if (o->mode == PERF_LAT)
		/* ping-pongs measure on both sides; READ/atomic servers only answer */
		return !one_sided || o->raw;
	/* bandwidth: receivers of SEND and of raw frames measure too */
	return o->bidir || o->test == PERF_SEND || o->raw;
}

unsigned
perf_rtt_factor(const struct perf_opts *o)
{
	return (o->test == PERF_READ || o->test == PERF_ATOMIC) ? 1 : 2;
}
