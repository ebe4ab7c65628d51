/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port's link: starting the ethdev, again and again while it cannot
 * start (a memif client whose server does not listen yet), restarting one
 * that does not reconnect by itself (a memif client turned away by its
 * server), the state the verbs port reports, and the callback that turns
 * changes into events.
 *
 * Threads: the engine (droce_port_tick(), RX, TX) starts the ethdev and
 * writes the link fields; any thread reads them in droce_port_link_up().
 * A memif ethdev stops on the EAL's interrupt thread
 * (droce_port_ethdev_stop()).
 */
#include <inttypes.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_interrupts.h>

#include "droce_port_priv.h"
#include "droce_tsan.h"

/* How often the link is looked at. */
#define LINK_POLL_MS 100
/* A port whose ethdev did not start tries again after 100 ms, then twice
 * as long each time up to a second: each try may log the PMD's error. */
#define START_RETRY_MIN_MS 100u
#define START_RETRY_MAX_MS 1000u
/* A started ethdev that does not reconnect by itself is restarted when its
 * link stays down this long, twice as long after each restart that did
 * not bring it up, up to RELINK_MAX_MS. Not shorter: memif's handshake
 * runs on the EAL's interrupt thread, which takes over a second under
 * ThreadSanitizer, and a client that restarts in the middle of it made
 * DPDK 22.11's memif server panic in that thread. */
#define RELINK_MIN_MS 2000u
#define RELINK_MAX_MS 8000u

/* How long a stop waits for the EAL's interrupt thread (which runs
 * memif's handshakes, over a second each under ThreadSanitizer). */
#define INTR_STOP_WAIT_MS 5000u

/* A stop that runs on the EAL's interrupt thread, and says when it ran. */
struct intr_stop {
	uint16_t port_id;
	int done;
};

static void
intr_stop(void *arg)
{
	struct intr_stop *s = arg;

	/* The alarm list's lock, in DPDK, is not seen by TSan. */
	DROCE_TSAN_ACQUIRE(s);
	rte_eth_dev_stop(s->port_id);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

/*
 * DPDK 22.11's memif tears its control channel down in two places: in
 * its stop, and in the handler of the peer's messages, which runs on the
 * EAL's interrupt thread when the peer disconnects. A stop while the peer
 * disconnects (two processes that end together) ran both at once and
 * freed the same memory twice: a SEGV in the EAL's heap on that thread
 * (droce-perf's server at exit, under ASan). So a memif ethdev stops on
 * that thread, in an alarm's callback, between two of memif's handlers.
 */
void
droce_port_ethdev_stop(uint16_t port_id)
{
	struct intr_stop s = { .port_id = port_id };
	struct rte_eth_dev_info info;
	uint64_t deadline;

	DROCE_TSAN_RELEASE(&s);
	if (!droce_port_is_memif(port_id, &info) || rte_thread_is_intr() ||
	    rte_eal_alarm_set(1, intr_stop, &s) != 0) {
		rte_eth_dev_stop(port_id);
		return;
	}
	deadline = rte_get_timer_cycles() + rte_get_timer_hz() * INTR_STOP_WAIT_MS / 1000;
	while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE)) {
		/* A callback that already runs is waited for by the cancel. */
		if (rte_get_timer_cycles() > deadline && rte_eal_alarm_cancel(intr_stop, &s) > 0) {
			DROCE_PORT_LOG(WARNING, "port %u: the EAL's interrupt thread did not "
				       "run the stop in %u ms: stopping here", port_id,
				       INTR_STOP_WAIT_MS);
			rte_eth_dev_stop(port_id);
			return;
		}
		rte_delay_us_sleep(100);
	}
}

/* rte_eth_dev_start() and the driver's own start; on a shared ethdev,
 * which the application started, the driver's start alone. */
static int
port_ethdev_start(struct droce_port *p)
{
	int ret = p->shared ? 0 : rte_eth_dev_start(p->port_id);

	if (ret != 0)
		return ret;
	ret = p->drv->start(&p->drv_ctx);
	if (ret != 0 && !p->shared)
		droce_port_ethdev_stop(p->port_id);
	return ret;
}

int
droce_port_link_start(struct droce_port *p, const struct droce_port_conf *conf)
{
	int ret;

	/*
	 * Restarted while its link stays down: a memif client, which stays
	 * disconnected once its peer turned it away, in DPDK 22.11 (when it
	 * connects while the server's ethdev exists but is not started yet,
	 * the server answers "ID not found" and the client gives up, as it
	 * does when the server goes away; a server listens again by itself).
	 * Not a shared ethdev: the application's to stop and start.
	 */
	p->relink = !p->shared && droce_port_memif_is_client(p->port_id);
	p->relink_ms = RELINK_MIN_MS;
	p->link_up = conf->link_up;
	p->link_wait_tsc = (uint64_t)conf->link_wait_ms * rte_get_tsc_hz() / 1000;
	p->link_last = -1;
	p->down_since = rte_get_tsc_cycles();
	ret = port_ethdev_start(p);
	if (ret == 0) {
		p->started = true;
		return 0;
	}
	if (p->shared)
		return ret;
	/*
	 * A memif client whose server is not listening yet fails to start
	 * ("Failed to connect socket"), and DPDK 22.11's memif does not try
	 * again. The port comes up with its link down, and the engine starts
	 * the ethdev when it can (droce_port_tick()).
	 */
	DROCE_PORT_LOG(WARNING, "port %u: the ethdev does not start (%s): "
		       "the link is down until it does (tried again every %u ms at most)",
		       p->port_id, rte_strerror(-ret), START_RETRY_MAX_MS);
	p->start_retry_ms = START_RETRY_MIN_MS;
	p->start_next_tsc = p->down_since + p->tsc_hz * START_RETRY_MIN_MS / 1000;
	return 0;
}

bool
droce_port_started(const struct droce_port *p)
{
	return __atomic_load_n(&p->started, __ATOMIC_ACQUIRE);
}

/* The ethdev runs and says its link is up. */
static bool
port_ethdev_link_up(const struct droce_port *p)
{
	struct rte_eth_link link;

	return droce_port_started(p) && rte_eth_link_get_nowait(p->port_id, &link) == 0 &&
	       link.link_status == RTE_ETH_LINK_UP;
}

bool
droce_port_link_up(const struct droce_port *p)
{
	uint64_t since;

	if (port_ethdev_link_up(p))
		return true;
	if (!p->link_up)
		return false;
	/* link = up: active while the peer is awaited, for link_wait_ms. */
	since = __atomic_load_n(&p->down_since, __ATOMIC_RELAXED);
	return p->link_wait_tsc == 0 || since == 0 ||
	       rte_get_tsc_cycles() - since < p->link_wait_tsc;
}

void
droce_port_on_link(struct droce_port *p, droce_port_link_cb_t cb, void *arg)
{
	p->link_cb_arg = arg;
	__atomic_store_n(&p->link_cb, cb, __ATOMIC_RELEASE);
}

/*
 * Every LINK_POLL_MS: start the ethdev if it is not running and its retry
 * is due, note since when its link is down, and tell the callback when the
 * state the verbs port reports changes.
 */
void
droce_port_link_watch(struct droce_port *p, uint64_t now)
{
	droce_port_link_cb_t cb;
	int8_t up;

	if (now < p->link_next_tsc)
		return;
	p->link_next_tsc = now + p->tsc_hz * LINK_POLL_MS / 1000;
	/* Stopped first, then started below like an ethdev that never did.
	 * Its RX and TX bursts return at once meanwhile: no link. */
	if (p->relink && p->started && p->down_since != 0 &&
	    now - p->down_since >= p->tsc_hz * p->relink_ms / 1000) {
		DROCE_PORT_LOG(NOTICE, "port %u: no link for %u ms: restarting the ethdev",
			       p->port_id, p->relink_ms);
		p->relink_ms = RTE_MIN(2 * p->relink_ms, RELINK_MAX_MS);
		__atomic_store_n(&p->started, false, __ATOMIC_RELEASE);
		if (p->drv->stop != NULL)
			p->drv->stop(&p->drv_ctx);
		droce_port_ethdev_stop(p->port_id);
		p->start_retry_ms = START_RETRY_MIN_MS;
		p->start_next_tsc = now;
		p->down_since = now;
	}
	if (!p->started && now >= p->start_next_tsc) {
		if (port_ethdev_start(p) == 0) {
			__atomic_store_n(&p->started, true, __ATOMIC_RELEASE);
			/* The link's handshake starts now: a restart waits
			 * relink_ms from here, not from the first try. */
			__atomic_store_n(&p->down_since, now, __ATOMIC_RELAXED);
			DROCE_PORT_LOG(NOTICE, "port %u: the ethdev started", p->port_id);
		} else {
			p->start_retry_ms = RTE_MIN(2 * p->start_retry_ms, START_RETRY_MAX_MS);
			p->start_next_tsc = now + p->tsc_hz * p->start_retry_ms / 1000;
		}
	}
	if (port_ethdev_link_up(p)) {
		__atomic_store_n(&p->down_since, 0, __ATOMIC_RELAXED);
		p->relink_ms = RELINK_MIN_MS;
	} else if (p->down_since == 0)
		__atomic_store_n(&p->down_since, now, __ATOMIC_RELAXED);
	up = droce_port_link_up(p);
	if (p->link_up && p->link_wait_tsc != 0 && !up && p->link_last == 1)
		DROCE_PORT_LOG(ERR, "port %u: no link for %" PRIu64 " ms: the port is down",
			       p->port_id, (now - p->down_since) * 1000 / p->tsc_hz);
	cb = __atomic_load_n(&p->link_cb, __ATOMIC_ACQUIRE);
	if (cb != NULL && p->link_last >= 0 && up != p->link_last)
		cb(p->link_cb_arg, up);
	p->link_last = up;
}
