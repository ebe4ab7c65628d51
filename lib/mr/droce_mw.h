/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Memory windows (IBA 10.6.7), type 1 and type 2B, as rxe has them.
 *
 * A window is a remote key onto part of a memory region bound to it. Its
 * keys live in their own table, beside the regions': a window key has bit
 * 24 set (index DROCE_MR_MAX + i), which no region key has, so a key
 * names either a region or a window, never both. The low byte is the key
 * byte the consumer chooses at each bind (ibv_inc_rkey()), so a peer that
 * kept the key of an earlier binding reaches nothing.
 *
 * Binds and invalidations run in the engine, in send-queue order (both
 * types are bound by a work request, as rxe turns ibv_bind_mw() into one);
 * SEND with invalidate runs in the engine too. Allocation and
 * deallocation run in application threads; a window is unpublished and
 * freed only after an RCU grace period, as regions are. Each window's
 * binding is under its own spinlock, so an engine that checks a remote
 * access sees a whole binding, never half of a new one.
 */
#ifndef DROCE_MW_H
#define DROCE_MW_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_spinlock.h>

#include "droce_mr.h"
#include "droce_qp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most windows one device allocates. */
#define DROCE_MW_MAX (1u << 14)

/** Bit of a key that says "window". */
#define DROCE_MW_KEY_BIT (DROCE_MR_MAX << 8)

/** Window states (rxe's names). */
enum droce_mw_state {
	DROCE_MW_INVALID = 0,        /**< deallocated */
	DROCE_MW_FREE,               /**< type 2: not bound (allocated or invalidated) */
	DROCE_MW_VALID,              /**< type 1 always (maybe bound to nothing), type 2 bound */
};

/** One window. */
struct droce_mw {
	struct ibv_mw ibv;           /**< what the application sees (ibv.rkey its idea of the key) */
	uint32_t pd_handle;
	rte_spinlock_t lock;         /**< the binding below */
	uint32_t key;                /**< the key the window answers to now */
	uint8_t state;               /**< enum droce_mw_state */
	int access;                  /**< IBV_ACCESS_* of the binding */
	uint64_t addr, length;       /**< the bound range (zero-based: addr is its start in the MR) */
	struct droce_mr *mr;         /**< bound region (holds one of its mw_refs), or NULL */
	uint32_t qpn;                /**< type 2: the QP it is bound through */
};

/** The window table of one device. */
struct droce_mw_table {
	pthread_mutex_t lock;        /**< serialises allocation and release */
	struct droce_mw *slot[DROCE_MW_MAX];
	uint8_t tag[DROCE_MW_MAX];
	uint32_t next;
};

/** Initialise an empty table. */
void droce_mw_table_init(struct droce_mw_table *t);

/** Give a new window (state set by its type) a key and publish it. @return 0 or -ENOMEM. */
int droce_mw_publish(struct droce_mw_table *t, struct droce_mw *mw);

/** Remove @p mw from the table; lookups that start after this miss it. */
void droce_mw_unpublish(struct droce_mw_table *t, struct droce_mw *mw);

/** Drop the binding of an unpublished window nobody can reach any more. */
void droce_mw_release(struct droce_mw *mw);

/**
 * ibv_dereg_mr(): take @p mr from the windows, unless one is bound to it
 * (then the region stays, EBUSY, as in rxe). @return true when none is.
 */
bool droce_mr_close_windows(struct droce_mr *mr);

static inline bool
droce_key_is_mw(uint32_t key)
{
	return (key & DROCE_MW_KEY_BIT) != 0;
}

/** Binds and local invalidations: send WQEs the requester does itself. */
static inline bool
droce_wr_is_local(uint32_t op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

/** What a bind work request asks for (carried in the send WQE). */
struct droce_mw_bind {
	uint32_t mw_key;             /**< the window's key when the request was posted */
	uint32_t new_key;            /**< its new key (only the low byte counts) */
	uint32_t mr_lkey;            /**< the region; 0 with length 0 unbinds (type 1) */
	uint32_t access;             /**< IBV_ACCESS_* of the window */
	uint64_t addr, length;
};

/*
 * A bind request rides in the send WQE's remote-operation fields, which a
 * bind does not otherwise use (it has no SGEs, so the data area may be
 * too small for it).
 */
static inline void
droce_wqe_bind_set(struct droce_send_wqe *w, const struct droce_mw_bind *b)
{
	w->invalidate_rkey = b->mw_key;
	w->rkey = b->new_key;
	w->swap = b->mr_lkey;
	w->imm = b->access;
	w->remote_addr = b->addr;
	w->compare_add = b->length;
}

static inline void
droce_wqe_bind_get(const struct droce_send_wqe *w, struct droce_mw_bind *b)
{
	b->mw_key = w->invalidate_rkey;
	b->new_key = w->rkey;
	b->mr_lkey = (uint32_t)w->swap;
	b->access = w->imm;
	b->addr = w->remote_addr;
	b->length = w->compare_add;
}

/**
 * Engine side: bind a window for a request of QP @p qpn in PD @p pd_handle,
 * with every check rxe makes (IBA C10-72..75, o10-36.2.2, o10-37.2.30/40).
 * @return true, or false: the request completes with IBV_WC_MW_BIND_ERR.
 */
bool droce_mw_bind(const struct droce_mr_table *mrt, uint32_t qpn, uint32_t pd_handle,
		   const struct droce_mw_bind *b);

/**
 * Engine side: invalidate the key @p key (LOCAL_INV, or a received SEND
 * with invalidate) for a QP of PD @p pd_handle. Only type 2 windows
 * can be invalidated: droce has no fast-registration regions, and rxe
 * refuses a region registered by ibv_reg_mr() or a type 1 window alike.
 * @return true when the key was invalidated.
 */
bool droce_key_invalidate(const struct droce_mr_table *mrt, uint32_t pd_handle, uint32_t key);

/** Engine side: droce_rkey_addr() for a window key. */
uint8_t *droce_mw_addr(const struct droce_mr_table *mrt, uint32_t qpn, uint32_t rkey,
		       uint32_t pd_handle, uint64_t va, uint64_t len, int access);

/**
 * Engine side: the process address of [va, va + len) reached by remote
 * key @p rkey with @p access, for a request of QP @p qpn in PD
 * @p pd_handle; NULL when the region or window refuses it. A window checks
 * its own key, state, PD, QP (type 2), rights and bounds, then reaches its
 * region's memory whatever the region's own remote rights.
 */
static inline uint8_t *
droce_rkey_addr(const struct droce_mr_table *mrt, uint32_t qpn, uint32_t rkey,
		uint32_t pd_handle, uint64_t va, uint64_t len, int access)
{
	if (droce_key_is_mw(rkey))
		return droce_mw_addr(mrt, qpn, rkey, pd_handle, va, len, access);
	return droce_mr_addr(droce_mr_lookup(mrt, rkey), pd_handle, va, len, access);
}

#ifdef __cplusplus
}
#endif
#endif /* DROCE_MW_H */
