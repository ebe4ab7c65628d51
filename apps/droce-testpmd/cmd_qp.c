/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP commands: raw modify with named attributes (only the attributes
 * named go into the mask, so the state machine can be poked and its
 * EINVALs seen), query, connect, show.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "testpmd.h"

enum attr_kind { A_U8, A_U16, A_U32, A_ACCESS, A_MTU, A_GID, A_STATE };

/*
 * The attributes `modify qp` takes. Values are only checked against the
 * field's width: whether they make sense is for ibv_modify_qp to say.
 */
#define ATTR(n, k, f, m) { n, k, offsetof(struct ibv_qp_attr, f), m }
static const struct qp_attr_def {
	const char *name;
	enum attr_kind kind;
	size_t off;
	int mask;
} attr_defs[] = {
	ATTR("port", A_U8, port_num, IBV_QP_PORT),
	ATTR("pkey", A_U16, pkey_index, IBV_QP_PKEY_INDEX),
	ATTR("qkey", A_U32, qkey, IBV_QP_QKEY),
	ATTR("access", A_ACCESS, qp_access_flags, IBV_QP_ACCESS_FLAGS),
	ATTR("mtu", A_MTU, path_mtu, IBV_QP_PATH_MTU),
	ATTR("dqpn", A_U32, dest_qp_num, IBV_QP_DEST_QPN),
	ATTR("rq_psn", A_U32, rq_psn, IBV_QP_RQ_PSN),
	ATTR("sq_psn", A_U32, sq_psn, IBV_QP_SQ_PSN),
	ATTR("timeout", A_U8, timeout, IBV_QP_TIMEOUT),
	ATTR("retry", A_U8, retry_cnt, IBV_QP_RETRY_CNT),
	ATTR("rnr_retry", A_U8, rnr_retry, IBV_QP_RNR_RETRY),
	ATTR("min_rnr", A_U8, min_rnr_timer, IBV_QP_MIN_RNR_TIMER),
	ATTR("max_rd", A_U8, max_rd_atomic, IBV_QP_MAX_QP_RD_ATOMIC),
	ATTR("max_dest_rd", A_U8, max_dest_rd_atomic, IBV_QP_MAX_DEST_RD_ATOMIC),
	ATTR("dgid", A_GID, ah_attr.grh.dgid, IBV_QP_AV),
	ATTR("sgid_index", A_U8, ah_attr.grh.sgid_index, IBV_QP_AV),
	ATTR("hop_limit", A_U8, ah_attr.grh.hop_limit, IBV_QP_AV),
	ATTR("cur_state", A_STATE, cur_qp_state, IBV_QP_CUR_STATE),
	ATTR("sqd_notify", A_U8, en_sqd_async_notify, IBV_QP_EN_SQD_ASYNC_NOTIFY),
};

/* "STATE|AV|PATH_MTU" for an attribute mask. */
static void
mask_str(int mask, char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *name;
	} bits[] = {
		{ IBV_QP_STATE, "STATE" }, { IBV_QP_CUR_STATE, "CUR_STATE" },
		{ IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY" },
		{ IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS" }, { IBV_QP_PKEY_INDEX, "PKEY_INDEX" },
		{ IBV_QP_PORT, "PORT" }, { IBV_QP_QKEY, "QKEY" }, { IBV_QP_AV, "AV" },
		{ IBV_QP_PATH_MTU, "PATH_MTU" }, { IBV_QP_TIMEOUT, "TIMEOUT" },
		{ IBV_QP_RETRY_CNT, "RETRY_CNT" }, { IBV_QP_RNR_RETRY, "RNR_RETRY" },
		{ IBV_QP_RQ_PSN, "RQ_PSN" }, { IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC" },
		{ IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER" }, { IBV_QP_SQ_PSN, "SQ_PSN" },
		{ IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC" }, { IBV_QP_DEST_QPN, "DEST_QPN" },
	};
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < RTE_DIM(bits); i++)
		if ((mask & bits[i].bit) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n > 0 ? "|" : "",
					      bits[i].name);
	if (n == 0)
		snprintf(buf, len, "none");
}

/* Set one "name=value" attribute in @p attr and @p mask. */
static int
attr_set(const char *arg, struct ibv_qp_attr *attr, int *mask)
{
	static const uint64_t width_max[] = { [A_U8] = UINT8_MAX, [A_U16] = UINT16_MAX,
					      [A_U32] = UINT32_MAX };
	const char *eq = strchr(arg, '=');
	uint8_t *field = (uint8_t *)attr;
	const struct qp_attr_def *d = NULL;
	const char *val;
	unsigned i;
	uint64_t v;
	int ok;

	for (i = 0; eq != NULL && i < RTE_DIM(attr_defs); i++)
		if (strlen(attr_defs[i].name) == (size_t)(eq - arg) &&
		    strncmp(arg, attr_defs[i].name, (size_t)(eq - arg)) == 0)
			d = &attr_defs[i];
	if (d == NULL)
		return tp_error(-EINVAL, "'%s' is not attr=value with a known attribute "
				"('help qp' lists them)", arg);
	val = eq + 1;
	field += d->off;
	switch (d->kind) {
	case A_U8:
	case A_U16:
	case A_U32:
		ok = tp_parse_u64(val, width_max[d->kind], &v) == 0;
		if (ok && d->kind == A_U8)
			*field = (uint8_t)v;
		else if (ok && d->kind == A_U16)
			*(uint16_t *)field = (uint16_t)v;
		else if (ok)
			*(uint32_t *)field = (uint32_t)v;
		break;
	case A_ACCESS:
		ok = tp_parse_access(val, (int *)field) == 0;
		break;
	case A_MTU:
		ok = tp_parse_mtu(val, (enum ibv_mtu *)field) == 0;
		break;
	case A_GID:
		ok = tp_parse_gid(val, (union ibv_gid *)field) == 0;
		break;
	case A_STATE:
		ok = tp_parse_state(val, (enum ibv_qp_state *)field) == 0;
		break;
	default:
		ok = 0;
	}
	if (!ok)
		return tp_error(-EINVAL, "%s: bad value '%s'", d->name, val);
	*mask |= d->mask;
	return 0;
}

static enum ibv_qp_state
qp_state(const struct tp_obj *q)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(q->qp.qp, &a, IBV_QP_STATE, &init) != 0)
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

static int
cmd_modify_qp(struct tp_args *a)
{
	struct ibv_qp_attr attr;
	enum ibv_qp_state before;
	char ms[256];
	struct tp_obj *q;
	int mask = 0, rc;
	unsigned i;

	if (a->argc < 2)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_QP, &q)) != 0)
		return rc;
	memset(&attr, 0, sizeof(attr));
	/* An address vector needs these; named attributes override them. */
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.hop_limit = 64;
	if (strcmp(a->argv[1], "-") != 0) {
		if (tp_parse_state(a->argv[1], &attr.qp_state) != 0)
			return tp_error(-EINVAL, "'%s' is not a QP state (reset, init, rtr, rts, "
					"sqd, sqe, err) or '-'", a->argv[1]);
		mask |= IBV_QP_STATE;
	}
	for (i = 2; i < a->argc; i++)
		if ((rc = attr_set(a->argv[i], &attr, &mask)) != 0)
			return rc;
	before = qp_state(q);
	mask_str(mask, ms, sizeof(ms));
	rc = tp_verbs_rc(ibv_modify_qp(q->qp.qp, &attr, mask));
	if (rc != 0)
		return tp_error(rc, "modify qp %u (%s, mask %s)", q->id, tp_qp_state_name(before),
				ms);
	printf("qp %u: %s -> %s (mask %s)\n", q->id, tp_qp_state_name(before),
	       tp_qp_state_name(qp_state(q)), ms);
	return 0;
}

static int
cmd_query_qp(struct tp_args *a)
{
	struct tp_obj *q;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_QP, &q)) != 0)
		return rc;
	return tp_show_qp(q);
}

static int
cmd_connect_qp(struct tp_args *a)
{
	struct tp_obj *q, *q2;
	struct tp_peer peer;
	int rc;

	if (a->argc != 2 && !(a->argc == 5 && strcmp(a->argv[1], "remote") == 0))
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_QP, &q)) != 0)
		return rc;
	if (a->argc == 2) {
		if ((rc = tp_arg_obj(a->argv[1], TP_QP, &q2)) != 0)
			return rc;
		if ((rc = tp_connect_local(q, q2)) != 0)
			return rc;
		printf("qp %u (qpn 0x%x) and qp %u (qpn 0x%x) connected: %s, %s\n", q->id,
		       q->qp.qp->qp_num, q2->id, q2->qp.qp->qp_num,
		       tp_qp_state_name(qp_state(q)), tp_qp_state_name(qp_state(q2)));
		return 0;
	}
	tp_peer_of(q, &peer); /* the peer's MTU: assume ours */
	if ((rc = tp_arg_u32(a->argv[2], "qpn", 0xffffff, &peer.qpn)) != 0 ||
	    (rc = tp_arg_u32(a->argv[4], "psn", 0xffffff, &peer.psn)) != 0)
		return rc;
	if (tp_parse_gid(a->argv[3], &peer.gid) != 0)
		return tp_error(-EINVAL, "'%s' is not a GID or IPv4 address", a->argv[3]);
	if ((rc = tp_connect(q, &peer)) != 0)
		return rc;
	printf("qp %u (qpn 0x%x) connected to qpn 0x%x: %s\n", q->id, q->qp.qp->qp_num,
	       peer.qpn, tp_qp_state_name(qp_state(q)));
	return 0;
}

static int
cmd_show_qp(struct tp_args *a)
{
	struct tp_obj *q;
	int rc;

	if (a->argc < 1 || a->argc > 2 || (a->argc == 2 && strcmp(a->argv[1], "connect-info")))
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_QP, &q)) != 0)
		return rc;
	if (a->argc == 2) {
		tp_show_connect_info(q);
		return 0;
	}
	if ((rc = tp_show_qp(q)) != 0)
		return rc;
	rc = tp_telemetry_qp(tp_ports[q->port].dev, q->qp.qp->qp_num);
	if (rc == -ENOENT)
		printf("  counters: none (the EAL runs without telemetry)\n");
	else if (rc != 0)
		printf("  counters: none (telemetry: %s)\n", strerror(-rc));
	return 0;
}

static int
cmd_show_qps(struct tp_args *a)
{
	if (a->argc != 0)
		return tp_usage(a);
	tp_show_qps();
	return 0;
}

static const struct tp_cmd qp_cmds[] = {
	{ "modify qp", "<id> <state>|- [attr=value ...]",
	  "ibv_modify_qp with exactly the attributes named (state '-': none); attributes: "
	  "port pkey qkey access mtu dqpn rq_psn sq_psn timeout retry rnr_retry min_rnr "
	  "max_rd max_dest_rd dgid sgid_index hop_limit cur_state sqd_notify", cmd_modify_qp },
	{ "query qp", "<id>", "print ibv_query_qp's attributes", cmd_query_qp },
	{ "connect qp", "<id1> <id2> | <id> remote <qpn> <gid> <psn>",
	  "bring QPs to RTS: two local ones aimed at each other, or one at a remote peer "
	  "(UD: an AH to the peer is created)", cmd_connect_qp },
	{ "show qp", "<id> [connect-info]",
	  "state, attributes and counters of a QP; or what its peer needs to connect",
	  cmd_show_qp },
	{ "show qps", "", "one line per QP", cmd_show_qps },
	{ NULL, NULL, NULL, NULL },
};

const struct tp_family tp_family_qp = {
	"qp", "modify, query, connect and show QPs", qp_cmds,
};
