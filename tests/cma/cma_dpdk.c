/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DPDK application that uses rdma_cm through libdroce alone (no
 * librdmacm, no libibverbs): it starts the EAL, attaches droce to its
 * first ethdev, runs the engine on a thread of droce's, and then is
 * rdmacm-utils' rdma_client in its own words: rdma_getaddrinfo(),
 * rdma_create_ep(), the rdma_verbs.h helpers, rdma_connect(), one SEND
 * each way, rdma_disconnect(). tests/cma runs it against Debian's
 * rdma_server on the drop-in librdmacm.so.1.
 *
 * Usage: cma_dpdk EAL_ARGS -- SERVER PORT LOCAL_IPV4/PREFIX
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "droce.h"

#define MSG_LEN 16

static int
attach(const char *local, unsigned *dev)
{
	struct droce_port_conf conf = { .port_id = 0, .mtu = 4096, .link_up = true };
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(local, '/');
	struct in_addr a;
	int rc;

	if (slash == NULL || (size_t)(slash - local) >= sizeof(addr) ||
	    rte_eth_dev_count_avail() == 0)
		return -EINVAL;
	memcpy(addr, local, (size_t)(slash - local));
	addr[slash - local] = '\0';
	if (inet_pton(AF_INET, addr, &a) != 1)
		return -EINVAL;
	conf.ipv4 = ntohl(a.s_addr);
	conf.ipv4_prefix = (uint8_t)atoi(slash + 1);
	rc = droce_dev_attach(&conf, dev);
	return rc != 0 ? rc : droce_dev_run_thread(*dev, 0);
}

/* rdma_client's exchange: one SEND each way on an endpoint of rdma_create_ep(). */
static int
exchange(const char *server, const char *port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = MSG_LEN },
		.sq_sig_all = 1,
	};
	uint8_t send_msg[MSG_LEN] = "droce via dpdk", recv_msg[MSG_LEN];
	struct ibv_mr *send_mr = NULL, *recv_mr = NULL;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	int rc = -1;

	if (rdma_getaddrinfo(server, port, &hints, &res) != 0) {
		perror("rdma_getaddrinfo");
		return -1;
	}
	if (rdma_create_ep(&id, res, NULL, &attr) != 0) {
		perror("rdma_create_ep");
		rdma_freeaddrinfo(res);
		return -1;
	}
	recv_mr = rdma_reg_msgs(id, recv_msg, MSG_LEN);
	send_mr = rdma_reg_msgs(id, send_msg, MSG_LEN);
	if (recv_mr == NULL || send_mr == NULL)
		perror("rdma_reg_msgs");
	else if (rdma_post_recv(id, NULL, recv_msg, MSG_LEN, recv_mr) != 0)
		perror("rdma_post_recv");
	else if (rdma_connect(id, NULL) != 0)
		perror("rdma_connect");
	else if (rdma_post_send(id, NULL, send_msg, MSG_LEN, send_mr, 0) != 0)
		perror("rdma_post_send");
	else if (rdma_get_send_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "cma_dpdk: send completion: %s\n", ibv_wc_status_str(wc.status));
	else if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS ||
		 wc.byte_len != MSG_LEN)
		fprintf(stderr, "cma_dpdk: receive completion: %s, %u bytes\n",
			ibv_wc_status_str(wc.status), wc.byte_len);
	else
		rc = rdma_disconnect(id);
	if (send_mr != NULL)
		rdma_dereg_mr(send_mr);
	if (recv_mr != NULL)
		rdma_dereg_mr(recv_mr);
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned dev;
	int n, rc;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "cma_dpdk: cannot start the EAL\n");
		return 1;
	}
	argc -= n;
	argv += n;
	if (argc != 4) {
		fprintf(stderr, "usage: cma_dpdk EAL_ARGS -- SERVER PORT LOCAL_IPV4/PREFIX\n");
		return 2;
	}
	rc = attach(argv[3], &dev);
	if (rc != 0) {
		fprintf(stderr, "cma_dpdk: cannot attach droce to ethdev 0: %s\n", strerror(-rc));
		return 1;
	}
	rc = exchange(argv[1], argv[2]);
	printf("cma_dpdk: end %d\n", rc);
	return rc == 0 ? 0 : 1;
}
