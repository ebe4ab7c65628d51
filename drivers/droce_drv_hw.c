/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the drivers of physical NICs share (droce_drv_hw.h): offloads and
 * RSS in the ethdev configuration, and the rte_flow rules that bring
 * RoCEv2 frames to droce's queues.
 */
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "droce_drv_hw.h"

#define HW_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, droce_drv_logtype, "droce: " fmt "\n", ##__VA_ARGS__)

/* Per engine, one IPv4 and one IPv6 rule; and one ARP rule. */
#define HW_FLOWS_MAX (2 * DROCE_PORT_QUEUES_MAX + 1)

/* The rules made on each ethdev, for stop() (the driver context has no
 * room of its own, and rte_flow_flush() would remove the application's
 * rules in shared mode). The engine that starts or stops a port is the
 * only one to touch its entry. */
static struct {
	unsigned n;
	struct rte_flow *flow[HW_FLOWS_MAX];
} hw_flows[RTE_MAX_ETHPORTS];

static const uint64_t hw_rss_udp = RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP;

int
droce_drv_hw_configure(struct droce_port_drv_ctx *ctx)
{
	const struct rte_eth_dev_info *info = ctx->dev_info;
	struct rte_eth_conf conf = { 0 };
	int ret;

	/* Zero-copy TX sends the payload as mbufs chained to the headers. */
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		ctx->caps.tx_multi_seg = true;
	}
	droce_drv_tx_vlan(ctx, &conf);
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		ctx->caps.tx_ipv4_cksum = true;
	}
	/* Several engines: the peer's source port varies per QP pair
	 * (derived from the flow label, as Linux does), so hashing on the
	 * UDP ports spreads QPs over the queues even where no rule matches
	 * the BTH; the port hands a frame on the wrong queue to its owner. */
	if (ctx->nb_queues > 1 && (info->flow_type_rss_offloads & hw_rss_udp) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info->flow_type_rss_offloads & hw_rss_udp;
		ctx->caps.rx_rss_udp = true;
	}
	ret = rte_eth_dev_configure(ctx->port_id, ctx->nb_queues, ctx->nb_queues, &conf);
	if (ret != 0)
		return ret;
	droce_drv_mtu_set(ctx);
	return 0;
}

/* Destroy the port's rules made after the first @p keep, newest first. */
static void
hw_flows_trim(uint16_t port_id, unsigned keep)
{
	struct rte_flow_error err = { 0 };

	while (hw_flows[port_id].n > keep)
		if (rte_flow_destroy(port_id, hw_flows[port_id].flow[--hw_flows[port_id].n],
				     &err) != 0)
			HW_LOG(WARNING, "ethdev %u: a flow rule stays: %s", port_id,
			       err.message ? err.message : "(no reason given)");
}

void
droce_drv_hw_stop(struct droce_port_drv_ctx *ctx)
{
	hw_flows_trim(ctx->port_id, 0);
}

/* Validate, then create one ingress rule and keep it for stop(). */
static int
hw_flow_add(struct droce_port_drv_ctx *ctx, const struct rte_flow_item *pattern,
	    const struct rte_flow_action *actions)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_error err = { 0 };
	struct rte_flow *f = NULL;
	int ret;

	if (hw_flows[ctx->port_id].n == HW_FLOWS_MAX)
		return -ENOSPC;
	ret = rte_flow_validate(ctx->port_id, &attr, pattern, actions, &err);
	if (ret == 0) {
		f = rte_flow_create(ctx->port_id, &attr, pattern, actions, &err);
		if (f == NULL)
			ret = -rte_errno;
	}
	if (ret != 0) {
		HW_LOG(INFO, "ethdev %u (%s): flow rule refused: %s", ctx->port_id,
		       ctx->dev_info->driver_name, err.message ? err.message : rte_strerror(-ret));
		return ret < 0 ? ret : -EINVAL;
	}
	hw_flows[ctx->port_id].flow[hw_flows[ctx->port_id].n++] = f;
	return 0;
}

void
droce_drv_hw_roce_pattern(bool ipv6, struct droce_drv_qpn_buf *buf, struct rte_flow_item *pattern)
{
	buf->udp_spec = (struct rte_flow_item_udp){ .hdr.dst_port = DROCE_DRV_ROCE_PORT_BE };
	buf->udp_mask = (struct rte_flow_item_udp){ .hdr.dst_port = RTE_BE16(0xffff) };
	pattern[0] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_ETH };
	pattern[1] = (struct rte_flow_item){
		.type = ipv6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4 };
	pattern[2] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_UDP,
					     .spec = &buf->udp_spec, .mask = &buf->udp_mask };
	pattern[3] = (struct rte_flow_item){ .type = RTE_FLOW_ITEM_TYPE_END };
}

/* One rule per engine and IP version: the owner's queue. */
static int
hw_qpn_rules(struct droce_port_drv_ctx *ctx, droce_drv_qpn_pattern_fn build)
{
	struct rte_flow_item pattern[DROCE_DRV_PATTERN_MAX];
	struct droce_drv_qpn_buf buf;
	unsigned i, v;
	int ret;

	for (i = 0; i < ctx->nb_queues; i++)
		for (v = 0; v < 2; v++) {
			struct rte_flow_action_queue q = { .index = ctx->queues[i] };
			struct rte_flow_action actions[] = {
				{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q },
				{ .type = RTE_FLOW_ACTION_TYPE_END },
			};

			memset(&buf, 0, sizeof(buf));
			build(ctx, i, v == 1, &buf, pattern);
			ret = hw_flow_add(ctx, pattern, actions);
			if (ret != 0)
				return ret;
		}
	return 0;
}

/* All RoCEv2 to droce's queues, spread by RSS on the UDP ports (the one
 * queue itself when droce has one). */
static int
hw_rss_rules(struct droce_port_drv_ctx *ctx)
{
	struct rte_flow_item pattern[DROCE_DRV_PATTERN_MAX];
	struct droce_drv_qpn_buf buf;
	unsigned v;
	int ret;

	for (v = 0; v < 2; v++) {
		struct rte_flow_action_queue q = { .index = ctx->queues[0] };
		struct rte_flow_action_rss rss = {
			.func = RTE_ETH_HASH_FUNCTION_DEFAULT,
			.types = v ? RTE_ETH_RSS_NONFRAG_IPV6_UDP : RTE_ETH_RSS_NONFRAG_IPV4_UDP,
			.queue_num = ctx->nb_queues,
			.queue = ctx->queues,
		};
		struct rte_flow_action actions[] = {
			ctx->nb_queues > 1 ?
				(struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss } :
				(struct rte_flow_action){ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q },
			{ .type = RTE_FLOW_ACTION_TYPE_END },
		};

		droce_drv_hw_roce_pattern(v == 1, &buf, pattern);
		ret = hw_flow_add(ctx, pattern, actions);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* ARP to engine 0's queue: in isolation nothing else reaches droce. */
static int
hw_arp_rule(struct droce_port_drv_ctx *ctx)
{
	struct rte_flow_item_eth spec = { .hdr.ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP) };
	struct rte_flow_item_eth mask = { .hdr.ether_type = RTE_BE16(0xffff) };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec, .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_queue q = { .index = ctx->queues[0] };
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};

	return hw_flow_add(ctx, pattern, actions);
}

/* Shared mode: the application chose the TX offloads. */
static void
hw_caps_from_conf(struct droce_port_drv_ctx *ctx)
{
	struct rte_eth_conf conf;

	if (rte_eth_dev_conf_get(ctx->port_id, &conf) != 0)
		return;
	ctx->caps.tx_multi_seg = (conf.txmode.offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	ctx->caps.tx_ipv4_cksum = (conf.txmode.offloads & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
	ctx->caps.tx_vlan_insert = (conf.txmode.offloads & RTE_ETH_TX_OFFLOAD_VLAN_INSERT) != 0;
}

int
droce_drv_hw_start(struct droce_port_drv_ctx *ctx, const struct droce_drv_hw *hw)
{
	bool own_rss = !ctx->shared && !ctx->caps.flow_isolate;
	unsigned keep;
	int ret;

	/* A port starts again after its link went down: what start()
	 * enables is found afresh each time. */
	ctx->caps.rx_flow_qpn = false;
	if (!own_rss)
		ctx->caps.rx_rss_udp = false;
	if (ctx->shared) {
		hw_caps_from_conf(ctx);
	} else {
		ret = droce_drv_generic_start(ctx);
		if (ret != 0)
			return ret;
	}
	/* One engine on an ethdev of its own: everything arrives on queue 0. */
	if (ctx->nb_queues == 1 && own_rss)
		return 0;
	if (hw->arp_rule && ctx->caps.flow_isolate) {
		ret = hw_arp_rule(ctx);
		if (ret != 0)
			goto fail;
	}
	if (ctx->nb_queues > 1 && hw->qpn_pattern != NULL) {
		keep = hw_flows[ctx->port_id].n;

		if (hw_qpn_rules(ctx, hw->qpn_pattern) == 0) {
			ctx->caps.rx_flow_qpn = true;
			return 0;
		}
		/* Refused: the rules made so far go, so that no engine
		 * gets more than its share. */
		hw_flows_trim(ctx->port_id, keep);
	}
	/* The ethdev's own RSS is droce's when droce owns the ethdev and
	 * does not isolate it (configure() set it). */
	if (own_rss)
		return 0;
	keep = hw_flows[ctx->port_id].n;
	ret = hw_rss_rules(ctx);
	if (ret == 0) {
		ctx->caps.rx_rss_udp = ctx->nb_queues > 1;
		return 0;
	}
	if (ctx->shared) {
		/* The application hands droce its RoCEv2 frames
		 * (droce_dev_rx_burst()). */
		HW_LOG(NOTICE, "ethdev %u (%s): no rule steers RoCEv2 to droce's queues: "
		       "the application must hand the frames over", ctx->port_id,
		       ctx->dev_info->driver_name);
		hw_flows_trim(ctx->port_id, keep);
		return 0;
	}
fail:
	/* Isolated and no rule: droce would receive nothing. */
	HW_LOG(ERR, "ethdev %u (%s): isolated, and the rules for droce's traffic are refused",
	       ctx->port_id, ctx->dev_info->driver_name);
	droce_drv_hw_stop(ctx);
	return ret;
}
