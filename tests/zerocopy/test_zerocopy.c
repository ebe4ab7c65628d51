/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy TX, seen from a raw peer on a ring ethdev
 * (tests/common/droce_peer.h): the ring hands the device's frames to the
 * test as they are, so the test holds them as long as a slow driver
 * would, and frees them when it likes.
 *  - WRITE payloads go out as chains pointing into the region, byte-exact
 *    with a right ICRC; the WQE does not complete while a frame is held,
 *    even once acknowledged.
 *  - A retransmission (go-back-N after a timeout) and a duplicate READ
 *    answered again reference the region anew, while the first frames are
 *    still held: they carry the region's bytes.
 *  - ibv_dereg_mr() of a region with frames in flight waits for them, and
 *    fails with EBUSY (the region intact) when they stay too long;
 *    ibv_rereg_mr() moving the region likewise.
 *  - ibv_destroy_qp() with frames in flight that point into its WQEs
 *    returns all the same (its WQE flushed): the QP's memory stays until
 *    they are freed, then goes.
 *  - Copies are counted with their reason.
 *  - Copied payloads long enough to have their ICRC computed as they are
 *    copied (droce_copy_crc32()) carry a right one: first, middle and
 *    padded last frames, from any alignment.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "droce_peer.h"
#include "droce_test.h"
#include "droce_transport.h"
#include "droce_verbs_priv.h"

#define PEER_QPN 0x100
#define PSN 0x10
#define BUF 65536
#define MTU 1024
#define MAX_HELD 256

static struct droce_peer peer;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *buf;

/* Frames the device sent, held as a slow driver would hold them. */
static struct rte_mbuf *held[MAX_HELD];
static unsigned nb_held;

static void
setup(void)
{
	if (pd != NULL)
		return;
	ck_assert_int_eq(droce_peer_open(&peer, 4096), 0);
	droce_peer_verbs(&peer, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ, &pd, &cq, &buf, &mr);
	ck_assert_ptr_nonnull(cq);
	ck_assert_ptr_nonnull(mr);
	droce_test_fill(buf, BUF, 1);
}

static void
send_ack(struct ibv_qp *qp, uint32_t psn)
{
	struct droce_aeth a;

	droce_aeth_set(&a, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 1);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_ACK, .dqpn = qp->qp_num, .psn = psn,
		.ext = &a, .ext_len = sizeof(a) });
}

/* An RC QP to the peer; ACK timeout code @p timeout (0: 67 ms). */
static struct ibv_qp *
make_qp(unsigned max_sge, uint8_t timeout)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = max_sge,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN,
					.timeout = timeout };

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	/* A frame from the peer to the QP teaches the device the peer's MAC
	 * (an ACK of nothing outstanding, ignored). */
	send_ack(qp, PSN - 1);
	return qp;
}

static void
post_write(struct ibv_qp *qp, struct ibv_sge *sge, int num_sge, uint64_t remote)
{
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = sge, .num_sge = num_sge, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = remote, .rkey = 0x1234 },
	}, *bad;

	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

/*
 * Take @p want RoCE frames the device sends (waiting up to 3 s: the first
 * frames of a QP wait for its route) and hold them; each must carry,
 * after its headers, the bytes at @p expect + (PSN - PSN) * MTU, with a
 * good ICRC (the peer's parser checks it). @return frames taken.
 */
static unsigned
take_frames(const uint8_t *expect, unsigned want, unsigned *chained)
{
	static uint8_t got[4096];
	double until = droce_test_now() + 3;
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	unsigned n = 0;

	while (n < want && droce_test_now() < until) {
		m = droce_peer_recv(&peer, &pkt);
		if (m == NULL)
			continue;
		/* ARP goes by; a RoCE frame with a bad ICRC fails the test. */
		if (pkt.op == NULL) {
			ck_assert_int_eq(droce_pkt_parse(m, &pkt, false), DROCE_PARSE_NOT_ROCE);
			rte_pktmbuf_free(m);
			continue;
		}
		ck_assert_uint_lt(nb_held, MAX_HELD);
		if (pkt.payload_len > 0) {
			ck_assert_int_eq(droce_mbuf_copy(m, pkt.payload_off, pkt.payload_len,
							 got), 0);
			ck_assert_mem_eq(got, expect + (size_t)(pkt.psn - PSN) * MTU,
					 pkt.payload_len);
		}
		if (chained != NULL && m->nb_segs > 1)
			(*chained)++;
		held[nb_held++] = m;
		n++;
	}
	return n;
}

/* Free the held frames, and any the device sent since (retransmissions
 * a loaded machine let the ACK timer send). */
static void
release_frames(void)
{
	rte_pktmbuf_free_bulk(held, nb_held);
	nb_held = 0;
	droce_peer_drain(&peer);
}

/* Let go of the frames, destroy @p qp and take what it flushed. */
static void
destroy(struct ibv_qp *qp)
{
	struct ibv_wc wc[16];

	release_frames();
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	droce_peer_poll_cq(&peer, cq, wc, 16);
	release_frames();
}

START_TEST(write_zero_copy_completes_after_release)
{
	struct ibv_qp *qp = make_qp(1, 0);
	struct ibv_sge sge = { (uintptr_t)buf, 8 * MTU, mr->lkey };
	uint64_t zc0 = droce_peer_stat(&peer, "tx_zcopy_frames");
	unsigned chained = 0;
	struct ibv_wc wc[2];

	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf, 8, &chained), 8);
	ck_assert_uint_eq(chained, 8);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_zcopy_frames") - zc0, 8);
	/* Acknowledged, but the frames still point into the buffer. */
	send_ack(qp, PSN + 7);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 0);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 0);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc[0].wr_id, 7);
	destroy(qp);
}
END_TEST

/* The payload from three SGEs: three external segments per frame where
 * the SGEs meet, still byte-exact. */
START_TEST(sge_list_spans_regions)
{
	struct ibv_qp *qp = make_qp(3, 0);
	static uint8_t flat[3 * MTU];
	uint8_t *other = aligned_alloc(4096, 4096);
	struct ibv_mr *mr2;
	struct ibv_sge sge[3];
	struct ibv_wc wc[2];

	ck_assert_ptr_nonnull(other);
	droce_test_fill(other, 4096, 2);
	mr2 = ibv_reg_mr(pd, other, 4096, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr2);
	sge[0] = (struct ibv_sge){ (uintptr_t)buf + 100, 700, mr->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)other + 3, 1500, mr2->lkey };
	sge[2] = (struct ibv_sge){ (uintptr_t)buf + 9000, 3 * MTU - 2200, mr->lkey };
	memcpy(flat, buf + 100, 700);
	memcpy(flat + 700, other + 3, 1500);
	memcpy(flat + 2200, buf + 9000, 3 * MTU - 2200);
	post_write(qp, sge, 3, 0x1000);
	ck_assert_uint_eq(take_frames(flat, 3, NULL), 3);
	/* The first frame: headers, 700 + 324 bytes in two segments, tail. */
	ck_assert_uint_eq(held[0]->nb_segs, 4);
	send_ack(qp, PSN + 2);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	ck_assert_int_eq(ibv_dereg_mr(mr2), 0);
	free(other);
	destroy(qp);
}
END_TEST

/*
 * No ACK: go-back-N sends the message again while the first frames are
 * still held. Both sets carry the region's bytes; the WQE completes once
 * both are released.
 */
START_TEST(retransmission_references_the_region_again)
{
	/* A 16 ms ACK timeout: the resend comes quickly. */
	struct ibv_qp *qp = make_qp(1, 12);
	struct ibv_sge sge = { (uintptr_t)buf + 4096, 4 * MTU, mr->lkey };
	struct ibv_wc wc[2];

	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf + 4096, 4, NULL), 4);
	/* The resend: the same PSNs, the same bytes. */
	ck_assert_uint_eq(take_frames(buf + 4096, 4, NULL), 4);
	send_ack(qp, PSN + 3);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 0);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

/* A READ answered from the region, and its duplicate answered again. */
START_TEST(read_response_and_duplicate)
{
	struct ibv_qp *qp = make_qp(1, 0);
	struct droce_reth r = { .va = rte_cpu_to_be_64((uintptr_t)buf + 2048),
				.rkey = rte_cpu_to_be_32(mr->rkey),
				.len = rte_cpu_to_be_32(3 * MTU) };
	uint64_t zc0 = droce_peer_stat(&peer, "tx_zcopy_frames");
	struct droce_peer_frame req = {
		.opcode = DROCE_OP_READ_REQUEST, .dqpn = qp->qp_num, .psn = PSN,
		.ackreq = true, .ext = &r, .ext_len = sizeof(r),
	};

	droce_peer_send(&peer, &req);
	ck_assert_uint_eq(take_frames(buf + 2048, 3, NULL), 3);
	droce_peer_send(&peer, &req);
	ck_assert_uint_eq(take_frames(buf + 2048, 3, NULL), 3);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_zcopy_frames") - zc0, 6);
	destroy(qp);
}
END_TEST

struct releaser {
	double after;
	/* Set before the frames are freed: a deregistration that waits for
	 * them cannot return before. (Set after, it raced with that return:
	 * release_frames() goes on to drain the ring once the frames are
	 * freed, and on a loaded host the test failed now and then.) */
	bool releasing;
};

static void *
release_later(void *arg)
{
	struct releaser *r = arg;

	while (droce_test_now() < r->after)
		;
	__atomic_store_n(&r->releasing, true, __ATOMIC_RELEASE);
	release_frames();
	return NULL;
}

/*
 * Deregistration with frames in flight: EBUSY when they stay (the region
 * still works, same key); a wait when they leave meanwhile, and no frame
 * left pointing into the region when it returns.
 */
START_TEST(dereg_with_frames_in_flight)
{
	struct ibv_qp *qp = make_qp(1, 0);
	uint8_t *b = aligned_alloc(4096, 4 * MTU);
	struct ibv_mr *m2;
	struct ibv_sge sge;
	struct releaser rel;
	pthread_t t;
	uint32_t key;
	struct ibv_wc wc[2];

	ck_assert_ptr_nonnull(b);
	droce_test_fill(b, 4 * MTU, 3);
	m2 = ibv_reg_mr(pd, b, 4 * MTU, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(m2);
	key = m2->lkey;
	sge = (struct ibv_sge){ (uintptr_t)b, 2 * MTU, key };
	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(b, 2, NULL), 2);
	send_ack(qp, PSN + 1);
	ck_assert_int_eq(ibv_dereg_mr(m2), EBUSY);
	/* Still registered under its key: a second WRITE goes out from it. */
	ck_assert_uint_eq(m2->lkey, key);
	sge.addr = (uintptr_t)b + MTU;
	sge.length = MTU;
	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(b - MTU, 1, NULL), 1);
	send_ack(qp, PSN + 2);
	rel = (struct releaser){ .after = droce_test_now() + 0.2 };
	ck_assert_int_eq(pthread_create(&t, NULL, release_later, &rel), 0);
	ck_assert_int_eq(ibv_dereg_mr(m2), 0);
	ck_assert(__atomic_load_n(&rel.releasing, __ATOMIC_ACQUIRE));
	pthread_join(t, NULL);
	free(b);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 2);
	destroy(qp);
}
END_TEST

/*
 * Destroying a QP whose frames are held (a ring's reader that stopped
 * reading, a NIC that reclaims sent frames late): the destroy returns, its
 * WRITE flushed, and the QP's memory, which the frames' free callback
 * writes into, stays until they are freed. Before, the destroy waited for
 * them forever (the fuzzer found it).
 */
START_TEST(destroy_with_frames_in_flight)
{
	struct ibv_qp *qp = make_qp(1, 0);
	struct ibv_sge sge = { (uintptr_t)buf, 2 * MTU, mr->lkey };
	struct droce_dev *d = droce_dev_get(peer.dev);
	struct ibv_wc wc[2];
	double t0;

	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf, 2, NULL), 2);
	t0 = droce_test_now();
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_double_lt(droce_test_now() - t0, 5);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_uint_eq(wc[0].wr_id, 7);
	ck_assert_int_eq(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	ck_assert_uint_eq(droce_dev_qps_reap(d), 1);
	/* The frames' free callbacks count off on the kept QP (under
	 * AddressSanitizer a freed one would be a use after free). */
	release_frames();
	ck_assert_uint_eq(droce_dev_qps_reap(d), 0);
	/* The device goes on: another QP sends and completes. */
	qp = make_qp(1, 0);
	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf, 2, NULL), 2);
	send_ack(qp, PSN + 1);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(wc[0].status, IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

/* Moving a region elsewhere waits for its frames in flight like deregistering it. */
START_TEST(rereg_with_frames_in_flight)
{
	struct ibv_qp *qp = make_qp(1, 0);
	uint8_t *b = aligned_alloc(4096, 4096), *b2 = aligned_alloc(4096, 4096);
	struct ibv_mr *m2;
	struct ibv_sge sge;
	struct ibv_wc wc[2];

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(b2);
	droce_test_fill(b, 2 * MTU, 4);
	m2 = ibv_reg_mr(pd, b, 2 * MTU, IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(m2);
	sge = (struct ibv_sge){ (uintptr_t)b, 2 * MTU, m2->lkey };
	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(b, 2, NULL), 2);
	send_ack(qp, PSN + 1);
	ck_assert_int_eq(ibv_rereg_mr(m2, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2, 2 * MTU, 0),
			 IBV_REREG_MR_ERR_CMD);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_ptr_eq(m2->addr, b);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 2), 1);
	ck_assert_int_eq(ibv_rereg_mr(m2, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2, 2 * MTU, 0), 0);
	ck_assert_int_eq(ibv_dereg_mr(m2), 0);
	free(b);
	free(b2);
	destroy(qp);
}
END_TEST

/* Copies, with their reasons: zero copy off, a short payload, too many SGEs. */
START_TEST(copies_are_counted)
{
	struct ibv_qp *qp = make_qp(DROCE_ZC_SEGS_MAX + 1, 0);
	struct ibv_sge sge[DROCE_ZC_SEGS_MAX + 1];
	uint64_t port0 = droce_peer_stat(&peer, "tx_copy_port");
	uint64_t small0 = droce_peer_stat(&peer, "tx_copy_small");
	uint64_t sges0 = droce_peer_stat(&peer, "tx_copy_sges");
	unsigned chained = 0;
	struct ibv_wc wc[4];

	droce_zc_configure(false, DROCE_ZC_MIN_DEFAULT);
	sge[0] = (struct ibv_sge){ (uintptr_t)buf, 2 * MTU, mr->lkey };
	post_write(qp, sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf, 2, &chained), 2);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
	sge[0].length = 100;
	post_write(qp, sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf - 2 * MTU, 1, &chained), 1);
	/* One frame long enough for zero copy, in one SGE too many. */
	for (unsigned i = 0; i <= DROCE_ZC_SEGS_MAX; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 3 * MTU + i * 114,
					   i < DROCE_ZC_SEGS_MAX ? 114 : MTU - 114 * i, mr->lkey };
	post_write(qp, sge, DROCE_ZC_SEGS_MAX + 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf, 1, &chained), 1);
	ck_assert_uint_eq(chained, 0);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_copy_port") - port0, 2);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_copy_small") - small0, 1);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_copy_sges") - sges0, 1);
	send_ack(qp, PSN + 3);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 3);
	destroy(qp);
}
END_TEST

/*
 * Messages of one short packet, posted as a list and built in one engine
 * turn, each on the short path (droce_tx_payload_short(), the first
 * reading the zero-copy settings for the turn, so the threshold set just
 * before holds for all three), which copies below the threshold and,
 * once the threshold is below a payload (DROCE_ZCOPY=<bytes>), leaves it
 * to go by reference; counted either way.
 */
START_TEST(short_payload_by_reference_under_a_low_threshold)
{
	static const uint32_t len[3] = { 32, 128, 32 };
	struct ibv_qp *qp = make_qp(1, 0);
	struct ibv_sge sge[3];
	struct ibv_send_wr wr[3], *bad;
	uint64_t zc0 = droce_peer_stat(&peer, "tx_zcopy_frames");
	uint64_t small0 = droce_peer_stat(&peer, "tx_copy_small");
	unsigned chained = 0;
	struct ibv_wc wc[4];

	/* Frame k's payload at buf + 64 + k * MTU, as take_frames() expects. */
	for (unsigned k = 0; k < 3; k++) {
		sge[k] = (struct ibv_sge){ (uintptr_t)buf + 64 + k * MTU, len[k], mr->lkey };
		wr[k] = (struct ibv_send_wr){
			.wr_id = k, .next = k < 2 ? &wr[k + 1] : NULL, .sg_list = &sge[k],
			.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = 0x1000, .rkey = 0x1234 },
		};
	}
	droce_zc_configure(true, 64);
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	ck_assert_uint_eq(take_frames(buf + 64, 3, &chained), 3);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
	ck_assert_uint_eq(chained, 1);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_zcopy_frames") - zc0, 1);
	ck_assert_uint_eq(droce_peer_stat(&peer, "tx_copy_small") - small0, 2);
	send_ack(qp, PSN + 2);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 3);
	for (unsigned k = 0; k < 3; k++)
		ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

/*
 * Short messages alike (one length with a pad, one opcode), posted as a
 * list and each sent by reference under a low threshold: the requester
 * starts the second from the headers of the first, whose payload is in
 * another segment, and the fourth from the third's; the third, flagged
 * solicited, is not like the second. Each frame is chained, carries its
 * own PSN, solicited bit, RETH and payload, and a good ICRC.
 */
START_TEST(like_short_frames_by_reference)
{
	enum { N = 4, LEN = 125 };
	struct ibv_qp *qp = make_qp(1, 0);
	struct ibv_sge sge[N];
	struct ibv_send_wr wr[N], *bad;
	unsigned chained = 0;
	struct ibv_wc wc[N + 1];

	for (unsigned k = 0; k < N; k++) {
		sge[k] = (struct ibv_sge){ (uintptr_t)buf + 64 + k * MTU, LEN, mr->lkey };
		wr[k] = (struct ibv_send_wr){
			.wr_id = k, .next = k + 1 < N ? &wr[k + 1] : NULL, .sg_list = &sge[k],
			.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = 0x1000 + k * 0x100, .rkey = 0x1234 + k },
		};
		if (k >= 2)
			wr[k].send_flags |= IBV_SEND_SOLICITED;
	}
	droce_zc_configure(true, 64);
	ck_assert_int_eq(ibv_post_send(qp, wr, &bad), 0);
	ck_assert_uint_eq(take_frames(buf + 64, N, &chained), N);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
	ck_assert_uint_eq(chained, N);
	for (unsigned k = 0; k < N; k++) {
		struct droce_pkt pkt;
		const struct droce_reth *r;

		ck_assert_int_eq(droce_pkt_parse(held[k], &pkt, true), DROCE_PARSE_OK);
		ck_assert_uint_eq(pkt.psn, PSN + k);
		ck_assert_uint_eq(pkt.opcode, DROCE_OP_WRITE_ONLY);
		ck_assert_uint_eq(pkt.pad, 3);
		ck_assert_uint_eq(pkt.payload_len, LEN);
		ck_assert_int_eq(droce_bth_se(rte_pktmbuf_mtod_offset(held[k],
				 const struct droce_bth *, pkt.bth_off)), k >= 2);
		r = rte_pktmbuf_mtod_offset(held[k], const struct droce_reth *,
					    pkt.bth_off + sizeof(struct droce_bth));
		ck_assert_uint_eq(rte_be_to_cpu_64(r->va), 0x1000 + k * 0x100);
		ck_assert_uint_eq(rte_be_to_cpu_32(r->rkey), 0x1234 + k);
		ck_assert_uint_eq(rte_be_to_cpu_32(r->len), LEN);
	}
	send_ack(qp, PSN + N - 1);
	release_frames();
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, N + 1), N);
	for (unsigned k = 0; k < N; k++)
		ck_assert_int_eq(wc[k].status, IBV_WC_SUCCESS);
	destroy(qp);
}
END_TEST

START_TEST(copied_frames_carry_their_icrc)
{
	struct ibv_qp *qp = make_qp(1, 0);
	/* Three frames from an odd address, the last 1021 bytes (three of
	 * pad); then one whole frame from an aligned one. */
	struct ibv_sge sge = { (uintptr_t)buf + 5, 3 * MTU - 3, mr->lkey };
	struct ibv_wc wc[4];

	droce_zc_configure(false, DROCE_ZC_MIN_DEFAULT);
	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf + 5, 3, NULL), 3);
	sge = (struct ibv_sge){ (uintptr_t)buf + 64, MTU, mr->lkey };
	post_write(qp, &sge, 1, 0x1000);
	ck_assert_uint_eq(take_frames(buf + 64 - 3 * MTU, 1, NULL), 1);
	droce_zc_configure(true, DROCE_ZC_MIN_DEFAULT);
	send_ack(qp, PSN + 3);
	ck_assert_int_eq(droce_peer_poll_cq(&peer, cq, wc, 4), 2);
	destroy(qp);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("zerocopy");
	TCase *tc = tcase_create("tx");

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, write_zero_copy_completes_after_release);
	tcase_add_test(tc, sge_list_spans_regions);
	tcase_add_test(tc, retransmission_references_the_region_again);
	tcase_add_test(tc, read_response_and_duplicate);
	tcase_add_test(tc, dereg_with_frames_in_flight);
	tcase_add_test(tc, destroy_with_frames_in_flight);
	tcase_add_test(tc, rereg_with_frames_in_flight);
	tcase_add_test(tc, copies_are_counted);
	tcase_add_test(tc, copied_frames_carry_their_icrc);
	tcase_add_test(tc, short_payload_by_reference_under_a_low_threshold);
	tcase_add_test(tc, like_short_frames_by_reference);
	suite_add_tcase(s, tc);
	return droce_test_run(s) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
