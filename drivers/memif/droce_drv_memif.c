/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memif port driver (net_memif): the generic hooks, and frames that
 * each fit in one of memif's buffers.
 *
 * memif copies a frame into buffers of the link's buffer size (its
 * `bsize` devarg, 2048 bytes by default) and marks each buffer but the
 * last of a frame with a "next" flag. DPDK 22.11's eth_memif_tx() never
 * clears that flag in the first descriptor of a frame: a frame that fits
 * in one buffer, sent through a ring slot whose last use was the first
 * buffer of a longer frame, still carries it, and the peer's
 * eth_memif_rx() joins the frame after it onto it. The second frame is
 * lost inside the first: with IB MTU 4096 over 2 KiB buffers an ACK
 * swallowed the WRITE after it, again at every resend, until the QP
 * failed with retry errors (docs/config.md, "memif buffers"). Frames that
 * each fit in one buffer never set the flag, so the port offers the
 * largest IB MTU whose frames do. (They also stay clear of the same
 * loop's slot count, which lets a frame that spans buffers take one ring
 * slot more than is free and overwrite a frame the peer has not read.)
 */
#include <string.h>

#include "droce_drv_hw.h"

/* memif's buffer size when its devargs name none (ETH_MEMIF_DEFAULT_PKT_BUFFER_SIZE). */
#define MEMIF_BSIZE_DEFAULT 2048

static int
memif_match(const struct rte_eth_dev_info *dev_info)
{
	return strcmp(dev_info->driver_name, "net_memif") == 0;
}

/* The ethdev's bsize devarg, or memif's default. */
static uint32_t
memif_frame_max(const struct rte_eth_dev_info *dev_info)
{
	return droce_drv_devarg_u32(dev_info, "bsize", MEMIF_BSIZE_DEFAULT);
}

const struct droce_driver_ops droce_drv_memif = {
	.name = "memif",
	.match = memif_match,
	.configure = droce_drv_generic_configure,
	.start = droce_drv_generic_start,
	/* Shared mode: the rules start() made. */
	.stop = droce_drv_hw_stop,
	.frame_max = memif_frame_max,
};
