/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The out-of-band channel, as perftest's: one TCP connection on which the
 * two sides agree on the test, swap their QP numbers, PSNs, GIDs, keys and
 * addresses, meet before and after each measurement, and hand over
 * results. Lines of text, so a capture of it reads plainly.
 *
 * While a side waits for its peer it keeps its own engine running (the
 * idle callback): with run-to-completion nothing else would answer the
 * peer's READs or acknowledge its WRITEs.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "perf.h"

/* How long a client keeps trying to reach a server that is starting. */
#define OOB_CONNECT_S 30
/* While the engine runs, look at the socket this often (microseconds).
 * Each look is a recv() system call, some microseconds under a
 * paravirtualized kernel: every 20 us it took 7 % of a 64 B receiver's
 * cycles. A step of the exchange waits at most this long more. */
#define OOB_CHECK_US 1000

static int
oob_listen(const struct perf_opts *o)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(o->tcp_port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror(PERF_NAME ": socket");
		return -1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1) != 0) {
		fprintf(stderr, PERF_NAME ": cannot listen on TCP port %u: %s\n", o->tcp_port,
			strerror(errno));
		close(lfd);
		return -1;
	}
	if (!o->json)
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
	fflush(stdout);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		perror(PERF_NAME ": accept");
	close(lfd);
	return fd;
}

static int
oob_connect(const struct perf_opts *o)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char port[8];
	int fd = -1, rc, tries;

	snprintf(port, sizeof(port), "%u", o->tcp_port);
	rc = getaddrinfo(o->server_addr, port, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, PERF_NAME ": %s: %s\n", o->server_addr, gai_strerror(rc));
		return -1;
	}
	for (tries = 0; tries < OOB_CONNECT_S * 10; tries++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (connect(fd, res->ai_addr, res->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
		if (errno != ECONNREFUSED && errno != ETIMEDOUT && errno != EHOSTUNREACH)
			break;
		nanosleep(&ts, NULL);
	}
	if (fd < 0)
		fprintf(stderr, PERF_NAME ": cannot connect to %s:%s: %s\n", o->server_addr, port,
			strerror(errno));
	freeaddrinfo(res);
	return fd;
}

int
perf_oob_open(struct perf_oob *b, const struct perf_opts *o)
{
	int one = 1;

	b->len = 0;
	b->next_check = 0;
	b->fd = o->server ? oob_listen(o) : oob_connect(o);
	if (b->fd < 0)
		return -1;
	/* Lines are small and each one is waited for: no Nagle delay. */
	setsockopt(b->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

void
perf_oob_close(struct perf_oob *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
}

int
perf_oob_send(struct perf_oob *b, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t off = 0;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(line) - 1)
		return -1;
	line[len++] = '\n';
	while (off < (size_t)len) {
		ssize_t k = send(b->fd, line + off, (size_t)len - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, PERF_NAME ": lost the connection to the peer: %s\n",
				strerror(errno));
			return -1;
		}
		off += (size_t)k;
	}
	return 0;
}

/* Take one complete line out of the buffer. @return true if there was one. */
static bool
oob_take_line(struct perf_oob *b, char *line, size_t n)
{
	char *nl = memchr(b->buf, '\n', b->len);
	size_t len;

	if (nl == NULL)
		return false;
	len = (size_t)(nl - b->buf);
	if (len >= n)
		len = n - 1;
	memcpy(line, b->buf, len);
	line[len] = '\0';
	b->len -= (size_t)(nl + 1 - b->buf);
	memmove(b->buf, nl + 1, b->len);
	return true;
}

/* Read what is there. @p wait: block until something comes.
 * @return 0, or -1 when the peer closed or broke the connection. */
static int
oob_fill(struct perf_oob *b, bool wait)
{
	ssize_t k;

	if (b->len == sizeof(b->buf)) {
		fprintf(stderr, PERF_NAME ": the peer sent a line too long\n");
		return -1;
	}
	k = recv(b->fd, b->buf + b->len, sizeof(b->buf) - b->len, wait ? 0 : MSG_DONTWAIT);
	if (k > 0) {
		b->len += (size_t)k;
		return 0;
	}
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	fprintf(stderr, PERF_NAME ": the peer closed the connection%s%s\n",
		k < 0 ? ": " : "", k < 0 ? strerror(errno) : "");
	return -1;
}

int
perf_oob_recv(struct perf_oob *b, char *line, size_t n, perf_idle_fn idle, void *arg)
{
	int rc;

	if (idle == NULL) {
		while (!oob_take_line(b, line, n))
			if (oob_fill(b, true) != 0)
				return -1;
		return 0;
	}
	while ((rc = perf_oob_poll(b, line, n)) == 0)
		idle(arg);
	return rc < 0 ? -1 : 0;
}

int
perf_oob_poll(struct perf_oob *b, char *line, size_t n)
{
	uint64_t now;

	if (oob_take_line(b, line, n))
		return 1;
	now = rte_rdtsc();
	if (now < b->next_check)
		return 0;
	b->next_check = now + rte_get_tsc_hz() / 1000000 * OOB_CHECK_US;
	if (oob_fill(b, false) != 0)
		return -1;
	return oob_take_line(b, line, n) ? 1 : 0;
}

/* Wait for the line @p expect. @return 0, or -1 (gone, or another line). */
static int
oob_expect(struct perf_oob *b, const char *expect, perf_idle_fn idle, void *arg)
{
	char line[256];

	if (perf_oob_recv(b, line, sizeof(line), idle, arg) != 0)
		return -1;
	if (strcmp(line, expect) != 0) {
		fprintf(stderr, PERF_NAME ": the peer is out of step (sent '%s', expected '%s')\n",
			line, expect);
		return -1;
	}
	return 0;
}

int
perf_oob_sync(struct perf_oob *b, perf_idle_fn idle, void *arg)
{
	if (perf_oob_send(b, "SYNC") != 0)
		return -1;
	return oob_expect(b, "SYNC", idle, arg);
}

/* The stage cycles, as a line "STAGES n c0 c1 ..." each way. */
static int
oob_swap_stages(struct perf_oob *b, const struct perf_stages *mine, struct perf_stages *peer,
		perf_idle_fn idle, void *arg)
{
	char line[1024];
	int off = 0, k;
	unsigned i;

	off = snprintf(line, sizeof(line), "STAGES %u", mine->n);
	for (i = 0; i < mine->n; i++)
		off += snprintf(line + off, sizeof(line) - (size_t)off, " %" PRIu64, mine->cycles[i]);
	if (perf_oob_send(b, "%s", line) != 0 || perf_oob_recv(b, line, sizeof(line), idle, arg) != 0)
		return -1;
	if (sscanf(line, "STAGES %u%n", &peer->n, &off) != 1 || peer->n > PERF_STAGES_MAX)
		goto bad;
	for (i = 0; i < peer->n; i++, off += k)
		if (sscanf(line + off, " %" SCNu64 "%n", &peer->cycles[i], &k) != 1)
			goto bad;
	return 0;
bad:
	fprintf(stderr, PERF_NAME ": bad stages line from the peer: '%s'\n", line);
	return -1;
}

/* The congestion control, as a line "CC known ce cnps_sent ..." each way. */
static int
oob_swap_cc(struct perf_oob *b, const struct perf_side_cc *mine, struct perf_side_cc *peer,
	    perf_idle_fn idle, void *arg)
{
	char line[512];
	int known;

	if (perf_oob_send(b, "CC %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			  " %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %" PRIu64, mine->known,
			  mine->ce_received, mine->cnps_sent, mine->cnps_received,
			  mine->rate_decreases, mine->rate_increases, mine->paced, mine->paced_qps,
			  mine->rate_min_mbps, mine->rate_max_mbps, mine->lowest_mbps) != 0 ||
	    perf_oob_recv(b, line, sizeof(line), idle, arg) != 0)
		return -1;
	if (sscanf(line, "CC %d %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %u %" SCNu64 " %" SCNu64 " %" SCNu64, &known,
		   &peer->ce_received, &peer->cnps_sent, &peer->cnps_received,
		   &peer->rate_decreases, &peer->rate_increases, &peer->paced, &peer->paced_qps,
		   &peer->rate_min_mbps, &peer->rate_max_mbps, &peer->lowest_mbps) != 11) {
		fprintf(stderr, PERF_NAME ": bad congestion line from the peer: '%s'\n", line);
		return -1;
	}
	peer->known = known != 0;
	return 0;
}

int
perf_oob_swap_cycles(struct perf_oob *b, const struct perf_opts *o,
		     const struct perf_side_cycles *mine, struct perf_cost *cost,
		     perf_idle_fn idle, void *arg)
{
	struct perf_side_cycles *peer = &cost->side[o->server ? PERF_CLIENT : PERF_SERVER];
	char line[256];

	cost->side[o->server ? PERF_SERVER : PERF_CLIENT] = *mine;
	if (perf_oob_send(b, "CYCLES %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			  " %" PRIu64 " %" PRIu64, mine->busy, mine->rx_burst, mine->tx_burst,
			  mine->sent, mine->skipped, mine->tx_frames, mine->rx_frames) != 0 ||
	    perf_oob_recv(b, line, sizeof(line), idle, arg) != 0)
		return -1;
	if (sscanf(line, "CYCLES %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64, &peer->busy, &peer->rx_burst, &peer->tx_burst,
		   &peer->sent, &peer->skipped, &peer->tx_frames, &peer->rx_frames) != 7) {
		fprintf(stderr, PERF_NAME ": bad cycles line from the peer: '%s'\n", line);
		return -1;
	}
	if (oob_swap_stages(b, &mine->stages, &peer->stages, idle, arg) != 0 ||
	    oob_swap_cc(b, &mine->cc, &peer->cc, idle, arg) != 0)
		return -1;
	cost->known = true;
	return 0;
}

/* Everything both sides must agree on, as one line. */
static void
params_line(const struct perf_opts *o, char *s, size_t n)
{
	snprintf(s, n, "PARAMS test=%s mode=%s raw=%d conn=%s size=%" PRIu64 " all=%d "
		 "iters=%" PRIu64 " duration=%g qps=%u bidir=%d mtu=%u atomic=%d post_list=%u "
		 "touch=%d engines=%u",
		 perf_test_arg(o->test), o->mode == PERF_BW ? "bw" : "lat", o->raw,
		 perf_conn_name(o->conn), o->size, o->all_sizes, o->iters, o->duration, o->qps,
		 o->bidir, o->mtu, o->atomic_cas, o->post_list, o->touch, o->engines);
}

int
perf_oob_check_params(struct perf_oob *b, const struct perf_opts *o)
{
	char mine[512], theirs[512];

	params_line(o, mine, sizeof(mine));
	if (!o->server) {
		if (perf_oob_send(b, "%s", mine) != 0 ||
		    perf_oob_recv(b, theirs, sizeof(theirs), NULL, NULL) != 0)
			return -1;
		if (strcmp(theirs, "OK") != 0) {
			fprintf(stderr, PERF_NAME ": the server refused: %s\n", theirs);
			return -1;
		}
		return 0;
	}
	if (perf_oob_recv(b, theirs, sizeof(theirs), NULL, NULL) != 0)
		return -1;
	if (strcmp(mine, theirs) != 0) {
		fprintf(stderr, PERF_NAME ": the client runs another test than this server:\n"
			"  server: %s\n  client: %s\n", mine, theirs);
		perf_oob_send(b, "ERR the server runs %s", mine);
		return -1;
	}
	return perf_oob_send(b, "OK");
}
