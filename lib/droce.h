/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce for DPDK applications: put RDMA verbs on a port the application
 * owns.
 *
 * A DPDK application initialises the EAL and probes its ports as usual,
 * then attaches droce to one of them. The port becomes a verbs device
 * (droce0, droce1, ... in attach order) that ibv_get_device_list() lists
 * and ibv_open_device() opens; everything after that is rdma-core's verbs
 * API from <infiniband/verbs.h>.
 *
 * Each device has one or more engines (conf->nb_queues, a power of two;
 * the `engines` key of the configuration file), each the RoCE transport's
 * poll loop on one RX/TX queue pair of the port, registered as an
 * rte_service of its own. Every QP belongs to one engine for its life,
 * the one its QPN names (QPN & (engines - 1)): the device picks it when
 * the QP is created (round robin, or what droce_set_qp_engine() asked
 * for) and gives the QP a QPN of that engine. Frames that the NIC puts on
 * another engine's queue are handed to the owner, so no two engines ever
 * touch one QP and no lock is shared between engines on the data path.
 *
 * The application chooses where engines run: map the services to
 * service lcores (droce_dev_run_lcore() for all engines on one lcore,
 * droce_dev_engine_run_lcore() per engine), let droce run each on a thread
 * of its own (droce_dev_run_thread()), or call droce_dev_poll() or
 * droce_dev_engine_poll() from its own loops (run-to-completion). Verbs
 * calls that wait for an engine (ibv_poll_cq(), ibv_post_send()) also run
 * an iteration when it is free, so a polling application makes progress
 * even without any of these. The calls without "engine" in their name
 * act on every engine of the device; with one engine they are what they
 * always were.
 *
 * Sharing a port with the application: an application that configured
 * and started a port for its own traffic attaches droce to some of its
 * queues (conf->shared, conf->queues: one RX/TX queue pair per engine,
 * set up by the application before it started the port; keep them out of
 * its RSS). droce then leaves the ethdev as it is (no configure, start,
 * stop or close, no MAC, MTU or RX mode change): its driver adds rte_flow
 * rules that steer RoCEv2 (UDP 4791) to droce's queues where the PMD
 * takes them, and removes them at detach. Frames that reach the
 * application's queues anyway (all of them without rte_flow; ARP and
 * neighbour discovery always) the application passes to
 * droce_dev_rx_burst(), which keeps droce's and hands back the rest.
 * droce sends only on its own TX queues. See docs/nics.md and
 * examples/l2fwd-rdma.
 *
 * A process that never calls droce_dev_attach() gets its devices from
 * the configuration on its first ibv_get_device_list(): see
 * docs/config.md.
 */
#ifndef DROCE_H
#define DROCE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Make a verbs device of ethdev @p conf->port_id: probed, not started
 * (droce configures and starts it), or, with @p conf->shared, configured
 * and started by the application, which set up the queues
 * @p conf->queues for droce (droce takes the ethdev as it is; its IB MTU
 * is what the ethdev's MTU carries).
 * @param conf the port's addresses, MTU, queues and QP placement.
 * @param[out] index the device's index (its name is "droce<index>").
 * @return 0, or a negative errno (-ENOSPC: too many devices).
 */
int droce_dev_attach(const struct droce_port_conf *conf, unsigned *index);

/**
 * Undo droce_dev_attach(): stop the engines and the ethdev. A shared
 * ethdev runs on (detach droce before the application stops it: droce's
 * engines use its queues until then); only droce's flow rules go, and
 * droce's mbuf pool is freed if the ethdev has given back every mbuf
 * droce sent (else it stays allocated, with a warning).
 * @return 0, or -EBUSY while a context of the device is open.
 */
int droce_dev_detach(unsigned index);

/**
 * Shared mode: offer droce the @p n frames the application received on
 * its own queues of device @p index's ethdev (call it on every burst).
 * droce keeps, and frees in time, the frames that are its own: RoCEv2
 * to one of its GIDs (or a multicast group one of its QPs joined), ARP
 * whose target address is droce's IPv4 address (requests droce answers,
 * replies to its own requests), IPv6 neighbour solicitations for its
 * IPv6 addresses and advertisements sent to them; each goes to the
 * engine that owns it, which handles it on its next iteration. Every
 * other frame (non-RoCE, ARP for other addresses, unsolicited neighbour
 * advertisements, frames to other MACs) is handed back: moved, in order,
 * to the front of @p pkts. Counted in the port's rx_app_taken,
 * rx_app_returned, rx_app_copied and rx_app_drops. Frames of pools whose
 * private area is smaller than DROCE_MBUF_PRIV_SIZE are copied into
 * droce's pool (give the pools DROCE_MBUF_PRIV_SIZE to avoid it). Any
 * thread, several at once, until droce_dev_detach() is called.
 * @return how many frames are handed back (the caller's again:
 * @p pkts[0] to @p pkts[return - 1]); @p n, with every frame left where
 * it was, when there is no such device or it is not shared.
 */
uint16_t droce_dev_rx_burst(unsigned index, struct rte_mbuf **pkts, uint16_t n);

/** The verbs device with @p index, or NULL. */
struct ibv_device *droce_dev_ibv(unsigned index);

/** The droce port behind device @p index (addresses, counters, capture), or NULL. */
struct droce_port *droce_dev_port(unsigned index);

/** The number of engines of device @p index, or -EINVAL. */
int droce_dev_engines(unsigned index);

/** The rte_service id of the device's engine 0. @return 0 or -EINVAL. */
int droce_dev_service_id(unsigned index, uint32_t *service_id);

/** The rte_service id of engine @p engine of device @p index.
 *  @return 0 or -EINVAL. */
int droce_dev_engine_service_id(unsigned index, unsigned engine, uint32_t *service_id);

/** Run every engine of the device on service lcore @p lcore.
 *  @return 0 or a negative errno. */
int droce_dev_run_lcore(unsigned index, unsigned lcore);

/** Run engine @p engine of device @p index on service lcore @p lcore.
 *  @return 0 or a negative errno. */
int droce_dev_engine_run_lcore(unsigned index, unsigned engine, unsigned lcore);

/**
 * Run each engine of the device on a thread droce creates; each sleeps up
 * to @p idle_sleep_us when there is nothing to do. @return 0 or a negative errno.
 */
int droce_dev_run_thread(unsigned index, unsigned idle_sleep_us);

/** Run engine @p engine of device @p index on a thread droce creates (see
 *  droce_dev_run_thread()). @return 0 or a negative errno. */
int droce_dev_engine_run_thread(unsigned index, unsigned engine, unsigned idle_sleep_us);

/**
 * One iteration of every engine of the device in the calling thread.
 * @return work done (0 when idle), or -EBUSY when other threads run every
 * engine.
 */
int droce_dev_poll(unsigned index);

/**
 * One iteration of engine @p engine of device @p index in the calling thread.
 * @return work done (0 when idle), -EBUSY when another thread runs it, or
 * -EINVAL.
 */
int droce_dev_engine_poll(unsigned index, unsigned engine);

/**
 * Choose the engine that owns the QPs the calling thread creates from now
 * on: engine @p engine (modulo the device's number of engines), or, with
 * -1 (the default), the one the device's placement policy gives
 * (droce_port_conf.placement, key `placement`: the next engine in round
 * robin, or the engine with the fewest live QPs). The choice is fixed
 * at ibv_create_qp() (the QPN encodes it) and does not apply to QPs that
 * use a shared receive queue (they go to the SRQ's engine, chosen the
 * same way when the SRQ is created) nor to XRC receive QPs (engine 0,
 * with every XRC SRQ), so that a receive queue has one consumer.
 */
void droce_set_qp_engine(int engine);

/** The engine that owns @p qp (a QP of a droce device), or -EINVAL. */
int droce_qp_engine(struct ibv_qp *qp);

/**
 * Work engine @p engine did for @p qp: frames of the QP it received and
 * passes over the QP's queues. Only the owner's (droce_qp_engine()) ever
 * grows: a check that no other engine touched the QP. Any thread.
 */
uint64_t droce_qp_engine_work(struct ibv_qp *qp, unsigned engine);

/** Congestion control of one QP (docs/congestion.md). */
struct droce_qp_cc {
	bool paced;              /**< a CNP came: DCQCN paces the QP */
	uint64_t rate_mbps;      /**< its current rate R_C (paced QPs; else 0) */
	uint64_t min_rate_mbps;  /**< the lowest R_C since its first CNP (paced QPs) */
	uint64_t cnps_sent;      /**< CNPs it sent for CE-marked requests it received */
	uint64_t cnps_received;  /**< CNPs that reached it */
};

/**
 * The congestion control state of @p qp (a QP of a droce device), read
 * while its engine runs: each field is one the engine wrote, not all of
 * one instant. Any thread. @return 0, or -EINVAL.
 */
int droce_qp_cc(struct ibv_qp *qp, struct droce_qp_cc *cc);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_H */
