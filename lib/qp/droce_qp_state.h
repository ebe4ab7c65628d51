/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Queue pair state machine rules of ibv_modify_qp(): which state
 * transitions exist and which IBV_QP_* attributes each transition of each
 * QP type requires or accepts.
 *
 * The rules are those of the InfiniBand Architecture specification
 * (Vol. 1, the Modify Queue Pair verb and the QP state diagram), as the
 * Linux kernel enforces them for every RDMA device in
 * ib_modify_qp_is_ok(), restricted to the QP types droce offers
 * (RC, UC, UD, XRC_SEND, XRC_RECV) on a RoCE (Ethernet) port.
 *
 * Like the kernel on RoCE, droce has no automatic path migration, so
 * IBV_QP_ALT_PATH is never accepted even where the IB table lists it.
 *
 * Nothing here keeps state: every function is a pure lookup, safe to call
 * from any thread, and never crashes on out-of-range states, types or masks.
 */
#ifndef DROCE_QP_STATE_H
#define DROCE_QP_STATE_H

#include <stdbool.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Check an ibv_modify_qp() request against the state machine.
 *
 * @param cur
 *   Current state of the QP (or the IBV_QP_CUR_STATE the caller asserted).
 * @param next
 *   Requested state. Ignored when @p mask lacks IBV_QP_STATE: a modify
 *   without a state change is checked as the transition @p cur -> @p cur,
 *   as the kernel does.
 * @param type
 *   QP type.
 * @param mask
 *   The IBV_QP_* attribute mask passed to ibv_modify_qp().
 * @return
 *   true if every required attribute of the transition is in @p mask and
 *   every other bit of @p mask (except IBV_QP_STATE) is an optional
 *   attribute of it; false otherwise, and for unknown states or QP types.
 */
bool droce_qp_modify_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			   enum ibv_qp_type type, int mask);

/**
 * Attributes a transition requires, IBV_QP_STATE not included.
 *
 * @return
 *   The IBV_QP_* mask; 0 if the transition does not exist or the state or
 *   type is unknown (and for valid transitions that need no attribute).
 */
int droce_qp_attr_required(enum ibv_qp_state cur, enum ibv_qp_state next,
			   enum ibv_qp_type type);

/**
 * Attributes a transition accepts without requiring them.
 *
 * @return
 *   The IBV_QP_* mask; 0 if the transition does not exist or the state or
 *   type is unknown.
 */
int droce_qp_attr_optional(enum ibv_qp_state cur, enum ibv_qp_state next,
			   enum ibv_qp_type type);

/**
 * Whether the state diagram has the transition @p cur -> @p next at all,
 * whatever the QP type and attributes.
 */
bool droce_qp_transition_valid(enum ibv_qp_state cur, enum ibv_qp_state next);

/**
 * Name of a QP state for messages: "RESET", "INIT", "RTR", "RTS", "SQD",
 * "SQE", "ERR"; "UNKNOWN" for anything else. Never NULL.
 */
const char *droce_qp_state_str(enum ibv_qp_state s);

/**
 * Name of one IBV_QP_* attribute bit for messages, e.g. "IBV_QP_AV".
 *
 * @param one_bit
 *   A single IBV_QP_* bit.
 * @return
 *   Its enum name; "UNKNOWN" if @p one_bit is not exactly one known bit.
 *   Never NULL.
 */
const char *droce_qp_attr_str(int one_bit);

#ifdef __cplusplus
}
#endif

#endif /* DROCE_QP_STATE_H */
