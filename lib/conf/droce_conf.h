/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's runtime configuration: an INI file (rte_cfgfile) named by the
 * environment variable DROCE_CONF, or the embedded default, a loopback
 * device that needs no NIC.
 *
 * @code
 * [eal]
 * args = -l 1 --in-memory --no-pci --vdev=net_memif0,role=server,socket=/tmp/a.sock,socket-abstract=no
 * [port0]
 * device = net_memif0
 * ipv4 = 10.0.0.1/24
 * mtu = 4096
 * @endcode
 *
 * Every key is documented in docs/config.md.
 */
#ifndef DROCE_CONF_H
#define DROCE_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "droce_port.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most ports one configuration describes. */
#define DROCE_CONF_MAX_PORTS 8
/** Most EAL arguments. */
#define DROCE_CONF_MAX_EAL_ARGS 64

/** One [portN] section. */
struct droce_conf_port {
	char device[128];            /**< ethdev name (e.g. net_memif0) */
	char capture[PATH_MAX];      /**< pcapng path; empty: no capture */
	/** Attach settings; port_id is filled when the device is looked up. */
	struct droce_port_conf port;
};

/** A whole configuration. */
struct droce_conf {
	char source[PATH_MAX];       /**< file it came from, or "(default)" */
	int eal_argc;
	char *eal_argv[DROCE_CONF_MAX_EAL_ARGS]; /**< argv[0] is "droce" */
	unsigned nb_ports;
	struct droce_conf_port ports[DROCE_CONF_MAX_PORTS];
	/** [engine] lcore = N: run the engines on service lcore N; -1: on a
	 *  progress thread droce starts (the default for verbs programs). */
	int engine_lcore;
	/** [engine] idle_sleep_us: longest sleep of an idle engine. */
	unsigned idle_sleep_us;
	/** [log] level = error|warning|notice|info|debug, as an RTE_LOG_*
	 *  value (default RTE_LOG_NOTICE). */
	unsigned log_level;
};

/**
 * Read @p path into @p c. Unknown sections or keys, bad values and
 * missing required keys fail with a message in @p err that names the file,
 * the line and the key (e.g. "droce.conf:7: [port0] mtu: 3000 is not an
 * IB MTU (256, 512, 1024, 2048, 4096)"). On failure @p c holds nothing
 * to free.
 * @return 0 or a negative errno.
 */
int droce_conf_load(const char *path, struct droce_conf *c, char *err, size_t errlen);

/**
 * Fill @p c with the embedded default: one loopback port (a net_ring
 * vdev) named droce0's device, IPv4 10.255.0.1/24, MTU 4096, EAL in
 * memory without PCI or telemetry on the CPU the caller runs on.
 * If memory for the EAL arguments runs out, eal_argc is 0.
 */
void droce_conf_default(struct droce_conf *c);

/**
 * What a verbs process runs with: the file named by DROCE_CONF if set,
 * else the embedded default; then the environment overrides
 * (DROCE_CAPTURE=path captures port 0, ports N>0 to path with ".N"
 * inserted before the extension; DROCE_LOG=level).
 */
int droce_conf_from_env(struct droce_conf *c, char *err, size_t errlen);

/**
 * Parse a fault list as the [portN] keys fault_rx and fault_tx take it:
 * comma-separated key=value pairs (rte_kvargs syntax) of drop, dup,
 * reorder, corrupt, delay (probabilities 0..1), delay_us (1..1000000,
 * needed with delay) and seed (decimal); keys left out are 0. For
 * applications that change faults at run time (droce_port_fault_set()).
 * @return 0 and @p c filled, or -EINVAL with a message in @p err that
 * names the offending key (e.g. "drop: '2' is not a probability (0..1)").
 */
int droce_conf_fault_parse(const char *s, struct droce_fault_conf *c, char *err, size_t errlen);

/**
 * Set one of the [portN] keys of congestion control (ecn, cnp_interval_us,
 * dcqcn, bottleneck; docs/congestion.md) of @p pc to @p val, as the
 * configuration file takes it. For applications that attach ports with
 * their own struct droce_port_conf (start it with droce_cc_conf_default()).
 * @return 0, or -EINVAL with a message in @p err.
 */
int droce_conf_cc_set(struct droce_port_conf *pc, const char *key, const char *val,
		      char *err, size_t errlen);

/**
 * Free what droce_conf_load() allocated (the EAL argument strings, which
 * share one allocation that eal_argv[0] points to: rte_eal_init() may
 * reorder the rest of an eal_argv it is given). Safe to call twice.
 */
void droce_conf_free(struct droce_conf *c);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_CONF_H */
