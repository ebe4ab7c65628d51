/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The drop-in librdmacm.so.1 in one process on a loopback device: the
 * event channel's fd, address and route resolution, a connection to
 * ourselves (listen, connect, accept, a SEND each way, disconnect), a
 * refused one, a UD service resolved (SIDR) and a datagram to it, a
 * multicast group joined, sent to and left, and the calls that must fail
 * cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>
#include <string.h>
#include <arpa/inet.h>

#include <check.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "droce_test.h"

#define PORT 7174

static struct rdma_event_channel *ch;

static struct sockaddr_in
addr(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	ck_assert_int_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return sin;
}

/* The next event, which must be @p want with status 0, within 20 s. */
static struct rdma_cm_event *
expect(enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), 0);
	ck_assert_msg(ev->event == want, "%s, not %s", rdma_event_str(ev->event),
		      rdma_event_str(want));
	ck_assert_int_eq(ev->status, 0);
	return ev;
}

static void
setup(void)
{
	ch = rdma_create_event_channel();
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
}

static void
teardown(void)
{
	rdma_destroy_event_channel(ch);
}

START_TEST(channel_and_failures)
{
	struct sockaddr_in nowhere = addr("192.0.2.1", 0);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	/* Nothing queued: a non-blocking channel says so. */
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_IPOIB), -1);
	ck_assert_int_eq(errno, EPROTONOSUPPORT);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	/* No droce device has this address. */
	ck_assert_int_eq(rdma_bind_addr(id, (struct sockaddr *)&nowhere), -1);
	ck_assert_int_eq(errno, EADDRNOTAVAIL);
	ck_assert_int_eq(rdma_join_multicast(id, (struct sockaddr *)&nowhere, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* Off the port's link, and no route there: an address error at once,
	 * as the kernel's route lookup gives it. */
	ck_assert_int_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&nowhere, 2000), 0);
	{
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

		ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
		ck_assert_int_eq(rdma_get_cm_event(ch, &ev), 0);
		ck_assert_int_eq(ev->event, RDMA_CM_EVENT_ADDR_ERROR);
		ck_assert_int_eq(ev->status, -ENETUNREACH);
		rdma_ack_cm_event(ev);
	}
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	ck_assert_int_eq(rsocket(AF_INET, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_str_eq(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED");
}
END_TEST

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * On the port's link, but nobody answers ARP (the ring brings our own
 * requests back): ADDR_ERROR with -ETIMEDOUT once timeout_ms is out, as
 * the kernel's neighbour resolution gives it. A second resolution while
 * one waits is EINVAL, and an ID destroyed while it waits gets no event.
 */
START_TEST(silent_neighbour_times_out)
{
	struct sockaddr_in silent = addr("10.99.0.77", 0);
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_id *id, *gone;
	struct rdma_cm_event *ev;
	uint64_t t0, waited;

	ck_assert_int_eq(rdma_create_id(ch, &gone, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_resolve_addr(gone, NULL, (struct sockaddr *)&silent, 100), 0);
	ck_assert_int_eq(rdma_destroy_id(gone), 0);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	t0 = now_ms();
	ck_assert_int_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&silent, 300), 0);
	ck_assert_int_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&silent, 300), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	waited = now_ms() - t0;
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), 0);
	ck_assert_ptr_eq(ev->id, id);
	ck_assert_int_eq(ev->event, RDMA_CM_EVENT_ADDR_ERROR);
	ck_assert_int_eq(ev->status, -ETIMEDOUT);
	ck_assert_uint_ge(waited, 300);
	rdma_ack_cm_event(ev);
	/* The destroyed ID's resolution, whose time ran out before, said nothing. */
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
}
END_TEST

/* Client and server in this process, on the one loopback device. */
START_TEST(connect_to_ourselves)
{
	struct sockaddr_in srv = addr("10.99.0.1", PORT);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
		.rnr_retry_count = 7, .private_data = "hello", .private_data_len = 6,
	};
	struct rdma_cm_id *l, *c, *s;
	struct rdma_cm_event *ev;
	char cbuf[64] = "from the client", sbuf[64] = { 0 };
	struct ibv_mr *cmr, *smr;
	struct ibv_wc wc;

	ck_assert_int_eq(rdma_create_id(ch, &l, NULL, RDMA_PS_TCP), 0);
	/* Port 0: the bind picks one, which the listener keeps (qperf tells
	 * its client the port between the two calls). */
	srv.sin_port = 0;
	ck_assert_int_eq(rdma_bind_addr(l, (struct sockaddr *)&srv), 0);
	srv.sin_port = rdma_get_src_port(l);
	ck_assert_uint_ne(srv.sin_port, 0);
	ck_assert_int_eq(rdma_listen(l, 8), 0);
	ck_assert_uint_eq(rdma_get_src_port(l), srv.sin_port);

	ck_assert_int_eq(rdma_create_id(ch, &c, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_resolve_addr(c, NULL, (struct sockaddr *)&srv, 2000), 0);
	ck_assert_int_eq(rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED)), 0);
	ck_assert_ptr_nonnull(c->verbs);
	ck_assert_int_eq(rdma_resolve_route(c, 2000), 0);
	ck_assert_int_eq(rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED)), 0);
	ck_assert_int_eq(c->route.num_paths, 1);
	ck_assert_int_eq(rdma_create_qp(c, NULL, &qa), 0);
	ck_assert_ptr_nonnull(c->send_cq);
	ck_assert_int_eq(rdma_connect(c, &cp), 0);

	ev = expect(RDMA_CM_EVENT_CONNECT_REQUEST);
	s = ev->id;
	ck_assert_ptr_eq(ev->listen_id, l);
	ck_assert_str_eq(ev->param.conn.private_data, "hello");
	ck_assert_uint_eq(ev->param.conn.qp_num, c->qp->qp_num);
	ck_assert_uint_eq(ntohs(rdma_get_dst_port(s)), ntohs(rdma_get_src_port(c)));
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	qa.send_cq = qa.recv_cq = NULL;
	ck_assert_int_eq(rdma_create_qp(s, NULL, &qa), 0);
	smr = rdma_reg_msgs(s, sbuf, sizeof(sbuf));
	ck_assert_ptr_nonnull(smr);
	ck_assert_int_eq(rdma_post_recv(s, NULL, sbuf, sizeof(sbuf), smr), 0);
	cp.private_data = "welcome";
	cp.private_data_len = 8;
	ck_assert_int_eq(rdma_accept(s, &cp), 0);

	/* Both ends established, in either order. */
	for (int i = 0; i < 2; i++) {
		ev = expect(RDMA_CM_EVENT_ESTABLISHED);
		if (ev->id == c)
			ck_assert_str_eq(ev->param.conn.private_data, "welcome");
		else
			ck_assert_ptr_eq(ev->id, s);
		rdma_ack_cm_event(ev);
	}
	cmr = rdma_reg_msgs(c, cbuf, sizeof(cbuf));
	ck_assert_ptr_nonnull(cmr);
	ck_assert_int_eq(rdma_post_send(c, NULL, cbuf, sizeof(cbuf), cmr, 0), 0);
	ck_assert_int_eq(rdma_get_send_comp(c, &wc), 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(rdma_get_recv_comp(s, &wc), 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_str_eq(sbuf, "from the client");

	/* The server destroys its QP with ibv_destroy_qp(), not
	 * rdma_destroy_qp(), as perftest does: the ID forgets it, and the
	 * client's DREQ (its QP to the error state) does not touch it. */
	ck_assert_int_eq(ibv_destroy_qp(s->qp), 0);
	ck_assert_ptr_null(s->qp);
	ck_assert_int_eq(rdma_disconnect(c), 0);
	ev = expect(RDMA_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, s);
	rdma_ack_cm_event(ev);
	ck_assert_int_eq(rdma_disconnect(s), 0);
	ev = expect(RDMA_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, c);
	rdma_ack_cm_event(ev);
	rdma_dereg_mr(cmr);
	rdma_dereg_mr(smr);
	rdma_destroy_qp(c);
	rdma_destroy_qp(s);
	ck_assert_int_eq(rdma_destroy_id(c), 0);
	ck_assert_int_eq(rdma_destroy_id(s), 0);
	ck_assert_int_eq(rdma_destroy_id(l), 0);
}
END_TEST

/* A port nobody listens on: REJ, reason 8 (invalid service ID). */
START_TEST(refused)
{
	struct sockaddr_in srv = addr("10.99.0.1", PORT + 1);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = -1, .events = POLLIN };
	struct rdma_cm_id *c;

	ck_assert_int_eq(rdma_create_id(ch, &c, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_resolve_addr(c, NULL, (struct sockaddr *)&srv, 2000), 0);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED));
	ck_assert_int_eq(rdma_resolve_route(c, 2000), 0);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED));
	ck_assert_int_eq(rdma_create_qp(c, NULL, &qa), 0);
	ck_assert_int_eq(rdma_connect(c, NULL), 0);
	pfd.fd = ch->fd;
	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), 0);
	ck_assert_int_eq(ev->event, RDMA_CM_EVENT_REJECTED);
	ck_assert_int_eq(ev->status, 8);
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(c);
	ck_assert_int_eq(rdma_destroy_id(c), 0);
}
END_TEST

/*
 * An event still queued when its ID is destroyed goes with its count: the
 * channel's fd is not readable after, so a thread waiting in
 * rdma_get_cm_event() does not wake for it (rping's event thread did, into
 * a channel its main thread was destroying).
 */
START_TEST(destroyed_id_leaves_no_count)
{
	struct sockaddr_in srv = addr("10.99.0.1", PORT + 2);
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_id *c;
	struct rdma_cm_event *ev;

	ck_assert_int_eq(rdma_create_id(ch, &c, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_resolve_addr(c, NULL, (struct sockaddr *)&srv, 2000), 0);
	ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
	ck_assert_int_eq(rdma_destroy_id(c), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
}
END_TEST

/* RDMA_PS_UDP: SIDR to our own listener, then a UD SEND to the QP it names. */
/*
 * Send the string in @p buf (@p len bytes) from UD ID @p from through an
 * address handle made from UD event @p ev (acknowledged here), and see
 * ID @p to receive it after the GRH in @p rbuf, from @p from's QP, within
 * 10 s.
 */
static void
ud_send_by_event(struct rdma_cm_id *from, struct rdma_cm_event *ev, char *buf, uint32_t len,
		 struct rdma_cm_id *to, const char *rbuf)
{
	struct ibv_ah *ah = ibv_create_ah(from->pd, &ev->param.ud.ah_attr);
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .num_sge = 1 }, *bad;
	struct ibv_mr *mr;
	struct ibv_sge sge;
	struct ibv_wc wc;

	ck_assert_ptr_nonnull(ah);
	wr.sg_list = &sge;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = ev->param.ud.qp_num;
	wr.wr.ud.remote_qkey = ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	mr = rdma_reg_msgs(from, buf, len);
	ck_assert_ptr_nonnull(mr);
	sge = (struct ibv_sge){ (uintptr_t)buf, len, mr->lkey };
	ck_assert_int_eq(ibv_post_send(from->qp, &wr, &bad), 0);
	ck_assert_int_eq(rdma_get_send_comp(from, &wc), 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	/* Polled with a deadline: a datagram that never comes fails the test
	 * here rather than blocking it. */
	for (double end = droce_test_now() + 10; ibv_poll_cq(to->recv_cq, 1, &wc) == 0;)
		ck_assert_msg(droce_test_now() < end, "the datagram did not arrive");
	ck_assert_uint_eq(wc.src_qp, from->qp->qp_num);
	ck_assert_str_eq(rbuf + sizeof(struct ibv_grh), buf);
	ibv_destroy_ah(ah);
	rdma_dereg_mr(mr);
}

START_TEST(ud_to_ourselves)
{
	struct sockaddr_in srv = addr("10.99.0.1", PORT + 2);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	struct rdma_conn_param cp = { .private_data = "udp hello", .private_data_len = 10 };
	char cbuf[64] = "a datagram", sbuf[sizeof(struct ibv_grh) + 64] = { 0 };
	struct rdma_cm_id *l, *c, *s;
	struct rdma_cm_event *ev;
	struct ibv_mr *smr;

	ck_assert_int_eq(rdma_create_id(ch, &l, NULL, RDMA_PS_UDP), 0);
	ck_assert_int_eq(l->qp_type, IBV_QPT_UD);
	ck_assert_int_eq(rdma_bind_addr(l, (struct sockaddr *)&srv), 0);
	ck_assert_int_eq(rdma_listen(l, 8), 0);
	ck_assert_int_eq(rdma_create_id(ch, &c, NULL, RDMA_PS_UDP), 0);
	ck_assert_int_eq(rdma_resolve_addr(c, NULL, (struct sockaddr *)&srv, 2000), 0);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED));
	ck_assert_int_eq(rdma_resolve_route(c, 2000), 0);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED));
	/* A UDP ID takes UD QPs only. */
	ck_assert_int_eq(rdma_create_qp(c, NULL, &qa), -1);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	qa.qp_type = IBV_QPT_UD;
	ck_assert_int_eq(rdma_create_qp(c, NULL, &qa), 0);
	ck_assert_int_eq(rdma_connect(c, &cp), 0);

	ev = expect(RDMA_CM_EVENT_CONNECT_REQUEST);
	s = ev->id;
	ck_assert_ptr_eq(ev->listen_id, l);
	ck_assert_str_eq(ev->param.ud.private_data, "udp hello");
	rdma_ack_cm_event(ev);
	qa.send_cq = qa.recv_cq = NULL;
	ck_assert_int_eq(rdma_create_qp(s, NULL, &qa), 0);
	smr = rdma_reg_msgs(s, sbuf, sizeof(sbuf));
	ck_assert_ptr_nonnull(smr);
	ck_assert_int_eq(rdma_post_recv(s, NULL, sbuf, sizeof(sbuf), smr), 0);
	cp.private_data = "ok";
	cp.private_data_len = 3;
	ck_assert_int_eq(rdma_accept(s, &cp), 0);

	/* The active side alone hears of it: the QP, its Q_Key, the way there. */
	ev = expect(RDMA_CM_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev->id, c);
	ck_assert_str_eq(ev->param.ud.private_data, "ok");
	ck_assert_uint_eq(ev->param.ud.qp_num, s->qp->qp_num);
	ck_assert_uint_eq(ev->param.ud.qkey, 0x01234567);
	ud_send_by_event(c, ev, cbuf, sizeof(cbuf), s, sbuf);

	/* Nothing to disconnect: the QP stops, and that is all. */
	ck_assert_int_eq(rdma_disconnect(c), 0);
	rdma_dereg_mr(smr);
	rdma_destroy_qp(c);
	rdma_destroy_qp(s);
	ck_assert_int_eq(rdma_destroy_id(c), 0);
	ck_assert_int_eq(rdma_destroy_id(s), 0);
	ck_assert_int_eq(rdma_destroy_id(l), 0);
}
END_TEST

/*
 * A multicast group on the loopback device: a receiver's join attaches its
 * QP and says how to reach the group, a send-only join attaches nothing,
 * a datagram to the group arrives, and a leave detaches. The joins that
 * are not for a UD ID with an address, or not of a multicast address,
 * fail with EINVAL.
 */
START_TEST(multicast_to_ourselves)
{
	struct sockaddr_in me = addr("10.99.0.1", 0), group = addr("239.1.2.3", 0);
	struct sockaddr_in unicast = addr("10.99.0.1", 0);
	struct sockaddr_in6 group6 = { .sin6_family = AF_INET6,
				       .sin6_addr = { .s6_addr = { 0xff, 0x0e, [15] = 1 } } };
	struct rdma_cm_join_mc_attr_ex ja = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS,
		.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
		.addr = (struct sockaddr *)&group,
	};
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	char sbuf[64] = "to the group", rbuf[sizeof(struct ibv_grh) + 64] = { 0 };
	struct rdma_cm_id *r, *s, *tcp;
	struct rdma_cm_event *ev;
	union ibv_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 } };
	struct ibv_mr *rmr;
	int marker;

	ck_assert_int_eq(rdma_create_id(ch, &r, NULL, RDMA_PS_UDP), 0);
	/* No address yet. */
	ck_assert_int_eq(rdma_join_multicast(r, (struct sockaddr *)&group, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rdma_bind_addr(r, (struct sockaddr *)&me), 0);
	ck_assert_int_eq(rdma_join_multicast(r, (struct sockaddr *)&unicast, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* An IPv6 group for an ID of an IPv4 address. */
	ck_assert_int_eq(rdma_join_multicast(r, (struct sockaddr *)&group6, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rdma_create_id(ch, &tcp, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_bind_addr(tcp, (struct sockaddr *)&me), 0);
	ck_assert_int_eq(rdma_join_multicast(tcp, (struct sockaddr *)&group, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rdma_destroy_id(tcp), 0);

	ck_assert_int_eq(rdma_create_qp(r, NULL, &qa), 0);
	rmr = rdma_reg_msgs(r, rbuf, sizeof(rbuf));
	ck_assert_ptr_nonnull(rmr);
	ck_assert_int_eq(rdma_post_recv(r, NULL, rbuf, sizeof(rbuf), rmr), 0);
	ck_assert_int_eq(rdma_join_multicast(r, (struct sockaddr *)&group, &marker), 0);
	ev = expect(RDMA_CM_EVENT_MULTICAST_JOIN);
	ck_assert_ptr_eq(ev->id, r);
	ck_assert_ptr_eq(ev->param.ud.private_data, &marker);
	ck_assert_uint_eq(ev->param.ud.qp_num, 0xffffff);
	ck_assert_uint_eq(ev->param.ud.qkey, 0x01234567);
	ck_assert_int_eq(ev->param.ud.ah_attr.is_global, 1);
	ck_assert_mem_eq(ev->param.ud.ah_attr.grh.dgid.raw, mgid.raw, 16);
	rdma_ack_cm_event(ev);

	/* The sender resolves the group's address and joins to send only. */
	ck_assert_int_eq(rdma_create_id(ch, &s, NULL, RDMA_PS_UDP), 0);
	ck_assert_int_eq(rdma_resolve_addr(s, (struct sockaddr *)&me, (struct sockaddr *)&group,
					   2000), 0);
	rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED));
	qa.send_cq = qa.recv_cq = NULL; /* CQs of its own */
	ck_assert_int_eq(rdma_create_qp(s, NULL, &qa), 0);
	/* The join flags are not optional in the _ex call, nor unknown ones. */
	ck_assert_int_eq(rdma_join_multicast_ex(s, &ja, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ja.comp_mask |= RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	ja.join_flags = RDMA_MC_JOIN_FLAG_RESERVED;
	ck_assert_int_eq(rdma_join_multicast_ex(s, &ja, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	ja.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	ck_assert_int_eq(rdma_join_multicast_ex(s, &ja, NULL), 0);
	ev = expect(RDMA_CM_EVENT_MULTICAST_JOIN);
	ck_assert_ptr_eq(ev->id, s);
	/* Send-only: its QP was not attached. */
	ck_assert_int_eq(ibv_detach_mcast(s->qp, &mgid, 0), EINVAL);
	ud_send_by_event(s, ev, sbuf, sizeof(sbuf), r, rbuf);

	/* Leaving detaches the receiver's QP; a second leave finds nothing. */
	ck_assert_int_eq(rdma_leave_multicast(r, (struct sockaddr *)&group), 0);
	ck_assert_int_eq(ibv_detach_mcast(r->qp, &mgid, 0), EINVAL);
	ck_assert_int_eq(rdma_leave_multicast(r, (struct sockaddr *)&group), -1);
	ck_assert_int_eq(errno, EADDRNOTAVAIL);
	ck_assert_int_eq(rdma_leave_multicast(s, (struct sockaddr *)&group), 0);

	rdma_dereg_mr(rmr);
	rdma_destroy_qp(s);
	rdma_destroy_qp(r);
	ck_assert_int_eq(rdma_destroy_id(s), 0);
	ck_assert_int_eq(rdma_destroy_id(r), 0);

	/* An ID without a channel: the join returns with its event the ID's. */
	ck_assert_int_eq(rdma_create_id(NULL, &s, NULL, RDMA_PS_UDP), 0);
	ck_assert_int_eq(rdma_bind_addr(s, (struct sockaddr *)&me), 0);
	qa.send_cq = qa.recv_cq = NULL;
	ck_assert_int_eq(rdma_create_qp(s, NULL, &qa), 0);
	ck_assert_int_eq(rdma_join_multicast(s, (struct sockaddr *)&group, &marker), 0);
	ck_assert_ptr_nonnull(s->event);
	ck_assert_int_eq(s->event->event, RDMA_CM_EVENT_MULTICAST_JOIN);
	ck_assert_ptr_eq(s->event->param.ud.private_data, &marker);
	ck_assert_int_eq(ibv_detach_mcast(s->qp, &mgid, 0), 0);
	rdma_destroy_qp(s);
	ck_assert_int_eq(rdma_destroy_id(s), 0);
}
END_TEST

static bool late_returned;

static void *
late_caller(void *arg)
{
	struct rdma_cm_event *ev;

	rdma_get_cm_event(arg, &ev);
	__atomic_store_n(&late_returned, true, __ATOMIC_RELEASE);
	return NULL;
}

/* rping's event thread, which the main thread does not join, may call
 * rdma_get_cm_event() once more after the channel is gone: it must find
 * the channel's memory (ASan tells) and wait there for good, as a read()
 * on rdma-core's closed fd would block on. */
START_TEST(late_caller_on_destroyed_channel)
{
	struct rdma_event_channel *gone = rdma_create_event_channel();
	pthread_t t;

	ck_assert_ptr_nonnull(gone);
	rdma_destroy_event_channel(gone);
	ck_assert_int_eq(pthread_create(&t, NULL, late_caller, gone), 0);
	ck_assert_int_eq(pthread_detach(t), 0);
	usleep(200 * 1000);
	ck_assert(!__atomic_load_n(&late_returned, __ATOMIC_ACQUIRE));
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("rdmacm");
	TCase *tc = tcase_create("loopback");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, channel_and_failures);
	tcase_add_test(tc, silent_neighbour_times_out);
	tcase_add_test(tc, connect_to_ourselves);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, destroyed_id_leaves_no_count);
	tcase_add_test(tc, ud_to_ourselves);
	tcase_add_test(tc, multicast_to_ourselves);
	tcase_add_test(tc, late_caller_on_destroyed_channel);
	suite_add_tcase(s, tc);
	return droce_test_run(s);
}
