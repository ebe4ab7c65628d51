/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fault stage. Each frame draws one number per action, always all of
 * them and in the same order, so the actions depend only on the seed and
 * the frames. Frames that go on wait in the ready queue for the caller;
 * frames held back wait in the delay queue (their due times ascend, as
 * the delay is the same for all) or in the one reorder slot.
 */
#include <assert.h>
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "droce_fault.h"

#define READY_MASK (DROCE_FAULT_READY - 1)
#define DELAYED_MASK (DROCE_FAULT_DELAYED - 1)
static_assert(RTE_IS_POWER_OF_2(DROCE_FAULT_READY), "ready queue size");
static_assert(RTE_IS_POWER_OF_2(DROCE_FAULT_DELAYED), "delay queue size");

/* Probabilities are compared as 53-bit fractions: a double's precision,
 * and 1.0 becomes a threshold no draw reaches. */
#define PROB_BITS 53

#define FAULT_STAT(f, field) \
	__atomic_store_n(&(f)->stats->field, (f)->stats->field + 1, __ATOMIC_RELAXED)

/* splitmix64 (Steele, Lea, Flood): full period, good enough for choosing
 * faults, and a state that any seed, 0 included, starts well. */
static uint64_t
fault_next(struct droce_fault *f)
{
	uint64_t z = (f->rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A draw in [0, n), by multiplication rather than modulo (no bias worth
 * the name for the frame lengths drawn here). */
static uint32_t
fault_below(struct droce_fault *f, uint32_t n)
{
	return (uint32_t)((fault_next(f) >> 32) * n >> 32);
}

static void
fault_update_busy(struct droce_fault *f)
{
	f->busy = f->armed || f->held != NULL || f->rd_tail != f->rd_head ||
		  f->dl_tail != f->dl_head;
}

static uint32_t
fault_free(const struct droce_fault *f)
{
	return DROCE_FAULT_READY - (f->rd_tail - f->rd_head);
}

/* Callers made sure there is room (droce_fault_room()). */
static void
fault_push(struct droce_fault *f, struct rte_mbuf *m)
{
	RTE_ASSERT(fault_free(f) > 0);
	f->ready[f->rd_tail++ & READY_MASK] = m;
}

static void
fault_apply(struct droce_fault *f, const struct droce_fault_conf *c)
{
	const double p[DROCE_FAULT_NB_ACTIONS] = {
		[DROCE_FAULT_DROP] = c->drop,
		[DROCE_FAULT_CORRUPT] = c->corrupt,
		[DROCE_FAULT_DUPLICATE] = c->duplicate,
		[DROCE_FAULT_DELAY] = c->delay,
		[DROCE_FAULT_REORDER] = c->reorder,
	};
	uint64_t hz = rte_get_tsc_hz();
	unsigned i;

	for (i = 0; i < DROCE_FAULT_NB_ACTIONS; i++)
		f->thr[i] = (uint64_t)(p[i] * (double)(UINT64_C(1) << PROB_BITS));
	f->rng = c->seed;
	f->delay_tsc = hz * c->delay_us / 1000000;
	f->segment = c->segment;
	f->hold_tsc = hz * DROCE_FAULT_HOLD_US / 1000000;
	f->armed = droce_fault_conf_active(c);
}

void
droce_fault_init(struct droce_fault *f, const struct droce_fault_conf *conf,
		 struct rte_mempool *mp, struct droce_fault_stats *stats)
{
	memset(f, 0, sizeof(*f));
	rte_seqlock_init(&f->pub_lock);
	f->mp = mp;
	f->stats = stats;
	droce_fault_set(f, conf);
	droce_fault_sync(f);
}

void
droce_fault_fini(struct droce_fault *f)
{
	rte_pktmbuf_free(f->held);
	f->held = NULL;
	for (; f->rd_head != f->rd_tail; f->rd_head++)
		rte_pktmbuf_free(f->ready[f->rd_head & READY_MASK]);
	for (; f->dl_head != f->dl_tail; f->dl_head++)
		rte_pktmbuf_free(f->delayed[f->dl_head & DELAYED_MASK].m);
	f->armed = false;
	fault_update_busy(f);
}

void
droce_fault_set(struct droce_fault *f, const struct droce_fault_conf *conf)
{
	rte_seqlock_write_lock(&f->pub_lock);
	f->pub = *conf;
	rte_seqlock_write_unlock(&f->pub_lock);
}

void
droce_fault_get(const struct droce_fault *f, struct droce_fault_conf *conf)
{
	uint32_t sn;

	do {
		sn = rte_seqlock_read_begin(&f->pub_lock);
		*conf = f->pub;
	} while (rte_seqlock_read_retry(&f->pub_lock, sn));
}

void
droce_fault_sync(struct droce_fault *f)
{
	struct droce_fault_conf c;
	uint32_t sn = rte_seqlock_read_begin(&f->pub_lock);

	/* A writer inside (odd number) is waited for by the next pass, not
	 * here: the engine never waits for a control thread. */
	if (sn == f->seen || (sn & 1))
		return;
	c = f->pub;
	if (rte_seqlock_read_retry(&f->pub_lock, sn))
		return;
	fault_apply(f, &c);
	f->seen = sn;
	fault_update_busy(f);
}

/* ---- corruption ---- */

/* Most bytes fault_span() leaves out: IPv6 0-3 and 7, UDP 6-7, BTH 4. */
#define SKIP_MAX 8

/*
 * Where a flipped bit may land: [*start, *end) without the ascending
 * offsets in @p skip. For IP frames that is the IP packet (no Ethernet
 * padding) without the fields RoCEv2's ICRC masks (Annex A17: IPv4 TOS,
 * TTL and checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum; the BTH's resv8a), so that a RoCE frame's ICRC, or a header
 * check before it, catches every flip. Other frames: everything after the
 * Ethernet header. @return the number of offsets in @p skip.
 */
static unsigned
fault_span(const struct rte_mbuf *m, uint32_t *start, uint32_t *end,
	   uint32_t skip[SKIP_MAX])
{
	union {
		struct rte_ether_hdr eh;
		struct rte_vlan_hdr vh;
		struct rte_ipv4_hdr ip4;
		struct rte_ipv6_hdr ip6;
	} buf;
	const struct rte_ether_hdr *eh;
	const struct rte_vlan_hdr *vh;
	const struct rte_ipv4_hdr *ip4;
	const struct rte_ipv6_hdr *ip6;
	uint32_t len = rte_pktmbuf_pkt_len(m), l3 = sizeof(*eh), l4, ip_end;
	unsigned n = 0, i, kept;
	rte_be16_t type;
	uint8_t proto;

	*start = RTE_MIN(len, l3);
	*end = len;
	eh = rte_pktmbuf_read(m, 0, sizeof(*eh), &buf);
	if (eh == NULL)
		return 0;
	type = eh->ether_type;
	if (type == RTE_BE16(RTE_ETHER_TYPE_VLAN)) {
		vh = rte_pktmbuf_read(m, l3, sizeof(*vh), &buf);
		if (vh == NULL)
			return 0;
		type = vh->eth_proto;
		l3 += sizeof(*vh);
		*start = l3;
	}
	if (type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		ip4 = rte_pktmbuf_read(m, l3, sizeof(*ip4), &buf);
		if (ip4 == NULL || rte_ipv4_hdr_len(ip4) < sizeof(*ip4))
			return 0;
		l4 = l3 + rte_ipv4_hdr_len(ip4);
		ip_end = l3 + rte_be_to_cpu_16(ip4->total_length);
		proto = ip4->next_proto_id;
		skip[n++] = l3 + offsetof(struct rte_ipv4_hdr, type_of_service);
		skip[n++] = l3 + offsetof(struct rte_ipv4_hdr, time_to_live);
		skip[n++] = l3 + offsetof(struct rte_ipv4_hdr, hdr_checksum);
		skip[n++] = l3 + offsetof(struct rte_ipv4_hdr, hdr_checksum) + 1;
	} else if (type == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
		ip6 = rte_pktmbuf_read(m, l3, sizeof(*ip6), &buf);
		if (ip6 == NULL)
			return 0;
		l4 = l3 + sizeof(*ip6);
		ip_end = l4 + rte_be_to_cpu_16(ip6->payload_len);
		proto = ip6->proto;
		for (i = 0; i < 4; i++)
			skip[n++] = l3 + i; /* version, traffic class, flow label */
		skip[n++] = l3 + offsetof(struct rte_ipv6_hdr, hop_limits);
	} else {
		return 0;
	}
	if (ip_end > l4 && ip_end <= len)
		*end = ip_end;
	if (proto == IPPROTO_UDP) {
		skip[n++] = l4 + offsetof(struct rte_udp_hdr, dgram_cksum);
		skip[n++] = l4 + offsetof(struct rte_udp_hdr, dgram_cksum) + 1;
		skip[n++] = l4 + sizeof(struct rte_udp_hdr) + 4; /* BTH resv8a */
	}
	for (i = kept = 0; i < n; i++)
		if (skip[i] < *end)
			skip[kept++] = skip[i];
	return kept;
}

/* Can @p m be written in place (no segment shared with anyone)? */
static bool
fault_writable(const struct rte_mbuf *m)
{
	for (; m != NULL; m = m->next)
		if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
			return false;
	return true;
}

/*
 * Flip one bit of *@p mp where fault_span() allows. A frame shared with
 * someone (a clone) is replaced by a copy first, so only this path sees
 * the damage. @return false when there is no byte to flip or no copy.
 */
static bool
fault_corrupt(struct droce_fault *f, struct rte_mbuf **mp)
{
	uint32_t skip[SKIP_MAX], start, end, off;
	struct rte_mbuf *m = *mp, *seg;
	unsigned nskip, i, bit;

	nskip = fault_span(m, &start, &end, skip);
	if (end - start <= nskip)
		return false;
	/* The r-th byte of the span that is not skipped. */
	off = start + fault_below(f, end - start - nskip);
	for (i = 0; i < nskip; i++)
		if (off >= skip[i])
			off++;
	bit = fault_below(f, 8);
	if (!fault_writable(m)) {
		m = rte_pktmbuf_copy(m, f->mp, 0, UINT32_MAX);
		if (m == NULL)
			return false;
		rte_pktmbuf_free(*mp);
		*mp = m;
	}
	for (seg = m; off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= (uint8_t)(1u << bit);
	return true;
}

/* ---- segmentation ---- */

/*
 * Replace *@p mp by a copy cut into segments of f->segment bytes (the
 * last shorter). @return false when the frame is short enough already,
 * or no mbufs are left (the frame goes on as it is).
 */
static bool
fault_segment(struct droce_fault *f, struct rte_mbuf **mp)
{
	struct rte_mbuf *c;

	if (rte_pktmbuf_pkt_len(*mp) <= f->segment ||
	    (c = droce_mbuf_split(*mp, f->mp, f->segment)) == NULL)
		return false;
	rte_pktmbuf_free(*mp);
	*mp = c;
	return true;
}

/* ---- the path ---- */

uint16_t
droce_fault_room(const struct droce_fault *f)
{
	/* A frame queues itself and a duplicate; a burst may also release
	 * the frame held for reordering: at most 2n + 1 slots. */
	uint32_t free = fault_free(f);

	return free == 0 ? 0 : (uint16_t)RTE_MIN((free - 1) / 2, (uint32_t)UINT16_MAX);
}

/* Whether action @p a happens to this frame, given its draws. */
#define FAULT_HIT(f, r, a) ((r)[a] < (f)->thr[a])

void
droce_fault_input(struct droce_fault *f, struct rte_mbuf **pkts, uint16_t n,
		  uint64_t now)
{
	uint64_t r[DROCE_FAULT_NB_ACTIONS];
	uint16_t i;
	unsigned a;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *dup = NULL;
		bool go = true;

		for (a = 0; a < DROCE_FAULT_NB_ACTIONS; a++)
			r[a] = fault_next(f) >> (64 - PROB_BITS);
		if (FAULT_HIT(f, r, DROCE_FAULT_DROP)) {
			rte_pktmbuf_free(m);
			FAULT_STAT(f, dropped);
			continue;
		}
		if (FAULT_HIT(f, r, DROCE_FAULT_CORRUPT) && fault_corrupt(f, &m))
			FAULT_STAT(f, corrupted);
		if (f->segment != 0 && fault_segment(f, &m))
			FAULT_STAT(f, segmented);
		if (FAULT_HIT(f, r, DROCE_FAULT_DUPLICATE)) {
			dup = rte_pktmbuf_copy(m, f->mp, 0, UINT32_MAX);
			if (dup != NULL)
				FAULT_STAT(f, duplicated);
		}
		if (FAULT_HIT(f, r, DROCE_FAULT_DELAY) &&
		    f->dl_tail - f->dl_head < DROCE_FAULT_DELAYED) {
			f->delayed[f->dl_tail & DELAYED_MASK].m = m;
			f->delayed[f->dl_tail & DELAYED_MASK].due = now + f->delay_tsc;
			f->dl_tail++;
			FAULT_STAT(f, delayed);
			go = false;
		} else if (FAULT_HIT(f, r, DROCE_FAULT_REORDER) && f->held == NULL) {
			f->held = m;
			f->held_since = now;
			FAULT_STAT(f, reordered);
			go = false;
		}
		if (go)
			fault_push(f, m);
		if (dup != NULL)
			fault_push(f, dup);
		/* The held frame goes out right after its successor. */
		if (go && f->held != NULL) {
			fault_push(f, f->held);
			f->held = NULL;
		}
	}
	fault_update_busy(f);
}

uint16_t
droce_fault_ready(struct droce_fault *f, struct rte_mbuf **pkts, uint16_t n,
		  uint64_t now)
{
	uint32_t i, k;

	while (f->dl_head != f->dl_tail && fault_free(f) > 0 &&
	       now >= f->delayed[f->dl_head & DELAYED_MASK].due) {
		fault_push(f, f->delayed[f->dl_head & DELAYED_MASK].m);
		f->dl_head++;
	}
	/* Without a successor in time, or once reordering is off, the held
	 * frame goes on alone. */
	if (f->held != NULL && fault_free(f) > 0 &&
	    (f->thr[DROCE_FAULT_REORDER] == 0 || now - f->held_since >= f->hold_tsc)) {
		fault_push(f, f->held);
		f->held = NULL;
	}
	k = RTE_MIN((uint32_t)n, f->rd_tail - f->rd_head);
	for (i = 0; i < k; i++)
		pkts[i] = f->ready[(f->rd_head + i) & READY_MASK];
	return (uint16_t)k;
}

void
droce_fault_taken(struct droce_fault *f, uint16_t n)
{
	f->rd_head += n;
	fault_update_busy(f);
}
