/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AF_XDP port driver (net_af_xdp): droce on any kernel-driven NIC, or
 * a veth, through an XDP socket.
 *
 * The PMD registers the port's mbuf pool as the socket's UMEM, one UMEM
 * chunk per mempool object, and the kernel takes chunks of at most a page
 * (xdp_umem_reg() refuses larger ones: "Failed to create umem"). The
 * kernel writes a received frame XDP_PACKET_HEADROOM bytes into the
 * chunk's data. So the port's mbufs must be page-sized objects, and the
 * frames they hold a little smaller: about 3.4 KiB with 4 KiB pages, which
 * is room for IB MTU 2048, not 4096. Otherwise the PMD is an ordinary
 * ethdev: the generic hooks configure it (it sets the interface's MTU and
 * its promiscuous flag through the kernel).
 *
 * The PMD's TX sends the first segment of an mbuf only, and sends an mbuf
 * of the UMEM pool in place (its buffer address must be its own): frames
 * for it must be single direct mbufs, which is what droce builds.
 */
#include <string.h>

#include <linux/bpf.h>

#include "droce_drv_hw.h"

static int
af_xdp_match(const struct rte_eth_dev_info *dev_info)
{
	return strcmp(dev_info->driver_name, "net_af_xdp") == 0;
}

const struct droce_driver_ops droce_drv_af_xdp = {
	.name = "af_xdp",
	.match = af_xdp_match,
	.configure = droce_drv_generic_configure,
	.start = droce_drv_generic_start,
	/* Shared mode: the rules start() made. */
	.stop = droce_drv_hw_stop,
	/* The smallest page Linux has: right on x86 and on every other
	 * page size, at the cost of IB MTU 4096 where pages are larger. */
	.mbuf_obj_max = 4096,
	.rx_headroom = XDP_PACKET_HEADROOM,
};
