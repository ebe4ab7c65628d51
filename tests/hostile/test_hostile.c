/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A hostile wire: frames a peer should never send, sent to a droce device
 * by a raw peer (tests/common/droce_peer.h), one regression test per
 * fault that crashed or corrupted droce before the receive path had its
 * validity check:
 *  - every opcode to every kind of QP (a SEND to an XRC initiator, which
 *    has no receive CQ, crashed the process);
 *  - SEND, WRITE, UD and READ response payloads in chained mbufs (copied
 *    as if the frame were one segment: read past the first segment);
 *  - opcodes out of the message sequence (a WRITE with immediate inside a
 *    SEND completed the SEND's receive early, and its LAST a second time);
 *  - P_Key and Q_Key mismatches;
 *  - a frame to a destroyed QP's number;
 *  - READs asked again: answered from the ring of max_dest_rd_atomic
 *    kept requests, oldest first; one older than the ring, not at all;
 *  - a SEND into a receive buffer whose region lacks local write;
 *  - a burst of long WRITEs with a corrupt frame inside: each payload's
 *    copy waits for the next frame's ICRC check (droce_payload_to_mem()),
 *    yet every good frame before the corrupt one lands whole, nothing of
 *    the corrupt one or after it does, and the burst's last payload is
 *    there too; a WRITE with immediate has its bytes in place when its
 *    completion is seen; the same for a SEND's packets, whose receive
 *    completes only once its LAST arrives, and for a READ's response;
 *  - requests taken a run at a time (a long WRITE's MIDDLE packets, small
 *    WRITEs, small SENDs): each way a run ends, and every packet it does
 *    not take goes the general way, treated as it would have been.
 * Every receive completes at most once, and every refusal is counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "droce.h"
#include "droce_peer.h"
#include "droce_req_priv.h"
#include "droce_transport.h"
#include "droce_test.h"

#define PEER_QPN 0x100
#define PSN 0x10
#define BUF 65536
#define MTU 1024
#define QKEY 0x11111111u

static struct droce_peer peer;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint8_t pattern[BUF];

static void
setup(void)
{
	if (pd != NULL)
		return;
	ck_assert_int_eq(droce_peer_open(&peer, 4096), 0);
	droce_peer_verbs(&peer, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, &pd, &cq, &buf, &mr);
	ck_assert_ptr_nonnull(cq);
	ck_assert_ptr_nonnull(mr);
	/* No two 256-byte blocks alike: a payload in the wrong place shows. */
	for (unsigned i = 0; i < BUF; i++)
		pattern[i] = (uint8_t)(i * 7 + 3 + (i >> 8));
	droce_peer_teach(&peer);
}

static struct ibv_qp *
make_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN,
					.qkey = QKEY };

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	return qp;
}

static void
post_recv(struct ibv_qp *qp, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf + off, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

/* Every completion now on the CQ, into @p wc. @return how many. */
static int
poll_all(struct ibv_wc *wc, int max)
{
	return droce_peer_poll_cq(&peer, cq, wc, max);
}

static void
destroy(struct ibv_qp *qp)
{
	struct ibv_wc wc[64];

	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	poll_all(wc, 64);
	droce_peer_drain(&peer);
}

/* The next RoCE frame the device sent is an ACK or NAK with @p syndrome type/code. */
static void
expect_aeth(uint8_t syndrome)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;

	while ((m = droce_peer_recv(&peer, &pkt)) != NULL && pkt.op == NULL)
		rte_pktmbuf_free(m);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(pkt.opcode & DROCE_OP_MASK, DROCE_OP_ACK);
	ck_assert_uint_eq(droce_aeth_syndrome(droce_pkt_hdr(m, &pkt, DROCE_HDR_AETH)) &
			  (DROCE_AETH_TYPE_MASK | ((syndrome & DROCE_AETH_TYPE_MASK) ==
						  DROCE_AETH_NAK ? DROCE_AETH_VALUE_MASK : 0)),
			  syndrome);
	rte_pktmbuf_free(m);
}

/* The next async event is @p type, about @p qp (the responder's own event). */
static void
expect_event(struct ibv_qp *qp, enum ibv_event_type type)
{
	struct ibv_async_event ev;

	ck_assert_int_eq(ibv_get_async_event(peer.ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, type);
	ck_assert_ptr_eq(ev.element.qp, qp);
	ibv_ack_async_event(&ev);
}

static struct droce_reth
reth(uint64_t va, uint32_t rkey, uint32_t len)
{
	return (struct droce_reth){ .va = rte_cpu_to_be_64(va), .rkey = rte_cpu_to_be_32(rkey),
				    .len = rte_cpu_to_be_32(len) };
}

/*
 * Every opcode droce knows, addressed to every kind of QP: the handlers
 * see only what the QP receives; the rest is dropped and counted. Nothing
 * crashes, whatever the QP lacks (an XRC initiator has no receive CQ).
 */
START_TEST(every_opcode_to_every_qp_kind)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
	};
	static const uint8_t kinds[] = {
		DROCE_RCV_RC, DROCE_RCV_UC, DROCE_RCV_UD, DROCE_RCV_XRC_INI, DROCE_RCV_XRC_TGT,
	};
	struct ibv_xrcd_init_attr xda = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						      IBV_XRCD_INIT_ATTR_OFLAGS,
					  .fd = -1, .oflags = O_CREAT };
	struct ibv_xrcd *xrcd = ibv_open_xrcd(peer.ctx, &xda);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = cq, .xrcd = xrcd,
	};
	struct ibv_srq *srq;
	uint32_t srqn;
	uint8_t ext[64] = { 0 };

	ck_assert_ptr_nonnull(xrcd);
	srq = ibv_create_srq_ex(peer.ctx, &sa);
	ck_assert_ptr_nonnull(srq);
	ck_assert_int_eq(ibv_get_srq_num(srq, &srqn), 0);

	for (unsigned t = 0; t < RTE_DIM(types); t++) {
		for (unsigned op = 0; op < 256; op++) {
			const struct droce_opcode_info *info = &droce_opcode_table[op];
			struct ibv_qp *qp;
			uint64_t refused;
			struct ibv_qp_init_attr_ex xa;

			if (info->name == NULL)
				continue;
			if (types[t] == IBV_QPT_XRC_SEND || types[t] == IBV_QPT_XRC_RECV) {
				xa = (struct ibv_qp_init_attr_ex){
					.qp_type = types[t], .send_cq = cq,
					.comp_mask = types[t] == IBV_QPT_XRC_SEND ?
						     IBV_QP_INIT_ATTR_PD : IBV_QP_INIT_ATTR_XRCD,
					.pd = pd, .xrcd = xrcd,
					.cap = { .max_send_wr = 4, .max_send_sge = 1 } };
				if (types[t] == IBV_QPT_XRC_RECV) {
					struct ibv_sge sge = { (uintptr_t)buf, 4096, mr->lkey };
					struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge,
								   .num_sge = 1 }, *rbad;

					xa.send_cq = NULL;
					ck_assert_int_eq(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
				}
				qp = ibv_create_qp_ex(peer.ctx, &xa);
				ck_assert_ptr_nonnull(qp);
				ck_assert_int_eq(droce_test_connect(qp, &(struct droce_test_path){
					.dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN }), 0);
			} else {
				qp = make_qp(types[t], NULL);
				post_recv(qp, 1, 0, 4096);
			}
			/* DETH: the QP's Q_Key, XRCETH: the SRQ, so frames get past them. */
			memset(ext, 0, sizeof(ext));
			if (info->flags & DROCE_OPF_DETH)
				((struct droce_deth *)ext)->qkey = rte_cpu_to_be_32(QKEY);
			if (info->flags & DROCE_OPF_XRCETH)
				droce_put24(((struct droce_xrceth *)ext)->srqn, srqn);
			refused = droce_peer_stat(&peer, "rx_wrong_service") +
				  droce_peer_stat(&peer, "rx_bad_qp_type");
			droce_peer_send(&peer, &(struct droce_peer_frame){
				.opcode = (uint8_t)op, .dqpn = qp->qp_num, .psn = PSN,
				.ext = ext, .ext_len = info->hdr_len - sizeof(struct droce_bth),
				.payload = pattern,
				.len = (info->flags & DROCE_OPF_PAYLOAD) ? 64 : 0 });
			ck_assert_msg(droce_peer_stat(&peer, "rx_wrong_service") +
				      droce_peer_stat(&peer, "rx_bad_qp_type") ==
				      refused + !(info->to & kinds[t]),
				      "%s to QP type %d: counted wrong", info->name, types[t]);
			destroy(qp);
		}
	}
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_close_xrcd(xrcd), 0);
	/* The events the refused requests raised went with their QPs. */
	{
		struct ibv_async_event ev;
		int fl = fcntl(peer.ctx->async_fd, F_GETFL);

		fcntl(peer.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
		ck_assert_int_eq(ibv_get_async_event(peer.ctx, &ev), -1);
		ck_assert_int_eq(errno, EAGAIN);
		fcntl(peer.ctx->async_fd, F_SETFL, fl);
	}
}
END_TEST

/* An XRC SEND to an XRC initiator: the crash of issue 11, on its own. */
START_TEST(send_to_xrc_initiator_is_dropped)
{
	struct ibv_qp_init_attr_ex xa = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd, .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp_ex(peer.ctx, &xa);
	struct droce_xrceth x = { 0 };
	uint64_t before = droce_peer_stat(&peer, "rx_bad_qp_type");

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &(struct droce_test_path){
		.dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN }), 0);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_XRC | DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = PSN,
		.ext = &x, .ext_len = sizeof(x), .payload = pattern, .len = 100 });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_qp_type"), before + 1);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
	destroy(qp);
}
END_TEST

/* A two-packet SEND and a WRITE, each packet in 7 segments of 150 bytes. */
START_TEST(chained_send_and_write_land_byte_exact)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct droce_reth r = reth((uintptr_t)buf + 8192, mr->rkey, 1500);
	struct ibv_wc wc[4];

	memset(buf, 0, BUF);
	post_recv(qp, 7, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_FIRST, .dqpn = qp->qp_num, .psn = PSN,
		.payload = pattern, .len = MTU, .seg = 150 });
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_LAST, .dqpn = qp->qp_num, .psn = PSN + 1, .ackreq = true,
		.payload = pattern + MTU, .len = 900, .seg = 150 });
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 7);
	ck_assert_uint_eq(wc[0].byte_len, MTU + 900);
	ck_assert_int_eq(memcmp(buf, pattern, MTU + 900), 0);
	ck_assert_uint_eq(buf[MTU + 900], 0);
	expect_aeth(DROCE_AETH_ACK);

	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_WRITE_FIRST, .dqpn = qp->qp_num, .psn = PSN + 2,
		.ext = &r, .ext_len = sizeof(r), .payload = pattern, .len = MTU, .seg = 150 });
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_WRITE_LAST, .dqpn = qp->qp_num, .psn = PSN + 3, .ackreq = true,
		.payload = pattern + MTU, .len = 1500 - MTU, .seg = 150 });
	expect_aeth(DROCE_AETH_ACK);
	ck_assert_int_eq(memcmp(buf + 8192, pattern, 1500), 0);
	ck_assert_uint_eq(buf[8192 + 1500], 0);
	destroy(qp);
}
END_TEST

/* WRITE ONLY frames @p first..@p last - 1 of WRITE_BURST_LEN bytes each,
 * frame i to buf + i * WRITE_BURST_LEN, enqueued for one RX burst (frame
 * @p bad with a wrong ICRC), then the device run. */
#define WRITE_BURST_LEN 1000

static void
write_burst(struct ibv_qp *qp, unsigned first, unsigned last, unsigned bad)
{
	for (unsigned i = first; i < last; i++) {
		struct droce_reth r = reth((uintptr_t)buf + i * WRITE_BURST_LEN, mr->rkey,
					   WRITE_BURST_LEN);
		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = DROCE_OP_WRITE_ONLY, .dqpn = qp->qp_num, .psn = PSN + i,
			.ackreq = i + 1 == last, .ext = &r, .ext_len = sizeof(r),
			.payload = pattern + i * WRITE_BURST_LEN, .len = WRITE_BURST_LEN,
			.bad_icrc = i == bad });
	}
	droce_peer_run(&peer);
}

static uint64_t
port_bad_icrc(void)
{
	struct droce_port_stats s;

	droce_port_stats_get(droce_dev_port(peer.dev), &s);
	return s.rx_bad_icrc;
}

/* A burst's long payloads are copied beside the next frame's check. */
START_TEST(write_burst_with_a_corrupt_frame_lands_what_was_good)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t bad_icrc = port_bad_icrc();
	struct droce_reth r = reth((uintptr_t)buf + 7 * WRITE_BURST_LEN, mr->rkey, 600);
	uint32_t imm = rte_cpu_to_be_32(0x5eed);
	uint8_t ext[sizeof(r) + sizeof(imm)];
	struct ibv_wc wc[4];

	memset(buf, 0, BUF);
	/* 0-2 land (2 copied beside 3's failing check), 3 is dropped, 4-5
	 * are out of sequence: none of 3-5 is written. */
	write_burst(qp, 0, 6, 3);
	ck_assert_uint_eq(port_bad_icrc(), bad_icrc + 1);
	ck_assert_int_eq(memcmp(buf, pattern, 3 * WRITE_BURST_LEN), 0);
	for (unsigned i = 3 * WRITE_BURST_LEN; i < 6 * WRITE_BURST_LEN; i++)
		ck_assert_uint_eq(buf[i], 0);
	droce_peer_drain(&peer);
	/* Sent again: all land, the last one copied as the burst ends. */
	write_burst(qp, 3, 6, UINT32_MAX);
	ck_assert_int_eq(memcmp(buf, pattern, 6 * WRITE_BURST_LEN), 0);
	ck_assert_uint_eq(buf[6 * WRITE_BURST_LEN], 0);
	droce_peer_drain(&peer);
	/* A long WRITE, then a WRITE with immediate: when its completion
	 * is seen, both payloads are in place. */
	post_recv(qp, 9, 0, 0);
	write_burst(qp, 6, 7, UINT32_MAX);
	memcpy(ext, &r, sizeof(r));
	memcpy(ext + sizeof(r), &imm, sizeof(imm));
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_WRITE_ONLY_IMM, .dqpn = qp->qp_num, .psn = PSN + 7,
		.ackreq = true, .ext = ext, .ext_len = sizeof(ext),
		.payload = pattern + 7 * WRITE_BURST_LEN, .len = 600 });
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_int_eq(memcmp(buf, pattern, 7 * WRITE_BURST_LEN + 600), 0);
	destroy(qp);
}
END_TEST

/* SEND packets @p first..@p last - 1 of MTU bytes (the LAST 500), one RX
 * burst, packet @p bad with a wrong ICRC. */
static void
send_burst(struct ibv_qp *qp, unsigned first, unsigned last, unsigned bad)
{
	for (unsigned i = first; i < last; i++) {
		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = i == 0 ? DROCE_OP_SEND_FIRST : i == 3 ? DROCE_OP_SEND_LAST :
				  DROCE_OP_SEND_MIDDLE,
			.dqpn = qp->qp_num, .psn = PSN + i, .ackreq = i + 1 == last,
			.payload = pattern + i * MTU, .len = i == 3 ? 500 : MTU,
			.bad_icrc = i == bad });
	}
	droce_peer_run(&peer);
}

START_TEST(send_burst_with_a_corrupt_packet_completes_once_whole)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t bad_icrc = port_bad_icrc();
	struct ibv_wc wc[4];

	memset(buf, 0, BUF);
	post_recv(qp, 5, 0, 4 * MTU);
	/* FIRST and MIDDLE land (the MIDDLE copied beside the next
	 * packet's failing check); the rest waits, uncompleted. */
	send_burst(qp, 0, 4, 2);
	ck_assert_uint_eq(port_bad_icrc(), bad_icrc + 1);
	ck_assert_int_eq(poll_all(wc, 4), 0);
	ck_assert_int_eq(memcmp(buf, pattern, 2 * MTU), 0);
	for (unsigned i = 2 * MTU; i < 4 * MTU; i++)
		ck_assert_uint_eq(buf[i], 0);
	droce_peer_drain(&peer);
	send_burst(qp, 2, 4, UINT32_MAX);
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].byte_len, 3 * MTU + 500);
	ck_assert_int_eq(memcmp(buf, pattern, 3 * MTU + 500), 0);
	ck_assert_uint_eq(buf[3 * MTU + 500], 0);
	destroy(qp);
}
END_TEST

/* A UD datagram in 64-byte segments: GRH and payload byte exact. */
START_TEST(chained_ud_datagram_lands_byte_exact)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, NULL);
	struct droce_deth d = { .qkey = rte_cpu_to_be_32(QKEY), .sqpn = { 0, 0x12, 0x34 } };
	struct ibv_wc wc[2];

	memset(buf, 0, BUF);
	post_recv(qp, 9, 0, 40 + MTU);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_UD | DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = 1,
		.ext = &d, .ext_len = sizeof(d), .payload = pattern, .len = 777, .seg = 64 });
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].byte_len, 40 + 777);
	ck_assert_uint_eq(wc[0].src_qp, 0x1234);
	/* The IPv4 header in the GRH's last 20 bytes: from the peer. */
	ck_assert_uint_eq(buf[20], 0x45);
	ck_assert_int_eq(memcmp(buf + 40, pattern, 777), 0);
	destroy(qp);
}
END_TEST

/* The READ request the device sent: its PSN. */
static uint32_t
take_read_request(void)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	uint32_t psn;

	while ((m = droce_peer_recv(&peer, &pkt)) != NULL && pkt.op == NULL)
		rte_pktmbuf_free(m);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(pkt.opcode, DROCE_OP_READ_REQUEST);
	psn = pkt.psn;
	rte_pktmbuf_free(m);
	return psn;
}

/*
 * A READ's response in chained mbufs lands byte exact; a MIDDLE with no
 * FIRST before it is dropped, and the READ completes once.
 */
START_TEST(chained_read_response_and_its_sequence)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_sge sge = { (uintptr_t)buf, 2000, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 11, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct droce_aeth a;
	struct ibv_wc wc[4];
	uint64_t seq = droce_peer_stat(&peer, "rx_bad_opcode_seq");
	uint32_t psn;

	memset(buf, 0, BUF);
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x77;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	psn = take_read_request();
	droce_aeth_set(&a, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 1);
	/* A MIDDLE where the FIRST belongs: forged or stale, dropped. */
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_READ_RESP_MIDDLE, .dqpn = qp->qp_num, .psn = psn,
		.payload = pattern + 100, .len = MTU, .seg = 100 });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_opcode_seq"), seq + 1);
	ck_assert_int_eq(poll_all(wc, 4), 0);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_READ_RESP_FIRST, .dqpn = qp->qp_num, .psn = psn,
		.ext = &a, .ext_len = sizeof(a), .payload = pattern, .len = MTU, .seg = 100 });
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_READ_RESP_LAST, .dqpn = qp->qp_num, .psn = psn + 1,
		.ext = &a, .ext_len = sizeof(a), .payload = pattern + MTU, .len = 2000 - MTU,
		.seg = 100 });
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 11);
	ck_assert_int_eq(memcmp(buf, pattern, 2000), 0);
	/* The LAST again: a duplicate, no second completion. */
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_READ_RESP_LAST, .dqpn = qp->qp_num, .psn = psn + 1,
		.ext = &a, .ext_len = sizeof(a), .payload = pattern + MTU, .len = 2000 - MTU });
	ck_assert_int_eq(poll_all(wc, 4), 0);
	destroy(qp);
}
END_TEST

/* READ response packets @p first..@p last - 1 (FIRST, MIDDLE, LAST of
 * MTU, MTU and 500 bytes from @p psn on), one RX burst, packet @p bad with
 * a wrong ICRC. */
static void
read_resp_burst(struct ibv_qp *qp, uint32_t psn, unsigned first, unsigned last, unsigned bad)
{
	static const uint8_t ops[] = {
		DROCE_OP_READ_RESP_FIRST, DROCE_OP_READ_RESP_MIDDLE, DROCE_OP_READ_RESP_LAST,
	};
	struct droce_aeth a;

	droce_aeth_set(&a, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 1);
	for (unsigned i = first; i < last; i++) {
		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = ops[i], .dqpn = qp->qp_num, .psn = psn + i,
			.ext = i == 1 ? NULL : &a, .ext_len = i == 1 ? 0 : sizeof(a),
			.payload = pattern + i * MTU, .len = i == 2 ? 500 : MTU,
			.bad_icrc = i == bad });
	}
	droce_peer_run(&peer);
}

/* A READ response's FIRST and MIDDLE are copied beside the next packet's
 * check; its LAST completes it, once, with every byte in place. */
START_TEST(read_response_burst_with_a_corrupt_packet_completes_once_whole)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_sge sge = { (uintptr_t)buf, 2 * MTU + 500, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 12, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	uint64_t bad_icrc = port_bad_icrc();
	struct ibv_wc wc[4];
	uint32_t psn;

	memset(buf, 0, BUF);
	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x77;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	psn = take_read_request();
	/* The FIRST lands (copied beside the MIDDLE's failing check); the
	 * LAST is out of sequence: the READ is asked again from the MIDDLE. */
	read_resp_burst(qp, psn, 0, 3, 1);
	ck_assert_uint_eq(port_bad_icrc(), bad_icrc + 1);
	ck_assert_int_eq(poll_all(wc, 4), 0);
	ck_assert_int_eq(memcmp(buf, pattern, MTU), 0);
	for (unsigned i = MTU; i < 2 * MTU + 500; i++)
		ck_assert_uint_eq(buf[i], 0);
	droce_peer_drain(&peer);
	read_resp_burst(qp, psn, 1, 3, UINT32_MAX);
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 12);
	ck_assert_int_eq(memcmp(buf, pattern, 2 * MTU + 500), 0);
	ck_assert_uint_eq(buf[2 * MTU + 500], 0);
	destroy(qp);
}
END_TEST

/*
 * A SEND_FIRST, then a request that is not the SEND's MIDDLE or LAST: an
 * RC responder NAKs it (invalid request), completes the receive once, in
 * error, and goes to the error state; the SEND_LAST that follows
 * completes nothing.
 */
START_TEST(rc_opcode_out_of_sequence_is_naked)
{
	static const uint8_t intruders[] = {
		DROCE_OP_WRITE_ONLY_IMM, DROCE_OP_WRITE_ONLY, DROCE_OP_READ_REQUEST,
		DROCE_OP_FETCH_ADD, DROCE_OP_SEND_ONLY, DROCE_OP_SEND_FIRST,
	};

	for (unsigned i = 0; i < RTE_DIM(intruders); i++) {
		const struct droce_opcode_info *info = &droce_opcode_table[intruders[i]];
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		uint8_t ext[32] = { 0 };
		struct droce_reth r = reth((uintptr_t)buf + 8192, mr->rkey, 8);
		uint64_t seq = droce_peer_stat(&peer, "rx_bad_opcode_seq");
		struct ibv_wc wc[8];
		int n, n1 = 0;

		memcpy(ext, &r, sizeof(r));
		memset(buf + 8192, 0, 64);
		post_recv(qp, 1, 0, 4096);
		post_recv(qp, 2, 4096, 4096);
		droce_peer_send(&peer, &(struct droce_peer_frame){
			.opcode = DROCE_OP_SEND_FIRST, .dqpn = qp->qp_num, .psn = PSN,
			.payload = pattern, .len = MTU });
		droce_peer_send(&peer, &(struct droce_peer_frame){
			.opcode = intruders[i], .dqpn = qp->qp_num, .psn = PSN + 1,
			.ext = ext, .ext_len = info->hdr_len - sizeof(struct droce_bth),
			.payload = pattern, .len = (info->flags & DROCE_OPF_PAYLOAD) ? 8 : 0 });
		droce_peer_send(&peer, &(struct droce_peer_frame){
			.opcode = DROCE_OP_SEND_LAST, .dqpn = qp->qp_num, .psn = PSN + 2,
			.ackreq = true, .payload = pattern, .len = 10 });
		ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_opcode_seq"), seq + 1);
		expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
		ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
		/* Nothing the intruder carried was written. */
		for (unsigned k = 0; k < 8; k++)
			ck_assert_uint_eq(buf[8192 + k], 0);
		n = poll_all(wc, 8);
		/* Receive 1 once, in error; receive 2 flushed. */
		for (int k = 0; k < n; k++) {
			if (wc[k].wr_id == 1) {
				n1++;
				ck_assert_int_eq(wc[k].status, IBV_WC_REM_INV_REQ_ERR);
			} else {
				ck_assert_uint_eq(wc[k].wr_id, 2);
				ck_assert_int_eq(wc[k].status, IBV_WC_WR_FLUSH_ERR);
			}
		}
		ck_assert_int_eq(n1, 1);
		ck_assert_int_eq(n, 2);
		expect_event(qp, IBV_EVENT_QP_REQ_ERR);
		destroy(qp);
	}
}
END_TEST

/*
 * A peer that acknowledges nothing gets the requester's window of packets
 * and no more, however long the message: the packets of one WRITE go out
 * in one loop of the requester, which must stop where the window does,
 * in the middle of a burst too; payloads by reference (one packet at a
 * time) and copied (a run of MIDDLE packets, req_middle_run()) alike.
 */
START_TEST(silent_peer_gets_one_window)
{
	const uint32_t len = 2 * DROCE_REQ_WINDOW * MTU;
	struct droce_pkt pkt;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { .remote_addr = 0x10000, .rkey = 1 },
	}, *bad;
	struct rte_mbuf *m;
	struct ibv_mr *big_mr;
	uint8_t *big = aligned_alloc(4096, len);

	ck_assert_ptr_nonnull(big);
	memset(big, 0x5a, len);
	big_mr = ibv_reg_mr(pd, big, len, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(big_mr);
	for (unsigned copied = 0; copied < 2; copied++) {
		uint64_t runs = droce_peer_stat(&peer, "tx_run_pkts");
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		uint32_t top = 0;
		double until;

		droce_zc_configure(!copied, MTU);
		sge = (struct ibv_sge){ (uintptr_t)big, MTU, big_mr->lkey };
		/* A one-packet WRITE first, so that the window closes inside a
		 * transmit burst (whose 64 packets 1024 is a multiple of). */
		ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
		sge.length = len;
		ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
		/* Retransmissions after the ACK timeout start again from the
		 * first packet: the highest PSN seen tells what the window let out. */
		for (until = droce_test_now() + 0.5; droce_test_now() < until;) {
			m = droce_peer_recv(&peer, &pkt);
			if (m == NULL)
				continue;
			if (pkt.op != NULL && pkt.qpn == PEER_QPN) {
				ck_assert(pkt.op->flags & DROCE_OPF_WRITE);
				top = RTE_MAX(top, droce_psn_diff(pkt.psn, PSN) + 1u);
			}
			rte_pktmbuf_free(m);
		}
		ck_assert_uint_eq(top, DROCE_REQ_WINDOW);
		ck_assert(copied ? droce_peer_stat(&peer, "tx_run_pkts") > runs :
			  droce_peer_stat(&peer, "tx_run_pkts") == runs);
		destroy(qp);
	}
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
	ck_assert_int_eq(ibv_dereg_mr(big_mr), 0);
	free(big);
}
END_TEST

/* A MIDDLE or LAST with no FIRST is out of sequence too. */
START_TEST(rc_middle_without_first_is_naked)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_wc wc[4];

	post_recv(qp, 1, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_LAST, .dqpn = qp->qp_num, .psn = PSN, .ackreq = true,
		.payload = pattern, .len = 10 });
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	expect_event(qp, IBV_EVENT_QP_REQ_ERR);
	destroy(qp);
}
END_TEST

/*
 * UC has no NAK: a new FIRST drops the message under way and starts
 * again in the same receive, which completes once, with the new message.
 */
START_TEST(uc_new_message_replaces_the_broken_one)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, NULL);
	struct ibv_wc wc[4];

	memset(buf, 0, BUF);
	post_recv(qp, 1, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_UC | DROCE_OP_SEND_FIRST, .dqpn = qp->qp_num, .psn = PSN,
		.payload = pattern + 500, .len = MTU });
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_UC | DROCE_OP_SEND_FIRST, .dqpn = qp->qp_num, .psn = PSN + 1,
		.payload = pattern, .len = MTU });
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_UC | DROCE_OP_SEND_LAST, .dqpn = qp->qp_num, .psn = PSN + 2,
		.payload = pattern + MTU, .len = 20 });
	ck_assert_int_eq(poll_all(wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].byte_len, MTU + 20);
	ck_assert_int_eq(memcmp(buf, pattern, MTU + 20), 0);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
	destroy(qp);
}
END_TEST

/* Another partition's P_Key is dropped; a limited member of ours is taken. */
START_TEST(pkey_is_checked)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t before = droce_peer_stat(&peer, "rx_bad_pkey");
	struct ibv_wc wc[2];

	post_recv(qp, 1, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = PSN, .pkey = 0x8001,
		.payload = pattern, .len = 10 });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_pkey"), before + 1);
	ck_assert_int_eq(poll_all(wc, 2), 0);
	/* ibv_query_port() says so too. */
	{
		struct ibv_port_attr pa;

		ck_assert_int_eq(ibv_query_port(peer.ctx, 1, &pa), 0);
		ck_assert_uint_eq(pa.bad_pkey_cntr, before + 1);
	}
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = PSN, .pkey = 0x7fff,
		.payload = pattern, .len = 10 });
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

/* A UD datagram with another Q_Key is dropped, and counted. */
START_TEST(qkey_is_checked)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, NULL);
	struct droce_deth d = { .qkey = rte_cpu_to_be_32(QKEY + 1) };
	uint64_t before = droce_peer_stat(&peer, "rx_bad_qkey");
	struct ibv_wc wc[2];

	post_recv(qp, 1, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_UD | DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num,
		.ext = &d, .ext_len = sizeof(d), .payload = pattern, .len = 10 });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_qkey"), before + 1);
	ck_assert_int_eq(poll_all(wc, 2), 0);
	destroy(qp);
}
END_TEST

/*
 * A frame to a destroyed QP's number is dropped and counted, though the
 * engine had that QP in its lookup cache (engine_qp_lookup()): the
 * destroy invalidates the cache. Stale, it would hand the frame to freed
 * memory. The QP made next gets its frames.
 */
START_TEST(frame_to_destroyed_qp_is_dropped)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint32_t qpn = qp->qp_num;
	uint64_t before;
	struct ibv_wc wc[2];

	post_recv(qp, 1, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_ONLY, .dqpn = qpn, .psn = PSN, .ackreq = true,
		.payload = pattern, .len = 10 });
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	expect_aeth(DROCE_AETH_ACK);
	destroy(qp);

	before = droce_peer_stat(&peer, "rx_unknown_qpn");
	qp = make_qp(IBV_QPT_RC, NULL);
	post_recv(qp, 2, 0, 4096);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_ONLY, .dqpn = qpn, .psn = PSN + 1, .ackreq = true,
		.payload = pattern, .len = 10 });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_unknown_qpn"), before + 1);
	ck_assert_int_eq(poll_all(wc, 2), 0);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = PSN, .ackreq = true,
		.payload = pattern, .len = 10 });
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_uint_eq(wc[0].wr_id, 2);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	expect_aeth(DROCE_AETH_ACK);
	destroy(qp);
}
END_TEST

#define RLEN 64

/* A READ of RLEN bytes at @p off of the region, PSN @p psn, queued for the
 * device without running it: several go in one burst. */
static void
queue_read(struct ibv_qp *qp, uint32_t psn, uint32_t off)
{
	struct droce_reth r = reth((uintptr_t)buf + off, mr->rkey, RLEN);

	droce_peer_queue(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_READ_REQUEST, .dqpn = qp->qp_num, .psn = psn, .ackreq = true,
		.ext = &r, .ext_len = sizeof(r) });
}

/* The device's next RoCE frame is the READ response at @p psn, with the
 * RLEN bytes of the region at @p off. */
static void
expect_read_resp(uint32_t psn, uint32_t off)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	uint8_t got[RLEN];

	while ((m = droce_peer_recv(&peer, &pkt)) != NULL && pkt.op == NULL)
		rte_pktmbuf_free(m);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(pkt.opcode & DROCE_OP_MASK, DROCE_OP_READ_RESP_ONLY);
	ck_assert_uint_eq(pkt.psn, psn);
	ck_assert_uint_eq(pkt.payload_len, RLEN);
	ck_assert_int_eq(droce_mbuf_copy(m, pkt.payload_off, RLEN, got), 0);
	ck_assert_int_eq(memcmp(got, pattern + off, RLEN), 0);
	rte_pktmbuf_free(m);
}

/*
 * A responder keeps max_dest_rd_atomic READs (3 here) in a ring and
 * answers a duplicate from it: the oldest kept one too, whose slot lies
 * behind the ring's wrap; a duplicate that came with new READs in one
 * burst is answered first, as the oldest; one older than the ring is
 * answered by nothing.
 */
START_TEST(kept_reads_answered_again_oldest_first)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN,
					.rd_atomic = 3 };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_pkt pkt;

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	memcpy(buf, pattern, 8 * RLEN);
	/* Four, one at a time: the fourth takes the first one's slot. */
	for (uint32_t i = 0; i < 4; i++) {
		queue_read(qp, PSN + i, i * RLEN);
		expect_read_resp(PSN + i, i * RLEN);
	}
	/* The oldest kept, the second, again: the slot before the ring's start. */
	queue_read(qp, PSN + 1, 1 * RLEN);
	expect_read_resp(PSN + 1, 1 * RLEN);
	/* A new one, then the third again behind it in the same burst: the
	 * third's answer goes first. */
	queue_read(qp, PSN + 4, 4 * RLEN);
	queue_read(qp, PSN + 2, 2 * RLEN);
	expect_read_resp(PSN + 2, 2 * RLEN);
	expect_read_resp(PSN + 4, 4 * RLEN);
	/* The second is no longer kept: nothing answers it. */
	queue_read(qp, PSN + 1, 1 * RLEN);
	droce_peer_run(&peer);
	ck_assert_ptr_null(droce_peer_recv(&peer, &pkt));
	queue_read(qp, PSN + 5, 5 * RLEN);
	expect_read_resp(PSN + 5, 5 * RLEN);
	destroy(qp);
}
END_TEST

/*
 * A receive whose buffer lies in a region registered without local write
 * takes no byte of a SEND: the receive completes in error, the SEND is
 * NAKed (invalid request) and the QP goes to the error state.
 */
START_TEST(send_into_region_without_local_write_fails)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint8_t *ro = aligned_alloc(4096, 4096);
	struct ibv_mr *ro_mr;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc[2];
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;

	ck_assert_ptr_nonnull(ro);
	memset(ro, 0, 4096);
	ro_mr = ibv_reg_mr(pd, ro, 4096, 0);
	ck_assert_ptr_nonnull(ro_mr);
	sge = (struct ibv_sge){ (uintptr_t)ro, 4096, ro_mr->lkey };
	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = PSN, .ackreq = true,
		.payload = pattern, .len = 64 });
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_uint_eq(wc[0].wr_id, 9);
	ck_assert_int_ne(wc[0].status, IBV_WC_SUCCESS);
	for (unsigned i = 0; i < 4096; i++)
		ck_assert_uint_eq(ro[i], 0);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	ck_assert_int_eq(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
	ck_assert_int_eq(attr.qp_state, IBV_QPS_ERR);
	destroy(qp);
	ck_assert_int_eq(ibv_dereg_mr(ro_mr), 0);
	free(ro);
}
END_TEST

/*
 * A long WRITE's MIDDLE packets in one burst are taken a run at a time
 * (droce_resp_rx_run_start()): checked once, copied one by one. What
 * the run's packets may differ in, one packet at a time, and what
 * droce_resp_rx() does about it, which the run must leave to it.
 */
struct run_test {
	uint8_t svc;            /* DROCE_SVC_RC or DROCE_SVC_UC */
	uint32_t rkey;          /* 0: the buffer's */
	unsigned pkts;          /* packets in the WRITE: FIRST, MIDDLE..., LAST */
	uint32_t reth_len;      /* 0: pkts * MTU */
	unsigned bad_icrc;      /* packet with a wrong ICRC (UINT_MAX: none) */
	unsigned other_pkey;    /* packet of another partition */
	unsigned ce;            /* packet marked CE */
	uint32_t seg;           /* bytes per mbuf segment (0: one segment) */
};

/* A WRITE of @p n packets of service @p svc, nothing wrong with it. */
#define RUN(svc_, n) { .svc = (svc_), .pkts = (n), .bad_icrc = UINT32_MAX, \
		       .other_pkey = UINT32_MAX, .ce = UINT32_MAX }

/* Packets @p first..@p last - 1 of the WRITE @p t says, into buf from 0,
 * carrying pattern, in one RX burst; the last one sent asks for an ACK. */
static void
write_run(struct ibv_qp *qp, const struct run_test *t, unsigned first, unsigned last)
{
	uint32_t len = t->reth_len != 0 ? t->reth_len : t->pkts * MTU;
	struct droce_reth r = reth((uintptr_t)buf, t->rkey != 0 ? t->rkey : mr->rkey, len);

	for (unsigned i = first; i < last; i++) {
		uint8_t op = i == 0 ? DROCE_OP_WRITE_FIRST : i + 1 == t->pkts ?
			     DROCE_OP_WRITE_LAST : DROCE_OP_WRITE_MIDDLE;

		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = t->svc | op, .dqpn = qp->qp_num, .psn = PSN + i,
			.ackreq = i + 1 == last, .ext = i == 0 ? &r : NULL,
			.ext_len = i == 0 ? sizeof(r) : 0, .payload = pattern + i * MTU, .len = MTU,
			.seg = t->seg, .bad_icrc = i == t->bad_icrc,
			.pkey = i == t->other_pkey ? 0x8001 : 0, .tclass = i == t->ce ? 3 : 0 });
	}
	droce_peer_run(&peer);
}

/* buf holds pattern's first @p n bytes, and zeros for the next MTU. */
static void
expect_landed(uint32_t n)
{
	ck_assert_int_eq(memcmp(buf, pattern, n), 0);
	for (uint32_t i = n; i < n + MTU; i++)
		ck_assert_uint_eq(buf[i], 0);
}

/* Whole, in one burst or split across two anywhere: every byte lands,
 * once ACKed; chained MIDDLE packets too. */
START_TEST(write_run_lands_whole)
{
	struct run_test t = RUN(DROCE_SVC_RC, 8);

	for (unsigned split = 1; split <= t.pkts; split++) {
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		uint64_t runs = droce_peer_stat(&peer, "rx_run_pkts");

		t.seg = split % 2 ? 0 : 300;
		memset(buf, 0, BUF);
		/* Each burst's last packet asks for an ACK, a MIDDLE too. */
		write_run(qp, &t, 0, split);
		expect_aeth(DROCE_AETH_ACK);
		if (split < t.pkts) {
			write_run(qp, &t, split, t.pkts);
			expect_aeth(DROCE_AETH_ACK);
		}
		expect_landed(t.pkts * MTU);
		/* Every MIDDLE was in a run. */
		ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + t.pkts - 2);
		ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
		destroy(qp);
	}
}
END_TEST

/* A corrupt MIDDLE ends the run: what came before it lands, nothing of it
 * or after it does (a sequence NAK), and the WRITE resent from there
 * completes it. */
START_TEST(write_run_with_a_corrupt_middle)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t bad_icrc = port_bad_icrc(), runs = droce_peer_stat(&peer, "rx_run_pkts");
	struct run_test t = RUN(DROCE_SVC_RC, 8);

	t.bad_icrc = 4;
	memset(buf, 0, BUF);
	write_run(qp, &t, 0, t.pkts);
	ck_assert_uint_eq(port_bad_icrc(), bad_icrc + 1);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR);
	expect_landed(4 * MTU);
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + 3);
	t.bad_icrc = UINT32_MAX;
	write_run(qp, &t, 4, t.pkts);
	expect_aeth(DROCE_AETH_ACK);
	expect_landed(t.pkts * MTU);
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + 6);
	destroy(qp);
}
END_TEST

/* After a burst with a packet of another partition and, before it, one
 * marked CE (the counts @p pkey0 and @p ce0 before the burst): the first
 * was dropped and counted, the second taken with a CNP (the next frame
 * sent), and the gap the first left brought a sequence NAK. */
static void
expect_pkey_drop_cnp_and_nak(uint64_t pkey0, uint64_t ce0)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;

	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_pkey"), pkey0 + 1);
	ck_assert_uint_eq(droce_peer_stat(&peer, "ce_received"), ce0 + 1);
	m = droce_peer_recv(&peer, &pkt);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(pkt.opcode, DROCE_OPCODE_CNP);
	rte_pktmbuf_free(m);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR);
}

/* A MIDDLE of another partition is dropped and counted; those after it
 * are a gap. One marked CE is taken, and asks for a CNP. */
START_TEST(write_run_pkey_and_ce_per_packet)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t pkey = droce_peer_stat(&peer, "rx_bad_pkey");
	uint64_t ce = droce_peer_stat(&peer, "ce_received");
	struct run_test t = RUN(DROCE_SVC_RC, 8);

	t.other_pkey = 5;
	t.ce = 3;
	memset(buf, 0, BUF);
	write_run(qp, &t, 0, t.pkts);
	expect_pkey_drop_cnp_and_nak(pkey, ce);
	expect_landed(5 * MTU);
	destroy(qp);
}
END_TEST

/* MIDDLE packets past the length the RETH said: the run stops where the
 * WRITE ends, and the one too many is refused (an invalid request), its
 * bytes not written. */
START_TEST(write_run_past_its_length_is_refused)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct run_test t = RUN(DROCE_SVC_RC, 8);

	t.reth_len = 4 * MTU;
	memset(buf, 0, BUF);
	write_run(qp, &t, 0, t.pkts);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	expect_landed(4 * MTU);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
	expect_event(qp, IBV_EVENT_QP_REQ_ERR);
	destroy(qp);
}
END_TEST

/* The region deregistered after the FIRST: no MIDDLE lands; made
 * shorter (ibv_rereg_mr(), same key): the MIDDLE packets it still covers
 * land. The first past it is refused (a remote access error), as when
 * each packet looked the region up. */
START_TEST(write_run_into_a_changed_region)
{
	for (unsigned shrink = 0; shrink < 2; shrink++) {
		struct ibv_mr *r = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE);
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		struct run_test t = RUN(DROCE_SVC_RC, 8);

		ck_assert_ptr_nonnull(r);
		t.rkey = r->rkey;
		memset(buf, 0, BUF);
		write_run(qp, &t, 0, 1);
		expect_aeth(DROCE_AETH_ACK);
		if (shrink)
			ck_assert_int_eq(ibv_rereg_mr(r, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
						      buf, 3 * MTU, 0), 0);
		else
			ck_assert_int_eq(ibv_dereg_mr(r), 0);
		write_run(qp, &t, 1, t.pkts);
		expect_aeth(DROCE_AETH_NAK | DROCE_NAK_REM_ACCESS_ERR);
		expect_landed(shrink ? 3 * MTU : MTU);
		expect_event(qp, IBV_EVENT_QP_ACCESS_ERR);
		destroy(qp);
		if (shrink)
			ck_assert_int_eq(ibv_dereg_mr(r), 0);
	}
}
END_TEST

/* Remote write taken off the QP after the FIRST (a modify in RTS): no
 * MIDDLE lands, an invalid request. */
START_TEST(write_run_after_remote_write_is_disabled)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_qp_attr attr = { .qp_access_flags = IBV_ACCESS_REMOTE_READ };
	struct run_test t = RUN(DROCE_SVC_RC, 8);

	memset(buf, 0, BUF);
	write_run(qp, &t, 0, 1);
	expect_aeth(DROCE_AETH_ACK);
	ck_assert_int_eq(ibv_modify_qp(qp, &attr, IBV_QP_ACCESS_FLAGS), 0);
	write_run(qp, &t, 1, t.pkts);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	expect_landed(MTU);
	expect_event(qp, IBV_EVENT_QP_REQ_ERR);
	destroy(qp);
}
END_TEST

/* UC takes runs too; a lost MIDDLE loses the rest of its message. */
START_TEST(write_run_on_uc)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, NULL);
	struct run_test t = RUN(DROCE_SVC_UC, 8);

	memset(buf, 0, BUF);
	write_run(qp, &t, 0, t.pkts);
	expect_landed(t.pkts * MTU);
	memset(buf, 0, BUF);
	t.bad_icrc = 2;
	write_run(qp, &t, 0, t.pkts);
	expect_landed(2 * MTU);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
	destroy(qp);
}
END_TEST

/* Two QPs' WRITEs interleaved in one burst: runs of one, each to its own
 * QP; both land whole. */
START_TEST(write_runs_of_two_qps_interleaved)
{
	struct ibv_qp *qp[2] = { make_qp(IBV_QPT_RC, NULL), make_qp(IBV_QPT_RC, NULL) };
	const unsigned pkts = 6, half = BUF / 2;

	memset(buf, 0, BUF);
	for (unsigned i = 0; i < pkts; i++) {
		for (unsigned q = 0; q < 2; q++) {
			struct droce_reth r = reth((uintptr_t)buf + q * half, mr->rkey, pkts * MTU);

			droce_peer_queue(&peer, &(struct droce_peer_frame){
				.opcode = i == 0 ? DROCE_OP_WRITE_FIRST : i + 1 == pkts ?
					  DROCE_OP_WRITE_LAST : DROCE_OP_WRITE_MIDDLE,
				.dqpn = qp[q]->qp_num, .psn = PSN + i, .ackreq = i + 1 == pkts,
				.ext = i == 0 ? &r : NULL, .ext_len = i == 0 ? sizeof(r) : 0,
				.payload = pattern + q * half + i * MTU, .len = MTU });
		}
	}
	droce_peer_run(&peer);
	expect_aeth(DROCE_AETH_ACK);
	expect_aeth(DROCE_AETH_ACK);
	ck_assert_int_eq(memcmp(buf, pattern, pkts * MTU), 0);
	ck_assert_int_eq(memcmp(buf + half, pattern + half, pkts * MTU), 0);
	destroy(qp[0]);
	destroy(qp[1]);
}
END_TEST

/*
 * Small WRITEs one after the other in one burst are taken a run at a time
 * too (WRITE ONLY packets, droce_resp_rx_run_start()): checked once as
 * a run, each with a RETH of its own, read only once its ICRC passed.
 * What the run's packets may differ in, one packet at a time, and what
 * droce_resp_rx() does about it, which the run must leave to it. Message
 * i carries only_len(i) bytes of pattern at only_off(i) into buf.
 */
struct only_test {
	uint8_t svc;            /* DROCE_SVC_RC or DROCE_SVC_UC */
	unsigned msgs;          /* messages, at most ONLY_MAX */
	unsigned bad_icrc;      /* message with a wrong ICRC (UINT_MAX: none) */
	unsigned bad_rkey;      /* message whose RETH names no region */
	unsigned past_region;   /* message whose range runs past its region */
	unsigned other_len;     /* message whose RETH says a byte more */
	unsigned other_pkey;    /* message of another partition */
	unsigned ce;            /* message marked CE */
	uint32_t seg;           /* bytes per mbuf segment (0: one segment) */
	uint32_t psn;           /* the first message's PSN (0: PSN) */
	struct ibv_mr *const *mr_of; /* each message's region (NULL: all in mr) */
};

#define ONLY_MAX 16
#define ONLY_RUN(svc_, n) { .svc = (svc_), .msgs = (n), .bad_icrc = UINT32_MAX, \
			    .bad_rkey = UINT32_MAX, .past_region = UINT32_MAX, \
			    .other_len = UINT32_MAX, .other_pkey = UINT32_MAX, .ce = UINT32_MAX }

/* 0 to MTU bytes, most not a multiple of 4 (a pad): the first message has
 * none, the fourth a whole MTU. */
static uint32_t
only_len(unsigned i)
{
	return i == 3 ? MTU : (i * 61) % MTU;
}

static uint32_t
only_off(unsigned i)
{
	return i * 2 * MTU;
}

/* Messages @p first..@p last - 1 of @p t in one RX burst; the last one
 * sent asks for an ACK. */
static void
only_run(struct ibv_qp *qp, const struct only_test *t, unsigned first, unsigned last)
{
	for (unsigned i = first; i < last; i++) {
		const struct ibv_mr *to = t->mr_of != NULL ? t->mr_of[i] : mr;
		uint32_t len = only_len(i);
		uint64_t va = i == t->past_region ? (uintptr_t)to->addr + to->length - len / 2 :
			      (uintptr_t)to->addr + only_off(i);
		struct droce_reth r = reth(va, i == t->bad_rkey ? to->rkey ^ 0xff : to->rkey,
					   len + (i == t->other_len));

		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = t->svc | DROCE_OP_WRITE_ONLY, .dqpn = qp->qp_num,
			.psn = (t->psn != 0 ? t->psn : PSN) + i,
			.ackreq = i + 1 == last, .ext = &r, .ext_len = sizeof(r),
			.payload = pattern + only_off(i), .len = len, .seg = t->seg,
			.bad_icrc = i == t->bad_icrc, .pkey = i == t->other_pkey ? 0x8001 : 0,
			.tclass = i == t->ce ? 3 : 0 });
	}
	droce_peer_run(&peer);
}

/* Each message of @p t with its bit in @p landed is where it belongs in
 * @p to's memory (BUF bytes); every other byte of it is 0. */
static void
expect_only_landed_in(const struct ibv_mr *to, const struct only_test *t, uint32_t landed)
{
	const uint8_t *mem = to->addr;

	for (unsigned i = 0; i < ONLY_MAX; i++) {
		uint32_t len = i < t->msgs && (landed >> i) & 1 ? only_len(i) : 0;

		ck_assert_int_eq(memcmp(mem + only_off(i), pattern + only_off(i), len), 0);
		for (uint32_t b = only_off(i) + len; b < only_off(i + 1); b++)
			ck_assert_msg(mem[b] == 0, "message %u: byte %u written", i, b);
	}
	for (uint32_t b = only_off(ONLY_MAX); b < BUF; b++)
		ck_assert_uint_eq(mem[b], 0);
}

static void
expect_only_landed(const struct only_test *t, uint32_t landed)
{
	expect_only_landed_in(mr, t, landed);
}

/* The next frame the device sent is an ACK with MSN @p msn. */
static void
expect_ack_msn(uint32_t msn)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;

	while ((m = droce_peer_recv(&peer, &pkt)) != NULL && pkt.op == NULL)
		rte_pktmbuf_free(m);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(pkt.opcode & DROCE_OP_MASK, DROCE_OP_ACK);
	ck_assert_uint_eq(droce_aeth_syndrome(droce_pkt_hdr(m, &pkt, DROCE_HDR_AETH)) &
			  DROCE_AETH_TYPE_MASK, DROCE_AETH_ACK);
	ck_assert_uint_eq(droce_aeth_msn(droce_pkt_hdr(m, &pkt, DROCE_HDR_AETH)), msn);
	rte_pktmbuf_free(m);
}

/* Whole, in one burst or split across two anywhere, in one segment and
 * chained: every message lands, each counted once in the ACK's MSN; a
 * burst's lone message is no run. */
START_TEST(only_run_lands_each)
{
	struct only_test t = ONLY_RUN(DROCE_SVC_RC, ONLY_MAX);

	for (unsigned split = 1; split <= t.msgs; split++) {
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		uint64_t runs = droce_peer_stat(&peer, "rx_run_pkts");
		unsigned in_runs = (split >= 2 ? split : 0) + (t.msgs - split >= 2 ? t.msgs - split : 0);

		t.seg = split % 2 ? 0 : 100;
		memset(buf, 0, BUF);
		only_run(qp, &t, 0, split);
		expect_ack_msn(split);
		if (split < t.msgs) {
			only_run(qp, &t, split, t.msgs);
			expect_ack_msn(t.msgs);
		}
		expect_only_landed(&t, (1u << t.msgs) - 1);
		ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + in_runs);
		ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
		/* The same burst again: duplicates, ACKed, nothing written twice. */
		memset(buf, 0, BUF);
		only_run(qp, &t, 0, t.msgs);
		expect_ack_msn(t.msgs);
		expect_only_landed(&t, 0);
		destroy(qp);
	}
}
END_TEST

/* A corrupt message ends the run, and its RETH, which names memory of the
 * region, writes nothing: those before it land, none after it does (a
 * sequence NAK), and the messages resent from there land. */
START_TEST(only_run_with_a_corrupt_message)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t bad_icrc = port_bad_icrc(), runs = droce_peer_stat(&peer, "rx_run_pkts");
	struct only_test t = ONLY_RUN(DROCE_SVC_RC, 12);

	t.bad_icrc = 5;
	memset(buf, 0, BUF);
	only_run(qp, &t, 0, t.msgs);
	ck_assert_uint_eq(port_bad_icrc(), bad_icrc + 1);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR);
	expect_only_landed(&t, 0x1f);
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + 5);
	t.bad_icrc = UINT32_MAX;
	only_run(qp, &t, 5, t.msgs);
	expect_ack_msn(t.msgs);
	expect_only_landed(&t, (1u << t.msgs) - 1);
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + 12);
	destroy(qp);
}
END_TEST

/* A message the responder refuses ends the run before it: one whose RETH
 * names no region or runs past its region (a remote access error), or
 * says another length than the packet holds (an invalid request). Those
 * before it land and are ACKed by the NAK's MSN; it and those after it
 * write nothing; the QP goes to the error state with the event a NIC
 * raises. */
START_TEST(only_run_refused_message)
{
	for (unsigned why = 0; why < 3; why++) {
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		uint64_t access = droce_peer_stat(&peer, "rx_bad_access");
		uint64_t length = droce_peer_stat(&peer, "rx_bad_length");
		struct only_test t = ONLY_RUN(DROCE_SVC_RC, 10);

		if (why == 0)
			t.bad_rkey = 4;
		else if (why == 1)
			t.past_region = 4;
		else
			t.other_len = 4;
		memset(buf, 0, BUF);
		only_run(qp, &t, 0, t.msgs);
		expect_aeth(DROCE_AETH_NAK | (why < 2 ? DROCE_NAK_REM_ACCESS_ERR :
						       DROCE_NAK_INVALID_REQ));
		expect_only_landed(&t, 0xf);
		ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_access"), access + (why < 2));
		ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_length"), length + (why == 2));
		ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
		expect_event(qp, why < 2 ? IBV_EVENT_QP_ACCESS_ERR : IBV_EVENT_QP_REQ_ERR);
		destroy(qp);
	}
}
END_TEST

/* A run's messages may name several regions, in any order: each lands in
 * the region its RETH names, and each key's rights are its own. One that
 * names a region without remote write, over the very memory the run
 * writes through another key, is a remote access error: it ends the run
 * there, after the messages into both regions landed. */
START_TEST(only_run_across_regions)
{
	uint8_t *mem = aligned_alloc(4096, BUF);
	struct ibv_mr *other[2];

	ck_assert_ptr_nonnull(mem);
	other[0] = ibv_reg_mr(pd, mem, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	other[1] = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(other[0]);
	ck_assert_ptr_nonnull(other[1]);
	for (unsigned why = 0; why < 2; why++) {
		struct ibv_mr *const a = mr, *const b = other[0], *const ro = other[1];
		struct ibv_mr *const mr_of[ONLY_MAX] = { a, a, b, b, a, b, a, a, b, b, a, a,
							 why ? ro : a, b, a, a };
		struct only_test t = ONLY_RUN(DROCE_SVC_RC, ONLY_MAX);
		struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
		uint64_t access = droce_peer_stat(&peer, "rx_bad_access");
		uint32_t in_a = 0, in_b = 0, upto = why ? 12 : ONLY_MAX;

		t.mr_of = mr_of;
		for (unsigned i = 0; i < upto; i++) {
			in_a |= (uint32_t)(mr_of[i] == a) << i;
			in_b |= (uint32_t)(mr_of[i] == b) << i;
		}
		memset(buf, 0, BUF);
		memset(mem, 0, BUF);
		only_run(qp, &t, 0, t.msgs);
		if (why == 0) {
			expect_ack_msn(t.msgs);
			ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
		} else {
			expect_aeth(DROCE_AETH_NAK | DROCE_NAK_REM_ACCESS_ERR);
			ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
			expect_event(qp, IBV_EVENT_QP_ACCESS_ERR);
		}
		ck_assert_uint_eq(droce_peer_stat(&peer, "rx_bad_access"), access + why);
		expect_only_landed_in(a, &t, in_a);
		expect_only_landed_in(b, &t, in_b);
		destroy(qp);
	}
	for (unsigned k = 0; k < 2; k++)
		ck_assert_int_eq(ibv_dereg_mr(other[k]), 0);
	free(mem);
}
END_TEST

/* A message of another partition is dropped and counted; those after it
 * are a gap. One marked CE is taken, and asks for a CNP. */
START_TEST(only_run_pkey_and_ce_per_message)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	uint64_t pkey = droce_peer_stat(&peer, "rx_bad_pkey");
	uint64_t ce = droce_peer_stat(&peer, "ce_received");
	struct only_test t = ONLY_RUN(DROCE_SVC_RC, 10);

	t.other_pkey = 6;
	t.ce = 2;
	memset(buf, 0, BUF);
	only_run(qp, &t, 0, t.msgs);
	expect_pkey_drop_cnp_and_nak(pkey, ce);
	expect_only_landed(&t, 0x3f);
	destroy(qp);
}
END_TEST

/* Small WRITEs inside a SEND under way break the opcode sequence: the
 * first is refused (an invalid request), none lands, and the SEND's
 * receive completes once, in error. */
START_TEST(only_run_inside_a_send_is_refused)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct only_test t = ONLY_RUN(DROCE_SVC_RC, 6);
	struct ibv_wc wc[2];

	memset(buf, 0, BUF);
	t.psn = PSN + 1;
	post_recv(qp, 5, BUF / 2, 4 * MTU);
	droce_peer_queue(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_SEND_FIRST, .dqpn = qp->qp_num, .psn = PSN,
		.payload = pattern, .len = MTU });
	droce_peer_run(&peer);
	only_run(qp, &t, 0, t.msgs);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_uint_eq(wc[0].wr_id, 5);
	ck_assert_int_ne(wc[0].status, IBV_WC_SUCCESS);
	memset(buf + BUF / 2, 0, MTU);
	expect_only_landed(&t, 0);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
	expect_event(qp, IBV_EVENT_QP_REQ_ERR);
	destroy(qp);
}
END_TEST

/* UC takes runs too, unacknowledged; a lost message loses only itself:
 * the next ONLY starts a message. */
START_TEST(only_run_on_uc)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, NULL);
	struct only_test t = ONLY_RUN(DROCE_SVC_UC, 8);
	struct droce_pkt pkt;

	memset(buf, 0, BUF);
	only_run(qp, &t, 0, t.msgs);
	expect_only_landed(&t, 0xff);
	memset(buf, 0, BUF);
	t.bad_icrc = 2;
	only_run(qp, &t, 0, t.msgs);
	/* The first two are duplicates to UC's new expected PSN: new messages. */
	expect_only_landed(&t, 0xfb);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
	droce_peer_run(&peer);
	ck_assert_ptr_null(droce_peer_recv(&peer, &pkt));
	destroy(qp);
}
END_TEST

/* A WRITE with immediate between small WRITEs ends their run and takes
 * its receive; a long WRITE in the same burst too: everything lands, the
 * receive completes once with its immediate, and one ACK counts every
 * message. */
START_TEST(only_runs_around_other_writes)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct only_test t = ONLY_RUN(DROCE_SVC_RC, 12);
	const uint32_t imm_at = 4, long_at = 8, long_off = BUF / 2;
	struct ibv_wc wc[2];
	uint32_t psn = PSN;

	memset(buf, 0, BUF);
	post_recv(qp, 77, 0, 0);
	for (unsigned i = 0; i < t.msgs; i++) {
		struct droce_reth r = reth((uintptr_t)buf + only_off(i), mr->rkey, only_len(i));
		struct { struct droce_reth reth; struct droce_immdt imm; } ri = {
			r, { .imm = rte_cpu_to_be_32(0xabcd) } };

		if (i == long_at) {
			/* FIRST, two MIDDLE and LAST into the upper half. */
			struct droce_reth lr = reth((uintptr_t)buf + long_off, mr->rkey, 4 * MTU);

			for (unsigned p = 0; p < 4; p++)
				droce_peer_queue(&peer, &(struct droce_peer_frame){
					.opcode = p == 0 ? DROCE_OP_WRITE_FIRST : p == 3 ?
						  DROCE_OP_WRITE_LAST : DROCE_OP_WRITE_MIDDLE,
					.dqpn = qp->qp_num, .psn = psn++, .ext = p == 0 ? &lr : NULL,
					.ext_len = p == 0 ? sizeof(lr) : 0,
					.payload = pattern + long_off + p * MTU, .len = MTU });
		}
		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = i == imm_at ? DROCE_OP_WRITE_ONLY_IMM : DROCE_OP_WRITE_ONLY,
			.dqpn = qp->qp_num, .psn = psn++, .ackreq = i + 1 == t.msgs,
			.ext = i == imm_at ? (const void *)&ri : &r,
			.ext_len = i == imm_at ? sizeof(ri) : sizeof(r),
			.payload = pattern + only_off(i), .len = only_len(i) });
	}
	droce_peer_run(&peer);
	expect_ack_msn(t.msgs + 1);
	ck_assert_int_eq(poll_all(wc, 2), 1);
	ck_assert_uint_eq(wc[0].wr_id, 77);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	ck_assert_uint_eq(wc[0].byte_len, only_len(imm_at));
	ck_assert_uint_eq(wc[0].imm_data, rte_cpu_to_be_32(0xabcd));
	ck_assert_int_eq(memcmp(buf + long_off, pattern + long_off, 4 * MTU), 0);
	memset(buf + long_off, 0, 4 * MTU);
	expect_only_landed(&t, (1u << t.msgs) - 1);
	destroy(qp);
}
END_TEST

/*
 * Small SENDs one after the other in one burst are taken a run at a time
 * as well (SEND ONLY packets, with immediate or not): each takes the next
 * receive, and their completions are written as the run ends, in one
 * step. Message i carries only_len(i) bytes of pattern at only_off(i),
 * for receive i at the same place of buf.
 */
struct send_test {
	uint8_t opcode;         /* DROCE_OP_SEND_ONLY or DROCE_OP_SEND_ONLY_IMM, with a service */
	unsigned msgs;          /* messages, at most ONLY_MAX */
	unsigned bad_icrc;      /* message with a wrong ICRC (UINT_MAX: none) */
	unsigned se;            /* message that asks for a solicited event */
	uint32_t seg;           /* bytes per mbuf segment (0: one segment) */
	uint32_t psn;           /* the first message's PSN (0: PSN) */
};

#define SEND_RUN(op, n) { .opcode = (op), .msgs = (n), .bad_icrc = UINT32_MAX, .se = UINT32_MAX }

/* Messages @p first..@p last - 1 of @p t in one RX burst; the last one
 * sent asks for an ACK. */
static void
send_run(struct ibv_qp *qp, const struct send_test *t, unsigned first, unsigned last)
{
	for (unsigned i = first; i < last; i++) {
		rte_be32_t imm = rte_cpu_to_be_32(0x1000 + i);
		bool with_imm = (t->opcode & DROCE_OP_MASK) == DROCE_OP_SEND_ONLY_IMM;

		droce_peer_queue(&peer, &(struct droce_peer_frame){
			.opcode = t->opcode, .dqpn = qp->qp_num,
			.psn = (t->psn != 0 ? t->psn : PSN) + i, .ackreq = i + 1 == last,
			.ext = with_imm ? &imm : NULL, .ext_len = with_imm ? sizeof(imm) : 0,
			.payload = pattern + only_off(i), .len = only_len(i), .seg = t->seg,
			.bad_icrc = i == t->bad_icrc, .se = i == t->se });
	}
	droce_peer_run(&peer);
}

/* Receives @p first..@p last - 1 of @p qp, each at its message's place. */
static void
post_send_recvs(struct ibv_qp *qp, unsigned first, unsigned last)
{
	for (unsigned i = first; i < last; i++)
		post_recv(qp, i, only_off(i), 2 * MTU);
}

/* The next @p n completions on the CQ are those of receives @p first on,
 * in order, each of its message of @p t. */
static void
expect_send_wcs(const struct send_test *t, unsigned first, unsigned n)
{
	struct ibv_wc wc[ONLY_MAX + 1];
	bool with_imm = (t->opcode & DROCE_OP_MASK) == DROCE_OP_SEND_ONLY_IMM;

	ck_assert_int_eq(poll_all(wc, ONLY_MAX + 1), (int)n);
	for (unsigned k = 0; k < n; k++) {
		unsigned i = first + k;

		ck_assert_uint_eq(wc[k].wr_id, i);
		ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
		ck_assert_int_eq(wc[k].opcode, IBV_WC_RECV);
		ck_assert_uint_eq(wc[k].byte_len, only_len(i));
		ck_assert_uint_eq(!!(wc[k].wc_flags & IBV_WC_WITH_IMM), with_imm);
		if (with_imm)
			ck_assert_uint_eq(wc[k].imm_data, rte_cpu_to_be_32(0x1000 + i));
	}
}

/* Whole, in one burst or split across two anywhere, in one segment and
 * chained, with immediate data and without: every message lands in its
 * receive, which completes once and in order; each is counted once in
 * the ACK's MSN; a burst's lone message is no run. Sent again, they are
 * duplicates: ACKed, nothing completes or lands twice. */
START_TEST(send_run_lands_each)
{
	for (unsigned imm = 0; imm < 2; imm++) {
		struct send_test t = SEND_RUN(imm ? DROCE_OP_SEND_ONLY_IMM : DROCE_OP_SEND_ONLY,
					      ONLY_MAX);
		struct only_test landed = ONLY_RUN(DROCE_SVC_RC, ONLY_MAX);

		for (unsigned split = 1; split <= t.msgs; split += 3) {
			struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
			uint64_t runs = droce_peer_stat(&peer, "rx_run_pkts");
			unsigned in_runs = (split >= 2 ? split : 0) +
					   (t.msgs - split >= 2 ? t.msgs - split : 0);

			t.seg = split % 2 ? 0 : 100;
			memset(buf, 0, BUF);
			post_send_recvs(qp, 0, t.msgs);
			send_run(qp, &t, 0, split);
			expect_ack_msn(split);
			expect_send_wcs(&t, 0, split);
			if (split < t.msgs) {
				send_run(qp, &t, split, t.msgs);
				expect_ack_msn(t.msgs);
				expect_send_wcs(&t, split, t.msgs - split);
			}
			expect_only_landed(&landed, (1u << t.msgs) - 1);
			ck_assert_uint_eq(droce_peer_stat(&peer, "rx_run_pkts"), runs + in_runs);
			memset(buf, 0, BUF);
			post_send_recvs(qp, 0, 1);
			send_run(qp, &t, 0, t.msgs);
			expect_ack_msn(t.msgs);
			expect_send_wcs(&t, 0, 0);
			expect_only_landed(&landed, 0);
			ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
			destroy(qp);
		}
	}
}
END_TEST

/* Fewer receives than messages: those with one complete, the first
 * without gets an RNR NAK and nothing after it lands; resent once
 * receives are there, the rest complete, each once. */
START_TEST(send_run_runs_out_of_receives)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct send_test t = SEND_RUN(DROCE_OP_SEND_ONLY, 12);
	struct only_test landed = ONLY_RUN(DROCE_SVC_RC, 12);

	memset(buf, 0, BUF);
	post_send_recvs(qp, 0, 5);
	send_run(qp, &t, 0, t.msgs);
	expect_aeth(DROCE_AETH_RNR_NAK);
	expect_send_wcs(&t, 0, 5);
	expect_only_landed(&landed, 0x1f);
	post_send_recvs(qp, 5, t.msgs);
	send_run(qp, &t, 5, t.msgs);
	expect_ack_msn(t.msgs);
	expect_send_wcs(&t, 5, t.msgs - 5);
	expect_only_landed(&landed, (1u << t.msgs) - 1);
	destroy(qp);
}
END_TEST

/* A receive CQ with room for fewer completions than messages: those that
 * fit complete, the next gets an RNR NAK (no completion is lost, the CQ
 * stays usable), and the rest complete once it was polled. */
START_TEST(send_run_fills_the_cq)
{
	struct ibv_cq *small = ibv_create_cq(peer.ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = small, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN };
	struct send_test t = SEND_RUN(DROCE_OP_SEND_ONLY, 12);
	struct ibv_wc wc[16];
	struct ibv_qp *qp;
	unsigned done = 0;
	int n;

	ck_assert_ptr_nonnull(small);
	qp = ibv_create_qp(pd, &ia);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	post_send_recvs(qp, 0, t.msgs);
	while (done < t.msgs) {
		send_run(qp, &t, done, t.msgs);
		n = droce_peer_poll_cq(&peer, small, wc, 16);
		ck_assert_int_gt(n, 0);
		for (int k = 0; k < n; k++) {
			ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
			ck_assert_uint_eq(wc[k].wr_id, done + k);
		}
		done += (unsigned)n;
		if (done < t.msgs)
			expect_aeth(DROCE_AETH_RNR_NAK);
	}
	expect_ack_msn(t.msgs);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_RTS);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(ibv_destroy_cq(small), 0);
	droce_peer_drain(&peer);
}
END_TEST

/* A receive of two SGEs, and one too small: the run ends before each and
 * leaves it to resp_send(). The first lands across its SGEs; the second
 * completes in error (the QP goes to the error state, an invalid request
 * NAKed), after every message before it completed. */
START_TEST(send_run_into_other_receives)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct send_test t = SEND_RUN(DROCE_OP_SEND_ONLY, 8);
	struct ibv_sge sge[2] = { { (uintptr_t)buf + only_off(3), 100, mr->lkey },
				  { (uintptr_t)buf + only_off(3) + 100, 2 * MTU - 100, mr->lkey } };
	struct ibv_recv_wr two = { .wr_id = 3, .sg_list = sge, .num_sge = 2 }, *bad;
	struct ibv_wc wc[ONLY_MAX];
	int n;

	memset(buf, 0, BUF);
	post_send_recvs(qp, 0, 3);
	ck_assert_int_eq(ibv_post_recv(qp, &two, &bad), 0);
	post_send_recvs(qp, 4, 6);
	post_recv(qp, 6, only_off(6), only_len(6) - 1);
	post_send_recvs(qp, 7, 8);
	send_run(qp, &t, 0, t.msgs);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_INVALID_REQ);
	n = poll_all(wc, ONLY_MAX);
	/* 0..5 in order, 6 in error; 7 flushed with the QP. */
	ck_assert_int_ge(n, 7);
	for (int k = 0; k < 6; k++) {
		ck_assert_uint_eq(wc[k].wr_id, (unsigned)k);
		ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc[k].byte_len, only_len(k));
		ck_assert_int_eq(memcmp(buf + only_off(k), pattern + only_off(k), only_len(k)), 0);
	}
	ck_assert_uint_eq(wc[6].wr_id, 6);
	ck_assert_int_eq(wc[6].status, IBV_WC_LOC_LEN_ERR);
	ck_assert_int_eq(droce_test_qp_state(qp), IBV_QPS_ERR);
	expect_event(qp, IBV_EVENT_QP_REQ_ERR);
	destroy(qp);
}
END_TEST

/* A corrupt message ends the run: those before it complete, it and those
 * after it do not (a sequence NAK); resent, they complete, each once. */
START_TEST(send_run_with_a_corrupt_message)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct send_test t = SEND_RUN(DROCE_OP_SEND_ONLY_IMM, 10);
	struct only_test landed = ONLY_RUN(DROCE_SVC_RC, 10);

	memset(buf, 0, BUF);
	post_send_recvs(qp, 0, t.msgs);
	t.bad_icrc = 4;
	send_run(qp, &t, 0, t.msgs);
	expect_aeth(DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR);
	expect_send_wcs(&t, 0, 4);
	expect_only_landed(&landed, 0xf);
	t.bad_icrc = UINT32_MAX;
	send_run(qp, &t, 4, t.msgs);
	expect_ack_msn(t.msgs);
	expect_send_wcs(&t, 4, t.msgs - 4);
	expect_only_landed(&landed, (1u << t.msgs) - 1);
	destroy(qp);
}
END_TEST

/* A QP on an SRQ takes its runs' receives from the SRQ; UC takes runs of
 * SENDs too, unacknowledged. */
START_TEST(send_run_on_srq_and_uc)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct send_test t = SEND_RUN(DROCE_OP_SEND_ONLY, 10);
	struct only_test landed = ONLY_RUN(DROCE_SVC_RC, 10);
	struct ibv_qp *qp;
	struct droce_pkt pkt;

	ck_assert_ptr_nonnull(srq);
	qp = make_qp(IBV_QPT_RC, srq);
	memset(buf, 0, BUF);
	for (unsigned i = 0; i < t.msgs; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + only_off(i), 2 * MTU, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		ck_assert_int_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	}
	send_run(qp, &t, 0, t.msgs);
	expect_ack_msn(t.msgs);
	expect_send_wcs(&t, 0, t.msgs);
	expect_only_landed(&landed, (1u << t.msgs) - 1);
	destroy(qp);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);

	qp = make_qp(IBV_QPT_UC, NULL);
	t.opcode = DROCE_SVC_UC | DROCE_OP_SEND_ONLY;
	memset(buf, 0, BUF);
	post_send_recvs(qp, 0, t.msgs);
	send_run(qp, &t, 0, t.msgs);
	expect_send_wcs(&t, 0, t.msgs);
	expect_only_landed(&landed, (1u << t.msgs) - 1);
	droce_peer_run(&peer);
	ck_assert_ptr_null(droce_peer_recv(&peer, &pkt));
	destroy(qp);
}
END_TEST

/* A CQ armed for solicited completions only: a run of SENDs none of
 * which asks for an event leaves it asleep; one whose SEND in the middle
 * asks wakes it, once. */
START_TEST(send_run_wakes_a_solicited_only_cq)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(peer.ctx);
	struct ibv_cq *scq = ch != NULL ? ibv_create_cq(peer.ctx, 64, NULL, ch, 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = scq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN };
	struct send_test t = SEND_RUN(DROCE_OP_SEND_ONLY, 12);
	struct pollfd pfd = { .events = POLLIN };
	struct ibv_wc wc[16];
	struct ibv_cq *ev_cq;
	struct ibv_qp *qp;
	void *ev_ctx;

	ck_assert_ptr_nonnull(scq);
	pfd.fd = ch->fd;
	qp = ibv_create_qp(pd, &ia);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	post_send_recvs(qp, 0, t.msgs);
	ck_assert_int_eq(ibv_req_notify_cq(scq, 1), 0);
	send_run(qp, &t, 0, 6);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, scq, wc, 16), 6);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	t.se = 8;
	send_run(qp, &t, 6, t.msgs);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, scq, wc, 16), 6);
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	ck_assert_ptr_eq(ev_cq, scq);
	ibv_ack_cq_events(scq, 1);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	droce_peer_drain(&peer);
	ck_assert_int_eq(ibv_destroy_cq(scq), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("wire");
	SRunner *sr;
	int failed;

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, send_to_xrc_initiator_is_dropped);
	tcase_add_test(tc, every_opcode_to_every_qp_kind);
	tcase_add_test(tc, chained_send_and_write_land_byte_exact);
	tcase_add_test(tc, write_burst_with_a_corrupt_frame_lands_what_was_good);
	tcase_add_test(tc, send_burst_with_a_corrupt_packet_completes_once_whole);
	tcase_add_test(tc, chained_ud_datagram_lands_byte_exact);
	tcase_add_test(tc, chained_read_response_and_its_sequence);
	tcase_add_test(tc, read_response_burst_with_a_corrupt_packet_completes_once_whole);
	tcase_add_test(tc, rc_opcode_out_of_sequence_is_naked);
	tcase_add_test(tc, rc_middle_without_first_is_naked);
	tcase_add_test(tc, silent_peer_gets_one_window);
	tcase_add_test(tc, uc_new_message_replaces_the_broken_one);
	tcase_add_test(tc, pkey_is_checked);
	tcase_add_test(tc, qkey_is_checked);
	tcase_add_test(tc, frame_to_destroyed_qp_is_dropped);
	tcase_add_test(tc, kept_reads_answered_again_oldest_first);
	tcase_add_test(tc, send_into_region_without_local_write_fails);
	tcase_add_test(tc, write_run_lands_whole);
	tcase_add_test(tc, write_run_with_a_corrupt_middle);
	tcase_add_test(tc, write_run_pkey_and_ce_per_packet);
	tcase_add_test(tc, write_run_past_its_length_is_refused);
	tcase_add_test(tc, write_run_into_a_changed_region);
	tcase_add_test(tc, write_run_after_remote_write_is_disabled);
	tcase_add_test(tc, write_run_on_uc);
	tcase_add_test(tc, write_runs_of_two_qps_interleaved);
	tcase_add_test(tc, only_run_lands_each);
	tcase_add_test(tc, only_run_with_a_corrupt_message);
	tcase_add_test(tc, only_run_refused_message);
	tcase_add_test(tc, only_run_across_regions);
	tcase_add_test(tc, only_run_pkey_and_ce_per_message);
	tcase_add_test(tc, only_run_inside_a_send_is_refused);
	tcase_add_test(tc, only_run_on_uc);
	tcase_add_test(tc, only_runs_around_other_writes);
	tcase_add_test(tc, send_run_lands_each);
	tcase_add_test(tc, send_run_runs_out_of_receives);
	tcase_add_test(tc, send_run_fills_the_cq);
	tcase_add_test(tc, send_run_into_other_receives);
	tcase_add_test(tc, send_run_with_a_corrupt_message);
	tcase_add_test(tc, send_run_on_srq_and_uc);
	tcase_add_test(tc, send_run_wakes_a_solicited_only_cq);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
