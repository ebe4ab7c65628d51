/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains and memory regions. Registration pins nothing: the
 * engine runs in this process and reaches the memory directly. What it
 * gives is the key, the bounds and the access rights every access is
 * checked against.
 */
#include <errno.h>
#include <stdlib.h>

#include "droce_verbs_priv.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

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

int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct droce_pd *pd = droce_pd_of(ibpd);

	if (__atomic_load_n(&pd->users, __ATOMIC_ACQUIRE) != 0)
		return EBUSY;
	free(pd);
	return 0;
}

/* What a region may be registered with: remote write and atomics need
 * local write too (IB spec 10.6.3.1; rdma-core's providers check it). */
static bool
access_ok(unsigned access)
{
	const unsigned known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			       IBV_ACCESS_RELAXED_ORDERING | IBV_ACCESS_OPTIONAL_RANGE |
			       IBV_ACCESS_MW_BIND;

	if (access & ~known)
		return false;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	struct droce_dev *d = droce_dev_of_ctx(ibpd->context);
	struct droce_pd *pd = droce_pd_of(ibpd);
	struct droce_mr *mr;
	int rc;

	if (!access_ok(access) || (addr == NULL && length > 0) ||
	    iova + length < iova) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr->ibv.context = ibpd->context;
	mr->ibv.pd = ibpd;
	mr->ibv.addr = addr;
	mr->ibv.length = length;
	mr->iova = iova;
	mr->base = addr;
	mr->length = length;
	/* Local read is implicit in every region. */
	mr->access = (int)access;
	mr->pd_handle = ibpd->handle;
	rc = droce_mr_publish(d->mrt, mr);
	if (rc != 0) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	__atomic_add_fetch(&pd->users, 1, __ATOMIC_RELAXED);
	return &mr->ibv;
}

struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

/*
 * Re-registration, with rdma-core's checks and return codes: a request
 * rdma-core refuses before it reaches the provider is IBV_REREG_MR_ERR_INPUT,
 * one the device refuses (as the kernel does: no flags, a bad PD or access)
 * IBV_REREG_MR_ERR_CMD; errno says why and the region is unchanged. The keys
 * stay the same, so peers keep using them.
 */
int
ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *ibpd, void *addr, size_t length,
	     int access)
{
	struct droce_dev *d = droce_dev_of_ctx(ibmr->context);
	struct droce_mr *mr = (struct droce_mr *)ibmr;
	struct droce_mr nv = *mr;
	struct ibv_pd *old_pd = ibmr->pd;

	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == NULL || length == 0)) ||
	    (access != 0 && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags == 0 ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (ibpd == NULL || ibpd->context != ibmr->context)) ||
	    ((flags & IBV_REREG_MR_CHANGE_ACCESS) && !access_ok((unsigned)access)) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (uintptr_t)addr + length < (uintptr_t)addr)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		nv.base = addr;
		nv.iova = (uintptr_t)addr;
		nv.length = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		nv.access = access;
	if (flags & IBV_REREG_MR_CHANGE_PD)
		nv.pd_handle = ibpd->handle;
	droce_mr_update(d->mrt, mr, &nv, d->rcu);
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ibmr->addr = addr;
		ibmr->length = length;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		__atomic_add_fetch(&droce_pd_of(ibpd)->users, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&droce_pd_of(old_pd)->users, 1, __ATOMIC_RELEASE);
		ibmr->pd = ibpd;
	}
	return 0;
}

int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct droce_dev *d = droce_dev_of_ctx(ibmr->context);
	struct droce_mr *mr = (struct droce_mr *)ibmr;

	if (!droce_mr_close_windows(mr))
		return EBUSY;
	droce_mr_unpublish(d->mrt, mr);
	/* An engine iteration may still hold the region it looked up. */
	droce_dev_sync(d);
	__atomic_sub_fetch(&droce_pd_of(ibmr->pd)->users, 1, __ATOMIC_RELEASE);
	free(mr);
	return 0;
}
