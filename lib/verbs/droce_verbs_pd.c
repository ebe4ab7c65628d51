/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains, thread domains and parent domains.
 *
 * A PD is a handle that MRs, windows, QPs, SRQs and AHs carry; every
 * access is checked against it (pd_handle). A parent domain is a PD that
 * extends another one, as rdma-core's providers make it: it carries its
 * inner PD's handle, so an object created on the parent domain and one
 * created on the inner PD are in the same protection domain, and every
 * verb that takes a PD takes it. A thread domain is the application's
 * promise that one thread at a time uses the objects created on a parent
 * domain that holds it: their queues take no lock (droce_pd_single_thread()),
 * as the mlx5 and hns providers do.
 *
 * Who holds whom (EBUSY on dealloc while held): objects hold the PD or
 * parent domain they were created on, a parent domain holds its inner PD
 * and its thread domain.
 */
#include <errno.h>
#include <stdlib.h>

#include "droce_verbs_priv.h"

/** A thread domain. */
struct droce_td {
	struct ibv_td ibv;
	uint32_t users;              /**< parent domains holding it */
};

struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ctx)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	struct droce_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv.context = ctx;
	pd->ibv.handle = __atomic_add_fetch(&d->next_handle, 1, __ATOMIC_RELAXED);
	return &pd->ibv;
}

/* A PD or a parent domain: what the man page of ibv_alloc_parent_domain
 * says, ibv_dealloc_pd() frees either. */
int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct droce_pd *pd = droce_pd_of(ibpd);

	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	if (pd->inner != NULL)
		__atomic_sub_fetch(&pd->inner->users, 1, __ATOMIC_RELEASE);
	if (pd->td != NULL)
		__atomic_sub_fetch(&pd->td->users, 1, __ATOMIC_RELEASE);
	free(pd);
	return 0;
}

/* No attribute is defined yet: any bit is EINVAL, as in mlx5 (hns says
 * EOPNOTSUPP). */
static struct ibv_td *
droce_alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{
	struct droce_td *td;

	if (attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (td == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibv.context = ctx;
	return &td->ibv;
}

static int
droce_dealloc_td(struct ibv_td *ibtd)
{
	struct droce_td *td = (struct droce_td *)ibtd;

	if (__atomic_load_n(&td->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	free(td);
	return 0;
}

/*
 * rdma-core's rules: a PD is required (EINVAL), unknown comp_mask bits
 * are EINVAL. droce allocates its queues itself, so custom allocators are
 * EOPNOTSUPP, as in the efa and mana providers (rdma-core's own tests skip
 * on it); pd_context, which exists only to be handed to them, is accepted
 * and unused. A parent domain of a parent domain is EINVAL, as in efa.
 */
static struct ibv_pd *
droce_alloc_parent_domain(struct ibv_context *ctx, struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct droce_pd *inner = attr->pd != NULL ? droce_pd_of(attr->pd) : NULL;
	struct droce_td *td = (struct droce_td *)attr->td;
	struct droce_pd *pd;

	if (attr->comp_mask & ~known) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (inner == NULL || inner->ibv.context != ctx || inner->inner != NULL ||
	    (td != NULL && td->ibv.context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv.context = ctx;
	pd->ibv.handle = inner->ibv.handle;
	pd->inner = inner;
	__atomic_add_fetch(&inner->users, 1, __ATOMIC_RELAXED);
	pd->td = td;
	if (td != NULL)
		__atomic_add_fetch(&td->users, 1, __ATOMIC_RELAXED);
	return &pd->ibv;
}

bool
droce_pd_single_thread(struct ibv_pd *pd)
{
	return pd != NULL && droce_pd_of(pd)->td != NULL;
}

void
droce_pd_ops_set(struct verbs_context *vctx)
{
	vctx->alloc_td = droce_alloc_td;
	vctx->dealloc_td = droce_dealloc_td;
	vctx->alloc_parent_domain = droce_alloc_parent_domain;
}
