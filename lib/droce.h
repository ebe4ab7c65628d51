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
 * Each device has one engine (the RoCE transport's poll loop), registered
 * as an rte_service. The application chooses where it runs: map the
 * service to a service lcore (droce_dev_run_lcore()), let droce run it on
 * a thread of its own (droce_dev_run_thread()), or call
 * droce_dev_poll() from its own loop (run-to-completion). Verbs calls
 * that wait for the engine (ibv_poll_cq(), ibv_post_send()) also run an
 * iteration when the engine is free, so a polling application makes
 * progress even without any of these.
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
 * Make a verbs device of ethdev @p conf->port_id (probed, not started:
 * droce configures and starts it).
 * @param conf the port's addresses, MTU and queue sizes.
 * @param[out] index the device's index (its name is "droce<index>").
 * @return 0, or a negative errno (-ENOSPC: too many devices).
 */
int droce_dev_attach(const struct droce_port_conf *conf, unsigned *index);

/**
 * Undo droce_dev_attach(): stop the engine and the ethdev.
 * @return 0, or -EBUSY while a context of the device is open.
 */
int droce_dev_detach(unsigned index);

/** The verbs device with @p index, or NULL. */
struct ibv_device *droce_dev_ibv(unsigned index);

/** The droce port behind device @p index (addresses, counters, capture), or NULL. */
struct droce_port *droce_dev_port(unsigned index);

/** The rte_service id of the device's engine. @return 0 or -EINVAL. */
int droce_dev_service_id(unsigned index, uint32_t *service_id);

/** Run the device's engine on service lcore @p lcore. @return 0 or a negative errno. */
int droce_dev_run_lcore(unsigned index, unsigned lcore);

/**
 * Run the device's engine on a thread droce creates; it sleeps up to
 * @p idle_sleep_us when there is nothing to do. @return 0 or a negative errno.
 */
int droce_dev_run_thread(unsigned index, unsigned idle_sleep_us);

/**
 * One iteration of the device's engine in the calling thread.
 * @return work done (0 when idle), or -EBUSY when another thread runs it.
 */
int droce_dev_poll(unsigned index);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_H */
