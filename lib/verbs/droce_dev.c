/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Devices: one per attached port. The registry is a fixed array filled
 * in attach order, so device names (droce0, droce1, ...) follow the ports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_service.h>

#include "droce.h"
#include "droce_verbs_priv.h"
#include "droce_stats.h"

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct droce_dev *devs[DROCE_MAX_DEVS];
static unsigned ndevs;

struct droce_dev *
droce_dev_get(unsigned index)
{
	return index < DROCE_MAX_DEVS ? __atomic_load_n(&devs[index], __ATOMIC_ACQUIRE) : NULL;
}

unsigned
droce_dev_count(void)
{
	return __atomic_load_n(&ndevs, __ATOMIC_ACQUIRE);
}

/* Node GUID: the EUI-64 of the port's MAC, as RoCE NICs and rxe make it. */
static uint64_t
dev_guid(const struct droce_port *port)
{
	struct rte_ether_addr mac;
	uint8_t g[8];
	uint64_t guid;

	droce_port_mac(port, &mac);
	g[0] = mac.addr_bytes[0] ^ 0x02;
	g[1] = mac.addr_bytes[1];
	g[2] = mac.addr_bytes[2];
	g[3] = 0xff;
	g[4] = 0xfe;
	g[5] = mac.addr_bytes[3];
	g[6] = mac.addr_bytes[4];
	g[7] = mac.addr_bytes[5];
	memcpy(&guid, g, sizeof(guid));
	return guid;
}

/* The port went up or down: every context of the device hears of it. */
static void
dev_link_changed(void *arg, bool up)
{
	struct droce_dev *d = arg;
	struct droce_context *c;

	if (droce_event_hook == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	LIST_FOREACH(c, &d->contexts, link)
		droce_event_hook(&c->vctx.context, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
				 NULL);
	pthread_mutex_unlock(&d->lock);
}

static void
dev_free(struct droce_dev *d)
{
	unsigned i, kept;

	for (i = 0; i < d->nb_engines; i++)
		droce_engine_destroy(d->engines[i]);
	/* Destroyed QPs that frames held elsewhere still point into stay
	 * allocated: their free callbacks write into them. */
	kept = droce_dev_qps_reap(d);
	if (kept != 0)
		DROCE_LOG(WARNING, "device %u: %u destroyed QPs left allocated: frames still "
			  "point into them", d->index, kept);
	if (d->port != NULL)
		droce_port_on_link(d->port, NULL, NULL);
	if (d->qpt.hash != NULL)
		droce_num_table_fini(&d->qpt);
	if (d->srqt.hash != NULL)
		droce_num_table_fini(&d->srqt);
	if (d->port != NULL)
		droce_port_detach(d->port);
	rte_free(d->rcu);
	if (d->mrt != NULL)
		free(d->mrt->mwt);
	free(d->mrt);
	free(d);
}

/* One engine per port queue, each an RCU reader of the device. */
static int
dev_engines_create(struct droce_dev *d)
{
	unsigned n = droce_port_nb_queues(d->port), i;
	char name[RTE_SERVICE_NAME_MAX];
	int rc;

	d->rcu = rte_zmalloc("droce_rcu", rte_rcu_qsbr_get_memsize(n), RTE_CACHE_LINE_SIZE);
	if (d->rcu == NULL)
		return -ENOMEM;
	rte_rcu_qsbr_init(d->rcu, n);
	for (i = 0; i < n; i++) {
		/* Engine 0 keeps the name a one-engine device always had. */
		if (i == 0)
			snprintf(name, sizeof(name), "droce%u", d->index);
		else
			snprintf(name, sizeof(name), "droce%u_e%u", d->index, i);
		rc = droce_engine_create(d->port, (uint16_t)i, &d->qpt, &d->srqt, d->mrt, d->rcu, i,
					 name, &d->engines[i]);
		if (rc != 0)
			return rc;
		if (i > 0)
			d->engines[i - 1]->next = d->engines[i];
		d->nb_engines = i + 1;
	}
	return 0;
}

int
droce_dev_attach(const struct droce_port_conf *conf, unsigned *index)
{
	struct droce_dev *d;
	char name[32];
	unsigned idx;
	int rc;

	pthread_mutex_lock(&devs_lock);
	if (ndevs == 0) {
		const char *rte_path = droce_icrc_init();

		DROCE_LOG(INFO, "ICRC on droce's %s path, rte_net_crc's %s",
			  droce_crc32_path_name(droce_crc32_path()), rte_path);
		if (droce_telemetry_init() != 0)
			DROCE_LOG(WARNING, "telemetry commands not registered");
	}
	idx = ndevs;
	if (idx >= DROCE_MAX_DEVS) {
		pthread_mutex_unlock(&devs_lock);
		return -ENOSPC;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL || (d->mrt = malloc(sizeof(*d->mrt))) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	d->index = idx;
	pthread_mutex_init(&d->lock, NULL);
	LIST_INIT(&d->contexts);
	LIST_INIT(&d->xrcds);
	LIST_INIT(&d->kept_qps);
	droce_mr_table_init(d->mrt);
	d->mrt->mwt = malloc(sizeof(*d->mrt->mwt));
	if (d->mrt->mwt == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	droce_mw_table_init(d->mrt->mwt);
	rc = droce_port_attach(conf, &d->port);
	if (rc != 0)
		goto fail;
	d->shared = conf->shared;
	d->placement = conf->placement;
	snprintf(name, sizeof(name), "droce%u_qpn", idx);
	rc = droce_num_table_init(&d->qpt, name, DROCE_MAX_QP, SOCKET_ID_ANY);
	if (rc != 0)
		goto fail;
	snprintf(name, sizeof(name), "droce%u_srqn", idx);
	rc = droce_num_table_init(&d->srqt, name, DROCE_MAX_QP, SOCKET_ID_ANY);
	if (rc != 0)
		goto fail;
	rc = dev_engines_create(d);
	if (rc != 0)
		goto fail;
	d->guid = dev_guid(d->port);
	droce_port_on_link(d->port, dev_link_changed, d);
	d->ibdev.node_type = IBV_NODE_CA;
	d->ibdev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->ibdev.name, sizeof(d->ibdev.name), "droce%u", idx);
	snprintf(d->ibdev.dev_name, sizeof(d->ibdev.dev_name), "uverbs%u", idx);
	snprintf(d->ibdev.dev_path, sizeof(d->ibdev.dev_path),
		 "/sys/class/infiniband_verbs/uverbs%u", idx);
	snprintf(d->ibdev.ibdev_path, sizeof(d->ibdev.ibdev_path),
		 "/sys/class/infiniband/droce%u", idx);
	__atomic_store_n(&devs[idx], d, __ATOMIC_RELEASE);
	__atomic_store_n(&ndevs, idx + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&devs_lock);
	*index = idx;
	DROCE_LOG(INFO, "device droce%u on ethdev %u", idx, conf->port_id);
	return 0;
fail:
	if (d != NULL)
		dev_free(d);
	pthread_mutex_unlock(&devs_lock);
	return rc;
}

int
droce_dev_detach(unsigned index)
{
	struct droce_dev *d;

	pthread_mutex_lock(&devs_lock);
	d = droce_dev_get(index);
	if (d == NULL || index + 1 != ndevs) {
		/* Only the newest device goes: names stay dense. */
		pthread_mutex_unlock(&devs_lock);
		return d == NULL ? -ENODEV : -EBUSY;
	}
	if (!LIST_EMPTY(&d->contexts)) {
		pthread_mutex_unlock(&devs_lock);
		return -EBUSY;
	}
	__atomic_store_n(&devs[index], NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&ndevs, index, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&devs_lock);
	dev_free(d);
	return 0;
}

uint16_t
droce_dev_rx_burst(unsigned index, struct rte_mbuf **pkts, uint16_t n)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL && d->shared ? droce_port_app_rx(d->port, pkts, n) : n;
}

struct ibv_device *
droce_dev_ibv(unsigned index)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL ? &d->ibdev : NULL;
}

struct droce_port *
droce_dev_port(unsigned index)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL ? d->port : NULL;
}

/* Engine @p engine of device @p index, or NULL. */
static struct droce_engine *
dev_engine(unsigned index, unsigned engine)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL && engine < d->nb_engines ? d->engines[engine] : NULL;
}

int
droce_dev_engines(unsigned index)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL ? (int)d->nb_engines : -EINVAL;
}

int
droce_dev_engine_service_id(unsigned index, unsigned engine, uint32_t *service_id)
{
	struct droce_engine *e = dev_engine(index, engine);

	if (e == NULL)
		return -EINVAL;
	*service_id = e->service_id;
	return 0;
}

int
droce_dev_service_id(unsigned index, uint32_t *service_id)
{
	return droce_dev_engine_service_id(index, 0, service_id);
}

int
droce_dev_engine_run_lcore(unsigned index, unsigned engine, unsigned lcore)
{
	struct droce_engine *e = dev_engine(index, engine);

	return e != NULL ? droce_engine_lcore_start(e, lcore) : -EINVAL;
}

/* @p start(e, @p arg) for every engine of device @p index, until one fails. */
static int
dev_engines_start(unsigned index, int (*start)(struct droce_engine *, unsigned), unsigned arg)
{
	struct droce_engine *e = dev_engine(index, 0);
	int rc = e != NULL ? 0 : -EINVAL;

	for (; rc == 0 && e != NULL; e = e->next)
		rc = start(e, arg);
	return rc;
}

int
droce_dev_run_lcore(unsigned index, unsigned lcore)
{
	return dev_engines_start(index, droce_engine_lcore_start, lcore);
}

int
droce_dev_engine_run_thread(unsigned index, unsigned engine, unsigned idle_sleep_us)
{
	struct droce_engine *e = dev_engine(index, engine);

	return e != NULL ? droce_engine_thread_start(e, idle_sleep_us) : -EINVAL;
}

int
droce_dev_run_thread(unsigned index, unsigned idle_sleep_us)
{
	return dev_engines_start(index, droce_engine_thread_start, idle_sleep_us);
}

int
droce_dev_engine_poll(unsigned index, unsigned engine)
{
	struct droce_engine *e = dev_engine(index, engine);

	return e != NULL ? droce_engine_poll(e) : -EINVAL;
}

int
droce_dev_poll(unsigned index)
{
	struct droce_engine *e = dev_engine(index, 0);
	int work = 0, rc, busy = 0, engines = 0;

	if (e == NULL)
		return -EINVAL;
	for (; e != NULL; e = e->next, engines++) {
		rc = droce_engine_poll(e);
		if (rc == -EBUSY)
			busy++;
		else
			work += rc;
	}
	return busy == engines ? -EBUSY : work;
}

/* ---- which engine owns a new QP ---- */

/* The calling thread's choice (droce_set_qp_engine()); -1: none. */
static __thread int qp_engine_hint = -1;

void
droce_set_qp_engine(int engine)
{
	qp_engine_hint = engine < 0 ? -1 : engine;
}

/* The engine with the fewest live QPs, the lowest number on a tie. Two
 * threads creating QPs at once may both pick it: a near miss. */
static unsigned
dev_engine_least_loaded(struct droce_dev *d)
{
	unsigned i, best = 0;
	uint32_t n, least = UINT32_MAX;

	for (i = 0; i < d->nb_engines; i++) {
		n = __atomic_load_n(&d->engine_qps[i], __ATOMIC_RELAXED);
		if (n < least) {
			least = n;
			best = i;
		}
	}
	return best;
}

struct droce_engine *
droce_dev_engine_pick(struct droce_dev *d, enum ibv_qp_type type, const struct droce_srq *srq)
{
	unsigned i;

	/* XRC receive QPs take WQEs from whichever XRC SRQ a message names:
	 * they and those SRQs share engine 0, so each SRQ has one consumer. */
	if (type == IBV_QPT_XRC_RECV)
		return d->engines[0];
	/* A QP takes receive WQEs from its SRQ: the SRQ's engine. */
	if (srq != NULL)
		return srq->engine;
	if (qp_engine_hint >= 0)
		i = (unsigned)qp_engine_hint;
	else if (d->placement == DROCE_PLACE_LEAST_LOADED)
		i = dev_engine_least_loaded(d);
	else
		i = __atomic_fetch_add(&d->next_engine, 1, __ATOMIC_RELAXED);
	return d->engines[i & (d->nb_engines - 1)];
}

void
droce_dev_engine_qps(struct droce_dev *d, const struct droce_engine *e, int delta)
{
	__atomic_fetch_add(&d->engine_qps[e->queue], (uint32_t)delta, __ATOMIC_RELAXED);
}

int
droce_qp_engine(struct ibv_qp *ibqp)
{
	return ibqp != NULL ? droce_qp_of(ibqp)->engine->queue : -EINVAL;
}

uint64_t
droce_qp_engine_work(struct ibv_qp *ibqp, unsigned engine)
{
	if (ibqp == NULL || engine >= DROCE_QP_ENGINES_MAX)
		return 0;
	return __atomic_load_n(&droce_qp_of(ibqp)->engine_work[engine], __ATOMIC_RELAXED);
}
