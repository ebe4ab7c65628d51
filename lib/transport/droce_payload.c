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

/* Put the copy of @p pkt's payload to @p dst off to the next frame's check
 * (droce_payload_to_mem()), where it may wait. @return true when it waits. */
static bool
payload_defer(struct droce_tx *tx, void *dst, const struct rte_mbuf *m,
	      const struct droce_pkt *pkt)
{
	const void *flat;

	/* One at a time: the next frame's check makes it. */
	droce_side_copy_run(&tx->rx_copy);
	if (!tx->rx_defer || pkt->payload_len < DROCE_COPY_CRC_MIN ||
	    (flat = droce_mbuf_flat(m, pkt->payload_off, pkt->payload_len)) == NULL)
		return false;
	tx->rx_copy = (struct droce_side_copy){ .dst = dst, .src = flat, .n = pkt->payload_len };
	return true;
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
	const uint8_t *flat;
	void *dst;

	if (pkt->payload_len == 0)
		return 0;
	/* Into one SGE, checked as droce_sge_copy() checks it. */
	if (may_defer &&
	    (dst = droce_sge_one_addr(tx->mrt, pd_handle, sge, num_sge, offset, pkt->payload_len,
				      IBV_ACCESS_LOCAL_WRITE)) != NULL &&
	    payload_defer(tx, dst, m, pkt))
		return 0;
	flat = droce_mbuf_flat(m, pkt->payload_off, pkt->payload_len);
	if (flat != NULL)
		return sge_run(&t, 0, flat, pkt->payload_len) == 0 ? 0 : -EFAULT;
	return droce_mbuf_runs(m, pkt->payload_off, pkt->payload_len, sge_run, &t) == 0 ?
	       0 : -EFAULT;
}

void
droce_payload_to_mem(struct droce_tx *tx, void *dst, const struct rte_mbuf *m,
		     const struct droce_pkt *pkt, bool may_defer)
{
	if (may_defer && payload_defer(tx, dst, m, pkt))
		return;
	/* The parser checked that the frame holds the whole payload. */
	droce_mbuf_copy(m, pkt->payload_off, pkt->payload_len, dst);
}
