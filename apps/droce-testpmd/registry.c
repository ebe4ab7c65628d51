/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The console's objects: every PD, MR, CQ, SRQ, XRC domain, QP handle and
 * AH it made gets the lowest free small integer id, one id space for all
 * kinds, so an id alone says what it names ("post recv 4" works on a QP
 * or an SRQ).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "testpmd.h"

/* Ids stay small: a console session makes a few hundred objects at most. */
#define TP_MAX_OBJS 4096

static struct tp_obj *objs[TP_MAX_OBJS];

const char *
tp_kind_name(enum tp_kind k)
{
	static const char *const names[TP_KIND_MAX] = {
		[TP_PD] = "pd", [TP_MR] = "mr", [TP_CQ] = "cq", [TP_SRQ] = "srq",
		[TP_XRCD] = "xrcd", [TP_QP] = "qp", [TP_AH] = "ah",
	};

	return (unsigned)k < TP_KIND_MAX ? names[k] : "object";
}

struct tp_obj *
tp_obj_new(enum tp_kind k, unsigned port)
{
	struct tp_obj *o;
	unsigned id;

	for (id = 0; id < TP_MAX_OBJS && objs[id] != NULL; id++)
		;
	if (id == TP_MAX_OBJS) {
		tp_error(-ENOSPC, "%u objects exist already", TP_MAX_OBJS);
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (o == NULL) {
		tp_error(-ENOMEM, "new %s", tp_kind_name(k));
		return NULL;
	}
	o->kind = k;
	o->id = id;
	o->port = port;
	objs[id] = o;
	return o;
}

void
tp_obj_free(struct tp_obj *o)
{
	objs[o->id] = NULL;
	free(o);
}

struct tp_obj *
tp_obj_get(unsigned id)
{
	return id < TP_MAX_OBJS ? objs[id] : NULL;
}

struct tp_obj *
tp_obj_next(const struct tp_obj *o)
{
	unsigned id;

	for (id = o != NULL ? o->id + 1 : 0; id < TP_MAX_OBJS; id++)
		if (objs[id] != NULL)
			return objs[id];
	return NULL;
}

int
tp_arg_obj(const char *s, enum tp_kind k, struct tp_obj **out)
{
	struct tp_obj *o;
	uint64_t id;

	if (tp_parse_u64(s, TP_MAX_OBJS - 1, &id) != 0)
		return tp_error(-EINVAL, "'%s' is not an object id", s);
	o = objs[id];
	if (o == NULL)
		return tp_error(-ENOENT, "no object %s", s);
	if (k != TP_KIND_MAX && o->kind != k)
		return tp_error(-EINVAL, "%s is a %s, not a %s", s, tp_kind_name(o->kind),
				tp_kind_name(k));
	*out = o;
	return 0;
}

int
tp_obj_destroy(struct tp_obj *o)
{
	int rc;

	switch (o->kind) {
	case TP_PD:
		rc = ibv_dealloc_pd(o->pd.pd);
		break;
	case TP_MR:
		rc = ibv_dereg_mr(o->mr.mr);
		if (rc == 0)
			free(o->mr.buf);
		break;
	case TP_CQ:
		rc = ibv_destroy_cq(o->cq.cq);
		if (rc == 0)
			free(o->cq.backlog);
		break;
	case TP_SRQ:
		rc = ibv_destroy_srq(o->srq.srq);
		break;
	case TP_XRCD:
		rc = ibv_close_xrcd(o->xrcd.xrcd);
		break;
	case TP_QP:
		rc = ibv_destroy_qp(o->qp.qp);
		break;
	case TP_AH:
		rc = ibv_destroy_ah(o->ah.ah);
		break;
	default:
		rc = EINVAL;
	}
	rc = tp_verbs_rc(rc);
	if (rc == 0)
		tp_obj_free(o);
	return rc;
}

void
tp_obj_destroy_all(void)
{
	/* Users before what they use: a QP holds its CQs, SRQ, PD, domain. */
	static const enum tp_kind order[] = {
		TP_QP, TP_AH, TP_SRQ, TP_MR, TP_CQ, TP_XRCD, TP_PD,
	};
	struct tp_obj *o, *next;
	unsigned i;
	int rc;

	for (i = 0; i < RTE_DIM(order); i++)
		for (o = tp_obj_next(NULL); o != NULL; o = next) {
			next = tp_obj_next(o);
			if (o->kind != order[i])
				continue;
			rc = tp_obj_destroy(o);
			if (rc != 0)
				tp_error(rc, "at exit: destroy %s %u", tp_kind_name(o->kind),
					 o->id);
		}
}
