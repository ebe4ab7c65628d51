/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attaching a droce port to an ethdev and taking it apart again; the
 * queries, counters and dump.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "droce_port_priv.h"

RTE_LOG_REGISTER(droce_port_logtype, droce.port, NOTICE);

static_assert(DROCE_PORT_ENGINES_MAX == DROCE_PORT_QUEUES_MAX,
	      "droce_port_conf.queues has room for every engine");

static bool
ib_mtu_valid(uint16_t mtu)
{
	return mtu >= 256 && mtu <= 4096 && rte_is_power_of_2(mtu);
}

/*
 * The MAC: the configured one, else the ethdev's, else (an ethdev that
 * reports none) a random locally administered one. The ethdev is told,
 * so that a NIC that filters by MAC lets the port's frames in; a PMD that
 * cannot change its MAC does not filter either (ring, memif). A shared
 * ethdev is not told: its MAC and filters are the application's.
 */
static int
port_mac_setup(struct droce_port *p, const struct droce_port_conf *conf)
{
	struct rte_ether_addr mac;
	int ret;

	if (conf->mac_set) {
		if (!rte_is_valid_assigned_ether_addr(&conf->mac))
			return -EINVAL;
		mac = conf->mac;
	} else {
		ret = rte_eth_macaddr_get(p->port_id, &mac);
		if (ret != 0)
			return ret;
		if (!rte_is_zero_ether_addr(&mac)) {
			p->mac = mac;
			return 0;
		}
		rte_eth_random_addr(mac.addr_bytes);
	}
	/* A shared ethdev keeps the application's MAC: frames to droce's
	 * reach it as far as the application's RX modes let them. */
	if (p->shared) {
		p->mac = mac;
		return 0;
	}
	ret = rte_eth_dev_default_mac_addr_set(p->port_id, &mac);
	if (ret == -ENOTSUP)
		DROCE_PORT_LOG(NOTICE, "port %u: the ethdev cannot change its MAC; droce uses its own",
			       p->port_id);
	else if (ret != 0)
		return ret;
	p->mac = mac;
	return 0;
}

/* Queues on the ethdev the driver configured: one RX/TX pair per engine. */
static int
port_queues_setup(struct droce_port *p, const struct droce_port_conf *conf)
{
	uint16_t nb_rxd = conf->nb_rxd ? conf->nb_rxd : DROCE_PORT_NB_DESC;
	uint16_t nb_txd = conf->nb_txd ? conf->nb_txd : DROCE_PORT_NB_DESC;
	int socket = rte_eth_dev_socket_id(p->port_id);
	unsigned i;
	int ret;

	ret = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	for (i = 0; ret == 0 && i < p->nb_queues; i++) {
		ret = rte_eth_rx_queue_setup(p->port_id, p->q[i].qid, nb_rxd, socket, NULL, p->mp);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(p->port_id, p->q[i].qid, nb_txd, socket, NULL);
	}
	return ret;
}

/* The size of the port's mbufs and its IB MTU: the configured one, or
 * less where the driver's mbufs cannot hold its frames. */
static int
port_mtu_choose(struct droce_port *p, const struct droce_port_conf *conf)
{
	struct droce_port_buf b;
	int ret = droce_port_buf_plan_dev(p->drv, &p->dev_info, conf->mtu, &b);

	if (ret != 0)
		return ret;
	if (b.ib_mtu < conf->mtu)
		DROCE_PORT_LOG(NOTICE, "port %u: IB MTU %u does not fit in the mbufs of the %s driver "
			       "(data room %u, frames of up to %u bytes); the port offers %u",
			       p->port_id, conf->mtu, p->drv->name, b.data_room, b.frame_room,
			       b.ib_mtu);
	p->ib_mtu = b.ib_mtu;
	p->data_room = b.data_room;
	return 0;
}

/* The mbuf pool, and per queue a loopback ring and a redirect ring, which
 * can each hold all of its mbufs. Each queue beyond the first pins the
 * mbufs of its own RX and TX descriptors: the default pool grows by as
 * many. */
static int
port_buffers_create(struct droce_port *p, const struct droce_port_conf *conf)
{
	uint32_t nb = conf->nb_mbufs ? conf->nb_mbufs :
		      DROCE_PORT_NB_MBUFS + (p->nb_queues - 1u) * 2 * DROCE_PORT_NB_DESC;
	int socket = rte_eth_dev_socket_id(p->port_id);
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned i;

	snprintf(name, sizeof(name), "droce_mp%u", p->port_id);
	p->mp = rte_pktmbuf_pool_create(name, nb, RTE_MIN(nb / 8, 256u), DROCE_PORT_MBUF_PRIV,
					RTE_PKTMBUF_HEADROOM + p->data_room, socket);
	if (p->mp == NULL)
		return -rte_errno;
	for (i = 0; i < p->nb_queues; i++) {
		struct droce_port_queue *pq = &p->q[i];

		snprintf(name, sizeof(name), "droce_lo%u_%u", p->port_id, i);
		pq->lo = rte_ring_create(name, nb, socket,
					 RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (pq->lo == NULL)
			return -rte_errno;
		if (p->nb_queues == 1)
			continue;
		snprintf(name, sizeof(name), "droce_rd%u_%u", p->port_id, i);
		pq->redirect = rte_ring_create(name, nb, socket, RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (pq->redirect == NULL)
			return -rte_errno;
	}
	return 0;
}

/* Free ring @p r and the frames in it; NULL is fine. */
static void
port_ring_free(struct rte_ring *r)
{
	struct rte_mbuf *m;

	if (r == NULL)
		return;
	while (rte_ring_sc_dequeue(r, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(r);
}

/* Free what attach made; everything may be missing. */
static void
port_free(struct droce_port *p)
{
	unsigned i;

	for (i = 0; p->q != NULL && i < p->nb_queues; i++) {
		port_ring_free(p->q[i].lo);
		port_ring_free(p->q[i].redirect);
		port_ring_free(p->q[i].app);
		droce_fault_fini(&p->q[i].fault_rx);
		droce_fault_fini(&p->q[i].fault_tx);
	}
	if (p->bottleneck != NULL) {
		droce_bottleneck_fini(p->bottleneck);
		rte_free(p->bottleneck);
	}
	droce_neigh_fini(p);
	/* A shared ethdev runs on after detach: frames droce sent may still
	 * wait in its TX queues, so the pool stays until every mbuf is back. */
	if (p->shared && p->mp != NULL && !rte_mempool_full(p->mp))
		DROCE_PORT_LOG(WARNING, "port %u: %u mbufs of droce's pool are still in the ethdev: "
			       "the pool stays allocated", p->port_id,
			       rte_mempool_in_use_count(p->mp));
	else
		rte_mempool_free(p->mp);
	pthread_mutex_destroy(&p->capture_lock);
	rte_free(p->q);
	rte_free(p);
}

/* The RX bottleneck, when the configuration asks for one. */
static int
port_bottleneck_create(struct droce_port *p, const struct droce_port_conf *conf)
{
	if (conf->bottleneck.rate_mbps == 0)
		return 0;
	p->bottleneck = rte_zmalloc("droce_bottleneck", sizeof(*p->bottleneck), 0);
	if (p->bottleneck == NULL)
		return -ENOMEM;
	droce_bottleneck_init(p->bottleneck, &conf->bottleneck, &p->q[0].stats.rx_bottleneck,
			      rte_get_tsc_hz(), rte_get_tsc_cycles());
	return 0;
}

/* The faults of @p conf on queue @p q: the seed moves by the queue number,
 * so queues do not drop the same frames in lockstep. */
static struct droce_fault_conf
port_fault_conf(const struct droce_fault_conf *conf, unsigned q)
{
	struct droce_fault_conf c = *conf;

	c.seed += q;
	return c;
}

/* The per-queue state of @p conf->nb_queues engines on queues 0..n-1. */
static int
port_queues_create(struct droce_port *p, const struct droce_port_conf *conf)
{
	unsigned i;

	p->nb_queues = conf->nb_queues ? conf->nb_queues : 1;
	p->q = rte_zmalloc_socket("droce_port_q", p->nb_queues * sizeof(*p->q),
				  RTE_CACHE_LINE_SIZE, rte_eth_dev_socket_id(p->port_id));
	if (p->q == NULL)
		return -ENOMEM;
	/* See droce_qpn_engine(). A shared ethdev's queues are the ones the
	 * application reserved for droce. */
	p->drv_ctx.nb_queues = p->nb_queues;
	for (i = 0; i < p->nb_queues; i++) {
		p->q[i].qid = conf->shared ? conf->queues[i] : (uint16_t)i;
		p->drv_ctx.queues[i] = p->q[i].qid;
	}
	return 0;
}

int
droce_port_attach(const struct droce_port_conf *conf, struct droce_port **out)
{
	struct droce_port *p;
	unsigned i;
	int ret;

	if (conf == NULL || out == NULL || !ib_mtu_valid(conf->mtu) ||
	    (conf->ipv4 != 0 && (conf->ipv4_prefix == 0 || conf->ipv4_prefix > 32)) ||
	    droce_fault_conf_check(&conf->fault_rx) != 0 ||
	    droce_bottleneck_conf_check(&conf->bottleneck) != 0 ||
	    droce_cc_conf_check(&conf->cc) != 0 ||
	    droce_fault_conf_check(&conf->fault_tx) != 0 ||
	    conf->nb_queues > DROCE_PORT_QUEUES_MAX ||
	    (conf->placement != DROCE_PLACE_ROUND_ROBIN &&
	     conf->placement != DROCE_PLACE_LEAST_LOADED) ||
	    (conf->nb_queues != 0 && !rte_is_power_of_2(conf->nb_queues)) ||
	    /* The bottleneck is one queue of frames: one engine's. */
	    (conf->bottleneck.rate_mbps != 0 && conf->nb_queues > 1))
		return -EINVAL;
	if (!rte_eth_dev_is_valid_port(conf->port_id))
		return -ENODEV;
	p = rte_zmalloc_socket("droce_port", sizeof(*p), RTE_CACHE_LINE_SIZE,
			       rte_eth_dev_socket_id(conf->port_id));
	if (p == NULL)
		return -ENOMEM;
	pthread_mutex_init(&p->capture_lock, NULL);
	p->port_id = conf->port_id;
	p->shared = conf->shared;
	p->ipv4 = conf->ipv4;
	p->ipv4_prefix = conf->ipv4 ? conf->ipv4_prefix : 0;
	p->ipv4_mask = conf->ipv4 ? ~0u << (32 - conf->ipv4_prefix) : 0;
	p->tsc_hz = rte_get_tsc_hz();
	ret = droce_net_init(p, &conf->net);
	if (ret != 0)
		goto fail;

	ret = rte_eth_dev_info_get(p->port_id, &p->dev_info);
	if (ret != 0)
		goto fail;
	p->drv = droce_driver_find(&p->dev_info);
	if (p->drv == NULL) {
		ret = -ENOTSUP;
		goto fail;
	}
	ret = port_mtu_choose(p, conf);
	if (ret == 0)
		ret = port_queues_create(p, conf);
	if (ret != 0)
		goto fail;
	p->drv_ctx.port_id = p->port_id;
	p->drv_ctx.dev_info = &p->dev_info;
	p->drv_ctx.eth_mtu = p->ib_mtu + DROCE_PORT_L3_OVERHEAD;
	p->cc = conf->cc;

	ret = port_buffers_create(p, conf);
	for (i = 0; ret == 0 && i < p->nb_queues; i++) {
		struct droce_port_queue *pq = &p->q[i];
		struct droce_fault_conf rx = port_fault_conf(&conf->fault_rx, i);
		struct droce_fault_conf tx = port_fault_conf(&conf->fault_tx, i);

		droce_fault_init(&pq->fault_rx, &rx, p->mp, &pq->stats.rx_fault);
		droce_fault_init(&pq->fault_tx, &tx, p->mp, &pq->stats.tx_fault);
	}
	if (ret == 0)
		ret = port_bottleneck_create(p, conf);
	if (ret == 0)
		ret = droce_neigh_init(p);
	if (ret == 0 && p->shared) {
		/* The application configured the ethdev and its queues. */
		ret = droce_port_share_setup(p);
	} else if (ret == 0) {
		ret = p->drv->configure(&p->drv_ctx);
		if (ret == 0)
			ret = port_queues_setup(p, conf);
	}
	if (ret == 0)
		ret = port_mac_setup(p, conf);
	if (ret == 0) {
		p->burst_lock = droce_port_ethdev_burst_lock(p->port_id);
		ret = droce_port_link_start(p, conf);
	}
	if (ret != 0)
		goto fail;
	droce_gid_table_build(p);
	droce_port_mcast_sync(p);
	if (conf->capture != NULL) {
		ret = droce_port_capture_start(p, conf->capture);
		if (ret != 0) {
			droce_port_detach(p);
			return ret;
		}
	}
	*out = p;
	return 0;
fail:
	DROCE_PORT_LOG(ERR, "port %u: attach failed: %s", conf->port_id,
		       rte_strerror(-ret));
	port_free(p);
	return ret;
}

void
droce_port_detach(struct droce_port *p)
{
	if (p == NULL)
		return;
	droce_port_capture_stop(p);
	if (p->drv->stop != NULL)
		p->drv->stop(&p->drv_ctx);
	/* The ethdev stays the application's; stopping it makes PMDs give
	 * back the RX mbufs of the pool freed below. A shared one runs on. */
	if (!p->shared)
		droce_port_ethdev_stop(p->port_id);
	port_free(p);
}

struct rte_mempool *
droce_port_mempool(const struct droce_port *p)
{
	return p->mp;
}

const struct droce_cc_conf *
droce_port_cc_conf(const struct droce_port *p)
{
	return &p->cc;
}

uint32_t
droce_port_link_mbps(const struct droce_port *p)
{
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(p->port_id, &link) != 0 ||
	    link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
		return 0;
	return link.link_speed;
}

struct droce_port_cycles *
droce_port_cycles(struct droce_port *p, uint16_t q)
{
	return &p->q[q].cycles;
}

uint16_t
droce_port_nb_queues(const struct droce_port *p)
{
	return p->nb_queues;
}

uint16_t
droce_port_ethdev(const struct droce_port *p)
{
	return p->port_id;
}

void
droce_port_mac(const struct droce_port *p, struct rte_ether_addr *mac)
{
	*mac = p->mac;
}

uint32_t
droce_port_ipv4(const struct droce_port *p)
{
	return p->ipv4;
}

const char *
droce_port_driver(const struct droce_port *p, struct droce_drv_caps *caps)
{
	*caps = p->drv_ctx.caps;
	return p->drv->name;
}

uint16_t
droce_port_mtu(const struct droce_port *p)
{
	return p->ib_mtu;
}

/* droce_port_tick() when there is something to do: apart, so that the
 * common case (every engine iteration) saves no registers. */
static void __rte_noinline
port_tick_due(struct droce_port *p, uint16_t q, uint64_t now)
{
	struct droce_port_queue *pq = &p->q[q];

	/* Frames the TX fault stage held go out when due, traffic or not. */
	if (unlikely(droce_fault_busy(&pq->fault_tx))) {
		struct droce_capture *c = droce_capture_enter(p);

		droce_port_tx_fault_flush(p, pq, c, now);
		droce_capture_exit(p, c);
	}
	/* What the port does once, on the first engine. */
	if (q != 0)
		return;
	droce_neigh_gc(p, pq, now);
	droce_mcast_report_tick(p, pq, now);
	droce_port_link_watch(p, now);
}

void
droce_port_tick(struct droce_port *p, uint16_t q, uint64_t now)
{
	if (droce_fault_busy(&p->q[q].fault_tx) ||
	    (q == 0 && (now >= __atomic_load_n(&p->neigh_gc_next, __ATOMIC_RELAXED) ||
			now >= p->link_next_tsc)))
		port_tick_due(p, q, now);
}

int
droce_port_fault_set(struct droce_port *p, bool rx, const struct droce_fault_conf *c)
{
	static const struct droce_fault_conf off;

	if (c == NULL)
		c = &off;
	unsigned i;

	if (droce_fault_conf_check(c) != 0)
		return -EINVAL;
	for (i = 0; i < p->nb_queues; i++) {
		struct droce_fault_conf qc = port_fault_conf(c, i);

		droce_fault_set(rx ? &p->q[i].fault_rx : &p->q[i].fault_tx, &qc);
	}
	return 0;
}

void
droce_port_fault_get(const struct droce_port *p, bool rx, struct droce_fault_conf *c)
{
	/* Queue 0's seed is the one set. */
	droce_fault_get(rx ? &p->q[0].fault_rx : &p->q[0].fault_tx, c);
}

/* The counters are all uint64_t: copy them as an array. */
#define STATS_NB (sizeof(struct droce_port_stats) / sizeof(uint64_t))
static_assert(sizeof(struct droce_port_stats) % sizeof(uint64_t) == 0,
	      "struct droce_port_stats holds only uint64_t counters");

int
droce_port_queue_stats_get(const struct droce_port *p, uint16_t q, struct droce_port_stats *s)
{
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)s;
	unsigned i;

	if (q >= p->nb_queues)
		return -EINVAL;
	src = (const uint64_t *)&p->q[q].stats;
	for (i = 0; i < STATS_NB; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	return 0;
}

void
droce_port_stats_get(const struct droce_port *p, struct droce_port_stats *s)
{
	struct droce_port_stats qs;
	uint64_t *dst = (uint64_t *)s;
	const uint64_t *src = (const uint64_t *)&qs;
	unsigned q, i;

	memset(s, 0, sizeof(*s));
	for (q = 0; q < p->nb_queues; q++) {
		droce_port_queue_stats_get(p, (uint16_t)q, &qs);
		for (i = 0; i < STATS_NB; i++)
			dst[i] += src[i];
	}
	s->rx_app_taken = __atomic_load_n(&p->app_taken, __ATOMIC_RELAXED);
	s->rx_app_returned = __atomic_load_n(&p->app_returned, __ATOMIC_RELAXED);
	s->rx_app_copied = __atomic_load_n(&p->app_copied, __ATOMIC_RELAXED);
	s->rx_app_drops = __atomic_load_n(&p->app_drops, __ATOMIC_RELAXED);
}

#define STAT_NAME(f) { #f, offsetof(struct droce_port_stats, f) }
#define FAULT_STAT_NAMES(dir) \
	{ #dir "_fault_dropped", offsetof(struct droce_port_stats, dir ## _fault.dropped) }, \
	{ #dir "_fault_duplicated", offsetof(struct droce_port_stats, dir ## _fault.duplicated) }, \
	{ #dir "_fault_reordered", offsetof(struct droce_port_stats, dir ## _fault.reordered) }, \
	{ #dir "_fault_corrupted", offsetof(struct droce_port_stats, dir ## _fault.corrupted) }, \
	{ #dir "_fault_delayed", offsetof(struct droce_port_stats, dir ## _fault.delayed) }, \
	{ #dir "_fault_segmented", offsetof(struct droce_port_stats, dir ## _fault.segmented) }
static const struct {
	const char *name;
	size_t off;
} stat_names[] = {
	STAT_NAME(rx_frames), STAT_NAME(rx_roce), STAT_NAME(rx_arp),
	STAT_NAME(rx_loopback), STAT_NAME(rx_not_roce), STAT_NAME(rx_malformed),
	STAT_NAME(rx_bad_opcode), STAT_NAME(rx_bad_icrc), STAT_NAME(rx_not_ours),
	STAT_NAME(rx_redirected_out), STAT_NAME(rx_redirected_in), STAT_NAME(rx_redirect_drops),
	STAT_NAME(rx_predicted), STAT_NAME(tx_frames), STAT_NAME(tx_arp), STAT_NAME(tx_busy),
	STAT_NAME(rx_app_taken), STAT_NAME(rx_app_returned), STAT_NAME(rx_app_copied),
	STAT_NAME(rx_app_drops),
	FAULT_STAT_NAMES(rx), FAULT_STAT_NAMES(tx),
	{ "rx_bottleneck_frames", offsetof(struct droce_port_stats, rx_bottleneck.frames) },
	{ "rx_bottleneck_marked", offsetof(struct droce_port_stats, rx_bottleneck.marked) },
	{ "rx_bottleneck_not_ect", offsetof(struct droce_port_stats, rx_bottleneck.not_ect) },
	{ "rx_bottleneck_dropped", offsetof(struct droce_port_stats, rx_bottleneck.dropped) },
	{ "rx_bottleneck_max_queue_bytes",
	  offsetof(struct droce_port_stats, rx_bottleneck.max_queue_bytes) },
};
static_assert(RTE_DIM(stat_names) == STATS_NB, "every counter has a name");
static_assert(sizeof(struct droce_fault_stats) == 6 * sizeof(uint64_t),
	      "every fault counter has a name");

const char *
droce_port_stats_at(const struct droce_port_stats *s, unsigned i, uint64_t *value)
{
	if (i >= RTE_DIM(stat_names))
		return NULL;
	*value = *(const uint64_t *)((const uint8_t *)s + stat_names[i].off);
	return stat_names[i].name;
}

/* A fault configuration in the syntax of the configuration file. */
static void
port_dump_fault(const struct droce_port *p, bool rx, FILE *f)
{
	struct droce_fault_conf c;

	droce_port_fault_get(p, rx, &c);
	fprintf(f, "  fault_%s ", rx ? "rx" : "tx");
	if (!droce_fault_conf_active(&c))
		fprintf(f, "off\n");
	else
		fprintf(f, "drop=%g,dup=%g,reorder=%g,corrupt=%g,delay=%g,delay_us=%u,segment=%u,"
			"seed=%" PRIu64 "\n", c.drop, c.duplicate, c.reorder, c.corrupt, c.delay,
			c.delay_us, c.segment, c.seed);
}

void
droce_port_dump(const struct droce_port *p, FILE *f)
{
	char name[RTE_ETH_NAME_MAX_LEN], mac[RTE_ETHER_ADDR_FMT_SIZE];
	char gid[INET6_ADDRSTRLEN];
	struct droce_port_stats s;
	const char *stat;
	unsigned i;
	uint64_t v;

	if (rte_eth_dev_get_name_by_port(p->port_id, name) != 0)
		snprintf(name, sizeof(name), "?");
	rte_ether_format_addr(mac, sizeof(mac), &p->mac);
	fprintf(f, "droce port on ethdev %u (%s, PMD %s, droce driver %s)\n",
		p->port_id, name, p->dev_info.driver_name, p->drv->name);
	fprintf(f, "  mac %s\n", mac);
	if (p->ipv4 != 0)
		fprintf(f, "  ipv4 %u.%u.%u.%u/%u\n", p->ipv4 >> 24,
			(p->ipv4 >> 16) & 0xff, (p->ipv4 >> 8) & 0xff,
			p->ipv4 & 0xff, p->ipv4_prefix);
	else
		fprintf(f, "  ipv4 none\n");
	fprintf(f, "  engines (queue pairs) %u\n", p->nb_queues);
	fprintf(f, "  ib mtu %u, ethernet mtu %u %s, mbuf data room %u\n", p->ib_mtu,
		p->drv_ctx.eth_mtu,
		p->drv_ctx.mtu_set ? "(set on the ethdev)" : "(not set: the PMD refused)",
		p->data_room);
	fprintf(f, "  capture %s\n",
		__atomic_load_n(&p->capture, __ATOMIC_RELAXED) ? "running" : "off");
	port_dump_fault(p, true, f);
	port_dump_fault(p, false, f);
	for (i = 0; i < (unsigned)p->nb_gids; i++) {
		droce_gid_format(p->gids[i], gid, sizeof(gid));
		fprintf(f, "  gid[%u] %s vlan %u\n", i, gid, droce_port_gid_vlan(p));
	}
	droce_neigh_dump(p, f);
	droce_port_stats_get(p, &s);
	fprintf(f, "  counters:\n");
	for (i = 0; (stat = droce_port_stats_at(&s, i, &v)) != NULL; i++)
		fprintf(f, "    %-14s %" PRIu64 "\n", stat, v);
}
