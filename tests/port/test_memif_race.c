/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A memif peer that disconnects while droce's engine is inside a burst
 * (lib/port/droce_port_memif.c): DPDK 22.11's memif unmaps the rings on
 * the EAL's interrupt thread while eth_memif_tx() still copies into them.
 *
 * The race is made certain, not waited for: a thread sends 1 KiB frames
 * through droce_port_tx() on a memif server, a signal stops it inside
 * librte_net_memif's code for 300 ms, and meanwhile the client's ethdev
 * stops, which makes the server disconnect. With droce's burst lock the
 * disconnection waits for the burst and the thread goes on; without it
 * (the lock taken out of the port) the thread faults when it resumes.
 * Each test runs in its own process (Check's fork), with its own EAL.
 */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "droce_port.h"
#include "droce_port_priv.h"

#define CYCLES 4
#define BURST 32
#define FRAME 1024
/* How long a stopped burst stays stopped: long enough for the client's
 * stop and the server's disconnection (a few milliseconds). */
#define HOLD_NS 300000000L

static struct droce_port *server, *client;
/* memif's code: where the signal must find the sending thread. */
static uintptr_t memif_text_lo, memif_text_hi;
/* Set by the sending thread around droce_port_tx() on the server. */
static volatile sig_atomic_t in_server_tx;
/* Shared by the main thread, the sender and its signal handler: atomics
 * (lock-free, so safe in the handler too). */
static int hits;
static bool client_up, stop_sender;

static int
memif_text_find(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = (uintptr_t)arg;

	(void)size;
	if (info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			memif_text_lo = info->dlpi_addr + ph->p_vaddr;
			memif_text_hi = memif_text_lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* The code of the PMD behind @p port's TX burst. */
static void
memif_text_locate(uint16_t port)
{
	Dl_info dl;

	ck_assert(dladdr((void *)rte_eth_fp_ops[port].tx_pkt_burst, &dl) != 0);
	ck_assert_ptr_nonnull(strstr(dl.dli_fname, "memif"));
	dl_iterate_phdr(memif_text_find, dl.dli_fbase);
	ck_assert(memif_text_hi > memif_text_lo);
}

/* SIGUSR1: when it lands inside the server's memif burst, hold the thread
 * there (async-signal-safe: a sleep and a flag). */
static void
on_sigusr1(int sig, siginfo_t *si, void *uc_)
{
	const ucontext_t *uc = uc_;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	struct timespec hold = { .tv_nsec = HOLD_NS };

	(void)sig;
	(void)si;
	if (!in_server_tx || pc < memif_text_lo || pc >= memif_text_hi)
		return;
	__atomic_fetch_add(&hits, 1, __ATOMIC_RELEASE);
	nanosleep(&hold, NULL);
}

/* The engine's part: the server sends, the client's frames are drained. */
static void *
sender(void *arg)
{
	struct rte_mempool *mp = droce_port_mempool(server);
	struct rte_mbuf *pkts[BURST];

	(void)arg;
	while (!__atomic_load_n(&stop_sender, __ATOMIC_ACQUIRE)) {
		uint16_t k;

		if (rte_pktmbuf_alloc_bulk(mp, pkts, BURST) != 0)
			continue;
		for (int i = 0; i < BURST; i++) {
			char *d = rte_pktmbuf_append(pkts[i], FRAME);

			memset(d, 0, FRAME);
			d[0] = 0x02;  /* a unicast destination */
		}
		in_server_tx = 1;
		k = droce_port_tx(server, 0, pkts, BURST);
		in_server_tx = 0;
		rte_pktmbuf_free_bulk(pkts + k, BURST - k);
		if (__atomic_load_n(&client_up, __ATOMIC_ACQUIRE)) {
			struct rte_mbuf *rx[BURST];
			uint16_t n = droce_port_rx(client, 0, rx, BURST, rte_get_tsc_cycles());

			rte_pktmbuf_free_bulk(rx, n);
		}
	}
	return NULL;
}

static bool
ethdev_link_up(uint16_t port)
{
	struct rte_eth_link link;

	return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
}

/* Wait up to 5 s until both ethdevs' links are @p up. */
static void
links_wait(bool up)
{
	for (int ms = 0; ms < 5000; ms++) {
		if (ethdev_link_up(server->port_id) == up &&
		    (!up || ethdev_link_up(client->port_id)))
			return;
		rte_delay_us_sleep(1000);
	}
	ck_abort_msg("the memif link did not go %s", up ? "up" : "down");
}

static uint16_t
memif_create(const char *name, const char *role, const char *sock)
{
	char args[256];
	uint16_t port;

	snprintf(args, sizeof(args), "%s,role=%s,socket=%s,socket-abstract=no", name, role, sock);
	ck_assert_int_eq(rte_dev_probe(args), 0);
	ck_assert_int_eq(rte_eth_dev_get_port_by_name(name, &port), 0);
	return port;
}

/*
 * CYCLES times: catch the sender inside the server's memif burst, stop
 * the client's ethdev meanwhile, let the server's disconnection run, then
 * start the client again. @p guarded: with droce's burst lock.
 */
static void
disconnect_during_bursts(bool guarded)
{
	char *argv[] = { "test_memif_race", "-l", "0", "--no-huge", "-m", "256", "--no-shconf",
			 "--no-pci", "--no-telemetry", "--log-level=pmd.net.memif:error" };
	struct sigaction sa = { .sa_sigaction = on_sigusr1, .sa_flags = SA_SIGINFO };
	char sock[64];
	struct droce_port_conf cs = { .ipv4 = RTE_IPV4(10, 0, 0, 1), .ipv4_prefix = 24,
				      .mtu = 1024, .nb_mbufs = 1023 };
	struct droce_port_conf cc = { .ipv4 = RTE_IPV4(10, 0, 0, 2), .ipv4_prefix = 24,
				      .mtu = 1024, .nb_mbufs = 1023 };
	pthread_t t;

	ck_assert_int_ge(rte_eal_init(RTE_DIM(argv), argv), 0);
	snprintf(sock, sizeof(sock), "/tmp/droce-test-memif-race-%d.sock", (int)getpid());
	/* Left by an earlier run whose process had our PID (one that did not
	 * get to its unlink()): memif's server will not bind over it. */
	unlink(sock);
	cs.port_id = memif_create("net_memif0", "server", sock);
	cc.port_id = memif_create("net_memif1", "client", sock);
	ck_assert_int_eq(droce_port_attach(&cs, &server), 0);
	ck_assert_int_eq(droce_port_attach(&cc, &client), 0);
	/* Both ends found their lock (the private layouts check out). */
	ck_assert_ptr_nonnull(server->burst_lock);
	ck_assert_ptr_nonnull(client->burst_lock);
	if (!guarded)
		server->burst_lock = NULL;
	links_wait(true);
	__atomic_store_n(&client_up, true, __ATOMIC_RELEASE);
	memif_text_locate(server->port_id);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, sender, NULL), 0);

	for (int c = 0; c < CYCLES; c++) {
		int before = __atomic_load_n(&hits, __ATOMIC_ACQUIRE), tries;

		for (tries = 0; __atomic_load_n(&hits, __ATOMIC_ACQUIRE) == before && tries < 50000;
		     tries++) {
			pthread_kill(t, SIGUSR1);
			rte_delay_us_sleep(200);
		}
		ck_assert_msg(__atomic_load_n(&hits, __ATOMIC_ACQUIRE) != before, "the signal never found the sender inside memif");
		/* The sender is held inside the burst: the client goes. */
		__atomic_store_n(&client_up, false, __ATOMIC_RELEASE);
		droce_port_ethdev_stop(client->port_id);
		links_wait(false);
		/* The sender went on (it would have faulted by now). */
		rte_delay_us_sleep(HOLD_NS / 1000 + 100000);
		ck_assert_int_eq(rte_eth_dev_start(client->port_id), 0);
		links_wait(true);
		__atomic_store_n(&client_up, true, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&stop_sender, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	ck_assert_int_eq(__atomic_load_n(&hits, __ATOMIC_ACQUIRE), CYCLES);
	droce_port_detach(client);
	droce_port_detach(server);
	unlink(sock);
	/* No rte_eal_cleanup(): the interrupt thread may still be in a memif
	 * port's source (test_port.c says more). */
}

START_TEST(test_guarded)
{
	disconnect_during_bursts(true);
}
END_TEST

/* Shows that the test catches the race: without the lock, it faults. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
START_TEST(test_unguarded_faults)
{
	disconnect_during_bursts(false);
}
END_TEST
#endif

int
main(void)
{
	Suite *s = suite_create("memif_race");
	TCase *tc = tcase_create("memif_race");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_guarded);
	/* A sanitizer catches the fault itself and exits instead. */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	tcase_add_test_raise_signal(tc, test_unguarded_faults, SIGSEGV);
#endif
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* Each test in a process of its own: one EAL each. */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
