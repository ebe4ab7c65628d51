/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The payload of a received packet into memory: receive SGEs, a memory
 * region, a READ's local buffers. A frame may come in several segments;
 * each segment's run is copied where it belongs.
 */
#include <errno.h>
#include <string.h>

#include "droce_transport.h"

struct to_sge {
	const struct droce_mr_table *mrt;
	uint32_t pd_handle;
	const struct ibv_sge *sge;
	unsigned num_sge;
	uint64_t offset;
};

static int
sge_run(void *arg, uint32_t pos, const void *data, uint32_t n)
{
	const struct to_sge *t = arg;

	return droce_sge_copy(t->mrt, t->pd_handle, t->sge, t->num_sge, t->offset + pos,
			      (void *)(uintptr_t)data, n, true);
}

int
droce_payload_to_sge(struct droce_tx *tx, uint32_t pd_handle,
		     const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
		     const struct rte_mbuf *m, const struct droce_pkt *pkt, bool may_defer)
{
	struct to_sge t = {
		.mrt = tx->mrt, .pd_handle = pd_handle, .sge = sge, .num_sge = num_sge,
		.offset = offset,
	};
	const void *flat;
	void *dst;

	if (pkt->payload_len == 0)
		return 0;
	/* Into one SGE, checked as droce_sge_copy() checks it. */
	if (may_defer && (flat = droce_payload_waitable(tx, m, pkt)) != NULL &&
	    (dst = droce_sge_one_addr(tx->mrt, pd_handle, sge, num_sge, offset, pkt->payload_len,
				      IBV_ACCESS_LOCAL_WRITE)) != NULL) {
		droce_payload_wait(tx, dst, flat, pkt->payload_len);
		return 0;
	}
	flat = droce_mbuf_flat(m, pkt->payload_off, pkt->payload_len);
	if (flat != NULL)
		return sge_run(&t, 0, flat, pkt->payload_len) == 0 ? 0 : -EFAULT;
	return droce_mbuf_runs(m, pkt->payload_off, pkt->payload_len, sge_run, &t) == 0 ?
	       0 : -EFAULT;
}
