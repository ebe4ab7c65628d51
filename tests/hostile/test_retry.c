/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requester's retries, against a raw peer (tests/common/droce_peer.h)
 * that answers an RC QP's requests with the ACKs, NAKs and READ responses
 * a lossy wire would deliver. What retry_cnt counts (IB spec 9.7): one
 * retry per go-back for a sequence error (a NAK, or an implied NAK: READ
 * responses past a gap) and per ACK timeout, never one for a copy of a
 * NAK or a response past a gap already being resent; only what
 * acknowledges something new restores the budget; and a resend has a
 * whole ACK timeout for its answer. And what a run of small messages
 * reads and frees: the regions its payloads come from, the slots an ACK
 * retires (by the quiet bits of the WQEs a run sent, droce_sq_quiet.h,
 * too).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "droce_peer.h"
#include "droce_transport.h"
#include "droce_test.h"

#define PEER_QPN 0x100
#define PSN 0x10
#define BUF 65536
#define MTU 1024
#define READ_VA 0x1000
#define READ_RKEY 0x77

static struct droce_peer peer;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint8_t pattern[BUF];

static void
setup(void)
{
	droce_peer_fixture(&peer, BUF, IBV_ACCESS_LOCAL_WRITE, &pd, &cq, &buf, &mr);
	droce_test_fill(pattern, BUF, 5);
}

/* An ACK or NAK (@p syndrome) for @p psn, from the peer to @p qp. */
static void
send_aeth(struct ibv_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct droce_aeth a;

	droce_aeth_set(&a, syndrome, 1);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_ACK, .dqpn = qp->qp_num, .psn = psn,
		.ext = &a, .ext_len = sizeof(a) });
}

#define ACK (DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID)
#define SEQ_NAK (DROCE_AETH_NAK | DROCE_NAK_PSN_SEQ_ERR)

/* An RC QP to the peer with @p retry_cnt retries and ACK timeout code
 * @p timeout (4.096 us << timeout), @p max_wr send WRs of @p max_sge
 * SGEs, taking @p max_inline bytes inline. */
static struct ibv_qp *
make_qp_cap(uint8_t retry_cnt, uint8_t timeout, uint32_t max_wr, uint32_t max_sge,
	    uint32_t max_inline)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = max_wr, .max_recv_wr = 16, .max_send_sge = max_sge,
			 .max_recv_sge = 1, .max_inline_data = max_inline },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN,
					.timeout = timeout, .retry_cnt = retry_cnt };

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	/* A frame from the peer teaches the device the peer's MAC (an ACK
	 * of nothing outstanding, ignored). */
	send_aeth(qp, ACK, PSN - 1);
	return qp;
}

static struct ibv_qp *
make_qp(uint8_t retry_cnt, uint8_t timeout)
{
	return make_qp_cap(retry_cnt, timeout, 16, 1, 0);
}

static void
post(struct ibv_qp *qp, enum ibv_wr_opcode opcode, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = READ_VA;
	wr.wr.rdma.rkey = READ_RKEY;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/* The next request frame the device sends, within 3 s (the first waits
 * for the peer's route); its PSN, opcode and for a READ its RETH. */
struct sent {
	uint32_t psn;
	uint8_t opcode;
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/* The next request frame, parsed into @p pkt, within 3 s. */
static struct rte_mbuf *
take_frame(struct droce_pkt *pkt)
{
	double until = droce_test_now() + 3;
	struct rte_mbuf *m;

	do {
		m = droce_peer_recv(&peer, pkt);
		if (m != NULL && pkt->op == NULL) {
			rte_pktmbuf_free(m);
			m = NULL;
		}
	} while (m == NULL && droce_test_now() < until);
	ck_assert_ptr_nonnull(m);
	return m;
}

static struct sent
take(void)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m = take_frame(&pkt);
	struct sent s = { 0 };

	s.psn = pkt.psn;
	s.opcode = pkt.opcode;
	if (pkt.opcode == DROCE_OP_READ_REQUEST) {
		const struct droce_reth *r = droce_pkt_hdr(m, &pkt, DROCE_HDR_RETH);

		s.va = rte_be_to_cpu_64(r->va);
		s.rkey = rte_be_to_cpu_32(r->rkey);
		s.len = rte_be_to_cpu_32(r->len);
	}
	rte_pktmbuf_free(m);
	return s;
}

/* Take @p n request frames: PSNs @p first, first + 1, ... */
static void
take_run(uint32_t first, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ck_assert_uint_eq(take().psn, first + i);
}

/* The device sends nothing (after its engine ran). */
static void
expect_silence(void)
{
	droce_peer_run(&peer);
	ck_assert_uint_eq(droce_peer_drain(&peer), 0);
}

/* The one completion now on the CQ has @p status. */
static void
expect_wc(enum ibv_wc_status status)
{
	struct ibv_wc wc[2];

	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, status);
	ck_assert_uint_eq(wc[0].wr_id, 9);
}

static void
sleep_until(double t)
{
	double left = t - droce_test_now();

	if (left > 0)
		usleep((useconds_t)(left * 1e6));
}

static void
destroy(struct ibv_qp *qp)
{
	struct ibv_wc wc[16];

	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	droce_peer_poll_cq(&peer, cq, wc, 16);
	droce_peer_drain(&peer);
}

/*
 * A sequence NAK without progress is a retry: with retry_cnt 1, the only
 * one. The same NAK again (a copy: the responder NAKs a gap once) is
 * neither a second retry, which would fail the SEND, nor a second resend.
 */
START_TEST(seq_nak_again_costs_nothing)
{
	struct ibv_qp *qp = make_qp(1, 14);

	post(qp, IBV_WR_SEND, 3 * MTU);
	take_run(PSN, 3);
	send_aeth(qp, ACK, PSN);
	send_aeth(qp, SEQ_NAK, PSN + 1);
	take_run(PSN + 1, 2);
	send_aeth(qp, SEQ_NAK, PSN + 1);
	expect_silence();
	send_aeth(qp, ACK, PSN + 2);
	expect_wc(IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

/*
 * Packets @p from..@p pkts - 1 of a @p op message of @p pkts packets
 * whose LAST carries @p last_len bytes, its payload buf's from 0, as the
 * device sends them: in order, each with its opcode and PSN, AckReq on
 * the LAST only, its payload byte for byte, a good ICRC. The packets of
 * a message's middle are built from the one before (droce_tx_again()):
 * their headers are the same bytes, but for the BTH's PSN.
 */
static void
take_message(uint8_t op_first, unsigned pkts, uint32_t last_len, unsigned from)
{
	uint8_t middle[64], payload[MTU];
	unsigned hdr = 0;

	for (unsigned i = from; i < pkts; i++) {
		double until = droce_test_now() + 3;
		uint8_t op = i == 0 ? op_first : i + 1 == pkts ? op_first + 2 : op_first + 1;
		struct droce_pkt pkt;
		struct rte_mbuf *m;
		const uint8_t *p;

		while ((m = droce_peer_recv(&peer, &pkt)) == NULL && droce_test_now() < until)
			;
		ck_assert_ptr_nonnull(m);
		ck_assert_ptr_nonnull(pkt.op); /* parsed, with its ICRC */
		ck_assert_uint_eq(pkt.opcode, op);
		ck_assert_uint_eq(pkt.psn, PSN + i);
		ck_assert_int_eq(droce_bth_ackreq(droce_pkt_hdr(m, &pkt, DROCE_HDR_BTH)),
				 i + 1 == pkts);
		ck_assert_uint_eq(pkt.payload_len, i + 1 == pkts ? last_len : MTU);
		droce_mbuf_copy(m, pkt.payload_off, pkt.payload_len, payload);
		ck_assert_int_eq(memcmp(payload, buf + i * MTU, pkt.payload_len), 0);
		p = rte_pktmbuf_mtod(m, const uint8_t *);
		if (op == op_first + 1) {
			if (hdr == 0) {
				hdr = pkt.bth_off + offsetof(struct droce_bth, apsn);
				memcpy(middle, p, hdr);
			}
			ck_assert_int_eq(memcmp(p, middle, hdr), 0);
		}
		rte_pktmbuf_free(m);
	}
}

/*
 * A long WRITE and a long SEND, their payloads copied (their MIDDLE
 * packets then built a run at a time: droce_req.c, req_middle_run()) or
 * sent by reference (zero copy, one packet at a time); a sequence NAK in
 * the middle resends from there, a run then starting inside the message.
 */
START_TEST(long_message_packets_and_their_resend)
{
	static const struct {
		enum ibv_wr_opcode wr;
		uint8_t first;
	} msgs[] = {
		{ IBV_WR_RDMA_WRITE, DROCE_OP_WRITE_FIRST },
		{ IBV_WR_SEND, DROCE_OP_SEND_FIRST },
	};

	/* Each packet's payload its own (pattern repeats every 256 bytes). */
	for (unsigned i = 0; i < 9; i++)
		droce_test_fill(buf + i * MTU, MTU, i);
	for (unsigned k = 0; k < 2 * RTE_DIM(msgs); k++) {
		struct ibv_qp *qp = make_qp(1, 14);
		uint64_t runs = droce_peer_stat(&peer, "tx_run_pkts");
		bool zc = k >= RTE_DIM(msgs);

		droce_zc_configure(zc, MTU);

		post(qp, msgs[k % 2].wr, 8 * MTU + 100);
		take_message(msgs[k % 2].first, 9, 100, 0);
		send_aeth(qp, SEQ_NAK, PSN + 3);
		take_message(msgs[k % 2].first, 9, 100, 3);
		send_aeth(qp, ACK, PSN + 8);
		expect_wc(IBV_WC_SUCCESS);
		/* MIDDLE packets 1-7, then 4-7 (3 is the resend's first). */
		ck_assert_uint_eq(droce_peer_stat(&peer, "tx_run_pkts"), runs + (zc ? 0 : 11));
		destroy(qp);
	}
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/* Post @p n one-packet WRITEs of @p len bytes from @p from in one list,
 * wr_id @p id0 on; those whose bit is set in @p signaled signaled.
 * @return what ibv_post_send() does. */
static int
post_writes_from(struct ibv_qp *qp, const struct ibv_mr *from, unsigned n, uint32_t len,
		 uint32_t signaled, uint64_t id0)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, from->lkey };
	struct ibv_send_wr wr[17], *bad;

	ck_assert_uint_le(n, RTE_DIM(wr));
	for (unsigned i = 0; i < n; i++) {
		wr[i] = (struct ibv_send_wr){
			.wr_id = id0 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.send_flags = (signaled >> i) & 1 ? IBV_SEND_SIGNALED : 0 };
		wr[i].wr.rdma.remote_addr = READ_VA;
		wr[i].wr.rdma.rkey = READ_RKEY;
	}
	return ibv_post_send(qp, wr, &bad);
}

static int
post_writes(struct ibv_qp *qp, unsigned n, uint32_t len, uint32_t signaled, uint64_t id0)
{
	return post_writes_from(qp, mr, n, len, signaled, id0);
}

/* Exactly @p n slots of @p qp's send queue are free: a list of @p n + 1
 * unsignaled WRITEs (wr_id @p id0 on) fills them and fails at its last,
 * and one more posted after it finds no room either. The list finds the
 * room its poster saw last used up part way, and must look again at the
 * engine's consumer index, and only then stop. */
static void
post_to_full(struct ibv_qp *qp, unsigned n, uint64_t id0)
{
	ck_assert_int_eq(post_writes(qp, n + 1, MTU, 0, id0), ENOMEM);
	ck_assert_int_eq(post_writes(qp, 1, MTU, 0, 99), ENOMEM);
}

/* Sixteen WRITEs of @p len bytes fill @p qp's send queue, the tenth
 * signaled; an ACK of the eighth frees eight slots, no more, which eight
 * more take (WQEs 16 to 23); a NAK for the ninth has all from it sent
 * again, and the ACK of the tenth completes it. */
static void
retire_around_a_go_back(struct ibv_qp *qp, uint32_t len)
{
	struct ibv_wc wc[4];

	ck_assert_int_eq(post_writes(qp, 16, len, 1u << 9, 0), 0);
	take_run(PSN, 16);
	ck_assert_int_eq(post_writes(qp, 1, MTU, 0, 99), ENOMEM);
	send_aeth(qp, ACK, PSN + 7);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 0);
	post_to_full(qp, 8, 16);
	take_run(PSN + 16, 8);
	send_aeth(qp, SEQ_NAK, PSN + 8);
	take_run(PSN + 8, 16);
	send_aeth(qp, ACK, PSN + 9);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 9);
}

/*
 * Unsignaled one-packet WRITEs, sent in runs (req_only_run()) from copied
 * payloads or by reference (zero copy): the send queue's slots free
 * exactly up to the PSN each ACK names, before a go-back, after it (its
 * first WQE resent on its own, the rest as a run again) and on the ring's
 * next lap, and the one signaled among them completes once.
 */
START_TEST(unsignaled_writes_retire_at_their_ack)
{
	for (unsigned k = 0; k < 2; k++) {
		struct ibv_qp *qp = make_qp(1, 14);
		uint64_t zc = droce_peer_stat(&peer, "tx_zcopy_frames");
		struct ibv_wc wc[4];

		droce_zc_configure(k == 1, 64);
		retire_around_a_go_back(qp, MTU);
		post_to_full(qp, 2, 24);
		take_run(PSN + 24, 2);
		send_aeth(qp, ACK, PSN + 24);
		ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 0);
		/* One slot is still taken: WRITE 25, not acknowledged. */
		post_to_full(qp, 15, 26);
		take_run(PSN + 26, 15);
		send_aeth(qp, ACK, PSN + 40);
		ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 0);
		post_to_full(qp, 16, 41);
		ck_assert_uint_eq(droce_peer_stat(&peer, "tx_zcopy_frames") - zc, k == 1 ? 73 : 0);
		destroy(qp);
	}
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/* One list of @p n WRITEs of lengths @p len, wr_id @p id0 on, those
 * in the mask @p signaled signaled. */
static void
post_list(struct ibv_qp *qp, const uint32_t *len, uint32_t signaled, unsigned n, uint64_t id0)
{
	struct ibv_sge sge[8];
	struct ibv_send_wr wr[8], *bad;

	ck_assert_uint_le(n, RTE_DIM(wr));
	for (unsigned i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)buf, len[i], mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = id0 + i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.send_flags = (signaled >> i) & 1 ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { READ_VA, READ_RKEY } };
	}
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
}

/* The completions now on the CQ: successes of @p first to @p last. */
static void
expect_wr_ids(uint64_t first, uint64_t last)
{
	struct ibv_wc wc[4];
	int n = droce_peer_poll_cq(&peer, cq, wc, 4);

	ck_assert_int_eq(n, (int)(last - first + 1));
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc[i].wr_id, first + (uint64_t)i);
	}
}

/*
 * The same with WRITEs of 8 bytes, which the runs send as copies and mark
 * quiet (droce_sq_quiet.h): the completer retires them by their bits,
 * exactly up to the PSN each ACK names, before a go-back and after it.
 * Then slots that held quiet WQEs take signaled WQEs behind unsignaled
 * ones, of two packets (no run sends them), of one in a run of its own,
 * two in a run: each WQE's bit is written when it starts, none is
 * retired as quiet, and the signaled ones complete.
 */
START_TEST(short_unsignaled_writes_retire_at_their_ack)
{
	struct ibv_qp *qp = make_qp(1, 14);
	struct ibv_wc wc[4];

	retire_around_a_go_back(qp, 8);
	send_aeth(qp, ACK, PSN + 23);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 0);
	/* Everything retired; slots 10 to 15 last held the quiet WQEs 10 to
	 * 15 of the resend. WQEs 24 to 28 take slots 8 to 12: two of 8 bytes
	 * in a run, a signaled one of two packets (WQE 26, slot 10: no run
	 * sends it), a signaled one of 16 bytes and one of 8 bytes. */
	post_list(qp, (const uint32_t[]){ 8, 8, 2 * MTU, 16, 8 }, 0xc, 5, 50);
	take_run(PSN + 24, 6);
	send_aeth(qp, ACK, PSN + 29);
	expect_wr_ids(52, 53);
	/* WQEs 29 to 31, slots 13 to 15: a signaled one of 16 bytes (WQE 30,
	 * slot 14: a run of its own) between two of 8 bytes. */
	post_list(qp, (const uint32_t[]){ 8, 16, 8 }, 0x2, 3, 60);
	take_run(PSN + 30, 3);
	send_aeth(qp, ACK, PSN + 32);
	expect_wr_ids(61, 61);
	/* WQEs 32 to 34: two signaled ones of 8 bytes, a run, after an
	 * unsignaled one. */
	post_list(qp, (const uint32_t[]){ 8, 8, 8 }, 0x6, 3, 70);
	take_run(PSN + 33, 3);
	send_aeth(qp, ACK, PSN + 35);
	expect_wr_ids(71, 72);
	post_to_full(qp, 16, 80);
	destroy(qp);
}
END_TEST

/*
 * Sixteen unsignaled WRITEs of @p len bytes sent as copies, then, zero
 * copy turned on from @p len bytes (at most 64), WRITEs @p k to 15 sent
 * again after a NAK (by reference, staying in the TX ring; WRITE @p k,
 * when @p k_copied, of half that, under the zero-copy threshold: as a
 * copy again), and an ACK of all of them while those frames are queued.
 * Each WRITE resent by reference keeps its slot until its frame has
 * left; the rest are free.
 */
static void
resent_by_reference_len(unsigned k, bool k_copied, uint32_t len)
{
	const uint32_t zc_min = RTE_MIN(len, 64u);

	struct ibv_qp *qp = make_qp(1, 14);
	const unsigned free = k + k_copied;
	struct ibv_wc wc[4];

	droce_zc_configure(false, 0);
	ck_assert_int_eq(post_writes(qp, k, len, 0, 0), 0);
	ck_assert_int_eq(post_writes(qp, 1, k_copied ? zc_min / 2 : len, 0, k), 0);
	ck_assert_int_eq(post_writes(qp, 15 - k, len, 0, k + 1), 0);
	take_run(PSN, 16);
	droce_zc_configure(true, zc_min);
	send_aeth(qp, SEQ_NAK, PSN + k);
	send_aeth(qp, ACK, PSN + 15);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 0);
	post_to_full(qp, free, 16);
	take_run(PSN + k, 16 - k + free);
	send_aeth(qp, ACK, PSN + 15 + free);
	ck_assert_int_eq(post_writes(qp, 16, MTU, 0, 16 + free), 0);
	destroy(qp);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}

static void
resent_by_reference(unsigned k, bool k_copied)
{
	resent_by_reference_len(k, k_copied, MTU);
}

/* A WRITE sent as a copy and resent by reference, acknowledged while
 * the resent frame is still queued: WRITE 0's slot is free, WRITE 1's
 * waits for its frame. */
START_TEST(write_resent_by_reference_waits_for_its_frame)
{
	resent_by_reference(1, false);
}
END_TEST

/*
 * The same behind a WRITE that the ACK retires, resent as a copy: its
 * slot is free, and the WRITEs after it keep theirs. The completer takes
 * the unsignaled WQEs after a retired one a run at a time, and that run
 * must stop at a frame still queued.
 */
START_TEST(writes_resent_by_reference_wait_behind_a_copied_one)
{
	resent_by_reference(8, true);
}
END_TEST

/* The same with WRITEs of 8 bytes, which the first send marked quiet
 * (droce_sq_quiet.h): sent again, and by reference, they are not, and
 * keep their slots while their frames are queued. */
START_TEST(short_writes_resent_by_reference_wait_behind_a_copied_one)
{
	resent_by_reference_len(8, true, 8);
}
END_TEST

/*
 * Unsignaled WRITEs whose resend fails (their region deregistered once
 * their copies went out): when the completer reaches the first, it fails
 * with a local protection error and the rest is flushed, whether that
 * one was resent on its own (the go-back's first: the QP fails at once)
 * or in a run behind it (once the resent WRITE before it is
 * acknowledged).
 */
START_TEST(writes_resent_from_a_gone_region_fail)
{
	for (unsigned first_gone = 1; first_gone <= 2; first_gone++) {
		struct ibv_qp *qp = make_qp(1, 14);
		struct ibv_mr *gone = ibv_reg_mr(pd, buf, MTU, IBV_ACCESS_LOCAL_WRITE);
		struct ibv_wc wc[4];

		ck_assert_ptr_nonnull(gone);
		droce_zc_configure(false, 0);
		ck_assert_int_eq(post_writes(qp, first_gone, MTU, 0, 0), 0);
		ck_assert_int_eq(post_writes_from(qp, gone, 4 - first_gone, MTU, 0, first_gone), 0);
		take_run(PSN, 4);
		ck_assert_int_eq(ibv_dereg_mr(gone), 0);
		send_aeth(qp, SEQ_NAK, PSN + 1);
		if (first_gone == 2)
			take_run(PSN + 1, 1);
		expect_silence();
		/* What was resent arrived. */
		send_aeth(qp, ACK, PSN + first_gone - 1);
		ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 4 - first_gone);
		ck_assert_uint_eq(wc[0].wr_id, first_gone);
		ck_assert_int_eq(wc[0].status, IBV_WC_LOC_PROT_ERR);
		for (unsigned i = 1; i < 4 - first_gone; i++) {
			ck_assert_uint_eq(wc[i].wr_id, first_gone + i);
			ck_assert_int_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		}
		destroy(qp);
	}
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/* The next request frame's payload, of @p len bytes, into @p out. */
static void
take_payload(uint8_t *out, uint32_t len)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m = take_frame(&pkt);
	const void *p;

	ck_assert_uint_eq(pkt.payload_len, len);
	p = rte_pktmbuf_read(m, pkt.payload_off, len, out);
	ck_assert_ptr_nonnull(p);
	if (p != out)
		memcpy(out, p, len);
	rte_pktmbuf_free(m);
}

/* Post @p n signaled WRITEs in one list, WRITE i (wr_id i) from
 * @p sge[i]. */
static void
post_write_list(struct ibv_qp *qp, struct ibv_sge *sge, unsigned n)
{
	struct ibv_send_wr wr[16], *bad;

	ck_assert_uint_le(n, RTE_DIM(wr));
	for (unsigned i = 0; i < n; i++) {
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.send_flags = IBV_SEND_SIGNALED };
		wr[i].wr.rdma.remote_addr = READ_VA;
		wr[i].wr.rdma.rkey = READ_RKEY;
	}
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
}

/* Once the peer acknowledges all but the last of @p n WRITEs posted by
 * post_write_list(), they complete in order, and the last fails with a
 * local protection error. */
static void
ack_all_but_the_failed_last(struct ibv_qp *qp, unsigned n)
{
	struct ibv_wc wc[16];

	send_aeth(qp, ACK, PSN + n - 2);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 16), n);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_eq(wc[i].wr_id, i);
		ck_assert_int_eq(wc[i].status, i + 1 < n ? IBV_WC_SUCCESS : IBV_WC_LOC_PROT_ERR);
	}
}

/*
 * Small WRITEs sent in one run (req_only_run()), their payloads copied
 * from regions named by turns: the fixture's region; a second one of the
 * same PD registered at the same iova over other memory; the fixture's
 * again; and one of another PD over the fixture's memory. Each payload
 * comes from the memory its own key names: the run's region is kept per
 * key, never taken for another key's range. The last fails with a local
 * protection error once the three before it are acknowledged.
 */
START_TEST(short_writes_read_the_region_their_key_names)
{
	static uint8_t other[256];
	struct ibv_pd *pd2 = ibv_alloc_pd(pd->context);
	struct ibv_mr *same_iova, *foreign;
	const struct ibv_mr *from[4];
	struct ibv_sge sge[4];
	struct ibv_qp *qp;
	uint8_t got[64];

	ck_assert_ptr_nonnull(pd2);
	droce_test_fill(other, sizeof(other), 11);
	memcpy(buf, pattern, 256);
	same_iova = ibv_reg_mr_iova(pd, other, sizeof(other), (uintptr_t)buf,
				    IBV_ACCESS_LOCAL_WRITE);
	foreign = ibv_reg_mr(pd2, buf, 256, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(same_iova);
	ck_assert_ptr_nonnull(foreign);
	qp = make_qp(1, 14);
	from[0] = mr;
	from[1] = same_iova;
	from[2] = mr;
	from[3] = foreign;
	for (unsigned i = 0; i < 4; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 64 * i, 64, from[i]->lkey };
	droce_zc_configure(false, 0);
	post_write_list(qp, sge, 4);
	take_payload(got, 64);
	ck_assert_mem_eq(got, pattern, 64);
	take_payload(got, 64);
	ck_assert_mem_eq(got, other + 64, 64);
	take_payload(got, 64);
	ck_assert_mem_eq(got, pattern + 128, 64);
	expect_silence();
	ack_all_but_the_failed_last(qp, 4);
	destroy(qp);
	ck_assert_int_eq(ibv_dereg_mr(same_iova), 0);
	ck_assert_int_eq(ibv_dereg_mr(foreign), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/*
 * A run whose first WRITE has an empty first SGE naming a region of
 * another PD (skipped: the payload is all in its second SGE) and whose
 * second WRITE names that region alone: the second fails with a local
 * protection error, and nothing of it is sent. The loop of like messages
 * takes its region from the first WQE's first SGE, which the first's
 * frame never checked.
 */
START_TEST(short_write_after_an_empty_foreign_sge_fails)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(pd->context);
	struct ibv_mr *foreign = ibv_reg_mr(pd2, buf, 256, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = make_qp_cap(1, 14, 16, 2, 0);
	struct ibv_sge sge[3] = {
		{ (uintptr_t)buf, 0, foreign->lkey },
		{ (uintptr_t)buf, 64, mr->lkey },
		{ (uintptr_t)buf + 64, 64, foreign->lkey },
	};
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 0, .sg_list = &sge[0], .num_sge = 2, .opcode = IBV_WR_RDMA_WRITE,
		  .next = &wr[1], .send_flags = IBV_SEND_SIGNALED },
		{ .wr_id = 1, .sg_list = &sge[2], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		  .send_flags = IBV_SEND_SIGNALED },
	}, *bad;

	ck_assert_ptr_nonnull(foreign);
	droce_zc_configure(false, 0);
	for (unsigned i = 0; i < 2; i++) {
		wr[i].wr.rdma.remote_addr = READ_VA;
		wr[i].wr.rdma.rkey = READ_RKEY;
	}
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	take_run(PSN, 1);
	expect_silence();
	ack_all_but_the_failed_last(qp, 2);
	destroy(qp);
	ck_assert_int_eq(ibv_dereg_mr(foreign), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/*
 * A run of small WRITEs from one region whose third starts before the
 * region, or ends past it: the two before it go out, it fails with a
 * local protection error once they are acknowledged, and nothing of it
 * is sent. Every payload of a run is checked against its region's
 * bounds, not only the first.
 */
START_TEST(short_writes_stop_at_their_region_bounds)
{
	const uint64_t bad[] = { (uintptr_t)buf - 16, (uintptr_t)buf + BUF - 32 };

	droce_zc_configure(false, 0);
	for (unsigned k = 0; k < RTE_DIM(bad); k++) {
		struct ibv_qp *qp = make_qp(1, 14);
		struct ibv_sge sge[3] = {
			{ (uintptr_t)buf, 64, mr->lkey },
			{ (uintptr_t)buf + 64, 64, mr->lkey },
			{ bad[k], 64, mr->lkey },
		};

		post_write_list(qp, sge, 3);
		take_run(PSN, 2);
		expect_silence();
		ack_all_but_the_failed_last(qp, 3);
		destroy(qp);
	}
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/*
 * One run of small messages whose shape changes along it (opcode,
 * length, solicited bit, payload inline or not), so that each shape's
 * first frame is built as any and the ones after it like it
 * (req_only_like()): every frame carries its own PSN, RETH, immediate
 * data, payload and pad, its shape's opcode and solicited bit, and a
 * valid ICRC (the peer's parse checks it).
 */
START_TEST(short_messages_of_a_run_carry_their_own_fields)
{
	static const struct {
		enum ibv_wr_opcode opcode;
		uint32_t len;
		unsigned int flags;
	} msg[] = {
		{ IBV_WR_RDMA_WRITE, 64, 0 }, { IBV_WR_RDMA_WRITE, 64, 0 },
		{ IBV_WR_RDMA_WRITE, 64, IBV_SEND_FENCE },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 62, 0 }, { IBV_WR_RDMA_WRITE_WITH_IMM, 62, 0 },
		{ IBV_WR_SEND, 30, 0 }, { IBV_WR_SEND, 30, IBV_SEND_SOLICITED },
		{ IBV_WR_SEND, 30, IBV_SEND_SOLICITED },
		{ IBV_WR_SEND, 30, IBV_SEND_SOLICITED | IBV_SEND_INLINE },
		{ IBV_WR_SEND, 30, IBV_SEND_SOLICITED | IBV_SEND_INLINE },
		{ IBV_WR_SEND, 30, IBV_SEND_SOLICITED }, { IBV_WR_SEND, 30, IBV_SEND_SOLICITED },
		{ IBV_WR_SEND_WITH_IMM, 31, 0 }, { IBV_WR_SEND_WITH_IMM, 31, 0 },
		{ IBV_WR_RDMA_WRITE, 1, 0 }, { IBV_WR_RDMA_WRITE, 1, 0 },
		{ IBV_WR_RDMA_WRITE, 1, 0 }, { IBV_WR_RDMA_WRITE, 3, 0 },
		{ IBV_WR_RDMA_WRITE, 3, IBV_SEND_SIGNALED },
	};
	enum { N = RTE_DIM(msg), PRE = 16 };
	struct ibv_qp *qp = make_qp_cap(1, 14, 32, 1, 64);
	struct ibv_send_wr wr[N], *bad;
	struct ibv_sge sge[N];
	struct ibv_wc wc[2];

	memcpy(buf, pattern, BUF);
	droce_zc_configure(false, 0);
	/* Frames of 200 bytes of payload first, acknowledged: the mbufs the
	 * run takes then hold bytes where its pads go. */
	ck_assert_int_eq(post_writes(qp, PRE, 200, 0, 0), 0);
	take_run(PSN, PRE);
	send_aeth(qp, ACK, PSN + PRE - 1);
	for (unsigned i = 0; i < N; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 100 * i, msg[i].len, mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge[i], .num_sge = 1, .opcode = msg[i].opcode,
			.send_flags = msg[i].flags, .next = i + 1 < N ? &wr[i + 1] : NULL,
			.imm_data = rte_cpu_to_be_32(0x1000 + i) };
		wr[i].wr.rdma.remote_addr = READ_VA + 4096 * i;
		wr[i].wr.rdma.rkey = READ_RKEY + i;
	}
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	for (unsigned i = 0; i < N; i++) {
		bool write = msg[i].opcode == IBV_WR_RDMA_WRITE ||
			     msg[i].opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		bool imm = msg[i].opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
			   msg[i].opcode == IBV_WR_SEND_WITH_IMM;
		static const uint8_t only[] = {
			[IBV_WR_RDMA_WRITE] = DROCE_OP_WRITE_ONLY,
			[IBV_WR_RDMA_WRITE_WITH_IMM] = DROCE_OP_WRITE_ONLY_IMM,
			[IBV_WR_SEND] = DROCE_OP_SEND_ONLY,
			[IBV_WR_SEND_WITH_IMM] = DROCE_OP_SEND_ONLY_IMM,
		};
		struct droce_pkt pkt;
		struct rte_mbuf *m = take_frame(&pkt);
		const struct droce_bth *bth = droce_pkt_hdr(m, &pkt, DROCE_HDR_BTH);
		uint8_t got[64];

		ck_assert_uint_eq(pkt.opcode, only[msg[i].opcode]);
		ck_assert_uint_eq(pkt.psn, PSN + PRE + i);
		ck_assert(droce_bth_ackreq(bth));
		ck_assert_int_eq(droce_bth_se(bth), (msg[i].flags & IBV_SEND_SOLICITED) != 0);
		ck_assert_uint_eq(pkt.pad, (4 - (msg[i].len & 3)) & 3);
		/* Zeros, in an mbuf whose last frame had bytes there. */
		ck_assert_mem_eq(rte_pktmbuf_read(m, pkt.payload_off + msg[i].len, pkt.pad, got),
				 "\0\0\0", pkt.pad);
		if (write) {
			const struct droce_reth *r = droce_pkt_hdr(m, &pkt, DROCE_HDR_RETH);

			ck_assert_uint_eq(rte_be_to_cpu_64(r->va), READ_VA + 4096 * i);
			ck_assert_uint_eq(rte_be_to_cpu_32(r->rkey), READ_RKEY + i);
			ck_assert_uint_eq(rte_be_to_cpu_32(r->len), msg[i].len);
		}
		if (imm)
			ck_assert_uint_eq(((const struct droce_immdt *)
						   droce_pkt_hdr(m, &pkt, DROCE_HDR_IMMDT))->imm,
					  rte_cpu_to_be_32(0x1000 + i));
		ck_assert_uint_eq(pkt.payload_len, msg[i].len);
		ck_assert_mem_eq(rte_pktmbuf_read(m, pkt.payload_off, msg[i].len, got),
				 pattern + 100 * i, msg[i].len);
		rte_pktmbuf_free(m);
	}
	expect_silence();
	send_aeth(qp, ACK, PSN + PRE + N - 1);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, N - 1);
	destroy(qp);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
}
END_TEST

/* A READ response of @p opcode at @p psn, @p len bytes of payload from
 * pattern at @p off. */
static void
read_resp_len(struct ibv_qp *qp, uint8_t opcode, uint32_t psn, uint32_t off, uint32_t len)
{
	struct droce_aeth a;
	bool aeth = opcode != DROCE_OP_READ_RESP_MIDDLE;

	droce_aeth_set(&a, ACK, 1);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = opcode, .dqpn = qp->qp_num, .psn = psn,
		.ext = aeth ? &a : NULL, .ext_len = aeth ? sizeof(a) : 0,
		.payload = pattern + off, .len = len });
}

/* A READ response of @p opcode at @p psn, an MTU of payload. */
static void
read_resp(struct ibv_qp *qp, uint8_t opcode, uint32_t psn, uint32_t off)
{
	read_resp_len(qp, opcode, psn, off, MTU);
}

/* The whole answer to a READ of @p len bytes requested at @p psn, its
 * payload from pattern at @p off. */
static void
read_answer(struct ibv_qp *qp, uint32_t psn, uint32_t off, uint32_t len)
{
	uint32_t done;

	if (len <= MTU) {
		read_resp_len(qp, DROCE_OP_READ_RESP_ONLY, psn, off, len);
		return;
	}
	read_resp(qp, DROCE_OP_READ_RESP_FIRST, psn++, off);
	for (done = MTU; len - done > MTU; done += MTU)
		read_resp(qp, DROCE_OP_READ_RESP_MIDDLE, psn++, off + done);
	read_resp_len(qp, DROCE_OP_READ_RESP_LAST, psn, off + done, len - done);
}

/*
 * A fenced WRITE in one list of WRITEs behind a READ (IB spec 10.8.3.3:
 * a fenced WR starts once the READs and atomics before it have
 * completed): the READ and the WRITEs before the fenced one go out, in
 * one run of like WRITEs (req_only_like()); the fenced one and the one
 * after it wait for the READ's response. The run stops at the fence as
 * its first WQE would.
 */
START_TEST(fenced_write_of_a_run_waits_for_the_read_before_it)
{
	enum { N = 5, FENCED = 3 };
	struct ibv_qp *qp = make_qp(1, 14);
	struct ibv_send_wr wr[N], *bad;
	struct ibv_sge sge[N];
	struct ibv_wc wc[N + 1];
	struct sent s;

	memset(buf, 0, MTU);
	for (unsigned i = 0; i < N; i++) {
		sge[i] = i == 0 ? (struct ibv_sge){ (uintptr_t)buf, MTU, mr->lkey } :
				  (struct ibv_sge){ (uintptr_t)buf + MTU + 64 * i, 64, mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .next = i + 1 < N ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = i == 0 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED | (i == FENCED ? IBV_SEND_FENCE : 0),
			.wr.rdma = { .remote_addr = READ_VA, .rkey = READ_RKEY },
		};
	}
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	s = take();
	ck_assert_uint_eq(s.opcode, DROCE_OP_READ_REQUEST);
	ck_assert_uint_eq(s.psn, PSN);
	take_run(PSN + 1, FENCED - 1);
	expect_silence();
	read_resp(qp, DROCE_OP_READ_RESP_ONLY, PSN, 0);
	take_run(PSN + FENCED, N - FENCED);
	send_aeth(qp, ACK, PSN + N - 1);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, N + 1), N);
	for (unsigned i = 0; i < N; i++) {
		ck_assert_uint_eq(wc[i].wr_id, i);
		ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
	}
	ck_assert_int_eq(memcmp(buf, pattern, MTU), 0);
	destroy(qp);
}
END_TEST

/*
 * READs posted in one list go out a run at a time (req_read_like()):
 * each request with its own PSN (one per response packet it asks for:
 * a READ of 2049 bytes takes three, one of none one) and its own RETH,
 * none past a fenced READ while READs are out, and as many as the QP's
 * READ credits allow (4). The answers to the READs before the fence let
 * it and the READs after it go, up to the credits; one more answer, the
 * last READ. All complete in order and land where each asked.
 */
START_TEST(reads_of_a_list_go_out_a_run_at_a_time)
{
	enum { N = 7, CREDITS = 4, FENCED = 2 };
	static const uint32_t len[N] = { 64, 2 * MTU + 1, 64, 0, 64, 64, 100 };
	struct ibv_qp *qp = make_qp(1, 14);
	struct ibv_send_wr wr[N], *bad;
	struct ibv_sge sge[N];
	struct ibv_wc wc[N + 1];
	uint32_t psn[N + 1];
	struct sent s;
	unsigned i, k;

	memset(buf, 0, BUF);
	psn[0] = PSN;
	for (i = 0; i < N; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 4 * MTU * i, len[i], mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .next = i + 1 < N ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED | (i == FENCED ? IBV_SEND_FENCE : 0),
			.wr.rdma = { .remote_addr = READ_VA + 4 * MTU * i, .rkey = READ_RKEY + i },
		};
		psn[i + 1] = psn[i] + (len[i] == 0 ? 1 : (len[i] + MTU - 1) / MTU);
	}
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	for (i = 0; i < N; i++) {
		if (i == FENCED) {
			expect_silence();
			for (k = 0; k < FENCED; k++)
				read_answer(qp, psn[k], 4 * MTU * k, len[k]);
		} else if (i == FENCED + CREDITS) {
			expect_silence();
			read_answer(qp, psn[FENCED], 4 * MTU * FENCED, len[FENCED]);
		}
		s = take();
		ck_assert_uint_eq(s.opcode, DROCE_OP_READ_REQUEST);
		ck_assert_uint_eq(s.psn, psn[i]);
		ck_assert_uint_eq(s.va, READ_VA + 4 * MTU * i);
		ck_assert_uint_eq(s.rkey, READ_RKEY + i);
		ck_assert_uint_eq(s.len, len[i]);
	}
	expect_silence();
	for (i = FENCED + 1; i < N; i++)
		read_answer(qp, psn[i], 4 * MTU * i, len[i]);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, N + 1), N);
	for (i = 0; i < N; i++) {
		ck_assert_uint_eq(wc[i].wr_id, i);
		ck_assert_int_eq(wc[i].status, IBV_WC_SUCCESS);
		ck_assert_int_eq(memcmp(buf + 4 * MTU * i, pattern + 4 * MTU * i, len[i]), 0);
	}
	destroy(qp);
}
END_TEST

/*
 * READ responses past a gap (an implied NAK): one request for the rest
 * of the READ, which is a retry (the only one of retry_cnt 1); the
 * responses after it, past the same gap, ask nothing more. Once the ACK
 * timer runs out with no retry left, the READ fails.
 */
START_TEST(read_response_gap_is_one_retry)
{
	struct ibv_qp *qp = make_qp(1, 14);
	struct sent s;

	post(qp, IBV_WR_RDMA_READ, 4 * MTU);
	s = take();
	ck_assert_uint_eq(s.opcode, DROCE_OP_READ_REQUEST);
	ck_assert_uint_eq(s.psn, PSN);
	read_resp(qp, DROCE_OP_READ_RESP_FIRST, PSN, 0);
	read_resp(qp, DROCE_OP_READ_RESP_MIDDLE, PSN + 2, 2 * MTU);
	s = take();
	ck_assert_uint_eq(s.opcode, DROCE_OP_READ_REQUEST);
	ck_assert_uint_eq(s.psn, PSN + 1);
	ck_assert_uint_eq(s.va, READ_VA + MTU);
	ck_assert_uint_eq(s.len, 3 * MTU);
	read_resp(qp, DROCE_OP_READ_RESP_LAST, PSN + 3, 3 * MTU);
	expect_silence();
	ck_assert_int_eq(memcmp(buf, pattern, MTU), 0);
	/* 4.096 us << 14: 67 ms */
	usleep(150 * 1000);
	expect_wc(IBV_WC_RETRY_EXC_ERR);
	expect_silence();
	destroy(qp);
}
END_TEST

/*
 * An unsignaled READ among unsignaled and signaled WRITEs: an ACK past
 * it, its response lost, is an implied NAK. The READ is asked for again,
 * and nothing after it completes until its response is in: the
 * completer's quick retirement of unsignaled WQEs must not take a READ.
 */
START_TEST(unsignaled_read_passed_by_an_ack_is_asked_again)
{
	struct ibv_qp *qp = make_qp(1, 14);
	struct ibv_sge sge[3] = {
		{ (uintptr_t)buf, MTU, mr->lkey },
		{ (uintptr_t)buf + MTU, MTU, mr->lkey },
		{ (uintptr_t)buf + 2 * MTU, MTU, mr->lkey },
	};
	struct ibv_send_wr wr[3], *bad;
	struct ibv_wc wc[4];
	struct sent s;

	memset(buf + MTU, 0, MTU);
	for (unsigned i = 0; i < 3; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = i == 2 ? 9 : i, .next = i < 2 ? &wr[i + 1] : NULL,
			.sg_list = &sge[i], .num_sge = 1,
			.opcode = i == 1 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			.send_flags = i == 2 ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { .remote_addr = READ_VA, .rkey = READ_RKEY },
		};
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	take_run(PSN, 3);
	send_aeth(qp, ACK, PSN + 2);
	s = take();
	ck_assert_uint_eq(s.opcode, DROCE_OP_READ_REQUEST);
	ck_assert_uint_eq(s.psn, PSN + 1);
	ck_assert_uint_eq(s.va, READ_VA);
	ck_assert_uint_eq(s.len, MTU);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 0);
	/* The WRITE after it, sent again, is let go: a frame still queued
	 * holds its WQE (zero copy). */
	droce_peer_drain(&peer);
	read_resp(qp, DROCE_OP_READ_RESP_ONLY, PSN + 1, 0);
	send_aeth(qp, ACK, PSN + 2);
	expect_wc(IBV_WC_SUCCESS);
	ck_assert_int_eq(memcmp(buf + MTU, pattern, MTU), 0);
	destroy(qp);
}
END_TEST

/*
 * An ACK of what was acknowledged already is no progress: it restores no
 * retry. With retry_cnt 1, the timeout after it fails the SEND.
 */
START_TEST(stale_ack_is_no_progress)
{
	struct ibv_qp *qp = make_qp(1, 14);

	post(qp, IBV_WR_SEND, 2 * MTU);
	take_run(PSN, 2);
	send_aeth(qp, ACK, PSN);
	usleep(150 * 1000);
	take_run(PSN + 1, 1);
	send_aeth(qp, ACK, PSN);
	expect_silence();
	usleep(150 * 1000);
	expect_wc(IBV_WC_RETRY_EXC_ERR);
	expect_silence();
	destroy(qp);
}
END_TEST

/*
 * A resend after a sequence NAK waits a whole ACK timeout (537 ms here)
 * for its answer, not what was left of the first send's.
 */
START_TEST(resend_gets_a_whole_ack_timeout)
{
	struct ibv_qp *qp = make_qp(0, 17);
	double t0 = droce_test_now(), t1;

	post(qp, IBV_WR_SEND, 2 * MTU);
	take_run(PSN, 2);
	sleep_until(t0 + 0.3);
	send_aeth(qp, SEQ_NAK, PSN);
	take_run(PSN, 2);
	t1 = droce_test_now();
	/* The first send's deadline (t0 + 0.537 s) is past, the resend's is not. */
	sleep_until(t1 + 0.38);
	expect_silence();
	send_aeth(qp, ACK, PSN + 1);
	expect_wc(IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("retry");
	TCase *tc = tcase_create("requester");

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, seq_nak_again_costs_nothing);
	tcase_add_test(tc, long_message_packets_and_their_resend);
	tcase_add_test(tc, read_response_gap_is_one_retry);
	tcase_add_test(tc, stale_ack_is_no_progress);
	tcase_add_test(tc, resend_gets_a_whole_ack_timeout);
	tcase_add_test(tc, unsignaled_writes_retire_at_their_ack);
	tcase_add_test(tc, short_unsignaled_writes_retire_at_their_ack);
	tcase_add_test(tc, write_resent_by_reference_waits_for_its_frame);
	tcase_add_test(tc, writes_resent_from_a_gone_region_fail);
	tcase_add_test(tc, short_writes_read_the_region_their_key_names);
	tcase_add_test(tc, short_messages_of_a_run_carry_their_own_fields);
	tcase_add_test(tc, fenced_write_of_a_run_waits_for_the_read_before_it);
	tcase_add_test(tc, short_writes_stop_at_their_region_bounds);
	tcase_add_test(tc, short_write_after_an_empty_foreign_sge_fails);
	tcase_add_test(tc, unsignaled_read_passed_by_an_ack_is_asked_again);
	tcase_add_test(tc, writes_resent_by_reference_wait_behind_a_copied_one);
	tcase_add_test(tc, short_writes_resent_by_reference_wait_behind_a_copied_one);
	tcase_add_test(tc, reads_of_a_list_go_out_a_run_at_a_time);
	suite_add_tcase(s, tc);
	return droce_test_run(s) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
