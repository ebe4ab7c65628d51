/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the verbs tests share: a clock, and taking a QP of any type from
 * RESET to RTS with the attributes the IB spec requires for its type.
 * Only <infiniband/verbs.h>: these are ordinary verbs programs.
 */
#ifndef DROCE_TEST_H
#define DROCE_TEST_H

#include <stdint.h>

#include <infiniband/verbs.h>

/** Seconds on the monotonic clock. */
double droce_test_now(void);

/** Where a QP talks to, and how. Zeroed fields take the defaults noted. */
struct droce_test_path {
	uint32_t dqpn;               /**< peer QP (ignored for UD) */
	union ibv_gid dgid;          /**< peer GID (ignored for UD) */
	uint8_t sgid_index;          /**< 0: 1, the IPv4 GID */
	enum ibv_mtu mtu;            /**< 0: IBV_MTU_1024 */
	uint32_t psn;                /**< both directions */
	uint8_t timeout;             /**< 0: 14 (67 ms) */
	uint8_t retry_cnt;           /**< 0: 7 */
	uint8_t rnr_retry;           /**< 0: 7 (forever) */
	uint8_t min_rnr_timer;       /**< 0: 1 (0.01 ms) */
	uint8_t rd_atomic;           /**< max_rd_atomic and max_dest_rd_atomic; 0: 4 */
	uint32_t qkey;               /**< UD */
	int access;                  /**< 0: local write, remote write/read/atomic */
};

/**
 * RESET -> INIT -> RTR -> RTS for RC, UC, UD, XRC_SEND and XRC_RECV, with
 * exactly the attributes the spec's table wants for the type.
 * @return 0, or the errno of the ibv_modify_qp that failed.
 */
int droce_test_connect(struct ibv_qp *qp, const struct droce_test_path *p);

/** @return the state of @p qp, or -1 when ibv_query_qp() fails. */
int droce_test_qp_state(struct ibv_qp *qp);

#endif
