/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/conf unit tests: good files, every error message with its line,
 * the defaults and the environment overrides. The parser needs no EAL
 * (rte_cfgfile only allocates with malloc), so none is started here:
 * these tests also show that it works before rte_eal_init().
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <rte_log.h>

#include "droce_conf.h"

#define PORT0 "[port0]\ndevice = d\n"

static char tmpdir[] = "/tmp/droce-test-conf-XXXXXX";
static char path[PATH_MAX];
static char err[512];
static struct droce_conf conf;

/* Write @p text to a file named @p name in the test directory; the path
 * is left in the global @ref path. */
static const char *
put(const char *name, const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* Load @p text and expect success. */
static void
load_ok(const char *text)
{
	int ret = droce_conf_load(put("ok.conf", text), &conf, err, sizeof(err));

	ck_assert_msg(ret == 0, "load failed (%d): %s", ret, err);
	ck_assert_str_eq(err, "");
}

/* Expect the last error to be the test file's path followed by @p suffix. */
static void
assert_err(const char *suffix)
{
	char want[PATH_MAX + 512];

	snprintf(want, sizeof(want), "%s%s", path, suffix);
	ck_assert_str_eq(err, want);
}

static bool
has_arg(const struct droce_conf *c, const char *arg)
{
	int i;

	for (i = 1; i < c->eal_argc; i++)
		if (strcmp(c->eal_argv[i], arg) == 0)
			return true;
	return false;
}

static void
teardown(void)
{
	droce_conf_free(&conf);
	unsetenv("DROCE_CONF");
	unsetenv("DROCE_CAPTURE");
	unsetenv("DROCE_LOG");
}

START_TEST(full_file)
{
	struct droce_conf_port *p0 = &conf.ports[0], *p1 = &conf.ports[1];

	load_ok("[eal]\n"
		"args = -l 1 --vdev=net_memif0,role=server\n"
		"[port0]\n"
		"device = net_memif0\r\n"
		"ipv4=10.0.0.1/24\n"
		"mac = 02:00:00:00:00:01\n"
		"mtu = 4096\n"
		"rxd = 512\n"
		"txd = 1024\n"
		"mbufs = 8191\n"
		"capture = /tmp/a.pcapng\n"
		"link = up\n"
		"link_wait_ms = 5000\n"
		"[port1]\n"
		"device = net_tap0\n"
		"[engine]\n"
		"lcore = 3\n"
		"idle_sleep_us = 0\n"
		"[log]\n"
		"level = debug\n");
	ck_assert_int_eq(conf.eal_argc, 4);
	ck_assert_str_eq(conf.eal_argv[3], "--vdev=net_memif0,role=server");
	ck_assert_uint_eq(conf.nb_ports, 2);
	ck_assert_str_eq(p0->device, "net_memif0");
	ck_assert_uint_eq(p0->port.ipv4, RTE_IPV4(10, 0, 0, 1));
	ck_assert_uint_eq(p0->port.ipv4_prefix, 24);
	ck_assert(p0->port.mac_set);
	ck_assert_uint_eq(p0->port.mac.addr_bytes[0], 0x02);
	ck_assert_uint_eq(p0->port.mac.addr_bytes[5], 0x01);
	ck_assert_uint_eq(p0->port.mtu, 4096);
	ck_assert_uint_eq(p0->port.nb_rxd, 512);
	ck_assert_uint_eq(p0->port.nb_txd, 1024);
	ck_assert_uint_eq(p0->port.nb_mbufs, 8191);
	ck_assert_str_eq(p0->capture, "/tmp/a.pcapng");
	ck_assert(p0->port.link_up);
	ck_assert_uint_eq(p0->port.link_wait_ms, 5000);
	ck_assert_ptr_eq(p0->port.capture, p0->capture);
	ck_assert_str_eq(p1->device, "net_tap0");
	ck_assert_uint_eq(p1->port.ipv4, 0);
	ck_assert(!p1->port.mac_set);
	ck_assert_uint_eq(p1->port.mtu, 1024);
	ck_assert_uint_eq(p1->port.nb_rxd, 0);
	ck_assert_uint_eq(p1->port.nb_mbufs, 0);
	ck_assert_str_eq(p1->capture, "");
	ck_assert(!p1->port.link_up);
	ck_assert_uint_eq(p1->port.link_wait_ms, 0);
	ck_assert_ptr_null(p1->port.capture);
	ck_assert_int_eq(conf.engine_lcore, 3);
	ck_assert_uint_eq(conf.idle_sleep_us, 0);
	ck_assert_uint_eq(conf.log_level, RTE_LOG_DEBUG);
}
END_TEST

START_TEST(comments_and_layout)
{
	/* Inline comments, blank and comment-only lines, spaces around
	 * names, CRLF endings and a last line without a newline. */
	load_ok("\n# a comment\n   # indented comment\n"
		"  [ port0 ]  # heading comment\r\n"
		"\tdevice\t=\tnet_ring0   # value comment\r\n"
		"mtu=2048");
	ck_assert_uint_eq(conf.nb_ports, 1);
	ck_assert_str_eq(conf.ports[0].device, "net_ring0");
	ck_assert_uint_eq(conf.ports[0].port.mtu, 2048);
}
END_TEST

START_TEST(faults)
{
	/* The fault lists are parsed by droce_conf_fault_parse(); here only
	 * that they reach the right port path. */
	load_ok("[port0]\ndevice = d\nfault_rx = drop=0.5,seed=7\n");
	ck_assert(conf.ports[0].port.fault_rx.drop == 0.5);
	ck_assert_uint_eq(conf.ports[0].port.fault_rx.seed, 7);
	ck_assert(conf.ports[0].port.fault_tx.drop == 0);
}
END_TEST

START_TEST(net_keys)
{
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t v4_any[16] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t v4_net[16] = { [10] = 0xff, [11] = 0xff, 10, 9 };
	static const uint8_t v4_gw[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 254 };
	const struct droce_net_conf *n = &conf.ports[0].port.net;

	load_ok(PORT0 "ipv6 = 2001:db8::1/64 , fd00::7/48\n"
		"gateway = 10.0.0.254, 2001:db8::fe\n"
		"route = 10.9.0.0/16 via 10.0.0.254\n"
		"vlan = 100\npcp = dscp\ndscp = 26\n");
	ck_assert_uint_eq(n->nb_ipv6, 2);
	ck_assert_mem_eq(n->ipv6[0].addr, v6, 16);
	ck_assert_uint_eq(n->ipv6[0].len, 64);
	ck_assert_uint_eq(n->ipv6[1].len, 48);
	ck_assert_uint_eq(n->nb_routes, 3);
	/* IPv4 in IPv6 form: 0.0.0.0/0 is ::ffff:0:0/96, 10.9.0.0/16 is /112. */
	ck_assert_mem_eq(n->routes[0].dst.addr, v4_any, 16);
	ck_assert_uint_eq(n->routes[0].dst.len, 96);
	ck_assert_mem_eq(n->routes[0].via, v4_gw, 16);
	ck_assert_uint_eq(n->routes[1].dst.len, 0);
	ck_assert_mem_eq(n->routes[2].dst.addr, v4_net, 16);
	ck_assert_uint_eq(n->routes[2].dst.len, 112);
	ck_assert_uint_eq(n->vlan, 100);
	ck_assert_int_eq(n->pcp_mode, DROCE_PCP_DSCP);
	ck_assert(n->dscp_fixed);
	ck_assert_uint_eq(n->dscp, 26);
}
END_TEST

START_TEST(eal_quotes)
{
	load_ok("[eal]\n"
		"args = -l 0 --vdev=\"net_memif0,socket=/tmp/a b.sock\" \"\" x\"y z\"w\n"
		"[port0]\ndevice = net_memif0\n");
	ck_assert_int_eq(conf.eal_argc, 6);
	ck_assert_str_eq(conf.eal_argv[3], "--vdev=net_memif0,socket=/tmp/a b.sock");
	ck_assert_str_eq(conf.eal_argv[4], "");
	ck_assert_str_eq(conf.eal_argv[5], "xy zw");
	ck_assert_ptr_null(conf.eal_argv[6]);
}
END_TEST

START_TEST(eal_most_args)
{
	char text[512] = "[eal]\nargs =";
	int i;

	/* 62 words and argv[0] leave the last slot for NULL. */
	for (i = 0; i < DROCE_CONF_MAX_EAL_ARGS - 2; i++)
		strcat(text, " a");
	strcat(text, "\n[port0]\ndevice = d\n");
	load_ok(text);
	ck_assert_int_eq(conf.eal_argc, DROCE_CONF_MAX_EAL_ARGS - 1);
	ck_assert_ptr_null(conf.eal_argv[DROCE_CONF_MAX_EAL_ARGS - 1]);
}
END_TEST

START_TEST(defaults_in_a_file)
{
	load_ok("[port0]\ndevice = net_ring0\n");
	ck_assert_str_eq(conf.eal_argv[0], "droce");
	ck_assert_str_eq(conf.eal_argv[1], "-l");
	ck_assert(has_arg(&conf, "--in-memory"));
	ck_assert(has_arg(&conf, "--no-pci"));
	ck_assert(has_arg(&conf, "--no-telemetry"));
	ck_assert_ptr_null(conf.eal_argv[conf.eal_argc]);
	ck_assert_uint_eq(conf.nb_ports, 1);
	ck_assert_uint_eq(conf.ports[0].port.mtu, 1024);
	ck_assert_uint_eq(conf.ports[0].port.ipv4, 0);
	ck_assert_int_eq(conf.engine_lcore, -1);
	ck_assert_uint_eq(conf.idle_sleep_us, 100);
	ck_assert_uint_eq(conf.log_level, RTE_LOG_NOTICE);
	droce_conf_free(&conf);
	ck_assert_int_eq(droce_conf_load(put("ok.conf", "[port0]\ndevice = d\n[engine]\nlcore = thread\n"),
					 &conf, err, sizeof(err)), 0);
	ck_assert_int_eq(conf.engine_lcore, -1);
}
END_TEST

START_TEST(embedded_default)
{
	droce_conf_default(&conf);
	ck_assert_str_eq(conf.source, "(default)");
	ck_assert_int_eq(conf.eal_argc, 7);
	ck_assert_str_eq(conf.eal_argv[0], "droce");
	ck_assert_str_eq(conf.eal_argv[1], "-l");
	/* The CPU the caller ran on: it may have moved since, so only
	 * check that it is a number. */
	ck_assert_msg(strspn(conf.eal_argv[2], "0123456789") == strlen(conf.eal_argv[2]),
		      "-l %s", conf.eal_argv[2]);
	ck_assert_str_eq(conf.eal_argv[3], "--in-memory");
	ck_assert_str_eq(conf.eal_argv[4], "--no-pci");
	ck_assert_str_eq(conf.eal_argv[5], "--no-telemetry");
	ck_assert_str_eq(conf.eal_argv[6], "--vdev=net_ring0");
	ck_assert_ptr_null(conf.eal_argv[7]);
	ck_assert_uint_eq(conf.nb_ports, 1);
	ck_assert_str_eq(conf.ports[0].device, "net_ring0");
	ck_assert_uint_eq(conf.ports[0].port.ipv4, RTE_IPV4(10, 255, 0, 1));
	ck_assert_uint_eq(conf.ports[0].port.ipv4_prefix, 24);
	ck_assert_uint_eq(conf.ports[0].port.mtu, 4096);
	ck_assert_ptr_null(conf.ports[0].port.capture);
	ck_assert_int_eq(conf.engine_lcore, -1);
	ck_assert_uint_eq(conf.log_level, RTE_LOG_NOTICE);
}
END_TEST

START_TEST(free_twice)
{
	droce_conf_default(&conf);
	droce_conf_free(&conf);
	ck_assert_int_eq(conf.eal_argc, 0);
	ck_assert_ptr_null(conf.eal_argv[0]);
	droce_conf_free(&conf);
	droce_conf_free(NULL);
}
END_TEST

/* One bad file: its text, the message after "PATH", and the error. */
struct bad_case {
	const char *text;
	const char *msg;
	int ret;
};

static const struct bad_case bad_cases[] = {
	{ "[eal]\nargs = x\nhello\n",
	  ":3: expected \"[section]\" or \"key = value\"", -EINVAL },
	{ "[eal\n", ":1: expected ']' after the section name", -EINVAL },
	{ "[port0] x\n", ":1: text after ']'", -EINVAL },
	{ "[ ]\n", ":1: empty section name", -EINVAL },
	{ "[" "0123456789012345678901234567890123456789012345678901234567890123" "]\n",
	  ":1: section name longer than 63 characters", -EINVAL },
	{ "mtu = 1024\n" PORT0, ":1: mtu: outside any section (put it under [eal], [portN], ...)",
	  -EINVAL },
	{ "[port0]\n = d\n", ":2: no key before '='", -EINVAL },
	{ "[port0]\n" "0123456789012345678901234567890123456789012345678901234567890123" " = d\n",
	  ":2: key longer than 63 characters", -EINVAL },
	{ "[port0]\ndevice =\n", ":2: [port0] device: no value", -EINVAL },
	{ "[port0]\ndevice = a\n# again\ndevice = b\n",
	  ":4: [port0] device: repeated (first at line 2)", -EINVAL },
	{ PORT0 "[log]\n[port0]\n", ":4: [port0]: repeated (first at line 1)", -EINVAL },
	{ PORT0 "[foo]\nx = 1\n",
	  ":3: [foo]: unknown section (expected eal, engine, log or port0..port7)", -EINVAL },
	{ PORT0 "[port01]\n",
	  ":3: [port01]: unknown section (expected eal, engine, log or port0..port7)", -EINVAL },
	{ PORT0 "[port]\n",
	  ":3: [port]: unknown section (expected eal, engine, log or port0..port7)", -EINVAL },
	{ PORT0 "[port8]\ndevice = e\n", ":3: [port8]: droce has at most 8 ports (port0..port7)",
	  -EINVAL },
	{ PORT0 "placement = random\n",
	  ":3: [port0] placement: 'random' is not a QP placement (round_robin, least_loaded)",
	  -EINVAL },
	{ PORT0 "speed = 3\n",
	  ":3: [port0] speed: unknown key (expected device, ipv4, mac, mtu, rxd, txd, mbufs, engines, "
	  "placement, capture, link, link_wait_ms, fault_rx, fault_tx, ecn, cnp_interval_us, dcqcn, bottleneck, ipv6, "
	  "gateway, route, vlan, pcp, dscp)",
	  -EINVAL },
	{ PORT0 "[eal]\nargv = -l 0\n", ":4: [eal] argv: unknown key (expected args)", -EINVAL },
	{ PORT0 "[engine]\nlcores = 1\n",
	  ":4: [engine] lcores: unknown key (expected lcore, idle_sleep_us)", -EINVAL },
	{ PORT0 "[log]\nlevels = 1\n", ":4: [log] levels: unknown key (expected level)", -EINVAL },
	{ PORT0 "ipv6 = 2001:db8::1\n",
	  ":3: [port0] ipv6: '2001:db8::1' is not an IPv6 address with a prefix length "
	  "(x:x::x/1..128)", -EINVAL },
	{ PORT0 "ipv6 = fe80::1/64\n",
	  ":3: [port0] ipv6: fe80::1/64 is multicast or link-local (the link-local address "
	  "comes from the MAC)", -EINVAL },
	{ PORT0 "gateway = 10.0.0.1, 10.0.0.2\n",
	  ":3: [port0] gateway: a second IPv4 default gateway", -EINVAL },
	{ PORT0 "route = 10.1.0.0/16 via 2001:db8::1\n",
	  ":3: [port0] route: '10.1.0.0/16 via 2001:db8::1': the next hop is not of the "
	  "prefix's family", -EINVAL },
	{ PORT0 "route = 10.1.0.0/16 10.0.0.1\n",
	  ":3: [port0] route: '10.1.0.0/16 10.0.0.1' is not a route (PREFIX/LEN via ADDRESS)",
	  -EINVAL },
	{ PORT0 "vlan = 4095\n",
	  ":3: [port0] vlan: '4095' is not a VLAN ID (1..4094, 0: untagged)", -EINVAL },
	{ PORT0 "pcp = 8\n", ":3: [port0] pcp: '8' is not a priority (0..7, sl, dscp)", -EINVAL },
	{ PORT0 "dscp = 64\n", ":3: [port0] dscp: '64' is not a DSCP (0..63, tclass)", -EINVAL },
	{ PORT0 "mtu = 3000\n",
	  ":3: [port0] mtu: 3000 is not an IB MTU (256, 512, 1024, 2048, 4096)", -EINVAL },
	{ PORT0 "mtu = 8192\n",
	  ":3: [port0] mtu: 8192 is not an IB MTU (256, 512, 1024, 2048, 4096)", -EINVAL },
	{ PORT0 "ipv4 = 10.0.0.1\n",
	  ":3: [port0] ipv4: '10.0.0.1' is not an address with a prefix length (a.b.c.d/1..32)",
	  -EINVAL },
	{ PORT0 "ipv4 = 10.0.0.1/33\n",
	  ":3: [port0] ipv4: '10.0.0.1/33' is not an address with a prefix length (a.b.c.d/1..32)",
	  -EINVAL },
	{ PORT0 "ipv4 = 10.0.0/24\n",
	  ":3: [port0] ipv4: '10.0.0/24' is not an address with a prefix length (a.b.c.d/1..32)",
	  -EINVAL },
	{ PORT0 "ipv4 = 224.0.0.1/4\n", ":3: [port0] ipv4: 224.0.0.1 is not a unicast address",
	  -EINVAL },
	{ PORT0 "ipv4 = 0.0.0.0/8\n", ":3: [port0] ipv4: 0.0.0.0 is not a unicast address",
	  -EINVAL },
	{ PORT0 "mac = 02:00:00:00:00\n",
	  ":3: [port0] mac: '02:00:00:00:00' is not a MAC address (xx:xx:xx:xx:xx:xx)", -EINVAL },
	{ PORT0 "mac = 01:00:5e:00:00:01\n",
	  ":3: [port0] mac: 01:00:5e:00:00:01 is not a unicast address", -EINVAL },
	{ PORT0 "mac = 00:00:00:00:00:00\n",
	  ":3: [port0] mac: 00:00:00:00:00:00 is not a unicast address", -EINVAL },
	{ PORT0 "rxd = 0\n", ":3: [port0] rxd: '0' is not a number of descriptors (1..65535)",
	  -EINVAL },
	{ PORT0 "txd = 65536\n",
	  ":3: [port0] txd: '65536' is not a number of descriptors (1..65535)", -EINVAL },
	{ PORT0 "rxd = -1\n", ":3: [port0] rxd: '-1' is not a number of descriptors (1..65535)",
	  -EINVAL },
	{ PORT0 "mbufs = 1k\n",
	  ":3: [port0] mbufs: '1k' is not a number of mbufs (1..2147483647)", -EINVAL },
	{ PORT0 "link = down\n", ":3: [port0] link: 'down' is not a link mode (auto, up)", -EINVAL },
	{ PORT0 "link_wait_ms = 86400001\n",
	  ":3: [port0] link_wait_ms: '86400001' is not a number of milliseconds (0..86400000)",
	  -EINVAL },
	{ "[port0]\ndevice = " "0123456789012345678901234567890123456789012345678901234567890123"
	  "0123456789012345678901234567890123456789012345678901234567890123\n",
	  ":2: [port0] device: longer than 127 characters", -EINVAL },
	{ "[eal]\nargs = --vdev=\"a b\n" PORT0, ":2: [eal] args: unterminated \"", -EINVAL },
	{ PORT0 "[engine]\nlcore = 128\n",
	  ":4: [engine] lcore: '128' is neither \"thread\" nor an lcore number (0..127)", -EINVAL },
	{ PORT0 "[engine]\nlcore = threads\n",
	  ":4: [engine] lcore: 'threads' is neither \"thread\" nor an lcore number (0..127)", -EINVAL },
	{ PORT0 "[engine]\nidle_sleep_us = 1000001\n",
	  ":4: [engine] idle_sleep_us: '1000001' is not a number of microseconds (0..1000000)",
	  -EINVAL },
	{ PORT0 "[log]\nlevel = loud\n",
	  ":4: [log] level: 'loud' is not a log level (error, warning, notice, info, debug)", -EINVAL },
	{ PORT0 "fault_tx = drop=2\n",
	  ":3: [port0] fault_tx: drop: '2' is not a probability (0..1)", -EINVAL },
	{ "[port0]\nmtu = 1024\n",
	  ":1: [port0] device: missing (the ethdev name, e.g. net_memif0)", -EINVAL },
	{ "[eal]\nargs = -l 0\n", ": no [port0] section: a configuration needs at least one port",
	  -EINVAL },
	{ "", ": no [port0] section: a configuration needs at least one port", -EINVAL },
	{ PORT0 "[port2]\ndevice = f\n[port1]\ndevice = e\n[port4]\ndevice = g\n",
	  ":7: [port4]: ports must be numbered from 0 without gaps ([port3] is missing)", -EINVAL },
	{ PORT0 "[port1]\ndevice = d\n",
	  ":4: [port1] device: d is already the device of [port0]", -EINVAL },
};

START_TEST(bad_file)
{
	const struct bad_case *b = &bad_cases[_i];
	int ret;

	ret = droce_conf_load(put("bad.conf", b->text), &conf, err, sizeof(err));
	ck_assert_msg(ret == b->ret, "case %d: got %d, want %d (%s)", _i, ret, b->ret, err);
	assert_err(b->msg);
	/* A failed load leaves nothing to free. */
	ck_assert_int_eq(conf.eal_argc, 0);
	ck_assert_ptr_null(conf.eal_argv[0]);
}
END_TEST

START_TEST(too_many_eal_args)
{
	char text[512] = "[eal]\nargs =";
	int i;

	for (i = 0; i < DROCE_CONF_MAX_EAL_ARGS - 1; i++)
		strcat(text, " a");
	strcat(text, "\n" PORT0);
	ck_assert_int_eq(droce_conf_load(put("bad.conf", text), &conf, err, sizeof(err)), -EINVAL);
	assert_err(":2: [eal] args: more than 62 arguments");
}
END_TEST

START_TEST(long_lines)
{
	char text[1024];
	size_t n;

	/* A value of 255 characters is the longest rte_cfgfile keeps. */
	n = (size_t)snprintf(text, sizeof(text), "[port0]\ndevice = d\ncapture = ");
	memset(text + n, 'c', 255);
	strcpy(text + n + 255, "\n");
	load_ok(text);
	ck_assert_uint_eq(strlen(conf.ports[0].capture), 255);
	droce_conf_free(&conf);

	memset(text + n, 'c', 256);
	strcpy(text + n + 256, "\n");
	ck_assert_int_eq(droce_conf_load(put("bad.conf", text), &conf, err, sizeof(err)), -EINVAL);
	assert_err(":3: [port0] capture: value longer than 255 characters");

	/* rte_cfgfile's line buffer: 322 characters and the newline. A
	 * comment keeps the value short. */
	n = (size_t)snprintf(text, sizeof(text), "[port0]\ndevice = d #");
	memset(text + n, 'x', 322 - (n - 8));
	strcpy(text + 8 + 322, "\n");
	load_ok(text);
	droce_conf_free(&conf);
	memset(text + n, 'x', 323 - (n - 8));
	strcpy(text + 8 + 323, "\n");
	ck_assert_int_eq(droce_conf_load(put("bad.conf", text), &conf, err, sizeof(err)), -EINVAL);
	assert_err(":2: line longer than 322 characters");
}
END_TEST

START_TEST(nul_byte)
{
	static const char text[] = "[port0]\ndevice = a\0b\n";
	FILE *f;

	snprintf(path, sizeof(path), "%s/nul.conf", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, sizeof(text) - 1, f), sizeof(text) - 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(droce_conf_load(path, &conf, err, sizeof(err)), -EINVAL);
	assert_err(":2: NUL byte in line");
}
END_TEST

START_TEST(missing_file)
{

	snprintf(path, sizeof(path), "%s/none.conf", tmpdir);
	ck_assert_int_eq(droce_conf_load(path, &conf, err, sizeof(err)), -ENOENT);
	assert_err(": cannot open: No such file or directory");
}
END_TEST

START_TEST(short_error_buffer)
{
	char small[8];

	ck_assert_int_eq(droce_conf_load(put("bad.conf", "[foo]\n"), &conf, small, sizeof(small)),
			 -EINVAL);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(droce_conf_load(path, &conf, NULL, 0), -EINVAL);
}
END_TEST

START_TEST(env_default)
{
	unsetenv("DROCE_CONF");
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_str_eq(conf.source, "(default)");
	ck_assert_str_eq(conf.ports[0].device, "net_ring0");
	droce_conf_free(&conf);
	/* An empty variable counts as unset. */
	setenv("DROCE_CONF", "", 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_str_eq(conf.source, "(default)");
}
END_TEST

START_TEST(env_file)
{

	setenv("DROCE_CONF", put("env.conf", "[port0]\ndevice = net_memif0\n"), 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_str_eq(conf.source, path);
	ck_assert_str_eq(conf.ports[0].device, "net_memif0");
	droce_conf_free(&conf);

	setenv("DROCE_CONF", put("env.conf", "[port0]\nmtu = 1\n"), 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), -EINVAL);
	assert_err(":2: [port0] mtu: 1 is not an IB MTU (256, 512, 1024, 2048, 4096)");
}
END_TEST

START_TEST(env_capture)
{
	setenv("DROCE_CONF", put("env.conf", "[port0]\ndevice = a\ncapture = /x.pcapng\n"
					     "[port1]\ndevice = b\n[port2]\ndevice = c\n"), 1);
	setenv("DROCE_CAPTURE", "/tmp/run.d/cap.pcapng", 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_str_eq(conf.ports[0].capture, "/tmp/run.d/cap.pcapng");
	ck_assert_str_eq(conf.ports[1].capture, "/tmp/run.d/cap.1.pcapng");
	ck_assert_str_eq(conf.ports[2].capture, "/tmp/run.d/cap.2.pcapng");
	ck_assert_ptr_eq(conf.ports[2].port.capture, conf.ports[2].capture);
	droce_conf_free(&conf);

	/* No extension in the last component: the number goes at the end. */
	setenv("DROCE_CAPTURE", "/tmp/run.d/cap", 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_str_eq(conf.ports[0].capture, "/tmp/run.d/cap");
	ck_assert_str_eq(conf.ports[1].capture, "/tmp/run.d/cap.1");
	droce_conf_free(&conf);

	/* A hidden file has no extension either. */
	setenv("DROCE_CAPTURE", ".cap", 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_str_eq(conf.ports[1].capture, ".cap.1");
}
END_TEST

START_TEST(env_capture_too_long)
{
	static char longpath[PATH_MAX];

	setenv("DROCE_CONF", put("env.conf", "[port0]\ndevice = a\n[port1]\ndevice = b\n"), 1);
	/* Port 0 fits, port 1 with ".1" does not. */
	memset(longpath, 'p', PATH_MAX - 2);
	setenv("DROCE_CAPTURE", longpath, 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), -ENAMETOOLONG);
	ck_assert_str_eq(err, "DROCE_CAPTURE: path too long");
	ck_assert_int_eq(conf.eal_argc, 0);
}
END_TEST

START_TEST(env_log)
{
	setenv("DROCE_LOG", "info", 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), 0);
	ck_assert_uint_eq(conf.log_level, RTE_LOG_INFO);
	droce_conf_free(&conf);

	setenv("DROCE_LOG", "verbose", 1);
	ck_assert_int_eq(droce_conf_from_env(&conf, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "DROCE_LOG: 'verbose' is not a log level "
			      "(error, warning, notice, info, debug)");
	ck_assert_int_eq(conf.eal_argc, 0);
}
END_TEST

/* ---- the ready files of config/ ---- */

/*
 * Is @p dev an ethdev the EAL arguments of @p c create: the name of a
 * --vdev, or a PCI address given to -a/--allow (either with its
 * comma-separated options)?
 */
static bool
eal_creates(const struct droce_conf *c, const char *dev)
{
	static const char *const opts[] = { "--vdev", "-a", "--allow" };
	size_t len = strlen(dev);
	int i;

	for (i = 1; i < c->eal_argc; i++) {
		const char *a = c->eal_argv[i];
		const char *spec = NULL;
		unsigned k;

		for (k = 0; k < sizeof(opts) / sizeof(opts[0]) && spec == NULL; k++) {
			size_t n = strlen(opts[k]);

			if (strncmp(a, opts[k], n) == 0 && a[n] == '=')
				spec = a + n + 1;
			else if (strcmp(c->eal_argv[i - 1], opts[k]) == 0)
				spec = a;
		}
		if (spec != NULL && strncmp(spec, dev, len) == 0 &&
		    (spec[len] == ',' || spec[len] == '\0'))
			return true;
	}
	return false;
}

/* Is @p name one of the space-separated words of @p list? */
static bool
word_in(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
			return true;
		p += len;
	}
	return false;
}

/*
 * Every *.conf of config/ (DROCE_CONFIG_DIR) loads, names a device its
 * own EAL arguments create for each port, and is installed (one of
 * DROCE_CONFIG_FILES, the list config/meson.build installs).
 */
START_TEST(config_files)
{
	const char *dir = getenv("DROCE_CONFIG_DIR");
	const char *installed = getenv("DROCE_CONFIG_FILES");
	const struct dirent *d;
	unsigned nb_files = 0;
	DIR *dp;

	ck_assert_msg(dir != NULL && installed != NULL,
		      "run by meson, which sets DROCE_CONFIG_DIR and DROCE_CONFIG_FILES");
	dp = opendir(dir);
	ck_assert_ptr_nonnull(dp);
	while ((d = readdir(dp)) != NULL) {
		size_t n = strlen(d->d_name);
		unsigned i;
		int ret;

		if (n < 5 || strcmp(d->d_name + n - 5, ".conf") != 0)
			continue;
		nb_files++;
		ck_assert_msg(word_in(installed, d->d_name),
			      "config/%s is not in config/meson.build's list", d->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		ret = droce_conf_load(path, &conf, err, sizeof(err));
		ck_assert_msg(ret == 0, "%s", err);
		for (i = 0; i < conf.nb_ports; i++)
			ck_assert_msg(eal_creates(&conf, conf.ports[i].device),
				      "%s: [port%u] device %s: no EAL argument creates it",
				      d->d_name, i, conf.ports[i].device);
		droce_conf_free(&conf);
	}
	closedir(dp);
	ck_assert_uint_gt(nb_files, 0);
}
END_TEST

static Suite *
conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *t;

	t = tcase_create("load");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, full_file);
	tcase_add_test(t, comments_and_layout);
	tcase_add_test(t, faults);
	tcase_add_test(t, net_keys);
	tcase_add_test(t, eal_quotes);
	tcase_add_test(t, eal_most_args);
	tcase_add_test(t, defaults_in_a_file);
	tcase_add_test(t, embedded_default);
	tcase_add_test(t, free_twice);
	suite_add_tcase(s, t);

	t = tcase_create("errors");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_loop_test(t, bad_file, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(t, too_many_eal_args);
	tcase_add_test(t, long_lines);
	tcase_add_test(t, nul_byte);
	tcase_add_test(t, missing_file);
	tcase_add_test(t, short_error_buffer);
	suite_add_tcase(s, t);

	t = tcase_create("env");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, env_default);
	tcase_add_test(t, env_file);
	tcase_add_test(t, env_capture);
	tcase_add_test(t, env_capture_too_long);
	tcase_add_test(t, env_log);
	suite_add_tcase(s, t);

	t = tcase_create("config");
	tcase_add_checked_fixture(t, NULL, teardown);
	tcase_add_test(t, config_files);
	suite_add_tcase(s, t);
	return s;
}

/* Remove the files the tests wrote, then the directory. */
static void
remove_tmpdir(void)
{
	static const char *const names[] = { "ok.conf", "bad.conf", "env.conf", "nul.conf" };
	char f[PATH_MAX];
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(f, sizeof(f), "%s/%s", tmpdir, names[i]);
		unlink(f);
	}
	rmdir(tmpdir);
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	sr = srunner_create(conf_suite());
	/* One process: the environment tests set variables in it, and ASAN
	 * sees every allocation the parser made. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_tmpdir();
	return failed == 0 ? 0 : 1;
}
