/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UD multicast: ibv_attach_mcast and ibv_detach_mcast, with the kernel's
 * rules (ib_attach_mcast(), rxe): UD QPs only, a multicast GID, the LID
 * ignored on RoCE; attaching twice is no error, detaching what is not
 * attached is EINVAL. The port keeps the groups (droce_mcast.c); a QP that
 * is destroyed leaves its groups (droce_verbs_qp.c).
 */
#include <errno.h>

#include "droce_verbs_priv.h"

static int
mcast_change(struct ibv_qp *ibqp, const union ibv_gid *gid, bool attach)
{
	struct droce_qp *qp = droce_qp_of(ibqp);
	struct droce_dev *d = qp->dev;

	if (qp->type != IBV_QPT_UD)
		return EINVAL;
	return -(attach ? droce_port_mcast_attach(d->port, gid->raw, qp->qpn) :
			  droce_port_mcast_detach(d->port, gid->raw, qp->qpn));
}

int
ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	RTE_SET_USED(lid);
	return mcast_change(qp, gid, true);
}

int
ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	RTE_SET_USED(lid);
	return mcast_change(qp, gid, false);
}
