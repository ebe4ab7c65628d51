/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The af_packet port driver (net_af_packet): the generic hooks, and
 * frames that each fit in one frame of the socket's rings.
 *
 * The PMD maps a TPACKET_V2 ring for each direction, in frames of its
 * `framesz` devarg (2048 bytes by default). Its TX drops a frame longer
 * than a ring frame less the packet header, without a word; the kernel
 * cuts a received frame to what fits behind the header and the padding
 * that aligns the network header. Either way a longer frame is lost, and
 * an RC QP whose path MTU makes such frames ends in retry errors (IB MTU
 * 4096 over framesz=2048 did, in a WRITE ping-pong on a veth pair). So the
 * port offers the largest IB MTU whose frames fit after the kernel's
 * offset, the tighter of the two bounds.
 */
#include <string.h>

#include <linux/if_packet.h>

#include "droce_drv_hw.h"

/* af_packet's ring frame when its devargs name none (DFLT_FRAME_SIZE). */
#define AF_PACKET_FRAMESZ_DEFAULT 2048
/* Where the kernel puts a received frame's network header in a ring
 * frame (tpacket_rcv(): behind the TPACKET_V2 header and its
 * sockaddr_ll, room for a link header of up to 16 bytes, aligned; 80
 * bytes with a VLAN tag too). A frame that fits behind it fits: its MAC
 * header sits before it, which only leaves more room. */
#define AF_PACKET_RX_NETOFF TPACKET_ALIGN(TPACKET2_HDRLEN + 16)

static int
af_packet_match(const struct rte_eth_dev_info *dev_info)
{
	return strcmp(dev_info->driver_name, "net_af_packet") == 0;
}

static uint32_t
af_packet_frame_max(const struct rte_eth_dev_info *dev_info)
{
	uint32_t framesz = droce_drv_devarg_u32(dev_info, "framesz", AF_PACKET_FRAMESZ_DEFAULT);

	return framesz > AF_PACKET_RX_NETOFF ? framesz - AF_PACKET_RX_NETOFF : 1;
}

const struct droce_driver_ops droce_drv_af_packet = {
	.name = "af_packet",
	.match = af_packet_match,
	.configure = droce_drv_generic_configure,
	.start = droce_drv_generic_start,
	/* Shared mode: the rules start() made. */
	.stop = droce_drv_hw_stop,
	.frame_max = af_packet_frame_max,
};
