/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process that forks keeps working: two devices of this process joined
 * by a memif link (memif.conf), an RC pair across it; a child exits
 * through the normal exit path (droce's exit handler runs there too) and
 * must not close the link under its parent, whose QPs then carry on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_test.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
	exit(1); } } while (0)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[8192];
	union ibv_gid gid;
};

static void
side_open(struct side *s, struct ibv_device *dev)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->ctx = ibv_open_device(dev);
	CHECK(s->ctx != NULL);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(s->qp && s->mr && ibv_query_gid(s->ctx, 1, 1, &s->gid) == 0);
}

static void
side_close(struct side *s)
{
	CHECK(ibv_destroy_qp(s->qp) == 0);
	CHECK(ibv_dereg_mr(s->mr) == 0);
	CHECK(ibv_destroy_cq(s->cq) == 0);
	CHECK(ibv_dealloc_pd(s->pd) == 0);
	CHECK(ibv_close_device(s->ctx) == 0);
}

/* One SEND from @p a to @p b, checked. */
static void
exchange(struct side *a, struct side *b, uint8_t pattern)
{
	struct ibv_sge ss = { (uintptr_t)a->buf, 5000, a->mr->lkey };
	struct ibv_sge rs = { (uintptr_t)b->buf, sizeof(b->buf), b->mr->lkey };
	struct ibv_send_wr sw = { .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_recv_wr rw = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	double end = droce_test_now() + 10;
	int got = 0;
	struct ibv_wc wc;

	memset(a->buf, pattern, 5000);
	CHECK(ibv_post_recv(b->qp, &rw, &rbad) == 0);
	CHECK(ibv_post_send(a->qp, &sw, &sbad) == 0);
	while (got < 2 && droce_test_now() < end) {
		if (ibv_poll_cq(a->cq, 1, &wc) == 1 || ibv_poll_cq(b->cq, 1, &wc) == 1) {
			CHECK(wc.status == IBV_WC_SUCCESS);
			got++;
		}
	}
	CHECK(got == 2 && b->buf[0] == pattern && b->buf[4999] == pattern);
}

int
main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	static struct side a, b;
	struct droce_test_path pa = { 0 }, pb = { 0 };
	int status;
	pid_t pid;

	CHECK(list != NULL && list[0] != NULL && list[1] != NULL);
	side_open(&a, list[0]);
	side_open(&b, list[1]);
	ibv_free_device_list(list);
	pa.dqpn = b.qp->qp_num;
	pa.dgid = b.gid;
	pb.dqpn = a.qp->qp_num;
	pb.dgid = a.gid;
	CHECK(droce_test_connect(a.qp, &pa) == 0 && droce_test_connect(b.qp, &pb) == 0);
	exchange(&a, &b, 0x11);

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		exit(0); /* atexit handlers run: they must leave the parent's link be */
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	usleep(200000); /* time for a disconnect, had the child caused one */

	exchange(&b, &a, 0x22);
	exchange(&a, &b, 0x33);
	side_close(&a);
	side_close(&b);
	printf("fork: the parent's QPs work after its child exited\n1 passed, 0 failed\n");
	return 0;
}
