/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_random.h>

#include "droce_mw.h"

/* The rights a window may grant (local rights mean nothing to a window). */
#define MW_ACCESS (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE)

void
droce_mw_table_init(struct droce_mw_table *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	for (uint32_t i = 0; i < DROCE_MW_MAX; i++)
		t->tag[i] = (uint8_t)rte_rand();
}

int
droce_mw_publish(struct droce_mw_table *t, struct droce_mw *mw)
{
	int rc = -ENOMEM;

	rte_spinlock_init(&mw->lock);
	mw->state = mw->ibv.type == IBV_MW_TYPE_1 ? DROCE_MW_VALID : DROCE_MW_FREE;
	pthread_mutex_lock(&t->lock);
	for (uint32_t n = 0; n < DROCE_MW_MAX; n++) {
		uint32_t i = (t->next + n) % DROCE_MW_MAX;

		if (t->slot[i] != NULL)
			continue;
		t->tag[i]++;
		mw->key = mw->ibv.rkey = DROCE_MW_KEY_BIT | (i << 8) | t->tag[i];
		mw->ibv.handle = i;
		__atomic_store_n(&t->slot[i], mw, __ATOMIC_RELEASE);
		t->next = i + 1;
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void
droce_mw_unpublish(struct droce_mw_table *t, struct droce_mw *mw)
{
	pthread_mutex_lock(&t->lock);
	if (t->slot[mw->ibv.handle] == mw)
		__atomic_store_n(&t->slot[mw->ibv.handle], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
}

/* Let go of the region a window is bound to; under the window's lock. */
static void
mw_unbind(struct droce_mw *mw)
{
	if (mw->mr != NULL)
		__atomic_sub_fetch(&mw->mr->mw_refs, 1, __ATOMIC_RELEASE);
	mw->mr = NULL;
	mw->length = 0;
}

void
droce_mw_release(struct droce_mw *mw)
{
	rte_spinlock_lock(&mw->lock);
	mw_unbind(mw);
	mw->state = DROCE_MW_INVALID;
	rte_spinlock_unlock(&mw->lock);
}

/* The window whose key has the index of @p key (its key byte may differ). */
static struct droce_mw *
mw_get(const struct droce_mr_table *mrt, uint32_t key)
{
	uint32_t idx = (key >> 8) - DROCE_MR_MAX;

	if (!droce_key_is_mw(key) || idx >= DROCE_MW_MAX)
		return NULL;
	return __atomic_load_n(&mrt->mwt->slot[idx], __ATOMIC_ACQUIRE);
}

/* A new window on @p mr: none once ibv_dereg_mr() has taken the region. */
static bool
mr_hold(struct droce_mr *mr)
{
	uint32_t v = __atomic_load_n(&mr->mw_refs, __ATOMIC_RELAXED);

	do {
		if (v & DROCE_MR_DYING)
			return false;
	} while (!__atomic_compare_exchange_n(&mr->mw_refs, &v, v + 1, false, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

bool
droce_mr_close_windows(struct droce_mr *mr)
{
	uint32_t idle = 0;

	/* From here no window binds to it; one bound now keeps it. */
	return __atomic_compare_exchange_n(&mr->mw_refs, &idle, DROCE_MR_DYING, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The checks of a bind, under the window's lock (rxe_check_bind_mw()'s, and PDs). */
static bool
bind_ok(const struct droce_mw *mw, const struct droce_mr *mr, uint32_t pd_handle,
	const struct droce_mw_bind *b)
{
	if (mw->key != b->mw_key || mw->pd_handle != pd_handle || (b->access & ~MW_ACCESS))
		return false;
	if (mw->ibv.type == IBV_MW_TYPE_1) {
		/* o10-36.2.2: type 1 windows are never zero-based. */
		if (mw->state != DROCE_MW_VALID || (b->access & IBV_ACCESS_ZERO_BASED))
			return false;
	} else if (mw->state != DROCE_MW_FREE || mr == NULL) {
		/* o10-37.2.30: a bound type 2 window is invalidated first;
		 * o10-37.2.40: it binds to a region, with a length. */
		return false;
	}
	if (mr == NULL)
		return true;
	/* C10-72: one PD; C10-73: the region allows binding; C10-74: remote
	 * write and atomics need local write on the region; C10-75: the
	 * window lies inside the region. */
	if (mr->pd_handle != pd_handle || !(mr->access & IBV_ACCESS_MW_BIND))
		return false;
	if ((b->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	return b->addr >= mr->iova && b->length <= mr->length &&
	       b->addr - mr->iova <= mr->length - b->length;
}

bool
droce_mw_bind(const struct droce_mr_table *mrt, uint32_t qpn, uint32_t pd_handle,
	      const struct droce_mw_bind *b)
{
	struct droce_mw *mw = mw_get(mrt, b->mw_key);
	struct droce_mr *mr = NULL;
	bool ok;

	if (mw == NULL)
		return false;
	/* Length 0 binds to nothing (a type 1 window is unbound so). */
	if (b->length > 0 && (mr = droce_mr_lookup(mrt, b->mr_lkey)) == NULL)
		return false;
	rte_spinlock_lock(&mw->lock);
	ok = bind_ok(mw, mr, pd_handle, b) && (mr == NULL || mr_hold(mr));
	if (ok) {
		mw_unbind(mw);
		mw->key = (mw->key & ~0xffu) | (b->new_key & 0xffu);
		mw->access = (int)b->access;
		mw->addr = b->addr;
		mw->length = b->length;
		mw->mr = mr;
		mw->qpn = qpn;
		mw->state = DROCE_MW_VALID;
	}
	rte_spinlock_unlock(&mw->lock);
	return ok;
}

bool
droce_key_invalidate(const struct droce_mr_table *mrt, uint32_t pd_handle, uint32_t key)
{
	struct droce_mw *mw = mw_get(mrt, key);
	bool ok;

	if (mw == NULL)
		return false;
	rte_spinlock_lock(&mw->lock);
	/* o10-37.2.26: a type 1 window is not invalidated, only rebound. */
	ok = mw->key == key && mw->ibv.type == IBV_MW_TYPE_2 && mw->state == DROCE_MW_VALID &&
	     mw->pd_handle == pd_handle;
	if (ok) {
		mw_unbind(mw);
		mw->state = DROCE_MW_FREE;
	}
	rte_spinlock_unlock(&mw->lock);
	return ok;
}

uint8_t *
droce_mw_addr(const struct droce_mr_table *mrt, uint32_t qpn, uint32_t rkey,
	      uint32_t pd_handle, uint64_t va, uint64_t len, int access)
{
	struct droce_mw *mw = mw_get(mrt, rkey);
	uint8_t *p = NULL;
	uint64_t iova;

	if (mw == NULL)
		return NULL;
	rte_spinlock_lock(&mw->lock);
	if (mw->key != rkey || mw->state != DROCE_MW_VALID || mw->mr == NULL ||
	    mw->pd_handle != pd_handle || (mw->access & access) != access ||
	    (mw->ibv.type == IBV_MW_TYPE_2 && mw->qpn != qpn))
		goto out;
	/* A zero-based window is addressed from 0, others by the region's iova. */
	iova = (mw->access & IBV_ACCESS_ZERO_BASED) ? 0 : mw->addr;
	if (va < iova || len > mw->length || va - iova > mw->length - len)
		goto out;
	/* The region checks its own bounds again: ibv_rereg_mr() may have
	 * moved it since the bind. Its remote rights are the window's. */
	p = droce_mr_addr(mw->mr, mw->mr->pd_handle, mw->addr + (va - iova), len, 0);
out:
	rte_spinlock_unlock(&mw->lock);
	return p;
}
