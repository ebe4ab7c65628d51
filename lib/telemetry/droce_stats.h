/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's counters for DPDK applications: a device's port and engine
 * counters in one call, and the rte_telemetry commands that show them
 * with the per-QP counters (docs/reliability.md lists every counter):
 *
 *   /droce/ports              the device indexes
 *   /droce/port,<dev>         port and engine counters of a device (all engines)
 *   /droce/engine,<dev>,<e>   counters of engine e and its port queue
 *   /droce/qps,<dev>          the QPNs of a device (the lowest 512)
 *   /droce/qp,<dev>,<qpn>     a QP's type, state, engine, PSNs and counters
 *
 * e.g. `dpdk-telemetry.py -f <prefix>` then `/droce/port,0`.
 */
#ifndef DROCE_STATS_H
#define DROCE_STATS_H

#include "droce_engine.h"
#include "droce_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Counters of one device, or of one of its engines. Every field only grows. */
struct droce_dev_stats {
	struct droce_port_stats port;     /**< its port, or the engine's port queue (droce_port.h) */
	struct droce_engine_stats engine; /**< its engines summed, or the one (droce_engine.h) */
};

/**
 * Snapshot of device @p index's counters: the port's queues and the
 * engines summed. Any thread.
 * @return 0, -EINVAL when @p out is NULL, -ENODEV when there is no such device.
 */
int droce_dev_stats(unsigned index, struct droce_dev_stats *out);

/**
 * Snapshot of the counters of engine @p engine of device @p index and of
 * its port queue (redirected frames, cycles per message per engine). Any
 * thread.
 * @return 0, -EINVAL when @p out is NULL, -ENODEV when there is no such
 * device or engine.
 */
int droce_dev_engine_stats(unsigned index, unsigned engine, struct droce_dev_stats *out);

/**
 * Counter @p i of @p s by name, for dumps: counters are numbered from 0 in
 * the order of struct droce_engine_stats.
 * @return the counter's name (e.g. "busy_cycles") with its value in
 * *@p value, or NULL when @p i is past the last counter.
 */
const char *droce_engine_stats_at(const struct droce_engine_stats *s, unsigned i,
				  uint64_t *value);

/**
 * Register the /droce/ telemetry commands. Idempotent, any thread; called
 * when the first device attaches. The commands answer on the EAL's
 * telemetry socket unless the EAL runs with --no-telemetry.
 * @return 0 or a negative errno from rte_telemetry_register_cmd().
 */
int droce_telemetry_init(void);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_STATS_H */
