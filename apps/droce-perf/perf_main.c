/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf's entry: start the EAL with the arguments before "--" (like
 * testpmd), read perftest's options after it, pick the ethdev, and run
 * the RDMA tests on a droce device over it, or the raw-L2 tests on the
 * bare ethdev. --demo runs none of this itself: it starts a server and a
 * client of its own (perf_demo.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "perf.h"

static void
usage_hook(const char *prog)
{
	printf("\n");
	perf_usage(stdout, prog);
}

/* --ethdev by name or number; without it, the one ethdev there is. */
static int
pick_port(const struct perf_opts *o, uint16_t *port)
{
	char *end;
	unsigned long id;

	if (o->ethdev != NULL) {
		if (rte_eth_dev_get_port_by_name(o->ethdev, port) == 0)
			return 0;
		id = strtoul(o->ethdev, &end, 10);
		if (*end == '\0' && end != o->ethdev && id < RTE_MAX_ETHPORTS &&
		    rte_eth_dev_is_valid_port((uint16_t)id)) {
			*port = (uint16_t)id;
			return 0;
		}
		fprintf(stderr, PERF_NAME ": --ethdev %s: no such ethdev\n", o->ethdev);
		return -1;
	}
	switch (rte_eth_dev_count_avail()) {
	case 0:
		fprintf(stderr, PERF_NAME ": no ethdev: give the EAL one, e.g. "
			"--vdev=net_memif0,role=server,socket=/tmp/perf.sock,socket-abstract=no\n");
		return -1;
	case 1:
		RTE_ETH_FOREACH_DEV(*port)
			return 0;
		return -1;
	default:
		fprintf(stderr, PERF_NAME ": %u ethdevs: choose one with --ethdev\n",
			rte_eth_dev_count_avail());
		return -1;
	}
}

int
perf_wait_link(uint16_t port_id, double timeout_s)
{
	struct timespec ts = { 0, 1000 * 1000 };
	struct rte_eth_link link;
	double waited = 0;

	for (;;) {
		/* PMDs that cannot tell are taken as up. */
		if (rte_eth_link_get_nowait(port_id, &link) != 0 ||
		    link.link_status == RTE_ETH_LINK_UP)
			return 0;
		if (waited >= timeout_s)
			break;
		nanosleep(&ts, NULL);
		waited += 0.001;
	}
	fprintf(stderr, PERF_NAME ": the link of ethdev %u is still down after %g s\n", port_id,
		timeout_s);
	return -1;
}

int
main(int argc, char **argv)
{
	struct perf_opts o;
	uint16_t port;
	int ret, rc, status;

	if (perf_demo_requested(argc, argv))
		return perf_demo_main(argc, argv);
	/* stdout carries results only (--json parses): DPDK's log goes to stderr. */
	rte_openlog_stream(stderr);
	rte_set_application_usage_hook(usage_hook);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, PERF_NAME ": cannot start DPDK: %s (no hugepages? run "
			"scripts/hugepages.sh, or give the EAL --no-huge)\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;
	rc = perf_options_parse(argc, argv, &o);
	if (rc > 0)
		status = 0;             /* --help */
	else if (rc < 0 || pick_port(&o, &port) != 0)
		status = 1;
	else
		status = o.raw ? perf_raw_main(&o, port) : perf_rdma_main(&o, port);
	/*
	 * No rte_eal_cleanup(), as libdroce does at exit (docs/architecture.md):
	 * it removes the memif devices while the EAL's interrupt thread, which
	 * it does not stop, may still be handling the peer's disconnect, and
	 * that thread then crashed (seen with two engines, under ASan).
	 */
	return status;
}
