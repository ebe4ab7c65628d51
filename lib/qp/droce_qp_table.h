/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * QPN allocation and lookup for one device.
 *
 * Lookups (the engine, per received packet) are lock-free reads of an
 * rte_hash in RW_CONCURRENCY_LF mode under the device's RCU; insertions and
 * removals are serialised by the table's mutex. A removed key's slot is
 * freed only after a grace period, so a reader never sees it reused.
 *
 * QPNs are handed out in rotation rather than lowest-free first, so a QPN
 * just released is the last to come back: stray packets for a destroyed
 * QP find no QP rather than its successor.
 */
#ifndef DROCE_QP_TABLE_H
#define DROCE_QP_TABLE_H

#include <stdint.h>
#include <pthread.h>

#include <rte_hash.h>

#ifdef __cplusplus
extern "C" {
#endif

struct droce_qp;

/** Lowest QPN handed out (QP0 and QP1 are the special QPs; rxe starts at 0x11). */
#define DROCE_QPN_FIRST 0x11u

struct droce_qp_table {
	struct rte_hash *hash;
	pthread_mutex_t lock;
	uint32_t next;               /**< next QPN to try */
	uint32_t max;                /**< most QPs at once */
	uint32_t count;
};

/** @return 0 or a negative errno. @p name must be unique in the process. */
int droce_qp_table_init(struct droce_qp_table *t, const char *name, uint32_t max, int socket);

void droce_qp_table_fini(struct droce_qp_table *t);

/** Pick a free QPN for @p qp, set qp->qpn and publish it. @return 0 or -ENOMEM. */
int droce_qp_table_add(struct droce_qp_table *t, struct droce_qp *qp);

/**
 * Unpublish @p qpn. @return the hash position to hand to
 * droce_qp_table_release() after a grace period, or a negative errno.
 */
int32_t droce_qp_table_remove(struct droce_qp_table *t, uint32_t qpn);

/** Free the slot of a removed QPN (after an RCU grace period). */
void droce_qp_table_release(struct droce_qp_table *t, int32_t pos);

/** Engine side: the QP with number @p qpn, or NULL. */
static inline struct droce_qp *
droce_qp_table_lookup(const struct droce_qp_table *t, uint32_t qpn)
{
	void *qp;

	if (rte_hash_lookup_data(t->hash, &qpn, &qp) < 0)
		return NULL;
	return qp;
}

#ifdef __cplusplus
}
#endif
#endif /* DROCE_QP_TABLE_H */
