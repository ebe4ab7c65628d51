/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-testpmd's start and end: the EAL, one droce device on every ethdev
 * the EAL probed, a verbs context on each, and each device's engine on
 * droce's progress thread, so traffic flows while the prompt waits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "testpmd.h"

/* The longest an idle engine thread sleeps: as droce's default. */
#define TP_IDLE_SLEEP_US 100

struct tp_port tp_ports[TP_MAX_PORTS];
unsigned tp_nb_ports;

static void
on_signal(int sig __rte_unused)
{
	tp_stop = true;
}

/*
 * No SA_RESTART: the prompt's read() returns EINTR, so the console ends
 * cleanly (terminal settings restored, objects destroyed).
 */
static void
signals_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int
port_attach(uint16_t ethdev, const struct tp_params *prm)
{
	unsigned i = tp_nb_ports;
	struct tp_port *p = &tp_ports[i];
	struct droce_port_conf conf = {
		.port_id = ethdev,
		.mtu = prm->mtu,
	};
	int rc;

	if (i >= TP_MAX_PORTS) {
		fprintf(stderr, TP_NAME ": ethdev %u: at most %u ports\n", ethdev, TP_MAX_PORTS);
		return -ENOSPC;
	}
	if (i < prm->nb_ip) {
		conf.ipv4 = prm->ip[i];
		conf.ipv4_prefix = prm->prefix[i];
	} else {
		conf.ipv4 = (10u << 24) | (i + 1); /* 10.0.0.<port + 1>/24 */
		conf.ipv4_prefix = 24;
	}
	if (i < prm->nb_mac) {
		conf.mac_set = true;
		memcpy(conf.mac.addr_bytes, prm->mac[i], sizeof(conf.mac.addr_bytes));
	}
	rc = droce_dev_attach(&conf, &p->dev);
	if (rc != 0) {
		fprintf(stderr, TP_NAME ": cannot attach droce to ethdev %u: %s\n", ethdev,
			strerror(-rc));
		return rc;
	}
	p->ethdev = ethdev;
	p->prefix = conf.ipv4_prefix;
	p->port = droce_dev_port(p->dev);
	p->sgid_index = droce_port_gid_count(p->port) > 1 ? 1 : 0;
	tp_nb_ports++;
	p->ctx = ibv_open_device(droce_dev_ibv(p->dev));
	if (p->ctx == NULL) {
		fprintf(stderr, TP_NAME ": cannot open droce%u: %s\n", p->dev, strerror(errno));
		return -errno;
	}
	rc = droce_dev_run_thread(p->dev, TP_IDLE_SLEEP_US);
	if (rc != 0) {
		fprintf(stderr, TP_NAME ": cannot start droce%u's engine: %s\n", p->dev,
			strerror(-rc));
		return rc;
	}
	return 0;
}

static void
ports_close(void)
{
	unsigned i;

	for (i = tp_nb_ports; i-- > 0;) {
		struct tp_port *p = &tp_ports[i];
		int rc;

		if (p->ctx != NULL && (rc = ibv_close_device(p->ctx)) != 0)
			fprintf(stderr, TP_NAME ": droce%u: closing the context: %s\n", p->dev,
				strerror(rc));
		rc = droce_dev_detach(p->dev);
		if (rc != 0)
			fprintf(stderr, TP_NAME ": droce%u: detach: %s\n", p->dev, strerror(-rc));
	}
	tp_nb_ports = 0;
}

int
main(int argc, char **argv)
{
	struct tp_params prm;
	uint16_t ethdev;
	int ret, rc = 0;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, TP_NAME ": cannot start DPDK: %s (no hugepages? give the EAL "
			"--no-huge -m 512)\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	argv[0] = (char *)TP_NAME;
	ret = tp_params_parse(argc, argv, &prm);
	if (ret != 0) {
		rte_eal_cleanup();
		return ret > 0 ? 0 : 1;
	}
	if (rte_eth_dev_count_avail() == 0) {
		fprintf(stderr, TP_NAME ": the EAL probed no ethdev: give it one, e.g. "
			"--vdev=net_ring0 (a loopback port)\n");
		rte_eal_cleanup();
		return 1;
	}
	if (prm.nb_ip > rte_eth_dev_count_avail() || prm.nb_mac > rte_eth_dev_count_avail()) {
		fprintf(stderr, TP_NAME ": more addresses than ports (%u)\n",
			rte_eth_dev_count_avail());
		rte_eal_cleanup();
		return 1;
	}
	signals_init();
	RTE_ETH_FOREACH_DEV(ethdev) {
		rc = port_attach(ethdev, &prm);
		if (rc != 0)
			break;
	}
	if (rc == 0) {
		printf("%u port%s ready; 'help' lists the commands\n", tp_nb_ports,
		       tp_nb_ports > 1 ? "s" : "");
		fflush(stdout);
		rc = prm.cmdline_file != NULL ? tp_console_script(prm.cmdline_file) :
			tp_console_interactive();
	}
	tp_obj_destroy_all();
	ports_close();
	rte_eal_cleanup();
	return rc == 0 ? 0 : 1;
}
