/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An RC echo server on a verbs device that speaks the connection setup of
 * rdma-core's ibv_rc_pingpong: ibv_rc_pingpong (or any client of that
 * protocol) connects to it and each message it sends comes back.
 */
#ifndef RC_ECHO_H
#define RC_ECHO_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct rc_echo_conf {
	struct ibv_device *dev;
	int gid_index;           /* the GID the server's QP sends from (1: IPv4) */
	uint16_t tcp_port;       /* where clients exchange QP numbers */
	uint32_t msg_size;       /* the client's -s (ibv_rc_pingpong's default: 4096) */
};

struct rc_echo_stats {
	uint64_t sessions;       /* clients that connected */
	uint64_t messages;       /* messages sent back */
	uint64_t errors;         /* completions with an error */
};

/* Serve clients, one at a time, until *@p quit is set (checked every
 * 100 ms). @return 0, or -1 when the server could not start. */
int rc_echo_run(const struct rc_echo_conf *conf, const volatile bool *quit,
		struct rc_echo_stats *stats);

#endif /* RC_ECHO_H */
