/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RX, per queue: frames other queues handed over first, then (shared
 * mode) frames the application handed over, then frames
 * looped back by the queue's own TX, then the ethdev's (through the RX
 * fault stage when faults are on: looped back frames passed the TX one).
 * Every frame is classified where it arrives: RoCEv2 addressed to one of
 * the port's GIDs, parsed, goes to the caller when the caller's engine
 * owns its destination QP (droce_qpn_engine()), else to the owner's
 * redirect ring; ARP is handled on the queue it came in on; everything
 * else is counted and freed. Headers are read with rte_pktmbuf_read(), so
 * frames of any length and shape are safe.
 *
 * The ICRC is checked later, one frame at a time, right before the
 * engine handles the frame (droce_port_rx_verify()): the check brings the
 * frame into the cache and the copy of its payload that follows reads it
 * from there, where checking a whole burst first would have evicted the
 * early frames by the time they were copied. A long payload's copy may
 * wait for the next frame's check and be made beside it
 * (droce_crc32_beside()). Short frames, which a burst's worth of stays
 * in the cache, are checked first where four in a row are alike
 * (droce_port_rx_verify4()): four CRCs side by side.
 */
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "droce_port_priv.h"

/* Learn the sender of a RoCE frame, at most once a second per sender in
 * a row: a flow's frames all say the same. Inlined in both checks: a
 * call per frame would cost more than it does. */
static __rte_always_inline void
rx_learn(struct droce_port *p, struct droce_port_queue *pq, const struct droce_pkt *pkt,
	 uint64_t now)
{
	rte_be32_t be;
	uint32_t ip;

	memcpy(&be, pkt->sgid + 12, sizeof(be));
	ip = rte_be_to_cpu_32(be);
	if (ip == pq->learn_ip && now - pq->learn_tsc < p->tsc_hz)
		return;
	pq->learn_ip = ip;
	pq->learn_tsc = now;
	droce_neigh_learn(p, pkt->sgid, &pkt->src_mac, pkt->vlan_tci, now);
}

/* An IPv4 or IPv6 frame: keep it if it is RoCEv2 for us. Its ICRC is
 * checked later, frame by frame (droce_port_rx_verify()). */
static bool
rx_roce(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m)
{
	struct droce_pkt *pkt = droce_pkt_of(m);

	switch (droce_pkt_parse(m, pkt, false)) {
	case DROCE_PARSE_OK:
		break;
	case DROCE_PARSE_NOT_ROCE:
		DROCE_STAT_ADD(pq, rx_not_roce, 1);
		return false;
	case DROCE_PARSE_BAD_OPCODE:
		DROCE_STAT_ADD(pq, rx_bad_opcode, 1);
		return false;
	default:
		DROCE_STAT_ADD(pq, rx_malformed, 1);
		return false;
	}
	if (!droce_port_roce_ours(p, pkt)) {
		DROCE_STAT_ADD(pq, rx_not_ours, 1);
		return false;
	}
	return true;
}

bool
droce_port_roce_ours(const struct droce_port *p, const struct droce_pkt *pkt)
{
	return droce_port_gid_find(p, pkt->dgid) >= 0 ||
	       (droce_gid_is_mcast(pkt->dgid) && pkt->qpn == DROCE_QPN_MCAST);
}

bool
droce_port_rx_verify(struct droce_port *p, uint16_t q, struct rte_mbuf *m, uint64_t now,
		     struct droce_side_copy *side)
{
	const struct droce_pkt *pkt = droce_pkt_of(m);
	struct droce_port_queue *pq = &p->q[q];

	if (!droce_icrc_check_pkt(m, pkt, side)) {
		DROCE_STAT_ADD(pq, rx_bad_icrc, 1);
		return false;
	}
	/* Only a frame whose ICRC is right teaches an address. */
	if (!pkt->ipv6)
		rx_learn(p, pq, pkt, now);
	DROCE_STAT_ADD(pq, rx_roce, 1);
	return true;
}

/* Check four short frames of one ICRC length and IP version at once. */
static void
rx_verify4(const uint8_t *const p[4], uint32_t len, bool v6, const uint16_t idx[4],
	   uint64_t *checked, uint64_t *good)
{
	uint32_t crc[4], wire;
	unsigned j;

	droce_crc32_masked4(p, len, droce_icrc_mask(v6), crc);
	for (j = 0; j < 4; j++) {
		memcpy(&wire, p[j] + len, sizeof(wire));
		*checked |= UINT64_C(1) << idx[j];
		if (rte_le_to_cpu_32(wire) == crc[j])
			*good |= UINT64_C(1) << idx[j];
	}
}

uint64_t
droce_port_rx_verify4(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
		      uint64_t now, uint64_t *good)
{
	struct droce_port_queue *pq = &p->q[q];
	const uint8_t *span[4];
	uint64_t checked = 0, ok = 0, left;
	uint32_t len, len0 = 0;
	uint16_t idx[4], i;
	unsigned k = 0, bad = 0, roce = 0;
	bool v6 = false;

	/* Without the CPU for it, four at a time would be four calls. */
	if (!droce_crc32_masked4_wide()) {
		*good = 0;
		return 0;
	}
	for (i = 0; i < n; i++) {
		const struct droce_pkt *pkt;
		const uint8_t *s;

		/* A frame's ICRC covers at least its length less 14 bytes
		 * (Ethernet header and VLAN tag, and the ICRC, less the LRH's
		 * 8): a long one is passed over without its parse being read
		 * (one long only by Ethernet padding goes the other way). */
		if (rte_pktmbuf_data_len(pkts[i]) >= DROCE_CRC_MASKED_MAX + 14)
			continue;
		pkt = droce_pkt_of(pkts[i]);
		s = droce_icrc_short_span(pkts[i], pkt, &len);
		if (s == NULL)
			continue;
		if (k > 0 && (len != len0 || pkt->ipv6 != v6))
			k = 0;
		len0 = len;
		v6 = pkt->ipv6;
		idx[k] = i;
		span[k] = s;
		if (++k == 4) {
			rx_verify4(span, len, v6, idx, &checked, &ok);
			k = 0;
		}
	}
	for (left = checked; left != 0; left &= left - 1) {
		unsigned b = rte_bsf64(left);
		const struct droce_pkt *pkt = droce_pkt_of(pkts[b]);

		if (!(ok & (UINT64_C(1) << b))) {
			bad++;
			continue;
		}
		roce++;
		if (!pkt->ipv6)
			rx_learn(p, pq, pkt, now);
	}
	if (bad != 0)
		DROCE_STAT_ADD(pq, rx_bad_icrc, bad);
	if (roce != 0)
		DROCE_STAT_ADD(pq, rx_roce, roce);
	*good = ok;
	return checked;
}

enum droce_l2
droce_port_l2(struct droce_port *p, struct rte_mbuf *m, bool check_mac, rte_be16_t *type,
	      uint32_t *off, uint16_t *vlan_tci)
{
	struct rte_ether_hdr eh_buf;
	struct rte_vlan_hdr vh_buf;
	const struct rte_ether_hdr *eh = rte_pktmbuf_read(m, 0, sizeof(eh_buf), &eh_buf);
	const struct rte_vlan_hdr *vh;

	if (eh == NULL)
		return DROCE_L2_MALFORMED;
	/* NICs filter by MAC, PMDs of virtual ports do not: so do it here. */
	if (check_mac && !rte_is_same_ether_addr(&eh->dst_addr, &p->mac) &&
	    !rte_is_broadcast_ether_addr(&eh->dst_addr) && !droce_port_mcast_accept(p, eh) &&
	    !droce_nd_mcast_accept(p, &eh->dst_addr))
		return DROCE_L2_NOT_OURS;
	*off = sizeof(eh_buf);
	*vlan_tci = 0;
	*type = eh->ether_type;
	if (*type == RTE_BE16(RTE_ETHER_TYPE_VLAN)) {
		vh = rte_pktmbuf_read(m, *off, sizeof(vh_buf), &vh_buf);
		if (vh == NULL)
			return DROCE_L2_MALFORMED;
		*vlan_tci = rte_be_to_cpu_16(vh->vlan_tci);
		*type = vh->eth_proto;
		*off += sizeof(vh_buf);
	}
	return DROCE_L2_OURS;
}

bool
droce_port_ctl_take(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		    bool ok, uint16_t vlan_tci)
{
	rte_pktmbuf_free(m);
	if (!ok) {
		DROCE_STAT_ADD(pq, rx_malformed, 1);
		return false;
	}
	if (!droce_net_vlan_ok(p, vlan_tci)) {
		DROCE_STAT_ADD(pq, rx_not_ours, 1);
		return false;
	}
	DROCE_STAT_ADD(pq, rx_arp, 1);
	return true;
}

/* The byte at @p off of @p m (any chain), -1 past its end. */
static __rte_always_inline int
rx_ip_proto(const struct rte_mbuf *m, uint32_t off)
{
	uint8_t buf;
	const uint8_t *b = rte_pktmbuf_read(m, off, 1, &buf);

	return b != NULL ? *b : -1;
}

/*
 * An IP frame (@p ipv6 or not) of the port's own protocols, ND, MLD or
 * IGMP, which the header's protocol byte picks: consumed, @return true.
 * RoCE pays one byte read and a compare or two, and a call: inlined into
 * rx_one(), the switch cost the header prediction's loop two
 * instructions a frame where it never runs.
 */
static __rte_noinline bool
rx_ip_ctl(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m, bool ipv6,
	  uint32_t off, uint16_t vlan_tci)
{
	if (!ipv6)
		return rx_ip_proto(m, off + offsetof(struct rte_ipv4_hdr, next_proto_id)) ==
			       IPPROTO_IGMP &&
		       droce_igmp_input(p, pq, m, off, vlan_tci);
	switch (rx_ip_proto(m, off + offsetof(struct rte_ipv6_hdr, proto))) {
	case IPPROTO_ICMPV6:
		return droce_nd_input(p, pq, m, off, vlan_tci);
	case IPPROTO_HOPOPTS:
		return droce_mld_input(p, pq, m, off, vlan_tci);
	default:
		return false;
	}
}

/*
 * @return true when @p m is RoCE for the caller; otherwise it is consumed.
 * Looped back frames skip the MAC check: droce_port_tx() looped them
 * because their MAC or their IP address is the port's.
 */
static bool
rx_one(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m, bool looped)
{
	uint16_t vlan_tci;
	rte_be16_t type;
	uint32_t off;
	enum droce_l2 l2 = droce_port_l2(p, m, !looped, &type, &off, &vlan_tci);

	if (l2 == DROCE_L2_MALFORMED) {
		DROCE_STAT_ADD(pq, rx_malformed, 1);
		goto drop;
	}
	if (l2 == DROCE_L2_NOT_OURS) {
		DROCE_STAT_ADD(pq, rx_not_ours, 1);
		goto drop;
	}
	switch (type) {
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		droce_arp_input(p, pq, m, off, vlan_tci);
		return false;
	case RTE_BE16(RTE_ETHER_TYPE_IPV6):
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		if (rx_ip_ctl(p, pq, m, type == RTE_BE16(RTE_ETHER_TYPE_IPV6), off, vlan_tci))
			return false;
		break;
	default:
		DROCE_STAT_ADD(pq, rx_not_roce, 1);
		goto drop;
	}
	if (rx_roce(p, pq, m))
		return true;
drop:
	rte_pktmbuf_free(m);
	return false;
}

/* The ethdev's burst, timed from @p t0 when the engine times this
 * iteration: its cycles are the port's, not droce's. An empty one is not
 * timed: a TSC read costs about as much as the call (20-40 cycles), and an
 * engine polling an idle port does little else; in an iteration that
 * sends, its time is charged to droce. */
static uint16_t
rx_burst(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf **pkts, uint16_t n,
	 uint64_t t0)
{
	uint16_t nb = droce_port_ethdev_rx_burst(p->burst_lock, p->port_id, pq->qid, pkts, n);

	if (nb == 0)
		return 0;
	if (pq->cycles.timed)
		pq->cycles.rx += rte_get_tsc_cycles() - t0;
	/* A shared ethdev's RX queues take the application's mbufs. */
	if (unlikely(p->shared))
		return droce_port_adopt(p, pkts, nb);
	return nb;
}

/* Hand @p m to engine @p owner's redirect ring. @return 1 when it took
 * it; 0 when the ring was full and @p m is freed. */
static unsigned
rx_redirect(struct droce_port *p, unsigned owner, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(p->q[owner].redirect, m) == 0)
		return 1;
	rte_pktmbuf_free(m);
	return 0;
}

/* A multicast frame (QPN 0xffffff) is for the members of its group, which
 * any engine may own: every other engine gets a copy, parsed again (a
 * copy has no parse result), and serves its own members. @return copies
 * handed over; *@p drops grows by those lost. */
static uint16_t
rx_mcast_spread(struct droce_port *p, unsigned self, struct rte_mbuf *m, uint16_t *drops)
{
	uint16_t out = 0;
	unsigned e;

	for (e = 0; e < p->nb_queues; e++) {
		struct rte_mbuf *c;

		if (e == self)
			continue;
		c = rte_pktmbuf_copy(m, p->mp, 0, UINT32_MAX);
		if (c == NULL || droce_pkt_parse(c, droce_pkt_of(c), false) != DROCE_PARSE_OK) {
			rte_pktmbuf_free(c);
			(*drops)++;
		} else if (rx_redirect(p, e, c) == 0) {
			(*drops)++;
		} else {
			out++;
		}
	}
	return out;
}

/*
 * Keep the RoCE frames of @p n whose QP the engine of @p pq owns, compact
 * in place; hand the others to their owner's redirect ring (a full ring
 * drops them: the reliable services resend). @return those kept.
 */
static uint16_t
rx_steer(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf **pkts, uint16_t n)
{
	unsigned self = (unsigned)(pq - p->q), owner;
	uint16_t i, kept = 0, out = 0, drops = 0;
	uint32_t qpn;

	if (p->nb_queues == 1)
		return n;
	for (i = 0; i < n; i++) {
		qpn = droce_pkt_of(pkts[i])->qpn;
		owner = droce_qpn_engine(qpn, p->nb_queues);
		if (qpn == DROCE_QPN_MCAST) {
			out += rx_mcast_spread(p, self, pkts[i], &drops);
			pkts[kept++] = pkts[i];
		} else if (owner == self) {
			pkts[kept++] = pkts[i];
		} else if (rx_redirect(p, owner, pkts[i]) != 0) {
			out++;
		} else {
			drops++;
		}
	}
	if (out != 0)
		DROCE_STAT_ADD(pq, rx_redirected_out, out);
	if (drops != 0)
		DROCE_STAT_ADD(pq, rx_redirect_drops, drops);
	return kept;
}

/* Capture, classify, steer and compact @p n frames in place. @return
 * those kept. A frame whose headers are the last kept one's but for its
 * lengths, opcode and PSN (the next frame of the same QP, mostly) takes
 * that one's parse (droce_pkt_predict()), and its verdict: the same
 * addresses are the port's, the same QPN ours. The first frame of a
 * burst is predicted from the last one the queue kept before (frames the
 * port sent itself, whose MAC is not checked, are not kept for that): a
 * latency test's every frame is the first of its burst. */
static uint16_t
rx_classify(struct droce_port *p, struct droce_port_queue *pq, struct droce_capture *c,
	    struct rte_mbuf **pkts, uint16_t n, bool looped)
{
	const struct droce_pkt *ref_pkt = !looped && pq->ref_len != 0 ? &pq->ref_pkt : NULL;
	const uint8_t *ref = pq->ref_hdr;
	uint32_t ref_len = pq->ref_len;
	uint16_t i, kept = 0, parsed = 0;

	if (c != NULL)
		droce_capture_frames(c, p->port_id, pkts, n, RTE_PCAPNG_DIRECTION_IN);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (ref_pkt == NULL || !droce_pkt_predict(ref, ref_len, ref_pkt, m, droce_pkt_of(m))) {
			if (!rx_one(p, pq, m, looped))
				continue;
			parsed++;
		}
		pkts[kept++] = m;
		ref = rte_pktmbuf_mtod(m, const uint8_t *);
		ref_len = rte_pktmbuf_data_len(m);
		ref_pkt = droce_pkt_of(m);
	}
	DROCE_STAT_ADD(pq, rx_predicted, kept - parsed);
	if (kept != 0 && !looped) {
		pq->ref_len = RTE_MIN(ref_len, (uint32_t)DROCE_PKT_PREDICT_LEN);
		memcpy(pq->ref_hdr, ref, pq->ref_len);
		pq->ref_pkt = *ref_pkt;
	}
	return rx_steer(p, pq, pkts, kept);
}

/*
 * The ethdev's frames through the fault stage: as many new ones as it has
 * room for go in, and what it has ready (those, their duplicates, frames
 * whose delay is over) comes out to be classified.
 */
static uint16_t
rx_faulty(struct droce_port *p, struct droce_port_queue *pq, struct droce_capture *c,
	  struct rte_mbuf **pkts, uint16_t n)
{
	struct droce_fault *f = &pq->fault_rx;
	uint64_t now = rte_get_tsc_cycles();
	uint16_t nb;

	droce_fault_sync(f);
	nb = RTE_MIN(n, droce_fault_room(f));
	nb = nb != 0 ? rx_burst(p, pq, pkts, nb, now) : 0;
	if (nb != 0) {
		DROCE_STAT_ADD(pq, rx_frames, nb);
		droce_fault_input(f, pkts, nb, now);
	}
	nb = droce_fault_ready(f, pkts, n, now);
	droce_fault_taken(f, nb);
	/* What the fault stage lets through joins the bottleneck's queue;
	 * what the bottleneck's link has sent by now goes on. */
	if (p->bottleneck != NULL) {
		droce_bottleneck_input(p->bottleneck, pkts, nb);
		nb = droce_bottleneck_output(p->bottleneck, pkts, n, now);
	}
	return nb != 0 ? rx_classify(p, pq, c, pkts, nb, false) : 0;
}

uint16_t
droce_port_rx(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
	      uint64_t now)
{
	struct droce_port_queue *pq = &p->q[q];
	struct droce_capture *c;
	uint16_t got = 0, nb;

	/* Parsed and captured where they arrived. */
	if (p->nb_queues > 1) {
		got = (uint16_t)rte_ring_sc_dequeue_burst(pq->redirect, (void **)pkts, n, NULL);
		if (got != 0)
			DROCE_STAT_ADD(pq, rx_redirected_in, got);
	}
	c = droce_capture_enter(p);
	/* Shared mode: what the application handed over (not parsed yet). */
	if (pq->app != NULL && got < n) {
		nb = (uint16_t)rte_ring_sc_dequeue_burst(pq->app, (void **)pkts + got, n - got, NULL);
		if (nb != 0)
			got += rx_classify(p, pq, c, pkts + got, nb, false);
	}
	if (got < n) {
		nb = (uint16_t)rte_ring_sc_dequeue_burst(pq->lo, (void **)pkts + got, n - got, NULL);
		if (nb != 0) {
			DROCE_STAT_ADD(pq, rx_loopback, nb);
			got += rx_classify(p, pq, c, pkts + got, nb, true);
		}
	}
	/* An ethdev that has not started yet has no RX to read. */
	if (got < n && likely(droce_port_started(p))) {
		if (unlikely(droce_fault_busy(&pq->fault_rx) || p->bottleneck != NULL)) {
			got += rx_faulty(p, pq, c, pkts + got, n - got);
		} else {
			/* Frames classified above took time of their own. */
			nb = rx_burst(p, pq, pkts + got, n - got,
				      got != 0 ? rte_get_tsc_cycles() : now);
			if (nb != 0) {
				DROCE_STAT_ADD(pq, rx_frames, nb);
				got += rx_classify(p, pq, c, pkts + got, nb, false);
			}
		}
	}
	droce_capture_exit(p, c);
	return got;
}
