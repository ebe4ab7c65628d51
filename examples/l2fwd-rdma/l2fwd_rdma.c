/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l2fwd-rdma: an L2 forwarder that also serves RDMA on one of its ports.
 *
 * Every frame port A receives goes out on port B and the other way
 * round, as DPDK's l2fwd does; but port A is shared with droce. The
 * application configures and starts both ports itself, keeps RX/TX queue
 * 0 of A for its forwarding and gives queue 1 to droce
 * (droce_dev_attach() with .shared = true, .queues = { 1 }). What A
 * receives on queue 0 is offered to droce first (droce_dev_rx_burst()):
 * droce keeps RoCEv2 for its address, ARP for its address and the like,
 * and hands back the rest, which is forwarded. droce sends on queue 1.
 * On ports whose PMD takes rte_flow rules, droce's driver steers RoCEv2
 * to queue 1 directly.
 *
 * On the droce device an RC echo server (rc_echo.c) answers rdma-core's
 * ibv_rc_pingpong: run it as the client against droce's address.
 *
 * Usage: l2fwd-rdma [EAL options] -- --ip A.B.C.D/LEN [-a PORT] [-b PORT]
 *                   [-p TCP_PORT] [-s MSG_SIZE] [-t SECONDS]
 *   -a, -b   the ethdevs A (shared with droce) and B, by number or name
 *            (net_memif0, ...); 0 and 1
 *   --ip     droce's IPv4 address on A (GID index 1)
 *   -p       the echo server's TCP port (18515, ibv_rc_pingpong's)
 *   -s       the message size the clients use (4096, ibv_rc_pingpong's)
 *   -t       stop after this many seconds (0: at SIGINT or SIGTERM)
 * Prints the forwarding, droce and echo counters when it stops.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <droce.h>

#include "rc_echo.h"

#define BURST 32
#define NB_DESC 512
#define NB_MBUFS 8191
/* The queue pair of A that droce gets; the application keeps queue 0. */
#define DROCE_QUEUE 1
/* Empty polls in a row before the loop starts napping: an example should
 * not keep a core busy while nothing happens. */
#define IDLE_POLLS 1024
#define IDLE_NAP_US 20

static volatile bool quit;

static struct {
	uint16_t port_a, port_b;
	uint32_t ipv4;
	uint8_t prefix;
	uint16_t tcp_port;
	uint32_t msg_size;
	unsigned seconds;
} opt = { .port_a = 0, .port_b = 1, .tcp_port = 18515, .msg_size = 4096 };

/* Held around each burst on a port, as droce's engine holds it on its
 * queues: a memif port's rings go away under a burst when its peer
 * leaves, unless the burst holds this (NULL: the port needs none). */
static rte_spinlock_t *burst_lock[RTE_MAX_ETHPORTS];

static uint16_t
port_rx(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return droce_port_ethdev_rx_burst(burst_lock[port], port, 0, pkts, n);
}

static uint16_t
port_tx(uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	return droce_port_ethdev_tx_burst(burst_lock[port], port, 0, pkts, n);
}

/* Frames one way: forwarded, and dropped because the other port's TX
 * queue was full. */
struct fwd_stats {
	uint64_t forwarded, dropped;
};

static void
on_signal(int sig __rte_unused)
{
	quit = true;
}

static int
usage(const char *prog)
{
	fprintf(stderr, "usage: %s [EAL options] -- --ip A.B.C.D/LEN [-a PORT] [-b PORT] "
		"[-p TCP_PORT] [-s MSG_SIZE] [-t SECONDS]\n", prog);
	return -1;
}

/* An ethdev by name, or by number. */
static int
port_arg(const char *arg, uint16_t *port)
{
	char *end;
	unsigned long n;

	if (rte_eth_dev_get_port_by_name(arg, port) == 0)
		return 0;
	n = strtoul(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || !rte_eth_dev_is_valid_port((uint16_t)n))
		return -1;
	*port = (uint16_t)n;
	return 0;
}

static int
parse_args(int argc, char **argv)
{
	static const struct option lo[] = { { "ip", required_argument, NULL, 'i' }, { 0 } };
	struct in_addr in;
	char *slash;
	int c;

	while ((c = getopt_long(argc, argv, "a:b:p:s:t:", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
		case 'b':
			if (port_arg(optarg, c == 'a' ? &opt.port_a : &opt.port_b) != 0)
				return usage(argv[0]);
			break;
		case 'p': opt.tcp_port = (uint16_t)atoi(optarg); break;
		case 's': opt.msg_size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': opt.seconds = (unsigned)atoi(optarg); break;
		case 'i':
			slash = strchr(optarg, '/');
			if (slash == NULL)
				return usage(argv[0]);
			*slash = '\0';
			if (inet_pton(AF_INET, optarg, &in) != 1)
				return usage(argv[0]);
			opt.ipv4 = ntohl(in.s_addr);
			opt.prefix = (uint8_t)atoi(slash + 1);
			break;
		default:
			return usage(argv[0]);
		}
	}
	return opt.ipv4 != 0 && opt.msg_size != 0 ? 0 : usage(argv[0]);
}

/*
 * Configure and start @p port with @p nb_queues RX/TX queue pairs, all
 * receiving into @p mp, promiscuous (a forwarder takes every frame).
 * Queue DROCE_QUEUE of A is set up here too, but is droce's from now on.
 */
static int
port_start(uint16_t port, uint16_t nb_queues, struct rte_mempool *mp)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t q, nb_rxd = NB_DESC, nb_txd = NB_DESC;
	int ret, socket = rte_eth_dev_socket_id(port);

	ret = rte_eth_dev_info_get(port, &info);
	if (ret != 0)
		return ret;
	/* droce sends frames whose payload is chained behind the headers. */
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	ret = rte_eth_dev_configure(port, nb_queues, nb_queues, &conf);
	if (ret == 0)
		ret = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	for (q = 0; ret == 0 && q < nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, socket, NULL, mp);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port, q, nb_txd, socket, NULL);
	}
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret == 0) {
		ret = rte_eth_promiscuous_enable(port);
		if (ret == -ENOTSUP)
			ret = 0;
	}
	return ret;
}

/* Attach droce to queue DROCE_QUEUE of A. @return its device index, or -1. */
static int
droce_start(void)
{
	struct droce_port_conf conf = {
		.port_id = opt.port_a, .ipv4 = opt.ipv4, .ipv4_prefix = opt.prefix,
		.mtu = 1024, .nb_queues = 1, .shared = true, .queues = { DROCE_QUEUE },
	};
	unsigned index;
	int ret;

	droce_cc_conf_default(&conf.cc);
	ret = droce_dev_attach(&conf, &index);
	if (ret == 0)
		/* droce's engine on a thread of its own that sleeps when idle. */
		ret = droce_dev_run_thread(index, 100);
	if (ret != 0) {
		fprintf(stderr, "l2fwd-rdma: droce on port %u: %s\n", opt.port_a, strerror(-ret));
		return -1;
	}
	return (int)index;
}

/* Send @p n frames on queue 0 of @p port; free what does not fit. */
static void
fwd_send(uint16_t port, struct rte_mbuf **pkts, uint16_t n, struct fwd_stats *st)
{
	uint16_t sent = port_tx(port, pkts, n);

	st->forwarded += sent;
	st->dropped += n - sent;
	rte_pktmbuf_free_bulk(pkts + sent, n - sent);
}

/* The forwarding loop, on the main lcore, until quit. */
static void
fwd_loop(unsigned dev, struct fwd_stats *a_to_b, struct fwd_stats *b_to_a)
{
	uint64_t end = opt.seconds ? rte_get_timer_cycles() + opt.seconds * rte_get_timer_hz() : 0;
	struct rte_mbuf *pkts[BURST];
	unsigned idle = 0;
	uint16_t n, back;

	while (!quit && (end == 0 || rte_get_timer_cycles() < end)) {
		n = port_rx(opt.port_a, pkts, BURST);
		/* droce takes its frames; the rest is the forwarder's. */
		back = n != 0 ? droce_dev_rx_burst(dev, pkts, n) : 0;
		if (back != 0)
			fwd_send(opt.port_b, pkts, back, a_to_b);
		idle = n != 0 ? 0 : idle + 1;
		n = port_rx(opt.port_b, pkts, BURST);
		if (n != 0) {
			fwd_send(opt.port_a, pkts, n, b_to_a);
			idle = 0;
		}
		if (idle > IDLE_POLLS)
			rte_delay_us_sleep(IDLE_NAP_US);
	}
}

struct echo_arg {
	struct rc_echo_conf conf;
	struct rc_echo_stats stats;
	int ret;
};

static void *
echo_thread(void *arg)
{
	struct echo_arg *e = arg;

	e->ret = rc_echo_run(&e->conf, &quit, &e->stats);
	return NULL;
}

static void
print_stats(unsigned dev, const struct fwd_stats *a_to_b, const struct fwd_stats *b_to_a,
	    const struct rc_echo_stats *echo)
{
	struct droce_port_stats s;

	droce_port_stats_get(droce_dev_port(dev), &s);
	printf("l2fwd-rdma: A->B forwarded %" PRIu64 " dropped %" PRIu64
	       ", B->A forwarded %" PRIu64 " dropped %" PRIu64 "\n",
	       a_to_b->forwarded, a_to_b->dropped, b_to_a->forwarded, b_to_a->dropped);
	printf("l2fwd-rdma: droce took %" PRIu64 " frames from the application "
	       "(copied %" PRIu64 ", dropped %" PRIu64 "), handed back %" PRIu64
	       "; RoCE frames %" PRIu64 ", ARP/ND %" PRIu64 ", sent %" PRIu64 "\n",
	       s.rx_app_taken, s.rx_app_copied, s.rx_app_drops, s.rx_app_returned,
	       s.rx_roce, s.rx_arp, s.tx_frames);
	printf("l2fwd-rdma: rc_echo: %" PRIu64 " sessions, %" PRIu64 " messages echoed, %"
	       PRIu64 " errors\n", echo->sessions, echo->messages, echo->errors);
}

int
main(int argc, char **argv)
{
	struct fwd_stats a_to_b = { 0 }, b_to_a = { 0 };
	struct echo_arg echo = { .conf = { .gid_index = 1 } };
	struct rte_mempool *mp;
	pthread_t tid;
	int ret, dev;

	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		return EXIT_FAILURE;
	if (parse_args(argc - ret, argv + ret) != 0)
		return EXIT_FAILURE;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Room for droce's parse result in every mbuf: droce takes the
	 * frames the forwarder hands it without a copy. */
	mp = rte_pktmbuf_pool_create("l2fwd_rdma", NB_MBUFS, 256, DROCE_MBUF_PRIV_SIZE,
				     RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (mp == NULL || port_start(opt.port_a, 2, mp) != 0 || port_start(opt.port_b, 1, mp) != 0) {
		fprintf(stderr, "l2fwd-rdma: cannot start ports %u and %u\n", opt.port_a, opt.port_b);
		return EXIT_FAILURE;
	}
	burst_lock[opt.port_a] = droce_port_ethdev_burst_lock(opt.port_a);
	burst_lock[opt.port_b] = droce_port_ethdev_burst_lock(opt.port_b);
	dev = droce_start();
	if (dev < 0)
		return EXIT_FAILURE;
	echo.conf.dev = droce_dev_ibv((unsigned)dev);
	echo.conf.tcp_port = opt.tcp_port;
	echo.conf.msg_size = opt.msg_size;
	if (pthread_create(&tid, NULL, echo_thread, &echo) != 0)
		return EXIT_FAILURE;
	printf("l2fwd-rdma: forwarding between ports %u and %u; %s serves RDMA on port %u "
	       "queue %u, echo server on TCP port %u\n", opt.port_a, opt.port_b,
	       ibv_get_device_name(echo.conf.dev), opt.port_a, DROCE_QUEUE, opt.tcp_port);
	fflush(stdout);
	fwd_loop((unsigned)dev, &a_to_b, &b_to_a);
	quit = true;
	pthread_join(tid, NULL);
	print_stats((unsigned)dev, &a_to_b, &b_to_a, &echo.stats);
	/* droce first: its engine polls A's queue 1 until it is detached. */
	ret = droce_dev_detach((unsigned)dev);
	if (ret != 0)
		fprintf(stderr, "l2fwd-rdma: detach: %s\n", strerror(-ret));
	rte_eth_dev_stop(opt.port_a);
	rte_eth_dev_stop(opt.port_b);
	rte_eal_cleanup();
	return echo.ret == 0 && ret == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
