/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devices rdma_cm runs on: every droce device, its verbs context
 * opened once, with QP1 and a CM on it, for the life of the process (as
 * the kernel's rdma_cm keeps one CM agent per port).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce_rdmacm_priv.h"

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cma_dev devs[CMA_MAX_DEVS];
static struct ibv_device **dev_list;
static int ndevs = -1;
/** The process that registered cma_farewell_at_exit(). */
static pid_t farewell_pid;

/** How long an exit waits for its farewells: some round trips on any LAN. */
#define CMA_EXIT_WAIT_US 200000
/** How long it waits at least once a message went out: a memif peer stops
 *  reading the ring when this process is gone, and must have read it first. */
#define CMA_EXIT_LINGER_US 10000

static int
cma_send(void *arg, const uint8_t gid[16], const uint8_t mad[DROCE_MAD_SIZE])
{
	struct cma_dev *d = arg;
	int rc = droce_gsi_send(d->gsi, gid, mad);

	/* A new deadline may be nearer than the one the thread sleeps to. */
	droce_gsi_kick(d->gsi);
	return rc;
}

static uint64_t
cma_now(void *arg)
{
	(void)arg;
	return droce_gsi_now_us();
}

static void
cma_recv(void *arg, const uint8_t src_gid[16], const uint8_t dst_gid[16],
	 const uint8_t mad[DROCE_MAD_SIZE])
{
	struct cma_dev *d = arg;

	(void)dst_gid;
	droce_cm_recv(d->cm, src_gid, mad);
}

static uint64_t
cma_timer(void *arg)
{
	struct cma_dev *d = arg;
	uint64_t cm = droce_cm_timer(d->cm), res = cma_resolve_run(d);

	return cm < res ? cm : res;
}

static const struct droce_cm_ops cm_ops = { .send = cma_send, .event = cma_cm_event,
					     .now = cma_now };
static const struct droce_gsi_ops gsi_ops = { .recv = cma_recv, .timer = cma_timer };

static int
dev_open(struct cma_dev *d, struct ibv_device *ibdev)
{
	uint64_t guid = ibv_get_device_guid(ibdev);

	d->verbs = ibv_open_device(ibdev);
	if (d->verbs == NULL)
		return -1;
	d->pd = ibv_alloc_pd(d->verbs);
	/* The GUID as the REQ carries it: its bytes in network order. */
	LIST_INIT(&d->resolving);
	d->cm = droce_cm_create(&cm_ops, d, be64toh(guid));
	if (d->pd == NULL || d->cm == NULL)
		return -1;
	d->gsi = droce_gsi_open(d->verbs, &gsi_ops, d);
	return d->gsi != NULL ? 0 : -1;
}

/*
 * At exit, the IDs the process did not destroy say goodbye, as the
 * kernel's rdma_cm destroys them when the process's file closes: REJ for
 * a connection being set up, DREQ for one established, DREP for a DREQ
 * the process did not answer. Without it a peer waits out its own
 * retries, a minute and more (qperf's server exits so after each test).
 * The IDs are not freed: the process's threads may still hold them. The
 * wait is bounded, and ends once the DREQs are answered; it runs before
 * libibverbs' own exit handler stops the engines (registered after it).
 */
static void
cma_farewell_at_exit(void)
{
	uint64_t t0, now;
	unsigned sent = 0, waiting;
	unsigned i;

	/* A forked child inherits the handler, not the devices' threads. */
	if (getpid() != farewell_pid)
		return;
	pthread_mutex_lock(&devs_lock);
	for (i = 0; i < CMA_MAX_DEVS; i++)
		if (devs[i].gsi != NULL)
			sent += droce_cm_farewell(devs[i].cm);
	pthread_mutex_unlock(&devs_lock);
	if (sent == 0)
		return;
	t0 = droce_gsi_now_us();
	for (i = 0; i < CMA_MAX_DEVS; i++)
		if (devs[i].gsi != NULL)
			droce_gsi_drain(devs[i].gsi, t0 + CMA_EXIT_WAIT_US);
	for (;;) {
		waiting = 0;
		for (i = 0; i < CMA_MAX_DEVS; i++)
			if (devs[i].gsi != NULL)
				waiting += droce_cm_disconnecting(devs[i].cm);
		now = droce_gsi_now_us();
		if (now >= t0 + CMA_EXIT_WAIT_US || (waiting == 0 && now >= t0 + CMA_EXIT_LINGER_US))
			break;
		usleep(1000);
	}
}

struct cma_dev *
cma_dev_get(unsigned i)
{
	struct cma_dev *d = NULL;

	pthread_mutex_lock(&devs_lock);
	if (ndevs < 0) {
		dev_list = ibv_get_device_list(&ndevs);
		if (dev_list == NULL)
			ndevs = 0;
		ndevs = ndevs > CMA_MAX_DEVS ? CMA_MAX_DEVS : ndevs;
	}
	if (i < (unsigned)ndevs) {
		d = &devs[i];
		if (d->gsi == NULL && dev_open(d, dev_list[i]) != 0) {
			int err = errno;

			droce_cm_destroy(d->cm);
			if (d->pd != NULL)
				ibv_dealloc_pd(d->pd);
			if (d->verbs != NULL)
				ibv_close_device(d->verbs);
			memset(d, 0, sizeof(*d));
			errno = err;
			d = NULL;
		} else if (farewell_pid == 0 && droce_lib_owns_eal()) {
			/* After ibv_open_device(): exit handlers run in reverse.
			 * Not in a DPDK application (libdroce), which may have
			 * ended its EAL before exit: its IDs are its own. */
			farewell_pid = getpid();
			atexit(cma_farewell_at_exit);
		}
	}
	pthread_mutex_unlock(&devs_lock);
	return d;
}

int
cma_dev_gid_index(const struct cma_dev *d, const union ibv_gid *gid)
{
	union ibv_gid g;

	for (int i = 0; ibv_query_gid(d->verbs, 1, i, &g) == 0; i++)
		if (memcmp(&g, gid, sizeof(g)) == 0)
			return i;
	return -1;
}

struct cma_dev *
cma_dev_by_addr(const struct sockaddr *sa)
{
	union ibv_gid gid;
	struct cma_dev *d;

	cma_addr_gid(sa, &gid);
	for (unsigned i = 0; (d = cma_dev_get(i)) != NULL; i++)
		if (cma_dev_gid_index(d, &gid) >= 0)
			return d;
	errno = EADDRNOTAVAIL;
	return NULL;
}

struct cma_dev *
cma_dev_any(int family)
{
	struct cma_dev *d;

	for (unsigned i = 0; (d = cma_dev_get(i)) != NULL; i++) {
		union ibv_gid g;

		for (int j = 0; ibv_query_gid(d->verbs, 1, j, &g) == 0; j++) {
			bool v4 = IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)g.raw);

			if ((family == AF_INET) == v4 && !IN6_IS_ADDR_LINKLOCAL(
					(const struct in6_addr *)g.raw))
				return d;
		}
	}
	errno = ENODEV;
	return NULL;
}

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list;
	unsigned n = 0;

	list = calloc(CMA_MAX_DEVS + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (struct cma_dev *d; (d = cma_dev_get(n)) != NULL; n++)
		list[n] = d->verbs;
	if (num_devices != NULL)
		*num_devices = (int)n;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
