/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ECN, CNPs and DCQCN on the wire, against a raw RoCEv2 peer
 * (tests/common/droce_peer.h): a CE-marked request is answered with one
 * CNP in Annex A17's format per interval; a CNP slows the QP it names,
 * whose frames then leave at the DCQCN rate, in PSN order, none lost; QPs
 * that take no CNPs (UD) refuse them and send none.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <rte_cycles.h>

#include "droce_peer.h"
#include "droce_test.h"

#define PEER_QPN 0x200
#define PSN 0x40
#define BUF (256 * 1024)
#define QKEY 0x11111111u
/* DSCP 26 (AF31, what RoCE deployments mark), ECN in the low bits. */
#define TOS_CE ((26u << 2) | 3u)

static struct droce_peer peer;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *buf;

static void
setup(void)
{
	if (pd != NULL)
		return;
	ck_assert_int_eq(droce_peer_open(&peer, 4096), 0);
	pd = ibv_alloc_pd(peer.ctx);
	cq = ibv_create_cq(peer.ctx, 512, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF);
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0x5c, BUF);
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(mr);
	droce_peer_teach(&peer);
}

static struct ibv_qp *
make_qp(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN,
					.qkey = QKEY, .mtu = IBV_MTU_4096 };

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	return qp;
}

static void
post_recv(struct ibv_qp *qp, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, 4096, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	ck_assert_int_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

static void
destroy(struct ibv_qp *qp)
{
	struct ibv_wc wc[64];

	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	droce_peer_run(&peer);
	while (ibv_poll_cq(cq, 64, wc) > 0)
		;
	droce_peer_drain(&peer);
}

/* A SEND ONLY of 8 bytes from the peer, with IP TOS @p tos. */
static void
peer_send(struct ibv_qp *qp, uint32_t psn, uint8_t tos)
{
	static const uint8_t data[8] = "droce-cc";

	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_RC | DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = psn,
		.ackreq = true, .payload = data, .len = sizeof(data), .tclass = tos });
}

/* What the device sent since the last look: CNPs and other RoCE frames,
 * each frame's ECN bits checked on the way. */
struct seen {
	unsigned cnps, others;
	uint8_t cnp_ecn, other_ecn;
};

static struct seen
collect(uint32_t cnp_qpn)
{
	struct seen s = { 0 };
	struct droce_pkt pkt;
	struct rte_mbuf *m;

	while ((m = droce_peer_recv(&peer, &pkt)) != NULL) {
		if (pkt.op != NULL && pkt.opcode == DROCE_OPCODE_CNP) {
			const struct droce_bth *bth = droce_pkt_hdr(m, &pkt, DROCE_HDR_BTH);
			static const uint8_t zeros[16];

			/* Annex A17.9: BECN, PSN 0, the destination the
			 * marked request came from, 16 reserved zero bytes. */
			ck_assert_uint_eq(pkt.qpn, cnp_qpn);
			ck_assert_uint_eq(pkt.psn, 0);
			ck_assert_uint_eq(bth->resv8a & DROCE_BTH_BECN, DROCE_BTH_BECN);
			ck_assert_uint_eq(pkt.op->hdr_len, sizeof(*bth) + 16);
			ck_assert_int_eq(memcmp(bth + 1, zeros, 16), 0);
			ck_assert_uint_eq(pkt.payload_len, 0);
			s.cnps++;
			s.cnp_ecn = pkt.tclass & 3;
		} else if (pkt.op != NULL) {
			s.others++;
			s.other_ecn = pkt.tclass & 3;
		}
		rte_pktmbuf_free(m);
	}
	return s;
}

START_TEST(ce_marked_request_gets_one_cnp_per_interval)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	uint64_t ce0 = droce_peer_stat(&peer, "ce_received");
	uint64_t sent0 = droce_peer_stat(&peer, "cnps_sent");
	uint64_t supp0 = droce_peer_stat(&peer, "cnps_suppressed");
	struct seen s;

	post_recv(qp, 1);
	post_recv(qp, 2);
	post_recv(qp, 3);
	peer_send(qp, PSN, TOS_CE);
	s = collect(PEER_QPN);
	ck_assert_uint_eq(s.cnps, 1);
	ck_assert_uint_eq(s.others, 1);          /* the ACK */
	ck_assert_uint_eq(s.cnp_ecn, 0);         /* a CNP goes Not-ECT */
	ck_assert_uint_eq(s.other_ecn, 2);       /* everything else ECT(0) */
	/* Another CE right away: within the 50 us interval, no CNP. The
	 * engine may have taken longer than that on a loaded machine, so
	 * the two counters together must account for it. */
	peer_send(qp, PSN + 1, TOS_CE);
	s = collect(PEER_QPN);
	ck_assert_uint_eq(droce_peer_stat(&peer, "ce_received") - ce0, 2);
	ck_assert_uint_eq(droce_peer_stat(&peer, "cnps_sent") - sent0 +
			  droce_peer_stat(&peer, "cnps_suppressed") - supp0, 2);
	ck_assert_uint_eq(droce_peer_stat(&peer, "cnps_sent") - sent0, 1 + s.cnps);
	/* Not marked: no CNP whatever the interval. */
	rte_delay_us_block(100);
	peer_send(qp, PSN + 2, 1);
	s = collect(PEER_QPN);
	ck_assert_uint_eq(s.cnps, 0);
	ck_assert_uint_eq(s.others, 1);
	destroy(qp);
}
END_TEST

/* The WRITE frames the device sent since the last look, checked to come
 * in PSN order from @p *psn on. @return how many. */
static unsigned
write_frames(uint32_t *psn)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	unsigned n = 0;

	while ((m = droce_peer_recv(&peer, &pkt)) != NULL) {
		if (pkt.op != NULL && (pkt.op->flags & DROCE_OPF_WRITE)) {
			ck_assert_uint_eq(pkt.psn, *psn);
			*psn = droce_psn_add(*psn, 1);
			n++;
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

START_TEST(cnp_slows_the_qp_it_names)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC);
	static const uint8_t rsvd[16];
	struct ibv_sge sge = { (uintptr_t)buf, BUF, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = 0x10000, .rkey = 0x1234 } }, *bad;
	uint64_t paced0 = droce_peer_stat(&peer, "paced");
	uint64_t dec0 = droce_peer_stat(&peer, "rate_decreases");
	unsigned frames = 0, want = BUF / 4096;
	uint32_t psn = PSN;
	uint64_t t0, elapsed_us;

	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OPCODE_CNP, .dqpn = qp->qp_num, .ext = rsvd,
		.ext_len = sizeof(rsvd) });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rate_decreases") - dec0, 1);
	/* 256 KiB from half the ring port's 10 Gb/s: the 64 KiB bucket goes
	 * at once, the rest at a rate that climbs back (fast recovery every
	 * 55 us and every 150 KiB) but never above line rate, 1250 bytes a
	 * microsecond; unpaced, the whole WRITE leaves in a few iterations.
	 * In order, every frame once. */
	t0 = rte_get_tsc_cycles();
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
	while (frames < want && rte_get_tsc_cycles() - t0 < rte_get_tsc_hz())
		frames += write_frames(&psn);
	elapsed_us = (rte_get_tsc_cycles() - t0) * 1000000 / rte_get_tsc_hz();
	ck_assert_uint_eq(frames, want);
	ck_assert_uint_ge(elapsed_us, (BUF - 64 * 1024) / 1250);
	ck_assert_uint_gt(droce_peer_stat(&peer, "paced") - paced0, 0);
	destroy(qp);
}
END_TEST

START_TEST(ud_takes_no_cnp_and_sends_none)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD);
	static const uint8_t rsvd[16];
	uint64_t wrong0 = droce_peer_stat(&peer, "rx_wrong_service");
	uint64_t sent0 = droce_peer_stat(&peer, "cnps_sent");
	uint8_t dgram[8 + 8] = { 0 };
	struct seen s;

	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OPCODE_CNP, .dqpn = qp->qp_num, .ext = rsvd,
		.ext_len = sizeof(rsvd) });
	ck_assert_uint_eq(droce_peer_stat(&peer, "rx_wrong_service") - wrong0, 1);
	/* A CE-marked datagram: UD has no sender to slow down. */
	post_recv(qp, 1);
	dgram[0] = (uint8_t)(QKEY >> 24);
	dgram[1] = (uint8_t)(QKEY >> 16);
	dgram[2] = (uint8_t)(QKEY >> 8);
	dgram[3] = (uint8_t)QKEY;
	dgram[7] = 0x01; /* source QP 1 */
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_SVC_UD | DROCE_OP_SEND_ONLY, .dqpn = qp->qp_num, .psn = 1,
		.ext = dgram, .ext_len = 8, .payload = dgram + 8, .len = 8, .tclass = TOS_CE });
	s = collect(PEER_QPN);
	ck_assert_uint_eq(s.cnps, 0);
	ck_assert_uint_eq(droce_peer_stat(&peer, "cnps_sent"), sent0);
	destroy(qp);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("cnp");
	TCase *tc = tcase_create("wire");
	SRunner *sr;
	int failed;

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ce_marked_request_gets_one_cnp_per_interval);
	tcase_add_test(tc, cnp_slows_the_qp_it_names);
	tcase_add_test(tc, ud_takes_no_cnp_and_sends_none);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (pd != NULL) {
		ibv_dereg_mr(mr);
		ibv_destroy_cq(cq);
		ibv_dealloc_pd(pd);
		droce_peer_close(&peer);
	}
	free(buf);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
