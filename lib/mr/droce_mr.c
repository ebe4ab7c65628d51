/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_random.h>

#include "droce_mr.h"
#include "droce_wire.h"

void
droce_mr_table_init(struct droce_mr_table *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	/* Slot 0 is never used: a key of 0 is what a zeroed SGE carries. */
	t->next = 1;
	for (uint32_t i = 0; i < DROCE_MR_MAX; i++)
		t->tag[i] = (uint8_t)rte_rand();
}

int
droce_mr_publish(struct droce_mr_table *t, struct droce_mr *mr)
{
	int rc = -ENOMEM;

	pthread_mutex_lock(&t->lock);
	for (uint32_t n = 0; n < DROCE_MR_MAX; n++) {
		uint32_t i = (t->next + n) % DROCE_MR_MAX;

		if (i == 0 || t->slot[i] != NULL)
			continue;
		t->tag[i]++;
		mr->ibv.lkey = mr->ibv.rkey = (i << 8) | t->tag[i];
		mr->ibv.handle = i;
		__atomic_store_n(&t->slot[i], mr, __ATOMIC_RELEASE);
		t->next = i + 1;
		t->count++;
		rc = 0;
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

/* What a hidden region's slot holds: no key matches its lkey of 0 (slot 0
 * is never used), so lookups miss, and registration skips the slot. */
static struct droce_mr mr_hidden;

void
droce_mr_unpublish(struct droce_mr_table *t, struct droce_mr *mr)
{
	pthread_mutex_lock(&t->lock);
	if (t->slot[mr->ibv.handle] == mr || t->slot[mr->ibv.handle] == &mr_hidden) {
		__atomic_store_n(&t->slot[mr->ibv.handle], NULL, __ATOMIC_RELEASE);
		t->count--;
	}
	pthread_mutex_unlock(&t->lock);
}

static void
mr_slot_swap(struct droce_mr_table *t, struct droce_mr *mr, struct droce_mr *from,
	     struct droce_mr *to)
{
	pthread_mutex_lock(&t->lock);
	if (t->slot[mr->ibv.handle] == from)
		__atomic_store_n(&t->slot[mr->ibv.handle], to, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
}

void
droce_mr_hide(struct droce_mr_table *t, struct droce_mr *mr)
{
	mr_slot_swap(t, mr, mr, &mr_hidden);
}

void
droce_mr_show(struct droce_mr_table *t, struct droce_mr *mr)
{
	mr_slot_swap(t, mr, &mr_hidden, mr);
}

void
droce_mr_update(struct droce_mr_table *t, struct droce_mr *mr, const struct droce_mr *nv,
		struct rte_rcu_qsbr *rcu)
{
	/* The slot stays this region's (the lock keeps registrations out)
	 * while it is empty and no engine holds the region any more. */
	pthread_mutex_lock(&t->lock);
	__atomic_store_n(&t->slot[mr->ibv.handle], NULL, __ATOMIC_RELEASE);
	rte_rcu_qsbr_synchronize(rcu, RTE_QSBR_THRID_INVALID);
	mr->iova = nv->iova;
	mr->base = nv->base;
	mr->length = nv->length;
	mr->access = nv->access;
	mr->pd_handle = nv->pd_handle;
	__atomic_store_n(&t->slot[mr->ibv.handle], mr, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->lock);
}

int
droce_sge_walk(const struct droce_mr_table *t, uint32_t pd_handle,
	       const struct ibv_sge *sge, unsigned num_sge, uint64_t offset, uint64_t len,
	       int access, droce_sge_run_fn fn, void *arg)
{
	uint64_t pos = 0;

	for (unsigned i = 0; i < num_sge && pos < len; i++) {
		struct droce_mr *mr;
		uint64_t n;
		uint8_t *addr;
		int rc;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		n = RTE_MIN(len - pos, sge[i].length - offset);
		mr = droce_mr_lookup(t, sge[i].lkey);
		addr = droce_mr_addr(mr, pd_handle, sge[i].addr + offset, n, access);
		if (addr == NULL)
			return -EFAULT;
		rc = fn(arg, mr, addr, pos, n);
		if (rc != 0)
			return rc;
		pos += n;
		offset = 0;
	}
	return pos == len ? 0 : -EFAULT;
}

struct sge_copy {
	uint8_t *buf;
	bool to_sge;
};

static int
sge_copy_run(void *arg, struct droce_mr *mr __rte_unused, uint8_t *addr, uint64_t pos,
	     uint64_t n)
{
	const struct sge_copy *c = arg;

	/* Either side may be a region a looped-back zero-copy frame points
	 * into, overlapping the other. */
	if (c->to_sge)
		droce_copy(addr, c->buf + pos, n);
	else
		droce_copy(c->buf + pos, addr, n);
	return 0;
}

/*
 * droce_sge_walk() with sge_copy_run(), but a run inside a list of one SGE
 * (the common post and receive) is copied at once, without the walk and
 * its callback; a list of one SGE that fails its checks goes to the walk,
 * which fails it.
 */
static int
sge_copy_walk(const struct droce_mr_table *t, uint32_t pd_handle, const struct ibv_sge *sge,
	      unsigned num_sge, uint64_t offset, uint64_t len, int access, struct sge_copy *c)
{
	uint8_t *addr = droce_sge_one_addr(t, pd_handle, sge, num_sge, offset, len, access);

	if (addr != NULL)
		return sge_copy_run(c, NULL, addr, 0, len);
	return droce_sge_walk(t, pd_handle, sge, num_sge, offset, len, access, sge_copy_run, c);
}

int
droce_sge_copy(const struct droce_mr_table *t, uint32_t pd_handle,
	       const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
	       void *buf, uint64_t len, bool to_sge)
{
	struct sge_copy c = { .buf = buf, .to_sge = to_sge };

	if (!to_sge)
		return droce_sge_read(t, pd_handle, sge, num_sge, offset, buf, len, 0);
	return sge_copy_walk(t, pd_handle, sge, num_sge, offset, len, IBV_ACCESS_LOCAL_WRITE, &c);
}

int
droce_sge_read(const struct droce_mr_table *t, uint32_t pd_handle,
	       const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
	       void *buf, uint64_t len, int access)
{
	struct sge_copy c = { .buf = buf, .to_sge = false };

	return sge_copy_walk(t, pd_handle, sge, num_sge, offset, len, access, &c);
}
