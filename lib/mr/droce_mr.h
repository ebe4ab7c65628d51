/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Memory regions: the key table and the checks every access goes through.
 *
 * A key is (table index << 8 | 8-bit tag). The tag changes every time an
 * index is reused, so a stale key held by a peer does not reach the new
 * region that took its slot. The lkey and rkey of a region are equal, as
 * in rxe.
 *
 * Lookups run in the engine under the device's RCU (QSBR): a region is
 * unpublished first and freed only after a grace period.
 *
 * Zero-copy transmission lets frames in a TX queue point into a region
 * (external-buffer mbufs): each such frame holds a reference on the
 * region (@ref droce_mr.zc_refs), dropped when the driver frees the mbuf.
 * A region is freed only once none is left (docs/reliability.md).
 */
#ifndef DROCE_MR_H
#define DROCE_MR_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>

#include <infiniband/verbs.h>
#include <rte_rcu_qsbr.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most regions one device registers. */
#define DROCE_MR_MAX (1u << 16)

/** One registered region. */
struct droce_mr {
	struct ibv_mr ibv;           /**< what the application sees */
	uint64_t iova;               /**< first address peers and SGEs use */
	uint8_t *base;               /**< process address of iova */
	uint64_t length;
	int access;                  /**< IBV_ACCESS_* */
	uint32_t pd_handle;          /**< protection domain it belongs to */
	/** Windows bound to it, and DROCE_MR_DYING once ibv_dereg_mr() took it
	 *  (no window binds to it after that); droce_mw.h. */
	uint32_t mw_refs;
	/** Frame segments in TX queues that point into the region (zero-copy
	 *  TX); taken by the engine, dropped by whoever frees the mbuf. */
	uint32_t zc_refs;
	/** The region is registered with DPDK and mapped for DMA by the
	 *  device's port (rte_extmem_register(), rte_dev_dma_map()), or lies
	 *  in DPDK's own memory, mapped already. */
	bool dma_mapped;
	bool dma_mine;               /**< mapped by droce: unmapped at deregistration */
};

/** droce_mr.mw_refs: the region is being deregistered. */
#define DROCE_MR_DYING (1u << 31)

struct droce_mw_table;

/** The key table of one device. */
struct droce_mr_table {
	pthread_mutex_t lock;        /**< serialises register and deregister */
	struct droce_mr *slot[DROCE_MR_MAX];
	uint8_t tag[DROCE_MR_MAX];
	uint32_t next;               /**< where the search for a free slot starts */
	uint32_t count;
	struct droce_mw_table *mwt;  /**< the device's memory windows (droce_mw.h) */
};

/** Initialise an empty table. */
void droce_mr_table_init(struct droce_mr_table *t);

/** Give @p mr a key and publish it. @return 0 or -ENOMEM when full. */
int droce_mr_publish(struct droce_mr_table *t, struct droce_mr *mr);

/** Remove @p mr from the table; lookups that start after this miss it. */
void droce_mr_unpublish(struct droce_mr_table *t, struct droce_mr *mr);

/**
 * Hide the published @p mr: lookups that start after this miss it, but its
 * slot (and so its key) stays reserved until droce_mr_unpublish() or
 * droce_mr_show(). Deregistration hides a region while it waits for the
 * frames that still point into it.
 */
void droce_mr_hide(struct droce_mr_table *t, struct droce_mr *mr);

/** Undo droce_mr_hide(): lookups find @p mr again, with the same key. */
void droce_mr_show(struct droce_mr_table *t, struct droce_mr *mr);

/**
 * Give the published @p mr the range, rights and PD of @p nv, keeping its
 * key: lookups miss it until no engine can still hold the old values
 * (one grace period of @p rcu), then find the new ones.
 */
void droce_mr_update(struct droce_mr_table *t, struct droce_mr *mr, const struct droce_mr *nv,
		     struct rte_rcu_qsbr *rcu);

/** Engine side: the region with key @p key, or NULL. */
static inline struct droce_mr *
droce_mr_lookup(const struct droce_mr_table *t, uint32_t key)
{
	struct droce_mr *mr = __atomic_load_n(&t->slot[(key >> 8) % DROCE_MR_MAX],
					      __ATOMIC_ACQUIRE);

	if (mr == NULL || mr->ibv.lkey != key)
		return NULL;
	return mr;
}

/**
 * Check that [va, va + len) lies inside @p mr, that the region belongs to
 * protection domain @p pd_handle and allows @p access.
 * @return the process address of @p va, or NULL when any check fails.
 */
static inline uint8_t *
droce_mr_addr(const struct droce_mr *mr, uint32_t pd_handle, uint64_t va,
	      uint64_t len, int access)
{
	if (mr == NULL || mr->pd_handle != pd_handle ||
	    (mr->access & access) != access)
		return NULL;
	if (va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
		return NULL;
	return mr->base + (va - mr->iova);
}

/**
 * The common post and receive: a list of one SGE that holds the whole run
 * of @p len bytes from @p offset. @return the run's process address, when
 * the list is one SGE that holds the run and its key, bounds and rights
 * check as droce_mr_addr() says; NULL otherwise, for droce_sge_walk() to
 * take the list apart (or to fail it).
 */
static inline uint8_t *
droce_sge_one_addr(const struct droce_mr_table *t, uint32_t pd_handle,
		   const struct ibv_sge *sge, unsigned num_sge, uint64_t offset, uint64_t len,
		   int access)
{
	if (num_sge != 1 || len == 0 || offset >= sge->length || len > sge->length - offset)
		return NULL;
	return droce_mr_addr(droce_mr_lookup(t, sge->lkey), pd_handle, sge->addr + offset, len,
			     access);
}

/**
 * What droce_sge_walk() hands over: @p n bytes at @p addr of region @p mr,
 * the run at byte @p pos of the walk. @return 0 to go on, else stop with it.
 */
typedef int (*droce_sge_run_fn)(void *arg, struct droce_mr *mr, uint8_t *addr, uint64_t pos,
				uint64_t n);

/**
 * Walk @p len bytes of a list of SGEs that start @p offset bytes into the
 * list, one run per SGE touched. Each SGE's lkey is checked against @p t,
 * @p pd_handle and @p access before its run is handed to @p fn.
 * @return 0, what @p fn returned when not 0, or -EFAULT when a key, bound
 * or permission check fails or the list is shorter than offset + len.
 */
int droce_sge_walk(const struct droce_mr_table *t, uint32_t pd_handle,
		   const struct ibv_sge *sge, unsigned num_sge, uint64_t offset, uint64_t len,
		   int access, droce_sge_run_fn fn, void *arg);

/**
 * Copy between a flat buffer and a list of SGEs that start @p offset
 * bytes into the list. Each SGE's lkey is checked against @p t, @p pd_handle
 * and @p access (IBV_ACCESS_LOCAL_WRITE for data written into the list).
 * @p to_sge chooses the direction.
 * @return 0, or -EFAULT when a key, bound or permission check fails, or the
 * list is shorter than offset + len.
 */
int droce_sge_copy(const struct droce_mr_table *t, uint32_t pd_handle,
		   const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
		   void *buf, uint64_t len, bool to_sge);

/**
 * Copy @p len bytes of a list of SGEs, from @p offset bytes into it, to
 * @p buf, each SGE checked for @p access (0: local read, implicit in every
 * region; IBV_ACCESS_REMOTE_READ for a READ response).
 * @return 0 or -EFAULT, as droce_sge_copy().
 */
int droce_sge_read(const struct droce_mr_table *t, uint32_t pd_handle,
		   const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
		   void *buf, uint64_t len, int access);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_MR_H */
