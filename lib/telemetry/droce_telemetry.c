/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters out of droce: droce_dev_stats() and the /droce/ telemetry
 * commands (see droce_stats.h).
 *
 * Telemetry callbacks run in the telemetry thread while the engines run.
 * Counters are read racily, which is fine: each has one writer and is
 * loaded whole. QPs are another matter, as one may be freed at any time:
 * they are reached only under their device's QPN table lock, and QP
 * teardown takes that lock to unpublish a QP before it frees it (every
 * removal goes through droce_num_table_remove()), so a QP found in the
 * table under the lock stays allocated until the lock is let go.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_telemetry.h>

#include "droce_qp_state.h"
#include "droce_stats.h"
#include "droce_verbs_priv.h"

struct stat_name {
	const char *name;
	size_t off;
};

#define ENGINE_STAT(f) { #f, offsetof(struct droce_engine_stats, f) },
#define ENGINE_RX_STAT(f) { #f, offsetof(struct droce_engine_stats, rx.f) },
#define ENGINE_ZC_STAT(f) { #f, offsetof(struct droce_engine_stats, zc.f) },
#define ENGINE_CC_STAT(f) { #f, offsetof(struct droce_engine_stats, cc.f) },
#define ENGINE_STAGE_STAT(f) \
	{ "stage_" #f "_cycles", offsetof(struct droce_engine_stats, stage.stage_##f##_cycles) },
static const struct stat_name engine_stats[] = {
	ENGINE_STAT(iterations) ENGINE_STAT(tx_stall_drops) ENGINE_STAT(tx_no_mbuf)
	DROCE_RX_STATS(ENGINE_RX_STAT) DROCE_ZC_STATS(ENGINE_ZC_STAT)
	DROCE_CC_STATS(ENGINE_CC_STAT)
	ENGINE_STAT(busy_cycles) ENGINE_STAT(rx_burst_cycles) ENGINE_STAT(tx_burst_cycles)
	ENGINE_STAT(long_iterations) ENGINE_STAT(rx_msgs) ENGINE_STAT(rx_payload_bytes)
	ENGINE_STAT(tx_msgs) ENGINE_STAT(tx_payload_bytes)
	DROCE_STAGES(ENGINE_STAGE_STAT)
};
static_assert(sizeof(struct droce_engine_stats) == RTE_DIM(engine_stats) * sizeof(uint64_t),
	      "every engine counter has a name");

#define QP_STAT(f) { #f, offsetof(struct droce_qp, stats.f) }
static const struct stat_name qp_stats[] = {
	QP_STAT(tx_pkts), QP_STAT(rx_pkts), QP_STAT(retransmits), QP_STAT(timeouts),
	QP_STAT(seq_naks_sent), QP_STAT(seq_naks_rcvd), QP_STAT(rnr_naks_sent),
	QP_STAT(rnr_naks_rcvd), QP_STAT(duplicates), QP_STAT(dropped),
	QP_STAT(cnps_sent), QP_STAT(cnps_rcvd),
};
static_assert(sizeof(((struct droce_qp *)NULL)->stats) == RTE_DIM(qp_stats) * sizeof(uint64_t),
	      "every QP counter has a name");

/* A counter another thread writes, loaded whole. */
static uint64_t
stat_load(const void *base, size_t off)
{
	return __atomic_load_n((const uint64_t *)((const uint8_t *)base + off), __ATOMIC_RELAXED);
}

/* Engine @p e's counters into @p out. */
static void
engine_stats_load(const struct droce_engine *e, struct droce_engine_stats *out)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(engine_stats); i++)
		*(uint64_t *)((uint8_t *)out + engine_stats[i].off) =
			stat_load(&e->stats, engine_stats[i].off);
}

/* The device's counters: its port's and the sum of its engines'. */
static void
dev_stats(const struct droce_dev *d, struct droce_dev_stats *out)
{
	struct droce_engine_stats es;
	unsigned e, i;

	droce_port_stats_get(d->port, &out->port);
	memset(&out->engine, 0, sizeof(out->engine));
	for (e = 0; e < d->nb_engines; e++) {
		engine_stats_load(d->engines[e], &es);
		for (i = 0; i < RTE_DIM(engine_stats); i++)
			*(uint64_t *)((uint8_t *)&out->engine + engine_stats[i].off) +=
				*(const uint64_t *)((const uint8_t *)&es + engine_stats[i].off);
	}
}

int
droce_dev_stats(unsigned index, struct droce_dev_stats *out)
{
	struct droce_dev *d = droce_dev_get(index);

	if (out == NULL)
		return -EINVAL;
	if (d == NULL)
		return -ENODEV;
	dev_stats(d, out);
	return 0;
}

int
droce_dev_engine_stats(unsigned index, unsigned engine, struct droce_dev_stats *out)
{
	struct droce_dev *d = droce_dev_get(index);

	if (out == NULL)
		return -EINVAL;
	if (d == NULL || engine >= d->nb_engines)
		return -ENODEV;
	droce_port_queue_stats_get(d->port, (uint16_t)engine, &out->port);
	engine_stats_load(d->engines[engine], &out->engine);
	return 0;
}

const char *
droce_engine_stats_at(const struct droce_engine_stats *s, unsigned i, uint64_t *value)
{
	if (i >= RTE_DIM(engine_stats))
		return NULL;
	*value = stat_load(s, engine_stats[i].off);
	return engine_stats[i].name;
}

/* ---- telemetry ---- */

/*
 * Parse @p params as @p n decimal numbers separated by commas ("0",
 * "0,17") into @p v, each at most @p max. @return 0 or -EINVAL.
 */
static int
tel_params(const char *params, unsigned long *v, unsigned n, unsigned long max)
{
	const char *p = params;
	unsigned i;
	char *end;

	if (p == NULL)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (i > 0 && *p++ != ',')
			return -EINVAL;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtoul(p, &end, 10);
		if (errno != 0 || v[i] > max)
			return -EINVAL;
		p = end;
	}
	return *p == '\0' ? 0 : -EINVAL;
}

/* The device a command's first parameter names, or NULL. */
static struct droce_dev *
tel_dev(unsigned long index)
{
	return droce_dev_get((unsigned)index);
}

static int
tel_ports(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	unsigned i, n = droce_dev_count();

	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < n; i++)
		if (droce_dev_get(i) != NULL)
			rte_tel_data_add_array_int(d, (int)i);
	return 0;
}

/* Port and engine counters of @p s into the dict @p d. */
static void
tel_stats_fill(struct rte_tel_data *d, const struct droce_dev_stats *s)
{
	const char *name;
	unsigned i;
	uint64_t v;

	for (i = 0; (name = droce_port_stats_at(&s->port, i, &v)) != NULL; i++)
		rte_tel_data_add_dict_u64(d, name, v);
	for (i = 0; (name = droce_engine_stats_at(&s->engine, i, &v)) != NULL; i++)
		rte_tel_data_add_dict_u64(d, name, v);
}

static int
tel_port(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct droce_dev_stats s;
	struct droce_dev *dev;
	unsigned long index;

	if (tel_params(params, &index, 1, DROCE_MAX_DEVS) != 0 ||
	    (dev = tel_dev(index)) == NULL)
		return -EINVAL;
	dev_stats(dev, &s);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", dev->ibdev.name);
	rte_tel_data_add_dict_int(d, "ethdev", droce_port_ethdev(dev->port));
	rte_tel_data_add_dict_int(d, "engines", (int)dev->nb_engines);
	tel_stats_fill(d, &s);
	return 0;
}

static int
tel_engine(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct droce_dev_stats s;
	unsigned long v[2];

	if (tel_params(params, v, 2, DROCE_MAX_DEVS) != 0 ||
	    droce_dev_engine_stats((unsigned)v[0], (unsigned)v[1], &s) != 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "engine", (int)v[1]);
	tel_stats_fill(d, &s);
	return 0;
}

static int
qpn_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int
tel_qps(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct droce_dev *dev;
	unsigned long index;
	uint32_t *qpns, n = 0, i, iter = 0;
	const void *key;
	void *data;

	if (tel_params(params, &index, 1, DROCE_MAX_DEVS) != 0 ||
	    (dev = tel_dev(index)) == NULL)
		return -EINVAL;
	qpns = malloc(sizeof(*qpns) * dev->qpt.max);
	if (qpns == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&dev->qpt.lock);
	while (n < dev->qpt.max && rte_hash_iterate(dev->qpt.hash, &key, &data, &iter) >= 0)
		qpns[n++] = *(const uint32_t *)key;
	pthread_mutex_unlock(&dev->qpt.lock);
	qsort(qpns, n, sizeof(*qpns), qpn_cmp);
	/* A telemetry array holds RTE_TEL_MAX_ARRAY_ENTRIES: the lowest QPNs. */
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < RTE_MIN(n, (uint32_t)RTE_TEL_MAX_ARRAY_ENTRIES); i++)
		rte_tel_data_add_array_int(d, (int)qpns[i]);
	free(qpns);
	return 0;
}

static const char *
qp_type_str(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	case IBV_QPT_XRC_SEND: return "XRC_SEND";
	case IBV_QPT_XRC_RECV: return "XRC_RECV";
	default: return "unknown";
	}
}

/* Under the QPN table lock: @p qp cannot be freed meanwhile. */
static void
tel_qp_fill(struct rte_tel_data *d, const struct droce_qp *qp)
{
	unsigned i;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "qpn", (int)qp->qpn);
	rte_tel_data_add_dict_string(d, "type", qp_type_str(qp->type));
	rte_tel_data_add_dict_string(d, "state", droce_qp_state_str(droce_qp_state(qp)));
	rte_tel_data_add_dict_int(d, "engine", qp->engine->queue);
	/* Engine state, read racily: a snapshot for people, not for logic. */
	rte_tel_data_add_dict_u64(d, "next_psn", __atomic_load_n(&qp->req.psn, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "unacked_psn", __atomic_load_n(&qp->comp.psn, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "expected_psn", __atomic_load_n(&qp->resp.epsn, __ATOMIC_RELAXED));
	for (i = 0; i < RTE_DIM(qp_stats); i++)
		rte_tel_data_add_dict_u64(d, qp_stats[i].name, stat_load(qp, qp_stats[i].off));
}

static int
tel_qp(const char *cmd __rte_unused, const char *params, struct rte_tel_data *d)
{
	struct droce_dev *dev;
	struct droce_qp *qp;
	unsigned long v[2];

	if (tel_params(params, v, 2, UINT32_MAX) != 0 || v[0] > DROCE_MAX_DEVS ||
	    (dev = tel_dev(v[0])) == NULL)
		return -EINVAL;
	pthread_mutex_lock(&dev->qpt.lock);
	qp = droce_num_table_lookup(&dev->qpt, (uint32_t)v[1]);
	if (qp != NULL)
		tel_qp_fill(d, qp);
	pthread_mutex_unlock(&dev->qpt.lock);
	return qp != NULL ? 0 : -EINVAL;
}

static pthread_once_t tel_once = PTHREAD_ONCE_INIT;
static int tel_rc;

static void
tel_register(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/droce/ports", tel_ports, "droce device indexes. No parameters" },
		{ "/droce/port", tel_port,
		  "Port and engine counters of a droce device. Parameters: int device" },
		{ "/droce/engine", tel_engine,
		  "Counters of one engine and its port queue. Parameters: int device, int engine" },
		{ "/droce/qps", tel_qps,
		  "QPNs of a droce device (the lowest 512). Parameters: int device" },
		{ "/droce/qp", tel_qp,
		  "State, PSNs and counters of a QP. Parameters: int device, int qpn" },
	};
	unsigned i;

	for (i = 0; i < RTE_DIM(cmds) && tel_rc == 0; i++)
		tel_rc = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);
}

int
droce_telemetry_init(void)
{
	pthread_once(&tel_once, tel_register);
	return tel_rc;
}
