/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the drivers of physical NICs (mlx5, ice, i40e) share: the ethdev
 * configuration with TX offloads and RSS on the UDP ports, and rte_flow
 * rules that steer RoCEv2 (UDP 4791) to droce's queues, either per engine
 * on the BTH's destination QP or spread by RSS. Internal to drivers/.
 */
#ifndef DROCE_DRV_HW_H
#define DROCE_DRV_HW_H

#include <rte_flow.h>

#include "droce_driver.h"

/** The drivers' log type (droce.driver). */
extern int droce_drv_logtype;

/** The RoCEv2 UDP destination port (IANA), big endian. */
#define DROCE_DRV_ROCE_PORT_BE RTE_BE16(4791)

/**
 * Offset of the bytes matched for the owner engine, from the start of
 * the UDP payload (the BTH): bytes 5..7 hold the destination QP, so bytes
 * 6..7 are its low 16 bits. Two bytes at an even offset: i40e's flexible
 * payload takes whole 16-bit words only.
 */
#define DROCE_DRV_BTH_QPN_LOW_OFF 6

/**
 * Builds the rule that steers the RoCEv2 frames of one engine to its
 * queue, on IPv4 (@p ipv6 false) or IPv6: fills @p pattern (at most
 * @ref DROCE_DRV_PATTERN_MAX items, END included), using @p buf for the
 * items' specs and masks.
 */
#define DROCE_DRV_PATTERN_MAX 6
struct droce_drv_qpn_buf;
typedef void (*droce_drv_qpn_pattern_fn)(const struct droce_port_drv_ctx *ctx, unsigned engine,
					 bool ipv6, struct droce_drv_qpn_buf *buf,
					 struct rte_flow_item *pattern);

/** Room for the specs and masks of one per-engine rule. */
struct droce_drv_qpn_buf {
	struct rte_flow_item_udp udp_spec, udp_mask;
	struct rte_flow_item_raw raw_spec, raw_mask;
	uint8_t bytes[2][160]; /**< RAW patterns: spec, mask */
};

/** ETH / IPV4 or IPV6 / UDP dst 4791, spec and mask in @p buf, into
 *  the first four items of @p pattern (the last is END). */
void droce_drv_hw_roce_pattern(bool ipv6, struct droce_drv_qpn_buf *buf,
			       struct rte_flow_item *pattern);

/** What a NIC driver does beyond the generic one. */
struct droce_drv_hw {
	/** Per-engine rules, or NULL: the PMD cannot match the BTH. */
	droce_drv_qpn_pattern_fn qpn_pattern;
	/** Also steer ARP to queues[0]: the port is isolated (mlx5). */
	bool arp_rule;
};

/**
 * configure() of a NIC driver: rte_eth_dev_configure() with
 * ctx->nb_queues queues, multi-segment TX and the IPv4 header checksum
 * offload where the PMD has them, RSS on the UDP ports over all queues
 * when there are several; then the MTU. Sets the caps it enabled.
 */
int droce_drv_hw_configure(struct droce_port_drv_ctx *ctx);

/**
 * start() of a NIC driver: promiscuous mode off (not in shared mode);
 * with several engines, or in isolation or shared mode, the rules that
 * bring RoCEv2 to droce's queues: per engine through @p hw->qpn_pattern
 * where the PMD takes the rules, else one RSS rule over droce's queues
 * (shared mode or isolation: the ethdev's RSS is not droce's), else what
 * configure()'s RSS does. A refused rule is not an error: what was made
 * of the set is removed and the next way tried.
 */
int droce_drv_hw_start(struct droce_port_drv_ctx *ctx, const struct droce_drv_hw *hw);

/** stop() of a NIC driver: destroys the rules start() made. */
void droce_drv_hw_stop(struct droce_port_drv_ctx *ctx);

#endif /* DROCE_DRV_HW_H */
