/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture to a pcapng file (rte_pcapng): every frame the port receives
 * (direction in) and sends (out), looped back frames in both directions,
 * each copied whole up to DROCE_PORT_DATA_ROOM bytes.
 *
 * Start and stop may run on any thread while the engine runs RX and TX;
 * the rule that keeps them apart:
 * - start builds the capture completely, then publishes the pointer
 *   (release);
 * - every engine call that may write frames brackets its work with
 *   droce_capture_enter()/droce_capture_exit(), which count the port's
 *   capture users around a reload of the pointer;
 * - stop unpublishes the pointer, then waits until the count is 0 before
 *   it closes the file and frees the copies' pool.
 * Both sides use sequentially consistent operations, so either the engine
 * sees the pointer gone, or stop sees the engine inside and waits for its
 * exit: a bracket lasts one RX or TX call. An engine that is not running
 * holds no bracket, so stop never waits for it. Start and stop serialize
 * on a mutex among themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pause.h>
#include <rte_spinlock.h>
#include <rte_version.h>

#include "droce_port_priv.h"

/* Copies in flight: at most one burst at a time per bracket. */
#define CAPTURE_POOL_SIZE 255

struct droce_capture {
	rte_pcapng_t *pcapng;
	struct rte_mempool *mp;
	uint64_t start_ns;
	/* Added to by every engine of the port (atomically), read at stop. */
	uint64_t written;
	uint64_t dropped;        /* no copy or write failed */
};

static uint64_t
capture_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void
capture_free(struct droce_capture *c)
{
	if (c->pcapng != NULL)
		rte_pcapng_close(c->pcapng); /* closes the file */
	rte_mempool_free(c->mp);
	free(c);
}

/*
 * rte_pcapng turns TSC timestamps into time of day from one process-wide
 * reference, which it updates without a lock and takes at its first
 * conversion; in 22.11 a timestamp older than the reference wraps around
 * and moves that and every later time ~220 years ahead. So:
 * - conversions (rte_pcapng_copy()) run under this lock, each with a
 *   timestamp read under it, so they come in timestamp order even when
 *   engines of several ports capture at once;
 * - the first one converts a timestamp from a little in the future, so
 *   the reference is in place before the first frame's.
 */
static rte_spinlock_t capture_clock_lock = RTE_SPINLOCK_INITIALIZER;
static bool capture_clock_ready;         /* under capture_clock_lock */

static int
capture_clock_init(struct droce_capture *c, uint16_t port_id)
{
	struct rte_mbuf *m, *copy;
	int ret = 0;

	rte_spinlock_lock(&capture_clock_lock);
	if (capture_clock_ready)
		goto unlock;
	m = rte_pktmbuf_alloc(c->mp);
	if (m == NULL) {
		ret = -ENOMEM;
		goto unlock;
	}
	/* rte_pktmbuf_copy() copies nothing from an empty mbuf. */
	memset(rte_pktmbuf_append(m, RTE_ETHER_MIN_LEN), 0, RTE_ETHER_MIN_LEN);
	copy = rte_pcapng_copy(port_id, 0, m, c->mp, UINT32_MAX,
			       rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000,
			       RTE_PCAPNG_DIRECTION_UNKNOWN);
	capture_clock_ready = copy != NULL;
	ret = copy != NULL ? 0 : -ENOMEM;
	rte_pktmbuf_free(copy);
	rte_pktmbuf_free(m);
unlock:
	rte_spinlock_unlock(&capture_clock_lock);
	return ret;
}

int
droce_port_capture_start(struct droce_port *p, const char *path)
{
	static uint32_t seq;
	char name[RTE_MEMPOOL_NAMESIZE], app[64];
	struct droce_capture *c;
	int fd, ret;

	if (p == NULL || path == NULL)
		return -EINVAL;
	pthread_mutex_lock(&p->capture_lock);
	if (__atomic_load_n(&p->capture, __ATOMIC_ACQUIRE) != NULL) {
		ret = -EBUSY;
		goto unlock;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		ret = -ENOMEM;
		goto unlock;
	}
	/* Several captures over a port's life: each pool needs its own name. */
	snprintf(name, sizeof(name), "droce_cap%u_%u", p->port_id,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	/* One segment holds a whole frame and the pcapng block around it:
	 * rte_pcapng_write_packets() takes no chains. */
	c->mp = rte_pktmbuf_pool_create(name, CAPTURE_POOL_SIZE, 0, 0,
					rte_pcapng_mbuf_size(DROCE_PORT_DATA_ROOM),
					rte_eth_dev_socket_id(p->port_id));
	if (c->mp == NULL) {
		ret = -rte_errno;
		goto fail;
	}
	ret = capture_clock_init(c, p->port_id);
	if (ret != 0)
		goto fail;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	/* Writes the section header and one interface block per ethdev. */
	snprintf(app, sizeof(app), "droce (%s)", rte_version());
	c->pcapng = rte_pcapng_fdopen(fd, NULL, NULL, app, NULL);
	if (c->pcapng == NULL) {
		ret = -rte_errno;
		close(fd);
		goto fail;
	}
	c->start_ns = capture_now_ns();
	__atomic_store_n(&p->capture, c, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->capture_lock);
	return 0;
fail:
	capture_free(c);
unlock:
	pthread_mutex_unlock(&p->capture_lock);
	return ret;
}

void
droce_port_capture_stop(struct droce_port *p)
{
	struct droce_capture *c;

	pthread_mutex_lock(&p->capture_lock);
	c = __atomic_exchange_n(&p->capture, NULL, __ATOMIC_SEQ_CST);
	if (c != NULL) {
		while (__atomic_load_n(&p->capture_users, __ATOMIC_SEQ_CST) != 0)
			rte_pause();
		/* It converts a timestamp of its own. */
		rte_spinlock_lock(&capture_clock_lock);
		rte_pcapng_write_stats(c->pcapng, p->port_id, NULL, c->start_ns,
				       capture_now_ns(), c->written + c->dropped,
				       c->dropped);
		rte_spinlock_unlock(&capture_clock_lock);
		capture_free(c);
	}
	pthread_mutex_unlock(&p->capture_lock);
}

struct droce_capture *
droce_capture_enter(struct droce_port *p)
{
	struct droce_capture *c;

	/* The common case, no capture, costs one plain load. */
	if (likely(__atomic_load_n(&p->capture, __ATOMIC_RELAXED) == NULL))
		return NULL;
	__atomic_fetch_add(&p->capture_users, 1, __ATOMIC_SEQ_CST);
	c = __atomic_load_n(&p->capture, __ATOMIC_SEQ_CST);
	if (c == NULL)
		__atomic_fetch_sub(&p->capture_users, 1, __ATOMIC_RELEASE);
	return c;
}

void
droce_capture_exit(struct droce_port *p, struct droce_capture *c)
{
	if (c != NULL)
		__atomic_fetch_sub(&p->capture_users, 1, __ATOMIC_RELEASE);
}

void
droce_capture_copy(struct droce_capture *c, uint16_t port_id,
		   struct rte_mbuf **pkts, uint16_t n,
		   enum rte_pcapng_direction dir, struct rte_mbuf **copies)
{
	uint64_t now;
	uint16_t i;

	rte_spinlock_lock(&capture_clock_lock);
	now = rte_get_tsc_cycles();
	for (i = 0; i < n; i++) {
		copies[i] = rte_pcapng_copy(port_id, 0, pkts[i], c->mp,
					    DROCE_PORT_DATA_ROOM, now, dir);
		if (copies[i] == NULL)
			__atomic_fetch_add(&c->dropped, 1, __ATOMIC_RELAXED);
	}
	rte_spinlock_unlock(&capture_clock_lock);
}

void
droce_capture_write(struct droce_capture *c, struct rte_mbuf **copies, uint16_t n)
{
	uint16_t i, k = 0;

	for (i = 0; i < n; i++)
		if (copies[i] != NULL)
			copies[k++] = copies[i];
	if (k == 0)
		return;
	/* DPDK 22.11's writer does not free what it wrote (dpdk-dumpcap frees
	 * after it too): the copies go back to the pool here. */
	if (rte_pcapng_write_packets(c->pcapng, copies, k) < 0)
		__atomic_fetch_add(&c->dropped, k, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&c->written, k, __ATOMIC_RELAXED);
	rte_pktmbuf_free_bulk(copies, k);
}

void
droce_capture_frames(struct droce_capture *c, uint16_t port_id,
		     struct rte_mbuf **pkts, uint16_t n,
		     enum rte_pcapng_direction dir)
{
	struct rte_mbuf *copies[DROCE_PORT_BURST];
	uint16_t i, k;

	for (i = 0; i < n; i += k) {
		k = RTE_MIN(n - i, DROCE_PORT_BURST);
		droce_capture_copy(c, port_id, pkts + i, k, dir, copies);
		droce_capture_write(c, copies, k);
	}
}
