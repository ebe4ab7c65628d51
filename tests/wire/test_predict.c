/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Header prediction (droce_pkt_predict()) against the full parse: from a
 * frame the parse accepted, whatever the prediction accepts the parse
 * must accept with the same result, byte for byte. Tried on every pair of
 * frames of the captures (real rxe traffic among them), on built frames
 * of every layout (IPv4, IPv6, untagged or 802.1Q) with other PSNs and
 * lengths, and on random corruptions, truncations and splits of them.
 * And the prediction must take the frames it is for: the next frame of a
 * QP whose headers differ only by PSN, lengths and opcode (the next
 * packet of a message, or an ACK beside a request).
 */
#include <string.h>

#include "wire_test.h"

#define MAX_FRAME 2048
#define MUTATIONS 3000

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t
rnd(uint32_t n)
{
	rng = rng * 6364136223846793005u + 1442695040888963407u;
	return (uint32_t)(rng >> 33) % n;
}

/* @p q's prediction from @p prev (parsed as @p pp) against its parse:
 * @return whether the prediction took it. */
static bool
check_against_parse(const struct rte_mbuf *prev, const struct droce_pkt *pp, struct rte_mbuf *q)
{
	struct droce_pkt pred, full;

	const uint8_t *a = rte_pktmbuf_mtod(prev, const uint8_t *);
	uint32_t a_len = rte_pktmbuf_data_len(prev);
	bool took;

	memset(&pred, 0, sizeof(pred));
	memset(&full, 0, sizeof(full));
	took = droce_pkt_predict(a, a_len, pp, q, &pred);
	/* From the headers a port queue keeps of the last frame: the same. */
	memset(&full, 0, sizeof(full));
	ck_assert_int_eq(droce_pkt_predict(a, RTE_MIN(a_len, (uint32_t)DROCE_PKT_PREDICT_LEN), pp,
					   q, &full), took);
	if (took)
		ck_assert_mem_eq(&pred, &full, sizeof(pred));
	if (!took)
		return false;
	memset(&full, 0, sizeof(full));
	ck_assert_int_eq(droce_pkt_parse(q, &full, false), DROCE_PARSE_OK);
	ck_assert_mem_eq(&pred, &full, sizeof(pred));
	return true;
}

/* @p prev_bytes parsed as the last frame, then @p q_bytes (@p q_len) as
 * it lies and split into two segments at a random place. */
static unsigned
check_pair(const uint8_t *prev_bytes, uint32_t prev_len, const uint8_t *q_bytes, uint32_t q_len)
{
	struct rte_mbuf *prev = test_mbuf(prev_bytes, prev_len), *q;
	struct droce_pkt pp;
	unsigned took = 0;
	uint32_t cut;

	memset(&pp, 0, sizeof(pp));
	if (droce_pkt_parse(prev, &pp, false) != DROCE_PARSE_OK) {
		rte_pktmbuf_free(prev);
		return 0;
	}
	q = test_mbuf(q_bytes, q_len);
	took += check_against_parse(prev, &pp, q);
	rte_pktmbuf_free(q);
	if (q_len > 1) {
		cut = 1 + rnd(q_len - 1);
		q = test_mbuf_split(q_bytes, q_len, &cut, 1);
		took += check_against_parse(prev, &pp, q);
		rte_pktmbuf_free(q);
	}
	rte_pktmbuf_free(prev);
	return took;
}

START_TEST(test_predict_captures)
{
	static const char *const files[] = { "roce-v2.pcap", "rxe-rc-write.pcap", "rxe-rc-send.pcap",
					     "rxe-rc-read.pcap", "rxe-ud-send.pcap" };
	unsigned took = 0;

	for (unsigned f = 0; f < RTE_DIM(files); f++) {
		struct pcap_file p;

		test_pcap_load(files[f], &p);
		for (size_t i = 0; i < p.n; i++)
			for (size_t j = 0; j < p.n; j++)
				took += check_pair(p.frames[i].data, p.frames[i].len,
						   p.frames[j].data, p.frames[j].len);
		pcap_free(&p);
	}
	/* The frames of one QP and opcode in a capture predict each other. */
	ck_assert_uint_gt(took, 100);
}
END_TEST

/* A WRITE ONLY (with @p payload bytes) or an ACK, to QPN 0x123456. */
static uint32_t
frame(uint8_t *buf, const struct droce_l3_addr *a, bool ack, uint32_t psn, uint32_t payload)
{
	uint8_t l4[64 + MAX_FRAME] = { 0 };
	unsigned pad = ack ? 0 : (4 - (payload & 3)) & 3;
	uint32_t l4_len = sizeof(struct droce_bth);
	struct rte_mbuf *m;
	const void *d;
	uint32_t len;

	droce_bth_set((struct droce_bth *)l4, ack ? DROCE_OP_ACK : DROCE_OP_WRITE_ONLY, false,
		      pad, DROCE_PKEY_DEFAULT, 0x123456, !ack, psn);
	if (ack) {
		droce_aeth_set((struct droce_aeth *)(l4 + l4_len), DROCE_AETH_ACK, psn);
		l4_len += sizeof(struct droce_aeth);
	} else {
		struct droce_reth *r = (struct droce_reth *)(l4 + l4_len);

		r->va = rte_cpu_to_be_64(0x1000);
		r->rkey = rte_cpu_to_be_32(0x77);
		r->len = rte_cpu_to_be_32(payload);
		l4_len += sizeof(*r);
		for (uint32_t i = 0; i < payload; i++)
			l4[l4_len + i] = (uint8_t)(i * 7 + psn);
		l4_len += payload + pad;
	}
	m = test_build(a, l4, l4_len);
	len = rte_pktmbuf_pkt_len(m);
	ck_assert_uint_le(len, MAX_FRAME);
	d = rte_pktmbuf_read(m, 0, len, buf);
	ck_assert_ptr_nonnull(d);
	if (d != buf)
		memcpy(buf, d, len);
	rte_pktmbuf_free(m);
	return len;
}

START_TEST(test_predict_layouts)
{
	static uint8_t prev[MAX_FRAME], q[MAX_FRAME];
	struct droce_l3_addr a;

	for (unsigned v = 0; v < 4; v++) {
		test_addr(&a, v & 1, v & 2 ? 0x0123 : 0);
		for (unsigned ack = 0; ack < 2; ack++) {
			uint32_t prev_len = frame(prev, &a, ack, 0x10, 64), q_len;
			unsigned took = 0, mutated = 0;

			/* The next frames of the QP, other PSNs and lengths, of
			 * the same kind or the other (another opcode): taken. */
			for (uint32_t k = 0; k < 40; k++) {
				q_len = frame(q, &a, ack ^ (k & 1), 0x11 + k, k * 37);
				ck_assert_uint_eq(check_pair(prev, prev_len, q, q_len) != 0, 1);
			}
			/* Corrupted: a random byte of the headers (or past them)
			 * given a random value, a length changed, the frame cut. */
			for (unsigned k = 0; k < MUTATIONS; k++) {
				q_len = frame(q, &a, ack, 0x11 + k, rnd(200));
				switch (rnd(3)) {
				case 0:
					q[rnd(RTE_MIN(q_len, 100u))] = (uint8_t)rnd(256);
					break;
				case 1: {
					/* The IP or the UDP length, anything near it. */
					unsigned off = (v & 2 ? 18 : 14) + (v & 1 ? 4 : 2);
					unsigned udp = (v & 2 ? 18 : 14) + (v & 1 ? 40 : 20) + 4;
					unsigned at = rnd(2) ? off : udp;
					uint16_t len = (uint16_t)((q[at] << 8 | q[at + 1]) + rnd(9) - 4);

					q[at] = (uint8_t)(len >> 8);
					q[at + 1] = (uint8_t)len;
					break;
				}
				default:
					q_len = rnd(q_len + 1);
					break;
				}
				mutated++;
				took += check_pair(prev, prev_len, q, q_len);
			}
			/* Some mutations (in the payload, or a length that
			 * still adds up) leave a frame the prediction takes. */
			ck_assert_uint_gt(took, mutated / 20);
		}
	}
}
END_TEST

/* Another QP, P_Key, ECN mark or destination MAC (which the port's
 * filter, not the parse, judges), or an opcode nobody defined: left to
 * the parse. */
START_TEST(test_predict_declines)
{
	static uint8_t prev[MAX_FRAME], q[MAX_FRAME];
	struct droce_l3_addr a;
	struct rte_mbuf *pm, *qm;
	struct droce_pkt pp, pred;
	uint32_t prev_len, q_len;
	unsigned bth = 14 + 20 + 8;

	test_addr(&a, false, 0);
	prev_len = frame(prev, &a, false, 0x10, 64);
	pm = test_mbuf(prev, prev_len);
	ck_assert_int_eq(droce_pkt_parse(pm, &pp, false), DROCE_PARSE_OK);
	for (unsigned k = 0; k < 5; k++) {
		q_len = frame(q, &a, false, 0x11, 64);
		if (k == 0)
			q[bth + 7] ^= 1;        /* another destination QP */
		else if (k == 1)
			q[bth] = 0x1f;          /* an RC opcode nobody defined */
		else if (k == 2)
			q[15] |= 3;             /* ECN: CE */
		else if (k == 3)
			q[bth + 4] |= 0x80;     /* FECN */
		else if (k == 4)
			q[5] ^= 1;              /* another destination MAC */
		qm = test_mbuf(q, q_len);
		ck_assert(!droce_pkt_predict(prev, prev_len, &pp, qm, &pred));
		rte_pktmbuf_free(qm);
	}
	rte_pktmbuf_free(pm);
}
END_TEST

Suite *
suite_predict(void)
{
	Suite *s = suite_create("predict");
	TCase *tc = tcase_create("predict");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_predict_captures);
	tcase_add_test(tc, test_predict_layouts);
	tcase_add_test(tc, test_predict_declines);
	suite_add_tcase(s, tc);
	return s;
}
