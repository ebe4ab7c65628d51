/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm connections for the e2e tests that Debian's tools cannot run
 * (tests/cma/run_cma_conn.sh), on the drop-in librdmacm.so.1:
 *
 *   cma_conn server ADDR PORT     accept connections one after another,
 *                                 forever; after each one's end print
 *                                 "closed N fds F anon KB malloc BYTES"
 *                                 (its own RssAnon, bytes malloc'd)
 *   cma_conn loop ADDR PORT N     connect and disconnect N times in turn
 *   cma_conn killed ADDR PORT     connect, print "connected", wait for
 *                                 SIGUSR1 (the server is gone), then SEND
 *                                 (must fail: retry exceeded), disconnect
 *                                 and wait for DISCONNECTED (the DREQ's
 *                                 retries running out)
 *   cma_conn leave ADDR PORT      connect, print "connected" and return
 *                                 from main, connected: no disconnect, no
 *                                 destroy (the library's farewell at exit)
 *   cma_conn leaver ADDR PORT WHEN
 *                                 listen, take one request and return from
 *                                 main at WHEN: "request" (not accepted),
 *                                 "established", or "dreq" (the client's
 *                                 DREQ received, not answered)
 *   cma_conn left ADDR PORT WHEN  the leaver's client: for "request" be
 *                                 rejected (consumer defined, 28), for
 *                                 "established" be disconnected, for
 *                                 "dreq" disconnect and see DISCONNECTED,
 *                                 each within FAREWELL_MS
 *
 * Exit 0 when everything happened as said, 1 otherwise; a client is
 * killed by SIGALRM after 40 s.
 */
#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

/* Longer than any single step takes, shorter than the test's bound. */
#define EVENT_WAIT_MS 30000
/* What a peer's farewell at exit may take to arrive: far less than the
 * CM's first retry (4 s at the default timeout), let alone its last. */
#define FAREWELL_MS 2000
/* A REJ's reason when the peer's consumer rejects (IB_CM_REJ_CONSUMER_DEFINED). */
#define REJ_CONSUMER_DEFINED 28

static struct rdma_event_channel *ch;

static int
fail(const char *what)
{
	fprintf(stderr, "cma_conn: %s: %s\n", what, strerror(errno));
	return 1;
}

/* The next event, which must be @p want, within @p ms. */
static struct rdma_cm_event *
expect_within(enum rdma_cm_event_type want, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) != 1) {
		fprintf(stderr, "cma_conn: no event in %d ms, waiting for %s\n", ms,
			rdma_event_str(want));
		return NULL;
	}
	if (rdma_get_cm_event(ch, &ev) != 0) {
		fail("rdma_get_cm_event");
		return NULL;
	}
	if (ev->event != want) {
		fprintf(stderr, "cma_conn: %s (status %d), not %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

static struct rdma_cm_event *
expect(enum rdma_cm_event_type want)
{
	return expect_within(want, EVENT_WAIT_MS);
}

static int
expect_ack_within(enum rdma_cm_event_type want, int ms)
{
	struct rdma_cm_event *ev = expect_within(want, ms);

	return ev != NULL ? rdma_ack_cm_event(ev) : 1;
}

static int
expect_ack(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = expect(want);

	return ev != NULL ? rdma_ack_cm_event(ev) : 1;
}

static struct ibv_qp_init_attr
qp_attr(void)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	return a;
}

static unsigned
fd_count(void)
{
	char path[64];
	unsigned n = 0;

	/* Probe each number: reading /proc/self/fd would count its own fd. */
	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/* Not VmRSS: that counts memif's shared buffers as they are touched. */
static long
rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Listen on IP:PORT and say so. @return 0 or 1. */
static int
listen_on(const char *ip, const char *port)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	struct rdma_cm_id *listen_id;

	if (rdma_getaddrinfo(ip, port, &hints, &res) != 0)
		return fail("rdma_getaddrinfo");
	if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(listen_id, res->ai_src_addr) != 0 || rdma_listen(listen_id, 8) != 0)
		return fail("listen");
	rdma_freeaddrinfo(res);
	printf("listening\n");
	fflush(stdout);
	return 0;
}

/* A QP for the request's new ID, and the connection accepted. */
static int
accept_request(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };

	if (rdma_create_qp(id, NULL, &a) != 0 || rdma_accept(id, &param) != 0)
		return fail("accept");
	return 0;
}

static int
serve(const char *ip, const char *port)
{
	struct rdma_cm_event *ev;
	unsigned closed = 0;

	if (listen_on(ip, port) != 0)
		return 1;
	while (rdma_get_cm_event(ch, &ev) == 0) {
		struct rdma_cm_id *id = ev->id;

		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			rdma_ack_cm_event(ev);
			if (accept_request(id) != 0)
				return 1;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			rdma_ack_cm_event(ev);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_ack_cm_event(ev);
			rdma_disconnect(id);
			rdma_destroy_qp(id);
			if (rdma_destroy_id(id) != 0)
				return fail("rdma_destroy_id");
			printf("closed %u fds %u anon %ld malloc %zu\n", ++closed, fd_count(),
			       rss_anon_kb(), mallinfo2().uordblks);
			fflush(stdout);
			break;
		default:
			fprintf(stderr, "cma_conn: server: %s (status %d)\n",
				rdma_event_str(ev->event), ev->status);
			rdma_ack_cm_event(ev);
			return 1;
		}
	}
	return fail("rdma_get_cm_event");
}

/* An ID to ADDR:PORT whose REQ is sent, or NULL. */
static struct rdma_cm_id *
connect_start(const struct rdma_addrinfo *res, uint8_t ack_timeout, uint8_t retry_count)
{
	struct rdma_conn_param param = { .retry_count = retry_count, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0) {
		fail("rdma_create_id");
		return NULL;
	}
	if (rdma_resolve_addr(id, NULL, res->ai_dst_addr, 2000) != 0 ||
	    expect_ack(RDMA_CM_EVENT_ADDR_RESOLVED) != 0 || rdma_resolve_route(id, 2000) != 0 ||
	    expect_ack(RDMA_CM_EVENT_ROUTE_RESOLVED) != 0 ||
	    (ack_timeout != 0 && rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
						 &ack_timeout, sizeof(ack_timeout)) != 0) ||
	    rdma_create_qp(id, NULL, &a) != 0 || rdma_connect(id, &param) != 0) {
		fail("connect");
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

/* A connected ID to ADDR:PORT, or NULL. */
static struct rdma_cm_id *
connect_to(const struct rdma_addrinfo *res, uint8_t ack_timeout, uint8_t retry_count)
{
	struct rdma_cm_id *id = connect_start(res, ack_timeout, retry_count);

	if (id != NULL && expect_ack(RDMA_CM_EVENT_ESTABLISHED) != 0) {
		fail("connect");
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

static int
disconnect(struct rdma_cm_id *id)
{
	int rc = rdma_disconnect(id) != 0 ? fail("rdma_disconnect") :
		 expect_ack(RDMA_CM_EVENT_DISCONNECTED);

	rdma_destroy_qp(id);
	if (rdma_destroy_id(id) != 0)
		rc = fail("rdma_destroy_id");
	return rc;
}

static void
wait_usr1(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigwait(&usr1, &sig);
}

static int
loop(const struct rdma_addrinfo *res, unsigned n)
{
	for (unsigned i = 1; i <= n; i++) {
		struct rdma_cm_id *id = connect_to(res, 0, 7);

		if (id == NULL || disconnect(id) != 0) {
			fprintf(stderr, "cma_conn: connection %u failed\n", i);
			return 1;
		}
	}
	printf("loop: %u connections\n", n);
	return 0;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The server dies once connected. A short ACK timeout (14: 67 ms, 3
 * retries) has the SEND fail in a second; the DREQ's retries then take
 * what DROCE_CM_TIMEOUT says.
 */
static int
killed(const struct rdma_addrinfo *res)
{
	static char buf[64] = "are you there";
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint64_t t0;
	int rc;

	id = connect_to(res, 14, 3);
	if (id == NULL)
		return 1;
	printf("connected\n");
	fflush(stdout);
	wait_usr1();
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (mr == NULL || rdma_post_send(id, NULL, buf, sizeof(buf), mr, 0) != 0)
		return fail("send");
	t0 = now_ms();
	if (rdma_get_send_comp(id, &wc) != 1)
		return fail("rdma_get_send_comp");
	printf("send: %s after %llu ms\n", ibv_wc_status_str(wc.status),
	       (unsigned long long)(now_ms() - t0));
	rdma_dereg_mr(mr);
	t0 = now_ms();
	rc = disconnect(id);
	printf("disconnect: %s after %llu ms\n", rc == 0 ? "DISCONNECTED" : "failed",
	       (unsigned long long)(now_ms() - t0));
	return rc != 0 || wc.status != IBV_WC_RETRY_EXC_ERR;
}

/* The server of the exit tests: one request, then out of main at @p when. */
static int
leaver(const char *ip, const char *port, const char *when)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (listen_on(ip, port) != 0 || (ev = expect(RDMA_CM_EVENT_CONNECT_REQUEST)) == NULL)
		return 1;
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (strcmp(when, "request") != 0) {
		if (accept_request(id) != 0 || expect_ack(RDMA_CM_EVENT_ESTABLISHED) != 0)
			return 1;
		if (strcmp(when, "dreq") == 0 && expect_ack(RDMA_CM_EVENT_DISCONNECTED) != 0)
			return 1;
	}
	printf("leaving at %s\n", when);
	return 0;
}

/* The leaver's client: what its exit at @p when tells this side. */
static int
left(const struct rdma_addrinfo *res, const char *when)
{
	struct rdma_cm_id *id;
	uint64_t t0;
	int rc;

	if (strcmp(when, "request") == 0) {
		struct rdma_cm_event *ev;

		id = connect_start(res, 0, 7);
		if (id == NULL)
			return 1;
		t0 = now_ms();
		ev = expect_within(RDMA_CM_EVENT_REJECTED, FAREWELL_MS);
		if (ev == NULL)
			return 1;
		printf("rejected (status %d) after %llu ms\n", ev->status,
		       (unsigned long long)(now_ms() - t0));
		rc = ev->status != REJ_CONSUMER_DEFINED;
		rdma_ack_cm_event(ev);
	} else {
		id = connect_to(res, 0, 7);
		if (id == NULL)
			return 1;
		t0 = now_ms();
		if (strcmp(when, "dreq") == 0 && rdma_disconnect(id) != 0)
			return fail("rdma_disconnect");
		rc = expect_ack_within(RDMA_CM_EVENT_DISCONNECTED, FAREWELL_MS);
		printf("%s after %llu ms\n", rc == 0 ? "disconnected" : "not disconnected",
		       (unsigned long long)(now_ms() - t0));
	}
	rdma_destroy_qp(id);
	if (rdma_destroy_id(id) != 0)
		rc = fail("rdma_destroy_id");
	return rc;
}

static bool
args_ok(int argc, char **argv)
{
	if (argc < 4)
		return false;
	if (strcmp(argv[1], "loop") == 0)
		return argc >= 5;
	if (strcmp(argv[1], "leaver") == 0 || strcmp(argv[1], "left") == 0)
		return argc >= 5 && (strcmp(argv[4], "request") == 0 ||
				     strcmp(argv[4], "established") == 0 ||
				     strcmp(argv[4], "dreq") == 0);
	return true;
}

int
main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res;
	sigset_t usr1;
	int rc;

	if (!args_ok(argc, argv)) {
		fprintf(stderr, "usage: cma_conn server|loop|killed|leave|leaver|left ADDR PORT "
				"[N|request|established|dreq]\n");
		return 2;
	}
	ch = rdma_create_event_channel();
	if (ch == NULL)
		return fail("rdma_create_event_channel");
	if (strcmp(argv[1], "server") == 0)
		return serve(argv[2], argv[3]);
	if (strcmp(argv[1], "leaver") == 0)
		return leaver(argv[2], argv[3], argv[4]);
	/* A client that hangs dies of SIGALRM: no test waits for it forever.
	 * SIGUSR1 is blocked in every thread (the library's too), for sigwait(). */
	alarm(40);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res) != 0)
		return fail("rdma_getaddrinfo");
	if (strcmp(argv[1], "leave") == 0) {
		/* Out of main connected: the event channel, the ID and its QP
		 * stay, as in a program that exits without cleaning up. */
		if (connect_to(res, 0, 7) == NULL)
			return 1;
		printf("connected\n");
		return 0;
	}
	if (strcmp(argv[1], "left") == 0)
		rc = left(res, argv[4]);
	else if (strcmp(argv[1], "loop") == 0)
		rc = loop(res, (unsigned)strtoul(argv[4], NULL, 0));
	else
		rc = killed(res);
	rdma_freeaddrinfo(res);
	rdma_destroy_event_channel(ch);
	return rc;
}
