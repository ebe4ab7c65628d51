/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What droce must know of DPDK 22.11's memif ethdev: its role, and the
 * lock that keeps droce's bursts apart from memif's disconnection.
 *
 * When memif's peer goes away (killed, or its port stopped), memif's
 * handler on the EAL's interrupt thread, memif_disconnect(), clears the
 * CONNECTED flag, then unmaps the shared rings and frees the regions that
 * describe them. eth_memif_rx() and eth_memif_tx() look at the flag once,
 * at their start, and read the rings after. A burst that began before the
 * flag was cleared and still runs when the rings go (preempted for the few
 * tens of microseconds between the two is enough) takes a SIGSEGV inside
 * librte_net_memif: e2e-peer-killed's survivor did, in CI and in 2 of 12
 * runs here with a busy loop on its CPU.
 *
 * Between clearing the flag and freeing the rings, memif_disconnect()
 * takes one lock: its control channel's (pmd_internals.cc_lock), which
 * nothing else of memif takes. droce's bursts on a memif ethdev hold it
 * (droce_port_ethdev_rx_burst(), _tx_burst()): a disconnection waits
 * for the burst in progress, and a burst that starts later finds the flag
 * cleared and returns at once. memif does not export the lock; it is found through the
 * ethdev's private data, by the layouts of DPDK 22.11 (struct rte_eth_dev,
 * struct rte_eth_dev_data and memif's struct pmd_internals, mirrored
 * below), only on that version, and only when every field read on the way
 * holds what it must: the device's name, memif's role, interface id and
 * socket. Otherwise the bursts run unguarded, as they did, with a warning.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_kvargs.h>
#include <rte_string_fns.h>
#include <rte_version.h>

#include "droce_port_priv.h"

/* rte_ethdev's ethdev_driver.h, which Debian does not install: the device
 * of a port by its name (exported, in the INTERNAL version). */
struct rte_eth_dev;
struct rte_eth_dev *rte_eth_dev_allocated(const char *name);

/* The heads of DPDK 22.11's struct rte_eth_dev and rte_eth_dev_data. */
struct memif_eth_dev_head {
	void *fast_path[6];  /* rx_pkt_burst ... tx_descriptor_status */
	struct memif_eth_dev_data_head *data;
};
struct memif_eth_dev_data_head {
	char name[RTE_ETH_NAME_MAX_LEN];
	void **rx_queues;
	void **tx_queues;
	uint16_t nb_rx_queues;
	uint16_t nb_tx_queues;
	struct rte_eth_dev_sriov sriov;
	void *dev_private;
};
/* The head of memif's struct pmd_internals (rte_eth_memif.h, 22.11). */
#define MEMIF_SECRET_SIZE 24
enum { MEMIF_ROLE_SERVER, MEMIF_ROLE_CLIENT };
struct memif_pmd_head {
	uint32_t id;
	uint32_t role;
	uint32_t flags;
	char *socket_filename;
	char secret[MEMIF_SECRET_SIZE];
	void *cc;
	rte_spinlock_t cc_lock;
};
/* memif's defaults and its socket name's limit (sockaddr_un's path). */
#define MEMIF_DEFAULT_SOCKET "/run/memif.sock"
#define MEMIF_SOCKET_UN_SIZE 108

/* What the port's devargs say of memif. */
struct memif_args {
	bool client;
	uint32_t id;
	char socket[MEMIF_SOCKET_UN_SIZE];
};

bool
droce_port_is_memif(uint16_t port_id, struct rte_eth_dev_info *info)
{
	return rte_eth_dev_info_get(port_id, info) == 0 && info->driver_name != NULL &&
	       strcmp(info->driver_name, "net_memif") == 0;
}

/* The devargs of memif port @p port_id, and its @p info; false when it
 * is not one. Keys not given take memif's defaults (no devargs: all). */
static bool
memif_args_get(uint16_t port_id, struct memif_args *a, struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da;
	struct rte_kvargs *kv = NULL;
	const char *v;

	if (!droce_port_is_memif(port_id, info) || info->device == NULL)
		return false;
	da = rte_dev_devargs(info->device);
	if (da != NULL && da->args != NULL) {
		kv = rte_kvargs_parse(da->args, NULL);
		if (kv == NULL)
			return false;
	}
	/* rte_kvargs_get() of no list is NULL. */
	v = rte_kvargs_get(kv, "role");
	a->client = v != NULL && (strcmp(v, "client") == 0 || strcmp(v, "slave") == 0);
	v = rte_kvargs_get(kv, "id");
	a->id = v != NULL ? (uint32_t)strtoul(v, NULL, 10) : 0;
	v = rte_kvargs_get(kv, "socket");
	rte_strlcpy(a->socket, v != NULL ? v : MEMIF_DEFAULT_SOCKET, sizeof(a->socket));
	rte_kvargs_free(kv);
	return true;
}

bool
droce_port_memif_is_client(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	struct memif_args a;

	return memif_args_get(port_id, &a, &info) && a.client;
}

rte_spinlock_t *
droce_port_ethdev_burst_lock(uint16_t port_id)
{
	const struct memif_eth_dev_head *dev;
	const struct memif_eth_dev_data_head *data;
	struct memif_pmd_head *pmd;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_eth_dev_info info;
	struct memif_args a;

	if (!memif_args_get(port_id, &a, &info))
		return NULL;
	if (strncmp(rte_version(), "DPDK 22.11.", strlen("DPDK 22.11.")) != 0 ||
	    rte_eth_dev_get_name_by_port(port_id, name) != 0)
		goto unguarded;
	dev = (const struct memif_eth_dev_head *)rte_eth_dev_allocated(name);
	if (dev == NULL || dev->data == NULL)
		goto unguarded;
	data = dev->data;
	if (strncmp(data->name, name, sizeof(name)) != 0 ||
	    data->nb_rx_queues != info.nb_rx_queues || data->dev_private == NULL)
		goto unguarded;
	pmd = data->dev_private;
	if (pmd->role != (a.client ? MEMIF_ROLE_CLIENT : MEMIF_ROLE_SERVER) || pmd->id != a.id ||
	    pmd->socket_filename == NULL ||
	    strncmp(pmd->socket_filename, a.socket, MEMIF_SOCKET_UN_SIZE - 1) != 0)
		goto unguarded;
	return &pmd->cc_lock;
unguarded:
	DROCE_PORT_LOG(WARNING, "port %u: memif's private data is not DPDK 22.11's: its bursts "
		       "are not kept apart from a disconnection (a SIGSEGV when the peer "
		       "leaves during one)", port_id);
	return NULL;
}
