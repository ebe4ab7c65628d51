/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rc_verify: an end-to-end check of an RC verbs provider, written as
 * ordinary verbs code (only ibv_* calls, like rdma-core's ibv_rc_pingpong).
 *
 * Two processes, a server (-s) and a client (-c), exchange their QP
 * number, PSN, GID and a memory region over TCP, connect an RC QP and
 * then each runs a requester and a responder at once (-u: only the
 * client requests). A requester posts a schedule of operations that both
 * sides compute from the seed (-S): SEND, SEND with immediate, RDMA WRITE
 * followed by a small "check" SEND, RDMA WRITE with immediate and RDMA
 * READ; sizes from 0 bytes to -M (1 MiB), gather/scatter lists of 1-4
 * entries over two memory regions, inline sends where the QP allows.
 * Because the responder knows the schedule too, it checks every byte it
 * received or that was written into its memory, and every completion's
 * wr_id, status, opcode, byte_len, flags and immediate data; the
 * requester checks what it read against the responder's known memory.
 * Any difference is printed and the process exits 1; so does a timeout.
 *
 * Memory (every slot is -M bytes):
 *  - MR A and MR B: 2 x depth slots each. Requester WR k uses slot
 *    k % depth, receive j uses slot depth + j % depth; a buffer is cut
 *    into pieces that each lie at their own offset in A or in B.
 *  - the remote MR: 2 x depth + 1 write slots, then a read region of 2
 *    slots filled with a known pattern. Write number w goes to slot
 *    w % (2 x depth + 1): a requester has at most depth WRs in flight and
 *    a responder at most depth receives posted, so a slot is not written
 *    again before the responder has checked what was written there.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_SGE 4
#define CQ_BATCH 32
#define CHECK_LEN 8
/* Requester completions carry this bit in wr_id; receives do not. */
#define WRID_SEND (UINT64_C(1) << 63)

/* ---- options ---- */

static struct {
	bool server;
	const char *addr;
	int tcp_port;
	const char *dev;
	int ib_port;
	int gid_index;
	int mtu;               /* 0: the port's active MTU */
	uint64_t n;
	uint64_t seed;
	unsigned depth;
	uint32_t max_msg;
	unsigned timeout;
	unsigned ack_timeout;  /* the QP's ACK timeout exponent */
	bool uni;
	bool keep_going;       /* the peer's exit is not a failure by itself */
	bool events;
	bool verbose;
} opt = {
	.addr = "127.0.0.1",
	.tcp_port = 18515,
	.ib_port = 1,
	.gid_index = 1,
	.n = 10000,
	.seed = 1,
	.depth = 64,
	.max_msg = 1u << 20,
	.timeout = 120,
	.ack_timeout = 14,
};

static const char *role_name = "?";
static int peer_fd = -1;

static void
say(const char *fmt, ...)
{
	va_list ap;

	printf("[%s] ", role_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Report a failure, tell the peer (so it stops at once rather than at its
 * timeout) and exit 1. */
static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	static const char f = 'F';
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "[%s] FAIL: ", role_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (peer_fd >= 0 && send(peer_fd, &f, 1, MSG_NOSIGNAL) != 1)
		fprintf(stderr, "[%s] could not tell the peer\n", role_name);
	exit(1);
}

static void
on_alarm(int sig)
{
	static const char msg[] = "FAIL: timeout\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- deterministic pseudo-random numbers (splitmix64) ---- */

struct rng {
	uint64_t s;
};

static uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t
rng_next(struct rng *r)
{
	r->s += UINT64_C(0x9e3779b97f4a7c15);
	return mix64(r->s);
}

/* A number in [0, n); 0 when n is 0. */
static uint64_t
rng_below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

/* What each stream of numbers is for. */
enum tag { TAG_ROLE = 1, TAG_OP, TAG_DATA, TAG_RECV, TAG_READ_REGION, TAG_PSN };

static uint64_t
key_of(uint64_t a, enum tag t, uint64_t b)
{
	return mix64(a ^ mix64((uint64_t)t ^ mix64(b)));
}

static struct rng
rng_of(uint64_t a, enum tag t, uint64_t b)
{
	return (struct rng){ key_of(a, t, b) };
}

/* The bytes of a message or region: the stream of @p key. */
static void
pattern(uint64_t key, uint8_t *dst, size_t len)
{
	struct rng r = { key };
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		v = rng_next(&r);
		memcpy(dst + i, &v, 8);
	}
	if (i < len) {
		v = rng_next(&r);
		memcpy(dst + i, &v, len - i);
	}
}

/* ---- the schedule ---- */

enum op_kind {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_FETCH_ADD, OP_CMP_SWAP, OP_KINDS
};

static const char *const op_names[OP_KINDS] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "FETCH_ADD", "CMP_SWAP",
};

/* Share of each kind in the random part, in percent. */
static const unsigned op_weights[OP_KINDS] = { 27, 9, 18, 13, 23, 5, 5 };

static bool
op_is_atomic(enum op_kind k)
{
	return k == OP_FETCH_ADD || k == OP_CMP_SWAP;
}

struct op {
	uint64_t index;
	enum op_kind kind;
	uint32_t len;
	uint64_t data_key;     /* payload of SEND/WRITE */
	uint32_t imm;          /* as posted (network order) */
	uint64_t roff;         /* offset in the responder's remote MR */
	bool inline_wanted;    /* send inline if the QP can */
	struct rng sge_rng;    /* how the requester cuts its buffer */
	uint64_t atomic_seq;   /* atomics before this one: the counter's value */
};

/* Where things are in the remote MR (the same on both sides). */
struct layout {
	uint64_t slot;         /* -M */
	uint64_t write_slots;
	uint64_t read_off, read_len;
	uint64_t atomic_off;   /* the 8-byte counter the peer's atomics count in */
	uint64_t size;
};

struct sched {
	uint64_t role_seed;    /* of the requester whose schedule this is */
	uint64_t next;         /* index of the next operation */
	uint64_t writes;       /* WRITE and WRITE_IMM so far: picks the slot */
	uint64_t atomics;      /* FETCH_ADD and CMP_SWAP so far */
	const struct layout *lay;
	uint32_t mtu;
	uint32_t sizes[64];    /* the sizes every kind goes through first */
	unsigned nb_sizes;
};

static void
sched_init(struct sched *s, uint64_t role_seed, const struct layout *lay, uint32_t mtu)
{
	static const uint32_t small[] = { 0, 1, 2, 3, 4, 7, 8, 63, 64, 65 };
	const uint32_t edges[] = { mtu - 1, mtu, mtu + 1, 2 * mtu - 1, 2 * mtu, 2 * mtu + 1 };
	unsigned i;

	memset(s, 0, sizeof(*s));
	s->role_seed = role_seed;
	s->lay = lay;
	s->mtu = mtu;
	for (i = 0; i < sizeof(small) / sizeof(small[0]); i++)
		s->sizes[s->nb_sizes++] = small[i];
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		s->sizes[s->nb_sizes++] = edges[i];
	for (i = 7; i <= 20; i++)
		s->sizes[s->nb_sizes++] = 1u << i;
	for (i = 0; i < s->nb_sizes; i++)
		if (s->sizes[i] > lay->slot)
			s->sizes[i] = (uint32_t)lay->slot;
}

/* Mostly around the MTU, some up to 64 KiB, a few up to -M. */
static uint32_t
random_size(struct rng *r, uint32_t mtu, uint64_t max)
{
	uint64_t p = rng_below(r, 100), len;

	if (p < 60) {
		len = rng_below(r, 2 * (uint64_t)mtu + 2);
	} else if (p < 90) {
		len = rng_below(r, 65537);
	} else {
		unsigned e = (unsigned)rng_below(r, 21);

		len = (UINT64_C(1) << e) + rng_below(r, UINT64_C(1) << e);
	}
	return (uint32_t)(len > max ? max : len);
}

/* The next operation of the schedule. Every draw happens whatever the
 * kind, so both sides stay in step. */
static void
sched_next(struct sched *s, struct op *op)
{
	struct rng r = rng_of(s->role_seed, TAG_OP, s->next);
	uint64_t fixed = (uint64_t)s->nb_sizes * OP_KINDS;
	uint64_t pick, rnd_len;
	unsigned k;

	memset(op, 0, sizeof(*op));
	op->index = s->next;
	pick = rng_below(&r, 100);
	rnd_len = random_size(&r, s->mtu, s->lay->slot);
	if (op->index < fixed) {
		op->kind = (enum op_kind)(op->index % OP_KINDS);
		op->len = s->sizes[op->index / OP_KINDS];
	} else {
		for (k = 0; pick >= op_weights[k]; k++)
			pick -= op_weights[k];
		op->kind = (enum op_kind)k;
		op->len = (uint32_t)rnd_len;
	}
	op->data_key = key_of(s->role_seed, TAG_DATA, op->index);
	op->imm = (uint32_t)rng_next(&r);
	op->inline_wanted = rng_next(&r) & 1;
	op->sge_rng.s = rng_next(&r);
	if (op->kind == OP_WRITE || op->kind == OP_WRITE_IMM) {
		op->roff = (s->writes % s->lay->write_slots) * s->lay->slot +
			   rng_below(&r, s->lay->slot - op->len + 1);
		s->writes++;
	} else if (op->kind == OP_READ) {
		op->roff = s->lay->read_off + rng_below(&r, s->lay->read_len - op->len + 1);
	} else if (op_is_atomic(op->kind)) {
		/* Each one adds 1 to the counter: the k-th must find k there,
		 * which fails if any atomic were applied twice or lost. */
		op->len = 8;
		op->roff = s->lay->atomic_off;
		op->atomic_seq = s->atomics++;
	}
	s->next++;
}

/* ---- buffers ---- */

struct ctx {
	struct ibv_context *ctx;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf_a, *buf_b, *remote;
	size_t buf_len;
	struct ibv_mr *mr_a, *mr_b, *mr_remote;
	struct layout lay;
	uint8_t *peer_read;    /* the peer's read region, as it must be */
	uint8_t *want, *got;   /* scratch, -M bytes each */
	uint32_t max_inline;
	uint64_t peer_addr;
	uint32_t peer_rkey;
	bool peer_done;        /* the peer already said it finished */
	bool peer_gone;        /* -k: its socket closed; the QP must notice */
};

static void *
map(size_t len)
{
	/* Untouched pages cost nothing: slots are large, most messages small. */
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		fail("mmap %zu bytes: %s", len, strerror(errno));
	return p;
}

/* Cut [0, len) into up to MAX_SGE pieces (none for 0 bytes: a 0-length
 * entry means 2 GiB to some devices); piece k lies at its own offset of
 * the slot at @p slot_off in MR A or MR B. @return the number of pieces. */
static unsigned
cut(const struct ctx *c, struct rng *r, uint64_t slot_off, uint32_t len, struct ibv_sge *sge)
{
	uint32_t cuts[MAX_SGE + 1];
	unsigned n, i, j, k;

	if (len == 0)
		return 0;
	n = 1 + (unsigned)rng_below(r, MAX_SGE);
	if (n > len)
		n = len;
	cuts[0] = 0;
	for (i = 1; i < n; i++)
		cuts[i] = 1 + (uint32_t)rng_below(r, len - 1);
	/* Sort the inner cuts and drop repeats so no piece is empty. */
	for (i = 1; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (cuts[j] < cuts[i]) {
				uint32_t t = cuts[i];

				cuts[i] = cuts[j];
				cuts[j] = t;
			}
	for (i = 1, j = 1; i < n; i++)
		if (cuts[i] != cuts[j - 1])
			cuts[j++] = cuts[i];
	n = j;
	cuts[n] = len;
	for (k = 0; k < n; k++) {
		bool in_b = rng_next(r) & 1;

		sge[k].addr = (uintptr_t)((in_b ? c->buf_b : c->buf_a) + slot_off + cuts[k]);
		sge[k].length = cuts[k + 1] - cuts[k];
		sge[k].lkey = in_b ? c->mr_b->lkey : c->mr_a->lkey;
	}
	return n;
}

static void
scatter(const struct ibv_sge *sge, unsigned n, const uint8_t *src)
{
	for (unsigned i = 0; i < n; i++) {
		memcpy((void *)(uintptr_t)sge[i].addr, src, sge[i].length);
		src += sge[i].length;
	}
}

/* Copy the first @p len bytes the list describes into @p dst, or zero
 * them when @p dst is NULL. */
static void
gather(const struct ibv_sge *sge, unsigned n, uint8_t *dst, uint64_t len)
{
	for (unsigned i = 0; i < n && len > 0; i++) {
		uint32_t l = sge[i].length < len ? sge[i].length : (uint32_t)len;

		if (dst != NULL) {
			memcpy(dst, (void *)(uintptr_t)sge[i].addr, l);
			dst += l;
		} else {
			memset((void *)(uintptr_t)sge[i].addr, 0, l);
		}
		len -= l;
	}
}

/* Compare @p len bytes; on a difference say where and exit. */
static void
compare(const uint8_t *want, const uint8_t *got, uint64_t len, const struct op *op,
	const char *what)
{
	uint64_t i, from, to;

	if (memcmp(want, got, len) == 0)
		return;
	for (i = 0; want[i] == got[i]; i++)
		;
	fprintf(stderr, "[%s] op %" PRIu64 " %s of %u bytes: %s differs at byte %" PRIu64 "\n",
		role_name, op->index, op_names[op->kind], op->len, what, i);
	from = i > 8 ? i - 8 : 0;
	to = i + 8 < len ? i + 8 : len;
	fprintf(stderr, "  want:");
	for (uint64_t k = from; k < to; k++)
		fprintf(stderr, " %02x", want[k]);
	fprintf(stderr, "\n  got: ");
	for (uint64_t k = from; k < to; k++)
		fprintf(stderr, " %02x", got[k]);
	fprintf(stderr, "\n");
	fail("data mismatch");
}

/* ---- requester ---- */

enum wr_kind { WR_OP, WR_CHECK };

struct wr_slot {
	uint64_t wr_id;
	enum wr_kind kind;
	struct op op;
	unsigned nsge;
	struct ibv_sge sge[MAX_SGE];
};

struct requester {
	bool active;
	struct sched sched;
	struct wr_slot *ring;  /* opt.depth entries */
	uint64_t posted, completed;
	struct op pending;
	bool have_pending;
	uint64_t count[OP_KINDS], bytes;
	double start, end;
};

static bool
req_done(const struct requester *r)
{
	return !r->active ||
	       (r->sched.next == opt.n && !r->have_pending && r->completed == r->posted);
}

/* The SEND after a WRITE: 8 bytes that name the write, so the responder
 * knows the write before it is complete and checks the written memory. */
static void
req_check_wr(struct ctx *c, struct requester *r, const struct op *op, struct ibv_send_wr *wr)
{
	struct wr_slot *s = &r->ring[r->posted % opt.depth];
	uint64_t index = htole64(op->index);

	s->wr_id = WRID_SEND | r->posted;
	s->kind = WR_CHECK;
	s->op = *op;
	s->nsge = 1;
	s->sge[0].addr = (uintptr_t)(c->buf_a + (r->posted % opt.depth) * c->lay.slot);
	s->sge[0].length = CHECK_LEN;
	s->sge[0].lkey = c->mr_a->lkey;
	memcpy((void *)(uintptr_t)s->sge[0].addr, &index, CHECK_LEN);
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = s->wr_id;
	wr->sg_list = s->sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	r->posted++;
}

static void
req_post_op(struct ctx *c, struct requester *r, const struct op *op)
{
	static const enum ibv_wr_opcode wr_opcode[OP_KINDS] = {
		[OP_SEND] = IBV_WR_SEND,
		[OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
		[OP_WRITE] = IBV_WR_RDMA_WRITE,
		[OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
		[OP_READ] = IBV_WR_RDMA_READ,
		[OP_FETCH_ADD] = IBV_WR_ATOMIC_FETCH_AND_ADD,
		[OP_CMP_SWAP] = IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	struct wr_slot *s = &r->ring[r->posted % opt.depth];
	struct ibv_send_wr wr[2], *bad = NULL;
	struct rng sr = op->sge_rng;
	int ret;

	s->wr_id = WRID_SEND | r->posted;
	s->kind = WR_OP;
	s->op = *op;
	if (op_is_atomic(op->kind)) {
		/* One 8-byte, 8-aligned SGE for the original value. */
		s->nsge = 1;
		s->sge[0].addr = (uintptr_t)(c->buf_a + (r->posted % opt.depth) * c->lay.slot);
		s->sge[0].length = 8;
		s->sge[0].lkey = c->mr_a->lkey;
		memset((void *)(uintptr_t)s->sge[0].addr, 0xff, 8);
	} else {
		s->nsge = cut(c, &sr, (r->posted % opt.depth) * c->lay.slot, op->len, s->sge);
	}
	if (op->kind != OP_READ && !op_is_atomic(op->kind)) {
		pattern(op->data_key, c->want, op->len);
		scatter(s->sge, s->nsge, c->want);
	}
	memset(&wr[0], 0, sizeof(wr[0]));
	wr[0].wr_id = s->wr_id;
	wr[0].sg_list = s->sge;
	wr[0].num_sge = (int)s->nsge;
	wr[0].opcode = wr_opcode[op->kind];
	wr[0].send_flags = IBV_SEND_SIGNALED;
	if (op->kind != OP_READ && !op_is_atomic(op->kind) && op->inline_wanted &&
	    op->len <= c->max_inline)
		wr[0].send_flags |= IBV_SEND_INLINE;
	if (op->kind == OP_SEND_IMM || op->kind == OP_WRITE_IMM)
		wr[0].imm_data = op->imm;
	if (op->kind == OP_WRITE || op->kind == OP_WRITE_IMM || op->kind == OP_READ) {
		wr[0].wr.rdma.remote_addr = c->peer_addr + op->roff;
		wr[0].wr.rdma.rkey = c->peer_rkey;
	} else if (op_is_atomic(op->kind)) {
		wr[0].wr.atomic.remote_addr = c->peer_addr + op->roff;
		wr[0].wr.atomic.rkey = c->peer_rkey;
		wr[0].wr.atomic.compare_add = op->kind == OP_FETCH_ADD ? 1 : op->atomic_seq;
		wr[0].wr.atomic.swap = op->atomic_seq + 1;
	}
	r->posted++;
	if (op->kind == OP_WRITE) {
		req_check_wr(c, r, op, &wr[1]);
		wr[0].next = &wr[1];
	}
	ret = ibv_post_send(c->qp, &wr[0], &bad);
	if (ret != 0)
		fail("ibv_post_send (op %" PRIu64 " %s, %u bytes, %u SGEs%s): %s", op->index,
		     op_names[op->kind], op->len, s->nsge,
		     (wr[0].send_flags & IBV_SEND_INLINE) ? ", inline" : "", strerror(ret));
	r->count[op->kind]++;
	r->bytes += op->len;
}

/* Post while the window has room. */
static void
req_post(struct ctx *c, struct requester *r)
{
	while (r->active && (r->have_pending || r->sched.next < opt.n)) {
		unsigned need;

		if (!r->have_pending) {
			sched_next(&r->sched, &r->pending);
			r->have_pending = true;
		}
		need = r->pending.kind == OP_WRITE ? 2 : 1;
		if (r->posted - r->completed + need > opt.depth)
			return;
		req_post_op(c, r, &r->pending);
		r->have_pending = false;
	}
}

static void
req_complete(struct ctx *c, struct requester *r, const struct ibv_wc *wc)
{
	static const enum ibv_wc_opcode wc_opcode[OP_KINDS] = {
		[OP_SEND] = IBV_WC_SEND,
		[OP_SEND_IMM] = IBV_WC_SEND,
		[OP_WRITE] = IBV_WC_RDMA_WRITE,
		[OP_WRITE_IMM] = IBV_WC_RDMA_WRITE,
		[OP_READ] = IBV_WC_RDMA_READ,
		[OP_FETCH_ADD] = IBV_WC_FETCH_ADD,
		[OP_CMP_SWAP] = IBV_WC_COMP_SWAP,
	};
	struct wr_slot *s = &r->ring[r->completed % opt.depth];
	const struct op *op = &s->op;
	const char *what = s->kind == WR_CHECK ? "check SEND after " : "";
	enum ibv_wc_opcode want_opcode = s->kind == WR_CHECK ? IBV_WC_SEND : wc_opcode[op->kind];

	if (!r->active || r->completed == r->posted)
		fail("send completion with wr_id 0x%" PRIx64 " but none outstanding", wc->wr_id);
	if (wc->wr_id != s->wr_id)
		fail("send completion out of order: wr_id 0x%" PRIx64 ", expected 0x%" PRIx64,
		     wc->wr_id, s->wr_id);
	if (wc->status != IBV_WC_SUCCESS)
		fail("%sop %" PRIu64 " %s of %u bytes: status %s (vendor_err 0x%x)", what,
		     op->index, op_names[op->kind], op->len, ibv_wc_status_str(wc->status),
		     wc->vendor_err);
	if (wc->opcode != want_opcode)
		fail("%sop %" PRIu64 " %s: completion opcode %d, expected %d", what, op->index,
		     op_names[op->kind], wc->opcode, want_opcode);
	if (s->kind == WR_OP && op->kind == OP_READ) {
		gather(s->sge, s->nsge, c->got, op->len);
		compare(c->peer_read + (op->roff - c->lay.read_off), c->got, op->len, op,
			"data read");
		/* Zero it so a later READ that lands nothing cannot pass on
		 * what this one left. */
		gather(s->sge, s->nsge, NULL, op->len);
	}
	if (s->kind == WR_OP && op_is_atomic(op->kind)) {
		uint64_t orig;

		memcpy(&orig, (void *)(uintptr_t)s->sge[0].addr, 8);
		if (orig != op->atomic_seq)
			fail("op %" PRIu64 " %s found the counter at %" PRIu64 ", expected %" PRIu64
			     " (an atomic applied twice or lost)", op->index, op_names[op->kind],
			     orig, op->atomic_seq);
	}
	r->completed++;
	if (req_done(r))
		r->end = now();
}

/* ---- responder ---- */

struct recv_slot {
	unsigned nsge;
	struct ibv_sge sge[MAX_SGE];
};

struct responder {
	bool active;
	struct sched sched;    /* the peer's schedule */
	uint64_t role_seed;    /* our own: how receives are cut */
	struct recv_slot *slots; /* opt.depth entries */
	uint64_t recv_posted, recv_done;
	struct op cur;         /* the next operation that takes a receive */
	bool have_cur;
	uint64_t verified, bytes;
	double end;
};

static bool
resp_done(const struct responder *p)
{
	return !p->active || (!p->have_cur && p->sched.next == opt.n);
}

/* Move to the next operation that takes a receive; READs and atomics take
 * none (the requester checks them; the counter is checked at the end). */
static void
resp_advance(struct responder *p)
{
	p->have_cur = false;
	while (p->active && p->sched.next < opt.n) {
		sched_next(&p->sched, &p->cur);
		if (p->cur.kind != OP_READ && !op_is_atomic(p->cur.kind)) {
			p->have_cur = true;
			return;
		}
		p->verified++;
	}
	if (resp_done(p) && p->end == 0)
		p->end = now();
}

static void
resp_post_recv(struct ctx *c, struct responder *p)
{
	uint64_t j = p->recv_posted;
	struct recv_slot *s = &p->slots[j % opt.depth];
	struct rng r = rng_of(p->role_seed, TAG_RECV, j);
	struct ibv_recv_wr wr, *bad = NULL;
	int ret;

	/* Every receive takes a message of up to -M bytes. */
	s->nsge = cut(c, &r, (opt.depth + j % opt.depth) * c->lay.slot, (uint32_t)c->lay.slot,
		      s->sge);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = j;
	wr.sg_list = s->sge;
	wr.num_sge = (int)s->nsge;
	ret = ibv_post_recv(c->qp, &wr, &bad);
	if (ret != 0)
		fail("ibv_post_recv %" PRIu64 ": %s", j, strerror(ret));
	p->recv_posted++;
}

/* Check the written range of the remote MR. */
static void
resp_check_written(struct ctx *c, const struct op *op)
{
	pattern(op->data_key, c->want, op->len);
	compare(c->want, c->remote + op->roff, op->len, op, "memory written");
}

static void
resp_complete(struct ctx *c, struct responder *p, const struct ibv_wc *wc)
{
	struct recv_slot *s = &p->slots[p->recv_done % opt.depth];
	const struct op *op = &p->cur;
	enum ibv_wc_opcode want_opcode = IBV_WC_RECV;
	uint32_t want_len = op->len;
	bool want_imm = op->kind == OP_SEND_IMM || op->kind == OP_WRITE_IMM;
	uint64_t touched;

	if (!p->active || !p->have_cur)
		fail("receive completion with wr_id %" PRIu64 " but no message expected", wc->wr_id);
	if (wc->wr_id != p->recv_done)
		fail("receive completion out of order: wr_id %" PRIu64 ", expected %" PRIu64,
		     wc->wr_id, p->recv_done);
	if (wc->status != IBV_WC_SUCCESS)
		fail("receive for op %" PRIu64 " %s of %u bytes: status %s (vendor_err 0x%x)",
		     op->index, op_names[op->kind], op->len, ibv_wc_status_str(wc->status),
		     wc->vendor_err);
	if (op->kind == OP_WRITE)
		want_len = CHECK_LEN;
	if (op->kind == OP_WRITE_IMM)
		want_opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	if (wc->opcode != want_opcode)
		fail("receive for op %" PRIu64 " %s: opcode %d, expected %d", op->index,
		     op_names[op->kind], wc->opcode, want_opcode);
	if (wc->byte_len != want_len)
		fail("receive for op %" PRIu64 " %s: byte_len %u, expected %u", op->index,
		     op_names[op->kind], wc->byte_len, want_len);
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != want_imm)
		fail("receive for op %" PRIu64 " %s: wc_flags 0x%x, IBV_WC_WITH_IMM expected %s",
		     op->index, op_names[op->kind], (unsigned)wc->wc_flags, want_imm ? "set" : "clear");
	if (wc->wc_flags & IBV_WC_WITH_INV)
		fail("receive for op %" PRIu64 ": IBV_WC_WITH_INV set", op->index);
	if (want_imm && wc->imm_data != op->imm)
		fail("receive for op %" PRIu64 " %s: imm_data 0x%08x, expected 0x%08x", op->index,
		     op_names[op->kind], ntohl(wc->imm_data), ntohl(op->imm));

	/* What the receive buffer must hold: the message, or nothing. */
	switch (op->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
		pattern(op->data_key, c->want, op->len);
		break;
	case OP_WRITE: {
		uint64_t index = htole64(op->index);

		memcpy(c->want, &index, CHECK_LEN);
		break;
	}
	default:
		want_len = 0;
		break;
	}
	/* One byte more: it must still be zero (nothing written past the
	 * message); a WRITE_IMM must leave the first bytes alone. */
	touched = (uint64_t)want_len + (op->kind == OP_WRITE_IMM ? 64 : 1);
	if (touched > c->lay.slot)
		touched = c->lay.slot;
	memset(c->want + want_len, 0, touched - want_len);
	gather(s->sge, s->nsge, c->got, touched);
	compare(c->want, c->got, touched, op,
		op->kind == OP_WRITE ? "check message" : "data received");
	if (op->kind == OP_WRITE || op->kind == OP_WRITE_IMM)
		resp_check_written(c, op);
	/* Leave the slot zeroed for its next receive. */
	gather(s->sge, s->nsge, NULL, touched);
	p->recv_done++;
	p->verified++;
	p->bytes += op->len;
	resp_post_recv(c, p);
	resp_advance(p);
}

/* ---- out-of-band exchange over TCP ---- */

struct info {
	uint32_t qpn, psn, rkey;
	uint8_t gid[16];
	uint64_t addr, len, seed, n;
	unsigned rd_atom, mtu, depth, max_msg, uni;
};

static void
write_all(const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(peer_fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("send to the peer: %s", n < 0 ? strerror(errno) : "closed");
		p += n;
		len -= (size_t)n;
	}
}

static char
read_byte(void)
{
	char b;
	ssize_t n;

	do
		n = recv(peer_fd, &b, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		/* The peer is gone: do not try to tell it. */
		peer_fd = -1;
		fail("the peer closed the connection");
	}
	if (n < 0)
		fail("receive from the peer: %s", strerror(errno));
	return b;
}

static void
send_info(const struct info *i)
{
	char line[512], gid[33];
	int n;

	for (int k = 0; k < 16; k++)
		snprintf(gid + 2 * k, 3, "%02x", i->gid[k]);
	n = snprintf(line, sizeof(line),
		     "RCVERIFY1 qpn=%06x psn=%06x gid=%s rkey=%08x addr=%016" PRIx64
		     " len=%" PRIu64 " rd_atom=%u mtu=%u seed=%" PRIu64 " n=%" PRIu64
		     " depth=%u max_msg=%u uni=%u\n",
		     i->qpn, i->psn, gid, i->rkey, i->addr, i->len, i->rd_atom, i->mtu, i->seed,
		     i->n, i->depth, i->max_msg, i->uni);
	write_all(line, (size_t)n);
}

static void
recv_info(struct info *i)
{
	char line[512], gid[33];
	size_t n = 0;

	for (;;) {
		char b = read_byte();

		if (b == '\n')
			break;
		if (n + 1 == sizeof(line))
			fail("the peer's connection line is too long");
		line[n++] = b;
	}
	line[n] = '\0';
	if (sscanf(line,
		   "RCVERIFY1 qpn=%x psn=%x gid=%32s rkey=%x addr=%" SCNx64 " len=%" SCNu64
		   " rd_atom=%u mtu=%u seed=%" SCNu64 " n=%" SCNu64 " depth=%u max_msg=%u uni=%u",
		   &i->qpn, &i->psn, gid, &i->rkey, &i->addr, &i->len, &i->rd_atom, &i->mtu,
		   &i->seed, &i->n, &i->depth, &i->max_msg, &i->uni) != 13 ||
	    strlen(gid) != 32)
		fail("cannot parse the peer's line: %s", line);
	for (int k = 0; k < 16; k++)
		if (sscanf(gid + 2 * k, "%2hhx", &i->gid[k]) != 1)
			fail("bad GID from the peer: %s", gid);
}

static void
tcp_connect(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)opt.tcp_port) };
	int one = 1;

	if (inet_pton(AF_INET, opt.addr, &sa.sin_addr) != 1)
		fail("bad address %s", opt.addr);
	if (opt.server) {
		int lfd = socket(AF_INET, SOCK_STREAM, 0);

		if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0)
			fail("listen on %s:%d: %s", opt.addr, opt.tcp_port, strerror(errno));
		say("waiting for the client on %s:%d", opt.addr, opt.tcp_port);
		peer_fd = accept(lfd, NULL, NULL);
		if (peer_fd < 0)
			fail("accept: %s", strerror(errno));
		close(lfd);
		return;
	}
	/* The server may still be starting: try until the timeout. */
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			fail("socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			peer_fd = fd;
			return;
		}
		if (errno != ECONNREFUSED && errno != EINTR)
			fail("connect to %s:%d: %s", opt.addr, opt.tcp_port, strerror(errno));
		close(fd);
		usleep(100 * 1000);
	}
}

/* Has the peer said something during the run? It only ever says that
 * it finished ('K') or failed ('F'), or goes away. */
static void
check_peer(struct ctx *c, int wait_ms)
{
	struct pollfd pfd = { .fd = peer_fd, .events = POLLIN };
	char b;

	if (c->peer_done || c->peer_gone || poll(&pfd, 1, wait_ms) <= 0)
		return;
	if (opt.keep_going && recv(peer_fd, &b, 1, MSG_PEEK) <= 0) {
		/* A killed peer: its QP is gone too, and ours must find out by
		 * itself (ACK timeouts, then IBV_WC_RETRY_EXC_ERR). */
		c->peer_gone = true;
		close(peer_fd);
		peer_fd = -1;
		say("the peer is gone: waiting for the QP to notice");
		return;
	}
	b = read_byte();
	if (b == 'F') {
		peer_fd = -1;
		fail("the peer failed");
	}
	if (b != 'K')
		fail("unexpected byte 0x%02x from the peer", (unsigned char)b);
	c->peer_done = true;
}

/* ---- verbs set-up ---- */

static enum ibv_mtu
mtu_enum(int mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	default: return 0;
	}
}

static int
mtu_bytes(enum ibv_mtu m)
{
	return 128 << m;
}

static unsigned
min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

static struct ibv_context *
open_device(struct ibv_device ***list)
{
	struct ibv_context *ctx;
	struct ibv_device *dev = NULL;
	int num, i;

	*list = ibv_get_device_list(&num);
	if (*list == NULL)
		fail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < num; i++)
		if (opt.dev == NULL || strcmp(ibv_get_device_name((*list)[i]), opt.dev) == 0) {
			dev = (*list)[i];
			break;
		}
	if (dev == NULL && opt.dev != NULL)
		fail("no RDMA device named %s", opt.dev);
	if (dev == NULL)
		fail("no RDMA device");
	ctx = ibv_open_device(dev);
	if (ctx == NULL)
		fail("ibv_open_device %s: %s", ibv_get_device_name(dev), strerror(errno));
	return ctx;
}

static struct ibv_mr *
reg(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (mr == NULL)
		fail("ibv_reg_mr %zu bytes: %s", len, strerror(errno));
	return mr;
}

static void
create_qp(struct ctx *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = {
			.max_send_wr = opt.depth,
			.max_recv_wr = opt.depth,
			.max_send_sge = MAX_SGE,
			.max_recv_sge = MAX_SGE,
			.max_inline_data = 256,
		},
		.qp_type = IBV_QPT_RC,
	};

	c->qp = ibv_create_qp(c->pd, &ia);
	if (c->qp == NULL) {
		/* A device without inline sends refuses the request. */
		ia.cap.max_inline_data = 0;
		c->qp = ibv_create_qp(c->pd, &ia);
	}
	if (c->qp == NULL)
		fail("ibv_create_qp: %s", strerror(errno));
	c->max_inline = ia.cap.max_inline_data;
}

static void
modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *to)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret != 0)
		fail("ibv_modify_qp to %s: %s", to, strerror(ret));
}

static void
qp_to_init(struct ctx *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)opt.ib_port,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	modify(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	       "INIT");
}

static void
qp_to_rts(struct ctx *c, const struct info *me, const struct info *peer, enum ibv_mtu mtu,
	  unsigned init_rd_atom)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = (uint8_t)me->rd_atom;
	a.min_rnr_timer = 1; /* 0.01 ms: receives are reposted quickly */
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)opt.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = (uint8_t)opt.ib_port;
	modify(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	       "RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me->psn;
	a.timeout = (uint8_t)opt.ack_timeout; /* 4.096 us << 14: 67 ms by default */
	a.retry_cnt = 7;
	a.rnr_retry = 7;   /* retry forever */
	a.max_rd_atomic = (uint8_t)init_rd_atom;
	modify(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
	       "RTS");
}

/* Both sides must run the same schedule. */
static void
check_same(const struct info *me, const struct info *peer)
{
	if (me->seed != peer->seed || me->n != peer->n || me->depth != peer->depth ||
	    me->max_msg != peer->max_msg || me->uni != peer->uni)
		fail("the peer runs another test: seed %" PRIu64 "/%" PRIu64 ", -n %" PRIu64
		     "/%" PRIu64 ", -q %u/%u, -M %u/%u, -u %u/%u (ours/peer's)",
		     me->seed, peer->seed, me->n, peer->n, me->depth, peer->depth, me->max_msg,
		     peer->max_msg, me->uni, peer->uni);
	if (peer->len != me->len)
		fail("the peer's memory region is %" PRIu64 " bytes, expected %" PRIu64, peer->len,
		     me->len);
}

/* ---- the run ---- */

/* Take what the CQ has. @return how many completions. */
static int
poll_cq(struct ctx *c, struct requester *r, struct responder *p)
{
	struct ibv_wc wc[CQ_BATCH];
	int n = ibv_poll_cq(c->cq, CQ_BATCH, wc);

	if (n < 0)
		fail("ibv_poll_cq: %d", n);
	for (int i = 0; i < n; i++) {
		if (wc[i].qp_num != c->qp->qp_num)
			fail("completion for QP 0x%x, ours is 0x%x", wc[i].qp_num, c->qp->qp_num);
		/* On an error the opcode is undefined: tell by wr_id. */
		if (wc[i].wr_id & WRID_SEND)
			req_complete(c, r, &wc[i]);
		else
			resp_complete(c, p, &wc[i]);
	}
	return n;
}

/* -e: sleep until the CQ has something or the peer speaks (1 s at most). */
static void
wait_event(struct ctx *c, struct requester *r, struct responder *p)
{
	struct pollfd pfd[2] = {
		{ .fd = c->channel->fd, .events = POLLIN },
		{ .fd = peer_fd, .events = POLLIN },
	};
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (ibv_req_notify_cq(c->cq, 0) != 0)
		fail("ibv_req_notify_cq");
	/* A completion may have come before the request: look again. */
	if (poll_cq(c, r, p) > 0)
		return;
	if (poll(pfd, c->peer_done || c->peer_gone ? 1 : 2, 1000) < 0 && errno != EINTR)
		fail("poll: %s", strerror(errno));
	if (pfd[0].revents & POLLIN) {
		if (ibv_get_cq_event(c->channel, &ev_cq, &ev_ctx) != 0 || ev_cq != c->cq)
			fail("ibv_get_cq_event");
		ibv_ack_cq_events(c->cq, 1);
	}
	if (!c->peer_done && (pfd[1].revents & (POLLIN | POLLHUP)))
		check_peer(c, 0);
}

static void
progress(struct ctx *c, struct requester *r, struct responder *p)
{
	static unsigned idle;

	if (poll_cq(c, r, p) > 0)
		return;
	if (opt.events)
		wait_event(c, r, p);
	else if ((++idle & 255) == 0)
		check_peer(c, 0);
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s -s|-c [options]\n"
		"  -s            server (listens for the client)\n"
		"  -c            client (connects to the server)\n"
		"  -a ADDR       server's IPv4 address for the TCP exchange (127.0.0.1)\n"
		"  -p PORT       TCP port (18515)\n"
		"  -d DEV        RDMA device (the first one)\n"
		"  -i PORT       device port (1)\n"
		"  -g INDEX      GID index (1)\n"
		"  -m MTU        path MTU 256..4096 (the port's active MTU)\n"
		"  -n COUNT      operations each requester posts (10000)\n"
		"  -S SEED       seed of the schedule (1); both sides need the same\n"
		"  -q DEPTH      work requests in flight and receives posted (64)\n"
		"  -M BYTES      largest message (1048576)\n"
		"  -t SECONDS    give up after this long (120)\n"
		"  -T EXP        ACK timeout 4.096 us << EXP (14: 67 ms)\n"
		"  -k            keep going when the peer exits; its QP's silence must\n"
		"                end ours with a retry-exceeded completion\n"
		"  -u            one direction: only the client requests\n"
		"  -e            sleep on a completion channel instead of polling\n"
		"  -v            print progress every second\n"
		"Both sides need the same -S, -n, -q, -M and -u. The first PSN lies\n"
		"just below the 24-bit wrap, so every run crosses it.\n",
		prog);
	exit(2);
}

static uint64_t
num_arg(const char *s, uint64_t min, uint64_t max, int o)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || *s == '-' || v < min || v > max) {
		fprintf(stderr, "-%c: '%s' is not a number in %" PRIu64 "..%" PRIu64 "\n", o, s, min,
			max);
		exit(2);
	}
	return v;
}

static void
parse_args(int argc, char **argv)
{
	bool role = false;
	int o;

	while ((o = getopt(argc, argv, "sca:p:d:i:g:m:n:S:q:M:t:T:kuevh")) != -1) {
		switch (o) {
		case 's':
		case 'c':
			if (role)
				usage(argv[0]);
			role = true;
			opt.server = o == 's';
			break;
		case 'a': opt.addr = optarg; break;
		case 'p': opt.tcp_port = (int)num_arg(optarg, 1, 65535, o); break;
		case 'd': opt.dev = optarg; break;
		case 'i': opt.ib_port = (int)num_arg(optarg, 1, 255, o); break;
		case 'g': opt.gid_index = (int)num_arg(optarg, 0, 255, o); break;
		case 'm':
			opt.mtu = (int)num_arg(optarg, 256, 4096, o);
			if (mtu_enum(opt.mtu) == 0) {
				fprintf(stderr, "-m: %d is not an IB MTU (256, 512, 1024, 2048, 4096)\n",
					opt.mtu);
				exit(2);
			}
			break;
		case 'n': opt.n = num_arg(optarg, 0, UINT64_MAX >> 1, o); break;
		case 'S': opt.seed = num_arg(optarg, 0, UINT64_MAX, o); break;
		/* WRITE and its check take two WRs at once. */
		case 'q': opt.depth = (unsigned)num_arg(optarg, 2, 4096, o); break;
		case 'M': opt.max_msg = (uint32_t)num_arg(optarg, 64, 1u << 30, o); break;
		case 't': opt.timeout = (unsigned)num_arg(optarg, 1, 86400, o); break;
		case 'T': opt.ack_timeout = (unsigned)num_arg(optarg, 1, 31, o); break;
		case 'k': opt.keep_going = true; break;
		case 'u': opt.uni = true; break;
		case 'e': opt.events = true; break;
		case 'v': opt.verbose = true; break;
		default: usage(argv[0]);
		}
	}
	if (!role || optind != argc)
		usage(argv[0]);
}

/* Resources go away without complaint, or the test fails. */
static void
teardown_step(int ret, const char *what)
{
	if (ret != 0)
		fail("%s: %s", what, strerror(ret > 0 ? ret : errno));
}

static uint64_t
role_seed(int server)
{
	return key_of(opt.seed, TAG_ROLE, (uint64_t)server);
}

int
main(int argc, char **argv)
{
	static struct ctx c;
	struct requester r = { 0 };
	struct responder p = { 0 };
	struct ibv_device **list;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	union ibv_gid gid;
	struct info me = { 0 }, peer;
	enum ibv_mtu mtu;
	unsigned init_rd_atom;
	char gid_text[INET6_ADDRSTRLEN];
	double next_report, secs;
	struct rng psn_rng;
	char b;

	parse_args(argc, argv);
	role_name = opt.server ? "server" : "client";
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout);

	c.lay.slot = opt.max_msg;
	c.lay.write_slots = 2 * (uint64_t)opt.depth + 1;
	c.lay.read_off = c.lay.write_slots * c.lay.slot;
	c.lay.read_len = 2 * c.lay.slot;
	c.lay.atomic_off = c.lay.read_off + c.lay.read_len; /* slots are 8-aligned */
	c.lay.size = c.lay.atomic_off + 8;

	c.ctx = open_device(&list);
	if (ibv_query_device(c.ctx, &dattr) != 0)
		fail("ibv_query_device");
	if (ibv_query_port(c.ctx, (uint8_t)opt.ib_port, &pattr) != 0)
		fail("ibv_query_port %d", opt.ib_port);
	if ((unsigned)dattr.max_qp_wr < opt.depth || dattr.max_sge < MAX_SGE ||
	    (unsigned)dattr.max_cqe < 2 * opt.depth + 1)
		fail("the device allows %d WRs, %d SGEs, %d CQEs; this test needs %u, %d, %u",
		     dattr.max_qp_wr, dattr.max_sge, dattr.max_cqe, opt.depth, MAX_SGE,
		     2 * opt.depth + 1);
	if (pattr.max_msg_sz < opt.max_msg)
		fail("the port's largest message is %u bytes, -M is %u", pattr.max_msg_sz,
		     opt.max_msg);
	if (pattr.active_mtu < IBV_MTU_256 || pattr.active_mtu > IBV_MTU_4096)
		fail("port %d reports no active MTU (%d)", opt.ib_port, pattr.active_mtu);
	mtu = opt.mtu ? mtu_enum(opt.mtu) : pattr.active_mtu;
	if (mtu > pattr.active_mtu)
		fail("-m %d is above the port's active MTU %d", opt.mtu, mtu_bytes(pattr.active_mtu));
	if (ibv_query_gid(c.ctx, (uint8_t)opt.ib_port, opt.gid_index, &gid) != 0)
		fail("ibv_query_gid %d", opt.gid_index);
	if (memcmp(gid.raw, (uint8_t[16]){ 0 }, 16) == 0)
		fail("GID index %d is empty", opt.gid_index);

	c.pd = ibv_alloc_pd(c.ctx);
	if (c.pd == NULL)
		fail("ibv_alloc_pd: %s", strerror(errno));
	if (opt.events) {
		c.channel = ibv_create_comp_channel(c.ctx);
		if (c.channel == NULL)
			fail("ibv_create_comp_channel: %s", strerror(errno));
	}
	c.cq = ibv_create_cq(c.ctx, (int)(2 * opt.depth + 1), NULL, c.channel, 0);
	if (c.cq == NULL)
		fail("ibv_create_cq: %s", strerror(errno));

	c.buf_len = 2 * (size_t)opt.depth * c.lay.slot;
	c.buf_a = map(c.buf_len);
	c.buf_b = map(c.buf_len);
	c.remote = map(c.lay.size);
	c.want = map(c.lay.slot);
	c.got = map(c.lay.slot);
	c.peer_read = map(c.lay.read_len);
	pattern(key_of(role_seed(opt.server), TAG_READ_REGION, 0), c.remote + c.lay.read_off,
		c.lay.read_len);
	pattern(key_of(role_seed(!opt.server), TAG_READ_REGION, 0), c.peer_read, c.lay.read_len);
	c.mr_a = reg(c.pd, c.buf_a, c.buf_len, IBV_ACCESS_LOCAL_WRITE);
	c.mr_b = reg(c.pd, c.buf_b, c.buf_len, IBV_ACCESS_LOCAL_WRITE);
	c.mr_remote = reg(c.pd, c.remote, c.lay.size, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);

	create_qp(&c);
	qp_to_init(&c);
	r.active = !opt.uni || !opt.server;
	p.active = !opt.uni || opt.server;
	r.ring = calloc(opt.depth, sizeof(*r.ring));
	p.slots = calloc(opt.depth, sizeof(*p.slots));
	if (r.ring == NULL || p.slots == NULL)
		fail("out of memory");
	p.role_seed = role_seed(opt.server);
	/* Receives go up before the peer can send anything. */
	while (p.active && p.recv_posted < opt.depth)
		resp_post_recv(&c, &p);

	psn_rng = rng_of(role_seed(opt.server), TAG_PSN, 0);
	me.qpn = c.qp->qp_num;
	me.psn = 0xffffffu - (uint32_t)rng_below(&psn_rng, 512);
	memcpy(me.gid, gid.raw, 16);
	me.rkey = c.mr_remote->rkey;
	me.addr = (uintptr_t)c.remote;
	me.len = c.lay.size;
	me.rd_atom = min_u((unsigned)dattr.max_qp_rd_atom, 16);
	me.mtu = (unsigned)mtu_bytes(mtu);
	me.seed = opt.seed;
	me.n = opt.n;
	me.depth = opt.depth;
	me.max_msg = opt.max_msg;
	me.uni = opt.uni;
	inet_ntop(AF_INET6, gid.raw, gid_text, sizeof(gid_text));
	say("%s port %d: GID %d %s, QPN 0x%06x, PSN 0x%06x, MTU %u, inline %u",
	    ibv_get_device_name(c.ctx->device), opt.ib_port, opt.gid_index, gid_text, me.qpn,
	    me.psn, me.mtu, c.max_inline);

	tcp_connect();
	send_info(&me);
	recv_info(&peer);
	check_same(&me, &peer);
	mtu = mtu_enum((int)min_u(me.mtu, peer.mtu));
	if (mtu == 0)
		fail("the peer's MTU %u is not an IB MTU", peer.mtu);
	init_rd_atom = min_u(min_u((unsigned)dattr.max_qp_init_rd_atom, 16), peer.rd_atom);
	if (r.active && init_rd_atom == 0)
		fail("no RDMA READ possible: max_qp_init_rd_atom %d, the peer's max_qp_rd_atom %u",
		     dattr.max_qp_init_rd_atom, peer.rd_atom);
	qp_to_rts(&c, &me, &peer, mtu, init_rd_atom);
	c.peer_addr = peer.addr;
	c.peer_rkey = peer.rkey;
	sched_init(&r.sched, role_seed(opt.server), &c.lay, (uint32_t)mtu_bytes(mtu));
	sched_init(&p.sched, role_seed(!opt.server), &c.lay, (uint32_t)mtu_bytes(mtu));

	/* Both QPs are ready before either side sends. */
	write_all("R", 1);
	b = read_byte();
	if (b != 'R')
		fail(b == 'F' ? "the peer failed" : "unexpected byte from the peer");
	inet_ntop(AF_INET6, peer.gid, gid_text, sizeof(gid_text));
	say("connected to QPN 0x%06x at %s; path MTU %d; %" PRIu64 " operations%s, seed %" PRIu64,
	    peer.qpn, gid_text, mtu_bytes(mtu), opt.n, opt.uni ? " client to server" : " each way",
	    opt.seed);

	r.start = now();
	next_report = r.start + 1;
	resp_advance(&p);
	if (req_done(&r))
		r.end = r.start;
	while (!req_done(&r) || !resp_done(&p)) {
		req_post(&c, &r);
		progress(&c, &r, &p);
		if (opt.verbose && now() >= next_report) {
			say("posted %" PRIu64 "/%" PRIu64 " operations, checked %" PRIu64 "/%" PRIu64
			    " of the peer's", r.active ? r.sched.next - r.have_pending : 0,
			    r.active ? opt.n : 0, p.verified, p.active ? opt.n : 0);
			next_report += 1;
		}
	}

	/* Done here; the peer may still need our QP (its last READs): keep
	 * polling until it says it is done too. */
	write_all("K", 1);
	while (!c.peer_done) {
		check_peer(&c, 10);
		poll_cq(&c, &r, &p);
	}

	if (r.active) {
		secs = r.end - r.start;
		say("sent %" PRIu64 " operations (%" PRIu64 " SEND, %" PRIu64 " SEND_IMM, %" PRIu64
		    " WRITE, %" PRIu64 " WRITE_IMM, %" PRIu64 " READ, %" PRIu64 " atomics), %.1f MB"
		    " in %.3f s: %.1f MB/s",
		    opt.n, r.count[OP_SEND], r.count[OP_SEND_IMM], r.count[OP_WRITE],
		    r.count[OP_WRITE_IMM], r.count[OP_READ],
		    r.count[OP_FETCH_ADD] + r.count[OP_CMP_SWAP], (double)r.bytes / 1e6, secs,
		    secs > 0 ? (double)r.bytes / 1e6 / secs : 0.0);
	}
	if (p.active) {
		uint64_t counter;

		/* The peer's atomics each added 1, exactly once. */
		memcpy(&counter, c.remote + c.lay.atomic_off, sizeof(counter));
		if (counter != p.sched.atomics)
			fail("the atomic counter is %" PRIu64 " after the peer's %" PRIu64 " atomics",
			     counter, p.sched.atomics);
	}
	if (p.active)
		say("checked every byte and completion of the peer's %" PRIu64
		    " operations (%.1f MB received or written)", p.verified, (double)p.bytes / 1e6);

	teardown_step(ibv_destroy_qp(c.qp), "ibv_destroy_qp");
	teardown_step(ibv_dereg_mr(c.mr_remote), "ibv_dereg_mr");
	teardown_step(ibv_dereg_mr(c.mr_b), "ibv_dereg_mr");
	teardown_step(ibv_dereg_mr(c.mr_a), "ibv_dereg_mr");
	teardown_step(ibv_destroy_cq(c.cq), "ibv_destroy_cq");
	if (c.channel != NULL)
		teardown_step(ibv_destroy_comp_channel(c.channel), "ibv_destroy_comp_channel");
	teardown_step(ibv_dealloc_pd(c.pd), "ibv_dealloc_pd");
	teardown_step(ibv_close_device(c.ctx), "ibv_close_device");
	munmap(c.buf_a, c.buf_len);
	munmap(c.buf_b, c.buf_len);
	munmap(c.remote, c.lay.size);
	munmap(c.want, c.lay.slot);
	munmap(c.got, c.lay.slot);
	munmap(c.peer_read, c.lay.read_len);
	free(r.ring);
	free(p.slots);
	ibv_free_device_list(list);
	close(peer_fd);
	say("PASS");
	return 0;
}
