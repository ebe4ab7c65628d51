/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce-testpmd: an interactive console (rte_cmdline) over droce's verbs,
 * in the manner of dpdk-testpmd: create verbs objects by hand, connect
 * QPs, post work requests, poll completions, look at ports and QPs.
 *
 * The files, one concern each:
 *   testpmd.c      EAL, ports (droce_dev_attach), contexts, engines, exit
 *   parameters.c   the application's options (after --)
 *   console.c      the cmdline context, interactive and script modes,
 *                  dispatch, help, quit, expect
 *   args.c         argument parsing: numbers, sizes, options, names
 *   registry.c     the object registry: ids for PDs, MRs, CQs, ...
 *   cmd_port.c     show port, capture, faults
 *   cmd_objects.c  create, destroy, open, close
 *   cmd_qp.c       modify, query, connect, show qp
 *   cmd_traffic.c  post, poll, show cq, verify, fill, dump
 *   connect.c      INIT/RTR/RTS for each QP type
 *   traffic.c      work requests, patterns, buffer checks
 *   show.c         printing: ports, GIDs, QP attributes, completions
 *   telemetry.c    per-QP counters from droce's telemetry commands
 */
#ifndef DROCE_TESTPMD_H
#define DROCE_TESTPMD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "droce.h"

#define TP_NAME "droce-testpmd"
#define TP_PROMPT "droce> "

/** Most ports the console attaches (one droce device each). */
#define TP_MAX_PORTS 8
/** The Q_Key UD QPs get when the console connects them. */
#define TP_QKEY 0x11111111u

/* ---- ports (testpmd.c) ---- */

struct tp_port {
	unsigned dev;                /**< droce device index (droce<dev>) */
	uint16_t ethdev;
	uint8_t prefix;              /**< IPv4 prefix length */
	struct droce_port *port;
	struct ibv_context *ctx;
	int sgid_index;              /**< GID the console connects with: IPv4 when there is one */
};

extern struct tp_port tp_ports[TP_MAX_PORTS];
extern unsigned tp_nb_ports;

/* ---- options (parameters.c) ---- */

struct tp_params {
	const char *cmdline_file;    /**< script to run instead of the prompt */
	unsigned nb_ip, nb_mac;
	uint32_t ip[TP_MAX_PORTS];   /**< host order */
	uint8_t prefix[TP_MAX_PORTS];
	uint8_t mac[TP_MAX_PORTS][6];
	uint16_t mtu;                /**< IB MTU of every port */
};

/** Parse the options after the EAL's. @return 0, 1 for --help, -1 on error. */
int tp_params_parse(int argc, char **argv, struct tp_params *p);

/* ---- the console (console.c) ---- */

/** A command's words and arguments, as the dispatcher hands them over. */
#define TP_MAX_WORDS 4
#define TP_MAX_ARGS 32

struct tp_cmd;

struct tp_args {
	const struct tp_cmd *cmd;
	struct cmdline *cl;
	const char *word[TP_MAX_WORDS]; /**< the command words as typed */
	unsigned argc;
	char *argv[TP_MAX_ARGS];     /**< what follows them, split at blanks */
};

/** One command: words (a word may list choices: "pd#mr#cq") and handler. */
struct tp_cmd {
	const char *words;
	const char *usage;           /**< the arguments, for help and errors */
	const char *help;
	/** @return 0, or a negative errno after printing what went wrong. */
	int (*fn)(struct tp_args *a);
};

/** A family of commands, as `help` lists them. */
struct tp_family {
	const char *name;
	const char *summary;
	const struct tp_cmd *cmds;   /**< ends with an entry whose words is NULL */
};

extern const struct tp_family tp_family_port, tp_family_objects, tp_family_qp,
	tp_family_traffic;

/** Run the script @p path. @return 0 when every command worked. */
int tp_console_script(const char *path);
/** Run the interactive prompt until quit or end of input. */
int tp_console_interactive(void);
/** Set by SIGINT/SIGTERM: waiting commands give up, the console ends. */
extern volatile bool tp_stop;

/**
 * Print "error: <context>: <strerror> (<ERRNO>)". @return @p rc (a
 * negative errno), for `return tp_error(-EINVAL, "...")`.
 */
int tp_error(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Print the command's usage as an error. @return -EINVAL. */
int tp_usage(const struct tp_args *a);

/** A verbs call's result (an errno, positive as rdma-core's) as a negative errno. */
static inline int
tp_verbs_rc(int rc)
{
	return rc > 0 ? -rc : rc;
}

/** errno after a verbs call that returned NULL, as a negative errno. */
static inline int
tp_errno(void)
{
	return errno != 0 ? -errno : -EIO;
}

/* ---- arguments (args.c) ---- */

/** Parse an unsigned number (decimal or 0x hex) up to @p max. @return 0 or -EINVAL. */
int tp_parse_u64(const char *s, uint64_t max, uint64_t *v);
/** The same, printing "<what>: '<s>' is not ..." on failure. */
int tp_arg_u64(const char *s, const char *what, uint64_t max, uint64_t *v);
int tp_arg_u32(const char *s, const char *what, uint32_t max, uint32_t *v);
/** A size: a number with an optional K, M or G suffix. */
int tp_arg_size(const char *s, const char *what, uint64_t max, uint64_t *v);
/** A port index of the console. */
int tp_arg_port(const char *s, unsigned *port);

/** Options after the positional arguments: "name value" or "name" (flag). */
struct tp_opt {
	const char *name;
	bool has_value;
};
/**
 * Match argv[@p from..] against @p opts: @p val[i] gets the value of
 * opts[i] ("" for a flag), or stays NULL when absent. Unknown, repeated
 * or value-less options fail with a message. @return 0 or -EINVAL.
 */
int tp_opts_parse(const struct tp_args *a, unsigned from, const struct tp_opt *opts,
		  unsigned n, const char **val);

/** "lw,rw,rr,ra" (or "none") to IBV_ACCESS_* flags. */
int tp_parse_access(const char *s, int *flags);
/** "reset", "init", "rtr", "rts", "sqd", "sqe", "err". */
int tp_parse_state(const char *s, enum ibv_qp_state *st);
/** 256 .. 4096 to IBV_MTU_*. */
int tp_parse_mtu(const char *s, enum ibv_mtu *mtu);
/** "rc", "uc", "ud", "xrc_send", "xrc_recv". */
int tp_parse_qp_type(const char *s, enum ibv_qp_type *t);
/** An IPv6 GID ("fe80::1", "::ffff:10.0.0.1") or an IPv4 address (its mapped GID). */
int tp_parse_gid(const char *s, union ibv_gid *gid);
/** The errno called @p name ("EINVAL"), or 0. */
int tp_errno_by_name(const char *name);

/* ---- objects (registry.c) ---- */

enum tp_kind { TP_PD, TP_MR, TP_CQ, TP_SRQ, TP_XRCD, TP_QP, TP_AH, TP_KIND_MAX };

/** Where a UD QP sends when a work request names no address. */
struct tp_ud_dest {
	bool set;
	unsigned ah;                 /**< AH object id */
	uint32_t qpn, qkey;
};

struct tp_obj {
	enum tp_kind kind;
	unsigned id;
	unsigned port;
	union {
		struct {
			struct ibv_pd *pd;
		} pd;
		struct {
			struct ibv_mr *mr;
			uint8_t *buf;
			size_t size;
			unsigned pd;
		} mr;
		struct {
			struct ibv_cq *cq;
			struct ibv_wc *backlog; /**< polled by `show cq`, not printed yet */
			unsigned nb_backlog;
		} cq;
		struct {
			struct ibv_srq *srq;
			bool xrc;
			uint32_t srqn;
		} srq;
		struct {
			struct ibv_xrcd *xrcd;
		} xrcd;
		struct {
			struct ibv_qp *qp;
			enum ibv_qp_type type;
			bool opened;         /**< a handle from ibv_open_qp */
			uint32_t psn;        /**< its send PSN, for connect */
			struct tp_ud_dest dest;
		} qp;
		struct {
			struct ibv_ah *ah;
			union ibv_gid dgid;
		} ah;
	};
};

/** "pd", "mr", ... */
const char *tp_kind_name(enum tp_kind k);
/** A new object of kind @p k with the lowest free id, or NULL (prints why). */
struct tp_obj *tp_obj_new(enum tp_kind k, unsigned port);
/** Forget @p o (its verbs object is already gone). */
void tp_obj_free(struct tp_obj *o);
/** The object with id @p id, or NULL. */
struct tp_obj *tp_obj_get(unsigned id);
/** Objects by id; iterate with tp_obj_next(NULL), tp_obj_next(o)... */
struct tp_obj *tp_obj_next(const struct tp_obj *o);
/**
 * The object argument @p s names, which must be of kind @p k (TP_KIND_MAX:
 * any). @return 0 and *@p o set, or a negative errno after printing why.
 */
int tp_arg_obj(const char *s, enum tp_kind k, struct tp_obj **o);
/** Destroy one object's verbs resource and forget it. @return 0 or a negative errno. */
int tp_obj_destroy(struct tp_obj *o);
/** Destroy everything, users before what they use (at exit). */
void tp_obj_destroy_all(void);

/* ---- connect (connect.c) ---- */

/** What one side of a connection needs to know about the other. */
struct tp_peer {
	uint32_t qpn;
	union ibv_gid gid;
	uint32_t psn;
	enum ibv_mtu mtu;
};

/** The peer description of local QP @p q. */
void tp_peer_of(const struct tp_obj *q, struct tp_peer *p);
/** Bring two local QPs to RTS, each aimed at the other. */
int tp_connect_local(struct tp_obj *a, struct tp_obj *b);
/** Bring @p q to RTS aimed at @p peer (UD: an AH to it becomes q's destination). */
int tp_connect(struct tp_obj *q, const struct tp_peer *peer);

/* ---- traffic (traffic.c) ---- */

enum tp_pattern_kind { TP_PAT_INC, TP_PAT_ZERO, TP_PAT_RAND, TP_PAT_BYTE };

struct tp_pattern {
	enum tp_pattern_kind kind;
	uint8_t byte;
};

/** "inc", "zero", "rand" or "0xNN". @return 0 or -EINVAL. */
int tp_parse_pattern(const char *s, struct tp_pattern *p);
/** Fill @p len bytes at @p buf. */
void tp_pattern_fill(uint8_t *buf, size_t len, const struct tp_pattern *p);

/** A batch of identical send-queue work requests, one after the other in memory. */
struct tp_send {
	struct tp_obj *qp, *mr;
	enum ibv_wr_opcode op;
	uint32_t len, count;
	bool remote_set;
	uint64_t raddr;              /**< of the first WR; the next ones follow */
	uint32_t rkey;
	bool imm_set;
	uint32_t imm;
	unsigned flags;              /**< IBV_SEND_* */
	uint64_t compare_add, swap;  /**< atomics */
	/* UD */
	struct ibv_ah *ah;
	uint32_t dqpn, qkey;
	/* XRC_SEND */
	uint32_t srqn;
};

/**
 * Post @p s->count work requests in one chain. @p first gets the first
 * wr_id (the others follow); @p posted how many the QP took.
 * @return 0 or a negative errno (some may have been posted).
 */
int tp_post_send(const struct tp_send *s, uint64_t *first, unsigned *posted);
/** Post @p count receives of @p len bytes each, one after the other in @p mr. */
int tp_post_recv(struct tp_obj *target, struct tp_obj *mr, uint32_t len, uint32_t count,
		 uint64_t *first, unsigned *posted);
/**
 * Poll up to @p max completions of @p cq (its backlog first) into @p wc,
 * waiting up to @p timeout_ms for @p want of them. @return how many, or a
 * negative errno from ibv_poll_cq.
 */
int tp_poll(struct tp_obj *cq, struct ibv_wc *wc, unsigned max, unsigned want,
	    unsigned timeout_ms);
/** Move whatever @p cq has into its backlog. @return the backlog's length or a negative errno. */
int tp_cq_pending(struct tp_obj *cq);

/* ---- output (show.c) ---- */

const char *tp_qp_type_name(enum ibv_qp_type t);
const char *tp_qp_state_name(enum ibv_qp_state s);
const char *tp_wc_opcode_name(enum ibv_wc_opcode op);
/** 1024 for IBV_MTU_1024; 0 for no MTU. */
unsigned tp_mtu_bytes(enum ibv_mtu mtu);
/** IBV_MTU_1024 for 1024; 0 for a size that is no IB MTU. */
enum ibv_mtu tp_mtu_from_bytes(unsigned bytes);
/** Format @p gid as an IPv6 address. */
void tp_gid_str(const union ibv_gid *gid, char *buf, size_t len);
/** "lw,rw,rr,ra" for IBV_ACCESS_* flags. */
void tp_access_str(int flags, char *buf, size_t len);

void tp_show_port_info(unsigned p);
void tp_show_port_stats(unsigned p);
void tp_show_fault(unsigned p);
void tp_show_wc(const struct tp_obj *cq, const struct ibv_wc *wc);
/** A QP's attributes (ibv_query_qp) and counters. @return 0 or a negative errno. */
int tp_show_qp(const struct tp_obj *q);
/** One line per QP. */
void tp_show_qps(void);
/** What the other side needs to connect to @p q (and the rkeys of the port's MRs). */
void tp_show_connect_info(const struct tp_obj *q);

/* ---- per-QP counters (telemetry.c) ---- */

/**
 * Print QP @p qpn's engine state and counters of device @p dev as droce's
 * /droce/qp telemetry command reports them, through this process's own
 * telemetry socket. @return 0, or a negative errno (-ENOENT when the EAL
 * runs without telemetry).
 */
int tp_telemetry_qp(unsigned dev, uint32_t qpn);

#endif /* DROCE_TESTPMD_H */
