/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --demo: droce-perf shows itself on one machine. It starts a server and a
 * client of its own binary, each a DPDK process with one memif port (the
 * two ends of one link, over a socket file in /tmp), and runs RDMA WRITE,
 * SEND and READ bandwidth and latency, each beside two baselines of the
 * same frames on the same link: the ideal RoCE endpoint (raw-L2 --touch)
 * and plain raw-L2; then prints one table of the three and the ratios,
 * and one of each side's own cycles. The demo process itself starts no
 * EAL: it only launches, waits and reads the client's --json output.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>

#include "perf.h"

#define DEMO_DEF_SECONDS 3
#define DEMO_MAX_SECONDS 60
#define DEMO_BW_SIZE "65536"
#define DEMO_LAT_SIZE "8"
/* Latency runs are counted, not timed (the full statistics need -n). */
#define DEMO_LAT_ITERS_PER_S 20000
#define HUGETLBFS_MAGIC 0x958458f6
/* 2 MB pages each process takes: mbufs, rings, memif (measured: 19). */
#define DEMO_PAGES_PER_PROC 32
#define DEMO_START_S 10          /* for the server's memif socket to appear */

struct demo {
	unsigned seconds;
	char self[4096];
	char sock[64];
	char tmpdir[64];
	char tcp_port[8];
	const char *client_cpu;
};

/* One run: a test, droce or a baseline (raw-L2, with --touch the ideal
 * endpoint). */
struct demo_run {
	const char *label;
	const char *test;
	const char *mode;
	bool raw;
	bool touch;
	double value;                /* Gb/s, or usec */
	double own[2];               /* own cycles per byte (bw) or message (lat), client and server */
};

static struct demo *demo_active;

static void
demo_on_signal(int sig)
{
	if (demo_active != NULL)
		unlink(demo_active->sock);
	signal(sig, SIG_DFL);
	raise(sig);
}

bool
perf_demo_requested(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--demo") == 0)
			return true;
	return false;
}

static int
demo_options(int argc, char **argv, struct demo *d)
{
	static const struct option opts[] = {
		{ "demo", no_argument, NULL, 'd' },
		{ "demo-seconds", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	d->seconds = DEMO_DEF_SECONDS;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			break;
		case 's':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > DEMO_MAX_SECONDS) {
				fprintf(stderr, PERF_NAME ": --demo-seconds: 1..%d\n", DEMO_MAX_SECONDS);
				return -1;
			}
			d->seconds = (unsigned)v;
			break;
		case 'h':
			perf_usage(stdout, PERF_NAME);
			return 1;
		default:
			fprintf(stderr, PERF_NAME ": --demo takes --demo-seconds N only\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PERF_NAME ": --demo takes --demo-seconds N only ('%s')\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* The EAL of both processes wants hugepages (--in-memory cannot do
 * without): say what to do when there are none. */
static int
demo_check_hugepages(void)
{
	struct statfs fs;
	char line[256];
	long free_pages = -1;
	FILE *f;

	if (statfs("/dev/hugepages", &fs) != 0 || (unsigned long)fs.f_type != HUGETLBFS_MAGIC) {
		fprintf(stderr, PERF_NAME ": --demo needs hugepages, and no hugetlbfs is mounted on "
			"/dev/hugepages: run scripts/hugepages.sh (as root) first\n");
		return -1;
	}
	f = fopen("/proc/meminfo", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
			break;
	if (f != NULL)
		fclose(f);
	if (free_pages < 2 * DEMO_PAGES_PER_PROC) {
		fprintf(stderr, PERF_NAME ": --demo needs %d free 2 MB hugepages, %ld are free: "
			"run scripts/hugepages.sh (as root) first\n", 2 * DEMO_PAGES_PER_PROC,
			free_pages < 0 ? 0 : free_pages);
		return -1;
	}
	return 0;
}

/* Start one side: stdout and stderr to files in the demo's directory. */
static pid_t
demo_spawn(const struct demo *d, const char *role, char *const perf_args[])
{
	char vdev[256], out[128], err[128];
	char *argv[64];
	int n = 0, i;
	pid_t pid;

	snprintf(vdev, sizeof(vdev),
		 "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no,bsize=4352", role, d->sock);
	snprintf(out, sizeof(out), "%s/%s.out", d->tmpdir, role);
	snprintf(err, sizeof(err), "%s/%s.err", d->tmpdir, role);
	argv[n++] = (char *)d->self;
	argv[n++] = "-l";
	argv[n++] = (char *)(strcmp(role, "server") == 0 ? "0" : d->client_cpu);
	argv[n++] = "--in-memory";
	argv[n++] = "--no-pci";
	argv[n++] = "--no-telemetry";
	argv[n++] = vdev;
	argv[n++] = "--";
	argv[n++] = "--json";
	argv[n++] = "-p";
	argv[n++] = (char *)d->tcp_port;
	argv[n++] = "--ip";
	argv[n++] = strcmp(role, "server") == 0 ? "10.0.0.1/24" : "10.0.0.2/24";
	argv[n++] = "--mac";
	argv[n++] = strcmp(role, "server") == 0 ? "02:00:0a:00:00:01" : "02:00:0a:00:00:02";
	argv[n++] = "-m";
	argv[n++] = "4096";
	for (i = 0; perf_args[i] != NULL && n < 60; i++)
		argv[n++] = perf_args[i];
	if (strcmp(role, "client") == 0)
		argv[n++] = "127.0.0.1";
	argv[n] = NULL;

	pid = fork();
	if (pid == 0) {
		int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fo < 0 || fe < 0 || dup2(fo, STDOUT_FILENO) < 0 || dup2(fe, STDERR_FILENO) < 0)
			_exit(126);
		execv(d->self, argv);
		_exit(127);
	}
	if (pid < 0)
		perror(PERF_NAME ": fork");
	return pid;
}

static void
demo_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait for @p pid until @p deadline_ms from now; kill it after that.
 * @return its exit status, or -1. */
static int
demo_wait(pid_t pid, unsigned deadline_ms)
{
	unsigned waited = 0;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (r < 0)
			return -1;
		if (waited >= deadline_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		demo_sleep_ms(10);
		waited += 10;
	}
}

static void
demo_show_log(const struct demo *d, const char *name)
{
	char path[128], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", d->tmpdir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return;
	fprintf(stderr, "---- %s\n", name);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "EAL: ", 5) != 0)
			fputs(line, stderr);
	fclose(f);
}

/* The number after "key": in the client's JSON; after "section": when
 * @p section is not NULL. */
static int
demo_json_number(const struct demo *d, const char *section, const char *key, double *v)
{
	char path[128], text[16384], pat[64];
	const char *p = text;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/client.out", d->tmpdir);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	if (section != NULL) {
		snprintf(pat, sizeof(pat), "\"%s\": {", section);
		p = strstr(text, pat);
		if (p == NULL)
			return -1;
	}
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(p, pat);
	if (p == NULL)
		return -1;
	*v = strtod(p + strlen(pat), NULL);
	return 0;
}

static const char *
demo_kind(const struct demo_run *run)
{
	return !run->raw ? "" : run->touch ? ", ideal endpoint" : ", raw-L2";
}

/* Each side's own cycles: per byte for bandwidth, per message for latency. */
static int
demo_run_cycles(const struct demo *d, struct demo_run *run)
{
	static const char *const sides[] = { "client", "server" };
	const char *key = strcmp(run->mode, "bw") == 0 ? "own_per_byte" : "own_per_msg";
	unsigned i;

	for (i = 0; i < RTE_DIM(sides); i++)
		if (demo_json_number(d, sides[i], key, &run->own[i]) != 0)
			return -1;
	return 0;
}

static int
demo_run_one(const struct demo *d, struct demo_run *run)
{
	char secs[16], iters[16];
	char *args[16];
	unsigned budget_ms, i;
	int n = 0, rs, rc;
	pid_t server, client;
	struct stat st;

	snprintf(secs, sizeof(secs), "%u", d->seconds);
	snprintf(iters, sizeof(iters), "%u", d->seconds * DEMO_LAT_ITERS_PER_S);
	args[n++] = "--test";
	args[n++] = (char *)run->test;
	args[n++] = "--mode";
	args[n++] = (char *)run->mode;
	args[n++] = "-s";
	args[n++] = strcmp(run->mode, "bw") == 0 ? DEMO_BW_SIZE : DEMO_LAT_SIZE;
	args[n++] = strcmp(run->mode, "bw") == 0 ? "-D" : "-n";
	args[n++] = strcmp(run->mode, "bw") == 0 ? secs : iters;
	if (run->raw)
		args[n++] = "--raw-l2";
	if (run->touch)
		args[n++] = "--touch";
	args[n] = NULL;

	unlink(d->sock);
	server = demo_spawn(d, "server", args);
	if (server < 0)
		return -1;
	/* The memif client connects once, at its start: the server's socket
	 * must be there first. */
	for (i = 0; i < DEMO_START_S * 100 && stat(d->sock, &st) != 0; i++) {
		if (waitpid(server, NULL, WNOHANG) == server) {
			server = -1;
			break;
		}
		demo_sleep_ms(10);
	}
	if (server < 0 || stat(d->sock, &st) != 0) {
		fprintf(stderr, "\n" PERF_NAME ": the demo's server did not start\n");
		if (server > 0)
			demo_wait(server, 0);
		demo_show_log(d, "server.err");
		return -1;
	}
	client = demo_spawn(d, "client", args);
	if (client < 0) {
		demo_wait(server, 0);
		return -1;
	}
	/* the test's time, start-up, and a good margin */
	budget_ms = (d->seconds * 4 + 30) * 1000;
	rc = demo_wait(client, budget_ms);
	rs = demo_wait(server, rc == 0 ? 10000 : 1000);
	unlink(d->sock);
	if (rc != 0 || rs != 0 ||
	    demo_json_number(d, NULL, strcmp(run->mode, "bw") == 0 ? "bw_average_gbps" : "t_typical",
			     &run->value) != 0 ||
	    demo_run_cycles(d, run) != 0) {
		fprintf(stderr, "\n" PERF_NAME ": demo run '%s%s' failed (client %d, server %d)\n",
			run->label, demo_kind(run), rc, rs);
		demo_show_log(d, "client.err");
		demo_show_log(d, "server.err");
		return -1;
	}
	return 0;
}

/* The baselines: raw-L2 and the ideal endpoint, of 64 KiB messages
 * (bandwidth) and 8 B (latency). */
enum { BASE_RAW, BASE_IDEAL, BASE_KINDS };
enum { BASE_BW, BASE_LAT, BASE_SIZES };

/* A row of the summary: a droce test and the baselines it compares with. */
struct demo_row {
	struct demo_run droce;
	unsigned base;               /* BASE_BW or BASE_LAT */
	bool full_rtt;               /* READ latency is a whole round trip */
};

static void
demo_value(char *buf, size_t len, double v, bool bw)
{
	if (isnan(v))
		snprintf(buf, len, "failed");
	else
		snprintf(buf, len, bw ? "%.2f Gb/s" : "%.2f us", v);
}

static void
demo_ratio(char *buf, size_t len, double droce, double base, bool bw)
{
	if (isnan(droce) || isnan(base) || base <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, bw ? "%.1f %%" : "%.2fx", bw ? 100 * droce / base : droce / base);
}

/* "client/server" own cycles of a run, @p scale times (READ rows: a raw
 * round trip is two messages). */
static void
demo_cycles(char *buf, size_t len, const struct demo_run *run, double scale)
{
	const char *fmt = strcmp(run->mode, "bw") == 0 ? "%.3f / %.3f" : "%.0f / %.0f";

	if (isnan(run->value))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, run->own[0] * scale, run->own[1] * scale);
}

static void
demo_summary(const struct demo *d, const struct demo_row *rows, unsigned n,
	     struct demo_run bases[BASE_SIZES][BASE_KINDS])
{
	unsigned i;

	printf("\n"
	       "droce-perf demo: two processes over one memif link (server lcore 0, client lcore %s),\n"
	       "IB MTU 4096, bandwidth over %u s with %s B messages, latency of %s B messages;\n"
	       "ideal: the same frames as an ideal RoCE endpoint (raw-L2 --touch: CRC32 and one\n"
	       "copy each side); raw-L2: the same frames as plain Ethernet, payload untouched.\n\n",
	       d->client_cpu, d->seconds, DEMO_BW_SIZE, DEMO_LAT_SIZE);
	printf(" %-22s %12s %12s %12s %11s %12s\n", "test", "droce", "ideal", "raw-L2",
	       "droce/ideal", "droce/raw-L2");
	printf(" %-22s %12s %12s %12s %11s %12s\n", "----------------------", "------------",
	       "------------", "------------", "-----------", "------------");
	for (i = 0; i < n; i++) {
		const struct demo_row *r = &rows[i];
		bool bw = r->base == BASE_BW;
		/* raw-L2 latency is half a round trip; READ's is a whole one */
		double f = r->full_rtt ? 2 : 1;
		double ideal = bases[r->base][BASE_IDEAL].value * f;
		double raw = bases[r->base][BASE_RAW].value * f;
		char a[32], b[32], c[32], x[32], y[32];

		demo_value(a, sizeof(a), r->droce.value, bw);
		demo_value(b, sizeof(b), ideal, bw);
		demo_value(c, sizeof(c), raw, bw);
		demo_ratio(x, sizeof(x), r->droce.value, ideal, bw);
		demo_ratio(y, sizeof(y), r->droce.value, raw, bw);
		printf(" %-22s %12s %12s %12s %11s %12s\n", r->droce.label, a, b, c, x, y);
	}
	printf("\n Own cycles, client / server: each side's busy cycles outside the port's burst\n"
	       " calls, per byte (bw) or per message (lat) of the test:\n\n");
	printf(" %-22s %17s %17s %17s\n", "test", "droce", "ideal", "raw-L2");
	for (i = 0; i < n; i++) {
		const struct demo_row *r = &rows[i];
		double f = r->full_rtt ? 2 : 1;
		char a[32], b[32], c[32];

		demo_cycles(a, sizeof(a), &r->droce, 1);
		demo_cycles(b, sizeof(b), &bases[r->base][BASE_IDEAL], f);
		demo_cycles(c, sizeof(c), &bases[r->base][BASE_RAW], f);
		printf(" %-22s %17s %17s %17s\n", r->droce.label, a, b, c);
	}
	printf("\n Latency: the typical (median) sample of %u; WRITE and SEND half a round\n"
	       " trip, READ a whole one (as perftest's ib_*_lat). Bandwidth: message bytes per\n"
	       " second. Baseline frames are those of an RDMA WRITE of the same size.\n",
	       d->seconds * DEMO_LAT_ITERS_PER_S);
}

static void
demo_cleanup(struct demo *d)
{
	static const char *const files[] = { "server.out", "server.err", "client.out", "client.err" };
	char path[128];
	unsigned i;

	unlink(d->sock);
	for (i = 0; i < RTE_DIM(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", d->tmpdir, files[i]);
		unlink(path);
	}
	rmdir(d->tmpdir);
}

/* Run and show one step. @return 0 or -1. */
static int
demo_step(const struct demo *d, struct demo_run *run, unsigned step, unsigned steps)
{
	bool bw = strcmp(run->mode, "bw") == 0;

	printf("[%u/%u] %s%s ...", step, steps, run->label, demo_kind(run));
	fflush(stdout);
	if (demo_run_one(d, run) != 0) {
		printf(" failed\n");
		run->value = NAN;
		return -1;
	}
	printf(" %.2f %s\n", run->value, bw ? "Gb/s" : "us");
	return 0;
}

int
perf_demo_main(int argc, char **argv)
{
	struct demo_run bases[BASE_SIZES][BASE_KINDS] = {
		[BASE_BW] = {
			[BASE_RAW] = { .label = "64 KiB frames bw", .test = "write", .mode = "bw", .raw = true },
			[BASE_IDEAL] = { .label = "64 KiB frames bw", .test = "write", .mode = "bw",
					 .raw = true, .touch = true },
		},
		[BASE_LAT] = {
			[BASE_RAW] = { .label = "8 B frames lat", .test = "write", .mode = "lat", .raw = true },
			[BASE_IDEAL] = { .label = "8 B frames lat", .test = "write", .mode = "lat",
					 .raw = true, .touch = true },
		},
	};
	struct demo_row rows[] = {
		{ { .label = "RDMA WRITE bw 64 KiB", .test = "write", .mode = "bw" }, BASE_BW, false },
		{ { .label = "SEND bw 64 KiB", .test = "send", .mode = "bw" }, BASE_BW, false },
		{ { .label = "RDMA READ bw 64 KiB", .test = "read", .mode = "bw" }, BASE_BW, false },
		{ { .label = "RDMA WRITE lat 8 B", .test = "write", .mode = "lat" }, BASE_LAT, false },
		{ { .label = "SEND lat 8 B", .test = "send", .mode = "lat" }, BASE_LAT, false },
		{ { .label = "RDMA READ lat 8 B", .test = "read", .mode = "lat" }, BASE_LAT, true },
	};
	unsigned steps = RTE_DIM(rows) + BASE_SIZES * BASE_KINDS, step = 0, i, k;
	struct demo d = { 0 };
	ssize_t len;
	int rc;

	rc = demo_options(argc, argv, &d);
	if (rc != 0)
		return rc < 0 ? 1 : 0;
	if (demo_check_hugepages() != 0)
		return 1;
	len = readlink("/proc/self/exe", d.self, sizeof(d.self) - 1);
	if (len <= 0) {
		perror(PERF_NAME ": /proc/self/exe");
		return 1;
	}
	d.self[len] = '\0';
	snprintf(d.sock, sizeof(d.sock), "/tmp/droce-demo-%d.sock", (int)getpid());
	snprintf(d.tmpdir, sizeof(d.tmpdir), "/tmp/droce-demo-%d.XXXXXX", (int)getpid());
	if (mkdtemp(d.tmpdir) == NULL) {
		perror(PERF_NAME ": mkdtemp");
		return 1;
	}
	/* a TCP port of this run's own, so two demos do not meet */
	snprintf(d.tcp_port, sizeof(d.tcp_port), "%d", 20000 + (int)getpid() % 20000);
	d.client_cpu = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? "1" : "0";
	demo_active = &d;
	signal(SIGINT, demo_on_signal);
	signal(SIGTERM, demo_on_signal);

	/* The baselines just before the rows that compare with them. A run
	 * that fails shows as such, and the others still run. */
	for (i = 0; i < RTE_DIM(rows); i++) {
		if (i == 0 || rows[i].base != rows[i - 1].base)
			for (k = 0; k < BASE_KINDS; k++)
				if (demo_step(&d, &bases[rows[i].base][k], ++step, steps) != 0)
					rc = -1;
		if (demo_step(&d, &rows[i].droce, ++step, steps) != 0)
			rc = -1;
	}
	demo_summary(&d, rows, RTE_DIM(rows), bases);
	demo_cleanup(&d);
	demo_active = NULL;
	return rc == 0 ? 0 : 1;
}
