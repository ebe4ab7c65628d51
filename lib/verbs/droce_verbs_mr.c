/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions (their protection domains: droce_verbs_pd.c).
 * Registration pins nothing: the engine runs in this process and reaches
 * the memory directly. What it gives is the key, the bounds and the access
 * rights every access is checked against; and, for a port whose device
 * sends zero-copy payloads by DMA, the region registered with DPDK and
 * mapped for that device.
 *
 * Deregistration waits for the frames that still point into the region
 * (zero-copy TX), as rxe waits for its packets' references: up to
 * DROCE_MR_DEREG_WAIT_MS, running the engine meanwhile when nobody else
 * does; if some remain it fails with EBUSY and the region stays as it was.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_memory.h>
#include <rte_errno.h>

#include "droce_transport.h"
#include "droce_verbs_priv.h"

/** How long ibv_dereg_mr() waits for frames in flight before EBUSY. */
#define DROCE_MR_DEREG_WAIT_MS 1000

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

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

/* The rte_device behind the device's port, or NULL. */
static struct rte_device *
mr_dma_device(struct droce_dev *d)
{
	struct rte_eth_dev_info info;
	uint16_t port_id = droce_port_ethdev(d->port);

	if (droce_zc_port_mode(port_id) != DROCE_ZC_DMA ||
	    rte_eth_dev_info_get(port_id, &info) != 0)
		return NULL;
	return info.device;
}

/* The page-aligned span of @p mr, as DPDK registers external memory. */
static void
mr_dma_span(const struct droce_mr *mr, uint8_t **start, size_t *len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	*start = RTE_PTR_ALIGN_FLOOR(mr->base, pg);
	*len = RTE_ALIGN_CEIL((size_t)(mr->base + mr->length - *start), pg);
}

/*
 * Best effort: a device that reads zero-copy payloads by DMA needs the
 * region in DPDK's memory map and its IOMMU (IOVA = VA). When it fails,
 * the region's payloads are copied (tx_copy_unmapped).
 */
static void
mr_dma_map(struct droce_dev *d, struct droce_mr *mr)
{
	struct rte_device *dev = mr_dma_device(d);
	uint8_t *start;
	size_t len;

	if (dev == NULL || mr->length == 0)
		return;
	/* DPDK's own memory (rte_malloc(), mempools: what DPDK applications
	 * register) is mapped for every device already, at IOVA = VA. */
	if (rte_mem_virt2memseg_list(mr->base) != NULL &&
	    rte_mem_virt2memseg_list(mr->base + mr->length - 1) != NULL) {
		mr->dma_mapped = true;
		return;
	}
	mr_dma_span(mr, &start, &len);
	/* A region sharing a page with a mapped one fails here (EEXIST):
	 * it is copied, rather than unmapped under the other one later. */
	if (rte_extmem_register(start, len, NULL, 0, (size_t)sysconf(_SC_PAGESIZE)) != 0) {
		DROCE_LOG(INFO, "region %p+%zu: rte_extmem_register: %s", start, len,
			  rte_strerror(rte_errno));
		return;
	}
	if (rte_dev_dma_map(dev, start, (uint64_t)(uintptr_t)start, len) != 0) {
		DROCE_LOG(INFO, "region %p+%zu: rte_dev_dma_map: %s", start, len,
			  rte_strerror(rte_errno));
		rte_extmem_unregister(start, len);
		return;
	}
	mr->dma_mapped = mr->dma_mine = true;
}

static void
mr_dma_unmap(struct droce_dev *d, struct droce_mr *mr)
{
	struct rte_device *dev = mr_dma_device(d);
	uint8_t *start;
	size_t len;

	if (!mr->dma_mine || dev == NULL)
		return;
	mr_dma_span(mr, &start, &len);
	rte_dev_dma_unmap(dev, start, (uint64_t)(uintptr_t)start, len);
	rte_extmem_unregister(start, len);
	mr->dma_mapped = mr->dma_mine = false;
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
	/* Before the region has a key: no frame can point into it yet. */
	droce_zc_init();
	mr_dma_map(d, mr);
	rc = droce_mr_publish(d->mrt, mr);
	if (rc != 0) {
		mr_dma_unmap(d, mr);
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

bool
droce_dev_wait_refs(struct droce_dev *d, const uint32_t *refs, unsigned ms)
{
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() * ms / 1000;

	/* The frames leave with the engines' next TX bursts (or the fault
	 * stage's delays): run those nobody else runs. */
	while (__atomic_load_n(refs, __ATOMIC_ACQUIRE) != 0) {
		int work = 0;

		if (rte_get_timer_cycles() >= end)
			return false;
		for (unsigned i = 0; i < d->nb_engines; i++)
			if (droce_engine_wants_help(d->engines[i]))
				work += RTE_MAX(droce_engine_poll(d->engines[i]), 0);
		if (work == 0)
			sched_yield();
	}
	return true;
}

/*
 * Hide @p mr and wait until no frame points into it (zero-copy TX): it
 * stays hidden (lookups miss it, its key reserved) and @return true; or,
 * when some stay longer than DROCE_MR_DEREG_WAIT_MS, it is shown again as
 * it was and @return false.
 */
static bool
mr_drain(struct droce_dev *d, struct droce_mr *mr)
{
	droce_mr_hide(d->mrt, mr);
	/* An engine iteration may still hold the region it looked up (and
	 * be taking references on it). */
	droce_dev_sync(d);
	if (droce_dev_wait_refs(d, &mr->zc_refs, DROCE_MR_DEREG_WAIT_MS))
		return true;
	DROCE_LOG(NOTICE, "region 0x%x: %u frames in flight still point into it", mr->ibv.lkey,
		  __atomic_load_n(&mr->zc_refs, __ATOMIC_RELAXED));
	droce_mr_show(d->mrt, mr);
	return false;
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
	/* Frames in flight may point into the old memory, which the
	 * application may free once this returns: wait for them, as
	 * ibv_dereg_mr() does. */
	if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && !mr_drain(d, mr)) {
		errno = EBUSY;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION)
		mr_dma_unmap(d, mr);
	droce_mr_update(d->mrt, mr, &nv, d->rcu);
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr_dma_map(d, mr);
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
	if (!mr_drain(d, mr)) {
		/* Windows may bind to it again: it stays registered. */
		__atomic_store_n(&mr->mw_refs, 0, __ATOMIC_RELEASE);
		return EBUSY;
	}
	droce_mr_unpublish(d->mrt, mr);
	mr_dma_unmap(d, mr);
	__atomic_sub_fetch(&droce_pd_of(ibmr->pd)->users, 1, __ATOMIC_RELEASE);
	free(mr);
	return 0;
}
