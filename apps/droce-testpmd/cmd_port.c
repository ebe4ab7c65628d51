/* SPDX-License-Identifier: BSD-3-Clause */
/* Port commands: show port info/stats, capture, fault injection. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "droce_conf.h"
#include "droce_driver.h"
#include "testpmd.h"

/* The port driver and what it offloads (struct droce_drv_caps). */
static void
show_port_driver(unsigned p)
{
	struct droce_drv_caps c;
	const char *name = droce_port_driver(tp_ports[p].port, &c);
	const struct {
		bool on;
		const char *name;
	} caps[] = {
		{ c.tx_ipv4_cksum, "tx_ipv4_cksum" }, { c.tx_multi_seg, "tx_multi_seg" },
		{ c.tx_vlan_insert, "tx_vlan_insert" }, { c.rx_rss_udp, "rx_rss_udp" },
		{ c.rx_flow_qpn, "rx_flow_qpn" }, { c.flow_isolate, "flow_isolate" },
	};
	struct rte_eth_dev_info info;
	unsigned i, n = 0;

	if (rte_eth_dev_info_get(tp_ports[p].ethdev, &info) != 0)
		info.driver_name = "?";
	printf("  driver %s (PMD %s), offloads:", name, info.driver_name);
	for (i = 0; i < RTE_DIM(caps); i++) {
		if (caps[i].on) {
			printf(" %s", caps[i].name);
			n++;
		}
	}
	printf("%s\n", n ? "" : " none (everything in software)");
}

static void
show_port_info(unsigned p)
{
	tp_show_port_info(p);
	show_port_driver(p);
}

static int
cmd_show_port_info(struct tp_args *a)
{
	unsigned p;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	if (strcmp(a->argv[0], "all") == 0) {
		for (p = 0; p < tp_nb_ports; p++)
			show_port_info(p);
		return 0;
	}
	if ((rc = tp_arg_port(a->argv[0], &p)) != 0)
		return rc;
	show_port_info(p);
	return 0;
}

static int
cmd_show_port_stats(struct tp_args *a)
{
	unsigned p;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	if (strcmp(a->argv[0], "all") == 0) {
		for (p = 0; p < tp_nb_ports; p++)
			tp_show_port_stats(p);
		return 0;
	}
	if ((rc = tp_arg_port(a->argv[0], &p)) != 0)
		return rc;
	tp_show_port_stats(p);
	return 0;
}

static int
cmd_capture_start(struct tp_args *a)
{
	unsigned p;
	int rc;

	if (a->argc != 2)
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &p)) != 0)
		return rc;
	rc = droce_port_capture_start(tp_ports[p].port, a->argv[1]);
	if (rc != 0)
		return tp_error(rc, "capture start %u %s", p, a->argv[1]);
	printf("port %u: capturing into %s\n", p, a->argv[1]);
	return 0;
}

static int
cmd_capture_stop(struct tp_args *a)
{
	unsigned p;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &p)) != 0)
		return rc;
	droce_port_capture_stop(tp_ports[p].port);
	printf("port %u: capture stopped\n", p);
	return 0;
}

static int
cmd_set_fault(struct tp_args *a)
{
	struct droce_fault_conf c = { 0 };
	char err[256];
	unsigned p;
	bool rx;
	int rc;

	if (a->argc != 3 || (strcmp(a->argv[1], "rx") != 0 && strcmp(a->argv[1], "tx") != 0))
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &p)) != 0)
		return rc;
	rx = strcmp(a->argv[1], "rx") == 0;
	if (strcmp(a->argv[2], "off") != 0 &&
	    (rc = droce_conf_fault_parse(a->argv[2], &c, err, sizeof(err))) != 0)
		return tp_error(rc, "set fault %u %s: %s", p, a->argv[1], err);
	rc = droce_port_fault_set(tp_ports[p].port, rx, &c);
	if (rc != 0)
		return tp_error(rc, "set fault %u %s", p, a->argv[1]);
	printf("port %u: %s faults %s\n", p, a->argv[1],
	       droce_fault_conf_active(&c) ? "on" : "off");
	return 0;
}

static int
cmd_show_fault(struct tp_args *a)
{
	unsigned p;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &p)) != 0)
		return rc;
	tp_show_fault(p);
	return 0;
}

static const struct tp_cmd port_cmds[] = {
	{ "show port info", "all|<port>", "MAC, IPv4, MTU, link, GID table, port driver and its offloads",
	  cmd_show_port_info },
	{ "show port stats", "all|<port>", "port and engine counters (docs/reliability.md)",
	  cmd_show_port_stats },
	{ "capture start", "<port> <file.pcapng>",
	  "write every frame the port sends and receives to a pcapng file", cmd_capture_start },
	{ "capture stop", "<port>", "stop the capture and close its file", cmd_capture_stop },
	{ "set fault", "<port> rx|tx <spec>|off",
	  "inject faults, spec as fault_rx/fault_tx in docs/config.md: "
	  "drop=P,dup=P,reorder=P,corrupt=P,delay=P,delay_us=N,seed=N", cmd_set_fault },
	{ "show fault", "<port>", "the faults set and what they did", cmd_show_fault },
	{ NULL, NULL, NULL, NULL },
};

const struct tp_family tp_family_port = {
	"port", "port information, counters, capture, fault injection", port_cmds,
};
