/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * When the engine sends what it built, against a raw peer
 * (tests/common/droce_peer.h) whose frames the test hands in one poll at
 * a time: an application's poll that staged only an ACK holds it for the
 * next entry into the engine (docs/architecture.md, "ACKs ride with the
 * answer"), which sends it first, or with the frame a post builds; a QP's
 * ACK waits while its requests keep coming in full receive bursts; and a
 * series of posts to a busy QP runs the engine's send half every three
 * sixteenths of its send queue (droce_wq_batch_due()). A QP that sent and
 * completed everything lingers on the active list (drained) until the
 * engine's sweep lets it go, and posts racing those sweeps are not lost.
 * An engine with a progress thread holds nothing back, and the first
 * busy iterations are all timed. A new path changes the headers sent.
 * A send ring's slots start on cache lines, as the WQE's layout by line
 * (struct droce_send_wqe) assumes.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "droce.h"
#include "droce_engine.h"
#include "droce_peer.h"
#include "droce_qp.h"
#include "droce_stats.h"
#include "droce_test.h"
#include "droce_verbs_priv.h"

#define PEER_QPN 0x100
#define PSN 0x10
#define BUF 65536

static struct droce_peer peer;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t *buf;

static void
setup(void)
{
	droce_peer_fixture(&peer, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &pd, &cq,
			   &buf, &mr);
}

/* An RC QP to the peer whose MAC the device knows, nothing outstanding. */
static struct ibv_qp *
make_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct droce_test_path path = { .dqpn = PEER_QPN, .dgid = peer.gid, .psn = PSN };
	struct droce_aeth a;

	ck_assert_ptr_nonnull(qp);
	ck_assert_int_eq(droce_test_connect(qp, &path), 0);
	/* An ACK of nothing outstanding teaches the device the peer's MAC. */
	droce_aeth_set(&a, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 0);
	droce_peer_send(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_ACK, .dqpn = qp->qp_num, .psn = PSN - 1,
		.ext = &a, .ext_len = sizeof(a) });
	droce_peer_drain(&peer);
	return qp;
}

/* Hand the device one 8-byte WRITE ONLY (AckReq) at @p psn, without
 * running its engine. */
static void
deliver_write(struct ibv_qp *qp, uint32_t psn, uint8_t byte)
{
	uint8_t payload[8];
	struct droce_reth reth = { .va = rte_cpu_to_be_64((uintptr_t)buf),
				   .rkey = rte_cpu_to_be_32(mr->rkey),
				   .len = rte_cpu_to_be_32(sizeof(payload)) };

	memset(payload, byte, sizeof(payload));
	droce_peer_queue(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_WRITE_ONLY, .dqpn = qp->qp_num, .psn = psn, .ackreq = true,
		.ext = &reth, .ext_len = sizeof(reth), .payload = payload, .len = sizeof(payload) });
}

/* The next frame the device has sent, without running its engine (as
 * droce_peer_recv() would): its opcode and PSN; -1 when none. */
static int
next_opcode(uint32_t *psn)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	int op;

	if (rte_ring_dequeue(peer.from_dev, (void **)&m) != 0)
		return -1;
	ck_assert_int_eq(droce_pkt_parse(m, &pkt, true), DROCE_PARSE_OK);
	op = pkt.opcode;
	*psn = pkt.psn;
	rte_pktmbuf_free(m);
	return op;
}

static void
post_write(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, 8, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE }, *bad;

	wr.wr.rdma.remote_addr = 0x1000;
	wr.wr.rdma.rkey = 0x77;
	ck_assert_int_eq(ibv_post_send(qp, &wr, &bad), 0);
}

static void
destroy(struct ibv_qp *qp)
{
	struct ibv_wc wc[64];

	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	droce_peer_poll_cq(&peer, cq, wc, 64);
	droce_peer_drain(&peer);
}

/* The poll that takes a WRITE in writes it and holds its ACK; the next
 * poll sends the ACK before it receives anything. */
START_TEST(ack_waits_for_next_poll)
{
	struct ibv_qp *qp = make_qp();
	uint32_t psn;

	deliver_write(qp, PSN, 0xa5);
	droce_dev_poll(peer.dev);
	ck_assert_uint_eq(buf[7], 0xa5);
	ck_assert_int_eq(next_opcode(&psn), -1);
	droce_dev_poll(peer.dev);
	ck_assert_int_eq(next_opcode(&psn), DROCE_OP_ACK);
	ck_assert_uint_eq(psn, PSN);
	ck_assert_int_eq(next_opcode(&psn), -1);
	destroy(qp);
}
END_TEST

/* The first iterations that move frames are each timed (one in
 * DROCE_ENGINE_TIME_EVERY later on), so a short run has cycle counts: the
 * poll that takes one WRITE in adds to them (or, preempted, to the
 * iterations left out). */
START_TEST(first_busy_iterations_are_timed)
{
	struct ibv_qp *qp = make_qp();
	struct droce_dev_stats s0, s1;

	ck_assert_int_eq(droce_dev_stats(peer.dev, &s0), 0);
	deliver_write(qp, PSN, 0x11);
	droce_dev_poll(peer.dev);
	ck_assert_int_eq(droce_dev_stats(peer.dev, &s1), 0);
	ck_assert_uint_eq(buf[7], 0x11);
	ck_assert(s1.engine.busy_cycles > s0.engine.busy_cycles ||
		  s1.engine.long_iterations > s0.engine.long_iterations);
	destroy(qp);
}
END_TEST

/* A post after that poll sends the held ACK first and its WRITE after it,
 * with no poll between. */
START_TEST(ack_rides_with_the_answer)
{
	struct ibv_qp *qp = make_qp();
	uint32_t psn;

	deliver_write(qp, PSN, 0x5a);
	droce_dev_poll(peer.dev);
	ck_assert_int_eq(next_opcode(&psn), -1);
	post_write(qp, 1);
	ck_assert_int_eq(next_opcode(&psn), DROCE_OP_ACK);
	ck_assert_uint_eq(psn, PSN);
	ck_assert_int_eq(next_opcode(&psn), DROCE_OP_WRITE_ONLY);
	ck_assert_uint_eq(psn, PSN);
	ck_assert_int_eq(next_opcode(&psn), -1);
	destroy(qp);
}
END_TEST

/* Hand the device @p n WRITE ONLYs from @p psn on, as deliver_write(). */
static void
deliver_writes(struct ibv_qp *qp, uint32_t psn, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		deliver_write(qp, psn + i, (uint8_t)i);
}

/* The next frame the device has sent is an ACK of @p psn. */
static void
expect_ack(uint32_t psn)
{
	uint32_t got;

	ck_assert_int_eq(next_opcode(&got), DROCE_OP_ACK);
	ck_assert_uint_eq(got, psn);
}

/* While a QP's WRITEs come in full receive bursts (32 frames), its ACK
 * waits for the next burst, up to DROCE_RESP_ACK_EVERY (64) packets: two
 * full bursts get one ACK, of the second's last; the burst after, not
 * full, is acknowledged at once. Each ACK goes out at the next poll, which
 * an application's poll holds it for. */
START_TEST(acks_coalesce_across_full_bursts)
{
	struct ibv_qp *qp = make_qp();
	uint32_t psn;

	ck_assert_uint_eq(DROCE_RESP_ACK_EVERY, 64);
	deliver_writes(qp, PSN, 72);
	droce_dev_poll(peer.dev);
	droce_dev_poll(peer.dev);
	ck_assert_int_eq(next_opcode(&psn), -1);
	droce_dev_poll(peer.dev);
	expect_ack(PSN + 63);
	ck_assert_int_eq(next_opcode(&psn), -1);
	droce_dev_poll(peer.dev);
	expect_ack(PSN + 71);
	ck_assert_int_eq(next_opcode(&psn), -1);
	/* Every WRITE taken, after make_qp()'s ACK. */
	ck_assert_uint_eq(droce_qp_of(qp)->stats.rx_pkts, 1 + 72);
	ck_assert_uint_eq(droce_qp_of(qp)->stats.dropped, 0);
	destroy(qp);
}
END_TEST

/* The wait is for the QP's own stream: a full burst that holds none of
 * its requests (another QP's) sends the ACK it owes, while the other QP's
 * waits. */
START_TEST(ack_waits_only_while_its_stream_goes_on)
{
	struct ibv_qp *a = make_qp(), *b = make_qp();
	uint32_t psn;

	deliver_writes(a, PSN, 32);
	deliver_writes(b, PSN, 32);
	droce_dev_poll(peer.dev);
	droce_dev_poll(peer.dev);
	ck_assert_int_eq(next_opcode(&psn), -1);
	droce_dev_poll(peer.dev);
	expect_ack(PSN + 31);
	ck_assert_int_eq(next_opcode(&psn), -1);
	droce_dev_poll(peer.dev);
	expect_ack(PSN + 31);
	ck_assert_int_eq(next_opcode(&psn), -1);
	destroy(a);
	destroy(b);
}
END_TEST

/* The first post wakes the QP and sends; the QP then waits for its ACK,
 * and the next posts wait for the engine, until the one that completes a
 * batch sends them all. */
START_TEST(posts_send_a_batch_at_a_time)
{
	struct ibv_qp *qp = make_qp();
	const unsigned batch = droce_qp_of(qp)->sq.batch;
	uint32_t psn;
	unsigned i, sent = 0;

	/* Three sixteenths of the 64 WQEs make_qp() asks for. */
	ck_assert_uint_eq(batch, 12);
	post_write(qp, 0);
	ck_assert_int_eq(next_opcode(&psn), DROCE_OP_WRITE_ONLY);
	for (i = 1; i < batch - 1; i++)
		post_write(qp, i);
	ck_assert_int_eq(next_opcode(&psn), -1);
	post_write(qp, i);
	while (next_opcode(&psn) == DROCE_OP_WRITE_ONLY)
		sent++;
	ck_assert_uint_eq(sent, batch - 1);
	ck_assert_uint_eq(psn, PSN + batch - 1);
	destroy(qp);
}
END_TEST

/* With a progress thread, an application's poll runs the engine only
 * while the thread sleeps: what it staged goes out before it returns,
 * ACKs too, instead of waiting for the thread to wake. The thread's idle
 * sleep is long here, so it sleeps through the poll. Last: it leaves the
 * engine without its thread. */
START_TEST(ack_not_held_with_a_runner)
{
	struct ibv_qp *qp = make_qp();
	struct droce_engine *e = droce_dev_get(peer.dev)->engines[0];
	unsigned waited_ms = 0;
	uint32_t psn;

	ck_assert_int_eq(droce_engine_thread_start(e, 200000), 0);
	/* Its sleeps double from 1 us; after 0.6 s each is 0.1 s or more. */
	rte_delay_us_sleep(600000);
	while (__atomic_load_n(&e->spinning, __ATOMIC_RELAXED)) {
		ck_assert_uint_lt(waited_ms++, 5000);
		rte_delay_us_sleep(1000);
	}
	deliver_write(qp, PSN, 0x3c);
	/* The thread woke just then (once in some 10^5 runs) and took the
	 * frame itself: it sends the ACK at the end of its iteration. */
	if (droce_dev_poll(peer.dev) == -EBUSY)
		for (waited_ms = 0; rte_ring_count(peer.from_dev) == 0 && waited_ms < 5000; waited_ms++)
			rte_delay_us_sleep(1000);
	ck_assert_uint_eq(buf[7], 0x3c);
	ck_assert_int_eq(next_opcode(&psn), DROCE_OP_ACK);
	ck_assert_uint_eq(psn, PSN);
	droce_engine_stop(e);
	destroy(qp);
}
END_TEST

/* The peer's ACK of the WRITE at @p psn, handed in without running the
 * engine. */
static void
deliver_ack(struct ibv_qp *qp, uint32_t psn, uint32_t msn)
{
	struct droce_aeth a;

	droce_aeth_set(&a, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, msn);
	droce_peer_queue(&peer, &(struct droce_peer_frame){
		.opcode = DROCE_OP_ACK, .dqpn = qp->qp_num, .psn = psn, .ext = &a,
		.ext_len = sizeof(a) });
}

/* The next frame the device sends, waiting up to 2 s for it (another
 * thread runs the engine): its opcode and PSN. */
static int
await_opcode(uint32_t *psn)
{
	uint64_t end = rte_get_tsc_cycles() + 2 * rte_get_tsc_hz();
	int op;

	while ((op = next_opcode(psn)) == -1 && rte_get_tsc_cycles() < end)
		rte_pause();
	return op;
}

/* A QP that sent and completed everything lingers on the engine's active
 * list, drained: a post needs no kick and goes out at once. Quiet for a
 * whole period between two sweeps (250 us apart), the QP leaves the
 * list, and the next post wakes it again. */
START_TEST(drained_qp_lingers_then_leaves)
{
	struct ibv_qp *ibqp = make_qp();
	struct droce_qp *qp = droce_qp_of(ibqp);
	unsigned i, polls, lingered = 0;
	uint32_t psn;

	/* Each round takes microseconds: the QP lingers after each, unless
	 * the thread lost its CPU for a whole sweep period (then it left,
	 * idle, as it should, and the next post woke it). */
	for (i = 0; i < 5; i++) {
		post_write(ibqp, i);
		ck_assert_int_eq(next_opcode(&psn), DROCE_OP_WRITE_ONLY);
		ck_assert_uint_eq(psn, PSN + i);
		deliver_ack(ibqp, psn, i + 1);
		droce_dev_poll(peer.dev);
		ck_assert_uint_eq(qp->sq.cons, i + 1);
		if (qp->active) {
			ck_assert_uint_eq(qp->drained, 1);
			ck_assert_uint_eq(qp->idle, 0);
			lingered++;
		} else {
			ck_assert_uint_eq(qp->idle, 1);
		}
	}
	ck_assert_uint_gt(lingered, 0);
	/* A sweep during the posts above may have started the quiet period
	 * already: the QP leaves at the first or a later poll. */
	for (polls = 0; qp->active; polls++) {
		ck_assert_uint_lt(polls, 1000);
		rte_delay_us_sleep(100);
		droce_dev_poll(peer.dev);
	}
	ck_assert_uint_eq(qp->idle, 1);
	ck_assert_uint_eq(qp->drained, 0);
	post_write(ibqp, i);
	ck_assert_int_eq(next_opcode(&psn), DROCE_OP_WRITE_ONLY);
	ck_assert_uint_eq(psn, PSN + i);
	ck_assert(qp->active);
	ck_assert_uint_eq(qp->idle, 0);
	destroy(ibqp);
}
END_TEST

/* Posts race the engine's sweeps: a progress thread (which sleeps when
 * idle, so posts run the engine too) lets the QP go while the application
 * posts at random times around the linger period. No post may be lost:
 * each WRITE reaches the peer, and its completion the application. */
/* The IPv4 TTL of the next frame the device has sent, a WRITE ONLY. */
static unsigned
next_write_ttl(void)
{
	struct droce_pkt pkt;
	struct rte_mbuf *m;
	unsigned ttl;

	ck_assert_int_eq(rte_ring_dequeue(peer.from_dev, (void **)&m), 0);
	ck_assert_int_eq(droce_pkt_parse(m, &pkt, true), DROCE_PARSE_OK);
	ck_assert_int_eq(pkt.opcode, DROCE_OP_WRITE_ONLY);
	ck_assert(!pkt.ipv6);
	ttl = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, pkt.l3_off)->time_to_live;
	rte_pktmbuf_free(m);
	return ttl;
}

/* A QP's frames start from its header template, which is not compared
 * with the QP's addresses at every frame: a new path (SQD -> SQD with
 * IBV_QP_AV, here another hop limit) must still reach the wire. */
START_TEST(new_path_new_headers)
{
	struct ibv_qp *qp = make_qp();
	struct ibv_qp_attr a;

	post_write(qp, 0);
	ck_assert_uint_eq(next_write_ttl(), 64);
	deliver_ack(qp, PSN, 1);
	droce_dev_poll(peer.dev);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	droce_dev_poll(peer.dev);
	ck_assert_int_eq(ibv_query_qp(qp, &a, IBV_QP_AV, &(struct ibv_qp_init_attr){ 0 }), 0);
	a.ah_attr.grh.hop_limit = 7;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_AV), 0);
	a.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	post_write(qp, 1);
	ck_assert_uint_eq(next_write_ttl(), 7);
	destroy(qp);
}
END_TEST

START_TEST(posts_race_the_sweep)
{
	struct ibv_qp *ibqp = make_qp();
	struct droce_engine *e = droce_dev_get(peer.dev)->engines[0];
	unsigned seed = 12345, i, left;
	struct ibv_wc wc;
	uint32_t psn;

	ck_assert_int_eq(droce_engine_thread_start(e, 20), 0);
	for (i = 0; i < 3000; i++) {
		struct ibv_sge sge = { (uintptr_t)buf, 8, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.rdma.remote_addr = 0x1000;
		wr.wr.rdma.rkey = 0x77;
		ck_assert_int_eq(ibv_post_send(ibqp, &wr, &bad), 0);
		ck_assert_msg(await_opcode(&psn) == DROCE_OP_WRITE_ONLY, "post %u was lost", i);
		ck_assert_uint_eq(psn, PSN + i);
		deliver_ack(ibqp, psn, i + 1);
		for (left = 2000000; ibv_poll_cq(cq, 1, &wc) == 0; left--)
			ck_assert_msg(left > 0, "no completion for post %u", i);
		ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
		ck_assert_uint_eq(wc.wr_id, i);
		rte_delay_us_block(rand_r(&seed) % 600);
	}
	droce_engine_stop(e);
	destroy(ibqp);
}
END_TEST

/* Whatever the queue's size, SGE count and inline room, every send slot
 * starts on a cache line: the ring does, and its stride is whole lines. */
START_TEST(send_ring_slots_on_cache_lines)
{
	static const struct ibv_qp_cap caps[] = {
		{ .max_send_wr = 1, .max_send_sge = 1 },
		{ .max_send_wr = 64, .max_send_sge = 1 },
		{ .max_send_wr = 100, .max_send_sge = 3, .max_inline_data = 100 },
		{ .max_send_wr = 513, .max_send_sge = 7, .max_inline_data = 8 },
	};

	for (unsigned i = 0; i < RTE_DIM(caps); i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = caps[i],
		};
		struct ibv_qp *qp;
		const struct droce_wq *sq;

		ia.cap.max_recv_wr = ia.cap.max_recv_sge = 1;
		qp = ibv_create_qp(pd, &ia);
		ck_assert_ptr_nonnull(qp);
		sq = &droce_qp_of(qp)->sq;
		ck_assert_uint_eq((uintptr_t)sq->buf % RTE_CACHE_LINE_SIZE, 0);
		ck_assert_uint_eq(sq->stride % RTE_CACHE_LINE_SIZE, 0);
		ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	}
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("engine_turns");
	TCase *tc = tcase_create("turns");

	tcase_add_unchecked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, first_busy_iterations_are_timed);
	tcase_add_test(tc, ack_waits_for_next_poll);
	tcase_add_test(tc, ack_rides_with_the_answer);
	tcase_add_test(tc, acks_coalesce_across_full_bursts);
	tcase_add_test(tc, ack_waits_only_while_its_stream_goes_on);
	tcase_add_test(tc, posts_send_a_batch_at_a_time);
	tcase_add_test(tc, drained_qp_lingers_then_leaves);
	tcase_add_test(tc, posts_race_the_sweep);
	tcase_add_test(tc, ack_not_held_with_a_runner);
	tcase_add_test(tc, new_path_new_headers);
	tcase_add_test(tc, send_ring_slots_on_cache_lines);
	suite_add_tcase(s, tc);
	return droce_test_run(s) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
