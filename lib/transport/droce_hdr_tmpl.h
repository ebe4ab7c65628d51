/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Header templates: the Ethernet, IP and UDP headers of one address
 * vector's frames, built once. A frame is started from the template with
 * its lengths patched in and the IPv4 checksum updated for them; once its
 * BTH, extension headers and payload are written, its ICRC is one
 * droce_crc32_masked() call over the frame as it lies (the mask sets the
 * bits the ICRC masks as it reads them). No header is parsed back, and
 * nothing is written, saved or restored around the CRC.
 */
#ifndef DROCE_HDR_TMPL_H
#define DROCE_HDR_TMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "droce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The longest headers: Ethernet, VLAN, IPv6, UDP. */
#define DROCE_HDR_TMPL_MAX 66

/**
 * What droce_hdr_tmpl_start() copies of a template, whatever its length:
 * one copy of a size the compiler knows (a 64-byte and a 16-byte move)
 * instead of one of the template's length (`rep movs`, or a call to
 * libc). The bytes past the headers land where the frame's BTH and what
 * follows it go, which the sender writes next, or past the frame's end:
 * a frame's buffer must have room for this many bytes.
 */
#define DROCE_HDR_TMPL_COPY 80

/** One address vector's headers (see the file comment). */
struct droce_hdr_tmpl {
	struct droce_l3_addr l3;     /**< the addresses it was built from */
	uint16_t udp_sport;          /**< and the UDP source port */
	uint8_t tclass;              /**< and the traffic class (with its ECN bits) */
	bool valid;
	uint8_t len;                 /**< bytes from the Ethernet header to the BTH */
	uint8_t l2_len;              /**< Ethernet (and VLAN) header */
	uint16_t ip_sum;             /**< IPv4: ones' complement sum of the sent header, no payload */
	uint32_t dqpn;               /**< a QP's own: the destination QP it was built for */
	/** Its frames go to the sending port itself (1) or not (0), as
	 *  droce_port_frame_local() says; -1 until droce_tx_start() asks. */
	int8_t local;
	/** A frame's rte_mbuf::tx_offload: its L2, L3 and UDP header lengths,
	 *  where droce_tx_hdr() and the ICRC find them. */
	uint64_t tx_offload;
	/** As sent, for a frame with no L4 payload (@ref len bytes), then zeros. */
	uint8_t sent[DROCE_HDR_TMPL_COPY];
};

/**
 * The template for @p l3 (an address vector's, compared byte for byte)
 * with UDP source port @p udp_sport and traffic class @p tclass in place
 * of its own, rebuilt in @p t if it was made for others. @return @p t.
 */
struct droce_hdr_tmpl *droce_hdr_tmpl_get(struct droce_hdr_tmpl *t,
					  const struct droce_l3_addr *l3, uint16_t udp_sport,
					  uint8_t tclass);

/** Build @p t for @p l3, @p udp_sport and @p tclass. @return @p t. */
struct droce_hdr_tmpl *droce_hdr_tmpl_build(struct droce_hdr_tmpl *t,
					    const struct droce_l3_addr *l3, uint16_t udp_sport,
					    uint8_t tclass);

/**
 * droce_hdr_tmpl_get() for a template whose owner calls
 * droce_hdr_tmpl_invalidate() whenever it rewrites @p l3 (a QP's address
 * vector, routed by its engine), for the frames of QP @p lqpn to QP
 * @p dqpn: the addresses are not compared, which spares every frame a
 * 60-byte comparison, and the UDP source port, which follows from the
 * flow label and the two QPNs, is computed only when the template is
 * built; the destination QPN and the traffic class (whose ECN bits change
 * with a CNP) are compared.
 */
static inline struct droce_hdr_tmpl *
droce_hdr_tmpl_get_owned(struct droce_hdr_tmpl *t, const struct droce_l3_addr *l3,
			 uint32_t lqpn, uint32_t dqpn, uint8_t tclass)
{
	if (likely(t->valid && t->dqpn == dqpn && t->tclass == tclass))
		return t;
	t = droce_hdr_tmpl_build(t, l3, droce_udp_sport(l3->flow_label, lqpn, dqpn), tclass);
	t->dqpn = dqpn;
	return t;
}

/** The addresses @p t was built from are about to change. */
static inline void
droce_hdr_tmpl_invalidate(struct droce_hdr_tmpl *t)
{
	t->valid = false;
}

/**
 * Write @p t's headers at @p p for a frame whose BTH, extension headers,
 * payload and pad take @p l4_len bytes; @p p must have room for
 * DROCE_HDR_TMPL_COPY bytes, what follows the headers is left for the
 * caller to write. @return the BTH's offset.
 *
 * Inline, as droce_hdr_tmpl_finish_later(): both are a few instructions
 * of every frame sent, which a call's own cost would double. The UDP
 * length counts the UDP header and the ICRC besides @p l4_len; the IPv4
 * checksum grows by the L4 length the total length gained (ones'
 * complement sums add in either byte order, so the big-endian addend
 * goes in as it lies).
 */
static __rte_always_inline unsigned
droce_hdr_tmpl_start(const struct droce_hdr_tmpl *t, uint8_t *p, uint32_t l4_len)
{
	uint16_t udp_len = (uint16_t)(sizeof(struct rte_udp_hdr) + DROCE_ICRC_LEN + l4_len);
	uint8_t *ip = p + t->l2_len;
	struct rte_ipv4_hdr *ip4 = (struct rte_ipv4_hdr *)ip;
	uint32_t sum;

	memcpy(p, t->sent, DROCE_HDR_TMPL_COPY);
	((struct rte_udp_hdr *)(p + t->len - sizeof(struct rte_udp_hdr)))->dgram_len =
		rte_cpu_to_be_16(udp_len);
	if (t->l3.ipv6) {
		((struct rte_ipv6_hdr *)ip)->payload_len = rte_cpu_to_be_16(udp_len);
		return t->len;
	}
	ip4->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(struct rte_ipv4_hdr) + udp_len));
	sum = (uint32_t)t->ip_sum + rte_cpu_to_be_16((uint16_t)l4_len);
	sum = (sum & 0xffff) + (sum >> 16);
	ip4->hdr_checksum = (uint16_t)~sum;
	return t->len;
}

/**
 * The frame @p m, started with droce_hdr_tmpl_start() and complete up to
 * its pad, gets its ICRC, in two steps for a sender that builds a burst
 * of frames before it sends them: this one appends the ICRC's 4 bytes,
 * and droce_hdr_tmpl_seal() writes them later, once the burst is built.
 * The CRC then reads a frame whose stores have long left the store
 * buffer (computed right after the payload's copy, its wide loads wait
 * for those stores), and the CRCs of a burst, computed one after the
 * other, overlap. Chained and long frames (from DROCE_CRC_MASKED_MAX
 * bytes) get their ICRC at once. The frame must not change in between.
 * @return 1 when the frame is to be sealed, 0 when its ICRC is in place,
 * -ENOMEM when the ICRC does not fit.
 */
static __rte_always_inline int
droce_hdr_tmpl_finish_later(const struct droce_hdr_tmpl *t, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_data_len(m) - (t->l2_len - DROCE_ICRC_LRH_LEN);

	/* A chained frame (payload in other segments) or a long one takes
	 * the general path, which masks in place, now. */
	if (m->nb_segs > 1 || len >= DROCE_CRC_MASKED_MAX)
		return droce_icrc_append(m, t->l2_len);
	/* One segment: room for the ICRC at its end, without
	 * rte_pktmbuf_append()'s walk to the last segment. */
	if (unlikely(rte_pktmbuf_tailroom(m) < DROCE_ICRC_LEN))
		return -ENOMEM;
	m->data_len = (uint16_t)(m->data_len + DROCE_ICRC_LEN);
	m->pkt_len += DROCE_ICRC_LEN;
	return 1;
}

/**
 * Write the ICRC of a frame droce_hdr_tmpl_finish_later() left to seal.
 * The frame's l2_len and l3_len (the IP header, 20 or 40 bytes) say
 * where its headers are, as droce_tx_start() sets them.
 */
void droce_hdr_tmpl_seal(struct rte_mbuf *m);

/**
 * droce_hdr_tmpl_seal() of the frames of @p pkts whose bits are set in
 * @p which (bit i: pkts[i]): four at a time (droce_crc32_masked4())
 * where four in a row have the same length and IP version, as a burst of
 * small messages mostly has, and the CPU computes them side by side
 * (droce_crc32_masked4_wide()); the others one at a time.
 */
void droce_hdr_tmpl_seal_burst(struct rte_mbuf *const *pkts, uint64_t which);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_HDR_TMPL_H */
