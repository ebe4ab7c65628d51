/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --raw-l2: what the port itself carries. The same message sizes go over
 * the same ethdev as plain Ethernet frames, with rte_eth_tx_burst() and
 * rte_eth_rx_burst() and nothing of droce (no droce device is attached in
 * this mode), so every RDMA figure can be quoted as a fraction of it.
 *
 * A message of S bytes at IB MTU M becomes the frames RoCEv2 would send
 * for an RDMA WRITE of S bytes: ceil(S / M) frames, each of Ethernet (14),
 * IPv4 (20), UDP (8), BTH (12) and ICRC (4) bytes around its share of the
 * payload, plus a RETH (16) on the first. The frames carry an ethertype of
 * their own (0x88b5, IEEE local experimental) and a small header (message
 * number, frame index); their payload bytes are not written or read, as
 * in testpmd's txonly/rxonly: this is the port's ceiling, not a copy test.
 *
 * --touch makes the same frames an ideal RoCE endpoint's: only the work
 * no RoCE stack can avoid. The sender writes the headers, copies the
 * payload once into the frame, reading it from a source buffer as a NIC
 * DMA-reads a registered MR (raw-L2 has no zero copy), and computes a
 * CRC32 over what an ICRC covers: the headers after Ethernet and the
 * payload (the Ethernet CRC the ICRC is, with droce's CRC functions, as
 * droce computes it; the ICRC's masking and its eight bytes of 0xff in
 * place of the LRH, a constant, are left out). The receiver checks the
 * CRC and copies the payload into a destination buffer at the offset the
 * frame names, while the frame is hot in cache. Both copies are
 * droce_copy()'s, as droce's are; the sender's copy and CRC are one pass
 * where droce's are (droce_copy_crc32()), and a short frame's CRC is
 * computed when its burst is built, four frames side by side where the
 * CPU can (droce_crc32_masked4()), as droce's flush seals its burst; the
 * receiver checks a burst's short frames four at a time first, as droce's
 * engine does, and the other frames' copies are made beside the next
 * frame's check where droce's are (droce_crc32_beside()). In a
 * latency run each side also acknowledges every message it received, as
 * a reliable connection must before its requester may complete the
 * WRITE: an ACK frame (headers and an AETH, CRC'd) goes out in the same
 * burst as the answer, as droce's held ACK does, and a side sends its
 * next message only once its last one is acknowledged and the peer's has
 * come. (In a bandwidth run a
 * responder's ACKs are one per burst received, a few per cent of the
 * frames, and left out.)
 *
 * bw: one side sends as fast as the port takes frames; the receiver
 * counts whole messages, and its figures are the result (both sides print
 * them; -b sums both directions). Peak: the best run of cq-mod messages.
 * lat: a message goes to the peer and back, as ib_write_lat's ping-pong:
 * half the round trip (the full one with --test read or atomic).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "droce_port.h"
#include "droce_wire.h"
#include "perf.h"

#define RAW_ETHERTYPE 0x88b5
#define RAW_BURST 32
#define RAW_NB_MBUFS 4095
#define RAW_NB_DESC 512
#define RAW_DATA_ROOM 8192
/* RoCEv2 framing: Ethernet, IPv4, UDP, BTH before the payload, the ICRC
 * after it; a RETH before the payload of a WRITE's first frame. */
#define ROCE_HDRS (14 + 20 + 8 + 12)
#define ROCE_ICRC 4
#define ROCE_OVERHEAD (ROCE_HDRS + ROCE_ICRC)
#define ROCE_RETH 16
/* --touch, latency: an ACK frame is the headers, an AETH and the ICRC. */
#define ROCE_AETH 4
#define ROCE_ACK_LEN (ROCE_HDRS + ROCE_AETH + ROCE_ICRC)
/* A step of the busy loop longer than RAW_LONG_BASE_US plus RAW_LONG_FRAME_US
 * per frame lost its CPU meanwhile, and is left out of the cycles (as
 * droce's engine leaves out such iterations, with the same bounds). */
#define RAW_LONG_BASE_US 20
#define RAW_LONG_FRAME_US 2
/* Source and destination buffers of --touch are page aligned. */
#define RAW_BUF_ALIGN 4096
/* bw: after the sender is done, frames still missing this long are lost. */
#define RAW_LOSS_MS 100

/* What follows the Ethernet header of every frame. */
struct raw_hdr {
	rte_be32_t msg;              /* message number, from 1 */
	rte_be16_t frame;            /* index in the message */
	rte_be16_t frames;           /* frames in the message; 0: an ACK of message msg */
	rte_be32_t offset;           /* of its payload in the message */
} __rte_packed;

struct raw {
	const struct perf_opts *o;
	uint16_t port;
	rte_spinlock_t *burst_lock;  /* around each burst, as droce's (NULL: none) */
	unsigned mtu;
	struct rte_mempool *mp;
	bool started;
	struct rte_ether_addr mac, peer;
	struct perf_oob oob;
	struct perf_clock clk;
	uint64_t *tposted;           /* lat: per message sent; bw: per message received */
	char name[RTE_ETH_NAME_MAX_LEN];
	/* --touch */
	uint8_t *src, *dst;          /* what is sent, where it is received */
	uint64_t buf_len;            /* each: the largest message */
	char crc_path[48];           /* the banner's CRC paths */
	/* the current measurement's cost */
	struct perf_side_cycles cyc;
	uint64_t long_base, long_frame; /* a step longer than base + frame per frame lost the CPU */
};

/* The port's bursts, under the lock droce's own take
 * (droce_port_ethdev_burst_lock()): raw-L2 pays what droce pays. */
static uint16_t
raw_rx_burst(struct raw *w, struct rte_mbuf **m, uint16_t n)
{
	return droce_port_ethdev_rx_burst(w->burst_lock, w->port, 0, m, n);
}

static uint16_t
raw_tx_burst(struct raw *w, struct rte_mbuf **m, uint16_t n)
{
	return droce_port_ethdev_tx_burst(w->burst_lock, w->port, 0, m, n);
}

/* The frames a message of @p size takes at IB MTU @p mtu. */
static unsigned
frames_per_msg(uint64_t size, unsigned mtu)
{
	return size == 0 ? 1 : (unsigned)((size + mtu - 1) / mtu);
}

/* Where the payload of frame @p index starts in the frame. */
static unsigned
frame_payload_off(unsigned index)
{
	return ROCE_HDRS + (index == 0 ? ROCE_RETH : 0);
}

/* The payload bytes of frame @p index of a message of @p size. */
static unsigned
frame_payload(uint64_t size, unsigned mtu, unsigned index)
{
	uint64_t off = (uint64_t)index * mtu;

	return size > off ? (unsigned)RTE_MIN(size - off, (uint64_t)mtu) : 0;
}

/* The length of frame @p index of such a message. */
static unsigned
frame_len(uint64_t size, unsigned mtu, unsigned index)
{
	return frame_payload_off(index) + frame_payload(size, mtu, index) + ROCE_ICRC;
}

/* The warm-up's receiver: what arrives belongs to no test. (Measurements
 * wait for their peer without touching the port: the frames that follow
 * a meeting are the test's.) */
static void
raw_idle(void *arg)
{
	struct raw *w = arg;
	struct rte_mbuf *m[RAW_BURST];
	uint16_t n;

	n = raw_rx_burst(w, m, RAW_BURST);
	rte_pktmbuf_free_bulk(m, n);
}

static int
raw_port_start(struct raw *w)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t nb_rxd = RAW_NB_DESC, nb_txd = RAW_NB_DESC;
	int socket = rte_eth_dev_socket_id(w->port);
	int rc;

	if (socket < 0)
		socket = SOCKET_ID_ANY;
	w->mp = rte_pktmbuf_pool_create("perf_raw", RAW_NB_MBUFS, 256, 0,
					RTE_PKTMBUF_HEADROOM + RAW_DATA_ROOM, socket);
	if (w->mp == NULL) {
		fprintf(stderr, PERF_NAME ": no mbuf pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	rc = rte_eth_dev_configure(w->port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(w->port, &nb_rxd, &nb_txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(w->port, 0, nb_rxd, (unsigned)socket, NULL, w->mp);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(w->port, 0, nb_txd, (unsigned)socket, NULL);
	/* Frames up to the largest RoCE frame; ports that set no MTU (memif)
	 * pass any size. */
	if (rc == 0)
		rte_eth_dev_set_mtu(w->port, (uint16_t)(w->mtu + ROCE_OVERHEAD + ROCE_RETH -
							RTE_ETHER_HDR_LEN));
	if (rc == 0 && w->o->mac_set) {
		memcpy(w->mac.addr_bytes, w->o->mac, sizeof(w->o->mac));
		rc = rte_eth_dev_default_mac_addr_set(w->port, &w->mac);
		/* a port that keeps its MAC (memif) still sends ours (as droce does) */
		if (rc == -ENOTSUP)
			rc = 0;
	} else if (rc == 0) {
		rc = rte_eth_macaddr_get(w->port, &w->mac);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(w->port);
	w->started = rc == 0;
	if (rc != 0) {
		fprintf(stderr, PERF_NAME ": cannot start ethdev %u: %s\n", w->port, strerror(-rc));
		return -1;
	}
	rte_eth_dev_get_name_by_port(w->port, w->name);
	return 0;
}

static int
raw_exchange_mac(struct raw *w)
{
	char mac[RTE_ETHER_ADDR_FMT_SIZE], line[64];

	rte_ether_format_addr(mac, sizeof(mac), &w->mac);
	if (perf_oob_send(&w->oob, "MAC %s", mac) != 0 ||
	    perf_oob_recv(&w->oob, line, sizeof(line), NULL, NULL) != 0)
		return -1;
	if (strncmp(line, "MAC ", 4) != 0 || rte_ether_unformat_addr(line + 4, &w->peer) != 0) {
		fprintf(stderr, PERF_NAME ": bad MAC line from the peer: '%s'\n", line);
		return -1;
	}
	return 0;
}

/* The header after Ethernet of a frame of the peer's, or NULL: a port
 * may also hand back our own. */
static __rte_always_inline const struct raw_hdr *
raw_ours(const struct raw *w, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (rte_pktmbuf_data_len(m) < sizeof(*eh) + sizeof(struct raw_hdr) ||
	    eh->ether_type != rte_cpu_to_be_16(RAW_ETHERTYPE) ||
	    !rte_is_same_ether_addr(&eh->src_addr, &w->peer))
		return NULL;
	return (const struct raw_hdr *)(eh + 1);
}

/* ---- --touch ---- */

/* The bytes a frame's CRC covers start after its Ethernet header. */
#define TOUCH_SPAN_OFF RTE_ETHER_HDR_LEN

/* What the headers hold past struct raw_hdr: droce copies its headers
 * from a template, and so does the ideal endpoint. */
static const uint8_t touch_hdr_fill[ROCE_HDRS + ROCE_RETH];

/* The CRC @p crc into the frame whose span (from TOUCH_SPAN_OFF) at
 * @p span is @p len bytes: right after it. */
static void
touch_crc_put(uint8_t *span, uint32_t len, uint32_t crc)
{
	crc = rte_cpu_to_le_32(crc);
	memcpy(span + len, &crc, sizeof(crc));
}

/* Sending: the rest of the headers written and the payload's one copy
 * from the source buffer into the frame; a long payload's copy and CRC in
 * one pass where droce's requester makes one (droce_copy_crc32()). Other
 * frames' CRCs are left to touch_seal(), as droce's requester leaves its
 * frames' ICRCs to the flush. @return true when the CRC is written. */
static bool
touch_tx(const struct raw *w, uint64_t size, unsigned index, uint8_t *frame)
{
	unsigned off = frame_payload_off(index), len = frame_payload(size, w->mtu, index);
	unsigned hdr = RTE_ETHER_HDR_LEN + sizeof(struct raw_hdr);
	const uint8_t *src = w->src + (uint64_t)index * w->mtu;
	uint8_t *span = frame + TOUCH_SPAN_OFF;
	uint32_t crc;

	/* A constant length, the first frame's RETH's place included, which a
	 * later frame's payload covers (in a short one, its CRC, written
	 * later, and the mbuf's room past it): a copy of each frame's own
	 * length was a `rep movs`, some 20 cycles a frame (droce's template
	 * is one 64-byte store). */
	memcpy(frame + hdr, touch_hdr_fill, sizeof(touch_hdr_fill) - hdr);
	if (len < DROCE_COPY_CRC_MIN) {
		/* inline, as droce's requester copies a short payload into a
		 * new frame (droce_tx_payload_short()) */
		rte_memcpy(frame + off, src, len);
		return false;
	}
	crc = droce_crc32(span, off - TOUCH_SPAN_OFF);
	if (droce_copy_crc32(frame + off, src, len, &crc)) {
		touch_crc_put(span, off - TOUCH_SPAN_OFF + len, crc);
		return true;
	}
	droce_copy(frame + off, src, len);
	return false;
}

/* No bits set: droce_crc32_masked4() as four droce_crc32()s. */
static const struct droce_crc_mask touch_no_mask;

/* The span a built frame's CRC covers, its length in *@p len. */
static uint8_t *
touch_span(struct rte_mbuf *m, uint32_t *len)
{
	*len = rte_pktmbuf_data_len(m) - TOUCH_SPAN_OFF - ROCE_ICRC;
	return rte_pktmbuf_mtod_offset(m, uint8_t *, TOUCH_SPAN_OFF);
}

/* The CRCs of the @p k frames whose spans are @p span, one by one. */
static void
touch_seal_each(uint8_t *const *span, const uint32_t *len, unsigned k)
{
	unsigned i;

	for (i = 0; i < k; i++)
		touch_crc_put(span[i], len[i], droce_crc32(span[i], len[i]));
}

/* Write the CRCs of the frames of @p pkts whose bits @p which has, once
 * they are all built, as droce's flush seals its burst
 * (droce_hdr_tmpl_seal_burst()): short frames of one length four side by
 * side where the CPU computes them so, the others one by one, and a
 * latency run's one or two frames one by one. */
static void
touch_seal(struct rte_mbuf *const *pkts, uint64_t which)
{
	bool wide = __builtin_popcountll(which) >= 4 && droce_crc32_masked4_wide();
	uint8_t *span[4];
	uint32_t len[4], crc[4];
	unsigned k = 0;

	for (; which != 0; which &= which - 1) {
		uint32_t l;
		uint8_t *s = touch_span(pkts[rte_bsf64(which)], &l);

		if (!wide || l >= DROCE_CRC_MASKED_MAX) {
			touch_seal_each(&s, &l, 1);
			continue;
		}
		if (k > 0 && l != len[0]) {
			touch_seal_each(span, len, k);
			k = 0;
		}
		span[k] = s;
		len[k] = l;
		if (++k == 4) {
			const uint8_t *p[4] = { span[0], span[1], span[2], span[3] };

			droce_crc32_masked4(p, l, &touch_no_mask, crc);
			touch_crc_put(span[0], l, crc[0]);
			touch_crc_put(span[1], l, crc[1]);
			touch_crc_put(span[2], l, crc[2]);
			touch_crc_put(span[3], l, crc[3]);
			k = 0;
		}
	}
	touch_seal_each(span, len, k);
}

/* One pass over @p len bytes of @p m from @p off, segment by segment
 * (a port may chain a large frame): their CRC32 when @p dst is NULL,
 * otherwise a copy into @p dst. */
static uint32_t
payload_pass(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint8_t *dst)
{
	uint32_t crc = 0, n, c;
	bool first = true;
	const uint8_t *p;

	for (; m != NULL && len > 0; m = m->next) {
		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		p = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
		n = RTE_MIN(len, (uint32_t)m->data_len - off);
		if (dst != NULL) {
			droce_copy(dst, p, n);
			dst += n;
		} else {
			c = droce_crc32(p, n);
			crc = first ? c : (uint32_t)crc32_combine(crc, c, n);
		}
		first = false;
		off = 0;
		len -= n;
	}
	return crc;
}

/* Where frame @p m's payload lies: at *@p off in the frame, *@p len
 * bytes (an ACK has none), for *@p moff of the destination buffer.
 * @return false for a frame too short for its headers, or whose payload
 * would not fit the buffer. */
static __rte_always_inline bool
touch_where(const struct raw *w, const struct rte_mbuf *m, const struct raw_hdr *h,
	    uint32_t *off, uint32_t *len, uint32_t *moff)
{
	bool ack = h->frames == 0;

	*off = ack ? ROCE_HDRS + ROCE_AETH : frame_payload_off(rte_be_to_cpu_16(h->frame));
	*moff = rte_be_to_cpu_32(h->offset);
	if (rte_pktmbuf_pkt_len(m) < *off + ROCE_ICRC)
		return false;
	*len = rte_pktmbuf_pkt_len(m) - *off - ROCE_ICRC;
	return ack ? *len == 0 : *moff <= w->buf_len && *len <= w->buf_len - *moff;
}

/* Receiving: check the CRC of the headers and the payload, then copy the
 * payload into the destination buffer at the offset the frame names,
 * while the frame is hot in cache (an ACK has none). A frame that fails
 * writes nothing. A frame in one segment has its copy put in @p side, to
 * be made beside the next frame's check (droce_crc32_beside()), as
 * droce's engine makes it: the one pass over each frame the CPU allows
 * without writing a byte not yet checked; the copy @p side held before is
 * made in any case. @return true if good. */
static bool
touch_rx(const struct raw *w, const struct rte_mbuf *m, const struct raw_hdr *h,
	 struct droce_side_copy *side)
{
	uint32_t off, len, moff, wire, buf;
	const uint8_t *p;

	if (!touch_where(w, m, h, &off, &len, &moff))
		return false;
	if (rte_pktmbuf_data_len(m) == rte_pktmbuf_pkt_len(m)) {
		p = rte_pktmbuf_mtod(m, const uint8_t *);
		memcpy(&wire, p + off + len, sizeof(wire));
		if (rte_le_to_cpu_32(wire) != droce_crc32_beside(p + TOUCH_SPAN_OFF,
								 off - TOUCH_SPAN_OFF + len, side))
			return false;
		*side = (struct droce_side_copy){ .dst = w->dst + moff, .src = p + off, .n = len };
		return true;
	}
	droce_side_copy_run(side);
	p = rte_pktmbuf_read(m, off + len, ROCE_ICRC, &buf);
	if (p == NULL)
		return false;
	memcpy(&wire, p, sizeof(wire));
	if (rte_le_to_cpu_32(wire) != payload_pass(m, TOUCH_SPAN_OFF, off - TOUCH_SPAN_OFF + len, NULL))
		return false;
	if (len != 0)
		payload_pass(m, off, len, w->dst + moff);
	return true;
}

/* Check the burst's short frames of the peer's, in runs of four of one
 * length, at once before the burst is handled, as droce's engine does
 * (droce_port_rx_verify4()); a long frame is passed over by its length.
 * @return the frames checked (bit i: @p pkts[i]), and in *@p good those
 * whose CRC is right. */
static uint64_t
touch_verify4(const struct raw *w, struct rte_mbuf *const *pkts, uint16_t n, uint64_t *good)
{
	const uint8_t *span[4];
	uint32_t len0 = 0, crc[4], wire;
	uint64_t checked = 0;
	uint16_t idx[4], i;
	unsigned k = 0, j;

	*good = 0;
	if (n < 4 || !droce_crc32_masked4_wide())
		return 0;
	for (i = 0; i < n; i++) {
		const struct raw_hdr *h;
		uint32_t off, len, moff;

		if (rte_pktmbuf_data_len(pkts[i]) >= TOUCH_SPAN_OFF + DROCE_CRC_MASKED_MAX + ROCE_ICRC ||
		    rte_pktmbuf_data_len(pkts[i]) != rte_pktmbuf_pkt_len(pkts[i]))
			continue;
		h = raw_ours(w, pkts[i]);
		if (h == NULL || !touch_where(w, pkts[i], h, &off, &len, &moff))
			continue;
		len += off - TOUCH_SPAN_OFF;
		if (k > 0 && len != len0)
			k = 0;
		len0 = len;
		idx[k] = i;
		span[k] = rte_pktmbuf_mtod_offset(pkts[i], const uint8_t *, TOUCH_SPAN_OFF);
		if (++k < 4)
			continue;
		droce_crc32_masked4(span, len, &touch_no_mask, crc);
		for (j = 0; j < 4; j++) {
			memcpy(&wire, span[j] + len, sizeof(wire));
			checked |= UINT64_C(1) << idx[j];
			if (rte_le_to_cpu_32(wire) == crc[j])
				*good |= UINT64_C(1) << idx[j];
		}
		k = 0;
	}
	return checked;
}

/* A frame touch_verify4() found good: its payload's copy, now. */
static void
touch_take(const struct raw *w, const struct rte_mbuf *m, const struct raw_hdr *h)
{
	uint32_t off, len, moff;

	if (touch_where(w, m, h, &off, &len, &moff) && len != 0)
		droce_copy(w->dst + moff, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), len);
}

/* The buffers, faulted in; the CRC on droce's path. */
static int
touch_init(struct raw *w, uint64_t max_size)
{
	uint64_t i;

	/* the warm-up sends frames of a whole MTU */
	w->buf_len = RTE_ALIGN_CEIL(RTE_MAX(max_size, (uint64_t)w->mtu), RAW_BUF_ALIGN);
	w->src = aligned_alloc(RAW_BUF_ALIGN, w->buf_len);
	w->dst = aligned_alloc(RAW_BUF_ALIGN, w->buf_len);
	if (w->src == NULL || w->dst == NULL) {
		fprintf(stderr, PERF_NAME ": no memory for 2 x %" PRIu64 " bytes of buffers\n",
			w->buf_len);
		return -1;
	}
	for (i = 0; i < w->buf_len; i++)
		w->src[i] = (uint8_t)(i * 7 + 1);
	memset(w->dst, 0, w->buf_len);
	return 0;
}

/* ---- frames ---- */

/* A step of the busy loop that moved @p frames, from @p t0 to now, into
 * the measurement's cycles; @p burst_cycles of it were inside the burst
 * call whose counter is @p burst (if any). */
static void
raw_count(struct raw *w, uint64_t t0, unsigned frames, uint64_t *burst, uint64_t burst_cycles)
{
	uint64_t busy = rte_rdtsc() - t0;

	if (busy > w->long_base + frames * w->long_frame) {
		w->cyc.skipped++;
		return;
	}
	w->cyc.busy += busy;
	if (burst != NULL)
		*burst += burst_cycles;
}

/* Where a sender is: the next frame to build. */
struct raw_tx {
	uint64_t size;
	unsigned frames;             /* per message */
	uint64_t msg;                /* number of the message being built */
	unsigned frame;              /* its next frame */
	uint16_t n;                  /* frames built, not yet taken by the port */
	uint64_t unsealed;           /* --touch: those whose CRC is still to write (bit i: pkts[i]) */
	struct rte_mbuf *pkts[RAW_BURST];
};

/* A frame's Ethernet header and struct raw_hdr, at @p eh. */
static struct raw_hdr *
raw_hdr_write(const struct raw *w, struct rte_ether_hdr *eh, uint64_t msg, unsigned frame,
	      unsigned frames, uint32_t offset)
{
	struct raw_hdr *h = (struct raw_hdr *)(eh + 1);

	rte_ether_addr_copy(&w->peer, &eh->dst_addr);
	rte_ether_addr_copy(&w->mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(RAW_ETHERTYPE);
	h->msg = rte_cpu_to_be_32((uint32_t)msg);
	h->frame = rte_cpu_to_be_16((uint16_t)frame);
	h->frames = rte_cpu_to_be_16((uint16_t)frames);
	h->offset = rte_cpu_to_be_32(offset);
	return h;
}

static int
raw_build(struct raw *w, struct raw_tx *t, uint16_t count)
{
	struct rte_mbuf **m = t->pkts + t->n;
	uint64_t t0 = rte_rdtsc();
	uint16_t i;

	if (rte_pktmbuf_alloc_bulk(w->mp, m, count) != 0)
		return 0;
	for (i = 0; i < count; i++) {
		unsigned len = frame_len(t->size, w->mtu, t->frame);
		struct rte_ether_hdr *eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m[i], (uint16_t)len);

		raw_hdr_write(w, eh, t->msg, t->frame, t->frames, t->frame * w->mtu);
		if (w->src != NULL && !touch_tx(w, t->size, t->frame, (uint8_t *)eh))
			t->unsealed |= UINT64_C(1) << (t->n + i);
		if (++t->frame == t->frames) {
			t->frame = 0;
			t->msg++;
		}
	}
	t->n += count;
	raw_count(w, t0, count, NULL, 0);
	return count;
}

/* --touch, latency: queue the ACK of the peer's message @p msg, to go
 * out with the frames built next. @return 1, or 0 without an mbuf. */
static int
raw_build_ack(struct raw *w, struct raw_tx *t, uint64_t msg)
{
	unsigned hdr = RTE_ETHER_HDR_LEN + sizeof(struct raw_hdr);
	uint64_t t0 = rte_rdtsc();
	struct rte_ether_hdr *eh;
	struct rte_mbuf *m;

	m = rte_pktmbuf_alloc(w->mp);
	if (m == NULL)
		return 0;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, ROCE_ACK_LEN);
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		return 0;
	}
	raw_hdr_write(w, eh, msg, 0, 0, 0);
	memcpy((uint8_t *)eh + hdr, touch_hdr_fill, ROCE_HDRS + ROCE_AETH - hdr);
	/* its CRC with the answer's, as droce seals its held ACK */
	t->unsealed |= UINT64_C(1) << t->n;
	t->pkts[t->n++] = m;
	raw_count(w, t0, 1, NULL, 0);
	return 1;
}

/* Hand the built frames to the port, their CRCs written first, as
 * droce's flush seals its burst. @return frames taken. */
static uint16_t
raw_push(struct raw *w, struct raw_tx *t)
{
	uint64_t t0 = rte_rdtsc(), t1 = t0;
	bool sealed = t->unsealed != 0;
	uint16_t k;

	if (sealed) {
		touch_seal(t->pkts, t->unsealed);
		t->unsealed = 0;
		t1 = rte_rdtsc();
	}
	k = raw_tx_burst(w, t->pkts, t->n);
	/* the seal is the loop's own work even when the port took nothing */
	if (k > 0 || sealed)
		raw_count(w, t0, k, &w->cyc.tx_burst, k > 0 ? rte_rdtsc() - t1 : 0);
	w->cyc.tx_frames += k;
	if (k < t->n)
		memmove(t->pkts, t->pkts + k, (t->n - k) * sizeof(t->pkts[0]));
	t->n -= k;
	return k;
}

/* Whole messages received. */
struct raw_rx {
	uint64_t msgs;
	uint64_t frames;
	uint64_t last_msg;           /* number of the last message completed */
	uint64_t first_tsc, last_tsc;
	uint64_t bad_crc;            /* --touch: frames dropped for their CRC */
	uint64_t acked;              /* --touch, latency: the last message of ours the peer acknowledged */
};

/* Receive a burst; count frames of ours, and messages whose last frame
 * came. @p stamps (bw) gets the TSC of each message completed. */
static uint16_t
raw_receive(struct raw *w, struct raw_rx *x, uint64_t *stamps, uint64_t max_stamps)
{
	struct rte_mbuf *m[RAW_BURST];
	struct droce_side_copy side = { .n = 0 };
	uint64_t t0 = rte_rdtsc(), now, checked = 0, good = 0;
	uint16_t n = raw_rx_burst(w, m, RAW_BURST), i;

	if (n == 0)
		return 0;
	now = rte_rdtsc();
	w->cyc.rx_frames += n;

	if (w->dst != NULL)
		checked = touch_verify4(w, m, n, &good);
	for (i = 0; i < n; i++) {
		const struct raw_hdr *h = raw_ours(w, m[i]);
		uint64_t bit = UINT64_C(1) << i;

		if (h == NULL)
			continue;
		if (checked & bit) {
			droce_side_copy_run(&side);
			if (!(good & bit)) {
				x->bad_crc++;
				continue;
			}
			touch_take(w, m[i], h);
		} else if (w->dst != NULL && !touch_rx(w, m[i], h, &side)) {
			x->bad_crc++;
			continue;
		}
		if (h->frames == 0) {
			x->acked = RTE_MAX(x->acked, (uint64_t)rte_be_to_cpu_32(h->msg));
			continue;
		}
		x->frames++;
		if (rte_be_to_cpu_16(h->frame) + 1 != rte_be_to_cpu_16(h->frames))
			continue;
		if (x->msgs == 0)
			x->first_tsc = now;
		x->last_tsc = now;
		if (stamps != NULL && x->msgs < max_stamps)
			stamps[x->msgs] = now;
		x->msgs++;
		x->last_msg = rte_be_to_cpu_32(h->msg);
	}
	droce_side_copy_run(&side);
	rte_pktmbuf_free_bulk(m, n);
	raw_count(w, t0, n, &w->cyc.rx_burst, now - t0);
	return n;
}

/* Start counting a measurement's cycles. */
static void
raw_cycles_start(struct raw *w)
{
	memset(&w->cyc, 0, sizeof(w->cyc));
}

/* After the end meeting: swap this side's cycles and @p sent messages with
 * the peer's into @p cost; say if frames failed their CRC, or if the
 * messages of @p size bytes received did not all land in the destination
 * buffer (both sides' source buffers hold the same bytes). */
static int
raw_cycles_swap(struct raw *w, const struct raw_rx *x, uint64_t size, uint64_t sent,
		struct perf_cost *cost)
{
	if (x->bad_crc > 0)
		fprintf(stderr, PERF_NAME ": %" PRIu64 " frames failed their CRC (dropped)\n",
			x->bad_crc);
	if (w->dst != NULL && x->msgs > 0 && memcmp(w->dst, w->src, size) != 0)
		fprintf(stderr, PERF_NAME ": the destination buffer is not what the peer sent\n");
	w->cyc.sent = sent;
	return perf_oob_swap_cycles(&w->oob, w->o, &w->cyc, cost, NULL, NULL);
}

/* ---- bandwidth ---- */

/* Peak: the best run of @p win messages among the completion stamps. */
static double
raw_peak(const uint64_t *t, uint64_t n, unsigned win, uint64_t hz, uint64_t size)
{
	uint64_t best = 0, i;

	for (i = win; i < n; i += win)
		if (best == 0 || t[i] - t[i - win] < best)
			best = t[i] - t[i - win];
	return best > 0 ? (double)size * win * (double)hz / (double)best : 0;
}

/* Frames still to build: up to @p iters messages (0: -D, no limit), and
 * once -D is @p stopping, only the rest of the message begun. */
static uint64_t
raw_frames_left(const struct raw_tx *t, uint64_t iters, bool stopping)
{
	if (stopping)
		return t->frame == 0 ? 0 : t->frames - t->frame;
	if (iters == 0)
		return UINT64_MAX;
	return (iters - (t->msg - 1)) * t->frames - t->frame;
}

/* Drop what is left in the receive queue: after the end meeting the peer
 * sends nothing more, so this empties it for the next size. */
static void
raw_drain(struct raw *w)
{
	struct rte_mbuf *m[RAW_BURST];
	uint16_t n;

	while ((n = raw_rx_burst(w, m, RAW_BURST)) > 0)
		rte_pktmbuf_free_bulk(m, n);
}

/* Out of line: tests/bench/instr.sh counts the ideal endpoint's
 * instructions inside it (case sender_ideal). */
static int __rte_noinline
raw_bw_loop(struct raw *w, struct raw_tx *t, struct raw_rx *x, bool tx, bool rx,
	    struct perf_window *win, uint64_t *sent)
{
	const struct perf_opts *o = w->o;
	bool dur = o->duration > 0, tx_done = !tx, rx_done = !rx, peer_done = false;
	uint64_t stamps = dur ? 0 : o->iters, quiet_since = 0, lost_after, peer_sent = 0;
	char line[64];

	lost_after = w->clk.hz / 1000 * RAW_LOSS_MS;
	while (!tx_done || !rx_done) {
		uint64_t now = rte_rdtsc();
		bool stopping = dur && now >= w->clk.end;

		if (dur)
			perf_window_update(win, &w->clk, now, x->msgs);
		if (!tx_done) {
			uint64_t left = raw_frames_left(t, dur ? 0 : o->iters, stopping);
			uint16_t room = (uint16_t)(RAW_BURST - t->n);

			if (left > 0 && room > 0)
				raw_build(w, t, (uint16_t)RTE_MIN((uint64_t)room, left));
			raw_push(w, t);
			if (t->n == 0 && raw_frames_left(t, dur ? 0 : o->iters, stopping) == 0) {
				tx_done = true;
				*sent = t->msg - 1;
				if (perf_oob_send(&w->oob, "DONE %" PRIu64, *sent) != 0)
					return -1;
			}
		}
		if (!rx_done) {
			int got;

			if (raw_receive(w, x, w->tposted, stamps) > 0)
				quiet_since = now;
			got = peer_done ? 0 : perf_oob_poll(&w->oob, line, sizeof(line));
			if (got < 0)
				return -1;
			if (got > 0) {
				if (sscanf(line, "DONE %" SCNu64, &peer_sent) != 1) {
					fprintf(stderr, PERF_NAME ": the peer is out of step ('%s')\n", line);
					return -1;
				}
				peer_done = true;
				quiet_since = now;
			}
			/* Everything came; or the sender is done and the rest is lost. */
			if (peer_done && (dur || x->last_msg == peer_sent || now - quiet_since > lost_after)) {
				rx_done = true;
				if (!dur && x->msgs < peer_sent)
					fprintf(stderr, PERF_NAME ": %" PRIu64 " of %" PRIu64
						" messages lost on the port\n", peer_sent - x->msgs, peer_sent);
			}
		}
		if (perf_clock_tick(&w->clk, now, tx ? t->msg : x->msgs) != 0)
			return -1;
	}
	return 0;
}

static int
raw_bw(struct raw *w, uint64_t size)
{
	const struct perf_opts *o = w->o;
	bool tx = !o->server || o->bidir, rx = o->server || o->bidir;
	struct raw_tx t = { .size = size, .frames = frames_per_msg(size, w->mtu), .msg = 1 };
	struct raw_rx x = { 0 };
	struct perf_window win = { 0 };
	struct perf_bw_result res = {
		.size = size,
		.frames_per_msg = t.frames,
		.frame_bytes = frame_len(size, w->mtu, 0),
	};
	uint64_t sent = 0;
	char line[256];
	double secs;

	raw_cycles_start(w);
	if (perf_oob_sync(&w->oob, NULL, NULL) != 0)
		return -1;
	perf_clock_start(&w->clk, o);
	if (raw_bw_loop(w, &t, &x, tx, rx, &win, &sent) != 0)
		return -1;
	if (o->duration > 0) {
		secs = perf_window_finish(&win, &w->clk, rte_rdtsc(), x.msgs);
		res.iters = win.n1 - win.n0;
	} else {
		secs = (double)(x.last_tsc - x.first_tsc) / (double)w->clk.hz;
		res.iters = x.msgs;
		if (!o->no_peak)
			res.peak_Bps = raw_peak(w->tposted, RTE_MIN(x.msgs, o->iters), o->cq_mod,
						w->clk.hz, size);
	}
	if (rx && secs > 0) {
		res.avg_Bps = (double)size * (double)res.iters / secs;
		res.msg_rate = (double)res.iters / secs;
		res.pps = res.msg_rate * t.frames;
	}
	rte_pktmbuf_free_bulk(t.pkts, t.n);
	if (perf_oob_sync(&w->oob, NULL, NULL) != 0)
		return -1;
	raw_drain(w);
	/* The receiver's figures are the result: swap them, and add them up
	 * with -b. */
	if (perf_oob_send(&w->oob, "RESULT %.17g %.17g %.17g %.17g %" PRIu64, res.peak_Bps,
			  res.avg_Bps, res.msg_rate, res.pps, res.iters) != 0 ||
	    perf_oob_recv(&w->oob, line, sizeof(line), NULL, NULL) != 0)
		return -1;
	if (!rx || o->bidir) {
		struct perf_bw_result p;

		if (sscanf(line, "RESULT %lg %lg %lg %lg %" SCNu64, &p.peak_Bps, &p.avg_Bps,
			   &p.msg_rate, &p.pps, &p.iters) != 5) {
			fprintf(stderr, PERF_NAME ": bad result line from the peer: '%s'\n", line);
			return -1;
		}
		res.peak_Bps += p.peak_Bps;
		res.avg_Bps += p.avg_Bps;
		res.msg_rate += p.msg_rate;
		res.pps += p.pps;
		res.iters = rx ? res.iters + p.iters : p.iters;
	}
	if (raw_cycles_swap(w, &x, size, sent, &res.cost) != 0)
		return -1;
	perf_report_bw(o, &res);
	return 0;
}

/* ---- latency ---- */

struct raw_lat {
	struct raw *w;
	struct raw_tx t;
	struct raw_rx x;
	struct perf_window win;
	bool stopped;
	uint64_t scnt;
	uint64_t acks;               /* --touch: the peer's messages acknowledged */
};

static int
raw_lat_tick(struct raw_lat *l, uint64_t now)
{
	if (l->w->o->duration > 0) {
		perf_window_update(&l->win, &l->w->clk, now, l->scnt);
		if (now >= l->w->clk.end)
			l->stopped = true;
	}
	return perf_clock_tick(&l->w->clk, now, l->scnt);
}

/* Send message number scnt + 1 whole. */
static int
raw_lat_send(struct raw_lat *l)
{
	uint64_t now = rte_rdtsc();
	unsigned left = l->t.frames;

	if (l->w->o->duration == 0)
		l->w->tposted[l->scnt] = now;
	l->scnt++;
	/* The ACK of what came goes first, in the same burst. */
	if (l->w->dst != NULL && l->acks < l->x.msgs) {
		if (raw_build_ack(l->w, &l->t, l->x.last_msg) == 0) {
			fprintf(stderr, PERF_NAME ": no mbuf for an ACK\n");
			return -1;
		}
		l->acks = l->x.msgs;
	}
	while (left > 0 || l->t.n > 0) {
		if (left > 0) {
			uint16_t k = (uint16_t)RTE_MIN(left, (unsigned)(RAW_BURST - l->t.n));

			left -= (unsigned)raw_build(l->w, &l->t, k);
		}
		raw_push(l->w, &l->t);
	}
	return raw_lat_tick(l, now);
}

/* Wait until message @p n has come whole (and, with --touch, the ACK of
 * every message sent). @return 1, 0 when -D ran out, -1. */
static int
raw_lat_wait(struct raw_lat *l, uint64_t n)
{
	while (l->x.msgs < n || (l->w->dst != NULL && l->x.acked < l->scnt)) {
		raw_receive(l->w, &l->x, NULL, 0);
		if (raw_lat_tick(l, rte_rdtsc()) != 0)
			return -1;
		if (l->stopped)
			return 0;
	}
	return 1;
}

static int
raw_lat(struct raw *w, uint64_t size)
{
	const struct perf_opts *o = w->o;
	struct raw_lat l = { .w = w };
	struct perf_lat_result res = { .size = size };
	bool client = !o->server, dur = o->duration > 0;
	uint64_t rcnt = 0;
	int rc = 1;

	l.t.size = size;
	l.t.frames = frames_per_msg(size, w->mtu);
	l.t.msg = 1;
	raw_cycles_start(w);
	if (perf_oob_sync(&w->oob, NULL, NULL) != 0)
		return -1;
	perf_sched_mark(&res.sched);
	perf_clock_start(&w->clk, o);
	while (dur ? !l.stopped : (l.scnt < o->iters || rcnt < o->iters)) {
		if ((dur || rcnt < o->iters) && !(l.scnt < 1 && client)) {
			rc = raw_lat_wait(&l, rcnt + 1);
			if (rc <= 0)
				break;
			rcnt++;
		}
		if ((dur || l.scnt < o->iters) && raw_lat_send(&l) != 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	perf_sched_since(&res.sched);
	if (dur) {
		double secs = perf_window_finish(&l.win, &w->clk, rte_rdtsc(), l.scnt);
		uint64_t n = l.win.n1 - l.win.n0;

		res.duration = true;
		res.iters = n;
		if (n > 0 && secs > 0) {
			res.t_avg = secs * 1e6 / (double)n / perf_rtt_factor(o);
			res.tps = (double)n / secs;
		}
	} else if (perf_lat_stats(o, w->tposted, w->clk.hz, &res) != 0) {
		fprintf(stderr, PERF_NAME ": no memory for the latency statistics\n");
		return -1;
	}
	res.size = size;
	if (perf_oob_sync(&w->oob, NULL, NULL) != 0)
		return -1;
	raw_drain(w);
	if (raw_cycles_swap(w, &l.x, size, l.scnt, &res.cost) != 0)
		return -1;
	perf_report_lat(o, &res);
	return 0;
}

/* ---- the run ---- */

/*
 * Frames nobody times, both ways, before the first measurement: the first
 * pass through a port's rings is slow (memif's buffers are faulted in page
 * by page). WARM_UP_FRAMES of the largest size fill every buffer of a ring
 * of up to that many slots; both sides drain what comes meanwhile.
 */
#define WARM_UP_FRAMES 2048

static int
raw_warm_up(struct raw *w)
{
	struct raw_tx t = { .size = w->mtu, .frames = 1, .msg = 1 };
	uint64_t give_up = rte_rdtsc() + rte_get_tsc_hz() * PERF_STALL_S;

	while (t.msg <= WARM_UP_FRAMES || t.n > 0) {
		if (t.msg <= WARM_UP_FRAMES && t.n < RAW_BURST)
			raw_build(w, &t, (uint16_t)RTE_MIN((uint64_t)(RAW_BURST - t.n),
							   WARM_UP_FRAMES + 1 - t.msg));
		raw_push(w, &t);
		raw_idle(w);
		if (rte_rdtsc() > give_up) {
			fprintf(stderr, PERF_NAME ": the port takes no frames\n");
			rte_pktmbuf_free_bulk(t.pkts, t.n);
			return -1;
		}
	}
	if (perf_oob_sync(&w->oob, raw_idle, w) != 0)
		return -1;
	raw_drain(w);
	return 0;
}

/*
 * The IB MTU droce's port would offer on this ethdev, for the one asked:
 * the frames of both baselines are droce's, and where droce keeps its
 * frames to one of the port's buffers (memif's bsize, af_packet's
 * framesz) so must they. Over memif a frame that spans buffers is not
 * safe: DPDK 22.11's eth_memif_tx() takes one ring slot more than is free
 * when such a frame meets an almost full ring, overwriting a frame the
 * peer has not read yet (docs/config.md, "memif buffers").
 */
static int
raw_mtu(struct raw *w)
{
	int mtu = droce_port_mtu_offered(w->port, (uint16_t)w->mtu);

	if (mtu < 0) {
		fprintf(stderr, PERF_NAME ": no IB MTU fits ethdev %u: %s\n", w->port,
			strerror(-mtu));
		return -1;
	}
	if ((unsigned)mtu < w->mtu)
		fprintf(stderr, PERF_NAME ": IB MTU %u does not fit in the port's buffers; "
			"the port offers %d\n", w->mtu, mtu);
	w->mtu = (unsigned)mtu;
	return 0;
}

static int
raw_run(struct raw *w)
{
	const struct perf_opts *o = w->o;
	struct perf_info info = { .device = w->name };
	uint64_t sizes[24];
	unsigned nsizes, i;

	if (raw_mtu(w) != 0)
		return -1;
	info.mtu = w->mtu;
	nsizes = perf_sizes(o, sizes);
	if (o->touch) {
		const char *rte_path = droce_icrc_init();

		snprintf(w->crc_path, sizeof(w->crc_path), "%s (rte_net_crc: %s)",
			 droce_crc32_path_name(droce_crc32_path()), rte_path);
		info.crc_path = w->crc_path;
		if (touch_init(w, sizes[nsizes - 1]) != 0)
			return -1;
	}
	if (raw_port_start(w) != 0 || perf_oob_open(&w->oob, o) != 0 ||
	    perf_oob_check_params(&w->oob, o) != 0 || raw_exchange_mac(w) != 0)
		return -1;
	w->tposted = perf_stamps_alloc(o->duration > 0 ? 1 : o->iters);
	if (w->tposted == NULL) {
		fprintf(stderr, PERF_NAME ": no memory for %" PRIu64 " timestamps\n", o->iters);
		return -1;
	}
	perf_report_begin(o, &info);
	if (perf_wait_link(w->port, PERF_STALL_S) != 0 || raw_warm_up(w) != 0)
		return -1;
	perf_report_table_head(o);
	for (i = 0; i < nsizes; i++)
		if ((o->mode == PERF_BW ? raw_bw(w, sizes[i]) : raw_lat(w, sizes[i])) != 0)
			return -1;
	perf_report_end(o);
	return perf_oob_sync(&w->oob, NULL, NULL);
}

int
perf_raw_main(const struct perf_opts *o, uint16_t port_id)
{
	struct raw w = {
		.o = o,
		.port = port_id,
		.burst_lock = droce_port_ethdev_burst_lock(port_id),
		.mtu = o->mtu ? o->mtu : 4096,
		.oob = { .fd = -1 },
		.long_base = rte_get_tsc_hz() / 1000000 * RAW_LONG_BASE_US,
		.long_frame = rte_get_tsc_hz() / 1000000 * RAW_LONG_FRAME_US,
	};
	int rc = raw_run(&w);

	if (w.started)
		droce_port_ethdev_stop(w.port);
	if (w.mp != NULL) {
		rte_eth_dev_close(w.port);
		rte_mempool_free(w.mp);
	}
	perf_oob_close(&w.oob);
	free(w.tposted);
	free(w.src);
	free(w.dst);
	return rc == 0 ? 0 : 1;
}
