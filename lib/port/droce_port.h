/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A droce port: one DPDK ethdev that carries RoCEv2.
 *
 * The port owns nb_queues RX/TX queue pairs of the ethdev (one per
 * engine), the mbuf pool, the MAC and IP addresses, the GID table and the
 * neighbour (ARP) table. Its RX path
 * hands RoCEv2 packets, parsed and ICRC-checked, to the caller (the
 * engine) and deals with everything else itself: ARP is answered and
 * learned, the rest is counted and dropped. Its TX path sends frames the
 * transport built, and loops back frames addressed to the port itself.
 * Each path can inject faults (drop, duplicate, reorder, corrupt, delay)
 * to test the transport: received frames right after the ethdev gives
 * them, before classification; sent frames before the ethdev or the
 * loopback take them.
 *
 * Queue q of the port belongs to engine q: the RX, TX, route and tick
 * functions of one queue are called by one thread at a time (the engine
 * that owns the queue), those of different queues concurrently. Each
 * queue has its own counters, loopback ring and fault stages; a RoCE frame
 * that arrives on a queue whose engine does not own its destination QP
 * (droce_qpn_engine()) is handed to the owner's queue through that
 * queue's redirect ring, a multi-producer ring its RX drains first. The
 * control functions (attach, detach, GID queries, capture) may be called
 * from any thread.
 */
#ifndef DROCE_PORT_H
#define DROCE_PORT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_spinlock.h>

#include "droce_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most GIDs a port holds. */
#define DROCE_GID_TABLE_LEN 16

/** Longest delay a fault stage applies, in microseconds (one second). */
#define DROCE_FAULT_DELAY_US_MAX 1000000u

/**
 * Faults a port injects into one direction of its traffic (see
 * docs/reliability.md). All zero: none. The same seed gives the same
 * faults for the same frames.
 */
struct droce_fault_conf {
	double drop;       /**< probability a frame is freed */
	double duplicate;  /**< ... a copy follows it */
	double reorder;    /**< ... it is held back and goes out after the next frame */
	double corrupt;    /**< ... one bit after the Ethernet header is flipped */
	double delay;      /**< ... it is held for @ref delay_us */
	unsigned delay_us; /**< how long delayed frames wait (1..DROCE_FAULT_DELAY_US_MAX) */
	/** Not a fault but a driver's habit: every frame longer than this
	 *  many bytes goes on as a chain of segments this long, as a NIC
	 *  with scattered RX or a PMD with small buffers delivers it
	 *  (DROCE_FAULT_SEGMENT_MIN.. bytes; 0: frames stay as they are). */
	uint16_t segment;
	uint64_t seed;     /**< PRNG seed: the same seed gives the same actions */
};

/** The shortest segment=: room for the longest RoCEv2 headers, which
 *  every driver keeps in a frame's first segment. */
#define DROCE_FAULT_SEGMENT_MIN 128

/** What a fault stage did. Every field only grows. */
struct droce_fault_stats {
	uint64_t dropped;     /**< frames freed */
	uint64_t duplicated;  /**< copies made (one per duplicated frame) */
	uint64_t reordered;   /**< frames held back behind their successor */
	uint64_t corrupted;   /**< frames with one bit flipped */
	uint64_t delayed;     /**< frames held for delay_us */
	uint64_t segmented;   /**< frames cut into a chain of segments */
};

/** @return true when @p c does something. */
static inline bool
droce_fault_conf_active(const struct droce_fault_conf *c)
{
	return c->drop > 0 || c->duplicate > 0 || c->reorder > 0 ||
	       c->corrupt > 0 || c->delay > 0 || c->segment != 0;
}

/**
 * @return 0 when @p c is usable: every probability in [0, 1] (NaN is not),
 * delay_us at most DROCE_FAULT_DELAY_US_MAX and not 0 when delay > 0,
 * segment 0 or at least DROCE_FAULT_SEGMENT_MIN;
 * otherwise -EINVAL.
 */
static inline int
droce_fault_conf_check(const struct droce_fault_conf *c)
{
	const double p[] = { c->drop, c->duplicate, c->reorder, c->corrupt, c->delay };
	unsigned i;

	for (i = 0; i < RTE_DIM(p); i++)
		if (!(p[i] >= 0 && p[i] <= 1))
			return -EINVAL;
	if (c->delay_us > DROCE_FAULT_DELAY_US_MAX || (c->delay > 0 && c->delay_us == 0) ||
	    (c->segment != 0 && c->segment < DROCE_FAULT_SEGMENT_MIN))
		return -EINVAL;
	return 0;
}

/**
 * A bottleneck on the port's receive path (docs/congestion.md): a queue
 * that drains at @ref rate_mbps, marks ECN-capable frames CE once more
 * than @ref mark_bytes wait, and drops what does not fit in
 * @ref queue_bytes, as a congested switch port does. rate_mbps 0: none.
 */
struct droce_bottleneck_conf {
	uint32_t rate_mbps;   /**< how fast the queue drains (whole frames) */
	uint32_t queue_bytes; /**< the buffer: a frame that does not fit is dropped */
	uint32_t mark_bytes;  /**< ECN-capable frames that find more queued leave marked CE */
};

/** @return 0 when @p c is usable (rate 0, or a queue of at most 1 GiB
 *  with mark at most queue), else -EINVAL. */
int droce_bottleneck_conf_check(const struct droce_bottleneck_conf *c);

/** What a port's bottleneck did. Every field only grows, but max_queue_bytes. */
struct droce_bottleneck_stats {
	uint64_t frames;          /**< frames that went through */
	uint64_t marked;          /**< of those, marked CE here */
	uint64_t not_ect;         /**< frames above the threshold that could not be marked */
	uint64_t dropped;         /**< frames dropped: the queue was full */
	uint64_t max_queue_bytes; /**< the longest the queue got */
};

/** DCQCN's reaction point parameters (keys dcqcn_*, docs/congestion.md).
 *  Rates in megabits per second, as NICs give them. */
struct droce_dcqcn_conf {
	/** Where a QP starts, and its ceiling; 0: the port's link speed. */
	uint32_t line_rate_mbps;
	uint32_t min_rate_mbps;   /**< the floor a cut never goes below */
	uint32_t rai_mbps;        /**< additive increase R_AI */
	uint32_t rhai_mbps;       /**< hyper-additive increase R_HAI */
	uint8_t g_shift;          /**< g = 1 / 2^g_shift (8: 1/256) */
	uint32_t rate_timer_us;   /**< one timer stage of increase */
	uint32_t alpha_timer_us;  /**< alpha decays once per such period without a CNP */
	uint32_t byte_counter;    /**< bytes per byte-counter stage */
	uint8_t fast_recovery;    /**< F: stages of fast recovery */
	uint32_t burst;           /**< the pacer's bucket, bytes */
};

/** The DCQCN defaults (as ConnectX NICs and the DCQCN paper use them). */
void droce_dcqcn_conf_default(struct droce_dcqcn_conf *c);

/** @return 0 when @p c is usable, -EINVAL otherwise (a zero timer or
 *  rate, min above line rate, g_shift outside 1..16, ...). */
int droce_dcqcn_conf_check(const struct droce_dcqcn_conf *c);

/** ECN codepoints (RFC 3168) for droce_cc_conf.ecn. */
#define DROCE_ECN_NOT_ECT 0
#define DROCE_ECN_ECT1    1
#define DROCE_ECN_ECT0    2

/** Congestion control of the port's QPs (docs/congestion.md). */
struct droce_cc_conf {
	/** The ECN codepoint of every frame but CNPs: DROCE_ECN_ECT0 (the
	 *  default), DROCE_ECN_ECT1, or DROCE_ECN_NOT_ECT (no marking, so no
	 *  CNPs and no DCQCN either). */
	uint8_t ecn;
	/** Notification point: at most one CNP per QP per this many
	 *  microseconds for packets that arrive marked CE; 0: no CNPs. */
	uint32_t cnp_interval_us;
	/** Reaction point: QPs slow down on CNPs (DCQCN) and pace themselves. */
	bool dcqcn;
	struct droce_dcqcn_conf dcqcn_conf;
};

/** The defaults: ECT(0), a CNP per QP per 50 us, DCQCN on with the
 *  parameters of droce_dcqcn_conf_default(). */
void droce_cc_conf_default(struct droce_cc_conf *c);

/** @return 0 when @p c is usable, -EINVAL otherwise. */
int droce_cc_conf_check(const struct droce_cc_conf *c);

/** Most IPv6 addresses a port holds besides its link-local one. */
#define DROCE_NET_MAX_IPV6 4
/** Most static routes of a port, default gateways included. */
#define DROCE_NET_MAX_ROUTES 8

/**
 * An address and a prefix length in IPv6 form: an IPv4 address or
 * network is IPv4-mapped (::ffff:a.b.c.d) with 96 added to its length.
 */
struct droce_prefix {
	uint8_t addr[16];
	uint8_t len;                 /**< 0..128 */
};

/** A static route: packets to @ref dst go through the neighbour @ref via. */
struct droce_route_conf {
	struct droce_prefix dst;     /**< a default gateway is ::/0 or ::ffff:0:0/96 */
	uint8_t via[16];             /**< on the port's link, same family as dst */
};

/** Where the 802.1p priority (PCP) of RoCE frames comes from. */
enum droce_pcp_mode {
	DROCE_PCP_SL = 0,            /**< the AH's service level (sl & 7) */
	DROCE_PCP_FIXED,             /**< droce_net_conf.pcp */
	DROCE_PCP_DSCP,              /**< DSCP >> 3, the usual DSCP-to-priority map */
};

/** IPv6, VLAN, priority and routes of a port (all zero: none of them). */
struct droce_net_conf {
	struct droce_prefix ipv6[DROCE_NET_MAX_IPV6]; /**< global addresses */
	unsigned nb_ipv6;
	struct droce_route_conf routes[DROCE_NET_MAX_ROUTES];
	unsigned nb_routes;
	uint16_t vlan;               /**< VLAN ID 1..4094 of every frame; 0: untagged */
	enum droce_pcp_mode pcp_mode;
	uint8_t pcp;                 /**< with DROCE_PCP_FIXED */
	bool dscp_fixed;             /**< DSCP is @ref dscp, not the traffic class's */
	uint8_t dscp;                /**< 0..63 */
};

/** Most engines of one port (DROCE_PORT_QUEUES_MAX of drivers/). */
#define DROCE_PORT_ENGINES_MAX 16

/** How a device chooses the owner engine of a new QP (key `placement`). */
enum droce_qp_placement {
	DROCE_PLACE_ROUND_ROBIN = 0, /**< the next engine in turn */
	DROCE_PLACE_LEAST_LOADED,    /**< the engine with the fewest live QPs */
};

/**
 * Private bytes a frame's mbuf needs for droce to take it as it is (the
 * parse result, droce_pkt_of()): in shared mode, frames of the
 * application's pools with less are copied into droce's pool.
 */
#define DROCE_MBUF_PRIV_SIZE RTE_ALIGN(sizeof(struct droce_pkt), RTE_MBUF_PRIV_ALIGN)

/** What a port is attached with. */
struct droce_port_conf {
	/** An ethdev already probed, not started; with @ref shared, one the
	 *  application configured and started. */
	uint16_t port_id;
	bool mac_set;                /**< use @ref mac instead of the ethdev's */
	struct rte_ether_addr mac;
	uint32_t ipv4;               /**< host byte order; 0: none */
	uint8_t ipv4_prefix;         /**< prefix length (e.g. 24) */
	/** IB path MTU limit: 256, 512, 1024, 2048 or 4096. The port offers
	 *  less when its driver's mbufs cannot hold such frames (AF_XDP:
	 *  2048 at most); see droce_port_mtu(). */
	uint16_t mtu;
	uint16_t nb_rxd, nb_txd;     /**< descriptors per queue; 0: defaults */
	/** Engines, one RX/TX queue pair each (queues 0..nb_queues-1): a
	 *  power of two, 1..DROCE_PORT_QUEUES_MAX; 0: 1. */
	uint16_t nb_queues;
	/**
	 * Share the ethdev with the application (droce.h, "Sharing a port"):
	 * the application configured and started it and set up, among its
	 * own, the RX and TX queues @ref queues for droce's engines. droce
	 * never configures, starts, stops or closes the ethdev, nor changes
	 * its MAC, MTU or RX modes; it only adds the flow rules its driver
	 * can make to steer RoCEv2 to its queues, and removes them at detach.
	 */
	bool shared;
	/** With @ref shared: the ethdev's queue id of engine i (RX and TX),
	 *  i < nb_queues, all different. Without: ignored (queues 0..n-1). */
	uint16_t queues[DROCE_PORT_ENGINES_MAX];
	/** Which engine owns a new QP (droce_set_qp_engine() overrides it). */
	enum droce_qp_placement placement;
	uint32_t nb_mbufs;           /**< mbuf pool size; 0: default */
	const char *capture;         /**< pcapng file to capture into; NULL: none */
	/** Report the port active whatever the ethdev's link says: for links
	 *  whose peer attaches later (a memif server), so programs that check
	 *  the port at start (perftest) can wait for their peer. */
	bool link_up;
	/** With @ref link_up: how long, in milliseconds, the port counts as
	 *  active without a link (from attach, and whenever the link goes
	 *  down) before it reports down; 0: forever. */
	uint32_t link_wait_ms;
	/** Faults to inject into received frames (from the ethdev) and sent
	 *  ones (droce_port_tx()); all zero: none. */
	struct droce_fault_conf fault_rx, fault_tx;
	/** A congested switch port on the receive path; rate 0: none. */
	struct droce_bottleneck_conf bottleneck;
	/** ECN, CNPs and DCQCN. A zeroed conf has ECN off; attach users
	 *  start from droce_cc_conf_default(). */
	struct droce_cc_conf cc;

	/** IPv6 addresses, VLAN, priority and routes. */
	struct droce_net_conf net;
};

/** Counters of one port queue, or of the port (the sum of its queues).
 *  Every field only grows. */
struct droce_port_stats {
	uint64_t rx_frames;          /**< every frame received from the ethdev */
	uint64_t rx_roce;            /**< RoCEv2 frames handed to the engine */
	uint64_t rx_arp;             /**< ARP frames handled */
	uint64_t rx_loopback;        /**< frames received through local loopback */
	uint64_t rx_not_roce;        /**< other traffic, dropped */
	uint64_t rx_malformed;       /**< truncated or inconsistent headers, dropped */
	uint64_t rx_bad_opcode;      /**< unknown BTH opcode, dropped */
	uint64_t rx_bad_icrc;        /**< ICRC mismatch, dropped */
	uint64_t rx_not_ours;        /**< to a MAC, or RoCEv2 to a GID, not ours; dropped */
	uint64_t rx_redirected_out;  /**< RoCEv2 frames this queue received for another engine's QP, handed over */
	uint64_t rx_redirected_in;   /**< RoCEv2 frames another queue received for this engine's QPs */
	uint64_t rx_redirect_drops;  /**< frames for another engine dropped: its redirect ring was full */
	uint64_t rx_predicted;       /**< frames whose headers were the last kept frame's but for lengths, opcode and PSN: its parse taken (header prediction), not parsed again */
	uint64_t tx_frames;          /**< frames handed to the ethdev or looped back */
	uint64_t tx_arp;             /**< ARP requests and replies sent */
	uint64_t tx_busy;            /**< frames not taken for now: full ethdev or TX fault stage (kept by the caller) */
	/* Shared mode (droce_port_app_rx()): written by the application's
	 * threads, so kept per port; a queue's snapshot has them 0. */
	uint64_t rx_app_taken;       /**< frames the application handed over that droce kept */
	uint64_t rx_app_returned;    /**< frames handed back to the application: not droce's */
	uint64_t rx_app_copied;      /**< frames copied into droce's pool: their mbufs lacked DROCE_MBUF_PRIV_SIZE private bytes */
	uint64_t rx_app_drops;       /**< droce's frames lost on the way in: no mbuf for the copy, or the engine's app ring full */
	struct droce_fault_stats rx_fault; /**< what the RX fault stage did */
	struct droce_fault_stats tx_fault; /**< what the TX fault stage did */
	struct droce_bottleneck_stats rx_bottleneck; /**< what the RX bottleneck did */
};

/**
 * Cycles (TSC) spent inside the ethdev's burst calls, rte_eth_rx_burst()
 * and rte_eth_tx_burst(), since the port was attached: the time that is
 * the port's and not droce's. Running totals written by the engine thread
 * in droce_port_rx()/droce_port_tx() and read by the same thread around
 * each engine iteration (no atomics); the engine counters carry them to
 * other threads. One per queue. Only the calls made while @ref timed is
 * set are counted (the engine times a sample of its iterations), and an
 * RX burst that brought nothing is not.
 */
struct droce_port_cycles {
	/** Time the burst calls (set by the engine for the iterations it times). */
	bool timed;
	uint64_t rx;                 /**< inside rte_eth_rx_burst() */
	uint64_t tx;                 /**< inside rte_eth_tx_burst() */
	/** The TSC when the last timed rte_eth_tx_burst() returned: an
	 *  engine whose iteration ends with it needs no TSC read of its own. */
	uint64_t tx_end;
};

struct droce_port;

/**
 * Attach a droce port to an ethdev: configure conf->nb_queues RX and TX queues,
 * create the mbuf pool (with room for a struct droce_pkt in each mbuf's
 * private area, and for every frame of the port's IB MTU in one mbuf:
 * the mbufs are as large as the port driver allows, and the IB MTU is
 * lowered to what they hold), set the MAC, build the GID table, start
 * the ethdev.
 * @return 0 and *@p out set, or a negative errno.
 */
int droce_port_attach(const struct droce_port_conf *conf, struct droce_port **out);

/** Stop the ethdev (not a shared one: only droce's flow rules go),
 *  stop a running capture, free the port. */
void droce_port_detach(struct droce_port *p);

/**
 * rte_eth_dev_stop() the ethdev @p port_id the way droce stops its own: a
 * memif ethdev on the EAL's interrupt thread, where DPDK 22.11's memif
 * handles its peer's messages. Its stop and that handler both tear the
 * control channel down, and a stop while the peer disconnects (two
 * processes that end together) freed the same memory twice. Any thread
 * but that one's callbacks; waits until the stop ran.
 */
void droce_port_ethdev_stop(uint16_t port_id);

/**
 * The lock to hold around every rte_eth_rx_burst() and rte_eth_tx_burst()
 * on ethdev @p port_id, as droce's own bursts do; NULL when none is
 * needed. A DPDK 22.11 memif ethdev needs one: when its peer leaves,
 * memif's handler on the EAL's interrupt thread unmaps the rings a burst
 * may still be reading, unless the burst holds memif's control-channel
 * lock, which this returns. For an application that sends and receives
 * on an ethdev it shares with droce, and for raw-L2 benchmarks.
 * NULL too (with a warning) when that lock cannot be found safely.
 */
rte_spinlock_t *droce_port_ethdev_burst_lock(uint16_t port_id);

/** rte_eth_rx_burst() holding @p lock (from droce_port_ethdev_burst_lock();
 *  NULL: none). */
static inline uint16_t
droce_port_ethdev_rx_burst(rte_spinlock_t *lock, uint16_t port_id, uint16_t queue_id,
			   struct rte_mbuf **pkts, uint16_t n)
{
	if (lock != NULL)
		rte_spinlock_lock(lock);
	n = rte_eth_rx_burst(port_id, queue_id, pkts, n);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	return n;
}

/** rte_eth_tx_burst() holding @p lock, as droce_port_ethdev_rx_burst(). */
static inline uint16_t
droce_port_ethdev_tx_burst(rte_spinlock_t *lock, uint16_t port_id, uint16_t queue_id,
			   struct rte_mbuf **pkts, uint16_t n)
{
	if (lock != NULL)
		rte_spinlock_lock(lock);
	n = rte_eth_tx_burst(port_id, queue_id, pkts, n);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	return n;
}

/**
 * Shared mode: take from the @p n frames the application received on its
 * own queues those that are droce's, and hand back the rest. droce's
 * frames: RoCEv2 to one of the port's GIDs (or a UD multicast group it
 * joined), ARP whose target is the port's IPv4 address, IPv6 neighbour
 * solicitations and advertisements whose target is one of its IPv6 GIDs;
 * each is queued for its engine (the QP's owner; engine 0 for ARP and ND)
 * and freed by droce. Everything else (other ARP, other IP traffic,
 * frames to other MACs) stays the application's. Any thread, several at
 * once.
 * @return the number of frames handed back, moved (in order) to the
 * front of @p pkts; the caller owns those and nothing after them.
 */
uint16_t droce_port_app_rx(struct droce_port *p, struct rte_mbuf **pkts, uint16_t n);

/** The parse result stored in a received mbuf's private area. */
static inline struct droce_pkt *
droce_pkt_of(struct rte_mbuf *m)
{
	return (struct droce_pkt *)rte_mbuf_to_priv(m);
}

/**
 * Receive on queue @p q up to @p n RoCEv2 frames addressed to this port
 * whose destination QP engine @p q owns: frames other queues handed over
 * first, then frames looped back by droce_port_tx(), then the ethdev's
 * (RoCE frames for other engines' QPs go to their owner's redirect
 * ring). Each returned mbuf has been
 * parsed, droce_pkt_of(m) holds the result, but its ICRC is not checked
 * yet: pass each to droce_port_rx_verify() before reading its payload.
 * ARP and everything else are consumed and counted here. @p now: the TSC
 * just before the call, where the port's share of it (the ethdev's burst)
 * is counted from: the caller has read it anyway, and a TSC read costs
 * some 20-40 cycles, more than the rest of an idle call.
 * @return the number of frames in @p pkts.
 */
uint16_t droce_port_rx(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n,
		       uint64_t now);

/**
 * Check the ICRC of a frame droce_port_rx() returned, right before it is
 * handled (so the frame is in cache for the payload copy that follows);
 * a good frame counts in rx_roce and teaches the neighbour table its
 * sender, a bad one counts in rx_bad_icrc. Nothing of a frame may reach
 * application memory before this said yes. @p q: the queue that
 * returned it; @p now: the TSC. @p side: NULL, or a copy to make on the
 * way (droce_icrc_check_pkt()): the payload of the frame before, which
 * this check passed; it is made whatever this frame holds.
 * @return true when the frame is good; either way it stays the caller's.
 */
bool droce_port_rx_verify(struct droce_port *p, uint16_t q, struct rte_mbuf *m, uint64_t now,
			  struct droce_side_copy *side);

/**
 * droce_port_rx_verify() of the short frames of @p pkts (n <= 64, as
 * droce_port_rx() returned them) that come four in a row with one ICRC
 * length and IP version (a burst of small messages), four at a time
 * (droce_crc32_masked4()), counted as droce_port_rx_verify() counts. The
 * others are left for droce_port_rx_verify(); a frame checked here must
 * not be checked again. Checks none where the CPU lacks what makes this
 * pay (droce_crc32_masked4_wide()).
 * @return the frames checked here (bit i: pkts[i]); @p good: those of
 *         them whose ICRC is right.
 */
uint64_t droce_port_rx_verify4(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts,
			       uint16_t n, uint64_t now, uint64_t *good);

/**
 * Send up to @p n complete frames (headers, payload, ICRC) on queue @p q.
 * Frames whose destination is this port's own address are looped back to
 * the RX of queue @p q (which hands them to their owner).
 * @return how many frames were taken; the caller still owns the rest and
 * sends them again later (nothing is dropped on a full ring). With TX
 * faults on, taken frames pass the fault stage first: the frames it holds
 * back or duplicates wait in the stage and go out on later calls of this
 * function or droce_port_tick(); only its deliberate drops are lost.
 */
uint16_t droce_port_tx(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts, uint16_t n);

/**
 * droce_port_tx() of frames the caller knows none of is for this port
 * itself (droce_port_frame_local() said so of their headers, once per
 * header template): they go to the ethdev without a look at each.
 */
uint16_t droce_port_tx_remote(struct droce_port *p, uint16_t q, struct rte_mbuf **pkts,
			      uint16_t n);

/**
 * Whether a frame whose first @p len bytes are at @p frame goes to this
 * port itself (its MAC, or as unicast to one of its IP addresses), and so
 * droce_port_tx() loops it back instead of sending it.
 */
bool droce_port_frame_local(const struct droce_port *p, const void *frame, uint32_t len);

/** The pool the transport allocates frames from. */
struct rte_mempool *droce_port_mempool(const struct droce_port *p);

/** The congestion control the port was attached with. */
const struct droce_cc_conf *droce_port_cc_conf(const struct droce_port *p);

/** The ethdev's link speed in Mb/s now; 0 when it does not say. */
uint32_t droce_port_link_mbps(const struct droce_port *p);

/** Queue @p q's burst cycle totals (for the engine thread that owns it). */
struct droce_port_cycles *droce_port_cycles(struct droce_port *p, uint16_t q);

/** The number of queues (engines) of the port. */
uint16_t droce_port_nb_queues(const struct droce_port *p);

/** The ethdev behind the port. */
uint16_t droce_port_ethdev(const struct droce_port *p);

/** The port's MAC address. */
void droce_port_mac(const struct droce_port *p, struct rte_ether_addr *mac);

/** The port's IPv4 address (host order, 0 if none). */
uint32_t droce_port_ipv4(const struct droce_port *p);

/** True when the port counts as active: its ethdev runs and its link is
 *  up, or the port was attached with link_up and has been without a link
 *  for less than link_wait_ms. An ethdev that cannot start at attach (a
 *  memif client before its server) leaves the port attached with its link
 *  down; droce_port_tick() starts it as soon as it can. */
bool droce_port_link_up(const struct droce_port *p);

/** Called from the engine when the port becomes active (@p up) or not. */
typedef void (*droce_port_link_cb_t)(void *arg, bool up);

/**
 * Have @p cb told, from droce_port_tick() (within 100 ms), when
 * droce_port_link_up() changes. One callback per port; NULL removes it.
 */
void droce_port_on_link(struct droce_port *p, droce_port_link_cb_t cb, void *arg);

struct droce_drv_caps;

/**
 * The port driver that brought the port up (drivers/: "mlx5", "ice",
 * "i40e", "af_xdp", "memif", "af_packet", "generic") and, in @p caps,
 * what it has the NIC do.
 */
const char *droce_port_driver(const struct droce_port *p, struct droce_drv_caps *caps);

/** The IB MTU the port offers (256..4096): the configured one, or less
 *  where the port driver's mbufs (memif, af_packet: its buffers) cannot
 *  hold such frames. */
uint16_t droce_port_mtu(const struct droce_port *p);

/**
 * The IB MTU a port on ethdev @p port_id would offer when @p ib_mtu is
 * asked for (droce_port_mtu() after droce_port_attach()), without
 * attaching it: for an application that sends RoCE-sized frames of its
 * own on such a link and must keep them to what the port carries whole
 * (droce-perf's raw-L2 baselines over memif's buffers).
 *
 * @return the MTU (256..4096, at most @p ib_mtu), -EINVAL for an
 * @p ib_mtu that is not a power of two in 256..4096, -ENOSPC where no MTU
 * fits, or what rte_eth_dev_info_get() returned.
 */
int droce_port_mtu_offered(uint16_t port_id, uint16_t ib_mtu);

/**
 * Number of valid GIDs. The table follows rxe's order, so the familiar
 * `-g 1` selects IPv4: index 0 is the IPv6 link-local GID made from the
 * MAC (fe80::/64 with EUI-64), index 1 the IPv4-mapped GID ::ffff:a.b.c.d
 * when the port has an IPv4 address. All are RoCE v2 GIDs.
 */
int droce_port_gid_count(const struct droce_port *p);

/** Copy GID @p index into @p gid. @return 0, or -EINVAL for an empty index. */
int droce_port_gid(const struct droce_port *p, int index, uint8_t gid[16]);

/**
 * The VLAN ID every GID of the port is on (its frames carry the tag), 0
 * when untagged: what the kernel reports through a GID's netdev (a VLAN
 * interface), which a droce GID has none of (ndev_ifindex 0). Any thread.
 */
uint16_t droce_port_gid_vlan(const struct droce_port *p);

/** @return the index of @p gid in the table, or -1 if the port does not own it. */
int droce_port_gid_find(const struct droce_port *p, const uint8_t gid[16]);

/** The destination QPN of UD multicast (IBA 10.5.2.1). */
#define DROCE_QPN_MCAST 0xffffffu

/** Most multicast groups a port joins, and QPs attached to one group. */
#define DROCE_MCAST_MAX 32
#define DROCE_MCAST_QPS 32

/** Is @p gid a multicast GID (ff00::/8, or ::ffff:224.0.0.0/4)? */
bool droce_gid_is_mcast(const uint8_t gid[16]);

/** The MAC frames to multicast GID @p gid go to. @return false if it is not one. */
bool droce_gid_mcast_mac(const uint8_t gid[16], struct rte_ether_addr *mac);

/**
 * Attach QP @p qpn to multicast group @p gid: the port accepts its frames
 * from now on. Attaching twice is no error. Any thread but the engine's.
 * @return 0, -EINVAL (not a multicast GID) or -ENOMEM (too many groups or QPs).
 */
int droce_port_mcast_attach(struct droce_port *p, const uint8_t gid[16], uint32_t qpn);

/** Detach QP @p qpn from @p gid. @return 0, or -EINVAL when it was not attached. */
int droce_port_mcast_detach(struct droce_port *p, const uint8_t gid[16], uint32_t qpn);

/** Detach QP @p qpn from every group (it is being destroyed). */
void droce_port_mcast_detach_all(struct droce_port *p, uint32_t qpn);

/** Engine: copy the QPs attached to @p gid into @p qpn. @return how many. */
unsigned droce_port_mcast_qpns(struct droce_port *p, const uint8_t gid[16],
			       uint32_t qpn[DROCE_MCAST_QPS]);

/**
 * Fill the L2/L3 source fields of @p a (MAC, source GID @p sgid_index) and
 * the destination MAC for destination GID @p dgid.
 * @return 0 when the destination MAC is known; -EAGAIN when it is not yet
 * (an ARP request was sent, rate-limited: call again later); -EINVAL for a
 * bad GID index; -EHOSTUNREACH when @p dgid is not reachable on this port.
 * A destination off the link goes to the next hop of the port's longest
 * matching route (its MAC in @p a, @p dgid stays the IP destination).
 * The engine of queue @p q only (its ARP requests and neighbour
 * solicitations go out on that queue).
 */
int droce_port_route(struct droce_port *p, uint16_t q, int sgid_index, const uint8_t dgid[16],
		     struct droce_l3_addr *a);

/**
 * Whether the port could send to destination GID @p dgid from its GID
 * @p sgid_index: one of its own GIDs, a multicast group, a host on its
 * link or behind one of its routes, of the source's family. Nothing is
 * resolved (no ARP, no neighbour solicitation): what rdma_resolve_addr()
 * asks before it reports an address resolved, as the kernel's route
 * lookup does. Any thread.
 * @return 0; -EINVAL for a bad GID index; -EHOSTUNREACH.
 */
int droce_port_reachable(const struct droce_port *p, int sgid_index, const uint8_t dgid[16]);

/**
 * droce_port_reachable(), and the neighbour that droce_port_route() would
 * send to (@p dgid on the link, or the route's next hop) resolved: what
 * rdma_resolve_addr() waits for, as the kernel's address resolution does.
 * When its MAC is not known yet, queue 0's engine is asked to send an ARP
 * request or neighbour solicitation (at most one per 100 ms): call again
 * until it answers. Any thread.
 * @return 0; -EAGAIN while the neighbour is not known; -EINVAL for a bad
 * GID index; -EHOSTUNREACH.
 */
int droce_port_resolve(struct droce_port *p, int sgid_index, const uint8_t dgid[16]);

/**
 * Set the traffic class (DSCP and ECN) and, on a port with a VLAN, the
 * priority (PCP) of @p a routed by droce_port_route(), from the AH's
 * service level @p sl and traffic class @p tclass and the port's
 * settings (see docs/config.md: pcp, dscp, ecn). Any thread.
 */
void droce_port_qos(const struct droce_port *p, uint8_t sl, uint8_t tclass,
		    struct droce_l3_addr *a);

/**
 * The engine of queue @p q only: housekeeping that is due (sending frames
 * the queue's TX fault stage held back once their time comes; on queue 0
 * also ARP and ND retries and expiry, the first ND announcement and the
 * link watch). Cheap when nothing is due. @p now: the TSC of the caller's
 * iteration.
 */
void droce_port_tick(struct droce_port *p, uint16_t q, uint64_t now);

/** Snapshot of the port's counters: the sum of its queues'. Any thread. */
void droce_port_stats_get(const struct droce_port *p, struct droce_port_stats *s);

/**
 * Snapshot of queue @p q's counters. Any thread.
 * @return 0, or -EINVAL when the port has no queue @p q.
 */
int droce_port_queue_stats_get(const struct droce_port *p, uint16_t q,
			       struct droce_port_stats *s);

/**
 * Counter @p i of @p s by name, for dumps and telemetry: counters are
 * numbered from 0 in the order of struct droce_port_stats.
 * @return the counter's name (e.g. "rx_bad_icrc", "tx_fault_dropped") with
 * its value in *@p value, or NULL when @p i is past the last counter.
 */
const char *droce_port_stats_at(const struct droce_port_stats *s, unsigned i,
				uint64_t *value);

/**
 * Change the faults injected into received (@p rx) or sent frames, on
 * every queue. Any thread; each engine applies the change on its next RX
 * or TX and reseeds its queue's stage's PRNG from @p c->seed (plus the
 * queue number, so queues do not fault in lockstep). Frames already held back keep their
 * fate. @p c NULL or all zero: no faults.
 * @return 0, or -EINVAL when droce_fault_conf_check() rejects @p c.
 */
int droce_port_fault_set(struct droce_port *p, bool rx, const struct droce_fault_conf *c);

/** The faults last set for received (@p rx) or sent frames. Any thread. */
void droce_port_fault_get(const struct droce_port *p, bool rx, struct droce_fault_conf *c);

/**
 * Start writing every frame the port receives and sends (both
 * directions, loopback included) to a pcapng file that Wireshark opens.
 * Any thread. @return 0 or a negative errno (-EBUSY if one is running).
 */
int droce_port_capture_start(struct droce_port *p, const char *path);

/**
 * Stop the capture and close its file. Any thread: waits for the RX or TX
 * call the engine may be in to finish with the file; an engine that is not
 * running holds nothing, so this never waits for it. No-op when no capture
 * runs.
 */
void droce_port_capture_stop(struct droce_port *p);

/** Print the port's addresses, GIDs, neighbours and counters. */
void droce_port_dump(const struct droce_port *p, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_PORT_H */
