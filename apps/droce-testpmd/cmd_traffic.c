/* SPDX-License-Identifier: BSD-3-Clause */
/* Traffic commands: post, poll, show cq, and the buffer tools verify, fill, dump. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hexdump.h>

#include "testpmd.h"

/* Most completions one `poll cq` prints. */
#define TP_POLL_MAX 4096
#define TP_POLL_TIMEOUT_MS 5000
#define TP_DUMP_LEN 256

static const struct {
	const char *word;
	enum ibv_wr_opcode op, op_imm;
} send_ops[] = {
	{ "send", IBV_WR_SEND, IBV_WR_SEND_WITH_IMM },
	{ "write", IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM },
	{ "read", IBV_WR_RDMA_READ, IBV_WR_RDMA_READ },
	{ "cas", IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
	{ "fadd", IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
};

enum {
	O_REMOTE, O_PATTERN, O_COUNT, O_IMM, O_INLINE, O_SIGNALED, O_UNSIGNALED, O_COMPARE,
	O_SWAP, O_ADD, O_AH, O_DQPN, O_QKEY, O_SRQ, O_SRQN, O_NB
};
static const struct tp_opt send_opts[O_NB] = {
	[O_REMOTE] = { "remote", true }, [O_PATTERN] = { "pattern", true },
	[O_COUNT] = { "count", true }, [O_IMM] = { "imm", true },
	[O_INLINE] = { "inline", false }, [O_SIGNALED] = { "signaled", false },
	[O_UNSIGNALED] = { "unsignaled", false }, [O_COMPARE] = { "compare", true },
	[O_SWAP] = { "swap", true }, [O_ADD] = { "add", true }, [O_AH] = { "ah", true },
	[O_DQPN] = { "dqpn", true }, [O_QKEY] = { "qkey", true }, [O_SRQ] = { "srq", true },
	[O_SRQN] = { "srqn", true },
};

/* A work request's length: up to 4 GiB - 1, K/M/G allowed. */
static int
arg_len(const char *s, uint32_t *len)
{
	uint64_t v;
	int rc = tp_arg_size(s, "len", UINT32_MAX, &v);

	if (rc == 0)
		*len = (uint32_t)v;
	return rc;
}

/* "remote <mr id>" or "remote <rkey>:<addr>"; @p need bytes must fit a local MR. */
static int
remote_parse(const char *s, uint64_t need, struct tp_send *w)
{
	const char *colon = strchr(s, ':');
	struct tp_obj *mr;
	char rkey[16];
	uint64_t v;
	int rc;

	w->remote_set = true;
	if (colon == NULL) {
		if ((rc = tp_arg_obj(s, TP_MR, &mr)) != 0)
			return rc;
		if (need > mr->mr.size)
			return tp_error(-EINVAL, "remote mr %u has %zu bytes, not %" PRIu64,
					mr->id, mr->mr.size, need);
		w->raddr = (uintptr_t)mr->mr.buf;
		w->rkey = mr->mr.mr->rkey;
		return 0;
	}
	if ((size_t)(colon - s) >= sizeof(rkey))
		goto bad;
	memcpy(rkey, s, (size_t)(colon - s));
	rkey[colon - s] = '\0';
	if (tp_parse_u64(rkey, UINT32_MAX, &v) != 0 ||
	    tp_parse_u64(colon + 1, UINT64_MAX, &w->raddr) != 0)
		goto bad;
	w->rkey = (uint32_t)v;
	return 0;
bad:
	return tp_error(-EINVAL, "remote: '%s' is neither an MR id nor <rkey>:<addr>", s);
}

/* Where a UD or XRC work request goes: options, or what connect set. */
static int
send_dest(const char **val, struct tp_send *w)
{
	const struct tp_ud_dest *d = &w->qp->qp.dest;
	struct tp_obj *o;
	unsigned ah_id;
	int rc = 0;

	if (w->qp->qp.type == IBV_QPT_XRC_SEND) {
		if (val[O_SRQ] != NULL) {
			if ((rc = tp_arg_obj(val[O_SRQ], TP_SRQ, &o)) != 0)
				return rc;
			if (!o->srq.xrc)
				return tp_error(-EINVAL, "srq %u is not an XRC SRQ", o->id);
			w->srqn = o->srq.srqn;
			return 0;
		}
		if (val[O_SRQN] != NULL)
			return tp_arg_u32(val[O_SRQN], "srqn", 0xffffff, &w->srqn);
		return tp_error(-EINVAL, "an xrc_send QP needs 'srq <id>' or 'srqn <n>'");
	}
	if (w->qp->qp.type != IBV_QPT_UD)
		return 0;
	if (val[O_AH] == NULL && !d->set)
		return tp_error(-EINVAL, "a UD QP needs 'ah <id> dqpn <n>' (or connect it first)");
	w->dqpn = d->qpn;
	w->qkey = d->set ? d->qkey : TP_QKEY;
	ah_id = d->ah;
	if (val[O_AH] != NULL) {
		if ((rc = tp_arg_obj(val[O_AH], TP_AH, &o)) != 0)
			return rc;
		ah_id = o->id;
		if (val[O_DQPN] == NULL)
			return tp_error(-EINVAL, "'ah' needs 'dqpn <n>' too");
	}
	if ((val[O_DQPN] != NULL && (rc = tp_arg_u32(val[O_DQPN], "dqpn", 0xffffff, &w->dqpn))) ||
	    (val[O_QKEY] != NULL && (rc = tp_arg_u32(val[O_QKEY], "qkey", UINT32_MAX, &w->qkey))))
		return rc;
	o = tp_obj_get(ah_id);
	if (o == NULL || o->kind != TP_AH)
		return tp_error(-ENOENT, "ah %u (set by connect) is gone", ah_id);
	w->ah = o->ah.ah;
	return 0;
}

static int
send_values(const char **val, struct tp_send *w)
{
	uint64_t v;
	int rc = 0;

	if (val[O_IMM] != NULL) {
		if (w->op != IBV_WR_SEND_WITH_IMM && w->op != IBV_WR_RDMA_WRITE_WITH_IMM)
			return tp_error(-EINVAL, "imm goes with send and write");
		if ((rc = tp_arg_u32(val[O_IMM], "imm", UINT32_MAX, &w->imm)) != 0)
			return rc;
		w->imm_set = true;
	}
	if (val[O_COMPARE] != NULL || val[O_SWAP] != NULL) {
		if (w->op != IBV_WR_ATOMIC_CMP_AND_SWP)
			return tp_error(-EINVAL, "compare and swap go with cas");
		if ((val[O_COMPARE] != NULL &&
		     (rc = tp_arg_u64(val[O_COMPARE], "compare", UINT64_MAX, &w->compare_add))) ||
		    (val[O_SWAP] != NULL &&
		     (rc = tp_arg_u64(val[O_SWAP], "swap", UINT64_MAX, &w->swap))))
			return rc;
	}
	if (w->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		v = 1;
		if (val[O_ADD] != NULL && (rc = tp_arg_u64(val[O_ADD], "add", UINT64_MAX, &v)))
			return rc;
		w->compare_add = v;
	} else if (val[O_ADD] != NULL) {
		return tp_error(-EINVAL, "add goes with fadd");
	}
	if (val[O_INLINE] != NULL)
		w->flags |= IBV_SEND_INLINE;
	if (val[O_SIGNALED] != NULL && val[O_UNSIGNALED] != NULL)
		return tp_error(-EINVAL, "signaled or unsignaled, not both");
	if (val[O_UNSIGNALED] == NULL)
		w->flags |= IBV_SEND_SIGNALED;
	return 0;
}

static int
cmd_post_send(struct tp_args *a)
{
	struct tp_send w = { .count = 1 };
	const char *val[O_NB];
	struct tp_pattern pat;
	uint64_t first, need;
	unsigned i, posted;
	int rc;

	if (a->argc < 3)
		return tp_usage(a);
	for (i = 0; strcmp(a->word[1], send_ops[i].word) != 0; i++)
		;
	if ((rc = tp_arg_obj(a->argv[0], TP_QP, &w.qp)) != 0 ||
	    (rc = tp_arg_obj(a->argv[1], TP_MR, &w.mr)) != 0)
		return rc;
	if ((rc = arg_len(a->argv[2], &w.len)) != 0 ||
	    (rc = tp_opts_parse(a, 3, send_opts, O_NB, val)) != 0 ||
	    (val[O_COUNT] != NULL && (rc = tp_arg_u32(val[O_COUNT], "count", 65536, &w.count))))
		return rc;
	if (w.count == 0)
		return tp_error(-EINVAL, "count 0");
	w.op = val[O_IMM] != NULL ? send_ops[i].op_imm : send_ops[i].op;
	if ((w.op == IBV_WR_ATOMIC_CMP_AND_SWP || w.op == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
	    w.len != 8)
		return tp_error(-EINVAL, "atomics move 8 bytes, not %u", w.len);
	need = (uint64_t)w.len * w.count;
	if (need > w.mr->mr.size)
		return tp_error(-EINVAL, "%u x %u bytes do not fit mr %u (%zu bytes)", w.count,
				w.len, w.mr->id, w.mr->mr.size);
	if (val[O_REMOTE] != NULL && (rc = remote_parse(val[O_REMOTE], need, &w)) != 0)
		return rc;
	if (!w.remote_set && w.op != IBV_WR_SEND && w.op != IBV_WR_SEND_WITH_IMM)
		return tp_error(-EINVAL, "%s needs 'remote <mr>' or 'remote <rkey>:<addr>'",
				a->word[1]);
	if ((rc = send_values(val, &w)) != 0 || (rc = send_dest(val, &w)) != 0)
		return rc;
	if (val[O_PATTERN] != NULL) {
		if (tp_parse_pattern(val[O_PATTERN], &pat) != 0)
			return tp_error(-EINVAL, "'%s' is not a pattern (inc, zero, rand, 0xNN)",
					val[O_PATTERN]);
		tp_pattern_fill(w.mr->mr.buf, need, &pat);
	}
	rc = tp_post_send(&w, &first, &posted);
	if (rc != 0)
		return tp_error(rc, "post %s on qp %u: %u of %u posted", a->word[1], w.qp->id,
				posted, w.count);
	printf("qp %u: posted %u %s (wr_id %" PRIu64 "..%" PRIu64 ")\n", w.qp->id, w.count,
	       a->word[1], first, first + w.count - 1);
	return 0;
}

static int
cmd_post_recv(struct tp_args *a)
{
	static const struct tp_opt opts[] = { { "count", true } };
	const char *val[RTE_DIM(opts)];
	struct tp_obj *t, *mr;
	uint32_t len, count = 1;
	uint64_t first;
	unsigned posted;
	int rc;

	if (a->argc < 3)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_KIND_MAX, &t)) != 0 ||
	    (rc = tp_arg_obj(a->argv[1], TP_MR, &mr)) != 0)
		return rc;
	if (t->kind != TP_QP && t->kind != TP_SRQ)
		return tp_error(-EINVAL, "%u is a %s, not a qp or srq", t->id, tp_kind_name(t->kind));
	if ((rc = arg_len(a->argv[2], &len)) != 0 ||
	    (rc = tp_opts_parse(a, 3, opts, RTE_DIM(opts), val)) != 0 ||
	    (val[0] != NULL && (rc = tp_arg_u32(val[0], "count", 65536, &count)) != 0))
		return rc;
	if (count == 0 || (uint64_t)len * count > mr->mr.size)
		return tp_error(-EINVAL, "%u x %u bytes do not fit mr %u (%zu bytes)", count, len,
				mr->id, mr->mr.size);
	rc = tp_post_recv(t, mr, len, count, &first, &posted);
	if (rc != 0)
		return tp_error(rc, "post recv on %s %u: %u of %u posted", tp_kind_name(t->kind),
				t->id, posted, count);
	printf("%s %u: posted %u recv (wr_id %" PRIu64 "..%" PRIu64 ")\n", tp_kind_name(t->kind),
	       t->id, count, first, first + count - 1);
	return 0;
}

static int
cmd_poll_cq(struct tp_args *a)
{
	static const struct tp_opt opts[] = { { "timeout", true } };
	const char *val[RTE_DIM(opts)];
	uint32_t want = 0, timeout = TP_POLL_TIMEOUT_MS;
	struct ibv_wc *wc;
	struct tp_obj *cq;
	bool has_n;
	int n, i, rc;

	if (a->argc < 1)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_CQ, &cq)) != 0)
		return rc;
	has_n = a->argc > 1 && strcmp(a->argv[1], "timeout") != 0;
	if ((has_n && (rc = tp_arg_u32(a->argv[1], "n", TP_POLL_MAX, &want)) != 0) ||
	    (rc = tp_opts_parse(a, has_n ? 2 : 1, opts, RTE_DIM(opts), val)) != 0 ||
	    (val[0] != NULL && (rc = tp_arg_u32(val[0], "timeout", 3600000, &timeout)) != 0))
		return rc;
	wc = calloc(TP_POLL_MAX, sizeof(*wc));
	if (wc == NULL)
		return tp_error(-ENOMEM, "poll cq");
	n = tp_poll(cq, wc, want > 0 ? want : TP_POLL_MAX, want, timeout);
	for (i = 0; i < n; i++)
		tp_show_wc(cq, &wc[i]);
	free(wc);
	if (n < 0)
		return tp_error(n, "poll cq %u", cq->id);
	if ((unsigned)n < want)
		return tp_error(-ETIMEDOUT, "poll cq %u: %d of %u completions in %u ms", cq->id, n,
				want, timeout);
	if (n == 0)
		printf("cq %u: no completion\n", cq->id);
	return 0;
}

static int
cmd_show_cq(struct tp_args *a)
{
	struct tp_obj *cq;
	int n, rc;

	if (a->argc != 1)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_CQ, &cq)) != 0)
		return rc;
	if ((n = tp_cq_pending(cq)) < 0)
		return tp_error(n, "show cq %u", cq->id);
	printf("cq %u on port %u: %d completion%s pending (cqe %d)\n", cq->id, cq->port, n,
	       n == 1 ? "" : "s", cq->cq.cq->cqe);
	return 0;
}

static int
cmd_verify_mr(struct tp_args *a)
{
	struct tp_obj *m1, *m2;
	uint64_t len, i, diff = 0, first = 0;
	int rc;

	if (a->argc < 2 || a->argc > 3)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_MR, &m1)) != 0 ||
	    (rc = tp_arg_obj(a->argv[1], TP_MR, &m2)) != 0)
		return rc;
	len = RTE_MIN(m1->mr.size, m2->mr.size);
	if (a->argc == 3 && (rc = tp_arg_size(a->argv[2], "len", len, &len)) != 0)
		return rc;
	for (i = 0; i < len; i++)
		if (m1->mr.buf[i] != m2->mr.buf[i] && diff++ == 0)
			first = i;
	if (diff == 0) {
		printf("verify OK: mr %u and mr %u match over %" PRIu64 " bytes\n", m1->id, m2->id,
		       len);
		return 0;
	}
	printf("verify FAILED: mr %u and mr %u differ in %" PRIu64 " of %" PRIu64 " bytes, first "
	       "at offset %" PRIu64 " (0x%02x != 0x%02x)\n", m1->id, m2->id, diff, len, first,
	       m1->mr.buf[first], m2->mr.buf[first]);
	return -EIO;
}

static int
cmd_fill_mr(struct tp_args *a)
{
	struct tp_pattern pat;
	struct tp_obj *mr;
	int rc;

	if (a->argc != 2)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_MR, &mr)) != 0)
		return rc;
	if (tp_parse_pattern(a->argv[1], &pat) != 0)
		return tp_error(-EINVAL, "'%s' is not a pattern (inc, zero, rand, 0xNN)",
				a->argv[1]);
	tp_pattern_fill(mr->mr.buf, mr->mr.size, &pat);
	printf("mr %u: %zu bytes filled with %s\n", mr->id, mr->mr.size, a->argv[1]);
	return 0;
}

static int
cmd_dump_mr(struct tp_args *a)
{
	uint64_t off = 0, len;
	char title[64];
	struct tp_obj *mr;
	int rc;

	if (a->argc < 1 || a->argc > 3)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_MR, &mr)) != 0)
		return rc;
	if (a->argc > 1 && (rc = tp_arg_size(a->argv[1], "off", mr->mr.size - 1, &off)) != 0)
		return rc;
	len = RTE_MIN((uint64_t)TP_DUMP_LEN, mr->mr.size - off);
	if (a->argc > 2 && (rc = tp_arg_size(a->argv[2], "len", mr->mr.size - off, &len)) != 0)
		return rc;
	snprintf(title, sizeof(title), "mr %u offset %" PRIu64, mr->id, off);
	rte_hexdump(stdout, title, mr->mr.buf + off, (unsigned)len);
	return 0;
}

static const struct tp_cmd traffic_cmds[] = {
	{ "post send#write#read#cas#fadd", "<qp> <mr> <len> [remote <mr>|<rkey>:<addr>] "
	  "[pattern inc|zero|rand|0xNN] [count <n>] [imm <v>] [inline] [signaled|unsignaled] "
	  "[compare <v>] [swap <v>] [add <v>] [ah <id> dqpn <n> [qkey <v>]] [srq <id>|srqn <n>]",
	  "post <count> work requests of <len> bytes each, one after the other in <mr> "
	  "(and in the remote buffer); pattern fills them first; UD: ah/dqpn (or connect's "
	  "destination); xrc_send: the XRC SRQ", cmd_post_send },
	{ "post recv", "<qp|srq> <mr> <len> [count <n>]",
	  "post <count> receives of <len> bytes each, one after the other in <mr>",
	  cmd_post_recv },
	{ "poll cq", "<id> [<n>] [timeout <ms>]",
	  "print the completions there are; with <n>, wait for <n> of them (default timeout "
	  "5000 ms)", cmd_poll_cq },
	{ "show cq", "<id>", "count the pending completions (poll cq prints them later)",
	  cmd_show_cq },
	{ "verify mr", "<mr> <mr2> [<len>]", "compare two buffers (default: the shorter length)",
	  cmd_verify_mr },
	{ "fill mr", "<mr> inc|zero|rand|0xNN", "fill a whole buffer with a pattern",
	  cmd_fill_mr },
	{ "dump mr", "<mr> [<off>] [<len>]", "hex dump of a buffer (default 256 bytes)",
	  cmd_dump_mr },
	{ NULL, NULL, NULL, NULL },
};

const struct tp_family tp_family_traffic = {
	"traffic", "post work requests, poll completions, check buffers", traffic_cmds,
};
