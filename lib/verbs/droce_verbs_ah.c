/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles for UD, and building one from a received completion
 * (the GRH in front of the data says where the datagram came from).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>

#include "droce_verbs_priv.h"

struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct droce_dev *d = droce_dev_of_ctx(pd->context);
	struct droce_ah *ah;

	/* RoCE addresses by GID: an AH without a GRH has nowhere to go. */
	if (!attr->is_global || attr->port_num > 1 ||
	    attr->grh.sgid_index >= droce_port_gid_count(d->port)) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->ibv.context = pd->context;
	ah->ibv.pd = pd;
	ah->av.attr = *attr;
	__atomic_add_fetch(&droce_pd_of(pd)->users, 1, __ATOMIC_RELAXED);
	return &ah->ibv;
}

int
ibv_destroy_ah(struct ibv_ah *ibah)
{
	__atomic_sub_fetch(&droce_pd_of(ibah->pd)->users, 1, __ATOMIC_RELEASE);
	free(ibah);
	return 0;
}

/* The IP version of the header a UD receive starts with. */
static int
grh_ip_version(const struct ibv_grh *grh)
{
	const uint8_t *p = (const uint8_t *)grh;

	if ((p[0] >> 4) == 6)
		return 6;
	if (p[20] == 0x45) /* IPv4 without options in the last 20 bytes */
		return 4;
	return -1;
}

int
ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num, struct ibv_wc *wc,
		    struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	union ibv_gid sgid, dgid;
	int idx;

	if (port_num != 1 || !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	switch (grh_ip_version(grh)) {
	case 6:
		sgid = grh->sgid;
		dgid = grh->dgid;
		ah_attr->grh.flow_label = rte_be_to_cpu_32(grh->version_tclass_flow) & 0xfffff;
		ah_attr->grh.traffic_class =
			(uint8_t)(rte_be_to_cpu_32(grh->version_tclass_flow) >> 20);
		break;
	case 4: {
		const struct rte_ipv4_hdr *ip = (const void *)((const uint8_t *)grh + 20);

		memset(&sgid, 0, sizeof(sgid));
		memset(&dgid, 0, sizeof(dgid));
		sgid.raw[10] = sgid.raw[11] = dgid.raw[10] = dgid.raw[11] = 0xff;
		memcpy(&sgid.raw[12], &ip->src_addr, 4);
		memcpy(&dgid.raw[12], &ip->dst_addr, 4);
		ah_attr->grh.traffic_class = ip->type_of_service;
		break;
	}
	default:
		errno = EINVAL;
		return -1;
	}
	/* Reply from the GID the datagram was sent to. */
	idx = droce_port_gid_find(d->port, dgid.raw);
	if (idx < 0) {
		errno = EINVAL;
		return -1;
	}
	ah_attr->is_global = 1;
	ah_attr->grh.dgid = sgid;
	ah_attr->grh.sgid_index = (uint8_t)idx;
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	return 0;
}

struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
		      uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return ibv_create_ah(pd, &attr);
}
