/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RC echo server (rc_echo.h): ordinary verbs code, nothing in it
 * knows droce.
 *
 * Connection setup, as ibv_rc_pingpong's client expects it: the client
 * connects over TCP and sends "LID:QPN:PSN:GID" (hex, the GID as 32 hex
 * digits in byte order, with its NUL: 52 bytes); the server connects its
 * QP to that, answers with its own line, and the client says "done". The
 * client sends a message, waits for one back, and so on; so the server
 * posts receives into a few slots, sends each message back from the slot
 * it arrived in, and posts the slot's receive again when that send has
 * completed. A new client ends the previous session (ibv_rc_pingpong
 * says nothing when it is done: it closes its TCP connection right after
 * the setup).
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rc_echo.h"

#define SLOTS 16
#define WRID_SEND (UINT64_C(1) << 32)
/* ibv_rc_pingpong's setup line, with its NUL. */
#define LINE_LEN sizeof("0000:000000:000000:00000000000000000000000000000000")

struct server {
	const struct rc_echo_conf *conf;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	uint8_t *buf;            /* SLOTS x msg_size */
	struct ibv_mr *mr;
	struct ibv_qp *qp;       /* the current session's; NULL: none yet */
	union ibv_gid gid;
	enum ibv_mtu mtu;
	int listen_fd;
	struct rc_echo_stats *stats;
};

static int
io_full(int fd, void *buf, size_t len, bool wr)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = wr ? write(fd, (char *)buf + done, len - done) :
			 read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int
post_recv(struct server *s, unsigned slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + (size_t)slot * s->conf->msg_size),
		.length = s->conf->msg_size, .lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* Send back the message received in @p slot. */
static int
post_echo(struct server *s, unsigned slot, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + (size_t)slot * s->conf->msg_size),
		.length = len, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID_SEND | slot, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(s->qp, &wr, &bad);
}

static int
server_open(struct server *s)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(s->conf->tcp_port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	struct ibv_port_attr pa;
	int one = 1;

	s->ctx = ibv_open_device(s->conf->dev);
	if (s->ctx == NULL)
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	s->buf = calloc(SLOTS, s->conf->msg_size);
	if (s->pd == NULL || s->ch == NULL || s->buf == NULL)
		return -1;
	s->cq = ibv_create_cq(s->ctx, 2 * SLOTS, NULL, s->ch, 0);
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)SLOTS * s->conf->msg_size,
			   IBV_ACCESS_LOCAL_WRITE);
	if (s->cq == NULL || s->mr == NULL || ibv_req_notify_cq(s->cq, 0) != 0 ||
	    ibv_query_gid(s->ctx, 1, s->conf->gid_index, &s->gid) != 0 ||
	    ibv_query_port(s->ctx, 1, &pa) != 0)
		return -1;
	s->mtu = pa.active_mtu;
	s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->listen_fd < 0 ||
	    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(s->listen_fd, 1) != 0)
		return -1;
	return 0;
}

static void
server_close(struct server *s)
{
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->qp != NULL)
		ibv_destroy_qp(s->qp);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->ch != NULL)
		ibv_destroy_comp_channel(s->ch);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->buf);
}

/* A new QP in INIT with every slot's receive posted. */
static int
session_qp(struct server *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SLOTS, .max_recv_wr = SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	unsigned i;

	/* The old session's receives flush into the CQ: told apart by QPN. */
	if (s->qp != NULL)
		ibv_destroy_qp(s->qp);
	s->qp = ibv_create_qp(s->pd, &ia);
	if (s->qp == NULL || ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	for (i = 0; i < SLOTS; i++)
		if (post_recv(s, i) != 0)
			return -1;
	return 0;
}

/* RTR towards the client's QP @p qpn at PSN @p psn, GID @p gid; then RTS. */
static int
session_connect(struct server *s, uint32_t qpn, uint32_t psn, const union ibv_gid *gid,
		uint32_t my_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = s->mtu, .dest_qp_num = qpn, .rq_psn = psn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = (uint8_t)s->conf->gid_index,
				      .hop_limit = 1 } },
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = my_psn;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The setup with a client that just connected on @p fd. */
static int
session_start(struct server *s, int fd)
{
	char line[LINE_LEN], hex[33], done[sizeof("done")];
	unsigned lid, qpn, psn, i, byte;
	uint32_t my_psn = (uint32_t)rand() & 0xffffff;
	union ibv_gid gid;

	if (session_qp(s) != 0 || io_full(fd, line, sizeof(line), false) != 0)
		return -1;
	line[sizeof(line) - 1] = '\0';
	if (sscanf(line, "%x:%x:%x:%32s", &lid, &qpn, &psn, hex) != 4 || strlen(hex) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return -1;
		gid.raw[i] = (uint8_t)byte;
	}
	if (session_connect(s, qpn, psn, &gid, my_psn) != 0)
		return -1;
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", s->gid.raw[i]);
	snprintf(line, sizeof(line), "%04x:%06x:%06x:%s", 0u, s->qp->qp_num, my_psn, hex);
	if (io_full(fd, line, sizeof(line), true) != 0 ||
	    io_full(fd, done, sizeof(done), false) != 0)
		return -1;
	s->stats->sessions++;
	printf("rc_echo: client QP 0x%06x connected to QP 0x%06x\n", qpn, s->qp->qp_num);
	fflush(stdout);
	return 0;
}

/* Take the CQ's event and what it has: echo each message, post each
 * slot's receive again once its echo is out. */
static void
serve_cq(struct server *s)
{
	struct ibv_cq *cq;
	struct ibv_wc wc[SLOTS];
	void *cq_ctx;
	int n, i;

	if (ibv_get_cq_event(s->ch, &cq, &cq_ctx) != 0)
		return;
	ibv_ack_cq_events(cq, 1);
	ibv_req_notify_cq(cq, 0);
	while ((n = ibv_poll_cq(cq, SLOTS, wc)) > 0) {
		for (i = 0; i < n; i++) {
			unsigned slot = (unsigned)(wc[i].wr_id & (WRID_SEND - 1));

			if (s->qp == NULL || wc[i].qp_num != s->qp->qp_num)
				continue;
			if (wc[i].status != IBV_WC_SUCCESS) {
				s->stats->errors++;
				fprintf(stderr, "rc_echo: %s\n", ibv_wc_status_str(wc[i].status));
			} else if (wc[i].wr_id & WRID_SEND) {
				s->stats->messages++;
				post_recv(s, slot);
			} else if (post_echo(s, slot, wc[i].byte_len) != 0) {
				s->stats->errors++;
			}
		}
	}
}

int
rc_echo_run(const struct rc_echo_conf *conf, const volatile bool *quit,
	    struct rc_echo_stats *stats)
{
	struct server s = { .conf = conf, .stats = stats, .listen_fd = -1 };
	struct pollfd pfd[2];
	int fd;

	srand((unsigned)time(NULL));
	if (server_open(&s) != 0) {
		fprintf(stderr, "rc_echo: cannot start on %s: %s\n",
			ibv_get_device_name(conf->dev), strerror(errno));
		server_close(&s);
		return -1;
	}
	pfd[0] = (struct pollfd){ .fd = s.listen_fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = s.ch->fd, .events = POLLIN };
	while (!*quit) {
		if (poll(pfd, 2, 100) <= 0)
			continue;
		if (pfd[1].revents & POLLIN)
			serve_cq(&s);
		if (!(pfd[0].revents & POLLIN))
			continue;
		fd = accept(s.listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		if (session_start(&s, fd) != 0) {
			fprintf(stderr, "rc_echo: a client's setup failed\n");
			stats->errors++;
		}
		close(fd);
	}
	server_close(&s);
	return 0;
}
