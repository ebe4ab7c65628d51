/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Port drivers: what differs between NICs when droce brings up an ethdev.
 *
 * A droce port does the same thing on every ethdev (one RX and one TX
 * queue, a mempool, a start); a driver adds what only some NICs can do:
 * offloads, the MTU, rte_flow rules that steer UDP port 4791 to droce's
 * queue, the RX filtering mode. The port asks droce_driver_find() for the
 * first driver in the table whose match() accepts the ethdev and calls its
 * hooks around its own steps, the way rdmavt calls its drivers:
 *
 *   configure()  the ethdev is probed and stopped: rte_eth_dev_configure()
 *                with the driver's offloads, then the MTU
 *   (the port sets up its queues and starts the ethdev)
 *   start()      the ethdev is started: RX modes, flow rules
 *   ...
 *   stop()       before the port stops the ethdev: undo start()
 *
 * The generic driver (drivers/generic) matches every ethdev and uses no
 * offload: droce computes checksums and classifies frames in software.
 * NIC-specific drivers go before it in the table. A driver also states
 * the limits its PMD puts on mbufs (mbuf_obj_max, rx_headroom) and on
 * frames (frame_max), which the
 * port reads before it creates its mbuf pool.
 */
#ifndef DROCE_DRIVER_H
#define DROCE_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most engines (and so RX/TX queue pairs) one droce port drives. */
#define DROCE_PORT_QUEUES_MAX 16

/**
 * The engine that owns a QP, from its QPN: a port with n engines (n a
 * power of two) gives QPN q to engine q & (n - 1), and allocates QPNs so
 * (see docs/architecture.md). A driver that steers by QPN (rte_flow on
 * the BTH's destination QP) sends the frames for engine i to
 * droce_port_drv_ctx.queues[i]; frames that arrive on another queue are
 * handed to their owner in software.
 */
static inline unsigned
droce_qpn_engine(uint32_t qpn, unsigned nb_engines)
{
	return qpn & (nb_engines - 1);
}

/**
 * What a driver has the NIC do for droce. Set by configure() and start();
 * droce-testpmd shows it (`show port info`). All false: the generic
 * driver, everything in software.
 */
struct droce_drv_caps {
	bool tx_ipv4_cksum;  /**< the NIC computes the IPv4 header checksum */
	bool tx_multi_seg;   /**< the NIC sends mbuf chains (zero-copy TX) */
	bool tx_vlan_insert; /**< the NIC inserts the VLAN tag */
	bool rx_rss_udp;     /**< RSS spreads frames over the queues by UDP ports */
	bool rx_flow_qpn;    /**< rte_flow puts each frame on its QP owner's queue */
	/** rte_flow isolation: the port's queues get only the frames the
	 *  driver's rules match (UDP 4791, ARP/ND for droce's addresses); the
	 *  rest stays with the kernel (mlx5's bifurcated model). */
	bool flow_isolate;
};

/** What a driver works on: one ethdev being brought up by a droce port. */
struct droce_port_drv_ctx {
	uint16_t port_id;                        /**< the ethdev */
	const struct rte_eth_dev_info *dev_info; /**< its capabilities */
	/** Engines of the port: one RX and one TX queue each (a power of
	 *  two, 1..DROCE_PORT_QUEUES_MAX). */
	uint16_t nb_queues;
	/** The ethdev's queue id of engine i, RX and TX alike. 0..n-1 when
	 *  droce owns the ethdev; the application's choice when it shares it. */
	uint16_t queues[DROCE_PORT_QUEUES_MAX];
	/** The application configured and starts the ethdev and uses the
	 *  other queues itself: configure() must leave the ethdev alone and
	 *  start() may only add flow rules for droce's queues. */
	bool shared;
	struct droce_drv_caps caps;              /**< set by configure() and start() */
	/** The Ethernet MTU (IP packet size) droce needs for its IB MTU. */
	uint16_t eth_mtu;
	/** Set by configure(): the ethdev accepted @ref eth_mtu. When false
	 *  the PMD does not manage an MTU (memif, ring) or refused this one;
	 *  droce keeps to its own MTU either way (the transport builds no
	 *  larger frames). */
	bool mtu_set;
};

/** The hooks of one port driver. */
struct droce_driver_ops {
	const char *name;
	/** @return nonzero when this driver drives the ethdev. */
	int (*match)(const struct rte_eth_dev_info *dev_info);
	/**
	 * Configure the stopped ethdev with ctx->nb_queues RX and TX queues
	 * and the driver's offloads (rte_eth_dev_configure()), then its MTU.
	 * Not called when ctx->shared.
	 * @return 0 or a negative errno.
	 */
	int (*configure)(struct droce_port_drv_ctx *ctx);
	/**
	 * After rte_eth_dev_start(): RX modes, then, with several queues, the
	 * steering of each frame to its QP owner's queue
	 * (droce_qpn_engine()): rte_flow rules, or RSS on the UDP ports, or
	 * nothing (the port hands frames to their owner in software). Sets
	 * ctx->caps for what it programmed. @return 0 or a negative errno.
	 */
	int (*start)(struct droce_port_drv_ctx *ctx);
	/** Before rte_eth_dev_stop(): undo start(). NULL: nothing to undo. */
	void (*stop)(struct droce_port_drv_ctx *ctx);
	/**
	 * Largest mempool object the PMD takes in its RX pool: object
	 * header, mbuf, private area, headroom, data room and padding, as
	 * rte_mempool_calc_obj_size() counts them. 0: any size. The port
	 * sizes its mbufs to fit and offers only the IB MTUs whose frames
	 * then fit in one mbuf (see droce_port_attach()).
	 */
	uint32_t mbuf_obj_max;
	/** Bytes the PMD's RX leaves before a received frame beyond
	 *  RTE_PKTMBUF_HEADROOM: frames must fit in the data room less this. */
	uint16_t rx_headroom;
	/**
	 * The longest frame, in bytes, the PMD carries whole on the ethdev
	 * @p dev_info describes (memif, af_packet: one of their buffers); the
	 * port offers no IB MTU whose frames are longer. NULL: any frame the
	 * mbufs hold.
	 */
	uint32_t (*frame_max)(const struct rte_eth_dev_info *dev_info);
};

/** The driver for any ethdev: no offloads, everything in software. */
extern const struct droce_driver_ops droce_drv_generic;
/** AF_XDP (net_af_xdp): the generic hooks on page-sized mbufs. */
extern const struct droce_driver_ops droce_drv_af_xdp;
/** memif (net_memif): the generic hooks, frames of one memif buffer each. */
extern const struct droce_driver_ops droce_drv_memif;
/** af_packet (net_af_packet): the generic hooks, frames of one ring frame each. */
extern const struct droce_driver_ops droce_drv_af_packet;

/** NVIDIA ConnectX-4 and later (net_mlx5): flow isolation, RSS rules. */
extern const struct droce_driver_ops droce_drv_mlx5;
/** Intel E810 (net_ice): flow director rules per engine, or RSS. */
extern const struct droce_driver_ops droce_drv_ice;
/** Intel X710/XL710 (net_i40e): flow director rules per engine, or RSS. */
extern const struct droce_driver_ops droce_drv_i40e;

/** The generic driver's configure(), for drivers that need no other. */
int droce_drv_generic_configure(struct droce_port_drv_ctx *ctx);
/** For configure(): ask for VLAN insertion on TX where the ethdev offers
 *  it (@p conf's txmode), and say so in ctx->caps.tx_vlan_insert. */
void droce_drv_tx_vlan(struct droce_port_drv_ctx *ctx, struct rte_eth_conf *conf);
/** The generic driver's start(), for drivers that need no other. */
int droce_drv_generic_start(struct droce_port_drv_ctx *ctx);

/**
 * For frame_max(): the number the ethdev's devargs give @p key (a decimal,
 * hex or octal number above 0), else @p dflt (the PMD's default; also for
 * a value it would refuse, which never gets this far).
 */
uint32_t droce_drv_devarg_u32(const struct rte_eth_dev_info *dev_info, const char *key,
			      uint32_t dflt);

/** @return the first driver in the table that matches, or NULL. */
const struct droce_driver_ops *droce_driver_find(const struct rte_eth_dev_info *dev_info);

/**
 * For drivers: set the ethdev's MTU to ctx->eth_mtu and record in
 * ctx->mtu_set whether it took. A PMD that refuses (no MTU support, or a
 * maximum it reports below what it really passes, as memif and af_packet
 * do) is not an error: droce keeps to its own MTU whatever the ethdev's
 * (the transport builds no larger frames), and the refusal is logged.
 */
void droce_drv_mtu_set(struct droce_port_drv_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_DRIVER_H */
