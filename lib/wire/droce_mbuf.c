/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading received frames that may be chained: a driver with scattered
 * RX, memif with a small buffer size, af_packet with scatter, or a peer
 * whose MTU is larger than one mbuf all deliver a frame in several
 * segments. Headers are in the first segment (droce_pkt_parse() checks);
 * payload may be anywhere after them.
 */
#include <errno.h>
#include <string.h>

#include "droce_wire.h"

int
droce_mbuf_runs(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		droce_run_fn fn, void *arg)
{
	const struct rte_mbuf *seg = m;
	uint32_t pos = 0;
	int rc;

	if ((uint64_t)off + len > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	/* Skip the segments that end before @p off. */
	while (seg != NULL && off >= rte_pktmbuf_data_len(seg)) {
		off -= rte_pktmbuf_data_len(seg);
		seg = seg->next;
	}
	for (; seg != NULL && pos < len; seg = seg->next, off = 0) {
		uint32_t n = RTE_MIN(len - pos, (uint32_t)rte_pktmbuf_data_len(seg) - off);

		rc = fn(arg, pos, rte_pktmbuf_mtod_offset(seg, const uint8_t *, off), n);
		if (rc != 0)
			return rc;
		pos += n;
	}
	/* pkt_len promised more than the segments hold: a broken chain. */
	return pos == len ? 0 : -EINVAL;
}

static int
copy_run(void *arg, uint32_t pos, const void *data, uint32_t n)
{
	/* A zero-copy frame looped back inside the process points into a
	 * memory region, which the destination may overlap: droce_copy()
	 * keeps memmove()'s contract. */
	droce_copy((uint8_t *)arg + pos, data, n);
	return 0;
}

int
droce_mbuf_copy(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst)
{
	const uint8_t *flat = droce_mbuf_flat(m, off, len);

	if (flat != NULL)
		return copy_run(dst, 0, flat, len);
	return droce_mbuf_runs(m, off, len, copy_run, dst);
}

void
droce_mbuf_free_bulk(struct rte_mbuf **m, unsigned n)
{
	struct rte_mempool *mp;
	unsigned i;

	if (n == 0)
		return;
	mp = m[0]->pool;
	/* What rte_pktmbuf_prefree_seg() returns unchanged: the only
	 * reference, no chain, nothing attached. A pool's free mbufs are
	 * so (refcnt 1, next NULL, nb_segs 1). */
	for (i = 0; i < n; i++) {
		const struct rte_mbuf *s = m[i];

		if (s->pool != mp || rte_mbuf_refcnt_read(s) != 1 || s->next != NULL ||
		    s->nb_segs != 1 || !RTE_MBUF_DIRECT(s))
			break;
		__rte_mbuf_sanity_check(s, 1);
	}
	if (i == n)
		rte_mempool_put_bulk(mp, (void **)m, n);
	else
		rte_pktmbuf_free_bulk(m, n);
}

struct rte_mbuf *
droce_mbuf_split(const struct rte_mbuf *m, struct rte_mempool *mp, uint16_t seg)
{
	uint32_t len = rte_pktmbuf_pkt_len(m), off;
	struct rte_mbuf *head = NULL;

	for (off = 0; off < len; off += seg) {
		uint16_t n = (uint16_t)RTE_MIN((uint32_t)seg, len - off);
		struct rte_mbuf *s = rte_pktmbuf_alloc(mp);
		char *d = s != NULL ? rte_pktmbuf_append(s, n) : NULL;

		if (d == NULL || (head != NULL && rte_pktmbuf_chain(head, s) != 0)) {
			rte_pktmbuf_free(s);
			rte_pktmbuf_free(head);
			return NULL;
		}
		if (head == NULL)
			head = s;
		droce_mbuf_copy(m, off, n, d);
	}
	return head;
}
