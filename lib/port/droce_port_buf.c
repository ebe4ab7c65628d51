/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The size of a port's mbufs, and the IB MTU they allow.
 *
 * The transport builds every frame in one mbuf of the port's pool, and the
 * PMD receives into mbufs of the same pool. Most PMDs take mbufs of any
 * size: the port gives them DROCE_PORT_DATA_ROOM, room for every frame
 * droce sends. A PMD that limits the size of a whole mempool object
 * (AF_XDP: one UMEM chunk per object, at most a page) gets the largest
 * data room whose object fits; the port then offers the largest IB MTU
 * whose frames fit in that room less what the PMD's RX leaves before a
 * frame, and, where the PMD carries only frames of some length whole
 * (memif, af_packet: one of their buffers), no longer than that. The frames counted
 * are the largest droce builds: a VLAN tag, IPv6, the longest RoCE
 * headers and the ICRC around the payload.
 */
#include <errno.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_port_priv.h"

/* Size of one pool object with @p data_room, as rte_pktmbuf_pool_create()
 * lays it out (no mempool flags): header, mbuf, private area, headroom,
 * data room, and the padding that spreads objects over memory channels. */
static uint32_t
buf_obj_size(uint32_t data_room)
{
	return rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) + DROCE_PORT_MBUF_PRIV +
					 RTE_PKTMBUF_HEADROOM + data_room, 0, NULL);
}

int
droce_port_buf_plan(const struct droce_driver_ops *drv, uint32_t frame_max, uint16_t ib_mtu,
		    struct droce_port_buf *b)
{
	uint32_t room = DROCE_PORT_DATA_ROOM;
	uint32_t frame_room;
	uint16_t mtu;

	if (drv->mbuf_obj_max != 0)
		while (room > drv->rx_headroom && buf_obj_size(room) > drv->mbuf_obj_max)
			room -= RTE_CACHE_LINE_SIZE;
	if (room <= drv->rx_headroom)
		return -ENOSPC;
	frame_room = room - drv->rx_headroom;
	if (frame_max != 0)
		frame_room = RTE_MIN(frame_room, frame_max);
	b->frame_room = frame_room;
	for (mtu = ib_mtu; mtu >= 256; mtu /= 2) {
		if ((uint32_t)mtu + DROCE_PORT_L3_OVERHEAD + DROCE_PORT_L2_OVERHEAD <= frame_room) {
			b->data_room = (uint16_t)room;
			b->ib_mtu = mtu;
			return 0;
		}
	}
	return -ENOSPC;
}

int
droce_port_buf_plan_dev(const struct droce_driver_ops *drv, const struct rte_eth_dev_info *info,
			uint16_t ib_mtu, struct droce_port_buf *b)
{
	return droce_port_buf_plan(drv, drv->frame_max != NULL ? drv->frame_max(info) : 0, ib_mtu,
				   b);
}

int
droce_port_mtu_offered(uint16_t port_id, uint16_t ib_mtu)
{
	const struct droce_driver_ops *drv;
	struct rte_eth_dev_info info;
	struct droce_port_buf b;
	int ret;

	if (ib_mtu < 256 || ib_mtu > 4096 || !rte_is_power_of_2(ib_mtu))
		return -EINVAL;
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return ret;
	drv = droce_driver_find(&info);
	if (drv == NULL)
		return -ENOTSUP;
	ret = droce_port_buf_plan_dev(drv, &info, ib_mtu, &b);
	return ret != 0 ? ret : b.ib_mtu;
}
