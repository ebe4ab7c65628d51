/* SPDX-License-Identifier: BSD-3-Clause */
/* The opcode table against the IBTA header layouts, and PSN arithmetic. */
#include <string.h>

#include "wire_test.h"

/* Header lengths (BTH included) as IBTA 9.4 and rxe's opcode table give them. */
static const struct {
	uint8_t opcode;
	const char *name;
	uint8_t hdr_len;
} known_len[] = {
	{ 0x00, "RC_SEND_FIRST", 12 },
	{ 0x03, "RC_SEND_LAST_IMM", 16 },
	{ 0x06, "RC_WRITE_FIRST", 28 },
	{ 0x0b, "RC_WRITE_ONLY_IMM", 32 },
	{ 0x0c, "RC_READ_REQUEST", 28 },
	{ 0x0d, "RC_READ_RESP_FIRST", 16 },
	{ 0x0e, "RC_READ_RESP_MIDDLE", 12 },
	{ 0x11, "RC_ACK", 16 },
	{ 0x12, "RC_ATOMIC_ACK", 24 },
	{ 0x13, "RC_CMP_SWAP", 40 },
	{ 0x14, "RC_FETCH_ADD", 40 },
	{ 0x17, "RC_SEND_ONLY_INV", 16 },
	{ 0x29, "UC_WRITE_LAST_IMM", 16 },
	{ 0x2a, "UC_WRITE_ONLY", 28 },
	{ 0x64, "UD_SEND_ONLY", 20 },
	{ 0x65, "UD_SEND_ONLY_IMM", 24 },
	{ 0x81, "CNP", 28 },
	{ 0xa0, "XRC_SEND_FIRST", 16 },
	{ 0xab, "XRC_WRITE_ONLY_IMM", 36 },
	{ 0xac, "XRC_READ_REQUEST", 32 },
	{ 0xad, "XRC_READ_RESP_FIRST", 16 },
	{ 0xb1, "XRC_ACK", 16 },
	{ 0xb2, "XRC_ATOMIC_ACK", 24 },
	{ 0xb4, "XRC_FETCH_ADD", 44 },
	{ 0xb7, "XRC_SEND_ONLY_INV", 20 },
};

static const uint8_t hdr_size[DROCE_HDR_NUM] = {
	[DROCE_HDR_BTH] = sizeof(struct droce_bth),
	[DROCE_HDR_DETH] = sizeof(struct droce_deth),
	[DROCE_HDR_XRCETH] = sizeof(struct droce_xrceth),
	[DROCE_HDR_RETH] = sizeof(struct droce_reth),
	[DROCE_HDR_ATMETH] = sizeof(struct droce_atomic_eth),
	[DROCE_HDR_IMMDT] = sizeof(struct droce_immdt),
	[DROCE_HDR_IETH] = sizeof(struct droce_ieth),
	[DROCE_HDR_AETH] = sizeof(struct droce_aeth),
	[DROCE_HDR_ATMACK] = sizeof(struct droce_atomic_ack_eth),
};

static const uint32_t hdr_flag[DROCE_HDR_NUM] = {
	[DROCE_HDR_DETH] = DROCE_OPF_DETH,
	[DROCE_HDR_XRCETH] = DROCE_OPF_XRCETH,
	[DROCE_HDR_RETH] = DROCE_OPF_RETH,
	[DROCE_HDR_ATMETH] = DROCE_OPF_ATMETH,
	[DROCE_HDR_IMMDT] = DROCE_OPF_IMMDT,
	[DROCE_HDR_IETH] = DROCE_OPF_IETH,
	[DROCE_HDR_AETH] = DROCE_OPF_AETH,
	[DROCE_HDR_ATMACK] = DROCE_OPF_ATMACK,
};

START_TEST(test_known_lengths)
{
	for (size_t i = 0; i < RTE_DIM(known_len); i++) {
		const struct droce_opcode_info *op = &droce_opcode_table[known_len[i].opcode];

		ck_assert_ptr_nonnull(op->name);
		ck_assert_str_eq(op->name, known_len[i].name);
		ck_assert_uint_eq(op->hdr_len, known_len[i].hdr_len);
	}
}
END_TEST

/* Exactly the opcodes of RC, UC, UD, XRC and the CNP are defined. */
START_TEST(test_defined_set)
{
	unsigned n = 0;

	for (unsigned c = 0; c < 256; c++) {
		unsigned svc = c & DROCE_SVC_MASK, op = c & DROCE_OP_MASK;
		bool rc_op = op <= DROCE_OP_FETCH_ADD || op == DROCE_OP_SEND_LAST_INV ||
			     op == DROCE_OP_SEND_ONLY_INV;
		bool want = ((svc == DROCE_SVC_RC || svc == DROCE_SVC_XRC) && rc_op) ||
			    (svc == DROCE_SVC_UC && op <= DROCE_OP_WRITE_ONLY_IMM) ||
			    (svc == DROCE_SVC_UD && (op == DROCE_OP_SEND_ONLY ||
						     op == DROCE_OP_SEND_ONLY_IMM)) ||
			    c == DROCE_OPCODE_CNP;

		ck_assert_msg(droce_opcode_valid((uint8_t)c) == want, "opcode 0x%02x", c);
		n += want;
	}
	ck_assert_uint_eq(n, 23 + 12 + 2 + 23 + 1);
}
END_TEST

/*
 * Every row: the present headers follow each other in the IBTA order with
 * no gap (a CNP's 16 reserved bytes are the only exception), the absent
 * ones have offset 0, and the payload starts at hdr_len.
 */
START_TEST(test_layout)
{
	for (unsigned c = 0; c < 256; c++) {
		const struct droce_opcode_info *op = &droce_opcode_table[c];
		unsigned end = sizeof(struct droce_bth);

		if (op->name == NULL)
			continue;
		if (op->flags & DROCE_OPF_CNP)
			end += 16;
		ck_assert_uint_eq(op->off[DROCE_HDR_BTH], 0);
		for (unsigned h = DROCE_HDR_DETH; h < DROCE_HDR_PAYLOAD; h++) {
			if (op->flags & hdr_flag[h]) {
				ck_assert_msg(op->off[h] == end, "%s header %u", op->name, h);
				end += hdr_size[h];
			} else {
				ck_assert_uint_eq(op->off[h], 0);
			}
		}
		ck_assert_uint_eq(op->off[DROCE_HDR_PAYLOAD], end);
		ck_assert_uint_eq(op->hdr_len, end);
	}
}
END_TEST

/* The service bits, the name and the flags of each row agree. */
START_TEST(test_flags)
{
	static const char *const svc_prefix[8] = {
		"RC_", "UC_", NULL, "UD_", "CNP", "XRC_", NULL, NULL
	};

	for (unsigned c = 0; c < 256; c++) {
		const struct droce_opcode_info *op = &droce_opcode_table[c];
		const char *prefix = svc_prefix[c >> 5];
		uint32_t f = op->flags;
		bool req = f & DROCE_OPF_REQ;

		if (op->name == NULL)
			continue;
		ck_assert_ptr_nonnull(prefix);
		ck_assert_msg(strncmp(op->name, prefix, strlen(prefix)) == 0, "%s", op->name);
		/* A request, a response or a CNP: exactly one. */
		ck_assert_uint_eq(!!req + !!(f & DROCE_OPF_RESP) + !!(f & DROCE_OPF_CNP), 1);
		/* Payload on SEND, WRITE and READ responses only. */
		ck_assert_uint_eq(!!(f & DROCE_OPF_PAYLOAD),
				  !!(f & (DROCE_OPF_SEND | DROCE_OPF_WRITE)) ||
				  ((f & DROCE_OPF_READ) && (f & DROCE_OPF_RESP)));
		ck_assert_uint_eq(!!(f & DROCE_OPF_XRCETH),
				  (c & DROCE_SVC_MASK) == DROCE_SVC_XRC && req);
		ck_assert_uint_eq(!!(f & DROCE_OPF_DETH),
				  (c & DROCE_SVC_MASK) == DROCE_SVC_UD);
	}
	/* AETH on READ_RESP FIRST, LAST and ONLY, not MIDDLE. */
	ck_assert(droce_opcode_table[DROCE_OP_READ_RESP_FIRST].flags & DROCE_OPF_AETH);
	ck_assert(!(droce_opcode_table[DROCE_OP_READ_RESP_MIDDLE].flags & DROCE_OPF_AETH));
	ck_assert(droce_opcode_table[DROCE_OP_READ_RESP_LAST].flags & DROCE_OPF_AETH);
	ck_assert(droce_opcode_table[DROCE_OP_READ_RESP_ONLY].flags & DROCE_OPF_AETH);
	ck_assert_uint_eq(droce_opcode_table[DROCE_OP_SEND_MIDDLE].flags &
			  (DROCE_OPF_FIRST | DROCE_OPF_LAST), 0);
	ck_assert_uint_eq(droce_opcode_table[DROCE_OP_WRITE_ONLY].flags & DROCE_OPF_ONLY,
			  DROCE_OPF_ONLY);
}
END_TEST

START_TEST(test_psn)
{
	ck_assert_int_eq(droce_psn_diff(5, 3), 2);
	ck_assert_int_eq(droce_psn_diff(3, 5), -2);
	/* Across the 24-bit wrap, both ways. */
	ck_assert_int_eq(droce_psn_diff(0, 0xffffff), 1);
	ck_assert_int_eq(droce_psn_diff(0xffffff, 0), -1);
	ck_assert_int_eq(droce_psn_diff(2, 0xfffffe), 4);
	ck_assert_int_eq(droce_psn_diff(0xfffffe, 2), -4);
	/* The farthest distances either way: 2^23 - 1 ahead, 2^23 behind. */
	ck_assert_int_eq(droce_psn_diff(0x7fffff, 0), 0x7fffff);
	ck_assert_int_eq(droce_psn_diff(0x800000, 0), -0x800000);
	ck_assert_int_eq(droce_psn_diff(0x123456 + 0x7fffff, 0x123456), 0x7fffff);
	ck_assert_uint_eq(droce_psn_add(0xffffff, 1), 0);
	ck_assert_uint_eq(droce_psn_add(0xfffff8, 8), 0);
	ck_assert_uint_eq(droce_psn_add(0xfffffe, 5), 3);
	ck_assert_uint_eq(droce_psn_add(0x17ed3e, 8), 0x17ed46);
	for (uint32_t psn = 0xfffff0; psn != 0x10; psn = droce_psn_add(psn, 1)) {
		ck_assert_int_eq(droce_psn_diff(droce_psn_add(psn, 7), psn), 7);
		ck_assert_int_eq(droce_psn_diff(psn, droce_psn_add(psn, 7)), -7);
	}
}
END_TEST

/*
 * The UDP source ports rxe chose in tests/vectors (its README lists each
 * run's QPN, the same on both hosts, and port): Linux's flow label and
 * folding give them all, so droce's flows hash as Linux hosts' do.
 */
START_TEST(test_udp_sport_as_linux)
{
	static const struct { uint32_t qpn; uint16_t sport; } runs[] = {
		{ 0x11, 49441 }, { 0x12, 49476 }, { 0x13, 49513 }, { 0x14, 49552 },
		{ 0x15, 49593 }, { 0x16, 49636 }, { 0x17, 49681 },
	};

	for (unsigned i = 0; i < RTE_DIM(runs); i++)
		ck_assert_uint_eq(droce_udp_sport(0, runs[i].qpn, runs[i].qpn), runs[i].sport);
	/* A flow label given in the AH wins; both ends agree without one. */
	ck_assert_uint_eq(droce_udp_sport(0x12345, 1, 2), 0xc000 | (0x2345 ^ (0x10000 >> 14)));
	ck_assert_uint_eq(droce_udp_sport(0, 0xabcdef, 0x123456),
			  droce_udp_sport(0, 0x123456, 0xabcdef));
	for (uint32_t q = 1; q < 5000; q += 7)
		ck_assert_uint_ge(droce_udp_sport(0, q, q * 3), 0xc000);
}
END_TEST

START_TEST(test_bth_fields)
{
	struct droce_bth b;
	struct droce_aeth a;

	droce_bth_set(&b, DROCE_OP_SEND_ONLY, true, 3, 0xffff, 0x123456, true, 0xfedcba);
	ck_assert_uint_eq(b.opcode, DROCE_OP_SEND_ONLY);
	ck_assert(droce_bth_se(&b));
	ck_assert_uint_eq(droce_bth_pad(&b), 3);
	ck_assert_uint_eq(b.flags & 0x0f, 0);
	ck_assert_uint_eq(droce_bth_qpn(&b), 0x123456);
	ck_assert(droce_bth_ackreq(&b));
	ck_assert_uint_eq(droce_bth_psn(&b), 0xfedcba);
	droce_aeth_set(&a, DROCE_AETH_NAK | DROCE_NAK_REM_ACCESS_ERR, 0x1000003);
	ck_assert_uint_eq(droce_aeth_syndrome(&a), 0x62);
	ck_assert_uint_eq(droce_aeth_msn(&a), 3);
}
END_TEST

Suite *
suite_table(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("opcodes");

	tcase_add_test(tc, test_known_lengths);
	tcase_add_test(tc, test_defined_set);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_flags);
	suite_add_tcase(s, tc);
	tc = tcase_create("psn");
	tcase_add_test(tc, test_psn);
	tcase_add_test(tc, test_bth_fields);
	tcase_add_test(tc, test_udp_sport_as_linux);
	suite_add_tcase(s, tc);
	return s;
}
