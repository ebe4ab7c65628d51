/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rest of <infiniband/verbs.h> that droce answers for real: fork
 * support, the device index, extended GID queries, the rate conversions
 * and the data-order query.
 */
#include <errno.h>

#include "droce_verbs_priv.h"

/*
 * Fork. rdma-core needs ibv_fork_init() because the kernel pins registered
 * pages: after fork() the parent's copy-on-write would move them away from
 * what the NIC writes into. droce pins nothing; its engine runs in this
 * process and writes through the process's own mappings, so whatever page
 * the parent ends up with is the one the engine writes. Fork is always safe
 * for the parent (the child, as with any DPDK process, cannot use the
 * parent's devices).
 */
int
ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int
ibv_get_device_index(struct ibv_device *device)
{
	return (int)((struct droce_dev *)device)->index;
}

/*
 * GIDs. Every GID of a droce port is a RoCE v2 GID (droce speaks nothing
 * else), and no kernel netdev stands behind it (ndev_ifindex 0). An index
 * inside the table that holds no GID is ENODATA, as rdma-core reports an
 * empty slot.
 */
static int
gid_entry_fill(struct droce_dev *d, uint32_t index, struct ibv_gid_entry *e)
{
	if (index >= DROCE_GID_TABLE_LEN)
		return EINVAL;
	if (droce_port_gid(d->port, (int)index, e->gid.raw) != 0)
		return ENODATA;
	e->gid_index = index;
	e->port_num = 1;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;
	return 0;
}

int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port_num, uint32_t gid_index,
		  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	if (flags != 0 || entry_size < sizeof(*entry) || port_num != 1)
		return EINVAL;
	return gid_entry_fill(droce_dev_of_ctx(ctx), gid_index, entry);
}

ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
		     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct droce_dev *d = droce_dev_of_ctx(ctx);
	int i, n = droce_port_gid_count(d->port);

	if (flags != 0 || entry_size < sizeof(*entries))
		return -EINVAL;
	if ((size_t)n > max_entries)
		return -EINVAL;
	/* The port's GIDs sit at indexes 0..n-1; entry_size lets a caller
	 * built against a larger struct ibv_gid_entry step over its tail. */
	for (i = 0; i < n; i++) {
		struct ibv_gid_entry *e = (struct ibv_gid_entry *)
			((uint8_t *)entries + (size_t)i * entry_size);
		int rc = gid_entry_fill(d, (uint32_t)i, e);

		if (rc != 0)
			return -rc;
	}
	return n;
}

/*
 * Rates: the IB static rate codes against their width x lane speed.
 * mult is in units of 2.5 Gb/s and exists only for the SDR/DDR/QDR-era
 * rates that are exact multiples of it; mbps is the signalling rate the
 * IB spec gives each code (FDR, EDR, HDR, NDR lanes are not multiples of
 * 2.5 Gb/s).
 */
static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 },
	{ IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 },
	{ IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 },
	{ IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 },
	{ IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 },
	{ IBV_RATE_14_GBPS, 0, 14062 },
	{ IBV_RATE_56_GBPS, 0, 56250 },
	{ IBV_RATE_112_GBPS, 0, 112500 },
	{ IBV_RATE_168_GBPS, 0, 168750 },
	{ IBV_RATE_25_GBPS, 0, 25781 },
	{ IBV_RATE_100_GBPS, 0, 103125 },
	{ IBV_RATE_200_GBPS, 0, 206250 },
	{ IBV_RATE_300_GBPS, 0, 309375 },
	{ IBV_RATE_28_GBPS, 0, 28125 },
	{ IBV_RATE_50_GBPS, 0, 53125 },
	{ IBV_RATE_400_GBPS, 0, 425000 },
	{ IBV_RATE_600_GBPS, 0, 637500 },
	{ IBV_RATE_800_GBPS, 0, 850000 },
	{ IBV_RATE_1200_GBPS, 0, 1275000 },
};

int
ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate && rates[i].mult != 0)
			return rates[i].mult;
	return -1;
}

enum ibv_rate
mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].mult != 0 && rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < RTE_DIM(rates); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/*
 * "Guaranteed to be written in order" is a promise droce does not make:
 * the responder copies each packet with memcpy, which may store a
 * buffer's bytes in any order. 0 is the answer that is always true.
 */
int
ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	RTE_SET_USED(qp);
	RTE_SET_USED(op);
	RTE_SET_USED(flags);
	return 0;
}
