/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The inside of a droce port, shared by the files of lib/port.
 *
 * Threads: the engine of each queue calls RX, TX, route and tick for its
 * queue, one call at a time; those write the queue's counters, loopback
 * ring and fault stages without locks. Engines share the neighbour table
 * (lock-free lookups, a lock for changes: see droce_neigh.c) and put
 * frames into each other's redirect rings (multi-producer). Other threads
 * read the counters (relaxed atomic loads of single-writer values), the
 * immutable addresses and GIDs, start or stop the capture (see
 * droce_capture.c) and publish fault configurations (see droce_fault.h).
 */
#ifndef DROCE_PORT_PRIV_H
#define DROCE_PORT_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_log.h>
#include <rte_pcapng.h>
#include <rte_ring.h>
#include <rte_rwlock.h>
#include <rte_seqlock.h>
#include <rte_spinlock.h>

#include "droce_driver.h"
#include "droce_fault.h"
#include "droce_bottleneck.h"
#include "droce_port.h"

extern int droce_port_logtype;
#define DROCE_PORT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, droce_port_logtype, "droce: " fmt "\n", ##__VA_ARGS__)

/*
 * Data room of every mbuf (after RTE_PKTMBUF_HEADROOM) unless the driver
 * limits the size of an mbuf: a 4096-MTU frame (at most 4096 + 110 bytes
 * of headers) in one segment, and the 8 KiB af_packet frames ENV.md
 * recommends (framesz=8192: its RX queue setup refuses smaller mbufs).
 */
#define DROCE_PORT_DATA_ROOM 8192
/* Headers around the IB payload on the IP layer: IPv6, UDP, BTH, the
 * largest extension headers (AtomicETH), ICRC. */
#define DROCE_PORT_L3_OVERHEAD (40 + 8 + 12 + 28 + DROCE_ICRC_LEN)
/* The Ethernet header with an 802.1Q tag, in front of those. */
#define DROCE_PORT_L2_OVERHEAD (RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)
/* Private area of every mbuf: the parse result of a received frame,
 * padded to a cache line so that every frame starts on one (the mbuf
 * and its headroom are whole lines): its headers, built or parsed, span
 * as few lines as they can, and a long payload's loads as few as its
 * headers let them. */
#define DROCE_PORT_MBUF_PRIV RTE_ALIGN(DROCE_MBUF_PRIV_SIZE, RTE_CACHE_LINE_SIZE)
/* Defaults when the configuration says 0. */
#define DROCE_PORT_NB_DESC 512
#define DROCE_PORT_NB_MBUFS 4095
/* Frames handled per step where a local array is needed. */
#define DROCE_PORT_BURST 32

/* ---- neighbour (ARP and ND) table ---- */

#define DROCE_NEIGH_MAX 256

enum droce_neigh_state {
	DROCE_NEIGH_FREE = 0,
	DROCE_NEIGH_PENDING,     /* ARP request or NS sent, no answer yet */
	DROCE_NEIGH_VALID,
};

/* One neighbour. The slot is the position rte_hash gives the key.
 * ip, state, mac and vlan_tci change under the port's neigh_lock and the
 * slot's seqlock, which lets engines read them without the lock; the two
 * times are relaxed atomics any engine may store. */
struct droce_neigh {
	rte_seqlock_t sl;
	uint8_t ip[16];          /* the key: IPv6, or IPv4-mapped */
	uint8_t state;           /* enum droce_neigh_state */
	uint16_t vlan_tci;       /* tag its ARP or ND came with (0: untagged) */
	struct rte_ether_addr mac;
	uint64_t updated;        /* TSC: learned or refreshed */
	uint64_t solicited;      /* TSC: last ARP request or NS for it */
};

/* ---- capture ---- */

struct droce_capture;

/* ---- the port ---- */

/* UD multicast groups the port's QPs joined (droce_mcast.c). */
struct droce_mcast_group {
	uint8_t gid[16];
	struct rte_ether_addr mac;
	uint16_t nb_qps;
	uint32_t qpn[DROCE_MCAST_QPS];
};

/* A membership report due for a group (droce_mcast_report.c): the
 * reports of a group just joined, sent twice, or the leave (IGMP) or done
 * (MLD) of a group just left. */
struct droce_mcast_report_due {
	uint8_t gid[16];
	bool leave;
	uint8_t left;                /* messages still to send */
	uint64_t at;                 /* TSC: the next one */
};

struct droce_mcast {
	rte_rwlock_t lock;           /* writers: verbs threads; readers: the engine */
	uint32_t nb_groups;
	bool allmulti;               /* all-multicast on, for want of a filter list */
	struct droce_mcast_group groups[DROCE_MCAST_MAX];
	/* Membership reports due, under the write lock; queue 0's engine
	 * sends them from report_next (TSC, atomic) on. */
	unsigned nb_report_due;
	uint64_t report_next;
	struct droce_mcast_report_due report_due[2 * DROCE_MCAST_MAX];
	/* When a general query of IGMP ([1]) or MLD ([0]) was last answered
	 * (TSC, atomic: any queue's engine answers). */
	uint64_t general_answered[2];
};
/* One RX/TX queue pair and what only its engine writes. */
struct droce_port_queue {
	uint16_t qid;            /* the ethdev's queue id, RX and TX */
	struct rte_ring *lo;     /* frames this queue sent to the port itself */
	/* Frames other queues received for this engine's QPs: parsed, ICRC
	 * not checked yet (multi-producer, this engine consumes). */
	struct rte_ring *redirect;
	/* Shared mode: frames the application handed over for this engine
	 * (droce_port_app_rx(); multi-producer, this engine consumes), not
	 * parsed yet. NULL on a port of droce's own. */
	struct rte_ring *app;
	struct droce_port_stats stats;
	struct droce_port_cycles cycles;
	uint32_t learn_ip;       /* last learned, to skip repeated learning */
	uint64_t learn_tsc;
	/* The last frame the port's RX kept (not a looped one), for the next
	 * burst's first frame to be predicted from (droce_pkt_predict()):
	 * its first ref_len bytes (0: none yet) and its parse. Its verdict
	 * holds as long as the port's addresses, fixed once it is attached. */
	uint32_t ref_len;
	uint8_t ref_hdr[DROCE_PKT_PREDICT_LEN];
	struct droce_pkt ref_pkt;
	/* Fault injection (configured from any thread): last, as the paths
	 * read no more of them than the busy test while no fault is set. */
	struct droce_fault fault_rx, fault_tx;
} __rte_cache_aligned;

struct droce_port {
	/* Read on every frame. */
	uint16_t port_id;
	uint16_t nb_queues;      /* a power of two */
	struct rte_ether_addr mac;
	uint32_t ipv4;           /* host order; 0: none */
	uint32_t ipv4_mask;      /* host order */
	struct rte_mempool *mp;
	struct droce_port_queue *q; /* [nb_queues] */
	/* Published by capture start/stop, read by the engines. */
	struct droce_capture *capture;
	uint32_t capture_users;  /* engine calls inside the capture */
	pthread_mutex_t capture_lock; /* start/stop among themselves */

	/* Neighbours: every engine looks up, changes take neigh_lock. */
	struct rte_hash *neigh_hash;
	rte_spinlock_t neigh_lock;
	uint64_t neigh_gc_next;  /* TSC of the next expiry scan (queue 0) */
	/* Slots deleted by the last scan: freed by the next one, a second
	 * later, when no engine can still be inside a lookup that found them. */
	int32_t neigh_dead[DROCE_NEIGH_MAX];
	unsigned nb_neigh_dead;
	struct droce_neigh neigh[DROCE_NEIGH_MAX];

	/* Fixed at attach. */
	uint64_t tsc_hz;
	uint16_t ib_mtu;
	uint16_t data_room;          /**< of each mbuf, after the headroom */
	/* Link (droce_port_link.c). */
	bool link_up;                /**< active while the peer is awaited */
	bool started;                /**< the ethdev runs: RX and TX may use it */
	bool relink;                 /**< restart the ethdev while its link stays down */
	uint32_t relink_ms;          /**< after this long down (droce_port_link.c) */
	uint64_t link_wait_tsc;      /**< how long link_up holds; 0: forever */
	uint64_t down_since;         /**< TSC since the link is down; 0: up */
	uint64_t start_next_tsc;     /**< when to try starting the ethdev again */
	uint32_t start_retry_ms;     /**< the delay before that try */
	uint64_t link_next_tsc;      /**< when to look at the link next */
	int8_t link_last;            /**< -1: not looked yet, else 0/1 */
	droce_port_link_cb_t link_cb;
	void *link_cb_arg;
	uint8_t ipv4_prefix;
	struct droce_net_conf net;   /**< IPv6, VLAN, priority, routes */
	bool nd_announced;           /**< unsolicited NAs sent (droce_nd.c) */
	int nb_gids;
	uint8_t gids[DROCE_GID_TABLE_LEN][16];
	const struct droce_driver_ops *drv;
	struct droce_port_drv_ctx drv_ctx;
	struct droce_mcast mcast;
	struct rte_eth_dev_info dev_info;
	struct droce_cc_conf cc;      /* congestion control, for the engines */
	/* The congested switch port on the RX path (one engine only); NULL: none. */
	struct droce_bottleneck *bottleneck;
	/* Shared mode (droce_port_share.c): the application owns the ethdev. */
	bool shared;
	/* Held by every RX and TX burst; NULL: none (droce_port_ethdev_burst_lock()). */
	rte_spinlock_t *burst_lock;
	/* Counters of droce_port_app_rx(), atomics: any application thread. */
	uint64_t app_taken, app_returned, app_copied, app_drops;
};

/* Counters have one writer, the engine of their queue @p pq: a relaxed
 * load, add and store is enough for readers on other threads to see
 * whole values. */
#define DROCE_STAT_ADD(pq, field, n) \
	__atomic_store_n(&(pq)->stats.field, (pq)->stats.field + (n), __ATOMIC_RELAXED)

/* droce_port_buf.c: the mbufs of a port and the IB MTU they allow. */
struct droce_port_buf {
	uint16_t data_room;      /* after RTE_PKTMBUF_HEADROOM */
	uint16_t ib_mtu;         /* at most the one asked for */
	uint32_t frame_room;     /* the longest frame the port takes */
};
/* @p frame_max: the longest frame the PMD carries whole (0: no limit). */
int droce_port_buf_plan(const struct droce_driver_ops *drv, uint32_t frame_max, uint16_t ib_mtu,
			struct droce_port_buf *b);
/* The same for the ethdev @p info describes: its frame_max from @p drv. */
int droce_port_buf_plan_dev(const struct droce_driver_ops *drv, const struct rte_eth_dev_info *info,
			    uint16_t ib_mtu, struct droce_port_buf *b);

/* droce_port_memif.c: DPDK 22.11's memif ethdev. */
bool droce_port_is_memif(uint16_t port_id, struct rte_eth_dev_info *info);
bool droce_port_memif_is_client(uint16_t port_id);
/* droce_port_link.c: start the ethdev (the port comes up with its link
 * down when it cannot start yet); engine thread: retry and watch. */
int droce_port_link_start(struct droce_port *p, const struct droce_port_conf *conf);
void droce_port_link_watch(struct droce_port *p, uint64_t now);
bool droce_port_started(const struct droce_port *p);

/* droce_port_share.c: shared mode. Check the application's setup at
 * attach, make the app rings; on RX, replace the frames of pools without
 * room for droce's parse result by copies in droce's pool (@return those
 * left: a frame that cannot be copied is dropped and counted). */
int droce_port_share_setup(struct droce_port *p);
uint16_t droce_port_adopt(struct droce_port *p, struct rte_mbuf **pkts, uint16_t n);

/* droce_port_rx.c: what the Ethernet header of @p m says. With
 * DROCE_L2_OURS (any MAC without @p check_mac), the type of what follows the header (and the 802.1Q
 * tag), its offset and the tag's TCI (0: none). */
enum droce_l2 {
	DROCE_L2_OURS = 0,
	DROCE_L2_MALFORMED,      /* too short for its headers */
	DROCE_L2_NOT_OURS,       /* to a MAC the port does not take */
};
enum droce_l2 droce_port_l2(struct droce_port *p, struct rte_mbuf *m, bool check_mac,
			    rte_be16_t *type, uint32_t *off, uint16_t *vlan_tci);
/* A parsed RoCEv2 frame to one of the port's GIDs, or to a multicast
 * group's QPN 0xffffff. */
bool droce_port_roce_ours(const struct droce_port *p, const struct droce_pkt *pkt);

/* droce_gid.c */
void droce_gid_table_build(struct droce_port *p);
bool droce_gid_is_v4mapped(const uint8_t gid[16]);
void droce_gid_from_ipv4(uint32_t ip, uint8_t gid[16]);
void droce_gid_format(const uint8_t gid[16], char *buf, size_t len);

/* droce_mcast.c: does the port take this multicast frame from the link;
 * local copies of the frames it sends to groups it joined itself, as IP
 * multicast loops back to local members: made before the ethdev takes the
 * frames (copies[i] NULL for others; @return whether any was made), then
 * looped back for the frames it took. */
bool droce_port_mcast_accept(struct droce_port *p, const struct rte_ether_hdr *eh);
/* The multicast MACs the port takes from the link (IPv6 ND's, then the
 * groups'), at most DROCE_PORT_MCAST_MACS; and the ethdev's filter set to
 * them (all-multicast where the PMD has no list), after a GID change. */
#define DROCE_PORT_MCAST_MACS (2 + DROCE_GID_TABLE_LEN + DROCE_MCAST_MAX)
unsigned droce_port_mcast_macs(const struct droce_port *p, struct rte_ether_addr *macs);
void droce_port_mcast_sync(struct droce_port *p);
bool droce_port_mcast_copy(struct droce_port *p, struct rte_mbuf **pkts, uint16_t n,
			   struct rte_mbuf **copies);
void droce_port_mcast_copies_done(struct droce_port_queue *pq, struct rte_mbuf **copies,
				  uint16_t n, uint16_t sent);

/* droce_neigh.c */
int droce_neigh_init(struct droce_port *p);
void droce_neigh_fini(struct droce_port *p);
bool droce_neigh_on_link(const struct droce_port *p, const uint8_t ip[16]);
bool droce_prefix_match(const struct droce_prefix *pfx, const uint8_t ip[16]);
void droce_neigh_learn(struct droce_port *p, const uint8_t ip[16],
		       const struct rte_ether_addr *mac, uint16_t vlan_tci,
		       uint64_t now);
int droce_neigh_resolve(struct droce_port *p, struct droce_port_queue *pq, const uint8_t ip[16],
			struct rte_ether_addr *mac, uint16_t *vlan_tci);
/* Any thread: 0 when @p ip's MAC is known; else -EAGAIN, the entry
 * pending and queue 0's engine asked to solicit it (its next scan). */
int droce_neigh_probe(struct droce_port *p, const uint8_t ip[16]);
void droce_neigh_gc(struct droce_port *p, struct droce_port_queue *pq, uint64_t now);
void droce_neigh_dump(const struct droce_port *p, FILE *f);

/* droce_arp.c: on the queue @p pq of the calling engine. */
void droce_arp_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		     uint32_t off, uint16_t vlan_tci);
int droce_arp_request(struct droce_port *p, struct droce_port_queue *pq, uint32_t ip);

/* droce_port_rx.c: a frame of the port's own protocols (ND, IGMP, MLD), which
 * their parser took as such (@p ok: valid), is consumed here and counted:
 * malformed, for another VLAN, or handled (rx_arp). @return whether the
 * caller acts on what it parsed. */
bool droce_port_ctl_take(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
			 bool ok, uint16_t vlan_tci);

/* droce_nd.c: IPv6 neighbour discovery, on the queue @p pq of the calling
 * engine (like ARP). droce_nd_input(), for an ICMPv6 frame, consumes @p m
 * and returns true when it is an NS or NA (handled or dropped); other
 * frames stay the caller's. */
bool droce_nd_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		    uint32_t off, uint16_t vlan_tci);
int droce_nd_solicit(struct droce_port *p, struct droce_port_queue *pq,
		     const uint8_t target[16]);
/* Whether @p dst is a multicast MAC of the port's ND: all nodes, or the
 * solicited-node group of one of its IPv6 GIDs. */
bool droce_nd_mcast_accept(const struct droce_port *p, const struct rte_ether_addr *dst);
void droce_nd_announce(struct droce_port *p, struct droce_port_queue *pq);

/* droce_mcast_report.c: membership reports for the port's groups, IGMP
 * for IPv4 ones and MLD for IPv6 ones. droce_mcast_report_joined() and
 * droce_mcast_report_left(), under the multicast table's write lock (any
 * thread), have reports or a leave sent; droce_mcast_report_tick() sends
 * them, on queue 0's engine. droce_mcast_report_answer(), on the queue
 * @p pq of the calling engine, answers a query of IGMP (@p v4) or MLD for
 * group @p asked, NULL for all (at most every 100 ms), with a report of
 * each group it has. */
void droce_mcast_report_joined(struct droce_port *p, const uint8_t gid[16]);
void droce_mcast_report_left(struct droce_port *p, const uint8_t gid[16]);
void droce_mcast_report_tick(struct droce_port *p, struct droce_port_queue *pq, uint64_t now);
/* The solicited-node groups of a port given IPv6 addresses reported, as
 * its addresses are announced (any thread). */
void droce_mcast_report_solicited(struct droce_port *p);
void droce_mcast_report_answer(struct droce_port *p, struct droce_port_queue *pq, bool v4,
			       const uint8_t *asked);

/* droce_igmp.c and droce_mld.c: a group's report (or, @p leave, its leave
 * or done) sent on the queue @p pq of the calling engine; the input
 * functions, for an IPv4 frame of protocol IGMP or an IPv6 one with a
 * Hop-by-Hop header, consume @p m and return true when it is IGMP or MLD:
 * a query answered, anything else dropped. Other frames stay the
 * caller's. */
void droce_igmp_send(struct droce_port *p, struct droce_port_queue *pq, const uint8_t gid[16],
		     bool leave);
bool droce_igmp_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		      uint32_t off, uint16_t vlan_tci);
void droce_mld_send(struct droce_port *p, struct droce_port_queue *pq, const uint8_t gid[16],
		    bool leave);
bool droce_mld_input(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
		     uint32_t off, uint16_t vlan_tci);

/* droce_net.c: the port's IPv6 addresses, VLAN, priority and routes. */
int droce_net_init(struct droce_port *p, const struct droce_net_conf *c);
uint16_t droce_net_vlan_tci(const struct droce_port *p, uint8_t pcp);
bool droce_net_vlan_ok(const struct droce_port *p, uint16_t vlan_tci);
uint16_t droce_net_reply_tci(const struct droce_port *p, uint16_t vlan_tci);
void droce_net_qos(const struct droce_port *p, uint8_t sl, uint8_t tclass,
		   struct droce_l3_addr *a);
/* The neighbour that takes packets to @p dst: @p dst itself when on the
 * link, else the next hop of the longest matching route (-EHOSTUNREACH:
 * none). */
int droce_net_next_hop(const struct droce_port *p, const uint8_t dst[16],
		       const uint8_t **hop);

/* droce_port_tx.c: droce_port_tx() on @p pq; droce_port_tx_remote() with
 * @p remote. */
uint16_t droce_port_queue_tx(struct droce_port *p, struct droce_port_queue *pq,
			     struct rte_mbuf **pkts, uint16_t n, bool remote);
/* A frame of the port's own protocols (ARP, ND, IGMP, MLD) in @p m, whose
 * writer returned @p written: sent on @p pq (to the wire only, @p remote)
 * and counted (tx_arp), else freed. @return 0, the writer's error, or
 * -ENOBUFS when the queue took nothing. */
int droce_port_ctl_send(struct droce_port *p, struct droce_port_queue *pq, struct rte_mbuf *m,
			int written, bool remote);
/* Engine of @p pq; send what the queue's TX fault stage
 * has ready, as far as the ethdev takes it. */
void droce_port_tx_fault_flush(struct droce_port *p, struct droce_port_queue *pq,
			       struct droce_capture *c, uint64_t now);

/* droce_capture.c: enter/exit bracket every engine call that may write
 * frames to the capture; nested brackets are fine. */
struct droce_capture *droce_capture_enter(struct droce_port *p);
void droce_capture_exit(struct droce_port *p, struct droce_capture *c);
void droce_capture_frames(struct droce_capture *c, uint16_t port_id,
			  struct rte_mbuf **pkts, uint16_t n,
			  enum rte_pcapng_direction dir);
/* copies[i] is NULL where no copy could be made (counted as dropped). */
void droce_capture_copy(struct droce_capture *c, uint16_t port_id,
			struct rte_mbuf **pkts, uint16_t n,
			enum rte_pcapng_direction dir, struct rte_mbuf **copies);
/* Writes and frees the non-NULL copies. */
void droce_capture_write(struct droce_capture *c, struct rte_mbuf **copies,
			 uint16_t n);

#endif /* DROCE_PORT_PRIV_H */
