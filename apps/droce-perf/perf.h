/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-perf: perftest's bandwidth and latency tests (ib_write_bw,
 * ib_send_lat, ...) as one DPDK application on a droce port, plus the
 * same traffic as plain Ethernet frames on the bare port (--raw-l2), so
 * every RDMA figure can be read as a fraction of what the port carries.
 *
 * The files, one concern each:
 *   perf_main.c     EAL, the port, the run over every message size
 *   perf_options.c  command line (perftest's options and meanings)
 *   perf_oob.c      out-of-band exchange with the peer over TCP
 *   perf_rdma.c     verbs resources, connection and the RDMA tests
 *   perf_raw.c      the raw-L2 tests
 *   perf_report.c   statistics, the result table, JSON, progress
 *   perf_demo.c     --demo: a server and a client over memif, a summary
 */
#ifndef DROCE_PERF_H
#define DROCE_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PERF_NAME "droce-perf"

enum perf_test { PERF_WRITE, PERF_SEND, PERF_READ, PERF_ATOMIC };
enum perf_mode { PERF_BW, PERF_LAT };
/* perftest's -c values; only RC runs on droce today. */
enum perf_conn { PERF_RC, PERF_UC, PERF_UD, PERF_XRC, PERF_DC };

/* perftest's limits and defaults (perftest_parameters.h). */
#define PERF_DEF_TCP_PORT 18515
#define PERF_DEF_SIZE_BW 65536
#define PERF_DEF_SIZE_LAT 2
#define PERF_DEF_ITERS 1000
#define PERF_DEF_ITERS_WRITE_BW 5000
#define PERF_DEF_TX_BW 128
#define PERF_DEF_TX_LAT 1
#define PERF_DEF_RX_SEND 512
#define PERF_DEF_CQ_MOD 100
#define PERF_DEF_MARGIN 2.0
#define PERF_DEF_QP_TIMEOUT 14
#define PERF_DEF_INLINE_WRITE 220
#define PERF_DEF_INLINE_SEND 236
#define PERF_MAX_SIZE (1u << 23)
#define PERF_MIN_ITERS 5
#define PERF_MAX_ITERS 100000000
#define PERF_MAX_QPS 16384
/* --engines: at most a droce port's queues (DROCE_PORT_QUEUES_MAX). */
#define PERF_MAX_ENGINES 16
/* --cc options at most (one per congestion-control key). */
#define PERF_MAX_CC 4
/* Above this many iterations the O(n^2) peak search is skipped (as perftest). */
#define PERF_PEAK_MAX_ITERS 20000

struct perf_opts {
	enum perf_test test;
	enum perf_mode mode;
	enum perf_conn conn;
	bool server;                 /* no address given */
	const char *server_addr;
	uint16_t tcp_port;
	uint64_t size;
	bool all_sizes;              /* -a: 2 .. 2^23 */
	uint64_t iters;
	double duration;             /* -D seconds; 0: -n iterations */
	double margin;               /* -f: seconds left out at each end of -D */
	unsigned qps;
	unsigned engines;            /* --engines: of the droce port, a power of two */
	unsigned tx_depth;
	unsigned rx_depth;
	unsigned cq_mod;
	unsigned post_list;
	int outs;                    /* -o: outstanding READ/atomic; 0: device max */
	int inline_size;             /* -I; -1: perftest's default for the test */
	bool atomic_cas;             /* -A CMP_AND_SWAP (default FETCH_AND_ADD) */
	bool bidir;
	bool gbits;                  /* --report_gbits */
	bool no_peak;
	bool json;
	bool histogram;              /* -H: print every latency sample, sorted */
	bool unsorted;               /* -U: print them in the order measured */
	unsigned mtu;                /* -m IB MTU; 0: the port's */
	int gid_index;
	unsigned qp_timeout;         /* -u: ACK timeout 4.096 us * 2^qp_timeout */
	bool raw;                    /* --raw-l2 */
	bool touch;                  /* --touch: raw-L2 as an ideal RoCE endpoint */
	bool no_td;                  /* --no-td: locked queues, no thread domain */
	/* the port under test */
	const char *ethdev;          /* name or id; NULL: the only one */
	uint32_t ipv4;               /* host order */
	uint8_t ipv4_prefix;
	bool mac_set;
	uint8_t mac[6];
	const char *capture;
	const char *cc[PERF_MAX_CC]; /* --cc: congestion-control keys of the port */
	unsigned nb_cc;
};

/* Parse perf options (what follows the EAL's "--"). @return 0, 1 after
 * --help (exit 0), or -1 after printing an error. */
int perf_options_parse(int argc, char **argv, struct perf_opts *o);
void perf_usage(FILE *f, const char *prog);
struct droce_port_conf;
/* The port's congestion control: droce's defaults, then each --cc in
 * order. @return 0, or -1 with a message on stderr. */
int perf_cc_apply(const struct perf_opts *o, struct droce_port_conf *conf);
const char *perf_test_name(enum perf_test t);   /* perftest's: "RDMA_Write", ... */
const char *perf_test_arg(enum perf_test t);    /* the --test value: "write", ... */
const char *perf_conn_name(enum perf_conn c);
/* The message sizes to run, in order, into @p sizes. @return how many. */
unsigned perf_sizes(const struct perf_opts *o, uint64_t sizes[24]);
/* Does the test report on this side (perftest: the server of a one-way
 * WRITE/READ/atomic test only serves)? */
bool perf_side_reports(const struct perf_opts *o);
/* READ and atomics report a full round trip, the ping-pongs half of one. */
unsigned perf_rtt_factor(const struct perf_opts *o);

/* ---- timing ---- */

/* The time base: the TSC, and the test's clock (-D windows, progress). */
struct perf_clock {
	uint64_t hz;
	uint64_t start;              /* tsc at the start barrier */
	uint64_t sample_start;       /* -D: measurement window */
	uint64_t sample_end;
	uint64_t end;                /* -D: stop here */
	uint64_t next_progress;
	uint64_t last_count;         /* progress and stall detection */
	uint64_t last_change;
};

void perf_clock_start(struct perf_clock *c, const struct perf_opts *o);
/* Call often from a test loop with the number of messages done so far:
 * prints a progress line to stderr once a second, and fails (returns -1)
 * after PERF_STALL_S seconds without progress. */
int perf_clock_tick(struct perf_clock *c, uint64_t now, uint64_t count);
#define PERF_STALL_S 10

/* The -D measurement window: the count of messages and the TSC when the
 * clock's sample window opens and closes. */
struct perf_window {
	uint64_t t0, t1, n0, n1;
	bool open, done;
};

void perf_window_update(struct perf_window *w, const struct perf_clock *c, uint64_t now,
			uint64_t count);
/* Close the window at @p now if the run ended before it did.
 * @return the seconds it spans (its messages: n1 - n0). */
double perf_window_finish(struct perf_window *w, const struct perf_clock *c, uint64_t now,
			  uint64_t count);

/* ---- cycles ---- */

/*
 * What one side spent on a measurement, in TSC cycles: its busy loop (the
 * droce engine's iterations that did work, or raw-L2's steps that moved
 * frames) and, of that, the time inside the ethdev's burst calls; and the
 * messages it sent. Iterations or steps longer than 20 us plus 2 us per
 * frame they moved are left out (and counted): the process lost its CPU in
 * them.
 */
/* droce's engine cycles per stage (DROCE_STAGE_CYCLES set in the
 * environment; docs/benchmarks.md). */
#define PERF_STAGES_MAX 16
struct perf_stages {
	unsigned n;                  /* 0: not measured */
	uint64_t cycles[PERF_STAGES_MAX];
};

/* droce's congestion control on one side (docs/congestion.md): its
 * engines' counters over the measurement, and its paced QPs' rates at
 * its end. */
struct perf_side_cc {
	bool known;                  /* a droce side (not raw-L2) */
	uint64_t ce_received, cnps_sent, cnps_received, rate_decreases, rate_increases, paced;
	unsigned paced_qps;          /* QPs that got a CNP: DCQCN paces them */
	uint64_t rate_min_mbps, rate_max_mbps; /* their current rates */
	uint64_t lowest_mbps;        /* the lowest rate any of them went down to */
};

struct perf_side_cycles {
	uint64_t busy;
	uint64_t rx_burst;
	uint64_t tx_burst;
	uint64_t sent;
	uint64_t skipped;            /* steps left out: the process lost its CPU in them */
	/* Frames the side's port sent and received in the measurement: the
	 * messages' own and the rest (ACKs, READ responses, ARP), which the
	 * busy cycles also pay for. */
	uint64_t tx_frames, rx_frames;
	struct perf_stages stages;
	struct perf_side_cc cc;
};

/* Both sides' cycles for one message size; per message and per byte they
 * are divided by every message of the test (both sides' sent). */
struct perf_cost {
	bool known;
	struct perf_side_cycles side[2]; /* PERF_CLIENT, PERF_SERVER */
	/* This side's engines (droce, not raw-L2): each one's cycles and the
	 * messages it handled (built or received), for cycles per message
	 * per engine. 0 engines: not measured. */
	unsigned nb_engines;
	struct perf_engine_cycles {
		uint64_t busy, rx_burst, tx_burst, msgs;
	} engine[PERF_MAX_ENGINES];
	const char *const *stage_names; /* the stages' names, when a side measured them */
};
enum { PERF_CLIENT, PERF_SERVER };

/* ---- results ---- */

struct perf_bw_result {
	uint64_t size;
	uint64_t iters;
	double peak_Bps;             /* bytes per second; 0: not measured */
	double avg_Bps;
	double msg_rate;             /* messages per second */
	/* raw-L2 only (frames of the port) */
	double pps;
	unsigned frames_per_msg;
	unsigned frame_bytes;        /* the largest frame of a message */
	struct perf_cost cost;
};

/* How often the calling thread lost its CPU to another (involuntary
 * context switches) and how long it waited, runnable, for one (the
 * scheduler's run delay): the part of a latency tail that is the
 * machine's, not droce's. */
struct perf_sched {
	uint64_t preempted;
	uint64_t wait_ns;
};

/* Now, for the calling thread; zeros where the kernel does not say. */
void perf_sched_mark(struct perf_sched *s);
/* What happened since @p start, into @p start. */
void perf_sched_since(struct perf_sched *start);

struct perf_lat_result {
	uint64_t size;
	uint64_t iters;
	bool duration;               /* -D: only t_avg and tps are known */
	double t_min, t_max, t_typical, t_avg, t_stdev, t_p99, t_p999; /* usec */
	/* The tail, over every sample (t_max leaves out the largest two, as
	 * perftest does): the largest, and how many exceed 50 and 100 usec. */
	uint64_t samples;
	double t_max_all;
	uint64_t above_50us, above_100us;
	struct perf_sched sched;     /* this side's, over the measured loop */
	double tps;
	struct perf_cost cost;
};

/* Room for @p n timestamps, its pages faulted in now: a first write to
 * each page inside the measured loop is a page fault (microseconds in a
 * VM), and the two per-message arrays of a run of millions of messages
 * span tens of thousands of pages (2 % of a 64-byte -n run here).
 * perftest's calloc()ed arrays pay that inside the loop; the figures are
 * meant to show the transport, not the harness. @return NULL when there
 * is no memory. */
uint64_t *perf_stamps_alloc(uint64_t n);

/* perftest's statistics. @p tposted: cycles at each post; the samples are
 * the differences of consecutive posts, divided by perf_rtt_factor(). With
 * -H or -U the samples are printed first, as perftest's. */
int perf_lat_stats(const struct perf_opts *o, const uint64_t *tposted, uint64_t hz,
		   struct perf_lat_result *r);
/* Peak: the best average over any run of completions (perftest's search);
 * average: all of them. */
void perf_bw_stats(const uint64_t *tposted, const uint64_t *tcompleted, uint64_t n,
		   unsigned cq_mod, bool peak, uint64_t hz, struct perf_bw_result *r);

/* ---- output ---- */

struct perf_info {
	const char *device;          /* "droce0", or the ethdev's name for raw-L2 */
	unsigned mtu;                /* bytes */
	int gid_index;
	int inline_size;
	int outs;
	const char *crc_path;        /* raw-L2 --touch: droce's CRC path, rte_net_crc's */
};

void perf_report_begin(const struct perf_opts *o, const struct perf_info *info);
/* One line per QP and side: the addresses exchanged (perftest's format). */
void perf_report_dest(const struct perf_opts *o, bool local, uint32_t qpn, uint32_t psn,
		      uint32_t rkey, uint64_t vaddr, const uint8_t gid[16]);
void perf_report_table_head(const struct perf_opts *o);
void perf_report_bw(const struct perf_opts *o, const struct perf_bw_result *r);
void perf_report_lat(const struct perf_opts *o, const struct perf_lat_result *r);
void perf_report_end(const struct perf_opts *o);

/* ---- out-of-band exchange (TCP) ---- */

struct perf_oob {
	int fd;
	uint64_t next_check;         /* tsc: when perf_oob_poll() reads the socket again */
	size_t len;
	char buf[4096];
};

/* Called while waiting for the peer: keeps the local engine running. */
typedef void (*perf_idle_fn)(void *arg);

/* Server: listen and accept one client; client: connect (retrying for a
 * while, the server may still be starting). @return 0 or -1. */
int perf_oob_open(struct perf_oob *b, const struct perf_opts *o);
void perf_oob_close(struct perf_oob *b);
int perf_oob_send(struct perf_oob *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Receive one line (without its '\n'). @p idle (if any) runs while
 * nothing has arrived. @return 0, or -1 when the peer is gone. */
int perf_oob_recv(struct perf_oob *b, char *line, size_t n, perf_idle_fn idle, void *arg);
/* A line if one has arrived, without waiting (looks at the socket at most
 * every few microseconds). @return 1 with a line, 0 without, -1 when the
 * peer is gone. */
int perf_oob_poll(struct perf_oob *b, char *line, size_t n);

/* Both sides meet here; each runs @p idle until the other arrives. */
int perf_oob_sync(struct perf_oob *b, perf_idle_fn idle, void *arg);
/* Swap this side's cycles and congestion control (@p mine) with the peer's, into @p cost.
 * @return 0 or -1. */
int perf_oob_swap_cycles(struct perf_oob *b, const struct perf_opts *o,
			 const struct perf_side_cycles *mine, struct perf_cost *cost,
			 perf_idle_fn idle, void *arg);

/* Client sends its test parameters, server checks them against its own:
 * the two sides must run the same test. @return 0 or -1. */
int perf_oob_check_params(struct perf_oob *b, const struct perf_opts *o);

/* ---- the tests ---- */

/* RDMA over a droce device attached to @p port_id. @return exit status. */
int perf_rdma_main(const struct perf_opts *o, uint16_t port_id);
/* Plain frames on the bare ethdev @p port_id. @return exit status. */
int perf_raw_main(const struct perf_opts *o, uint16_t port_id);

/* Wait until the ethdev's link is up. @return 0, or -1 after @p timeout_s. */
int perf_wait_link(uint16_t port_id, double timeout_s);

/* ---- --demo ---- */

bool perf_demo_requested(int argc, char **argv);
int perf_demo_main(int argc, char **argv);

#endif /* DROCE_PERF_H */
