/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A peer that speaks raw RoCEv2 to one droce device: the test builds any
 * frame it likes (well formed or not, in one segment or chained, with a
 * right or wrong ICRC), hands it to droce's RX and reads what droce sends
 * back. The device sits on a ring ethdev whose RX ring the peer fills and
 * whose TX ring it drains; its engine runs only when the peer polls it,
 * so everything happens in the test's thread, in order.
 */
#ifndef DROCE_PEER_H
#define DROCE_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "droce_wire.h"

/** The peer's address, as the device sees it. */
#define DROCE_PEER_IPV4 0x0a630002u /* 10.99.0.2 */
/** The device's address. */
#define DROCE_PEER_DEV_IPV4 0x0a630001u /* 10.99.0.1 */

struct droce_peer {
	unsigned dev;                 /**< droce device index */
	struct ibv_context *ctx;
	union ibv_gid gid;            /**< the peer's GID (IPv4-mapped) */
	struct rte_ring *to_dev, *from_dev;
	struct rte_mempool *mp;       /**< the device port's pool: its frames parse in place */
	struct droce_l3_addr l3;      /**< peer -> device */
};

/** One frame to build. */
struct droce_peer_frame {
	uint8_t opcode;
	uint32_t dqpn, psn;
	bool ackreq, se;
	uint16_t pkey;                /**< 0: the default 0xffff */
	const void *ext;              /**< extension headers after the BTH, in wire order */
	uint32_t ext_len;
	const void *payload;
	uint32_t len;
	uint32_t seg;                 /**< bytes per segment; 0: one segment */
	bool bad_icrc;
	uint8_t tclass;               /**< IPv4 TOS: DSCP and ECN (3: CE) */
};

/**
 * Start the EAL (no hugepages) the first time, make a ring ethdev and a
 * droce device on it (path MTU @p mtu), and open it.
 * @return 0 or a negative errno.
 */
int droce_peer_open(struct droce_peer *p, uint16_t mtu);

/**
 * What most tests need on the device: a PD, a CQ of 256 entries and
 * @p len bytes (page-aligned) registered with @p access; NULLs when
 * something failed.
 */
void droce_peer_verbs(struct droce_peer *p, size_t len, int access, struct ibv_pd **pd,
		      struct ibv_cq **cq, uint8_t **buf, struct ibv_mr **mr);

/**
 * Send the device one well-formed frame from the peer's address (an ACK to
 * a QPN nobody has, dropped after its ICRC check): the device learns the
 * peer's MAC from it, so its QPs need no ARP reply (the peer sends none).
 * The engine runs, and what it sent is dropped.
 */
void droce_peer_teach(struct droce_peer *p);

/**
 * Both of the above for a test suite's fixture, the first time it is
 * called (path MTU 4096, @p len bytes with @p access); later calls only
 * return what the first made. Aborts when something fails.
 */
void droce_peer_fixture(struct droce_peer *p, size_t len, int access, struct ibv_pd **pd,
			struct ibv_cq **cq, uint8_t **buf, struct ibv_mr **mr);

/** Close the context and detach the device. */
void droce_peer_close(struct droce_peer *p);

/** Build a frame as @p f says. @return the mbuf (NULL when out of mbufs). */
struct rte_mbuf *droce_peer_build(const struct droce_peer *p, const struct droce_peer_frame *f);

/** Build a frame and queue it for the device, without running the
 * engine: several queued frames arrive in one RX burst. Aborts when out
 * of mbufs or ring room. */
void droce_peer_queue(struct droce_peer *p, const struct droce_peer_frame *f);

/** Build and deliver a frame, then run the engine until it is idle. */
void droce_peer_send(struct droce_peer *p, const struct droce_peer_frame *f);

/** Run the engine until it has nothing left to do (a bounded number of times). */
void droce_peer_run(struct droce_peer *p);

/**
 * Take the next frame the device sent (ARP included), or NULL. The
 * frame is parsed into @p pkt when it is RoCEv2 (pkt->op is NULL when not).
 */
struct rte_mbuf *droce_peer_recv(struct droce_peer *p, struct droce_pkt *pkt);

/**
 * Run the engine until it is idle, then take every completion on @p cq
 * into @p wc (at most @p max). @return how many.
 */
int droce_peer_poll_cq(struct droce_peer *p, struct ibv_cq *cq, struct ibv_wc *wc, int max);

/** Drop every frame the device sent. @return how many. */
unsigned droce_peer_drain(struct droce_peer *p);

/** A counter of the device's engine, by its name (DROCE_RX_STATS, DROCE_CC_STATS,
 *  DROCE_ZC_STATS). */
uint64_t droce_peer_stat(const struct droce_peer *p, const char *name);

#endif
