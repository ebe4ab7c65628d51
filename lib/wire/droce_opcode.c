/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table. Each row lists only what the IBTA says about an opcode
 * (its flags); the header offsets follow from the flags at compile time,
 * so no offset is typed by hand.
 */
#include "droce_wire.h"

/* Extension header sizes (IBTA 9.3 and Annex A17 for the CNP). */
#define SZ_BTH     sizeof(struct droce_bth)
#define SZ_DETH    sizeof(struct droce_deth)
#define SZ_XRCETH  sizeof(struct droce_xrceth)
#define SZ_RETH    sizeof(struct droce_reth)
#define SZ_ATMETH  sizeof(struct droce_atomic_eth)
#define SZ_IMMDT   sizeof(struct droce_immdt)
#define SZ_IETH    sizeof(struct droce_ieth)
#define SZ_AETH    sizeof(struct droce_aeth)
#define SZ_ATMACK  sizeof(struct droce_atomic_ack_eth)
/* A CNP has 16 reserved bytes after its BTH and no payload. */
#define SZ_CNP_RSVD 16

/* Size of header @p h when flags @p f say it is present. */
#define HAS(f, h) (((f) & DROCE_OPF_##h) ? SZ_##h : 0)

/*
 * End of each header in the IBTA order BTH, DETH, XRCETH, RETH, AtomicETH,
 * ImmDt, IETH, AETH, AtomicAckETH (an absent header takes no room).
 */
#define END_BTH(f)    (SZ_BTH + (((f) & DROCE_OPF_CNP) ? SZ_CNP_RSVD : 0))
#define END_DETH(f)   (END_BTH(f) + HAS(f, DETH))
#define END_XRCETH(f) (END_DETH(f) + HAS(f, XRCETH))
#define END_RETH(f)   (END_XRCETH(f) + HAS(f, RETH))
#define END_ATMETH(f) (END_RETH(f) + HAS(f, ATMETH))
#define END_IMMDT(f)  (END_ATMETH(f) + HAS(f, IMMDT))
#define END_IETH(f)   (END_IMMDT(f) + HAS(f, IETH))
#define END_AETH(f)   (END_IETH(f) + HAS(f, AETH))
#define END_ATMACK(f) (END_AETH(f) + HAS(f, ATMACK))

/* Offset of header @p h: where the previous one ends, 0 when absent. */
#define OFF(f, h, prev) (((f) & DROCE_OPF_##h) ? END_##prev(f) : 0)

#define ROW(str, f, rcv) {						\
	.name = (str),							\
	.flags = (f),							\
	.to = (rcv),							\
	.hdr_len = END_ATMACK(f),					\
	.off = {							\
		[DROCE_HDR_BTH] = 0,					\
		[DROCE_HDR_DETH] = OFF(f, DETH, BTH),			\
		[DROCE_HDR_XRCETH] = OFF(f, XRCETH, DETH),		\
		[DROCE_HDR_RETH] = OFF(f, RETH, XRCETH),		\
		[DROCE_HDR_ATMETH] = OFF(f, ATMETH, RETH),		\
		[DROCE_HDR_IMMDT] = OFF(f, IMMDT, ATMETH),		\
		[DROCE_HDR_IETH] = OFF(f, IETH, IMMDT),			\
		[DROCE_HDR_AETH] = OFF(f, AETH, IETH),			\
		[DROCE_HDR_ATMACK] = OFF(f, ATMACK, AETH),		\
		[DROCE_HDR_PAYLOAD] = END_ATMACK(f),			\
	},								\
}

/* Short names for the flags, only for the lists below. */
#define REQ     DROCE_OPF_REQ
#define RESP    DROCE_OPF_RESP
#define FIRST   DROCE_OPF_FIRST
#define MIDDLE  DROCE_OPF_MIDDLE
#define LAST    DROCE_OPF_LAST
#define ONLY    DROCE_OPF_ONLY
#define PAYLOAD DROCE_OPF_PAYLOAD
#define SEND    (DROCE_OPF_SEND | REQ | PAYLOAD)
#define WRITE   (DROCE_OPF_WRITE | REQ | PAYLOAD)
#define RRESP   (DROCE_OPF_READ | RESP | PAYLOAD)
#define RETH    DROCE_OPF_RETH
#define AETH    DROCE_OPF_AETH
#define IMMDT   DROCE_OPF_IMMDT
#define IETH    DROCE_OPF_IETH

/* Operations of UC, RC and XRC: SEND and RDMA WRITE (codes 0x00-0x0b). */
#define SEND_WRITE_OPS(X)						\
	X(SEND_FIRST,      SEND | FIRST)				\
	X(SEND_MIDDLE,     SEND | MIDDLE)				\
	X(SEND_LAST,       SEND | LAST)					\
	X(SEND_LAST_IMM,   SEND | LAST | IMMDT)				\
	X(SEND_ONLY,       SEND | ONLY)					\
	X(SEND_ONLY_IMM,   SEND | ONLY | IMMDT)				\
	X(WRITE_FIRST,     WRITE | FIRST | RETH)			\
	X(WRITE_MIDDLE,    WRITE | MIDDLE)				\
	X(WRITE_LAST,      WRITE | LAST)				\
	X(WRITE_LAST_IMM,  WRITE | LAST | IMMDT)			\
	X(WRITE_ONLY,      WRITE | ONLY | RETH)				\
	X(WRITE_ONLY_IMM,  WRITE | ONLY | RETH | IMMDT)

/* Operations only the reliable services have. */
#define RELIABLE_OPS(X)							\
	X(READ_REQUEST,     DROCE_OPF_READ | REQ | ONLY | RETH)		\
	X(READ_RESP_FIRST,  RRESP | FIRST | AETH)			\
	X(READ_RESP_MIDDLE, RRESP | MIDDLE)				\
	X(READ_RESP_LAST,   RRESP | LAST | AETH)			\
	X(READ_RESP_ONLY,   RRESP | ONLY | AETH)			\
	X(ACK,              DROCE_OPF_ACK | RESP | ONLY | AETH)		\
	X(ATOMIC_ACK,       DROCE_OPF_ATOMIC | DROCE_OPF_ACK | RESP |	\
			    ONLY | AETH | DROCE_OPF_ATMACK)		\
	X(CMP_SWAP,         DROCE_OPF_ATOMIC | REQ | ONLY | DROCE_OPF_ATMETH) \
	X(FETCH_ADD,        DROCE_OPF_ATOMIC | REQ | ONLY | DROCE_OPF_ATMETH) \
	X(SEND_LAST_INV,    SEND | LAST | IETH)				\
	X(SEND_ONLY_INV,    SEND | ONLY | IETH)

#define RC_ROW(op, f) \
	[DROCE_SVC_RC | DROCE_OP_##op] = ROW("RC_" #op, f, DROCE_RCV_RC),
#define UC_ROW(op, f) \
	[DROCE_SVC_UC | DROCE_OP_##op] = ROW("UC_" #op, f, DROCE_RCV_UC),
/* XRC requests carry the XRCETH right after the BTH; responses do not.
 * Requests go to the target, responses back to the initiator. */
#define XRC_FLAGS(f) ((f) | (((f) & REQ) ? DROCE_OPF_XRCETH : 0))
#define XRC_RCV(f) (((f) & REQ) ? DROCE_RCV_XRC_TGT : DROCE_RCV_XRC_INI)
#define XRC_ROW(op, f) \
	[DROCE_SVC_XRC | DROCE_OP_##op] = ROW("XRC_" #op, XRC_FLAGS(f), XRC_RCV(f)),

const struct droce_opcode_info droce_opcode_table[256] = {
	SEND_WRITE_OPS(RC_ROW)
	RELIABLE_OPS(RC_ROW)
	SEND_WRITE_OPS(UC_ROW)
	[DROCE_SVC_UD | DROCE_OP_SEND_ONLY] =
		ROW("UD_SEND_ONLY", SEND | ONLY | DROCE_OPF_DETH, DROCE_RCV_UD),
	[DROCE_SVC_UD | DROCE_OP_SEND_ONLY_IMM] =
		ROW("UD_SEND_ONLY_IMM", SEND | ONLY | DROCE_OPF_DETH | IMMDT, DROCE_RCV_UD),
	/* Congestion control is not a QP's business (yet): no QP takes it. */
	/* A CNP slows a QP that sends reliable or unreliable-connected data. */
	[DROCE_OPCODE_CNP] = ROW("CNP", DROCE_OPF_CNP,
				 DROCE_RCV_RC | DROCE_RCV_UC | DROCE_RCV_XRC_INI),
	SEND_WRITE_OPS(XRC_ROW)
	RELIABLE_OPS(XRC_ROW)
};
