/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the QP state transition rules (lib/qp/droce_qp_state.c).
 *
 * Two kinds of checks:
 *  - an expectation table written here independently, straight from the
 *    IB spec's Modify QP table as the Linux kernel encodes it
 *    (qp_state_table in drivers/infiniband/core/verbs.c), that the
 *    implementation's required/optional masks must equal;
 *  - an exhaustive sweep of every (cur, next, type) and every one of the
 *    32 mask bits proving droce_qp_modify_is_ok() accepts exactly the
 *    masks its required/optional sets describe.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "droce_qp_state.h"

/* Short names for the attribute bits, to keep the expectation rows legible. */
#define CUR		IBV_QP_CUR_STATE
#define SQD_NOTIFY	IBV_QP_EN_SQD_ASYNC_NOTIFY
#define ACC		IBV_QP_ACCESS_FLAGS
#define PKEY		IBV_QP_PKEY_INDEX
#define PORT		IBV_QP_PORT
#define QKEY		IBV_QP_QKEY
#define AV		IBV_QP_AV
#define MTU		IBV_QP_PATH_MTU
#define TIMEOUT		IBV_QP_TIMEOUT
#define RETRY		IBV_QP_RETRY_CNT
#define RNR_RETRY	IBV_QP_RNR_RETRY
#define RQ_PSN		IBV_QP_RQ_PSN
#define RD_ATOMIC	IBV_QP_MAX_QP_RD_ATOMIC
#define ALT		IBV_QP_ALT_PATH
#define RNR_TIMER	IBV_QP_MIN_RNR_TIMER
#define SQ_PSN		IBV_QP_SQ_PSN
#define DEST_RD_ATOMIC	IBV_QP_MAX_DEST_RD_ATOMIC
#define MIG		IBV_QP_PATH_MIG_STATE
#define DEST_QPN	IBV_QP_DEST_QPN

#define N_STATES (IBV_QPS_ERR + 1)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Which transitions exist, for every QP type: row = from, column = to, in
 * the order RESET INIT RTR RTS SQD SQE ERR. Note RESET -> ERR is absent,
 * RESET -> RESET and ERR -> ERR are present, RTR -> RTR and SQE -> SQE not.
 */
static const char *const spec_grid[N_STATES] = {
	/*          RIRRSSE */
	[IBV_QPS_RESET] = "xx.....",
	[IBV_QPS_INIT]  = "xxx...x",
	[IBV_QPS_RTR]   = "x..x..x",
	[IBV_QPS_RTS]   = "x..xx.x",
	[IBV_QPS_SQD]   = "x..xx.x",
	[IBV_QPS_SQE]   = "x..x..x",
	[IBV_QPS_ERR]   = "x.....x",
};

struct spec_row {
	enum ibv_qp_state from;
	enum ibv_qp_state to;
	enum ibv_qp_type type;
	int req;
	int opt;	/* as the IB table lists it, ALT_PATH included */
};

/*
 * Required and optional attributes of every transition that has any, per
 * QP type (IB_QPT_XRC_INI = IBV_QPT_XRC_SEND, IB_QPT_XRC_TGT =
 * IBV_QPT_XRC_RECV). Transitions of spec_grid not listed take none.
 */
static const struct spec_row spec_rows[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_RC, PKEY | PORT | ACC, 0 },
	{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_UC, PKEY | PORT | ACC, 0 },
	{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_UD, PKEY | PORT | QKEY, 0 },
	{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_XRC_SEND, PKEY | PORT | ACC, 0 },
	{ IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_XRC_RECV, PKEY | PORT | ACC, 0 },

	{ IBV_QPS_INIT, IBV_QPS_INIT, IBV_QPT_RC, 0, PKEY | PORT | ACC },
	{ IBV_QPS_INIT, IBV_QPS_INIT, IBV_QPT_UC, 0, PKEY | PORT | ACC },
	{ IBV_QPS_INIT, IBV_QPS_INIT, IBV_QPT_UD, 0, PKEY | PORT | QKEY },
	{ IBV_QPS_INIT, IBV_QPS_INIT, IBV_QPT_XRC_SEND, 0, PKEY | PORT | ACC },
	{ IBV_QPS_INIT, IBV_QPS_INIT, IBV_QPT_XRC_RECV, 0, PKEY | PORT | ACC },

	{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_RC,
	  AV | MTU | DEST_QPN | RQ_PSN | DEST_RD_ATOMIC | RNR_TIMER,
	  ALT | ACC | PKEY },
	{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UC,
	  AV | MTU | DEST_QPN | RQ_PSN, ALT | ACC | PKEY },
	{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UD, 0, PKEY | QKEY },
	{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_XRC_SEND,
	  AV | MTU | DEST_QPN | RQ_PSN, ALT | ACC | PKEY },
	{ IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_XRC_RECV,
	  AV | MTU | DEST_QPN | RQ_PSN | DEST_RD_ATOMIC | RNR_TIMER,
	  ALT | ACC | PKEY },

	{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_RC,
	  TIMEOUT | RETRY | RNR_RETRY | SQ_PSN | RD_ATOMIC,
	  CUR | ALT | ACC | RNR_TIMER | MIG },
	{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_UC,
	  SQ_PSN, CUR | ALT | ACC | MIG },
	{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_UD, SQ_PSN, CUR | QKEY },
	{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_XRC_SEND,
	  TIMEOUT | RETRY | RNR_RETRY | SQ_PSN | RD_ATOMIC,
	  CUR | ALT | ACC | MIG },
	{ IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_XRC_RECV,
	  TIMEOUT | SQ_PSN, CUR | ALT | ACC | RNR_TIMER | MIG },

	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_RC,
	  0, CUR | ACC | ALT | MIG | RNR_TIMER },
	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_UC, 0, CUR | ACC | ALT | MIG },
	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_UD, 0, CUR | QKEY },
	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_XRC_SEND,
	  0, CUR | ACC | ALT | MIG },
	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_XRC_RECV,
	  0, CUR | ACC | ALT | MIG | RNR_TIMER },

	{ IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPT_RC, 0, SQD_NOTIFY },
	{ IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPT_UC, 0, SQD_NOTIFY },
	{ IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPT_UD, 0, SQD_NOTIFY },
	{ IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPT_XRC_SEND, 0, SQD_NOTIFY },
	{ IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPT_XRC_RECV, 0, SQD_NOTIFY },

	{ IBV_QPS_SQD, IBV_QPS_RTS, IBV_QPT_RC,
	  0, CUR | ALT | ACC | RNR_TIMER | MIG },
	{ IBV_QPS_SQD, IBV_QPS_RTS, IBV_QPT_UC, 0, CUR | ALT | ACC | MIG },
	{ IBV_QPS_SQD, IBV_QPS_RTS, IBV_QPT_UD, 0, CUR | QKEY },
	{ IBV_QPS_SQD, IBV_QPS_RTS, IBV_QPT_XRC_SEND,
	  0, CUR | ALT | ACC | MIG },
	{ IBV_QPS_SQD, IBV_QPS_RTS, IBV_QPT_XRC_RECV,
	  0, CUR | ALT | ACC | RNR_TIMER | MIG },

	{ IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_RC,
	  0, PORT | AV | TIMEOUT | RETRY | RNR_RETRY | RD_ATOMIC |
	     DEST_RD_ATOMIC | ALT | ACC | PKEY | RNR_TIMER | MIG },
	{ IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_UC,
	  0, AV | ALT | ACC | PKEY | MIG },
	{ IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_UD, 0, PKEY | QKEY },
	{ IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_XRC_SEND,
	  0, PORT | AV | TIMEOUT | RETRY | RNR_RETRY | RD_ATOMIC |
	     ALT | ACC | PKEY | MIG },
	{ IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_XRC_RECV,
	  0, PORT | AV | TIMEOUT | DEST_RD_ATOMIC | ALT | ACC | PKEY |
	     RNR_TIMER | MIG },

	{ IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_RC, 0, 0 },
	{ IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_UC, 0, CUR | ACC },
	{ IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_UD, 0, CUR | QKEY },
	{ IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_XRC_SEND, 0, 0 },
	{ IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_XRC_RECV, 0, 0 },
};

/*
 * Like the kernel on a RoCE port (_ib_modify_qp() refuses alternate paths
 * unless both ports are IB), droce accepts no IBV_QP_ALT_PATH.
 */
#define ROCE_REFUSED ALT

static const enum ibv_qp_type known_types[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
};

static const enum ibv_qp_type unknown_types[] = {
	(enum ibv_qp_type)0, (enum ibv_qp_type)1, (enum ibv_qp_type)5,
	IBV_QPT_RAW_PACKET, (enum ibv_qp_type)11, IBV_QPT_DRIVER,
	(enum ibv_qp_type)-1,
};

/* Every state value swept: the seven real ones, then out-of-range ones. */
static const enum ibv_qp_state swept_states[] = {
	IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	IBV_QPS_SQE, IBV_QPS_ERR, IBV_QPS_UNKNOWN, (enum ibv_qp_state)8,
	(enum ibv_qp_state)1000, (enum ibv_qp_state)-1,
};

static unsigned long n_checked;

static bool
state_known(enum ibv_qp_state s)
{
	return (unsigned int)s < N_STATES;
}

static bool
type_known(enum ibv_qp_type t)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(known_types); i++)
		if (known_types[i] == t)
			return true;
	return false;
}

static bool
spec_valid(enum ibv_qp_state from, enum ibv_qp_state to)
{
	return state_known(from) && state_known(to) &&
	       spec_grid[from][to] == 'x';
}

static const struct spec_row *
spec_find(enum ibv_qp_state from, enum ibv_qp_state to, enum ibv_qp_type t)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(spec_rows); i++)
		if (spec_rows[i].from == from && spec_rows[i].to == to &&
		    spec_rows[i].type == t)
			return &spec_rows[i];
	return NULL;
}

static int
bit(unsigned int b)
{
	return (int)(1u << b);
}

static void
expect_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
	  enum ibv_qp_type type, int mask, bool want)
{
	n_checked++;
	ck_assert_msg(droce_qp_modify_is_ok(cur, next, type, mask) == want,
		      "%s -> %s type %d mask 0x%x: expected %s",
		      droce_qp_state_str(cur), droce_qp_state_str(next),
		      (int)type, (unsigned int)mask,
		      want ? "accepted" : "rejected");
}

/* The transition matrix matches the spec grid and knows no extra state. */
START_TEST(test_transition_matrix)
{
	size_t i, j;
	unsigned int count = 0;

	for (i = 0; i < ARRAY_LEN(swept_states); i++)
		for (j = 0; j < ARRAY_LEN(swept_states); j++) {
			enum ibv_qp_state f = swept_states[i];
			enum ibv_qp_state t = swept_states[j];

			ck_assert_msg(droce_qp_transition_valid(f, t) ==
				      spec_valid(f, t), "%s -> %s",
				      droce_qp_state_str(f),
				      droce_qp_state_str(t));
			count += spec_valid(f, t);
		}
	/* 7 to RESET, 6 to ERR, and 9 attribute-bearing transitions. */
	ck_assert_uint_eq(count, 22);
	ck_assert(!droce_qp_transition_valid(IBV_QPS_RESET, IBV_QPS_ERR));
	ck_assert(droce_qp_transition_valid(IBV_QPS_ERR, IBV_QPS_ERR));
	ck_assert(droce_qp_transition_valid(IBV_QPS_RESET, IBV_QPS_RESET));
}
END_TEST

/* The expectation table itself only names transitions of the grid, once. */
START_TEST(test_spec_table_consistent)
{
	size_t i, j;

	for (i = 0; i < ARRAY_LEN(spec_rows); i++) {
		const struct spec_row *r = &spec_rows[i];

		ck_assert(spec_valid(r->from, r->to));
		ck_assert(type_known(r->type));
		ck_assert_int_eq(r->req & r->opt, 0);
		for (j = i + 1; j < ARRAY_LEN(spec_rows); j++)
			ck_assert(!(spec_rows[j].from == r->from &&
				    spec_rows[j].to == r->to &&
				    spec_rows[j].type == r->type));
	}
	ck_assert_uint_eq(ARRAY_LEN(spec_rows), 9 * ARRAY_LEN(known_types));
}
END_TEST

/* Required and optional sets equal the independent table, for all types. */
START_TEST(test_matches_spec_table)
{
	int f, t;
	size_t k;

	for (f = 0; f < N_STATES; f++)
		for (t = 0; t < N_STATES; t++)
			for (k = 0; k < ARRAY_LEN(known_types); k++) {
				enum ibv_qp_type ty = known_types[k];
				const struct spec_row *r = spec_find(f, t, ty);
				int req = 0, opt = 0;

				if (r != NULL) {
					req = r->req;
					opt = r->opt & ~ROCE_REFUSED;
				}
				ck_assert_msg(droce_qp_attr_required(f, t, ty) == req,
					      "%s -> %s type %d required 0x%x, want 0x%x",
					      droce_qp_state_str(f),
					      droce_qp_state_str(t), (int)ty,
					      droce_qp_attr_required(f, t, ty),
					      req);
				ck_assert_msg(droce_qp_attr_optional(f, t, ty) == opt,
					      "%s -> %s type %d optional 0x%x, want 0x%x",
					      droce_qp_state_str(f),
					      droce_qp_state_str(t), (int)ty,
					      droce_qp_attr_optional(f, t, ty),
					      opt);
			}
}
END_TEST

/* A deterministic mask generator for sampling invalid transitions. */
static uint32_t
lcg_next(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return *seed;
}

static void
sweep_valid(enum ibv_qp_state f, enum ibv_qp_state t, enum ibv_qp_type ty)
{
	int req = droce_qp_attr_required(f, t, ty);
	int opt = droce_qp_attr_optional(f, t, ty);
	int min = IBV_QP_STATE | req;
	unsigned int b;

	ck_assert_int_eq(req & opt, 0);
	ck_assert_int_eq((req | opt) & IBV_QP_STATE, 0);
	expect_ok(f, t, ty, min, true);
	expect_ok(f, t, ty, min | opt, true);
	for (b = 0; b < 32; b++) {
		if (bit(b) == IBV_QP_STATE)
			continue;
		if (req & bit(b))
			expect_ok(f, t, ty, min & ~bit(b), false);
		else if (opt & bit(b))
			expect_ok(f, t, ty, min | bit(b), true);
		else
			expect_ok(f, t, ty, min | bit(b), false);
	}
}

static void
sweep_invalid(enum ibv_qp_state f, enum ibv_qp_state t, enum ibv_qp_type ty)
{
	uint32_t seed = 0x9e3779b9u;
	unsigned int b, i;

	ck_assert_int_eq(droce_qp_attr_required(f, t, ty), 0);
	ck_assert_int_eq(droce_qp_attr_optional(f, t, ty), 0);
	expect_ok(f, t, ty, IBV_QP_STATE, false);
	expect_ok(f, t, ty, -1, false);
	for (b = 0; b < 32; b++)
		expect_ok(f, t, ty, IBV_QP_STATE | bit(b), false);
	/* Every mask any real transition of any type would take. */
	for (i = 0; i < ARRAY_LEN(spec_rows); i++)
		expect_ok(f, t, ty, IBV_QP_STATE | spec_rows[i].req |
			  spec_rows[i].opt, false);
	for (i = 0; i < 64; i++)
		expect_ok(f, t, ty, (int)(lcg_next(&seed) | IBV_QP_STATE),
			  false);
}

/*
 * Every (cur, next, type) and every mask bit: the minimal mask passes,
 * dropping a required bit fails, adding an optional bit passes, adding
 * any other bit fails; invalid combinations fail with every mask tried.
 */
START_TEST(test_exhaustive_masks)
{
	size_t i, j, k;
	unsigned long valid = 0;

	for (i = 0; i < ARRAY_LEN(swept_states); i++)
		for (j = 0; j < ARRAY_LEN(swept_states); j++) {
			enum ibv_qp_state f = swept_states[i];
			enum ibv_qp_state t = swept_states[j];

			for (k = 0; k < ARRAY_LEN(known_types); k++) {
				if (spec_valid(f, t)) {
					sweep_valid(f, t, known_types[k]);
					valid++;
				} else {
					sweep_invalid(f, t, known_types[k]);
				}
			}
			for (k = 0; k < ARRAY_LEN(unknown_types); k++)
				sweep_invalid(f, t, unknown_types[k]);
		}
	ck_assert_uint_eq(valid, 22 * ARRAY_LEN(known_types));
}
END_TEST

/*
 * Without IBV_QP_STATE the request is a modify in place: @next is ignored
 * and the rules of cur -> cur apply.
 */
START_TEST(test_modify_without_state)
{
	size_t i, j, k;
	unsigned int b;

	for (i = 0; i < ARRAY_LEN(swept_states); i++)
		for (j = 0; j < ARRAY_LEN(swept_states); j++)
			for (k = 0; k < ARRAY_LEN(known_types); k++) {
				enum ibv_qp_state f = swept_states[i];
				enum ibv_qp_state t = swept_states[j];
				enum ibv_qp_type ty = known_types[k];

				expect_ok(f, t, ty, 0, spec_valid(f, f));
				for (b = 1; b < 32; b++)
					expect_ok(f, t, ty, bit(b),
						  droce_qp_modify_is_ok(f, f, ty,
							bit(b) | IBV_QP_STATE));
			}
	/* Retuning access rights of a running RC QP. */
	expect_ok(IBV_QPS_RTS, IBV_QPS_RESET, IBV_QPT_RC, ACC, true);
	/* Changing the port of an INIT UD QP. */
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UD, PORT, true);
	/* RTR -> RTR does not exist: nothing can change in RTR. */
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_RC, 0, false);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_RC, SQ_PSN, false);
	/* Nor in SQE. */
	expect_ok(IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_UD, 0, false);
	/* Reset and error accept the empty modify only. */
	expect_ok(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_RC, 0, true);
	expect_ok(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_RC, PORT, false);
	expect_ok(IBV_QPS_ERR, IBV_QPS_RESET, IBV_QPT_UD, 0, true);
}
END_TEST

/* The masks real applications (perftest, rdma_cm) pass, and known traps. */
START_TEST(test_typical_sequences)
{
	const int rc_init = IBV_QP_STATE | PKEY | PORT | ACC;
	const int rc_rtr = IBV_QP_STATE | AV | MTU | DEST_QPN | RQ_PSN |
			   DEST_RD_ATOMIC | RNR_TIMER;
	const int rc_rts = IBV_QP_STATE | TIMEOUT | RETRY | RNR_RETRY |
			   SQ_PSN | RD_ATOMIC;
	size_t k;

	expect_ok(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_RC, rc_init, true);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_RC, rc_rtr, true);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_RC, rc_rts, true);
	/* RoCE needs the address vector (GRH) to reach RTR. */
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_RC, rc_rtr & ~AV, false);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UC,
		  IBV_QP_STATE | MTU | DEST_QPN | RQ_PSN, false);
	/* The IB table allows an alternate path here; RoCE does not. */
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_RC, rc_rtr | ALT, false);
	expect_ok(IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_RC,
		  IBV_QP_STATE | MIG, true);
	/* UC: no responder resources, no retries. */
	expect_ok(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_UC, rc_init, true);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UC,
		  IBV_QP_STATE | AV | MTU | DEST_QPN | RQ_PSN, true);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UC, rc_rtr, false);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_UC,
		  IBV_QP_STATE | SQ_PSN, true);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_UC, rc_rts, false);
	/* UD: Q_Key instead of access flags, no peer. */
	expect_ok(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_UD,
		  IBV_QP_STATE | PKEY | PORT | QKEY, true);
	expect_ok(IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPT_UD, rc_init, false);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_UD, IBV_QP_STATE, true);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_UD,
		  IBV_QP_STATE | SQ_PSN, true);
	/* XRC: the initiator has no responder side, the target no retries. */
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_XRC_SEND,
		  IBV_QP_STATE | AV | MTU | DEST_QPN | RQ_PSN, true);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_XRC_RECV, rc_rtr, true);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_XRC_SEND, rc_rts, true);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_XRC_RECV,
		  IBV_QP_STATE | TIMEOUT | SQ_PSN, true);
	expect_ok(IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPT_XRC_RECV, rc_rts, false);
	/* Skipping a state is not a transition. */
	expect_ok(IBV_QPS_RESET, IBV_QPS_RTR, IBV_QPT_RC, rc_rtr, false);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTS, IBV_QPT_UD,
		  IBV_QP_STATE | SQ_PSN, false);
	/* Drain and resume with the optional notification. */
	expect_ok(IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPT_RC,
		  IBV_QP_STATE | SQD_NOTIFY, true);
	expect_ok(IBV_QPS_SQD, IBV_QPS_RTS, IBV_QPT_RC, IBV_QP_STATE, true);
	expect_ok(IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_RC,
		  IBV_QP_STATE | PORT | AV | TIMEOUT, true);
	expect_ok(IBV_QPS_SQD, IBV_QPS_SQD, IBV_QPT_UD,
		  IBV_QP_STATE | PORT, false);
	/* IBV_QP_CUR_STATE only where leaving RTR, RTS, SQD or SQE. */
	expect_ok(IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_UD,
		  IBV_QP_STATE | CUR, true);
	expect_ok(IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_UD,
		  IBV_QP_STATE | CUR, true);
	expect_ok(IBV_QPS_INIT, IBV_QPS_INIT, IBV_QPT_RC,
		  IBV_QP_STATE | CUR, false);
	expect_ok(IBV_QPS_RTS, IBV_QPS_ERR, IBV_QPT_RC,
		  IBV_QP_STATE | CUR, false);
	/* Kernel quirk kept: a bare SQE -> RTS is accepted for RC. */
	expect_ok(IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_RC, IBV_QP_STATE, true);
	expect_ok(IBV_QPS_SQE, IBV_QPS_RTS, IBV_QPT_RC,
		  IBV_QP_STATE | CUR, false);
	/* Raw-packet and reserved bits are never accepted. */
	expect_ok(IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_UD,
		  IBV_QP_STATE | IBV_QP_RATE_LIMIT, false);
	expect_ok(IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPT_RC, rc_rtr | bit(21),
		  false);
	expect_ok(IBV_QPS_RTS, IBV_QPS_RTS, IBV_QPT_RC,
		  IBV_QP_STATE | IBV_QP_CAP, false);
	for (k = 0; k < ARRAY_LEN(known_types); k++) {
		enum ibv_qp_type ty = known_types[k];

		/* A QP that never left RESET cannot be moved to ERR... */
		expect_ok(IBV_QPS_RESET, IBV_QPS_ERR, ty, IBV_QP_STATE, false);
		/* ...every other state can, and can be reset, bare. */
		expect_ok(IBV_QPS_RTS, IBV_QPS_ERR, ty, IBV_QP_STATE, true);
		expect_ok(IBV_QPS_ERR, IBV_QPS_RESET, ty, IBV_QP_STATE, true);
		expect_ok(IBV_QPS_RTR, IBV_QPS_RESET, ty, IBV_QP_STATE | PORT,
			  false);
	}
}
END_TEST

START_TEST(test_names)
{
	static const char *const states[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	static const struct {
		int bit;
		const char *name;
	} attrs[] = {
		{ IBV_QP_STATE, "IBV_QP_STATE" },
		{ IBV_QP_CUR_STATE, "IBV_QP_CUR_STATE" },
		{ IBV_QP_EN_SQD_ASYNC_NOTIFY, "IBV_QP_EN_SQD_ASYNC_NOTIFY" },
		{ IBV_QP_ACCESS_FLAGS, "IBV_QP_ACCESS_FLAGS" },
		{ IBV_QP_PKEY_INDEX, "IBV_QP_PKEY_INDEX" },
		{ IBV_QP_PORT, "IBV_QP_PORT" },
		{ IBV_QP_QKEY, "IBV_QP_QKEY" },
		{ IBV_QP_AV, "IBV_QP_AV" },
		{ IBV_QP_PATH_MTU, "IBV_QP_PATH_MTU" },
		{ IBV_QP_TIMEOUT, "IBV_QP_TIMEOUT" },
		{ IBV_QP_RETRY_CNT, "IBV_QP_RETRY_CNT" },
		{ IBV_QP_RNR_RETRY, "IBV_QP_RNR_RETRY" },
		{ IBV_QP_RQ_PSN, "IBV_QP_RQ_PSN" },
		{ IBV_QP_MAX_QP_RD_ATOMIC, "IBV_QP_MAX_QP_RD_ATOMIC" },
		{ IBV_QP_ALT_PATH, "IBV_QP_ALT_PATH" },
		{ IBV_QP_MIN_RNR_TIMER, "IBV_QP_MIN_RNR_TIMER" },
		{ IBV_QP_SQ_PSN, "IBV_QP_SQ_PSN" },
		{ IBV_QP_MAX_DEST_RD_ATOMIC, "IBV_QP_MAX_DEST_RD_ATOMIC" },
		{ IBV_QP_PATH_MIG_STATE, "IBV_QP_PATH_MIG_STATE" },
		{ IBV_QP_CAP, "IBV_QP_CAP" },
		{ IBV_QP_DEST_QPN, "IBV_QP_DEST_QPN" },
		{ IBV_QP_RATE_LIMIT, "IBV_QP_RATE_LIMIT" },
	};
	size_t i;
	unsigned int b;

	for (i = 0; i < ARRAY_LEN(states); i++)
		ck_assert_str_eq(droce_qp_state_str((enum ibv_qp_state)i),
				 states[i]);
	ck_assert_str_eq(droce_qp_state_str(IBV_QPS_UNKNOWN), "UNKNOWN");
	ck_assert_str_eq(droce_qp_state_str((enum ibv_qp_state)-1), "UNKNOWN");
	for (i = 0; i < ARRAY_LEN(attrs); i++)
		ck_assert_str_eq(droce_qp_attr_str(attrs[i].bit), attrs[i].name);
	/* Reserved bits 21..24 and everything above RATE_LIMIT. */
	for (b = 21; b < 32; b++)
		if (bit(b) != IBV_QP_RATE_LIMIT)
			ck_assert_str_eq(droce_qp_attr_str(bit(b)), "UNKNOWN");
	ck_assert_str_eq(droce_qp_attr_str(0), "UNKNOWN");
	ck_assert_str_eq(droce_qp_attr_str(AV | MTU), "UNKNOWN");
	ck_assert_str_eq(droce_qp_attr_str(-1), "UNKNOWN");
}
END_TEST

static Suite *
qp_state_suite(void)
{
	Suite *s = suite_create("qp_state");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, test_transition_matrix);
	tcase_add_test(tc, test_spec_table_consistent);
	tcase_add_test(tc, test_matches_spec_table);
	tcase_add_test(tc, test_exhaustive_masks);
	tcase_add_test(tc, test_modify_without_state);
	tcase_add_test(tc, test_typical_sequences);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(qp_state_suite());
	int failed;

	/* Pure functions, no EAL: one process keeps the check counter. */
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("qp_state: %lu (cur, next, type, mask) combinations checked\n",
	       n_checked);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
