/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames droce_pkt_parse() must reject, and why: truncated at every
 * length, every single-bit error, unknown opcodes, other traffic, lengths
 * that disagree, pad counts larger than the payload. Run under ASan/UBSan
 * these also show nothing is read out of bounds.
 */
#include <string.h>

#include "wire_test.h"

#define MAX_FRAME 2048

static enum droce_parse_err
parse_bytes(const uint8_t *d, uint32_t len, bool check_icrc, struct droce_pkt *pkt)
{
	struct rte_mbuf *m = test_mbuf(d, len);
	struct droce_pkt scratch;
	enum droce_parse_err err;

	err = droce_pkt_parse(m, pkt != NULL ? pkt : &scratch, check_icrc);
	rte_pktmbuf_free(m);
	return err;
}

/* A copy of frame @p i of roce-v2.pcap (0-10 IPv4, 11-21 IPv6), parsed. */
static uint32_t
roce_v2_frame(size_t i, uint8_t buf[MAX_FRAME], struct droce_pkt *pkt)
{
	struct pcap_file f;
	uint32_t len;

	test_pcap_load("roce-v2.pcap", &f);
	ck_assert_uint_lt(i, f.n);
	len = f.frames[i].len;
	ck_assert_uint_le(len, MAX_FRAME);
	memcpy(buf, f.frames[i].data, len);
	pcap_free(&f);
	ck_assert_int_eq(parse_bytes(buf, len, true, pkt), DROCE_PARSE_OK);
	return len;
}

#define FRAME_SEND_V4 0   /* RC SEND_ONLY, 13 bytes + pad 3 */
#define FRAME_ACK_V4 1
#define FRAME_SEND_V6 11

static void
check_truncations(const uint8_t *d, uint32_t len)
{
	for (uint32_t l = 0; l < len; l++) {
		ck_assert_int_eq(parse_bytes(d, l, true, NULL), DROCE_PARSE_MALFORMED);
		ck_assert_int_eq(parse_bytes(d, l, false, NULL), DROCE_PARSE_MALFORMED);
	}
}

START_TEST(test_truncated)
{
	struct pcap_file f;

	test_pcap_load("roce-v2.pcap", &f);
	for (size_t i = 0; i < f.n; i++)
		check_truncations(f.frames[i].data, f.frames[i].len);
	pcap_free(&f);
	/* A READ request and a 1086-byte READ response with AETH. */
	test_pcap_load("rxe-rc-read.pcap", &f);
	check_truncations(f.frames[0].data, f.frames[0].len);
	check_truncations(f.frames[5].data, f.frames[5].len);
	pcap_free(&f);
}
END_TEST

/* Bits of the byte at @p off that the ICRC masks (A17.3.3). */
static uint8_t
icrc_masked_bits(const struct droce_pkt *pkt, uint32_t off)
{
	if (off >= pkt->l3_off && off < pkt->l4_off) {
		uint32_t ip = off - pkt->l3_off;

		if (pkt->ipv6)	/* traffic class, flow label, hop limit */
			return ip == 0 ? 0x0f : (ip <= 3 || ip == 7) ? 0xff : 0;
		/* TOS, TTL, header checksum */
		return (ip == 1 || ip == 8 || ip == 10 || ip == 11) ? 0xff : 0;
	}
	if (off == pkt->l4_off + 6u || off == pkt->l4_off + 7u)	/* UDP checksum */
		return 0xff;
	return off == pkt->bth_off + 4u ? 0xff : 0;	/* resv8a */
}

/*
 * Flip every bit of every frame in turn. The ICRC must catch each flip in
 * the bytes it covers, ignore the masked ones and the Ethernet header, and
 * leave the frame as it found it.
 */
START_TEST(test_bitflip)
{
	struct pcap_file f;

	test_pcap_load("roce-v2.pcap", &f);
	for (size_t i = 0; i < f.n; i++) {
		uint8_t buf[MAX_FRAME];
		uint32_t len = f.frames[i].len;
		struct droce_pkt pkt;

		memcpy(buf, f.frames[i].data, len);
		ck_assert_int_eq(parse_bytes(buf, len, true, &pkt), DROCE_PARSE_OK);
		for (uint32_t off = 0; off < len; off++) {
			for (unsigned bit = 0; bit < 8; bit++) {
				uint8_t flip = (uint8_t)(1u << bit);
				struct rte_mbuf *m;
				bool icrc_ok;

				buf[off] ^= flip;
				m = test_mbuf(buf, len);
				icrc_ok = droce_icrc_check(m, pkt.l3_off);
				ck_assert_mem_eq(rte_pktmbuf_mtod(m, uint8_t *), buf, len);
				rte_pktmbuf_free(m);
				if (off < pkt.l3_off) {
					ck_assert(icrc_ok);
				} else if (icrc_masked_bits(&pkt, off) & flip) {
					ck_assert_msg(icrc_ok, "frame %zu byte %u", i + 1, off);
					ck_assert_int_eq(parse_bytes(buf, len, true, NULL),
							 DROCE_PARSE_OK);
				} else {
					ck_assert_msg(!icrc_ok, "frame %zu byte %u bit %u",
						      i + 1, off, bit);
					ck_assert_int_ne(parse_bytes(buf, len, true, NULL),
							 DROCE_PARSE_OK);
				}
				buf[off] ^= flip;
			}
		}
	}
	pcap_free(&f);
}
END_TEST

START_TEST(test_bad_opcode)
{
	uint8_t buf[MAX_FRAME];
	struct droce_pkt pkt;
	uint32_t len = roce_v2_frame(FRAME_SEND_V4, buf, &pkt);
	uint8_t orig = buf[pkt.bth_off];

	for (unsigned c = 0; c < 256; c++) {
		enum droce_parse_err plain, checked;

		buf[pkt.bth_off] = (uint8_t)c;
		plain = parse_bytes(buf, len, false, NULL);
		checked = parse_bytes(buf, len, true, NULL);
		if (!droce_opcode_valid((uint8_t)c)) {
			ck_assert_int_eq(plain, DROCE_PARSE_BAD_OPCODE);
			ck_assert_int_eq(checked, DROCE_PARSE_BAD_OPCODE);
		} else if (c != orig) {
			/* Its headers may not fit; if they do, the ICRC fails. */
			ck_assert(plain == DROCE_PARSE_OK || plain == DROCE_PARSE_MALFORMED);
			ck_assert(checked == DROCE_PARSE_BAD_ICRC ||
				  checked == DROCE_PARSE_MALFORMED);
		}
	}
}
END_TEST

/* Set a big-endian 16-bit field at @p off, parse, put it back. */
static enum droce_parse_err
parse_with16(uint8_t *buf, uint32_t len, uint32_t off, uint16_t v)
{
	uint16_t save;
	enum droce_parse_err err;

	memcpy(&save, buf + off, 2);
	v = rte_cpu_to_be_16(v);
	memcpy(buf + off, &v, 2);
	err = parse_bytes(buf, len, false, NULL);
	memcpy(buf + off, &save, 2);
	return err;
}

static enum droce_parse_err
parse_with8(uint8_t *buf, uint32_t len, uint32_t off, uint8_t v)
{
	uint8_t save = buf[off];
	enum droce_parse_err err;

	buf[off] = v;
	err = parse_bytes(buf, len, false, NULL);
	buf[off] = save;
	return err;
}

static uint16_t
get16(const uint8_t *buf, uint32_t off)
{
	return (uint16_t)(buf[off] << 8 | buf[off + 1]);
}

START_TEST(test_not_roce)
{
	uint8_t buf[MAX_FRAME];
	struct droce_pkt pkt;
	uint32_t len = roce_v2_frame(FRAME_SEND_V4, buf, &pkt);
	uint32_t ip = pkt.l3_off, udp = pkt.l4_off;

	ck_assert_int_eq(parse_with16(buf, len, udp + 2, 4790), DROCE_PARSE_NOT_ROCE);
	ck_assert_int_eq(parse_with16(buf, len, 12, RTE_ETHER_TYPE_ARP), DROCE_PARSE_NOT_ROCE);
	ck_assert_int_eq(parse_with8(buf, len, ip + 9, IPPROTO_TCP), DROCE_PARSE_NOT_ROCE);
	/* A later fragment has no UDP header to tell. */
	ck_assert_int_eq(parse_with16(buf, len, ip + 6, 1), DROCE_PARSE_NOT_ROCE);

	len = roce_v2_frame(FRAME_SEND_V6, buf, &pkt);
	ck_assert_int_eq(parse_with16(buf, len, pkt.l4_off + 2, 4790), DROCE_PARSE_NOT_ROCE);
	/* IPv6 extension headers (hop-by-hop here) are not supported. */
	ck_assert_int_eq(parse_with8(buf, len, pkt.l3_off + 6, 0), DROCE_PARSE_NOT_ROCE);
}
END_TEST

START_TEST(test_bad_lengths)
{
	uint8_t buf[MAX_FRAME];
	struct droce_pkt pkt;
	uint32_t len = roce_v2_frame(FRAME_SEND_V4, buf, &pkt);
	uint32_t ip = pkt.l3_off, udp = pkt.l4_off, bth = pkt.bth_off;
	uint16_t total = get16(buf, ip + 2), ulen = get16(buf, udp + 4);

	ck_assert_int_eq(parse_with16(buf, len, ip + 2, total + 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, ip + 2, total - 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, ip + 2, 0), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, udp + 4, ulen + 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, udp + 4, ulen - 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, udp + 4, 0), DROCE_PARSE_MALFORMED);
	/* Version 5, IHL 4, IHL 15 (longer than the packet). */
	ck_assert_int_eq(parse_with8(buf, len, ip, 0x55), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with8(buf, len, ip, 0x44), DROCE_PARSE_MALFORMED);
	ck_assert_int_ne(parse_with8(buf, len, ip, 0x4f), DROCE_PARSE_OK);
	/* More fragments follow: RoCE cannot be reassembled. */
	ck_assert_int_eq(parse_with16(buf, len, ip + 6, RTE_IPV4_HDR_MF_FLAG),
			 DROCE_PARSE_MALFORMED);
	/* TVer 1. */
	ck_assert_int_eq(parse_with8(buf, len, bth + 1, buf[bth + 1] | 1),
			 DROCE_PARSE_MALFORMED);

	len = roce_v2_frame(FRAME_SEND_V6, buf, &pkt);
	ip = pkt.l3_off;
	udp = pkt.l4_off;
	total = get16(buf, ip + 4);
	ulen = get16(buf, udp + 4);
	ck_assert_int_eq(parse_with16(buf, len, ip + 4, total + 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, ip + 4, total - 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with16(buf, len, udp + 4, ulen - 1), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_with8(buf, len, ip, 0x46), DROCE_PARSE_MALFORMED);
}
END_TEST

/* Ethernet pads short frames: what follows the IP packet is not RoCE. */
START_TEST(test_eth_padding)
{
	uint8_t buf[MAX_FRAME];
	struct droce_pkt pkt, padded;
	uint32_t len = roce_v2_frame(FRAME_ACK_V4, buf, &pkt);

	memset(buf + len, 0, 20);
	ck_assert_int_eq(parse_bytes(buf, len + 20, true, &padded), DROCE_PARSE_OK);
	ck_assert_uint_eq(padded.payload_len, pkt.payload_len);
	ck_assert_uint_eq(padded.payload_off, pkt.payload_off);
	ck_assert_uint_eq(padded.psn, pkt.psn);
}
END_TEST

/* Parse a frame built around a BTH with @p after bytes of zeros after it. */
static enum droce_parse_err
parse_built(uint8_t opcode, unsigned pad, uint32_t after, struct droce_pkt *pkt)
{
	uint8_t l4[MAX_FRAME] = { 0 };
	struct droce_l3_addr a;
	struct rte_mbuf *m;
	struct droce_pkt scratch;
	enum droce_parse_err err;

	droce_bth_set((struct droce_bth *)l4, opcode, false, pad, DROCE_PKEY_DEFAULT,
		      0x42, false, 7);
	test_addr(&a, false, 0);
	m = test_build(&a, l4, (uint32_t)sizeof(struct droce_bth) + after);
	err = droce_pkt_parse(m, pkt != NULL ? pkt : &scratch, true);
	rte_pktmbuf_free(m);
	return err;
}

START_TEST(test_pad_and_headers)
{
	struct droce_pkt pkt;

	ck_assert_int_eq(parse_built(DROCE_OP_SEND_ONLY, 2, 2, &pkt), DROCE_PARSE_OK);
	ck_assert_uint_eq(pkt.payload_len, 0);
	ck_assert_uint_eq(pkt.pad, 2);
	ck_assert_int_eq(parse_built(DROCE_OP_SEND_ONLY, 3, 2, NULL), DROCE_PARSE_MALFORMED);
	/* UD SEND_ONLY_IMM: DETH, ImmDt, 5 bytes and 3 of pad. */
	ck_assert_int_eq(parse_built(DROCE_SVC_UD | DROCE_OP_SEND_ONLY_IMM, 3, 8 + 4 + 8, &pkt),
			 DROCE_PARSE_OK);
	ck_assert_uint_eq(pkt.payload_len, 5);
	ck_assert_uint_eq(pkt.payload_off, pkt.bth_off + 24);
	/* An ACK carries nothing after its AETH, not even pad. */
	ck_assert_int_eq(parse_built(DROCE_OP_ACK, 0, 4, NULL), DROCE_PARSE_OK);
	ck_assert_int_eq(parse_built(DROCE_OP_ACK, 1, 4, NULL), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_built(DROCE_OP_ACK, 0, 8, NULL), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_built(DROCE_OP_ACK, 1, 5, NULL), DROCE_PARSE_MALFORMED);
	/* Headers that do not fit. */
	ck_assert_int_eq(parse_built(DROCE_OP_ACK, 0, 2, NULL), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_built(DROCE_OP_WRITE_FIRST, 0, 8, NULL), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_built(DROCE_OP_WRITE_FIRST, 0, 16, NULL), DROCE_PARSE_OK);
	/* A CNP: 16 reserved bytes, nothing else. */
	ck_assert_int_eq(parse_built(DROCE_OPCODE_CNP, 0, 16, &pkt), DROCE_PARSE_OK);
	ck_assert_uint_eq(pkt.payload_len, 0);
	ck_assert_int_eq(parse_built(DROCE_OPCODE_CNP, 0, 12, NULL), DROCE_PARSE_MALFORMED);
	ck_assert_int_eq(parse_built(DROCE_OPCODE_CNP, 0, 20, NULL), DROCE_PARSE_MALFORMED);
}
END_TEST

Suite *
suite_malformed(void)
{
	Suite *s = suite_create("malformed");
	TCase *tc = tcase_create("reject");

	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_bitflip);
	tcase_add_test(tc, test_bad_opcode);
	tcase_add_test(tc, test_not_roce);
	tcase_add_test(tc, test_bad_lengths);
	tcase_add_test(tc, test_eth_padding);
	tcase_add_test(tc, test_pad_and_headers);
	suite_add_tcase(s, tc);
	return s;
}
