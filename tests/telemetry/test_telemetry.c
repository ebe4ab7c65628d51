/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce's counters through rte_telemetry, in a process that runs droce's
 * loopback device with telemetry on and TX faults on: two RC QPs exchange
 * SENDs through a port that drops some frames, then the test asks the
 * EAL's telemetry socket, as dpdk-telemetry.py would, and checks what the
 * port, the engine and the QPs say.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "droce_test.h"
#include <rte_cycles.h>
#include <rte_eal.h>

#include "droce_stats.h"

#define MSGS 200
#define MSG_LEN 1024

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t buf[2 * MSG_LEN];
static union ibv_gid gid;
static int tel_fd = -1;

/* ---- the telemetry socket ---- */

/* Send @p cmd and put the reply, NUL-terminated, in @p out. */
static void
tel_query(const char *cmd, char *out, size_t len)
{
	ssize_t n;

	ck_assert_int_eq(send(tel_fd, cmd, strlen(cmd), 0), (ssize_t)strlen(cmd));
	n = recv(tel_fd, out, len - 1, 0);
	ck_assert_int_gt(n, 0);
	out[n] = '\0';
}

/* The number after "key": in a JSON reply, or -1. */
static long long
json_num(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p != NULL ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static void
tel_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char hello[1024];

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	tel_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	ck_assert_int_ge(tel_fd, 0);
	ck_assert_msg(connect(tel_fd, (struct sockaddr *)&sun, sizeof(sun)) == 0,
		      "connect %s: %s", sun.sun_path, strerror(errno));
	/* The greeting: version, pid, max_output_len. */
	ck_assert_int_gt(recv(tel_fd, hello, sizeof(hello), 0), 0);
}

/* ---- verbs ---- */

static struct ibv_qp *
rc_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = MSGS, .max_recv_wr = MSGS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	ck_assert_ptr_nonnull(qp);
	return qp;
}

/* To RTS, talking to @p dqpn through the device itself; a short ACK
 * timeout (timeout 10: about 4 ms) so that lost frames are resent soon. */
static void
rc_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct droce_test_path p = { .dqpn = dqpn, .dgid = gid, .timeout = 10,
				     .access = IBV_ACCESS_LOCAL_WRITE };

	ck_assert_int_eq(droce_test_connect(qp, &p), 0);
}

/* MSGS SENDs from @p q1 to @p q2, all completed successfully. */
static void
exchange(struct ibv_qp *q1, struct ibv_qp *q2)
{
	struct ibv_sge rs = { (uintptr_t)buf, MSG_LEN, mr->lkey };
	struct ibv_sge ss = { (uintptr_t)buf + MSG_LEN, MSG_LEN, mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	struct ibv_wc wc[16];
	double end;
	int i, n, done = 0;

	for (i = 0; i < MSGS; i++) {
		rwr.wr_id = i;
		ck_assert_int_eq(ibv_post_recv(q2, &rwr, &rbad), 0);
	}
	for (i = 0; i < MSGS; i++) {
		swr.wr_id = MSGS + i;
		ck_assert_int_eq(ibv_post_send(q1, &swr, &sbad), 0);
	}
	end = droce_test_now() + 60;
	while (done < 2 * MSGS) {
		n = ibv_poll_cq(cq, 16, wc);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++)
			ck_assert_msg(wc[i].status == IBV_WC_SUCCESS, "wr %llu: %s",
				      (unsigned long long)wc[i].wr_id,
				      ibv_wc_status_str(wc[i].status));
		done += n;
		ck_assert_msg(droce_test_now() < end, "%d of %d completions within 60 s", done, 2 * MSGS);
	}
}

/*
 * The engine's work and cycle counters after the exchange (the device
 * talks to itself: its engine sent and received every SEND). Resent
 * frames count again, so "at least"; the cycles must be there and sane.
 */
static void
check_work(const char *reply)
{
	const struct droce_engine_stats *e;
	struct droce_dev_stats s;

	ck_assert_int_ge(json_num(reply, "tx_msgs"), MSGS);
	ck_assert_int_ge(json_num(reply, "rx_msgs"), MSGS);
	ck_assert_int_ge(json_num(reply, "tx_payload_bytes"), (long long)MSGS * MSG_LEN);
	ck_assert_int_ge(json_num(reply, "rx_payload_bytes"), (long long)MSGS * MSG_LEN);
	ck_assert_int_gt(json_num(reply, "busy_cycles"), 0);
	ck_assert_int_ge(json_num(reply, "long_iterations"), 0);
	ck_assert_int_eq(droce_dev_stats(0, &s), 0);
	e = &s.engine;
	/* the frames to itself went through the loopback ring, not the
	 * ethdev, whose empty RX bursts are not timed: the port's share is
	 * what little else it carried */
	ck_assert_uint_gt(e->busy_cycles, e->rx_burst_cycles + e->tx_burst_cycles);
	/* under a millisecond per message, whatever the load (preempted
	 * iterations are left out) */
	ck_assert_uint_lt(e->busy_cycles / e->tx_msgs, rte_get_tsc_hz() / 1000);
	/* ACKs are no messages: one message per SEND each way, plus resends */
	ck_assert_uint_le(e->rx_msgs, e->tx_msgs);
}

START_TEST(test_counters)
{
	struct droce_dev_stats s;
	struct ibv_qp *q1, *q2;
	char cmd[64], reply[16384];

	q1 = rc_qp();
	q2 = rc_qp();
	rc_connect(q1, q2->qp_num);
	rc_connect(q2, q1->qp_num);
	exchange(q1, q2);

	tel_connect();
	tel_query("/droce/ports", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "\"/droce/ports\":[0]") != NULL, "%s", reply);

	tel_query("/droce/port,0", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "\"name\":\"droce0\"") != NULL, "%s", reply);
	ck_assert_int_ge(json_num(reply, "tx_frames"), MSGS);
	ck_assert_int_ge(json_num(reply, "rx_roce"), MSGS);
	ck_assert_int_gt(json_num(reply, "tx_fault_dropped"), 0);
	ck_assert_int_eq(json_num(reply, "rx_fault_dropped"), 0);
	ck_assert_int_gt(json_num(reply, "iterations"), 0);
	ck_assert_int_ge(json_num(reply, "rx_unknown_qpn"), 0);
	ck_assert_int_ge(json_num(reply, "tx_stall_drops"), 0);
	/* The C API says at least as much, a little later. */
	ck_assert_int_eq(droce_dev_stats(0, &s), 0);
	ck_assert_uint_ge(s.port.tx_fault.dropped,
			  (unsigned long long)json_num(reply, "tx_fault_dropped"));
	ck_assert_uint_ge(s.port.tx_frames, (unsigned long long)json_num(reply, "tx_frames"));
	ck_assert_int_eq(droce_dev_stats(7, &s), -ENODEV);
	check_work(reply);

	tel_query("/droce/qps,0", reply, sizeof(reply));
	snprintf(cmd, sizeof(cmd), "%u,%u", q1->qp_num, q2->qp_num);
	ck_assert_msg(strstr(reply, cmd) != NULL, "%s", reply);

	/* Lost frames were resent: SENDs or their ACKs. */
	snprintf(cmd, sizeof(cmd), "/droce/qp,0,%u", q1->qp_num);
	tel_query(cmd, reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "\"state\":\"RTS\"") != NULL, "%s", reply);
	ck_assert_msg(strstr(reply, "\"type\":\"RC\"") != NULL, "%s", reply);
	ck_assert_int_ge(json_num(reply, "tx_pkts"), MSGS);
	ck_assert_int_gt(json_num(reply, "retransmits"), 0);
	ck_assert_int_ge(json_num(reply, "rx_pkts"), 1);
	snprintf(cmd, sizeof(cmd), "/droce/qp,0,%u", q2->qp_num);
	tel_query(cmd, reply, sizeof(reply));
	ck_assert_int_ge(json_num(reply, "rx_pkts"), MSGS);

	/* Wrong parameters answer null. */
	tel_query("/droce/port,7", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "null") != NULL, "%s", reply);
	tel_query("/droce/port,0x", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "null") != NULL, "%s", reply);
	tel_query("/droce/qp,0,1", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "null") != NULL, "%s", reply);

	ck_assert_int_eq(ibv_destroy_qp(q1), 0);
	ck_assert_int_eq(ibv_destroy_qp(q2), 0);
	tel_query("/droce/qps,0", reply, sizeof(reply));
	ck_assert_msg(strstr(reply, "\"/droce/qps\":[]") != NULL, "%s", reply);
	close(tel_fd);
}
END_TEST

/* ---- main ---- */

/* The loopback device with telemetry on, in a runtime directory of its
 * own, and TX faults that make the transport resend. */
static void
open_device(char *conf, size_t len)
{
	struct ibv_device **list;
	FILE *f;
	int n;

	snprintf(conf, len, "/tmp/droce-test-telemetry-%d.conf", getpid());
	f = fopen(conf, "w");
	if (f == NULL)
		exit(EXIT_FAILURE);
	fprintf(f, "[eal]\nargs = -l 0 --no-huge -m 512 --no-shconf --no-pci "
		"--file-prefix=droce_tel_%d --vdev=net_ring0\n"
		"[port0]\ndevice = net_ring0\nipv4 = 10.97.0.1/24\nmtu = 1024\n"
		"fault_tx = drop=0.05,seed=3\n", getpid());
	fclose(f);
	setenv("DROCE_CONF", conf, 1);
	list = ibv_get_device_list(&n);
	if (list == NULL || n != 1) {
		fprintf(stderr, "no droce device\n");
		exit(EXIT_FAILURE);
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (ctx == NULL || droce_telemetry_init() != 0 || ibv_query_gid(ctx, 1, 1, &gid) != 0)
		exit(EXIT_FAILURE);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * MSGS, NULL, NULL, 0);
	mr = pd != NULL ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (cq == NULL || mr == NULL)
		exit(EXIT_FAILURE);
}

int
main(void)
{
	Suite *s = suite_create("telemetry");
	TCase *tc = tcase_create("telemetry");
	char conf[64];
	SRunner *sr;
	int failed;

	open_device(conf, sizeof(conf));
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_counters);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	unlink(conf);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
