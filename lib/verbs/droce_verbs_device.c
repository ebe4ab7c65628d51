/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device discovery, contexts and device/port/GID queries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "droce_verbs_priv.h"

/* The macro in verbs.h picks the extended query; the symbol is the old entry. */
#undef ibv_query_port

struct ibv_device **
ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	unsigned i, n;
	int rc;

	/* As rdma-core: a caller that reads the count on failure reads 0. */
	if (num_devices != NULL)
		*num_devices = 0;
	rc = droce_lib_init();
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	n = droce_dev_count();
	list = calloc(n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		list[i] = &droce_dev_get(i)->ibdev;
	if (num_devices != NULL)
		*num_devices = (int)n;
	return list;
}

void
ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

__be64
ibv_get_device_guid(struct ibv_device *device)
{
	return ((struct droce_dev *)device)->guid;
}

static struct ibv_context_ops droce_ctx_ops = {
	.poll_cq = droce_poll_cq,
	.req_notify_cq = droce_req_notify_cq,
	.post_send = droce_post_send,
	.post_recv = droce_post_recv,
	.post_srq_recv = droce_post_srq_recv,
	.alloc_mw = droce_alloc_mw,
	.dealloc_mw = droce_dealloc_mw,
	.bind_mw = droce_bind_mw,
};

struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct droce_dev *d = (struct droce_dev *)device;
	struct droce_context *c;
	struct ibv_context *ctx;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = d;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = droce_query_port_ex;
	c->vctx.query_device_ex = droce_query_device_ex;
	c->vctx.create_cq_ex = droce_create_cq_ex;
	c->vctx.create_qp_ex = droce_create_qp_ex;
	c->vctx.query_rt_values = droce_query_rt_values;
	droce_xrc_ops_set(&c->vctx);
	droce_pd_ops_set(&c->vctx);
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->ops = droce_ctx_ops;
	ctx->cmd_fd = -1;
	ctx->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ctx->async_fd < 0) {
		free(c);
		return NULL;
	}
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&c->ev_lock, NULL);
	c->ev_tail = &c->ev_head;
	pthread_mutex_lock(&d->lock);
	LIST_INSERT_HEAD(&d->contexts, c, link);
	pthread_mutex_unlock(&d->lock);
	return ctx;
}

int
ibv_close_device(struct ibv_context *ctx)
{
	struct droce_context *c = droce_ctx_of(ctx);

	pthread_mutex_lock(&c->dev->lock);
	LIST_REMOVE(c, link);
	pthread_mutex_unlock(&c->dev->lock);
	close(ctx->async_fd);
	droce_context_events_free(c);
	free(c);
	return 0;
}

static void
fill_device_attr(const struct droce_dev *d, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "droce-0.1");
	a->node_guid = d->guid;
	a->sys_image_guid = d->guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0xffffff;
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = DROCE_MAX_QP;
	a->max_qp_wr = DROCE_MAX_QP_WR;
	a->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = DROCE_MAX_SGE;
	a->max_sge_rd = DROCE_MAX_SGE;
	a->max_cq = DROCE_MAX_QP;
	a->max_cqe = DROCE_MAX_CQE;
	a->max_mr = DROCE_MR_MAX - 1;
	a->max_mw = DROCE_MW_MAX;
	a->max_mcast_grp = DROCE_MCAST_MAX;
	a->max_mcast_qp_attach = DROCE_MCAST_QPS;
	a->max_total_mcast_qp_attach = DROCE_MCAST_MAX * DROCE_MCAST_QPS;
	a->max_pd = 1 << 16;
	a->max_qp_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = DROCE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = DROCE_MAX_RD_ATOMIC * DROCE_MAX_QP;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_srq = DROCE_MAX_QP;
	a->max_srq_wr = DROCE_MAX_QP_WR;
	a->max_srq_sge = DROCE_MAX_SGE;
	a->max_ah = 1 << 20;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
}

int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	fill_device_attr(droce_dev_of_ctx(ctx), attr);
	return 0;
}

int
droce_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
		      struct ibv_device_attr_ex *attr, size_t len)
{
	struct ibv_device_attr_ex a;

	if (in != NULL && in->comp_mask != 0)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	fill_device_attr(droce_dev_of_ctx(ctx), &a.orig_attr);
	/* rdma-core reads the port count from here when the provider fills it. */
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	/* Completion timestamps count TSC cycles (droce_verbs_clock.c). */
	a.completion_timestamp_mask = UINT64_MAX;
	a.hca_core_clock = droce_clock_khz();
	memcpy(attr, &a, RTE_MIN(len, sizeof(a)));
	return 0;
}

static enum ibv_mtu
mtu_enum(uint16_t bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/*
 * The IB width and lane speed of an Ethernet link of @p mbps, chosen as
 * Linux's ib_get_eth_speed() chooses them for rxe, so that
 * width x speed is near the link's rate; an unknown speed counts as 1 Gb/s
 * there too. Codes: width 1 = 1X, 2 = 4X, 16 = 2X; speed 1 = SDR (2.5 Gb/s
 * per lane), 2 = DDR, 8 = FDR10, 32 = EDR, 64 = HDR, 128 = NDR.
 */
static void
port_width_speed(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct {
		uint32_t up_to;          /* Mb/s */
		uint8_t width, speed;
	} map[] = {
		{ RTE_ETH_SPEED_NUM_1G, 1, 1 },      /* 1X SDR */
		{ RTE_ETH_SPEED_NUM_10G, 1, 8 },     /* 1X FDR10 */
		{ RTE_ETH_SPEED_NUM_20G, 2, 2 },     /* 4X DDR */
		{ RTE_ETH_SPEED_NUM_25G, 1, 32 },    /* 1X EDR */
		{ RTE_ETH_SPEED_NUM_40G, 2, 8 },     /* 4X FDR10 */
		{ RTE_ETH_SPEED_NUM_50G, 16, 32 },   /* 2X EDR */
		{ RTE_ETH_SPEED_NUM_100G, 2, 32 },   /* 4X EDR */
		{ RTE_ETH_SPEED_NUM_200G, 2, 64 },   /* 4X HDR */
		{ UINT32_MAX, 2, 128 },              /* 4X NDR */
	};
	size_t i;

	if (mbps == RTE_ETH_SPEED_NUM_NONE || mbps == RTE_ETH_SPEED_NUM_UNKNOWN)
		mbps = RTE_ETH_SPEED_NUM_1G;
	for (i = 0; mbps > map[i].up_to; i++)
		;
	*width = map[i].width;
	*speed = map[i].speed;
}

int
droce_query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
		    size_t len)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	bool up = droce_port_link_up(d->port);
	struct rte_eth_link link = { .link_speed = RTE_ETH_SPEED_NUM_UNKNOWN };
	uint64_t bad_pkey = 0, bad_qkey = 0;
	struct ibv_port_attr a;
	unsigned i;

	if (port != 1)
		return EINVAL;
	memset(&a, 0, sizeof(a));
	if (rte_eth_link_get_nowait(droce_port_ethdev(d->port), &link) != 0)
		link.link_speed = RTE_ETH_SPEED_NUM_UNKNOWN;
	port_width_speed(link.link_speed, &a.active_width, &a.active_speed);
	a.state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a.phys_state = up ? 5 /* LinkUp */ : 3 /* Disabled */;
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = mtu_enum(droce_port_mtu(d->port));
	a.gid_tbl_len = DROCE_GID_TABLE_LEN;
	a.port_cap_flags = IBV_PORT_CM_SUP;
	a.max_msg_sz = DROCE_MAX_MSG;
	a.pkey_tbl_len = 1;
	a.max_vl_num = 1;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	/* The violations the engines count, saturating at 16 bits as the
	 * PortInfo counters do (the device says it has them). */
	for (i = 0; i < d->nb_engines; i++) {
		bad_pkey += __atomic_load_n(&d->engines[i]->stats.rx.rx_bad_pkey, __ATOMIC_RELAXED);
		bad_qkey += __atomic_load_n(&d->engines[i]->stats.rx.rx_bad_qkey, __ATOMIC_RELAXED);
	}
	a.bad_pkey_cntr = (uint32_t)RTE_MIN(bad_pkey, (uint64_t)UINT16_MAX);
	a.qkey_viol_cntr = (uint32_t)RTE_MIN(bad_qkey, (uint64_t)UINT16_MAX);
	memcpy(attr, &a, RTE_MIN(len, sizeof(a)));
	return 0;
}

int
ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	/* rdma-core fills the whole current struct through this entry too. */
	return droce_query_port_ex(ctx, port, (struct ibv_port_attr *)attr,
				   sizeof(struct ibv_port_attr));
}

int
ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1 || index < 0 || index >= DROCE_GID_TABLE_LEN) {
		errno = EINVAL;
		return -1;
	}
	/* An empty slot of the table reads as the zero GID, as with rdma-core. */
	if (droce_port_gid(droce_dev_of_ctx(ctx)->port, index, gid->raw) != 0)
		memset(gid, 0, sizeof(*gid));
	return 0;
}

int
ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	(void)ctx;
	if (port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = rte_cpu_to_be_16(DROCE_PKEY_DEFAULT);
	return 0;
}

int
ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	(void)ctx;
	if (port != 1 || (rte_be_to_cpu_16(pkey) & 0x7fff) != 0x7fff)
		return -EINVAL;
	return 0;
}
