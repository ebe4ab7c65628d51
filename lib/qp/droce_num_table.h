/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * 24-bit object numbers, allocation and lookup, for one device: QPNs, and
 * the numbers XRC SRQs are addressed by.
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
#ifndef DROCE_NUM_TABLE_H
#define DROCE_NUM_TABLE_H

#include <stdint.h>
#include <pthread.h>

#include <rte_hash.h>

#include "droce_tsan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Lowest number handed out (QP0 and QP1 are the special QPs; rxe starts at 0x11). */
#define DROCE_QPN_FIRST 0x11u
/** Numbers are 24 bits, like QPNs on the wire. */
#define DROCE_NUM_MASK 0xffffffu

struct droce_num_table {
	struct rte_hash *hash;
	pthread_mutex_t lock;
	uint32_t next;               /**< next QPN to try */
	uint32_t max;                /**< most QPs at once */
	uint32_t count;
	/** Bumped by every removal (release): who keeps numbers' objects
	 *  across RCU read-side sections (the engines' QP caches) drops them
	 *  when it changes. */
	uint32_t gen;
};

/** @return 0 or a negative errno. @p name must be unique in the process. */
int droce_num_table_init(struct droce_num_table *t, const char *name, uint32_t max, int socket);

void droce_num_table_fini(struct droce_num_table *t);

/** Pick a free number for @p obj, store it in *@p num, publish. @return 0 or -ENOMEM. */
int droce_num_table_add(struct droce_num_table *t, void *obj, uint32_t *num);

/**
 * droce_num_table_add() for a number whose low bits are @p residue
 * (num & @p mask == @p residue; @p mask one less than a power of two):
 * the QPNs of one engine (droce_qpn_engine()). @return 0 or -ENOMEM.
 */
int droce_num_table_add_in(struct droce_num_table *t, void *obj, uint32_t mask,
			   uint32_t residue, uint32_t *num);

/**
 * Publish @p obj under the fixed number @p num (a special QP such as
 * QP1, which droce_num_table_add() never hands out). @return 0, -EEXIST
 * or -ENOMEM.
 */
int droce_num_table_add_at(struct droce_num_table *t, void *obj, uint32_t num);

/**
 * Unpublish @p qpn. @return the hash position to hand to
 * droce_num_table_release() after a grace period, or a negative errno.
 */
int32_t droce_num_table_remove(struct droce_num_table *t, uint32_t qpn);

/** Free the slot of a removed QPN (after an RCU grace period). */
void droce_num_table_release(struct droce_num_table *t, int32_t pos);

/** Engine side: the object with number @p num, or NULL. */
static inline void *
droce_num_table_lookup(const struct droce_num_table *t, uint32_t num)
{
	void *obj;

	if (rte_hash_lookup_data(t->hash, &num, &obj) < 0)
		return NULL;
	/* rte_hash orders the object's set-up before this, out of TSan's view. */
	DROCE_TSAN_ACQUIRE(obj);
	return obj;
}

#ifdef __cplusplus
}
#endif
#endif /* DROCE_NUM_TABLE_H */
