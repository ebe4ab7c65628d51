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
	if (d->engine != NULL)
		droce_engine_destroy(d->engine);
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

int
droce_dev_attach(const struct droce_port_conf *conf, unsigned *index)
{
	struct droce_dev *d;
	char name[32];
	size_t rcu_sz;
	unsigned idx;
	int rc;

	pthread_mutex_lock(&devs_lock);
	if (ndevs == 0) {
		DROCE_LOG(INFO, "ICRC on the %s path", droce_icrc_init());
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
	snprintf(name, sizeof(name), "droce%u_qpn", idx);
	rc = droce_num_table_init(&d->qpt, name, DROCE_MAX_QP, SOCKET_ID_ANY);
	if (rc != 0)
		goto fail;
	snprintf(name, sizeof(name), "droce%u_srqn", idx);
	rc = droce_num_table_init(&d->srqt, name, DROCE_MAX_QP, SOCKET_ID_ANY);
	if (rc != 0)
		goto fail;
	/* One reader per engine; one engine per device for now. */
	rcu_sz = rte_rcu_qsbr_get_memsize(1);
	d->rcu = rte_zmalloc("droce_rcu", rcu_sz, RTE_CACHE_LINE_SIZE);
	if (d->rcu == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	rte_rcu_qsbr_init(d->rcu, 1);
	snprintf(name, sizeof(name), "droce%u", idx);
	rc = droce_engine_create(d->port, &d->qpt, &d->srqt, d->mrt, d->rcu, 0, name, &d->engine);
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

int
droce_dev_service_id(unsigned index, uint32_t *service_id)
{
	struct droce_dev *d = droce_dev_get(index);

	if (d == NULL)
		return -EINVAL;
	*service_id = d->engine->service_id;
	return 0;
}

int
droce_dev_run_lcore(unsigned index, unsigned lcore)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL ? droce_engine_lcore_start(d->engine, lcore) : -EINVAL;
}

int
droce_dev_run_thread(unsigned index, unsigned idle_sleep_us)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL ? droce_engine_thread_start(d->engine, idle_sleep_us) : -EINVAL;
}

int
droce_dev_poll(unsigned index)
{
	struct droce_dev *d = droce_dev_get(index);

	return d != NULL ? droce_engine_poll(d->engine) : -EINVAL;
}
