/* SPDX-License-Identifier: BSD-3-Clause */
/* Commands that make and unmake verbs objects: create, destroy, open, close. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_random.h>

#include "testpmd.h"

/* Biggest buffer `create mr` allocates. */
#define TP_MR_MAX (1ull << 30)
/* Work requests per queue of a new QP, unless `wr N` says otherwise. */
#define TP_QP_WR 256
#define TP_QP_INLINE 256
#define TP_PSN_MASK 0xffffffu

static int
cmd_create_pd(struct tp_args *a)
{
	struct tp_obj *o;
	unsigned port;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &port)) != 0)
		return rc;
	if ((o = tp_obj_new(TP_PD, port)) == NULL)
		return -ENOMEM;
	errno = 0;
	o->pd.pd = ibv_alloc_pd(tp_ports[port].ctx);
	if (o->pd.pd == NULL) {
		rc = tp_errno();
		tp_obj_free(o);
		return tp_error(rc, "create pd");
	}
	printf("pd %u created on port %u\n", o->id, port);
	return 0;
}

static int
cmd_create_mr(struct tp_args *a)
{
	struct tp_obj *pd, *o;
	uint64_t size;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	char acc[32];
	int rc;

	if (a->argc < 2 || a->argc > 3)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_PD, &pd)) != 0)
		return rc;
	if ((rc = tp_arg_size(a->argv[1], "size", TP_MR_MAX, &size)) != 0)
		return rc;
	if (size == 0)
		return tp_error(-EINVAL, "create mr: size 0");
	if (a->argc == 3 && tp_parse_access(a->argv[2], &access) != 0)
		return tp_error(-EINVAL, "'%s' is not a list of lw, rw, rr, ra (or none)",
				a->argv[2]);
	if ((o = tp_obj_new(TP_MR, pd->port)) == NULL)
		return -ENOMEM;
	/* Page-aligned and zeroed: atomics need 8-byte alignment, and a fresh
	 * buffer should compare equal to another fresh one. */
	o->mr.buf = aligned_alloc(4096, RTE_ALIGN_CEIL(size, 4096));
	if (o->mr.buf == NULL) {
		tp_obj_free(o);
		return tp_error(-ENOMEM, "create mr: %" PRIu64 " bytes", size);
	}
	memset(o->mr.buf, 0, size);
	o->mr.size = size;
	o->mr.pd = pd->id;
	errno = 0;
	o->mr.mr = ibv_reg_mr(pd->pd.pd, o->mr.buf, size, access);
	if (o->mr.mr == NULL) {
		rc = tp_errno();
		free(o->mr.buf);
		tp_obj_free(o);
		return tp_error(rc, "create mr");
	}
	tp_access_str(access, acc, sizeof(acc));
	printf("mr %u created: %" PRIu64 " bytes at 0x%" PRIxPTR " lkey 0x%x rkey 0x%x access %s\n",
	       o->id, size, (uintptr_t)o->mr.buf, o->mr.mr->lkey, o->mr.mr->rkey, acc);
	return 0;
}

static int
cmd_create_cq(struct tp_args *a)
{
	struct tp_obj *o;
	unsigned port;
	uint32_t cqe;
	int rc;

	if (a->argc != 2)
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &port)) != 0 ||
	    (rc = tp_arg_u32(a->argv[1], "cqe", INT32_MAX, &cqe)) != 0)
		return rc;
	if ((o = tp_obj_new(TP_CQ, port)) == NULL)
		return -ENOMEM;
	errno = 0;
	o->cq.cq = ibv_create_cq(tp_ports[port].ctx, (int)cqe, NULL, NULL, 0);
	if (o->cq.cq == NULL) {
		rc = tp_errno();
		tp_obj_free(o);
		return tp_error(rc, "create cq");
	}
	o->cq.backlog = calloc((size_t)o->cq.cq->cqe, sizeof(*o->cq.backlog));
	if (o->cq.backlog == NULL) {
		ibv_destroy_cq(o->cq.cq);
		tp_obj_free(o);
		return tp_error(-ENOMEM, "create cq");
	}
	printf("cq %u created on port %u: cqe %d\n", o->id, port, o->cq.cq->cqe);
	return 0;
}

static int
cmd_create_srq(struct tp_args *a)
{
	struct ibv_srq_init_attr_ex sa = { .attr = { .max_sge = 1 } };
	struct tp_obj *pd, *xrcd = NULL, *cq = NULL, *o;
	uint32_t max_wr;
	int rc;

	if (a->argc != 2 && !(a->argc == 5 && strcmp(a->argv[2], "xrc") == 0))
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_PD, &pd)) != 0)
		return rc;
	if ((rc = tp_arg_u32(a->argv[1], "max_wr", UINT32_MAX, &max_wr)) != 0)
		return rc;
	if (a->argc == 5 && ((rc = tp_arg_obj(a->argv[3], TP_XRCD, &xrcd)) != 0 ||
			     (rc = tp_arg_obj(a->argv[4], TP_CQ, &cq)) != 0))
		return rc;
	if ((xrcd != NULL && xrcd->port != pd->port) || (cq != NULL && cq->port != pd->port))
		return tp_error(-EINVAL, "create srq: the pd, xrcd and cq must be on one port");
	if ((o = tp_obj_new(TP_SRQ, pd->port)) == NULL)
		return -ENOMEM;
	sa.attr.max_wr = max_wr;
	sa.pd = pd->pd.pd;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_BASIC;
	if (xrcd != NULL) {
		sa.srq_type = IBV_SRQT_XRC;
		sa.xrcd = xrcd->xrcd.xrcd;
		sa.cq = cq->cq.cq;
		sa.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	}
	errno = 0;
	o->srq.srq = ibv_create_srq_ex(tp_ports[pd->port].ctx, &sa);
	if (o->srq.srq == NULL) {
		rc = tp_errno();
		tp_obj_free(o);
		return tp_error(rc, "create srq");
	}
	o->srq.xrc = xrcd != NULL;
	if (o->srq.xrc && (rc = tp_verbs_rc(ibv_get_srq_num(o->srq.srq, &o->srq.srqn))) != 0) {
		tp_obj_destroy(o);
		return tp_error(rc, "create srq: its number");
	}
	printf("srq %u created on port %u: max_wr %u", o->id, pd->port, sa.attr.max_wr);
	if (o->srq.xrc)
		printf(", XRC srqn 0x%x", o->srq.srqn);
	printf("\n");
	return 0;
}

static int
cmd_create_xrcd(struct tp_args *a)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
	};
	struct tp_obj *o;
	unsigned port;
	int rc;

	if (a->argc < 1 || a->argc > 2)
		return tp_usage(a);
	if ((rc = tp_arg_port(a->argv[0], &port)) != 0)
		return rc;
	if (a->argc == 2) {
		/* Every XRCD opened on this file is the same domain. */
		xa.fd = open(a->argv[1], O_RDWR | O_CREAT, 0600);
		if (xa.fd < 0)
			return tp_error(-errno, "create xrcd: %s", a->argv[1]);
		xa.oflags = O_CREAT;
	}
	if ((o = tp_obj_new(TP_XRCD, port)) == NULL) {
		rc = -ENOMEM;
	} else {
		errno = 0;
		o->xrcd.xrcd = ibv_open_xrcd(tp_ports[port].ctx, &xa);
		rc = o->xrcd.xrcd == NULL ? tp_errno() : 0;
		if (rc != 0) {
			tp_obj_free(o);
			tp_error(rc, "create xrcd");
		}
	}
	/* The domain is known by the file's inode: the descriptor can go. */
	if (xa.fd >= 0)
		close(xa.fd);
	if (rc == 0)
		printf("xrcd %u created on port %u%s%s\n", o->id, port,
		       a->argc == 2 ? ", shared through " : "", a->argc == 2 ? a->argv[1] : "");
	return rc;
}

/* A CQ argument, or "-" for none. */
static int
arg_cq(const char *s, struct tp_obj **cq)
{
	*cq = NULL;
	if (strcmp(s, "-") == 0)
		return 0;
	return tp_arg_obj(s, TP_CQ, cq);
}

static int
qp_create_args(struct tp_args *a, struct ibv_qp_init_attr_ex *ia, unsigned *port, uint32_t *psn)
{
	static const struct tp_opt opts[] = {
		{ "srq", true }, { "xrcd", true }, { "psn", true }, { "wr", true },
	};
	const char *val[RTE_DIM(opts)];
	struct tp_obj *pd = NULL, *scq, *rcq, *srq = NULL, *xrcd = NULL;
	uint32_t wr = TP_QP_WR;
	int rc;

	if (a->argc < 4)
		return tp_usage(a);
	if (tp_parse_qp_type(a->argv[1], &ia->qp_type) != 0)
		return tp_error(-EINVAL, "'%s' is not a QP type (rc, uc, ud, xrc_send, xrc_recv)",
				a->argv[1]);
	if ((rc = tp_opts_parse(a, 4, opts, RTE_DIM(opts), val)) != 0)
		return rc;
	/* An XRC target QP has no PD: its domain's SRQs bring theirs. */
	if (!(ia->qp_type == IBV_QPT_XRC_RECV && strcmp(a->argv[0], "-") == 0) &&
	    (rc = tp_arg_obj(a->argv[0], TP_PD, &pd)) != 0)
		return rc;
	if ((rc = arg_cq(a->argv[2], &scq)) != 0 || (rc = arg_cq(a->argv[3], &rcq)) != 0)
		return rc;
	if ((val[0] != NULL && (rc = tp_arg_obj(val[0], TP_SRQ, &srq)) != 0) ||
	    (val[1] != NULL && (rc = tp_arg_obj(val[1], TP_XRCD, &xrcd)) != 0))
		return rc;
	*psn = (uint32_t)rte_rand() & TP_PSN_MASK;
	if ((val[2] != NULL && (rc = tp_arg_u32(val[2], "psn", TP_PSN_MASK, psn)) != 0) ||
	    (val[3] != NULL && (rc = tp_arg_u32(val[3], "wr", UINT32_MAX, &wr)) != 0))
		return rc;
	if (ia->qp_type == IBV_QPT_XRC_RECV && xrcd == NULL)
		return tp_error(-EINVAL, "create qp: an xrc_recv QP needs 'xrcd <id>'");
	*port = pd != NULL ? pd->port : xrcd->port;
	if ((scq != NULL && scq->port != *port) || (rcq != NULL && rcq->port != *port) ||
	    (srq != NULL && srq->port != *port) || (xrcd != NULL && xrcd->port != *port))
		return tp_error(-EINVAL, "create qp: its objects must all be on port %u", *port);
	ia->pd = pd != NULL ? pd->pd.pd : NULL;
	ia->comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	if (xrcd != NULL) {
		ia->xrcd = xrcd->xrcd.xrcd;
		ia->comp_mask |= IBV_QP_INIT_ATTR_XRCD;
	}
	ia->send_cq = scq != NULL ? scq->cq.cq : NULL;
	ia->recv_cq = rcq != NULL ? rcq->cq.cq : NULL;
	ia->srq = srq != NULL ? srq->srq.srq : NULL;
	if (ia->qp_type != IBV_QPT_XRC_RECV) {
		ia->cap.max_send_wr = wr;
		ia->cap.max_send_sge = 1;
		ia->cap.max_inline_data = TP_QP_INLINE;
	}
	if (srq == NULL && ia->qp_type != IBV_QPT_XRC_SEND && ia->qp_type != IBV_QPT_XRC_RECV) {
		ia->cap.max_recv_wr = wr;
		ia->cap.max_recv_sge = 1;
	}
	return 0;
}

static int
cmd_create_qp(struct tp_args *a)
{
	struct ibv_qp_init_attr_ex ia = { 0 };
	struct tp_obj *o;
	unsigned port = 0;
	uint32_t psn;
	int rc;

	if ((rc = qp_create_args(a, &ia, &port, &psn)) != 0)
		return rc;
	if ((o = tp_obj_new(TP_QP, port)) == NULL)
		return -ENOMEM;
	errno = 0;
	o->qp.qp = ibv_create_qp_ex(tp_ports[port].ctx, &ia);
	if (o->qp.qp == NULL) {
		rc = tp_errno();
		tp_obj_free(o);
		return tp_error(rc, "create qp");
	}
	o->qp.type = ia.qp_type;
	o->qp.psn = psn;
	printf("qp %u created: %s qpn 0x%x (%u) on port %u, psn 0x%x\n", o->id,
	       tp_qp_type_name(ia.qp_type), o->qp.qp->qp_num, o->qp.qp->qp_num, port, psn);
	return 0;
}

static int
cmd_create_ah(struct tp_args *a)
{
	static const struct tp_opt opts[] = { { "sgid", true } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	const char *val[RTE_DIM(opts)];
	char gs[INET6_ADDRSTRLEN];
	struct tp_obj *pd, *o;
	uint32_t sgid;
	int rc;

	if (a->argc < 2)
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_PD, &pd)) != 0)
		return rc;
	if (tp_parse_gid(a->argv[1], &aa.grh.dgid) != 0)
		return tp_error(-EINVAL, "'%s' is not a GID or IPv4 address", a->argv[1]);
	if ((rc = tp_opts_parse(a, 2, opts, RTE_DIM(opts), val)) != 0)
		return rc;
	sgid = (uint32_t)tp_ports[pd->port].sgid_index;
	if (val[0] != NULL && (rc = tp_arg_u32(val[0], "sgid", UINT8_MAX, &sgid)) != 0)
		return rc;
	aa.grh.sgid_index = (uint8_t)sgid;
	if ((o = tp_obj_new(TP_AH, pd->port)) == NULL)
		return -ENOMEM;
	errno = 0;
	o->ah.ah = ibv_create_ah(pd->pd.pd, &aa);
	if (o->ah.ah == NULL) {
		rc = tp_errno();
		tp_obj_free(o);
		return tp_error(rc, "create ah");
	}
	o->ah.dgid = aa.grh.dgid;
	tp_gid_str(&aa.grh.dgid, gs, sizeof(gs));
	printf("ah %u created on port %u: dgid %s sgid_index %u\n", o->id, pd->port, gs, sgid);
	return 0;
}

static int
cmd_destroy(struct tp_args *a)
{
	enum tp_kind k;
	struct tp_obj *o;
	unsigned id;
	int rc;

	if (a->argc != 1)
		return tp_usage(a);
	/* "close qp" is "destroy qp" for a handle from "open qp". */
	for (k = 0; k < TP_KIND_MAX && strcmp(a->word[1], tp_kind_name(k)) != 0; k++)
		;
	if ((rc = tp_arg_obj(a->argv[0], k, &o)) != 0)
		return rc;
	id = o->id;
	rc = tp_obj_destroy(o);
	if (rc != 0)
		return tp_error(rc, "%s %s %u", a->word[0], tp_kind_name(k), id);
	printf("%s %u %s\n", tp_kind_name(k), id, strcmp(a->word[0], "close") == 0 ?
	       "closed" : "destroyed");
	return 0;
}

static int
cmd_open_qp(struct tp_args *a)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct tp_obj *xrcd, *q, *o;
	int rc;

	if (a->argc != 2 && !(a->argc == 3 && strcmp(a->argv[1], "qp") == 0))
		return tp_usage(a);
	if ((rc = tp_arg_obj(a->argv[0], TP_XRCD, &xrcd)) != 0)
		return rc;
	if (a->argc == 3) {
		if ((rc = tp_arg_obj(a->argv[2], TP_QP, &q)) != 0)
			return rc;
		oa.qp_num = q->qp.qp->qp_num;
	} else if ((rc = tp_arg_u32(a->argv[1], "qpn", 0xffffff, &oa.qp_num)) != 0) {
		return rc;
	}
	oa.xrcd = xrcd->xrcd.xrcd;
	if ((o = tp_obj_new(TP_QP, xrcd->port)) == NULL)
		return -ENOMEM;
	errno = 0;
	o->qp.qp = ibv_open_qp(tp_ports[xrcd->port].ctx, &oa);
	if (o->qp.qp == NULL) {
		rc = tp_errno();
		tp_obj_free(o);
		return tp_error(rc, "open qp 0x%x", oa.qp_num);
	}
	o->qp.type = IBV_QPT_XRC_RECV;
	o->qp.opened = true;
	o->qp.psn = (uint32_t)rte_rand() & TP_PSN_MASK;
	printf("qp %u opened: XRC_RECV qpn 0x%x (%u) on port %u through xrcd %u\n", o->id,
	       oa.qp_num, oa.qp_num, xrcd->port, xrcd->id);
	return 0;
}

static const struct tp_cmd objects_cmds[] = {
	{ "create pd", "<port>", "allocate a protection domain", cmd_create_pd },
	{ "create mr", "<pd> <size>[K|M|G] [lw,rw,rr,ra|none]",
	  "allocate a zeroed buffer and register it (access: all four unless given)",
	  cmd_create_mr },
	{ "create cq", "<port> <cqe>", "create a completion queue", cmd_create_cq },
	{ "create srq", "<pd> <max_wr> [xrc <xrcd> <cq>]",
	  "create a shared receive queue (an XRC SRQ with xrc)", cmd_create_srq },
	{ "create xrcd", "<port> [<file>]",
	  "open an XRC domain: private, or the one every open of <file> shares",
	  cmd_create_xrcd },
	{ "create qp", "<pd|-> <rc|uc|ud|xrc_send|xrc_recv> <send_cq|-> <recv_cq|-> "
	  "[srq <id>] [xrcd <id>] [psn <n>] [wr <n>]",
	  "create a QP (xrc_recv: xrcd needed, no pd); psn: its send PSN for connect "
	  "(default random); wr: queue depth (default 256)", cmd_create_qp },
	{ "create ah", "<pd> <gid|ipv4> [sgid <index>]", "create an address handle for UD",
	  cmd_create_ah },
	{ "destroy pd#mr#cq#srq#xrcd#qp#ah", "<id>",
	  "destroy an object (fails with EBUSY while something uses it)", cmd_destroy },
	{ "open qp", "<xrcd> <qpn>|qp <id>",
	  "open a new handle on an XRC target QP (ibv_open_qp)", cmd_open_qp },
	{ "close qp", "<id>", "release one QP handle (as destroy qp)", cmd_destroy },
	{ NULL, NULL, NULL, NULL },
};

const struct tp_family tp_family_objects = {
	"objects", "create, destroy, open and close PDs, MRs, CQs, SRQs, XRCDs, QPs, AHs",
	objects_cmds,
};
