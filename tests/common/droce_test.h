/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the verbs tests share: a clock, taking a QP of any type from
 * RESET to RTS with the attributes the IB spec requires for its type,
 * waiting for a completion, and running a Check suite in this process.
 * Only <infiniband/verbs.h>: these are ordinary verbs programs.
 */
#ifndef DROCE_TEST_H
#define DROCE_TEST_H

#include <stdint.h>

#include <check.h>
#include <infiniband/verbs.h>

/** Seconds on the monotonic clock. */
double droce_test_now(void);

/** Device 0 (or another) opened with a PD, a CQ of 1024 and two
 *  registered buffers, for the tests that run QPs over the device's
 *  loopback. */
struct droce_test_loop {
	struct ibv_device **list;    /**< NULL from droce_test_dev_open() */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf[2];             /**< page-aligned, of the size asked for */
	struct ibv_mr *mr[2];        /**< one per buffer */
	union ibv_gid gid;           /**< GID index 1 (IPv4) */
};

/** Open @p l with buffers of @p size bytes (a multiple of 4096)
 *  registered with @p access.
 *  @return 0, or -1 after a message on standard error. */
int droce_test_loop_open(struct droce_test_loop *l, size_t size, int access);

/** The same on device @p dev. */
int droce_test_dev_open(struct droce_test_loop *l, struct ibv_device *dev, size_t size,
			int access);

/** Free what droce_test_loop_open() or droce_test_dev_open() made. */
void droce_test_loop_close(struct droce_test_loop *l);

/** Post one receive of @p len bytes at @p buf (key @p lkey); fails the
 *  running test if the post fails. */
void droce_test_post_recv(struct ibv_qp *qp, uint64_t wr_id, uint8_t *buf, uint32_t len,
			  uint32_t lkey);

/** Fill @p n bytes at @p p with a pattern that depends on @p seed. */
void droce_test_fill(uint8_t *p, size_t n, unsigned seed);

/** The next completion of @p cq; fails the running test after 20 s. */
struct ibv_wc droce_test_wait_wc(struct ibv_cq *cq);

/**
 * Run @p s without forking (the EAL initialises once per process) and
 * free it. @return the number of failed tests.
 */
int droce_test_run(Suite *s);

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

/** A QP of @p type on CQ @p cq in @p pd (64 WRs each way, 2 SGEs, 64 bytes
 *  inline), with ibv_wr_* for @p send_ops when non-zero; fails the running
 *  test if creation fails. */
struct ibv_qp *droce_test_qp_new(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type,
				 uint64_t send_ops);

/** @return the state of @p qp, or -1 when ibv_query_qp() fails. */
int droce_test_qp_state(struct ibv_qp *qp);

#endif
