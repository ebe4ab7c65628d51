/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The RoCE transport, split as in rxe: the requester turns send WQEs into
 * packets, the responder answers request packets (receive queue, memory
 * regions, ACK/NAK, READ and atomic responses), the completer turns ACKs
 * and responses into completions.
 *
 * Every function here runs in the engine that owns the QP, so none of
 * them locks anything. Packets go out through a struct droce_tx, the
 * engine's staging area: when it is full, generation stops and resumes on
 * a later iteration, so a slow link pushes back instead of losing packets.
 */
#ifndef DROCE_TRANSPORT_H
#define DROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "droce_wire.h"
#include "droce_qp.h"
#include "droce_mr.h"
#include "droce_num_table.h"
#include "droce_dcqcn.h"
#include "droce_stage.h"

#ifdef __cplusplus
extern "C" {
#endif

struct droce_port;

/**
 * Every reason a received packet is dropped or refused, one counter each
 * (docs/reliability.md says what each counts). One list, so the engine's
 * counters, rte_telemetry and droce-testpmd name them alike.
 */
#define DROCE_RX_STATS(X)						\
	X(rx_unknown_qpn)    /* no QP with that number, or being destroyed */ \
	X(rx_wrong_service)  /* opcode of another service than the QP's */ \
	X(rx_bad_qp_type)    /* right service, but not for this kind of QP */ \
	X(rx_bad_state)      /* QP not in a state that receives it */	\
	X(rx_bad_pkey)       /* BTH P_Key not of the port's partition */	\
	X(rx_no_resources)   /* QP lacks the queue or CQ the packet needs */ \
	X(rx_bad_opcode_seq) /* opcode out of the message sequence */	\
	X(rx_bad_length)     /* payload length the opcode or RETH forbids */ \
	X(rx_bad_access)     /* rkey, PD, bounds or access flags refuse it */ \
	X(rx_misaligned_atomic) /* atomic to an address not 8-byte aligned */ \
	X(rx_recv_too_small) /* SEND longer than its receive, or a bad lkey */ \
	X(rx_bad_qkey)       /* UD datagram with another Q_Key */		\
	X(rx_bad_xrc_srq)    /* XRC SRQ number not of the QP's domain */	\
	X(rx_ud_no_recv)     /* UD datagram with no receive posted */	\
	X(rx_bad_response)   /* READ response of the wrong length */	\
	X(rx_bad_invalidate) /* SEND with invalidate of a key that cannot be */ \
	X(naks_inv_req_sent)     /* NAK invalid request sent */		\
	X(naks_rem_access_sent)  /* NAK remote access error sent */	\
	X(rx_run_pkts)       /* WRITE MIDDLE, WRITE ONLY and SEND ONLY packets taken a run at a time */

/** The counters of DROCE_RX_STATS, written by one engine only. */
struct droce_rx_stats {
#define DROCE_RX_STAT_FIELD(name) uint64_t name;
	DROCE_RX_STATS(DROCE_RX_STAT_FIELD)
#undef DROCE_RX_STAT_FIELD
};

/**
 * Congestion-control counters of an engine (docs/congestion.md), one list
 * for the engine's counters, rte_telemetry and droce-testpmd.
 */
#define DROCE_CC_STATS(X)						\
	X(ce_received)       /* requests that arrived marked CE */	\
	X(cnps_sent)         /* CNPs sent for them */			\
	X(cnps_suppressed)   /* CE marks within a QP's CNP interval, or unsendable */ \
	X(cnps_received)     /* CNPs received for the engine's QPs */	\
	X(rate_decreases)    /* DCQCN rate cuts */			\
	X(rate_increases)    /* DCQCN rate increase stages */		\
	X(paced)             /* times a QP's next frame waited for its rate */

/** The counters of DROCE_CC_STATS, written by one engine only. */
struct droce_cc_stats {
#define DROCE_CC_STAT_FIELD(name) uint64_t name;
	DROCE_CC_STATS(DROCE_CC_STAT_FIELD)
#undef DROCE_CC_STAT_FIELD
};

/** An engine's congestion control settings (from its port's configuration). */
struct droce_cc {
	uint8_t ecn;                 /**< ECN codepoint of sent frames but CNPs */
	bool np;                     /**< send CNPs for CE-marked requests */
	bool dcqcn;                  /**< react to CNPs */
	uint64_t cnp_interval_tsc;   /**< at most one CNP per QP per this */
	struct droce_dcqcn_params params;
};

/**
 * How each transmitted payload went out: referenced in its memory region
 * (zero copy) or copied, and why (docs/reliability.md). Inline data is
 * copied by design and not counted.
 */
#define DROCE_ZC_STATS(X)						\
	X(tx_zcopy_frames)   /* payload sent from the region, not copied */ \
	X(tx_copy_port)      /* copied: the port cannot take it (af_xdp, no chains, off) */ \
	X(tx_copy_small)     /* copied: shorter than the zero-copy threshold */ \
	X(tx_copy_sges)      /* copied: in more SGEs than a frame chains */ \
	X(tx_copy_unmapped)  /* copied: region not mapped for the port's DMA */ \
	X(tx_copy_no_ref)    /* copied: no mbuf or reference object left */ \
	X(tx_copy_window)    /* copied: a READ through a memory window */ \
	X(tx_run_pkts)       /* copied, MIDDLE packets built a run at a time */

/** The counters of DROCE_ZC_STATS, written by one engine only. */
struct droce_zc_stats {
#define DROCE_ZC_STAT_FIELD(name) uint64_t name;
	DROCE_ZC_STATS(DROCE_ZC_STAT_FIELD)
#undef DROCE_ZC_STAT_FIELD
};

/** Most packets staged for one transmit burst. */
#define DROCE_TX_BURST 64
/**
 * Most payload bytes staged for one transmit burst: 32 frames at MTU
 * 4096, as many as a receive burst takes. A burst's mbufs come back from
 * the pool for the next one; when they add up to more than the cache
 * keeps between two bursts (with the port's own copy of each frame beside
 * them), the payload copy into them writes lines the cache no longer has:
 * 256 KiB did, 128 KiB does not (since the twenty-third session; 64 KiB
 * before paid an engine iteration and a burst call per 16 frames).
 */
#define DROCE_TX_BURST_BYTES (128u * 1024)
/** Mbufs a droce_tx takes from its pool at a time. */
#define DROCE_TX_SPARE 32

/** The engine's transmit staging, handed to the transport. */
struct droce_tx {
	struct droce_port *port;
	uint16_t queue;              /**< the engine's port queue */
	struct rte_mempool *mp;
	/** Bytes a new mbuf of @ref mp holds after its headroom: every frame
	 *  starts in one (droce_tx_start()), so its room is known without
	 *  reading the mbuf's fields. */
	uint16_t frame_room;
	/** Where a frame starts in an mbuf of @ref mp, from the mbuf's
	 *  address: its header, private area and headroom (what
	 *  rte_mbuf_buf_addr() works out from two fields of the pool). */
	uint16_t frame_off;
	const struct droce_mr_table *mrt;
	const struct droce_num_table *srqt; /**< XRC SRQs by number */
	uint64_t now;                /**< rte_get_tsc_cycles() of this iteration */
	uint16_t n;
	/** DROCE_TX_BURST, or @ref n once the frames staged since the last
	 *  burst hold DROCE_TX_BURST_BYTES of payload (droce_tx_finish()). */
	uint16_t room_max;
	uint32_t staged_bytes;       /**< payload bytes of long frames since the last burst */
	struct rte_mbuf *pkts[DROCE_TX_BURST];
	/** The staged frames whose ICRC is still to be written, one bit per
	 *  index of @ref pkts (droce_tx_seal()). */
	uint64_t unsealed;
	/** A staged frame goes to the port itself (its template says so,
	 *  droce_tx_start()): the burst then takes droce_port_tx(), which
	 *  looks at each frame; otherwise droce_port_tx_remote(). */
	bool local;
	uint64_t *no_mbuf;           /**< the engine's count of failed mbuf allocations */
	/** Mbufs taken from @ref mp in bulk, for the frames to come: one pool
	 *  call per DROCE_TX_SPARE frames instead of one per frame. Given
	 *  back by droce_tx_release(). */
	struct rte_mbuf *spare[DROCE_TX_SPARE];
	uint16_t nb_spare;
	/** The engine's counts of frames built that end a message (not ACKs),
	 *  and of the payload bytes of all frames built (droce_tx_finish()). */
	uint64_t *msgs, *payload_bytes;
	struct droce_rx_stats *rxs;  /**< the engine's drop and NAK counters */
	struct droce_cc cc;          /**< congestion control */
	struct droce_cc_stats *ccs;  /**< the engine's congestion counters */
	struct droce_zc_stats *zcs;  /**< the engine's zero-copy counters */
	/** Zero copy's settings as this iteration found them
	 *  (droce_tx_payload()): payloads from @ref zc_from bytes on may go
	 *  by reference, under @ref zc_mode; shorter ones are copied and
	 *  counted in @ref zc_copy_count (tx_copy_port, or tx_copy_small). */
	uint64_t zc_gate_at;         /**< the @ref now they were read at */
	uint32_t zc_from;
	uint8_t zc_mode;
	uint64_t *zc_copy_count;
	struct droce_stage_clock stage; /**< cycles per stage, when asked for */
	/** The frame being built (droce_tx_start() to droce_tx_finish()):
	 *  its headers' template, its BTH, its opcode's description, its
	 *  payload's length and its own, all headers and the payload with
	 *  its pad (a frame like it, droce_tx_again(), has the same). */
	const struct droce_hdr_tmpl *tmpl;
	uint8_t *bth;
	const struct droce_opcode_info *op;
	uint32_t paylen;
	uint16_t frame_len;
	/** Its ICRC, computed as its payload was copied (droce_tx_payload()),
	 *  when @ref icrc_ready: droce_tx_finish() writes it. */
	uint32_t icrc;
	bool icrc_ready;
	/** A received payload's copy into a region, put off to the next
	 *  frame's ICRC check (droce_payload_to_mem()), while @ref rx_defer:
	 *  the engine's RX loop sets it, and makes the copy at the latest
	 *  when the loop ends, before a frame is sent or freed. */
	struct droce_side_copy rx_copy;
	bool rx_defer;
	/** The @ref now of the last iteration whose receive burst came back
	 *  full: while it is this one's, more frames wait on the port, and
	 *  an ACK owed for the requests just taken may wait for them
	 *  (droce_resp_run()). */
	uint64_t rx_full_at;
	struct droce_hdr_tmpl ud_tmpl; /**< for UD address handles (droce_tx_start()) */
};

/** Give the pool back the mbufs @p tx holds for frames to come. */
void droce_tx_release(struct droce_tx *tx);

/** Free places in the staging area: none once it holds
 * DROCE_TX_BURST_BYTES of payload. */
static inline unsigned
droce_tx_room(const struct droce_tx *tx)
{
	return (unsigned)(tx->room_max - tx->n);
}

/**
 * Start a packet for @p qp to @p av with @p opcode and @p paylen bytes of
 * payload: the L2/L3/UDP headers and the BTH are written, the extension
 * headers are left for the caller at droce_tx_hdr().
 * @return the mbuf, or NULL when no mbuf or no staging room is left.
 */
struct rte_mbuf *droce_tx_start(struct droce_tx *tx, const struct droce_qp *qp,
				struct droce_av *av, uint8_t opcode, uint32_t paylen,
				uint32_t dqpn, uint32_t psn, bool ackreq, bool se);

/**
 * Start another frame like the one droce_tx_finish() staged last, but for
 * its PSN @p psn and its AckReq bit @p ackreq: the same headers up to the
 * BTH's end (copied from it) and the same opcode and payload length; the
 * extension headers are left for the caller to write, as after
 * droce_tx_start(). For a message's MIDDLE packets, whose headers differ
 * in nothing else, and for a run of one-packet messages alike.
 * @return the mbuf, or NULL when no mbuf or no staging room is left.
 */
struct rte_mbuf *droce_tx_again(struct droce_tx *tx, uint32_t psn, bool ackreq);

/**
 * Resolve @p av's destination MAC once (ARP may take a few iterations) and
 * take hop limit, traffic class and flow label from its GRH.
 * @return 0 when @p av can be sent to, -EAGAIN while resolution goes on,
 * another negative errno when the destination is unreachable.
 */
int droce_av_route(struct droce_tx *tx, struct droce_av *av);

/** Pointer to extension header @p h (or the payload) of a packet being
 *  built (inline: a few times per frame on the send path). */
static inline uint8_t *
droce_tx_hdr(struct rte_mbuf *m, enum droce_hdr h)
{
	uint8_t *bth = rte_pktmbuf_mtod_offset(m, uint8_t *, m->l2_len + m->l3_len + m->l4_len);

	return bth + droce_opcode_table[bth[0]].off[h];
}

/** Extension header @p h (or the payload) of the frame being built
 *  (droce_tx_start() to droce_tx_finish()): droce_tx_hdr() without its
 *  chain of loads through the mbuf's fields and the BTH just written,
 *  which stall on the stores that wrote them. */
static inline uint8_t *
droce_tx_cur(const struct droce_tx *tx, enum droce_hdr h)
{
	return tx->bth + tx->op->off[h];
}

/** Stage the packet, its ICRC appended (or left for droce_tx_seal()). */
void droce_tx_finish(struct droce_tx *tx, struct rte_mbuf *m);

/**
 * Write the ICRCs droce_tx_finish() left to write in the frames staged
 * in @p tx (see droce_hdr_tmpl_finish_later()). Call it before the
 * staged frames leave @p tx: nothing else may read them as sent.
 */
void droce_tx_seal(struct droce_tx *tx);

/* ---- congestion control (droce_cc.c) ---- */

/** Set up @p cc from a port's @p conf, for a link of @p link_mbps (0: unknown). */
void droce_cc_init(struct droce_cc *cc, const struct droce_cc_conf *conf, uint32_t link_mbps,
		   uint64_t tsc_hz);

/** Notification point: a request for @p qp arrived marked CE. */
void droce_cc_rx_ce(struct droce_tx *tx, struct droce_qp *qp);

/** Reaction point: a CNP for @p qp arrived. */
void droce_cc_rx_cnp(struct droce_tx *tx, struct droce_qp *qp);

/** The pacer's verdict for a QP that DCQCN holds below line rate. */
bool droce_cc_pace(struct droce_tx *tx, struct droce_qp *qp, uint32_t bytes);

/**
 * May @p qp send a frame of about @p bytes now? Always before its first
 * CNP; after it, when its pacer has tokens. No: ask again on a later
 * iteration (the QP's frames keep their order).
 */
static inline bool
droce_cc_may_send(struct droce_tx *tx, struct droce_qp *qp, uint32_t bytes)
{
	return likely(!qp->cc.limited) || droce_cc_pace(tx, qp, bytes);
}

/* ---- payload of transmitted packets, zero copy or not (droce_zcopy.c) ---- */

/**
 * Payloads shorter than this are copied: below it two more mbufs, a
 * reference object and an extra ICRC step cost more than the copy
 * (docs/benchmarks.md). DROCE_ZCOPY=<bytes> changes it.
 */
#define DROCE_ZC_MIN_DEFAULT 1024

/** Most SGEs (so external segments) one zero-copy frame chains. */
#define DROCE_ZC_SEGS_MAX 8

/** What a port can send from memory regions. */
enum droce_zc_mode {
	DROCE_ZC_OFF,    /**< nothing: payloads are copied (af_xdp, no chains) */
	/** Any address, but the PMD copies each segment with the CPU anyway
	 *  (memif, af_packet, tap): a chain costs more than droce's one copy,
	 *  so only when asked for (DROCE_ZCOPY set, droce_zc_configure()). */
	DROCE_ZC_CPU_COPY,
	DROCE_ZC_PASS,   /**< any address: the PMD hands the mbufs on uncopied (ring) */
	DROCE_ZC_DMA,    /**< regions mapped for the device's DMA at registration */
};

/**
 * Make zero-copy TX ready (its pool of references) and read DROCE_ZCOPY
 * (`off`; `on`; or the threshold in bytes, which also means on). Without
 * DROCE_ZCOPY, ports whose PMD copies anyway (@ref DROCE_ZC_CPU_COPY)
 * copy; set, they send from the regions too. Control path: called when a
 * region is registered, before any frame can point into it. Without it
 * payloads are copied. @return 0 or a negative errno.
 */
int droce_zc_init(void);

/**
 * Turn zero-copy TX off, or on with threshold @p min_len on every port
 * that can take it, those whose PMD copies anyway included (tests, tools).
 */
void droce_zc_configure(bool enable, uint32_t min_len);

/** What ethdev @p port_id can send from memory regions (looked up once). */
enum droce_zc_mode droce_zc_port_mode(uint16_t port_id);

/**
 * Read zero copy's settings into @p tx for this iteration (@ref
 * droce_tx.now): once per iteration, not per frame, where a frame pays
 * only the length compare; a setting changed meanwhile holds from the next
 * iteration. droce_tx_payload() calls it; droce_tx_payload_short() too.
 */
void droce_tx_zc_gate(struct droce_tx *tx);

/**
 * Fill the payload of @p m, built by droce_tx_start() with room for
 * @p len bytes, from the list of SGEs @p sge starting @p offset bytes into
 * it, each SGE checked against @p pd_handle and @p access. Zero copy when
 * the port, the length and the regions allow: the frame then points into
 * the regions and holds a reference on each, and on send WQE @p w and its
 * QP @p qp when @p w is not NULL, until the mbufs are freed. Else a copy.
 * Call droce_tx_finish() after it, as for any frame.
 * @return 0, or -EFAULT when a key, bound or permission check fails.
 */
int droce_tx_payload(struct droce_tx *tx, struct rte_mbuf *m, uint32_t pd_handle,
		     const struct ibv_sge *sge, unsigned num_sge, uint64_t offset, uint32_t len,
		     int access, struct droce_qp *qp, struct droce_send_wqe *w);

/**
 * A send's run of frames of @p frame_len payload bytes each, @p len bytes
 * in all from @p offset into its list of SGEs @p sge: where to copy their
 * payloads from (droce_tx_payload_copy()), when they are to be copied, not
 * sent by reference, and the whole run is in one SGE whose key, bounds and
 * PD check; NULL otherwise, for droce_tx_payload() to take frame by frame.
 */
const uint8_t *droce_tx_payload_run(struct droce_tx *tx, uint32_t pd_handle,
				    const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
				    uint32_t len, uint32_t frame_len);

/**
 * Copy the payload of @p m, built by droce_tx_start() with room for
 * @p len bytes, from @p src (checked: droce_tx_payload_run()), and
 * compute its ICRC on the way where it is long enough.
 */
void droce_tx_payload_copy(struct droce_tx *tx, struct rte_mbuf *m, const uint8_t *src,
			   uint32_t len);

/**
 * droce_tx_payload() for a READ response: @p len bytes at @p va of the
 * region or memory window remote key @p rkey names, for @p qp in PD
 * @p pd_handle. Windows are copied (their binding may change under them).
 * @return 0, or -EFAULT when the key refuses the range.
 */
int droce_tx_payload_rkey(struct droce_tx *tx, struct rte_mbuf *m, const struct droce_qp *qp,
			  uint32_t rkey, uint32_t pd_handle, uint64_t va, uint32_t len);

/**
 * A send WQE waits for the driver to release its frames while nothing
 * else goes out: ask a NIC's PMD to free what it has sent
 * (rte_eth_tx_done_cleanup()); nothing to do on CPU-copying PMDs.
 */
void droce_zc_reclaim(struct droce_tx *tx);

/**
 * Has the driver released every frame that points into send WQE @p w's
 * buffers? Its completion waits for that.
 */
static inline bool
droce_wqe_released(const struct droce_send_wqe *w)
{
	return __atomic_load_n(&w->zc_refs, __ATOMIC_ACQUIRE) == 0;
}

/* ---- the validity check of received packets (droce_rx_check.c) ---- */

/**
 * The checks every packet for @p qp passes before a handler sees it, in
 * the order of IBA 9.6 and 9.7: the opcode is one this kind of QP
 * receives (the opcode table's `to`), the P_Key is the port's, the QP's
 * state receives it, the QP has what the handler needs (a receive CQ for
 * requests that complete a receive, a send CQ for responses), and a UD
 * datagram carries the QP's Q_Key. A packet that fails is dropped
 * silently, as the spec says for header and state errors, and counted.
 * @return true when the packet may go to droce_resp_rx() or droce_comp_rx().
 */
bool droce_rx_check(struct droce_tx *tx, const struct droce_qp *qp, struct rte_mbuf *m,
		    const struct droce_pkt *pkt);

/**
 * droce_rx_check() without counting: would @p pkt pass it? It reads of
 * the packet only its opcode, its P_Key and (UD) its Q_Key, so a packet
 * with the same opcode and P_Key as one that passes, for a QP other than
 * UD, passes as well (droce_resp_rx_run_start()).
 */
bool droce_rx_acceptable(struct droce_tx *tx, const struct droce_qp *qp, struct rte_mbuf *m,
			 const struct droce_pkt *pkt);

/**
 * Responder: may @p pkt, the next request in PSN order, follow what @p qp
 * is in the middle of? (A SEND or WRITE message, once started, goes on
 * with MIDDLE and LAST packets of its own kind and nothing else; between
 * messages only a FIRST or ONLY packet may come.)
 */
bool droce_rx_resp_seq_ok(const struct droce_qp *qp, const struct droce_pkt *pkt);

/**
 * Completer: may READ response @p pkt, at the expected PSN, come now?
 * MIDDLE and LAST continue a response begun by FIRST; FIRST and ONLY
 * begin one (also again, when a READ is asked again from the middle).
 */
bool droce_rx_comp_seq_ok(const struct droce_qp *qp, const struct droce_pkt *pkt);

/* ---- payload of received packets, chained or not (droce_payload.c) ---- */

/**
 * Copy the payload of @p pkt into the list of SGEs @p sge, starting
 * @p offset bytes into it, checking each SGE's lkey against @p pd_handle.
 * With @p may_defer, a payload that goes into one SGE may be copied later,
 * as droce_payload_to_mem() says.
 * @return 0, or -EFAULT when the SGEs are too short or a key is bad.
 */
int droce_payload_to_sge(struct droce_tx *tx, uint32_t pd_handle,
			 const struct ibv_sge *sge, unsigned num_sge, uint64_t offset,
			 const struct rte_mbuf *m, const struct droce_pkt *pkt, bool may_defer);

/** Where the payload of @p pkt lies when its copy may wait for the next
 *  frame's check (droce_payload_to_mem()), else NULL: in the engine's RX
 *  loop, long and in one segment. */
static inline const void *
droce_payload_waitable(const struct droce_tx *tx, const struct rte_mbuf *m,
		       const struct droce_pkt *pkt)
{
	if (!tx->rx_defer || pkt->payload_len < DROCE_COPY_CRC_MIN)
		return NULL;
	return droce_mbuf_flat(m, pkt->payload_off, pkt->payload_len);
}

/** Let the copy of @p n bytes from @p src to @p dst wait. */
static inline void
droce_payload_wait(struct droce_tx *tx, void *dst, const void *src, uint32_t n)
{
	/* One at a time: the next frame's check makes it. */
	droce_side_copy_run(&tx->rx_copy);
	tx->rx_copy = (struct droce_side_copy){ .dst = dst, .src = src, .n = n };
}

/**
 * Copy the payload of @p pkt to @p dst (already checked to be writable):
 * at once, or, when @p may_defer, the engine's RX loop allows it
 * (@p tx->rx_defer) and the payload is one run of DROCE_COPY_CRC_MIN
 * bytes or more, later: beside the next frame's ICRC check
 * (droce_port_rx_verify()), where it costs little more than the check,
 * and before anything leaves the engine or the frame is freed. Nothing
 * that tells anyone the bytes are there (a completion) may follow in the
 * same handler: the caller passes @p may_defer false then. A small payload
 * in one segment is copied inline (droce_copy_small()). Inline: every
 * payload that goes to a region takes it, from the responder's general
 * path and from its runs.
 */
static __rte_always_inline void
droce_payload_to_mem(struct droce_tx *tx, void *dst, const struct rte_mbuf *m,
		     const struct droce_pkt *pkt, bool may_defer)
{
	const void *flat;

	if (may_defer && (flat = droce_payload_waitable(tx, m, pkt)) != NULL) {
		droce_payload_wait(tx, dst, flat, pkt->payload_len);
		return;
	}
	if (pkt->payload_len <= DROCE_COPY_SMALL_MAX &&
	    (flat = droce_mbuf_flat(m, pkt->payload_off, pkt->payload_len)) != NULL) {
		droce_copy_small(dst, flat, pkt->payload_len);
		return;
	}
	/* The parser checked that the frame holds the whole payload. */
	droce_mbuf_copy(m, pkt->payload_off, pkt->payload_len, dst);
}

/* ---- requester ---- */

/**
 * Send what the QP's send queue allows now (new WQEs, retransmissions).
 * @return true while the requester has work left (more to send, or packets
 * awaiting acknowledgement whose timer runs).
 */
bool droce_req_run(struct droce_tx *tx, struct droce_qp *qp);

/* ---- responder ---- */

/** Handle one request packet addressed to @p qp. The mbuf stays the caller's. */
void droce_resp_rx(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
		   const struct droce_pkt *pkt);

/**
 * Send owed ACKs/NAKs and READ responses. An ACK waits while the QP's
 * requests keep coming in full bursts (DROCE_RESP_ACK_EVERY).
 * @return true while some are left.
 */
bool droce_resp_run(struct droce_tx *tx, struct droce_qp *qp);

/**
 * Most packets an ACK waits for (droce_resp_run()): while a QP's requests
 * arrive in full receive bursts, one ACK covers this many, not a burst's.
 * Half the send queue of perftest's default depth (128), so a requester
 * that posts that deep never stalls for it; rxe's requester stops at 128
 * unacknowledged packets.
 */
#define DROCE_RESP_ACK_EVERY 64

/** The most packets a run takes (droce_rx_run): an RX burst's. */
#define DROCE_RX_RUN_MAX 32

/** What a run of requests is made of (droce_rx_run). */
enum droce_rx_run_kind {
	DROCE_RUN_WRITE_MIDDLE,     /**< the middle of the long WRITE under way */
	DROCE_RUN_WRITE_ONLY,       /**< small WRITEs, each with a RETH of its own */
	DROCE_RUN_SEND_ONLY,        /**< small SENDs (with immediate or not), each a receive */
};

/** The opcodes (without their service) that may start a run, a bit each:
 *  those droce_resp_rx_run_start() has a droce_rx_run_kind for. The
 *  engine looks at every received frame's opcode with it. */
#define DROCE_RX_RUN_OPCODES                                                                \
	(UINT32_C(1) << DROCE_OP_WRITE_MIDDLE | UINT32_C(1) << DROCE_OP_WRITE_ONLY |       \
	 UINT32_C(1) << DROCE_OP_SEND_ONLY | UINT32_C(1) << DROCE_OP_SEND_ONLY_IMM)

/**
 * Requests handled a run at a time: consecutive packets of one burst, in
 * PSN order, that droce_resp_rx() would take each the same way, through
 * the same checks. Three kinds (droce_rx_run_kind): the MIDDLE packets
 * that continue the long WRITE @p qp is receiving, and small messages of
 * one packet one after the other, WRITEs or SENDs. A run makes the
 * checks that are the same for all of them once (the QP, its state and
 * rights, the opcode sequence; for MIDDLE packets the region for the
 * whole range) and leaves per packet only its ICRC check, the copy and
 * what is the packet's own: a WRITE ONLY packet's RETH, a SEND's receive.
 * A SEND's completions are written to the CQ as the run ends, in one
 * step.
 */
struct droce_rx_run {
	uint8_t *dst;    /**< where the next MIDDLE packet's payload goes */
	uint32_t n;      /**< packets taken so far */
	bool ackreq;     /**< one of them asked for an ACK */
	bool solicited;  /**< one of its SENDs asked for a solicited event */
	uint8_t kind;    /**< enum droce_rx_run_kind */
	/** WRITE ONLY runs: the region the last packet's R_Key named, and that
	 *  key (NULL: none yet, or a window's), for the next packet that names
	 *  it again: the regions stay for the engine's iteration. */
	const struct droce_mr *mr;
	uint32_t rkey;
	struct ibv_wc wc[DROCE_RX_RUN_MAX]; /**< its SENDs' completions (n of them) */
};

/**
 * How many of the @p n frames at @p pkts (parsed, their ICRCs not yet
 * checked) make a run for @p qp, the QP the first is addressed to: from
 * the first on, packets of @p qp's service to it with the first one's
 * opcode, at its expected PSN and on, with its P_Key, not marked CE,
 * while it receives requests, at most DROCE_RX_RUN_MAX. Either WRITE
 * MIDDLE packets, one MTU of payload each, that fit what is left of its
 * WRITE and whose range its region takes; or, between messages, two or
 * more WRITE ONLY packets (the QP takes remote writes) or SEND ONLY
 * packets (with immediate or not) of at most an MTU each, of an RC or UC
 * QP. 0 when the first is not such a packet: the frames go to
 * droce_resp_rx() one by one, which says why.
 */
unsigned droce_resp_rx_run_start(struct droce_tx *tx, struct droce_qp *qp,
				 struct rte_mbuf *const *pkts, unsigned n, struct droce_rx_run *run);

/**
 * Take the next frame of @p run for @p qp, @p m, once its ICRC was
 * checked: its payload goes where the run is (a MIDDLE packet), where its
 * RETH says (a WRITE ONLY packet) or into the next receive (a SEND), now
 * or beside the next frame's check (droce_payload_to_mem()). The RETH is
 * read only now: a corrupt one never decides where bytes land.
 * @return false, taking nothing, when @p m is a packet droce_resp_rx()
 * would not take as the run does: a WRITE ONLY packet whose RETH it
 * refuses (another length than its payload's, a range its region does
 * not take); a SEND with no receive or no room in the CQ for its
 * completion (an RNR NAK), or whose receive is not one SGE that holds
 * it. The run ends before it, and it goes to droce_resp_rx() (a receive
 * claimed stays the QP's, for it to take).
 */
bool droce_resp_rx_run_frame(struct droce_tx *tx, struct droce_qp *qp, struct droce_rx_run *run,
			     struct rte_mbuf *m);

/**
 * The run's packets taken: their SENDs' completions are shown (their
 * payloads in place first), and @p qp goes on as droce_resp_rx() would
 * have left it (its WRITE under way further on, or as many messages
 * more), owing an ACK when one asked.
 */
void droce_resp_rx_run_end(struct droce_tx *tx, struct droce_qp *qp, struct droce_rx_run *run);

/**
 * The completion of receive @p r of @p qp by the request @p pkt in @p m
 * (its immediate, the key it invalidated, a datagram's source), into
 * @p wc: what droce_resp_rx() and a run of SENDs both report.
 */
void droce_resp_recv_wc(const struct droce_qp *qp, const struct droce_recv_wqe *r,
			enum ibv_wc_status status, enum ibv_wc_opcode opcode, uint32_t byte_len,
			const struct droce_pkt *pkt, struct rte_mbuf *m, struct ibv_wc *wc);

/**
 * Send only the ACK or NAK @p qp owes. A QP being destroyed still does
 * this (its application may have seen the completion before the ACK left,
 * and a NIC would have sent it already); it touches no application memory.
 * @return true when no room was left to send it.
 */
bool droce_resp_send_owed(struct droce_tx *tx, struct droce_qp *qp);

/* ---- completer ---- */

/** Handle one response packet (ACK, NAK, READ response, atomic ACK). */
void droce_comp_rx(struct droce_tx *tx, struct droce_qp *qp, struct rte_mbuf *m,
		   const struct droce_pkt *pkt);

/**
 * Complete every outstanding send and receive WQE of @p qp with
 * IBV_WC_WR_FLUSH_ERR (the QP is in the error state). Safe to call from
 * the engine, or from a destroying thread once the engine let go.
 */
void droce_qp_flush(struct droce_qp *qp);

/** Complete every outstanding send WQE with IBV_WC_WR_FLUSH_ERR. */
void droce_qp_flush_sq(struct droce_qp *qp);

/**
 * A fatal error in the engine: complete the WQE at the head of the send
 * queue with @p status, then move RC/XRC QPs to the error state (all
 * flushed) and UC/UD QPs to the send queue error state (SQE: sends
 * flushed, receives go on).
 */
void droce_qp_fatal(struct droce_qp *qp, enum ibv_wc_status status);

/** Retire the WQE at the head of the send queue with @p status, and
 *  report it if due. */
void droce_sq_retire(struct droce_qp *qp, enum ibv_wc_status status);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_TRANSPORT_H */
