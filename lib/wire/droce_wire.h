/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RoCEv2 on the wire (IBTA Annex A17): the InfiniBand transport headers
 * carried in UDP/IP, the opcode table, 24-bit PSN arithmetic, frame
 * parsing and building, and the ICRC.
 *
 * Nothing here keeps state: every function works on the bytes it is given.
 * All header structures are packed and hold fields in network byte order,
 * exactly as on the wire.
 */
#ifndef DROCE_WIRE_H
#define DROCE_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** UDP destination port of RoCEv2. */
#define DROCE_UDP_PORT 4791
/** Size of the invariant CRC that ends every RoCEv2 packet. */
#define DROCE_ICRC_LEN 4
/** Default partition key (full membership). */
#define DROCE_PKEY_DEFAULT 0xffff
/** QPN mask: queue pair numbers are 24 bits. */
#define DROCE_QPN_MASK 0xffffffu
/** The longest message: 2^31 bytes (IBA 9.4.4). */
#define DROCE_MAX_MSG_LEN (1u << 31)

/** PSN mask: packet sequence numbers are 24 bits. */
#define DROCE_PSN_MASK 0xffffffu

/** Base Transport Header (12 bytes). */
struct droce_bth {
	uint8_t opcode;
	uint8_t flags;     /**< SE(7) MigReq(6) PadCnt(5:4) TVer(3:0) */
	rte_be16_t pkey;
	uint8_t resv8a;    /**< FECN(7) BECN(6), masked in the ICRC */
	uint8_t qpn[3];    /**< destination QP */
	rte_be32_t apsn;   /**< AckReq(31) resv(30:24) PSN(23:0) */
} __rte_packed;

#define DROCE_BTH_SE       0x80
#define DROCE_BTH_MIG      0x40
#define DROCE_BTH_PAD_SHIFT 4
#define DROCE_BTH_PAD_MASK 0x30
#define DROCE_BTH_FECN     0x80
#define DROCE_BTH_BECN     0x40
#define DROCE_BTH_ACKREQ   0x80000000u

/** RDMA Extended Transport Header (16 bytes). */
struct droce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

/** ACK Extended Transport Header (4 bytes). */
struct droce_aeth {
	rte_be32_t smsn;   /**< syndrome(31:24) MSN(23:0) */
} __rte_packed;

/** Atomic Extended Transport Header (28 bytes). */
struct droce_atomic_eth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;

/** Atomic ACK Extended Transport Header (8 bytes). */
struct droce_atomic_ack_eth {
	rte_be64_t orig;
} __rte_packed;

/** Immediate data (4 bytes), kept in network order end to end. */
struct droce_immdt {
	rte_be32_t imm;
} __rte_packed;

/** Invalidate Extended Transport Header (4 bytes). */
struct droce_ieth {
	rte_be32_t rkey;
} __rte_packed;

/** Datagram Extended Transport Header (8 bytes). */
struct droce_deth {
	rte_be32_t qkey;
	uint8_t resv;
	uint8_t sqpn[3];
} __rte_packed;

/** XRC Extended Transport Header (4 bytes). */
struct droce_xrceth {
	uint8_t resv;
	uint8_t srqn[3];
} __rte_packed;

/** AETH syndromes (bits 7:5 say which kind, 4:0 the value). */
enum droce_aeth_type {
	DROCE_AETH_ACK = 0x00,     /**< value: credit count */
	DROCE_AETH_RNR_NAK = 0x20, /**< value: RNR timer code */
	DROCE_AETH_NAK = 0x60,     /**< value: NAK code */
};
#define DROCE_AETH_TYPE_MASK 0xe0
#define DROCE_AETH_VALUE_MASK 0x1f
/** "No end-to-end credits": the credit count rxe and most NICs send. */
#define DROCE_AETH_CREDIT_INVALID 0x1f

/** NAK codes (AETH value with type DROCE_AETH_NAK). */
enum droce_nak_code {
	DROCE_NAK_PSN_SEQ_ERR = 0,
	DROCE_NAK_INVALID_REQ = 1,
	DROCE_NAK_REM_ACCESS_ERR = 2,
	DROCE_NAK_REM_OP_ERR = 3,
	DROCE_NAK_INVALID_RD_REQ = 4,
};

/** Opcodes: service in bits 7:5, operation in 4:0. */
enum droce_opcode {
	DROCE_OP_SEND_FIRST = 0x00,
	DROCE_OP_SEND_MIDDLE = 0x01,
	DROCE_OP_SEND_LAST = 0x02,
	DROCE_OP_SEND_LAST_IMM = 0x03,
	DROCE_OP_SEND_ONLY = 0x04,
	DROCE_OP_SEND_ONLY_IMM = 0x05,
	DROCE_OP_WRITE_FIRST = 0x06,
	DROCE_OP_WRITE_MIDDLE = 0x07,
	DROCE_OP_WRITE_LAST = 0x08,
	DROCE_OP_WRITE_LAST_IMM = 0x09,
	DROCE_OP_WRITE_ONLY = 0x0a,
	DROCE_OP_WRITE_ONLY_IMM = 0x0b,
	DROCE_OP_READ_REQUEST = 0x0c,
	DROCE_OP_READ_RESP_FIRST = 0x0d,
	DROCE_OP_READ_RESP_MIDDLE = 0x0e,
	DROCE_OP_READ_RESP_LAST = 0x0f,
	DROCE_OP_READ_RESP_ONLY = 0x10,
	DROCE_OP_ACK = 0x11,
	DROCE_OP_ATOMIC_ACK = 0x12,
	DROCE_OP_CMP_SWAP = 0x13,
	DROCE_OP_FETCH_ADD = 0x14,
	DROCE_OP_SEND_LAST_INV = 0x16,
	DROCE_OP_SEND_ONLY_INV = 0x17,
};

/** Transport service of an opcode (its top three bits). */
enum droce_service {
	DROCE_SVC_RC = 0x00,
	DROCE_SVC_UC = 0x20,
	DROCE_SVC_RD = 0x40,
	DROCE_SVC_UD = 0x60,
	DROCE_SVC_CNP = 0x80,
	DROCE_SVC_XRC = 0xa0,
};
#define DROCE_SVC_MASK 0xe0
#define DROCE_OP_MASK 0x1f
/** Congestion Notification Packet opcode (RoCEv2). */
#define DROCE_OPCODE_CNP 0x81

/** Flags of an opcode table entry. */
enum droce_opf {
	DROCE_OPF_RETH = 1u << 0,
	DROCE_OPF_AETH = 1u << 1,
	DROCE_OPF_ATMETH = 1u << 2,
	DROCE_OPF_ATMACK = 1u << 3,
	DROCE_OPF_IMMDT = 1u << 4,
	DROCE_OPF_IETH = 1u << 5,
	DROCE_OPF_DETH = 1u << 6,
	DROCE_OPF_XRCETH = 1u << 7,
	DROCE_OPF_PAYLOAD = 1u << 8,  /**< carries payload (may be 0 bytes) */
	DROCE_OPF_REQ = 1u << 9,      /**< request, handled by a responder */
	DROCE_OPF_RESP = 1u << 10,    /**< response, handled by a completer */
	DROCE_OPF_FIRST = 1u << 11,
	DROCE_OPF_MIDDLE = 1u << 12,
	DROCE_OPF_LAST = 1u << 13,
	DROCE_OPF_ONLY = DROCE_OPF_FIRST | DROCE_OPF_LAST,
	DROCE_OPF_SEND = 1u << 14,
	DROCE_OPF_WRITE = 1u << 15,
	DROCE_OPF_READ = 1u << 16,
	DROCE_OPF_ATOMIC = 1u << 17,
	DROCE_OPF_ACK = 1u << 18,     /**< ACK, NAK or ATOMIC ACK */
	DROCE_OPF_CNP = 1u << 19,
};

/** Which extension header, as an index into droce_opcode_info.off[]. */
enum droce_hdr {
	DROCE_HDR_BTH,
	DROCE_HDR_DETH,
	DROCE_HDR_XRCETH,
	DROCE_HDR_RETH,
	DROCE_HDR_ATMETH,
	DROCE_HDR_IMMDT,
	DROCE_HDR_IETH,
	DROCE_HDR_AETH,
	DROCE_HDR_ATMACK,
	DROCE_HDR_PAYLOAD,
	DROCE_HDR_NUM
};

/**
 * Which kinds of QP receive an opcode (a mask in droce_opcode_info.to).
 * RC QPs are requester and responder at once; an XRC initiator only
 * requests (it receives responses), an XRC target only responds (it
 * receives requests); UC and UD QPs receive requests only.
 */
enum droce_rcv {
	DROCE_RCV_RC = 1u << 0,
	DROCE_RCV_UC = 1u << 1,
	DROCE_RCV_UD = 1u << 2,
	DROCE_RCV_XRC_INI = 1u << 3,
	DROCE_RCV_XRC_TGT = 1u << 4,
};

/** One row of the opcode table: everything the wire says about an opcode. */
struct droce_opcode_info {
	const char *name;      /**< NULL for opcodes that are not defined */
	uint32_t flags;        /**< DROCE_OPF_* */
	uint8_t to;            /**< DROCE_RCV_*: the QPs it may be addressed to */
	uint8_t hdr_len;       /**< BTH and every extension header, in bytes */
	/** Offset of each header from the start of the BTH (0 when absent,
	 *  except BTH itself); off[DROCE_HDR_PAYLOAD] == hdr_len. */
	uint8_t off[DROCE_HDR_NUM];
};

/** The opcode table, indexed by the 8-bit BTH opcode. */
extern const struct droce_opcode_info droce_opcode_table[256];

/** True when @p opcode is one droce knows (its table row has a name). */
static inline bool
droce_opcode_valid(uint8_t opcode)
{
	return droce_opcode_table[opcode].name != NULL;
}

/* ---- 24-bit PSN arithmetic ---- */

/** @return a - b as a signed distance in the 24-bit PSN space. */
static inline int32_t
droce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/** @return psn + n, wrapped to 24 bits. */
static inline uint32_t
droce_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & DROCE_PSN_MASK;
}

/* ---- flow label and UDP source port ---- */

/**
 * The flow label of a flow whose AH gave none, from its two QPNs, as
 * Linux computes it (rdma_calc_flow_label()): the same label, and so the
 * same UDP source port, on both ends of a connection.
 */
static inline uint32_t
droce_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

/**
 * The UDP source port of a RoCEv2 flow (rdma_get_udp_sport()): the 20-bit
 * flow label (@p fl, or droce_flow_label() when 0) folded into 14 bits,
 * in the range 0xC000-0xFFFF. Switches' ECMP and NICs' RSS hash on it, so
 * flows spread exactly as they do between Linux hosts.
 */
static inline uint16_t
droce_udp_sport(uint32_t fl, uint32_t lqpn, uint32_t rqpn)
{
	if (fl == 0)
		fl = droce_flow_label(lqpn, rqpn);
	return (uint16_t)(0xc000 | ((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)));
}

/* ---- byte helpers for the 24-bit fields ---- */

static inline uint32_t
droce_get24(const uint8_t b[3])
{
	return ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
}

static inline void
droce_put24(uint8_t b[3], uint32_t v)
{
	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

/* ---- BTH accessors ---- */

static inline uint32_t droce_bth_qpn(const struct droce_bth *b) { return droce_get24(b->qpn); }
static inline uint32_t droce_bth_psn(const struct droce_bth *b)
{ return rte_be_to_cpu_32(b->apsn) & DROCE_PSN_MASK; }
static inline bool droce_bth_ackreq(const struct droce_bth *b)
{ return (rte_be_to_cpu_32(b->apsn) & DROCE_BTH_ACKREQ) != 0; }
static inline unsigned droce_bth_pad(const struct droce_bth *b)
{ return (b->flags & DROCE_BTH_PAD_MASK) >> DROCE_BTH_PAD_SHIFT; }
static inline bool droce_bth_se(const struct droce_bth *b) { return (b->flags & DROCE_BTH_SE) != 0; }

/** Fill a BTH. @p pad is the pad count (0..3), TVer is 0. */
static inline void
droce_bth_set(struct droce_bth *b, uint8_t opcode, bool se, unsigned pad,
	      uint16_t pkey, uint32_t dqpn, bool ackreq, uint32_t psn)
{
	b->opcode = opcode;
	b->flags = (uint8_t)((se ? DROCE_BTH_SE : 0) | ((pad << DROCE_BTH_PAD_SHIFT) & DROCE_BTH_PAD_MASK));
	b->pkey = rte_cpu_to_be_16(pkey);
	b->resv8a = 0;
	droce_put24(b->qpn, dqpn);
	b->apsn = rte_cpu_to_be_32((ackreq ? DROCE_BTH_ACKREQ : 0) | (psn & DROCE_PSN_MASK));
}

static inline uint8_t droce_aeth_syndrome(const struct droce_aeth *a)
{ return (uint8_t)(rte_be_to_cpu_32(a->smsn) >> 24); }
static inline uint32_t droce_aeth_msn(const struct droce_aeth *a)
{ return rte_be_to_cpu_32(a->smsn) & 0xffffff; }
static inline void droce_aeth_set(struct droce_aeth *a, uint8_t syndrome, uint32_t msn)
{ a->smsn = rte_cpu_to_be_32(((uint32_t)syndrome << 24) | (msn & 0xffffff)); }

/* ---- whole frames ---- */

/** The addresses and L2/L3 choices of one RoCEv2 packet. */
struct droce_l3_addr {
	bool ipv6;
	struct rte_ether_addr src_mac, dst_mac;
	uint16_t vlan_tci;       /**< 0: untagged */
	uint8_t tclass;          /**< IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;             /**< IPv4 TTL / IPv6 hop limit */
	uint32_t flow_label;     /**< IPv6 only (20 bits) */
	uint16_t ip_id;          /**< IPv4 only */
	uint16_t udp_sport;
	uint8_t sgid[16], dgid[16]; /**< IPv4 as IPv4-mapped GIDs (::ffff:a.b.c.d) */
};

/**
 * What parsing found in one frame. Offsets count from the start of the
 * frame (the Ethernet header) in the first segment; the BTH and every
 * extension header lie in the first segment, payload may continue in
 * chained segments.
 */
struct droce_pkt {
	const struct droce_opcode_info *op;
	uint8_t opcode;
	uint8_t pad;             /**< pad count from the BTH */
	bool ipv6;
	uint8_t tclass;          /**< IPv4 TOS / IPv6 traffic class (DSCP and ECN) */
	uint16_t vlan_tci;       /**< 0 when untagged */
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t bth_off;
	uint16_t payload_off;
	uint32_t payload_len;    /**< without pad and ICRC */
	uint32_t qpn;            /**< destination QP */
	uint32_t psn;
	uint16_t udp_sport;
	uint8_t sgid[16], dgid[16];
	struct rte_ether_addr src_mac;
};

/** Why droce_pkt_parse() rejected a frame. */
enum droce_parse_err {
	DROCE_PARSE_OK = 0,
	DROCE_PARSE_NOT_ROCE,    /**< not IPv4/IPv6 UDP to port 4791 */
	DROCE_PARSE_MALFORMED,   /**< truncated, bad lengths, bad version */
	DROCE_PARSE_BAD_OPCODE,  /**< opcode droce does not know */
	DROCE_PARSE_BAD_ICRC,
};

/**
 * Parse a received frame: Ethernet (with an optional 802.1Q tag), IPv4 or
 * IPv6, UDP to port 4791, BTH and the extension headers the opcode table
 * names. Checks every length; verifies the ICRC when @p check_icrc.
 * Ethernet padding after the IP packet is allowed. A UDP-4791 first
 * fragment is malformed; a later fragment, which has no UDP header, and
 * IPv6 with extension headers are not RoCE.
 * @return DROCE_PARSE_OK and @p pkt filled, or the reason it was rejected.
 */
enum droce_parse_err droce_pkt_parse(struct rte_mbuf *m, struct droce_pkt *pkt,
				     bool check_icrc);

/** The most bytes of a frame's headers droce_pkt_predict() compares. */
#define DROCE_PKT_PREDICT_LEN 80

/**
 * Header prediction: parse @p m from the first @p prev_len bytes at
 * @p prev (at least the headers, up to DROCE_PKT_PREDICT_LEN) of a frame
 * droce_pkt_parse() accepted with @p prev_pkt, when their headers are the
 * same bytes up to the BTH's destination QP but for the lengths (IP,
 * UDP), the checksums, IPv4's identification, the BTH's opcode and its
 * pad count, and both have no IP options or IPv6 extension headers. A
 * QP's frames are such a run (a WRITE's FIRST, MIDDLE and LAST packets,
 * a WRITE and the ACK beside it): each then costs a masked compare, the
 * opcode's row of the table and the parse's length checks, not a whole
 * parse. Whatever it accepts, droce_pkt_parse() accepts with the same
 * result (without the ICRC check, which stays to be done).
 * @return true and @p pkt filled; false when @p m is to be parsed in full
 * (which also rejects and counts what is wrong with it).
 */
bool droce_pkt_predict(const uint8_t *prev, uint32_t prev_len, const struct droce_pkt *prev_pkt,
		       const struct rte_mbuf *m, struct droce_pkt *pkt);

/** Pointer to header @p h of a parsed packet (NULL when the opcode has none). */
static inline void *
droce_pkt_hdr(const struct rte_mbuf *m, const struct droce_pkt *pkt, enum droce_hdr h)
{
	if (h != DROCE_HDR_BTH && pkt->op->off[h] == 0)
		return NULL;
	return rte_pktmbuf_mtod_offset(m, uint8_t *, pkt->bth_off + pkt->op->off[h]);
}

/**
 * What droce_mbuf_runs() hands over: @p n contiguous bytes at @p data,
 * which are bytes [@p pos, @p pos + n) of the range asked for.
 * @return 0 to go on; anything else stops the walk and is returned.
 */
typedef int (*droce_run_fn)(void *arg, uint32_t pos, const void *data, uint32_t n);

/**
 * Walk bytes [@p off, @p off + @p len) of a frame that may be chained,
 * one run per segment, in order. Every copy out of a received frame goes
 * through here, or takes droce_mbuf_flat()'s answer when the bytes are in
 * the first segment: no code assumes that a frame is one segment.
 * @return 0, what @p fn returned to stop, or -EINVAL when the frame is
 *         shorter than @p off + @p len.
 */
int droce_mbuf_runs(const struct rte_mbuf *m, uint32_t off, uint32_t len,
		    droce_run_fn fn, void *arg);

/**
 * Bytes [@p off, @p off + @p len) of a frame when they all lie in its first
 * segment (the common frame): the copies out of a frame take them at once
 * instead of walking the chain with droce_mbuf_runs() and its callback.
 * @return their address, or NULL when they are not all there.
 */
static inline const uint8_t *
droce_mbuf_flat(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	return (uint64_t)off + len <= rte_pktmbuf_data_len(m) ?
	       rte_pktmbuf_mtod_offset(m, const uint8_t *, off) : NULL;
}

/**
 * Copy bytes [@p off, @p off + @p len) of a frame (any chain) to @p dst.
 * @return 0, or -EINVAL when the frame is shorter.
 */
int droce_mbuf_copy(const struct rte_mbuf *m, uint32_t off, uint32_t len, void *dst);

/**
 * rte_pktmbuf_free_bulk() for frames that are mostly plain: when all
 * @p n are single direct segments of one pool that nothing else holds (a
 * burst droce received and is done with), they go back with one
 * rte_mempool_put_bulk(), with nothing to reset; otherwise, through
 * rte_pktmbuf_free_bulk(), which handles chains, attached and shared
 * buffers. Some 40 instructions per mbuf fewer in the common case.
 */
void droce_mbuf_free_bulk(struct rte_mbuf **m, unsigned n);

/**
 * A copy of frame @p m (any chain) cut into segments of @p seg bytes (the
 * last shorter), from @p mp: a frame as a driver with small buffers
 * delivers it. @p m stays the caller's.
 * @return the new chain, or NULL when @p mp ran out of mbufs.
 */
struct rte_mbuf *droce_mbuf_split(const struct rte_mbuf *m, struct rte_mempool *mp,
				  uint16_t seg);

/** Bytes from the Ethernet header to the BTH for these addresses. */
unsigned droce_l3_hdr_len(const struct droce_l3_addr *a);

/**
 * Write Ethernet (+VLAN), IP and UDP headers at the start of @p m's data
 * for a RoCEv2 packet whose BTH, extension headers, payload and pad take
 * @p l4_payload_len bytes (the ICRC excluded). IPv4 header checksum is
 * computed; the UDP checksum is 0, as RoCEv2 allows.
 * @return the offset of the BTH.
 */
unsigned droce_l3_hdr_write(struct rte_mbuf *m, const struct droce_l3_addr *a,
			    uint32_t l4_payload_len);

/** The LRH the ICRC covers as ones: the 8 bytes before the IP header. */
#define DROCE_ICRC_LRH_LEN 8

/**
 * The ICRC's masking of a frame without IP options (IPv6 if @p ipv6) as
 * a mask for droce_crc32_masked() over the frame from the LRH's place
 * (the 8 bytes before the IP header) on.
 */
const struct droce_crc_mask *droce_icrc_mask(bool ipv6);

/** droce_l3_hdr_write() into the buffer @p p (droce_l3_hdr_len() bytes). */
unsigned droce_l3_hdr_write_buf(uint8_t *p, const struct droce_l3_addr *a,
				uint32_t l4_payload_len);

/**
 * Compute the ICRC of a complete frame (Ethernet header to the end of pad;
 * the 4 ICRC bytes are not read) whose IP header starts at @p l3_off.
 * The packet ends where the IP header's length says (that length counts
 * the ICRC), so Ethernet padding after it is ignored; the IP, UDP and BTH
 * headers must lie in the first segment.
 * Follows Annex A17: 8 bytes of ones, the IP header with TOS/TTL (or
 * traffic class/flow label/hop limit) and checksum masked to ones, the UDP
 * header with its checksum masked, the BTH with resv8a masked, the rest
 * as is. Works on chained mbufs. A frame in one segment without IP
 * options is only read (droce_crc32_masked(), droce_crc32_beside_masked());
 * in others the masked bytes are masked in place (and the 8 bytes before
 * the IP header overwritten with ones) so that one CRC call covers each
 * segment; every byte is restored before return.
 * @return the ICRC as a host-order value; it is sent little-endian.
 *         0 when the frame is too short for the headers it names.
 */
uint32_t droce_icrc_calc(struct rte_mbuf *m, uint16_t l3_off);

/**
 * Append the ICRC to a frame built without it (grows the last segment).
 * @return 0, -EINVAL when the frame does not end where its IP length
 *         (ICRC included) says, or -ENOMEM when the last segment is full.
 */
int droce_icrc_append(struct rte_mbuf *m, uint16_t l3_off);

/**
 * @return true when the 4 bytes where the IP length ends the packet hold
 *         its correct ICRC (the last 4 bytes of a frame without padding).
 */
bool droce_icrc_check(struct rte_mbuf *m, uint16_t l3_off);

struct droce_side_copy;

/**
 * droce_icrc_check() of a frame droce_pkt_parse() accepted as @p pkt,
 * with the offsets and lengths the parse found rather than the IP
 * header's again; and the copy @p side holds (NULL: none) made, on the
 * way where the frame is long and in one segment (droce_crc32_beside()),
 * else apart. The copy is made whatever the check finds.
 */
bool droce_icrc_check_pkt(struct rte_mbuf *m, const struct droce_pkt *pkt,
			  struct droce_side_copy *side);

/**
 * Where the ICRC of a frame droce_pkt_parse() accepted as @p pkt starts
 * (the LRH's place), when it is the common short frame: in one segment
 * with its ICRC, no IP options, fewer than DROCE_CRC_MASKED_MAX bytes
 * covered (*@p len of them, the ICRC right after). Its check is then
 * droce_crc32_masked() with droce_icrc_mask(). @return NULL for others.
 */
const uint8_t *droce_icrc_short_span(const struct rte_mbuf *m, const struct droce_pkt *pkt,
				     uint32_t *len);

/**
 * CRC-32 of @p len bytes at @p p, the Ethernet polynomial (what
 * rte_net_crc_calc(p, len, RTE_NET_CRC32_ETH) and zlib's crc32() return):
 * droce's own folds, whose latency is lower, at every length of 16 bytes
 * or more, but for long runs on CPUs with the 512-bit path, which take
 * rte_net_crc's AVX-512 one. droce_crc32_init() (called by
 * droce_icrc_init()) chooses (enum droce_crc_path).
 */
uint32_t droce_crc32(const void *p, uint32_t len);

/** The first bytes of a run droce_crc32_masked() can set bits in. */
#define DROCE_CRC_MASK_LEN 64
/** droce_crc32_masked() takes runs shorter than this. */
#define DROCE_CRC_MASKED_MAX 256

/**
 * Bits to set in the first DROCE_CRC_MASK_LEN bytes of a run before its
 * CRC: byte i of the mask at b[16 + i], with 16 zero bytes on each side
 * (so a 16-byte load at any block offset of a run finds its bytes).
 * Build one with droce_crc_mask_set().
 */
struct droce_crc_mask {
	uint8_t b[16 + DROCE_CRC_MASK_LEN + 16];
};

/** Set the bits @p bits in byte @p off (< DROCE_CRC_MASK_LEN) of @p mask. */
static inline void
droce_crc_mask_set(struct droce_crc_mask *mask, unsigned off, uint8_t bits)
{
	mask->b[16 + off] |= bits;
}

/**
 * droce_crc32() of the @p len bytes at @p p (@p len < DROCE_CRC_MASKED_MAX)
 * as if each byte i < DROCE_CRC_MASK_LEN were ORed with the mask's byte i;
 * @p p is only read. Every set bit of @p mask must lie within @p len.
 */
uint32_t droce_crc32_masked(const void *p, uint32_t len, const struct droce_crc_mask *mask);

/**
 * droce_crc32_masked() of four runs of @p len bytes each (@p len <
 * DROCE_CRC_MASKED_MAX), the same mask on each, into @p crc: a burst's
 * short frames of one length, sealed or checked four at a time. Where
 * the CPU has VPCLMULQDQ (droce_crc32_init()) the four are computed side
 * by side, at some two thirds of the cost of four calls (less for
 * shorter runs); elsewhere it makes those calls.
 */
void droce_crc32_masked4(const uint8_t *const p[4], uint32_t len,
			 const struct droce_crc_mask *mask, uint32_t crc[4]);

/** Whether droce_crc32_masked4() computes its four runs side by side
 *  (the CPU has VPCLMULQDQ): elsewhere grouping runs for it gains nothing. */
bool droce_crc32_masked4_wide(void);

/** The paths droce_crc32() and its kin compute CRCs on, slowest first.
 *  A CPU may run a path without running every one before it. */
enum droce_crc_path {
	DROCE_CRC_LIB,       /**< rte_net_crc_calc() (the mask in a copy) */
	DROCE_CRC_SSE,       /**< droce's, 128-bit folds, four lanes (PCLMULQDQ, SSSE3, SSE4.1) */
	DROCE_CRC_AVX2,      /**< the same, runs of 256 bytes or more in 256-bit folds, eight
				  lanes (AVX2, VPCLMULQDQ) */
	DROCE_CRC_AVX512,    /**< 128-bit folds, the first block a masked load (AVX-512 BW, VL) */
	DROCE_CRC_VPCLMUL,   /**< and from 96 bytes on 512-bit folds, rte_net_crc's AVX-512 path
				  from 256 (AVX-512F, VBMI, VPCLMULQDQ) */
};

/**
 * Choose the fastest path the CPU runs for droce_crc32() and its kin.
 * @return the path chosen.
 */
enum droce_crc_path droce_crc32_init(void);

/**
 * Take @p path from now on instead, for tests (each path against zlib) and
 * benchmarks; not while other threads compute CRCs.
 * @return 0, or -ENOTSUP when the CPU does not run @p path.
 */
int droce_crc32_path_set(enum droce_crc_path path);

/** The path droce_crc32() and its kin take now. */
enum droce_crc_path droce_crc32_path(void);

/** @p path's name: "lib", "sse", "avx2", "avx512" or "vpclmul" (NULL for
 *  no path). */
const char *droce_crc32_path_name(enum droce_crc_path path);

/** The path droce_crc32_path_name() calls @p name.
 *  @return the path, or -EINVAL for no path of that name. */
int droce_crc32_path_by_name(const char *name);

/**
 * Choose the fastest CRC32 rte_net_crc offers on this CPU (AVX-512 with
 * VPCLMULQDQ where present: it raises the EAL's max SIMD width to 512),
 * droce_crc32()'s path (droce_crc32_init(): droce_crc32_path() tells
 * which) and droce_copy()'s loop (droce_copy_init()).
 * Call once after rte_eal_init() and before anything else uses
 * rte_net_crc (it keeps the SIMD width it saw first).
 * @return the name of rte_net_crc's path: "avx512", "sse42" or "scalar".
 */
const char *droce_icrc_init(void);

/* ---- payload copies ---- */

/** Runs from this length on may take droce_copy()'s vector loop. */
#define DROCE_COPY_VEC_MIN 1024

/** droce_copy() of a run of DROCE_COPY_VEC_MIN bytes or more. */
void droce_copy_long(void *dst, const void *src, size_t n);

/**
 * Copy @p n bytes from @p src to @p dst, which may overlap (memmove()'s
 * contract): every payload droce copies between a frame and memory goes
 * through it. memmove() copies it, except a run of DROCE_COPY_VEC_MIN
 * bytes or more whose destination lies 1-63 bytes past its source modulo
 * 4096 and does not overlap it: there glibc's `rep movsb` is up to 15
 * times slower on AMD Zen CPUs, and a loop of 32-byte moves takes it
 * where the CPU has AVX2 (droce_copy_init()).
 */
static inline void
droce_copy(void *dst, const void *src, size_t n)
{
	if (n < DROCE_COPY_VEC_MIN)
		memmove(dst, src, n);
	else
		droce_copy_long(dst, src, n);
}

/** The longest run droce_copy_small() takes. */
#define DROCE_COPY_SMALL_MAX 64

/* The first and the last @p w bytes of a run of @p n (w <= n <= 2 w),
 * both loaded before either is stored: droce_copy_small()'s step. */
static __rte_always_inline void
droce_copy_ends(uint8_t *d, const uint8_t *s, uint32_t n, uint32_t w)
{
	uint8_t a[16], e[16];

	memcpy(a, s, w);
	memcpy(e, s + n - w, w);
	memcpy(d, a, w);
	memcpy(d + n - w, e, w);
}

/**
 * droce_copy() of at most DROCE_COPY_SMALL_MAX bytes, inline: a received
 * small payload's copy, which as a call of memmove() cost some 30
 * instructions of calls and size dispatch. The run's first and last 16,
 * 8, 4 or 1 bytes (and its second and last but one 16 when longer than
 * 32) are all loaded before anything is stored, so runs that overlap are
 * copied as memmove() copies them.
 */
static __rte_always_inline void
droce_copy_small(void *dst, const void *src, uint32_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (n > 32) {
		uint8_t a[16], b[16], c[16], e[16];

		memcpy(a, s, 16);
		memcpy(b, s + 16, 16);
		memcpy(c, s + n - 32, 16);
		memcpy(e, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + 16, b, 16);
		memcpy(d + n - 32, c, 16);
		memcpy(d + n - 16, e, 16);
	} else if (n >= 16) {
		droce_copy_ends(d, s, n, 16);
	} else if (n >= 8) {
		droce_copy_ends(d, s, n, 8);
	} else if (n >= 4) {
		droce_copy_ends(d, s, n, 4);
	} else if (n != 0) {
		uint8_t a = s[0], b = s[n / 2], e = s[n - 1];

		d[0] = a;
		d[n / 2] = b;
		d[n - 1] = e;
	}
}

/** Runs from this length on may take droce_copy_crc32(). */
#define DROCE_COPY_CRC_MIN 256

/**
 * droce_copy() and the CRC-32 of the bytes copied in one pass, the
 * Ethernet CRC continued from @p *crc (zlib's crc32(*crc, src, n); 0 for
 * a CRC of these bytes alone), left in @p *crc: each block is folded
 * into the CRC as it is moved, so the bytes are read once, not again for
 * the CRC. Where the CPU has VPCLMULQDQ (droce_crc32_init()'s
 * DROCE_CRC_VPCLMUL or DROCE_CRC_AVX2 path), for runs of
 * DROCE_COPY_CRC_MIN bytes or more that do not overlap.
 * @return true when done; false, touching nothing, otherwise (the caller
 *         copies and computes the CRC apart).
 */
bool droce_copy_crc32(void *dst, const void *src, uint32_t n, uint32_t *crc);

/**
 * A copy put off until the CRC of another run is computed
 * (droce_crc32_beside()): a received payload, whose frame's ICRC was
 * checked, on its way into application memory. @ref n is 0 when none is
 * pending.
 */
struct droce_side_copy {
	void *dst;
	const void *src;
	uint32_t n;
};

/** Make the copy @p side holds, if any, now (droce_copy()). */
static inline void
droce_side_copy_run(struct droce_side_copy *side)
{
	if (side->n != 0) {
		droce_copy(side->dst, side->src, side->n);
		side->n = 0;
	}
}

/**
 * droce_crc32() of the @p len bytes at @p p, and the copy @p side holds
 * made on the way: on the DROCE_CRC_VPCLMUL path, where @p len is
 * DROCE_COPY_CRC_MIN or more, the copy's loads and stores go in beside
 * the CRC's carry-less multiplies, which leave the CPU's load and store
 * ports mostly idle, so the copy costs little more than the CRC alone.
 * Otherwise the copy is made first. @p side must not overlap @p p, nor
 * its source its destination (a frame and application memory); NULL for
 * none. The copy is made in any case (@p side->n is 0 on return).
 */
uint32_t droce_crc32_beside(const void *p, uint32_t len, struct droce_side_copy *side);

/**
 * droce_crc32_beside() of the @p len bytes at @p p as if each byte
 * i < DROCE_CRC_MASK_LEN were ORed with @p mask's byte i (what
 * droce_crc32_masked() computes, for runs of any length): the ICRC of a
 * received frame. The mask is ORed in as the bytes are read and @p p is
 * only read (masking the bytes in place would have the CRC's first loads
 * wait for those stores), but on the DROCE_CRC_LIB path, whose long runs
 * have their first bytes masked in place for rte_net_crc and put back:
 * there @p p must be writable and no other thread may read it meanwhile.
 * @p side may be NULL (no copy); @p mask NULL is droce_crc32_beside().
 */
uint32_t droce_crc32_beside_masked(void *p, uint32_t len, const struct droce_crc_mask *mask,
				   struct droce_side_copy *side);

/**
 * Let droce_copy() use its vector loop when the CPU has AVX2 (until this
 * is called every copy is a memmove()). droce_icrc_init() calls it.
 * @return true when the loop is used.
 */
bool droce_copy_init(void);

/**
 * Write an Ethernet header to @p dst from @p src at @p p, with an 802.1Q
 * tag when @p vlan_tci is not 0, for a payload of @p ether_type (host
 * order). @return its length.
 */
static inline uint32_t
droce_eth_hdr_write(uint8_t *p, const struct rte_ether_addr *dst,
		    const struct rte_ether_addr *src, uint16_t vlan_tci, uint16_t ether_type)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)p;

	rte_ether_addr_copy(dst, &eh->dst_addr);
	rte_ether_addr_copy(src, &eh->src_addr);
	if (vlan_tci == 0) {
		eh->ether_type = rte_cpu_to_be_16(ether_type);
		return sizeof(*eh);
	}
	struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
	vh->vlan_tci = rte_cpu_to_be_16(vlan_tci);
	vh->eth_proto = rte_cpu_to_be_16(ether_type);
	return sizeof(*eh) + sizeof(*vh);
}

/* ---- IPv6 neighbour discovery (RFC 4861) ---- */

/** ICMPv6 types of neighbour solicitation and advertisement. */
#define DROCE_ND_NS 135
#define DROCE_ND_NA 136
/** NA flags (the first byte after the checksum). */
#define DROCE_ND_NA_ROUTER    0x80
#define DROCE_ND_NA_SOLICITED 0x40
#define DROCE_ND_NA_OVERRIDE  0x20

/**
 * A neighbour solicitation or advertisement and the frame around it: what
 * droce_nd_parse() finds and droce_nd_write() sends. The one link-layer
 * address option droce uses is the source's (NS) or the target's (NA).
 */
struct droce_nd_msg {
	uint8_t type;                   /**< DROCE_ND_NS or DROCE_ND_NA */
	uint8_t flags;                  /**< NA: DROCE_ND_NA_* */
	uint16_t vlan_tci;              /**< 0: untagged */
	struct rte_ether_addr eth_src, eth_dst;
	uint8_t src[16], dst[16];       /**< IPv6 source and destination */
	uint8_t target[16];
	bool has_lladdr;                /**< the option is present */
	struct rte_ether_addr lladdr;
};

/** Why droce_nd_parse() rejected a frame. */
enum droce_nd_err {
	DROCE_ND_OK = 0,
	DROCE_ND_NOT_ND,     /**< IPv6, but not an NS or NA (other ICMPv6, UDP...) */
	DROCE_ND_INVALID,    /**< an NS or NA that RFC 4861 7.1 says to drop */
};

/**
 * Parse the IPv6 packet at @p l3_off of @p m (any chain) as an NS or NA,
 * with the checks of RFC 4861 7.1: hop limit 255, code 0, ICMPv6 checksum,
 * length, no multicast target, no option of length 0, an NA to a
 * multicast address not solicited, an NS from :: (duplicate address
 * detection) without a link-layer option. The Ethernet fields of @p msg
 * come from the frame's first bytes (and @p vlan_tci).
 */
enum droce_nd_err droce_nd_parse(const struct rte_mbuf *m, uint32_t l3_off,
				 uint16_t vlan_tci, struct droce_nd_msg *msg);

/**
 * Write @p msg as a whole frame into the empty mbuf @p m (Ethernet, the
 * optional 802.1Q tag, IPv6 with hop limit 255, the ICMPv6 message with
 * its checksum and the link-layer option when has_lladdr).
 * @return 0, or -ENOMEM when @p m has no room.
 */
int droce_nd_write(struct rte_mbuf *m, const struct droce_nd_msg *msg);

/** The solicited-node multicast address of @p addr (ff02::1:ffXX:XXXX). */
void droce_nd_solicited_node(const uint8_t addr[16], uint8_t out[16]);

/** The Ethernet multicast address of IPv6 multicast @p addr (33:33:...). */
void droce_ipv6_mcast_mac(const uint8_t addr[16], struct rte_ether_addr *mac);

/* ---- IGMP (RFC 2236, RFC 3376): a host's side, for UD multicast ---- */

/** IGMP message types. */
#define DROCE_IGMP_QUERY     0x11 /**< membership query, of any version */
#define DROCE_IGMP_V1_REPORT 0x12
#define DROCE_IGMP_V2_REPORT 0x16
#define DROCE_IGMP_V2_LEAVE  0x17
#define DROCE_IGMP_V3_REPORT 0x22
/** Where IGMPv2 leaves go, and general queries come from: all routers,
 *  all systems (host order). */
#define DROCE_IGMP_ALL_ROUTERS 0xe0000002u
#define DROCE_IGMP_ALL_SYSTEMS 0xe0000001u

/** An IGMP message and the frame around it: what droce_igmp_parse()
 *  finds and droce_igmp_write() sends. */
struct droce_igmp_msg {
	uint8_t type;                   /**< DROCE_IGMP_* */
	uint16_t vlan_tci;              /**< 0: untagged */
	struct rte_ether_addr eth_src;  /**< the destination's follows from dst */
	uint32_t src, dst;              /**< IPv4 source and destination, host order */
	uint32_t group;                 /**< host order; a query's 0: a general query */
};

/** Why droce_igmp_parse() rejected a frame. */
enum droce_igmp_err {
	DROCE_IGMP_OK = 0,
	DROCE_IGMP_NOT_IGMP, /**< IPv4, but another protocol */
	DROCE_IGMP_INVALID,  /**< IGMP that RFC 2236 and 3376 say to drop */
};

/**
 * Parse the IPv4 packet at @p l3_off of @p m (any chain) as IGMP: header
 * length and checksum, total length within the frame, no fragment, the IGMP checksum
 * over the whole message, at least 8 bytes (12 for a version 3 query,
 * told by its length), TTL 1, and a query's group 0 (general) or a
 * multicast address (group-specific). @p msg's Ethernet source comes from
 * the frame (and @p vlan_tci).
 */
enum droce_igmp_err droce_igmp_parse(const struct rte_mbuf *m, uint32_t l3_off,
				     uint16_t vlan_tci, struct droce_igmp_msg *msg);

/**
 * Write @p msg (an IGMPv2 report or leave) as a whole frame into the empty
 * mbuf @p m: Ethernet to the multicast MAC of msg->dst, the optional
 * 802.1Q tag, IPv4 with TTL 1, DSCP CS6 and the router alert option (RFC
 * 2113), the 8-byte message with its checksum.
 * @return 0, or -ENOMEM when @p m has no room.
 */
int droce_igmp_write(struct rte_mbuf *m, const struct droce_igmp_msg *msg);

/* ---- MLD (RFC 2710, RFC 3810): a host's side, for UD multicast ---- */

/** MLD message types (ICMPv6). */
#define DROCE_MLD_QUERY     130 /**< multicast listener query, of either version */
#define DROCE_MLD_V1_REPORT 131
#define DROCE_MLD_V1_DONE   132
#define DROCE_MLD_V2_REPORT 143

/** An MLD message and the frame around it: what droce_mld_parse() finds
 *  and droce_mld_write() sends. */
struct droce_mld_msg {
	uint8_t type;                   /**< DROCE_MLD_* */
	uint16_t vlan_tci;              /**< 0: untagged */
	struct rte_ether_addr eth_src;  /**< the destination's follows from dst */
	uint8_t src[16], dst[16];       /**< IPv6 source (link-local) and destination */
	uint8_t group[16];              /**< a query's all zeros: a general query */
};

/** Why droce_mld_parse() rejected a frame. */
enum droce_mld_err {
	DROCE_MLD_OK = 0,
	DROCE_MLD_NOT_MLD, /**< IPv6, but not MLD */
	DROCE_MLD_INVALID, /**< MLD that RFC 2710 and 3810 say to drop */
};

/**
 * Parse the IPv6 packet at @p l3_off of @p m (any chain) as MLD: a
 * Hop-by-Hop Options header (RFC 8200) with the Router Alert option of
 * value 0 (RFC 2711) and no option that says to drop a packet that does
 * not know it, then an ICMPv6 message of an MLD type (NOT_MLD for
 * anything else) whose checksum holds over the IPv6 pseudo-header, at
 * least 24 bytes (28 for a version 2 query, told by its length), hop
 * limit 1, the payload within the frame; a query's source link-local
 * (fe80::/10) and its group unspecified (general) or multicast.
 * @p msg's Ethernet source comes from the frame (and @p vlan_tci).
 */
enum droce_mld_err droce_mld_parse(const struct rte_mbuf *m, uint32_t l3_off,
				   uint16_t vlan_tci, struct droce_mld_msg *msg);

/**
 * Write @p msg (an MLDv1 report or done) as a whole frame into the empty
 * mbuf @p m: Ethernet to the multicast MAC of msg->dst, the optional
 * 802.1Q tag, IPv6 with hop limit 1, a Hop-by-Hop Options header with the
 * Router Alert (MLD) and padding, the 24-byte message with its checksum.
 * @return 0, or -ENOMEM when @p m has no room.
 */
int droce_mld_write(struct rte_mbuf *m, const struct droce_mld_msg *msg);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_WIRE_H */
