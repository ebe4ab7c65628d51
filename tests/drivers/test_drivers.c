/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC drivers' ethdev and rte_flow programming (drivers/mlx5, ice,
 * i40e), against a test double of the ethdev and flow API: this file
 * defines rte_eth_dev_configure(), rte_flow_validate(), rte_flow_create()
 * and the others the drivers call, and the drivers, built into this
 * program, call these instead of librte_ethdev's. No EAL, no port: no
 * virtual PMD here executes rte_flow rules (docs/nics.md), and the
 * hardware ones need their NIC.
 *
 * Checked, for 1, 2 and 4 engines: the configuration (queues, offloads,
 * RSS), every rule's attributes, items, specs, masks and action with its
 * queue ids, the order of isolation and configuration, the fallback when
 * the PMD refuses rules (with nothing left behind), and that shared mode
 * leaves the ethdev's configuration and RX modes to the application.
 */
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <check.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_flow.h>

#include "droce_driver.h"

#define RULES_MAX 64
#define ITEMS_MAX 8

/* A rule as the driver asked for it, copied out of its stack. */
struct rule {
	bool live;
	struct rte_flow_attr attr;
	unsigned nb_items;
	enum rte_flow_item_type item[ITEMS_MAX];
	bool has_spec[ITEMS_MAX];
	struct rte_flow_item_eth eth_spec, eth_mask;
	struct rte_flow_item_udp udp_spec, udp_mask;
	struct rte_flow_item_raw raw_spec, raw_mask;
	uint8_t raw_pattern[2][256];
	enum rte_flow_action_type action;
	uint16_t queue;                 /* QUEUE */
	uint64_t rss_types;             /* RSS */
	unsigned rss_n;
	uint16_t rss_queue[DROCE_PORT_QUEUES_MAX];
};

/* What the double saw, and what it refuses. */
static struct {
	unsigned nb_rules;
	struct rule rules[RULES_MAX];
	unsigned validated, destroyed;
	unsigned configured, isolated, promisc_off;
	bool isolated_before_configure;
	uint16_t nb_rxq, nb_txq;
	struct rte_eth_conf conf;
	/* refuse a rule with a RAW item / every rule / the n-th validation */
	bool refuse_raw, refuse_all;
	unsigned refuse_at;
	uint64_t app_tx_offloads;       /* shared mode: the application's */
} fake;

/* @p validating: the count of validations applies (create follows its
 * validation). */
static bool
refused(const struct rte_flow_item *pattern, bool validating)
{
	const struct rte_flow_item *it;

	if (fake.refuse_all ||
	    (validating && fake.refuse_at != 0 && fake.validated + 1 == fake.refuse_at))
		return true;
	for (it = pattern; it->type != RTE_FLOW_ITEM_TYPE_END; it++)
		if (it->type == RTE_FLOW_ITEM_TYPE_RAW && fake.refuse_raw)
			return true;
	return false;
}

int
rte_flow_validate(uint16_t port_id __rte_unused, const struct rte_flow_attr *attr __rte_unused,
		  const struct rte_flow_item pattern[],
		  const struct rte_flow_action actions[] __rte_unused, struct rte_flow_error *error)
{
	bool no = refused(pattern, true);

	fake.validated++;
	if (no)
		return rte_flow_error_set(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM, NULL,
					  "refused by the test double");
	return 0;
}

static void
rule_copy_item(struct rule *r, const struct rte_flow_item *it)
{
	unsigned i = r->nb_items++;

	ck_assert_uint_lt(i, ITEMS_MAX);
	r->item[i] = it->type;
	r->has_spec[i] = it->spec != NULL;
	ck_assert_ptr_null(it->last);
	if (it->spec == NULL) {
		ck_assert_ptr_null(it->mask);
		return;
	}
	ck_assert_ptr_nonnull(it->mask);
	switch (it->type) {
	case RTE_FLOW_ITEM_TYPE_ETH:
		r->eth_spec = *(const struct rte_flow_item_eth *)it->spec;
		r->eth_mask = *(const struct rte_flow_item_eth *)it->mask;
		break;
	case RTE_FLOW_ITEM_TYPE_UDP:
		r->udp_spec = *(const struct rte_flow_item_udp *)it->spec;
		r->udp_mask = *(const struct rte_flow_item_udp *)it->mask;
		break;
	case RTE_FLOW_ITEM_TYPE_RAW: {
		const struct rte_flow_item_raw *s = it->spec, *m = it->mask;
		size_t len = s->length;

		r->raw_spec = *s;
		r->raw_mask = *m;
		ck_assert_uint_le(len, sizeof(r->raw_pattern[0]) - 1);
		memcpy(r->raw_pattern[0], s->pattern, len);
		memcpy(r->raw_pattern[1], m->pattern, len);
		break;
	}
	default:
		ck_abort_msg("unexpected item %d with a spec", it->type);
	}
}

struct rte_flow *
rte_flow_create(uint16_t port_id __rte_unused, const struct rte_flow_attr *attr,
		const struct rte_flow_item pattern[], const struct rte_flow_action actions[],
		struct rte_flow_error *error)
{
	struct rule *r;
	const struct rte_flow_item *it;

	if (refused(pattern, false)) {
		rte_flow_error_set(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM, NULL, "refused");
		return NULL;
	}
	ck_assert_uint_lt(fake.nb_rules, RULES_MAX);
	r = &fake.rules[fake.nb_rules++];
	memset(r, 0, sizeof(*r));
	r->live = true;
	r->attr = *attr;
	for (it = pattern; it->type != RTE_FLOW_ITEM_TYPE_END; it++)
		rule_copy_item(r, it);
	r->action = actions[0].type;
	ck_assert_int_eq(actions[1].type, RTE_FLOW_ACTION_TYPE_END);
	if (r->action == RTE_FLOW_ACTION_TYPE_QUEUE) {
		r->queue = ((const struct rte_flow_action_queue *)actions[0].conf)->index;
	} else {
		const struct rte_flow_action_rss *rss = actions[0].conf;

		ck_assert_int_eq(r->action, RTE_FLOW_ACTION_TYPE_RSS);
		ck_assert_uint_le(rss->queue_num, DROCE_PORT_QUEUES_MAX);
		r->rss_types = rss->types;
		r->rss_n = rss->queue_num;
		memcpy(r->rss_queue, rss->queue, rss->queue_num * sizeof(uint16_t));
	}
	return (struct rte_flow *)r;
}

int
rte_flow_destroy(uint16_t port_id __rte_unused, struct rte_flow *flow,
		 struct rte_flow_error *error __rte_unused)
{
	struct rule *r = (struct rule *)flow;

	ck_assert(r->live);
	r->live = false;
	fake.destroyed++;
	return 0;
}

int
rte_flow_isolate(uint16_t port_id __rte_unused, int set, struct rte_flow_error *error __rte_unused)
{
	ck_assert_int_eq(set, 1);
	fake.isolated++;
	fake.isolated_before_configure = fake.configured == 0;
	return 0;
}

int
rte_eth_dev_configure(uint16_t port_id __rte_unused, uint16_t nb_rx_q, uint16_t nb_tx_q,
		      const struct rte_eth_conf *conf)
{
	fake.configured++;
	fake.nb_rxq = nb_rx_q;
	fake.nb_txq = nb_tx_q;
	fake.conf = *conf;
	return 0;
}

int
rte_eth_dev_set_mtu(uint16_t port_id __rte_unused, uint16_t mtu __rte_unused)
{
	return 0;
}

int
rte_eth_promiscuous_disable(uint16_t port_id __rte_unused)
{
	fake.promisc_off++;
	return 0;
}

int
rte_eth_dev_conf_get(uint16_t port_id __rte_unused, struct rte_eth_conf *conf)
{
	memset(conf, 0, sizeof(*conf));
	conf->txmode.offloads = fake.app_tx_offloads;
	return 0;
}

/* An ethdev of @p driver with the offloads and RSS of a NIC. */
static struct rte_eth_dev_info dev_info;

static struct droce_port_drv_ctx
ctx_make(const char *driver, unsigned n, bool shared)
{
	struct droce_port_drv_ctx ctx = { .port_id = 3, .dev_info = &dev_info,
					  .nb_queues = n, .shared = shared, .eth_mtu = 4154 };
	unsigned i;

	memset(&fake, 0, sizeof(fake));
	memset(&dev_info, 0, sizeof(dev_info));
	dev_info.driver_name = driver;
	dev_info.tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
				   RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	dev_info.flow_type_rss_offloads = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP;
	/* Shared: the application keeps queues 0 and 1, droce has the next. */
	for (i = 0; i < n; i++)
		ctx.queues[i] = shared ? 2 + i : i;
	return ctx;
}

static const struct droce_driver_ops *
drv_of(const char *driver)
{
	struct rte_eth_dev_info info = { .driver_name = driver };

	return droce_driver_find(&info);
}

/* configure() then start() of an ethdev droce owns. */
static void
bring_up(const struct droce_driver_ops *drv, struct droce_port_drv_ctx *ctx)
{
	ck_assert_int_eq(drv->configure(ctx), 0);
	ck_assert_uint_eq(fake.configured, 1);
	ck_assert_uint_eq(fake.nb_rxq, ctx->nb_queues);
	ck_assert_uint_eq(fake.nb_txq, ctx->nb_queues);
	ck_assert_uint_eq(fake.conf.txmode.offloads,
			  RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM);
	ck_assert(ctx->caps.tx_multi_seg && ctx->caps.tx_ipv4_cksum && ctx->mtu_set);
	if (ctx->nb_queues > 1) {
		ck_assert_int_eq(fake.conf.rxmode.mq_mode, RTE_ETH_MQ_RX_RSS);
		ck_assert_uint_eq(fake.conf.rx_adv_conf.rss_conf.rss_hf,
				  RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP);
	} else {
		ck_assert_int_eq(fake.conf.rxmode.mq_mode, RTE_ETH_MQ_RX_NONE);
	}
	ck_assert_int_eq(drv->start(ctx), 0);
	ck_assert_uint_eq(fake.promisc_off, 1);
}

static unsigned
live_rules(void)
{
	unsigned i, n = 0;

	for (i = 0; i < fake.nb_rules; i++)
		n += fake.rules[i].live;
	return n;
}

/* ETH / IPVx / UDP dst 4791 with no other field: items 0..2 of @p r. */
static void
check_roce_items(const struct rule *r, bool ipv6)
{
	ck_assert(r->attr.ingress && !r->attr.egress && !r->attr.transfer);
	ck_assert_uint_eq(r->attr.group, 0);
	ck_assert_int_eq(r->item[0], RTE_FLOW_ITEM_TYPE_ETH);
	ck_assert(!r->has_spec[0]);
	ck_assert_int_eq(r->item[1], ipv6 ? RTE_FLOW_ITEM_TYPE_IPV6 : RTE_FLOW_ITEM_TYPE_IPV4);
	ck_assert(!r->has_spec[1]);
	ck_assert_int_eq(r->item[2], RTE_FLOW_ITEM_TYPE_UDP);
	ck_assert_uint_eq(r->udp_spec.hdr.dst_port, RTE_BE16(4791));
	ck_assert_uint_eq(r->udp_spec.hdr.src_port, 0);
	ck_assert_uint_eq(r->udp_mask.hdr.dst_port, 0xffff);
	ck_assert_uint_eq(r->udp_mask.hdr.src_port, 0);
	ck_assert_uint_eq(r->udp_mask.hdr.dgram_len | r->udp_mask.hdr.dgram_cksum, 0);
}

/* i40e: per engine and IP version, the flexible payload word at BTH
 * bytes 6..7 masked to the engine bits, to the engine's queue. */
static void
check_i40e_rules(const struct droce_port_drv_ctx *ctx)
{
	unsigned i, v;

	ck_assert_uint_eq(fake.nb_rules, 2u * ctx->nb_queues);
	for (i = 0; i < ctx->nb_queues; i++)
		for (v = 0; v < 2; v++) {
			const struct rule *r = &fake.rules[2 * i + v];

			ck_assert(r->live);
			check_roce_items(r, v == 1);
			ck_assert_uint_eq(r->nb_items, 4);
			ck_assert_int_eq(r->item[3], RTE_FLOW_ITEM_TYPE_RAW);
			ck_assert_uint_eq(r->raw_spec.relative, 1);
			ck_assert_uint_eq(r->raw_spec.search, 0);
			ck_assert_int_eq(r->raw_spec.offset, 6);
			ck_assert_uint_eq(r->raw_spec.limit, 0);
			ck_assert_uint_eq(r->raw_spec.length, 2);
			ck_assert_uint_eq(r->raw_pattern[0][0], 0);
			ck_assert_uint_eq(r->raw_pattern[0][1], i);
			ck_assert_uint_eq(r->raw_pattern[1][0], 0);
			ck_assert_uint_eq(r->raw_pattern[1][1], ctx->nb_queues - 1);
			ck_assert_int_eq(r->action, RTE_FLOW_ACTION_TYPE_QUEUE);
			ck_assert_uint_eq(r->queue, ctx->queues[i]);
		}
}

static const struct droce_driver_ops *drv_i40e, *drv_ice, *drv_mlx5;

START_TEST(table)
{
	ck_assert_ptr_eq(drv_i40e, &droce_drv_i40e);
	ck_assert_ptr_eq(drv_ice, &droce_drv_ice);
	ck_assert_ptr_eq(drv_mlx5, &droce_drv_mlx5);
	ck_assert_ptr_eq(drv_of("net_af_xdp"), &droce_drv_af_xdp);
	ck_assert_ptr_eq(drv_of("net_memif"), &droce_drv_memif);
	ck_assert_ptr_eq(drv_of("net_af_packet"), &droce_drv_af_packet);
	ck_assert_ptr_eq(drv_of("net_ring"), &droce_drv_generic);
	ck_assert_ptr_eq(drv_of("net_mlx4"), &droce_drv_generic);
	ck_assert_ptr_eq(drv_of("net_iavf"), &droce_drv_generic);
}
END_TEST

/* _i: 1, 2 and 4 engines. */
static unsigned
engines_of(int i)
{
	return 1u << i;
}

START_TEST(i40e_rules)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_i40e", engines_of(_i), false);

	bring_up(drv_i40e, &ctx);
	if (ctx.nb_queues == 1) {
		/* Everything arrives on queue 0: no rule. */
		ck_assert_uint_eq(fake.validated, 0);
		ck_assert(!ctx.caps.rx_flow_qpn && !ctx.caps.rx_rss_udp);
	} else {
		check_i40e_rules(&ctx);
		ck_assert(ctx.caps.rx_flow_qpn && ctx.caps.rx_rss_udp);
	}
	ck_assert(!ctx.caps.flow_isolate);
	drv_i40e->stop(&ctx);
	ck_assert_uint_eq(live_rules(), 0);
}
END_TEST

/* A refused rule part-way (on a second start, after a first with every
 * rule): the rules made before it go, RSS stays. */
START_TEST(i40e_refused)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_i40e", 4, false);

	ck_assert_int_eq(drv_i40e->configure(&ctx), 0);
	ck_assert_int_eq(drv_i40e->start(&ctx), 0);
	ck_assert(ctx.caps.rx_flow_qpn);
	drv_i40e->stop(&ctx);
	fake.refuse_at = fake.validated + 5;
	ck_assert_int_eq(drv_i40e->start(&ctx), 0);
	ck_assert_uint_eq(fake.nb_rules, 8 + 4);
	ck_assert_uint_eq(live_rules(), 0);
	ck_assert(!ctx.caps.rx_flow_qpn && ctx.caps.rx_rss_udp);
}
END_TEST

/* ice: one RAW item, an example frame and its mask in hex. */
static void
unhex(const uint8_t *hex, size_t len, uint8_t *out)
{
	size_t i;

	for (i = 0; i < len / 2; i++) {
		char b[3] = { hex[2 * i], hex[2 * i + 1], 0 };

		out[i] = strtoul(b, NULL, 16);
	}
}

START_TEST(ice_rules)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_ice", engines_of(_i), false);
	unsigned i, v, k;

	bring_up(drv_ice, &ctx);
	if (ctx.nb_queues == 1) {
		ck_assert_uint_eq(fake.validated, 0);
		return;
	}
	ck_assert_uint_eq(fake.nb_rules, 2u * ctx.nb_queues);
	for (i = 0; i < ctx.nb_queues; i++)
		for (v = 0; v < 2; v++) {
			const struct rule *r = &fake.rules[2 * i + v];
			size_t l3 = v ? 40 : 20, len = 14 + l3 + 8 + 12;
			uint8_t pkt[128], msk[128];

			ck_assert_uint_eq(r->nb_items, 1);
			ck_assert_int_eq(r->item[0], RTE_FLOW_ITEM_TYPE_RAW);
			ck_assert_uint_eq(r->raw_spec.relative, 0);
			ck_assert_int_eq(r->raw_spec.offset, 0);
			ck_assert_uint_eq(r->raw_spec.length, 2 * len);
			ck_assert_uint_eq(strlen((const char *)r->raw_pattern[0]), 2 * len);
			ck_assert_uint_eq(strlen((const char *)r->raw_pattern[1]), 2 * len);
			unhex(r->raw_pattern[0], 2 * len, pkt);
			unhex(r->raw_pattern[1], 2 * len, msk);
			/* The example: IPv4 or IPv6, UDP, dst 4791, the engine
			 * in the destination QP's last byte. */
			ck_assert_uint_eq(pkt[12], v ? 0x86 : 0x08);
			ck_assert_uint_eq(pkt[13], v ? 0xdd : 0x00);
			ck_assert_uint_eq(pkt[14] >> 4, v ? 6 : 4);
			ck_assert_uint_eq(pkt[14 + (v ? 6 : 9)], IPPROTO_UDP);
			ck_assert_uint_eq(pkt[14 + l3 + 2], 0x12);
			ck_assert_uint_eq(pkt[14 + l3 + 3], 0xb7);
			ck_assert_uint_eq(pkt[len - 5], i);
			/* The mask: the UDP destination port and the engine
			 * bits, nothing else. */
			for (k = 0; k < len; k++) {
				uint8_t want = 0;

				if (k == 14 + l3 + 2 || k == 14 + l3 + 3)
					want = 0xff;
				else if (k == len - 5)
					want = ctx.nb_queues - 1;
				ck_assert_msg(msk[k] == want, "mask byte %u: %#x", k, msk[k]);
			}
			ck_assert_int_eq(r->action, RTE_FLOW_ACTION_TYPE_QUEUE);
			ck_assert_uint_eq(r->queue, ctx.queues[i]);
		}
	ck_assert(ctx.caps.rx_flow_qpn);
	drv_ice->stop(&ctx);
	ck_assert_uint_eq(live_rules(), 0);
}
END_TEST

/* ice without protocol-agnostic rules (no DDP parser): RSS only. */
START_TEST(ice_refused)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_ice", 2, false);

	fake.refuse_raw = true;
	bring_up(drv_ice, &ctx);
	ck_assert_uint_eq(fake.nb_rules, 0);
	ck_assert(!ctx.caps.rx_flow_qpn && ctx.caps.rx_rss_udp);
}
END_TEST

/* mlx5: isolation before configure, ARP to engine 0, RoCEv2 by RSS over
 * droce's queues (one queue: QUEUE). */
START_TEST(mlx5_rules)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_mlx5", engines_of(_i), false);
	unsigned v, k;

	bring_up(drv_mlx5, &ctx);
	ck_assert_uint_eq(fake.isolated, 1);
	ck_assert(fake.isolated_before_configure);
	ck_assert(ctx.caps.flow_isolate && !ctx.caps.rx_flow_qpn);
	ck_assert(ctx.caps.rx_rss_udp == (ctx.nb_queues > 1));
	ck_assert_uint_eq(fake.nb_rules, 3);
	ck_assert_uint_eq(fake.rules[0].nb_items, 1);
	ck_assert_int_eq(fake.rules[0].item[0], RTE_FLOW_ITEM_TYPE_ETH);
	ck_assert_uint_eq(fake.rules[0].eth_spec.hdr.ether_type, RTE_BE16(RTE_ETHER_TYPE_ARP));
	ck_assert_uint_eq(fake.rules[0].eth_mask.hdr.ether_type, 0xffff);
	ck_assert(rte_is_zero_ether_addr(&fake.rules[0].eth_mask.hdr.dst_addr));
	ck_assert_int_eq(fake.rules[0].action, RTE_FLOW_ACTION_TYPE_QUEUE);
	ck_assert_uint_eq(fake.rules[0].queue, 0);
	for (v = 0; v < 2; v++) {
		const struct rule *r = &fake.rules[1 + v];

		check_roce_items(r, v == 1);
		ck_assert_uint_eq(r->nb_items, 3);
		if (ctx.nb_queues == 1) {
			ck_assert_int_eq(r->action, RTE_FLOW_ACTION_TYPE_QUEUE);
			ck_assert_uint_eq(r->queue, 0);
			continue;
		}
		ck_assert_int_eq(r->action, RTE_FLOW_ACTION_TYPE_RSS);
		ck_assert_uint_eq(r->rss_types, v ? RTE_ETH_RSS_NONFRAG_IPV6_UDP :
						    RTE_ETH_RSS_NONFRAG_IPV4_UDP);
		ck_assert_uint_eq(r->rss_n, ctx.nb_queues);
		for (k = 0; k < ctx.nb_queues; k++)
			ck_assert_uint_eq(r->rss_queue[k], ctx.queues[k]);
	}
	drv_mlx5->stop(&ctx);
	ck_assert_uint_eq(live_rules(), 0);
}
END_TEST

/* Isolated and every rule refused: droce would receive nothing, so the
 * start fails, with no rule left behind. */
START_TEST(mlx5_refused)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_mlx5", 2, false);

	ck_assert_int_eq(drv_mlx5->configure(&ctx), 0);
	fake.refuse_at = 2;
	ck_assert_int_lt(drv_mlx5->start(&ctx), 0);
	ck_assert_uint_eq(fake.nb_rules, 1);
	ck_assert_uint_eq(live_rules(), 0);
}
END_TEST

/* Shared mode: the application configured the ethdev and keeps queues 0
 * and 1. No configuration, no RX mode, no isolation; rules for droce's
 * queues only; the TX caps are the application's. The generic drivers
 * too (memif, af_xdp): a rule per IP version where the PMD takes it. */
START_TEST(shared)
{
	static const char *const drivers[] = { "net_i40e", "net_ice", "net_mlx5", "net_memif",
					       "net_af_xdp" };
	const char *driver = drivers[_i];
	struct droce_port_drv_ctx ctx = ctx_make(driver, 2, true);
	const struct droce_driver_ops *drv = drv_of(driver);
	unsigned v;

	fake.app_tx_offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	ck_assert_int_eq(drv->start(&ctx), 0);
	ck_assert_uint_eq(fake.configured + fake.isolated + fake.promisc_off, 0);
	ck_assert(ctx.caps.tx_multi_seg && !ctx.caps.tx_ipv4_cksum);
	if (drv == drv_i40e) {
		check_i40e_rules(&ctx);
	} else if (drv != drv_ice) {
		/* One RSS rule per IP version over droce's queues; on mlx5 no
		 * ARP rule: the application owns the port's ARP. */
		ck_assert_uint_eq(fake.nb_rules, 2);
		for (v = 0; v < 2; v++) {
			ck_assert_int_eq(fake.rules[v].action, RTE_FLOW_ACTION_TYPE_RSS);
			ck_assert_uint_eq(fake.rules[v].rss_queue[0], 2);
			ck_assert_uint_eq(fake.rules[v].rss_queue[1], 3);
		}
		ck_assert(ctx.caps.rx_rss_udp);
	} else {
		ck_assert_uint_eq(fake.nb_rules, 4);
		ck_assert_uint_eq(fake.rules[1].queue, 2);
		ck_assert_uint_eq(fake.rules[3].queue, 3);
	}
	drv->stop(&ctx);
	ck_assert_uint_eq(live_rules(), 0);
}
END_TEST

/* Shared mode, the BTH rules refused: one RSS rule per IP version over
 * droce's queues; all refused: no rule, and still no error (the
 * application hands droce its frames). */
START_TEST(shared_fallback)
{
	struct droce_port_drv_ctx ctx = ctx_make("net_i40e", 4, true);
	unsigned v;

	fake.refuse_raw = true;
	ck_assert_int_eq(drv_i40e->start(&ctx), 0);
	ck_assert_uint_eq(fake.nb_rules, 2);
	for (v = 0; v < 2; v++) {
		check_roce_items(&fake.rules[v], v == 1);
		ck_assert_int_eq(fake.rules[v].action, RTE_FLOW_ACTION_TYPE_RSS);
		ck_assert_uint_eq(fake.rules[v].rss_n, 4);
		ck_assert_uint_eq(fake.rules[v].rss_queue[3], 5);
	}
	ck_assert(ctx.caps.rx_rss_udp && !ctx.caps.rx_flow_qpn);
	drv_i40e->stop(&ctx);

	ctx = ctx_make("net_i40e", 4, true);
	fake.refuse_all = true;
	ck_assert_int_eq(drv_i40e->start(&ctx), 0);
	ck_assert_uint_eq(fake.nb_rules, 0);
	ck_assert(!ctx.caps.rx_rss_udp && !ctx.caps.rx_flow_qpn);
	ck_assert_uint_eq(fake.configured + fake.promisc_off, 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("drivers");
	TCase *tc = tcase_create("flow");
	SRunner *sr;
	int failed;

	drv_i40e = drv_of("net_i40e");
	drv_ice = drv_of("net_ice");
	drv_mlx5 = drv_of("net_mlx5");
	tcase_add_test(tc, table);
	tcase_add_loop_test(tc, i40e_rules, 0, 3);
	tcase_add_test(tc, i40e_refused);
	tcase_add_loop_test(tc, ice_rules, 0, 3);
	tcase_add_test(tc, ice_refused);
	tcase_add_loop_test(tc, mlx5_rules, 0, 3);
	tcase_add_test(tc, mlx5_refused);
	tcase_add_loop_test(tc, shared, 0, 5);
	tcase_add_test(tc, shared_fallback);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
