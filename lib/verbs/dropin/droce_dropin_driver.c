/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parts of libibverbs' private interface the drop-in answers for
 * real: GID types, fork ranges, sysfs, logging for providers, the ioctl
 * attribute count, the kernel struct copies, provider registration.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "droce_driver_abi.h"
#include "droce_verbs_priv.h"

/*
 * ibv_devinfo asks for each GID's type here. droce's GIDs are all RoCE
 * v2. An empty slot answers "IB/RoCE v1" with success, as rdma-core
 * does to keep the behaviour from before it had GID types.
 */
int
ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		   enum ibv_gid_type_sysfs *type)
{
	struct ibv_gid_entry e;
	int rc = ibv_query_gid_ex(context, port_num, index, &e, 0);

	if (rc == ENODATA) {
		*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	*type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_SYSFS_ROCE_V2 :
		IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

/* Nothing is pinned, so fork needs no range marked (see ibv_fork_init()). */
int
ibv_dontfork_range(void *base, size_t size)
{
	RTE_SET_USED(base);
	RTE_SET_USED(size);
	return 0;
}

int
ibv_dofork_range(void *base, size_t size)
{
	RTE_SET_USED(base);
	RTE_SET_USED(size);
	return 0;
}

/*
 * sysfs. droce's devices have no sysfs entries (their paths only look
 * like a kernel device's), so every read fails with ENOENT rather than
 * read a kernel RDMA device's attributes under the same name. The
 * filesystem itself is where it always is.
 */
const char *
ibv_get_sysfs_path(void)
{
	return "/sys";
}

int
ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	RTE_SET_USED(dir);
	RTE_SET_USED(file);
	RTE_SET_USED(buf);
	RTE_SET_USED(size);
	errno = ENOENT;
	return -1;
}

int
ibv_read_ibdev_sysfs_file(char *buf, size_t size, struct verbs_sysfs_dev *sysfs_dev,
			  const char *fnfmt, ...)
{
	RTE_SET_USED(buf);
	RTE_SET_USED(size);
	RTE_SET_USED(sysfs_dev);
	RTE_SET_USED(fnfmt);
	errno = ENOENT;
	return -1;
}

/* Providers' messages go to droce's log type, at the matching level. */
void
__verbs_log(struct verbs_context *ctx, uint32_t level, const char *fmt, ...)
{
	static const uint32_t rte_level[] = {
		[VERBS_LOG_ERR] = RTE_LOG_ERR,
		[VERBS_LOG_WARN] = RTE_LOG_WARNING,
		[VERBS_LOG_INFO] = RTE_LOG_INFO,
		[VERBS_LOG_DEBUG] = RTE_LOG_DEBUG,
	};
	int saved = errno;
	va_list ap;

	RTE_SET_USED(ctx);
	if (level == VERBS_LOG_LEVEL_NONE || level >= RTE_DIM(rte_level))
		return;
	va_start(ap, fmt);
	rte_vlog(rte_level[level], droce_logtype, fmt, ap);
	va_end(ap);
	errno = saved;
}

/* The attributes a chain of command buffers holds, for sizing the final
 * buffer; plain arithmetic on the caller's own blocks. */
unsigned int
__ioctl_final_num_attrs(unsigned int num_attrs, struct ibv_command_buffer *link)
{
	for (; link != NULL; link = link->next)
		num_attrs += (unsigned int)(link->next_attr - link->hdr.attrs);
	return num_attrs;
}

/*
 * The kernel's uverbs and SA structs into verbs' and back. librdmacm
 * converts the kernel RDMA CM's answers with these; they are field
 * copies that need no device.
 */
void
ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

void
ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->qp_state = src->qp_state;
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

void
ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (int)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->reversible = (int)src->reversible;
	dst->mtu = (uint8_t)src->mtu;
	dst->pkey = src->pkey;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->numb_path = src->numb_path;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

void
ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (uint32_t)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->reversible = (uint32_t)src->reversible;
	dst->mtu = src->mtu;
	dst->pkey = src->pkey;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->numb_path = src->numb_path;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

/*
 * Provider registration. A provider library registers itself from a
 * constructor as soon as it is loaded, and DPDK's mlx drivers load
 * libmlx5/libmlx4 whenever the EAL starts. droce serves its own devices
 * and opens no kernel device, so a registered provider would never be
 * matched to anything: registration is accepted and ignored.
 */
/* rdma-core keeps ibv_register_driver() only for old binaries: it is
 * exported as a non-default version, which nothing new can link against.
 * Link-time optimisation drops a .symver in top-level asm (and the symbol
 * with it, silently): this file is compiled without it (meson.build). */
__typeof__(ibv_register_driver) droce_register_driver_1_1;
__asm__(".symver droce_register_driver_1_1, ibv_register_driver@IBVERBS_1.1");

void
droce_register_driver_1_1(const char *name, ibv_driver_init_func init_func)
{
	RTE_SET_USED(name);
	RTE_SET_USED(init_func);
}

void
verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	RTE_SET_USED(ops);
}

/* Set by an application that lets destroy succeed on a hot-unplugged
 * device; providers read it. droce's devices are never unplugged. */
bool verbs_allow_disassociate_destroy;
