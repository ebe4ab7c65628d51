/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * QP1, the general service QP of a droce device, and the MADs it carries.
 *
 * QP1 belongs to droce, not to an application: it is created under the
 * fixed QPN 1 (droce_num_table_add() never hands out numbers below 0x11),
 * as a UD QP with Q_Key 0x80010000 and the default P_Key, and marked
 * stack-owned, so ibv_modify_qp() and ibv_destroy_qp() refuse it with
 * EPERM; destroying or resetting an application's QPs never reaches it.
 *
 * A thread per open GSI waits on QP1's receive completions (a completion
 * channel, so an idle CM costs nothing) and on the consumer's next timer,
 * and calls the consumer's callbacks from there. Sends come from any thread.
 */
#ifndef DROCE_GSI_H
#define DROCE_GSI_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_cm_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_gsi;

struct droce_gsi_ops {
	/** A MAD from QP1 at @p src_gid, which reached our @p dst_gid. */
	void (*recv)(void *arg, const uint8_t src_gid[16], const uint8_t dst_gid[16],
		     const uint8_t mad[DROCE_MAD_SIZE]);
	/** Run timers; @return the next deadline (droce_gsi_now_us()), UINT64_MAX for none. */
	uint64_t (*timer)(void *arg);
};

/**
 * Create QP1 on the device of @p ctx and start its thread.
 * @return NULL with errno set: EBUSY if the device's QP1 exists already.
 */
struct droce_gsi *droce_gsi_open(struct ibv_context *ctx, const struct droce_gsi_ops *ops,
				 void *arg);

/** Stop the thread, destroy QP1. Not from inside a callback. */
void droce_gsi_close(struct droce_gsi *g);

/**
 * Send @p mad to QP1 at @p dgid, from the port's GID of the same family
 * (IPv4-mapped or IPv6). @return 0 or a negative errno.
 */
int droce_gsi_send(struct droce_gsi *g, const uint8_t dgid[16], const uint8_t mad[DROCE_MAD_SIZE]);

/**
 * Wait until every MAD sent so far has completed on QP1 (the engine built
 * its frame), or until droce_gsi_now_us() reaches @p deadline_us.
 * @return 0, or -ETIMEDOUT (an engine nobody runs).
 */
int droce_gsi_drain(struct droce_gsi *g, uint64_t deadline_us);

/** Wake the thread to run the timer callback now (a new deadline was set). */
void droce_gsi_kick(struct droce_gsi *g);

/**
 * Whether the device's port could reach @p dgid from its GID
 * @p sgid_index, with the neighbour it would send to resolved
 * (droce_port_resolve()): -EAGAIN while an ARP request or neighbour
 * solicitation waits for its answer (call again), -EHOSTUNREACH with no
 * route. @return 0 or a negative errno.
 */
int droce_gsi_resolve(const struct droce_gsi *g, int sgid_index, const uint8_t dgid[16]);

/**
 * Have @p fn(@p arg) called first thing when the application destroys
 * @p qp, whichever call it uses (NULL: no longer). The rdma_cm library's
 * QP transitions on CM events run on QP1's thread, and an application may
 * destroy an ID's QP with ibv_destroy_qp() rather than rdma_destroy_qp()
 * (perftest does): the ID forgets the QP first. Not part of QP1; here as
 * the other private call the rdma_cm library makes into the verbs one.
 */
void droce_qp_on_destroy(struct ibv_qp *qp, void (*fn)(void *arg), void *arg);

/**
 * Whether this process's EAL is droce's own (a verbs program on the
 * drop-in libibverbs.so.1, whose engines droce stops at exit, after the
 * rdma_cm library's exit handler), not a DPDK application's, which may
 * have cleaned its EAL up before its exit handlers run.
 */
bool droce_lib_owns_eal(void);

/** QP1's QPN, for tests: 1. */
uint32_t droce_gsi_qpn(const struct droce_gsi *g);

/** The clock of the callbacks: CLOCK_MONOTONIC in microseconds. */
uint64_t droce_gsi_now_us(void);

/** Log @p msg at level info on droce's log: the rdma_cm layer has no
 *  DPDK of its own (the drop-in librdmacm.so.1 reaches droce only
 *  through the drop-in libibverbs.so.1). */
void droce_gsi_log_info(const char *msg);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_GSI_H */
