/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A congested switch port in software (see droce_bottleneck.h).
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include "droce_bottleneck.h"

static_assert(RTE_IS_POWER_OF_2(DROCE_BOTTLENECK_FRAMES), "bottleneck queue size");

/* An idle link sends its next frame at once, but builds up no more
 * credit than this (more than any frame, so every frame can go): a
 * switch port does not send faster for having been idle. */
#define BOTTLENECK_BURST_BYTES (64u * 1024u)

/* One writer (the engine); readers elsewhere see whole values. */
#define BN_SET(b, field, v) __atomic_store_n(&(b)->stats->field, (v), __ATOMIC_RELAXED)
#define BN_INC(b, field) BN_SET(b, field, (b)->stats->field + 1)

/* The two ECN bits of the IPv4 TOS / IPv6 traffic class (RFC 3168). */
#define ECN_MASK 0x3u
#define ECN_CE   0x3u

void
droce_bottleneck_init(struct droce_bottleneck *b, const struct droce_bottleneck_conf *c,
		      struct droce_bottleneck_stats *stats, uint64_t tsc_hz, uint64_t now)
{
	double bytes_per_s = (double)c->rate_mbps * 1e6 / 8;
	double per_tsc = bytes_per_s * 4294967296.0 / (double)tsc_hz;

	memset(b, 0, sizeof(*b));
	b->conf = *c;
	b->stats = stats;
	/* Rounded up: the link never falls behind its rate. */
	b->per_tsc = (uint64_t)per_tsc;
	if ((double)b->per_tsc < per_tsc)
		b->per_tsc++;
	if (b->per_tsc == 0)
		b->per_tsc = 1;
	b->credit_max = (uint64_t)BOTTLENECK_BURST_BYTES << 32;
	b->dt_max = (((uint64_t)c->queue_bytes << 32) + b->credit_max) / b->per_tsc + 1;
	b->drained_at = now;
}

void
droce_bottleneck_fini(struct droce_bottleneck *b)
{
	while (b->head != b->tail)
		rte_pktmbuf_free(b->q[b->head++ & (DROCE_BOTTLENECK_FRAMES - 1)]);
	b->queued_bytes = 0;
}

bool
droce_ecn_mark_ce(struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth;
	uint32_t off = sizeof(*eth);
	uint16_t type;

	/* Marking writes the header in place: only into a frame that is the
	 * bottleneck's alone, with its headers in the first segment. */
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1 ||
	    rte_pktmbuf_data_len(m) < off + sizeof(struct rte_vlan_hdr))
		return false;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	type = rte_be_to_cpu_16(eth->ether_type);
	if (type == RTE_ETHER_TYPE_VLAN) {
		const struct rte_vlan_hdr *vh = rte_pktmbuf_mtod_offset(m, const struct rte_vlan_hdr *, off);

		type = rte_be_to_cpu_16(vh->eth_proto);
		off += sizeof(*vh);
	}
	if (type == RTE_ETHER_TYPE_IPV4 &&
	    rte_pktmbuf_data_len(m) >= off + sizeof(struct rte_ipv4_hdr)) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, off);

		if ((ip->type_of_service & ECN_MASK) == 0)
			return false;
		ip->type_of_service |= ECN_CE;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		return true;
	}
	if (type == RTE_ETHER_TYPE_IPV6 &&
	    rte_pktmbuf_data_len(m) >= off + sizeof(struct rte_ipv6_hdr)) {
		struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, off);
		uint32_t vtc = rte_be_to_cpu_32(ip->vtc_flow);

		/* version(4) traffic class(8) flow label(20): ECN is the
		 * class's low two bits. */
		if (((vtc >> 20) & ECN_MASK) == 0)
			return false;
		ip->vtc_flow = rte_cpu_to_be_32(vtc | (ECN_CE << 20));
		return true;
	}
	return false;
}

void
droce_bottleneck_input(struct droce_bottleneck *b, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = rte_pktmbuf_pkt_len(m);

		if (b->tail - b->head == DROCE_BOTTLENECK_FRAMES ||
		    b->queued_bytes + len > b->conf.queue_bytes) {
			BN_INC(b, dropped);
			rte_pktmbuf_free(m);
			continue;
		}
		b->q[b->tail++ & (DROCE_BOTTLENECK_FRAMES - 1)] = m;
		b->queued_bytes += len;
		if (b->queued_bytes > b->stats->max_queue_bytes)
			BN_SET(b, max_queue_bytes, b->queued_bytes);
	}
}

uint16_t
droce_bottleneck_output(struct droce_bottleneck *b, struct rte_mbuf **pkts, uint16_t n,
			uint64_t now)
{
	uint64_t dt = now - b->drained_at;
	uint16_t out = 0;

	/* The link drained its queue all along, also while this thread was
	 * off its CPU: the credit of that time stays (frames leave in the
	 * next calls), but no more than a full queue and a burst, which also
	 * keeps the product within 64 bits. */
	if (dt > b->dt_max)
		dt = b->dt_max;
	b->drained_at = now;
	b->credit += dt * b->per_tsc;
	if (b->credit > b->dt_max * b->per_tsc)
		b->credit = b->dt_max * b->per_tsc;
	while (out < n && b->head != b->tail) {
		struct rte_mbuf *m = b->q[b->head & (DROCE_BOTTLENECK_FRAMES - 1)];
		uint64_t need = (uint64_t)rte_pktmbuf_pkt_len(m) << 32;

		if (b->credit < need)
			break;
		b->credit -= need;
		b->head++;
		/* Marked as it leaves, by the queue it leaves behind: the
		 * receiver learns of congestion a queueing delay sooner than
		 * with marking on arrival (as switches that mark at dequeue). */
		if (b->queued_bytes > b->conf.mark_bytes) {
			if (droce_ecn_mark_ce(m))
				BN_INC(b, marked);
			else
				BN_INC(b, not_ect);
		}
		b->queued_bytes -= rte_pktmbuf_pkt_len(m);
		BN_INC(b, frames);
		pkts[out++] = m;
	}
	/* An idle link builds up no credit beyond a burst. */
	if (b->head == b->tail && b->credit > b->credit_max)
		b->credit = b->credit_max;
	return out;
}
