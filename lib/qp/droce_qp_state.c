/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The QP state transition table of the InfiniBand Architecture
 * specification (Vol. 1: the QP/EE context state diagram and the
 * attribute tables of the Modify Queue Pair verb), in the form the Linux
 * kernel enforces it
 * (ib_modify_qp_is_ok() in drivers/infiniband/core/verbs.c), for the QP
 * types droce implements.
 *
 * Kernel behaviour this file follows, and where it differs by version:
 *  - RESET -> ERR does not exist (a QP that never left RESET has nothing
 *    to flush); every other state may go to RESET and to ERR, and
 *    RESET -> RESET and ERR -> ERR are accepted as no-ops.
 *  - A modify without IBV_QP_STATE is checked as cur -> cur (drivers pass
 *    next = cur), so attributes can be changed in INIT, RTS and SQD only.
 *  - IBV_QP_CUR_STATE is only meaningful leaving RTR, RTS, SQD or SQE; the
 *    kernel tests that separately, here it simply only appears in the
 *    optional sets of those transitions.
 *  - Older kernels (3.x era) took a link-layer argument and, for Ethernet,
 *    added RoCE-only bits (SMAC required, VID/ALT_SMAC/ALT_VID optional on
 *    INIT -> RTR of connected QPs). The kernel filled them in itself from
 *    the address vector; user space never passed them and verbs.h keeps
 *    them only as reserved _IBV_QP_SMAC.._IBV_QP_ALT_VID, so here they are
 *    rejected like any unknown bit. Later kernels removed those bits, then
 *    the link-layer argument: the table no longer depends on it.
 *  - Current kernels refuse IBV_QP_ALT_PATH on RoCE ports (_ib_modify_qp():
 *    alternate paths and APM are handled for IB only); droce does the
 *    same through ROCE_UNSUPPORTED below, while the table keeps the IB
 *    spec's optional sets.
 */

#include <stddef.h>

#include "droce_qp_state.h"

/* Columns of the table: one per QP type droce supports. */
enum qp_col {
	COL_RC,
	COL_UC,
	COL_UD,
	COL_XRC_SEND,
	COL_XRC_RECV,
	COL_COUNT
};

struct qp_attr_rule {
	int req;
	int opt;
};

struct qp_transition {
	enum ibv_qp_state from;
	enum ibv_qp_state to;
	struct qp_attr_rule attrs[COL_COUNT];
};

/* Attributes that a RoCE port never accepts, whatever the IB table says. */
#define ROCE_UNSUPPORTED IBV_QP_ALT_PATH

/* Port, partition and remote access rights of a connected QP. */
#define CONN_INIT (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
/* A UD QP has no remote access rights but checks every datagram's Q_Key. */
#define UD_INIT (IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)
/* The remote end of a connection: path (GRH on RoCE), MTU, QPN, first PSN. */
#define RTR_REMOTE (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | \
		    IBV_QP_RQ_PSN)
/* Responder resources of a reliable receiver: read/atomic depth, RNR NAK. */
#define RTR_RESPONDER (IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
/* Requester of a reliable sender: ACK timeout, retries, reads in flight. */
#define RTS_REQUESTER (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
		       IBV_QP_MAX_QP_RD_ATOMIC)
/* Automatic path migration: alternate path and migration state. */
#define APM (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)

/*
 * What may be retuned while a QP sends (entering RTS or staying there):
 * access rights and APM for connected QPs, plus the RNR NAK timer where
 * the QP is a reliable responder; the Q_Key for UD.
 */
#define RTS_OPT_RELIABLE_RESPONDER (IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | \
				    APM | IBV_QP_MIN_RNR_TIMER)
#define RTS_OPT_CONNECTED (IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | APM)
#define RTS_OPT_UD (IBV_QP_CUR_STATE | IBV_QP_QKEY)

#define RULE(r, o) { .req = (r), .opt = (o) }
/* A transition that takes no attribute other than the state, for any type. */
#define BARE(f, t) { .from = (f), .to = (t) }

/* Every transition that exists; one that is absent is invalid for all types. */
static const struct qp_transition qp_transitions[] = {
	/*
	 * Reset is reachable from every state and Error from every state but
	 * Reset: the consumer may always abort a QP (to Error, flushing its
	 * work requests) or recycle it (to Reset). Neither takes attributes.
	 */
	BARE(IBV_QPS_RESET, IBV_QPS_RESET),
	BARE(IBV_QPS_INIT, IBV_QPS_RESET),
	BARE(IBV_QPS_RTR, IBV_QPS_RESET),
	BARE(IBV_QPS_RTS, IBV_QPS_RESET),
	BARE(IBV_QPS_SQD, IBV_QPS_RESET),
	BARE(IBV_QPS_SQE, IBV_QPS_RESET),
	BARE(IBV_QPS_ERR, IBV_QPS_RESET),
	BARE(IBV_QPS_INIT, IBV_QPS_ERR),
	BARE(IBV_QPS_RTR, IBV_QPS_ERR),
	BARE(IBV_QPS_RTS, IBV_QPS_ERR),
	BARE(IBV_QPS_SQD, IBV_QPS_ERR),
	BARE(IBV_QPS_SQE, IBV_QPS_ERR),
	BARE(IBV_QPS_ERR, IBV_QPS_ERR),
	/*
	 * Reset -> Init: bind the QP to a port and partition; from here it
	 * may post receives. Connected QPs fix the remote access they grant,
	 * UD QPs the Q_Key their datagrams must carry.
	 */
	{ IBV_QPS_RESET, IBV_QPS_INIT, {
		[COL_RC] = RULE(CONN_INIT, 0),
		[COL_UC] = RULE(CONN_INIT, 0),
		[COL_UD] = RULE(UD_INIT, 0),
		[COL_XRC_SEND] = RULE(CONN_INIT, 0),
		[COL_XRC_RECV] = RULE(CONN_INIT, 0),
	} },
	/* Init -> Init: the Reset -> Init attributes may be changed again. */
	{ IBV_QPS_INIT, IBV_QPS_INIT, {
		[COL_RC] = RULE(0, CONN_INIT),
		[COL_UC] = RULE(0, CONN_INIT),
		[COL_UD] = RULE(0, UD_INIT),
		[COL_XRC_SEND] = RULE(0, CONN_INIT),
		[COL_XRC_RECV] = RULE(0, CONN_INIT),
	} },
	/*
	 * Init -> Ready To Receive: a connected QP learns its peer (path,
	 * MTU, QPN, expected PSN); a reliable responder also its read/atomic
	 * resources and RNR NAK timer. XRC_SEND only sends, so needs no
	 * responder resources. UD has no peer and needs nothing.
	 */
	{ IBV_QPS_INIT, IBV_QPS_RTR, {
		[COL_RC] = RULE(RTR_REMOTE | RTR_RESPONDER,
				IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				IBV_QP_PKEY_INDEX),
		[COL_UC] = RULE(RTR_REMOTE,
				IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				IBV_QP_PKEY_INDEX),
		[COL_UD] = RULE(0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY),
		[COL_XRC_SEND] = RULE(RTR_REMOTE,
				      IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				      IBV_QP_PKEY_INDEX),
		[COL_XRC_RECV] = RULE(RTR_REMOTE | RTR_RESPONDER,
				      IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				      IBV_QP_PKEY_INDEX),
	} },
	/*
	 * Ready To Receive -> Ready To Send: every QP needs its first send
	 * PSN; a reliable requester also its ACK timeout, retry counts and
	 * reads in flight. XRC_RECV sends only responses: it needs the
	 * timeout but no retry counts.
	 */
	{ IBV_QPS_RTR, IBV_QPS_RTS, {
		[COL_RC] = RULE(RTS_REQUESTER | IBV_QP_SQ_PSN,
				RTS_OPT_RELIABLE_RESPONDER),
		[COL_UC] = RULE(IBV_QP_SQ_PSN, RTS_OPT_CONNECTED),
		[COL_UD] = RULE(IBV_QP_SQ_PSN, RTS_OPT_UD),
		[COL_XRC_SEND] = RULE(RTS_REQUESTER | IBV_QP_SQ_PSN,
				      RTS_OPT_CONNECTED),
		[COL_XRC_RECV] = RULE(IBV_QP_TIMEOUT | IBV_QP_SQ_PSN,
				      RTS_OPT_RELIABLE_RESPONDER),
	} },
	/* Ready To Send -> Ready To Send: retune a running QP. */
	{ IBV_QPS_RTS, IBV_QPS_RTS, {
		[COL_RC] = RULE(0, RTS_OPT_RELIABLE_RESPONDER),
		[COL_UC] = RULE(0, RTS_OPT_CONNECTED),
		[COL_UD] = RULE(0, RTS_OPT_UD),
		[COL_XRC_SEND] = RULE(0, RTS_OPT_CONNECTED),
		[COL_XRC_RECV] = RULE(0, RTS_OPT_RELIABLE_RESPONDER),
	} },
	/*
	 * Ready To Send -> Send Queue Drain: stop starting new send requests,
	 * optionally asking for an affiliated event once drained.
	 */
	{ IBV_QPS_RTS, IBV_QPS_SQD, {
		[COL_RC] = RULE(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[COL_UC] = RULE(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[COL_UD] = RULE(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[COL_XRC_SEND] = RULE(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
		[COL_XRC_RECV] = RULE(0, IBV_QP_EN_SQD_ASYNC_NOTIFY),
	} },
	/* Send Queue Drain -> Ready To Send: resume, same tuning as RTS. */
	{ IBV_QPS_SQD, IBV_QPS_RTS, {
		[COL_RC] = RULE(0, RTS_OPT_RELIABLE_RESPONDER),
		[COL_UC] = RULE(0, RTS_OPT_CONNECTED),
		[COL_UD] = RULE(0, RTS_OPT_UD),
		[COL_XRC_SEND] = RULE(0, RTS_OPT_CONNECTED),
		[COL_XRC_RECV] = RULE(0, RTS_OPT_RELIABLE_RESPONDER),
	} },
	/*
	 * Send Queue Drain -> Send Queue Drain: with the send queue drained,
	 * the consumer may move the QP (port, path) and change the transport
	 * parameters that are fixed while requests are in flight.
	 */
	{ IBV_QPS_SQD, IBV_QPS_SQD, {
		[COL_RC] = RULE(0, IBV_QP_PORT | IBV_QP_AV | RTS_REQUESTER |
				   RTR_RESPONDER | APM | IBV_QP_ACCESS_FLAGS |
				   IBV_QP_PKEY_INDEX),
		[COL_UC] = RULE(0, IBV_QP_AV | APM | IBV_QP_ACCESS_FLAGS |
				   IBV_QP_PKEY_INDEX),
		[COL_UD] = RULE(0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY),
		[COL_XRC_SEND] = RULE(0, IBV_QP_PORT | IBV_QP_AV |
					 RTS_REQUESTER | APM |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX),
		[COL_XRC_RECV] = RULE(0, IBV_QP_PORT | IBV_QP_AV |
					 IBV_QP_TIMEOUT | RTR_RESPONDER | APM |
					 IBV_QP_ACCESS_FLAGS |
					 IBV_QP_PKEY_INDEX),
	} },
	/*
	 * Send Queue Error -> Ready To Send: an unreliable QP whose send
	 * failed resumes sending. Reliable QPs go to Error instead and never
	 * reach SQE, but the kernel accepts this bare transition for them.
	 */
	{ IBV_QPS_SQE, IBV_QPS_RTS, {
		[COL_UC] = RULE(0, IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS),
		[COL_UD] = RULE(0, RTS_OPT_UD),
	} },
};

#define QP_TRANSITION_COUNT (sizeof(qp_transitions) / sizeof(qp_transitions[0]))

static int
qp_type_col(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return COL_RC;
	case IBV_QPT_UC:
		return COL_UC;
	case IBV_QPT_UD:
		return COL_UD;
	case IBV_QPT_XRC_SEND:
		return COL_XRC_SEND;
	case IBV_QPT_XRC_RECV:
		return COL_XRC_RECV;
	default:
		return -1;
	}
}

static const struct qp_transition *
qp_transition_find(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	size_t i;

	for (i = 0; i < QP_TRANSITION_COUNT; i++)
		if (qp_transitions[i].from == cur && qp_transitions[i].to == next)
			return &qp_transitions[i];
	return NULL;
}

static const struct qp_attr_rule *
qp_rule_find(enum ibv_qp_state cur, enum ibv_qp_state next,
	     enum ibv_qp_type type)
{
	const struct qp_transition *t;
	int col = qp_type_col(type);

	if (col < 0)
		return NULL;
	t = qp_transition_find(cur, next);
	return t != NULL ? &t->attrs[col] : NULL;
}

/* The optional attributes of the IB table that a RoCE port accepts. */
static int
qp_rule_opt(const struct qp_attr_rule *r)
{
	return r->opt & ~ROCE_UNSUPPORTED;
}

bool
droce_qp_transition_valid(enum ibv_qp_state cur, enum ibv_qp_state next)
{
	return qp_transition_find(cur, next) != NULL;
}

int
droce_qp_attr_required(enum ibv_qp_state cur, enum ibv_qp_state next,
		       enum ibv_qp_type type)
{
	const struct qp_attr_rule *r = qp_rule_find(cur, next, type);

	return r != NULL ? r->req : 0;
}

int
droce_qp_attr_optional(enum ibv_qp_state cur, enum ibv_qp_state next,
		       enum ibv_qp_type type)
{
	const struct qp_attr_rule *r = qp_rule_find(cur, next, type);

	return r != NULL ? qp_rule_opt(r) : 0;
}

bool
droce_qp_modify_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
		      enum ibv_qp_type type, int mask)
{
	/* Unsigned so that bit 31 and any garbage compare as plain bits. */
	unsigned int m = (unsigned int)mask;
	const struct qp_attr_rule *r;
	unsigned int req, allowed;

	if (!(m & IBV_QP_STATE))
		next = cur;
	r = qp_rule_find(cur, next, type);
	if (r == NULL)
		return false;
	req = (unsigned int)r->req;
	allowed = req | (unsigned int)qp_rule_opt(r) | IBV_QP_STATE;
	return (m & req) == req && (m & ~allowed) == 0;
}

const char *
droce_qp_state_str(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET",
		[IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR",
		[IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD",
		[IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if ((unsigned int)s >= sizeof(names) / sizeof(names[0]))
		return "UNKNOWN";
	return names[s];
}

const char *
droce_qp_attr_str(int one_bit)
{
	static const struct {
		int bit;
		const char *name;
	} names[] = {
		{ IBV_QP_STATE, "IBV_QP_STATE" },
		{ IBV_QP_CUR_STATE, "IBV_QP_CUR_STATE" },
		{ IBV_QP_EN_SQD_ASYNC_NOTIFY, "IBV_QP_EN_SQD_ASYNC_NOTIFY" },
		{ IBV_QP_ACCESS_FLAGS, "IBV_QP_ACCESS_FLAGS" },
		{ IBV_QP_PKEY_INDEX, "IBV_QP_PKEY_INDEX" },
		{ IBV_QP_PORT, "IBV_QP_PORT" },
		{ IBV_QP_QKEY, "IBV_QP_QKEY" },
		{ IBV_QP_AV, "IBV_QP_AV" },
		{ IBV_QP_PATH_MTU, "IBV_QP_PATH_MTU" },
		{ IBV_QP_TIMEOUT, "IBV_QP_TIMEOUT" },
		{ IBV_QP_RETRY_CNT, "IBV_QP_RETRY_CNT" },
		{ IBV_QP_RNR_RETRY, "IBV_QP_RNR_RETRY" },
		{ IBV_QP_RQ_PSN, "IBV_QP_RQ_PSN" },
		{ IBV_QP_MAX_QP_RD_ATOMIC, "IBV_QP_MAX_QP_RD_ATOMIC" },
		{ IBV_QP_ALT_PATH, "IBV_QP_ALT_PATH" },
		{ IBV_QP_MIN_RNR_TIMER, "IBV_QP_MIN_RNR_TIMER" },
		{ IBV_QP_SQ_PSN, "IBV_QP_SQ_PSN" },
		{ IBV_QP_MAX_DEST_RD_ATOMIC, "IBV_QP_MAX_DEST_RD_ATOMIC" },
		{ IBV_QP_PATH_MIG_STATE, "IBV_QP_PATH_MIG_STATE" },
		{ IBV_QP_CAP, "IBV_QP_CAP" },
		{ IBV_QP_DEST_QPN, "IBV_QP_DEST_QPN" },
		{ IBV_QP_RATE_LIMIT, "IBV_QP_RATE_LIMIT" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].bit == one_bit)
			return names[i].name;
	return "UNKNOWN";
}
