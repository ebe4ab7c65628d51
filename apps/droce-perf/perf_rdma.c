/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA tests' setup, as perftest's: attach droce to the port, open the
 * device, make the PD, CQs, one memory region and the QPs, swap QP
 * numbers, PSNs, GIDs, rkeys and addresses with the peer over TCP, bring
 * the QPs to RTS, then measure each message size (perf_rdma_tests.c).
 *
 * The engine runs in this thread only (run-to-completion): the verbs calls
 * drive it, and every wait calls droce_dev_poll(). No other thread starts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "perf_rdma.h"

#define BUF_ALIGN 4096

void
rdma_idle(void *arg)
{
	droce_dev_poll(((struct rdma *)arg)->dev);
}

static enum ibv_mtu
mtu_enum(unsigned bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

static bool
needs_recvs(const struct perf_opts *o)
{
	return o->test == PERF_SEND &&
	       (o->mode == PERF_LAT || o->server || o->bidir);
}

int
rdma_post_recvs(struct rdma *r, struct rdma_qp *q)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)q->target,
		.length = (uint32_t)r->slot,
		.lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	/* Every receive takes a whole slot, so receives left over from one
	 * message size fit the next. */
	while (q->rposted < r->o->rx_depth) {
		wr.wr_id = (uint64_t)(q - r->qps);
		if (ibv_post_recv(q->qp, &wr, &bad) != 0) {
			fprintf(stderr, PERF_NAME ": ibv_post_recv failed\n");
			return -1;
		}
		q->rposted++;
	}
	return 0;
}

/* perftest's inline defaults: latency tests inline what fits, bw none. */
static int
inline_default(const struct perf_opts *o)
{
	if (o->inline_size >= 0)
		return o->inline_size;
	if (o->mode != PERF_LAT || o->test == PERF_READ || o->test == PERF_ATOMIC)
		return 0;
	return o->test == PERF_SEND ? PERF_DEF_INLINE_SEND : PERF_DEF_INLINE_WRITE;
}

static int
rdma_open(struct rdma *r, uint16_t port_id)
{
	const struct perf_opts *o = r->o;
	struct droce_port_conf conf = {
		.port_id = port_id,
		.mac_set = o->mac_set,
		.ipv4 = o->ipv4,
		.ipv4_prefix = o->ipv4_prefix,
		.mtu = 4096,
		.capture = o->capture,
		.nb_queues = (uint16_t)o->engines,
	};
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	int rc;

	memcpy(conf.mac.addr_bytes, o->mac, sizeof(o->mac));
	if (perf_cc_apply(o, &conf) != 0)
		return -1;
	rc = droce_dev_attach(&conf, &r->dev);
	if (rc != 0) {
		fprintf(stderr, PERF_NAME ": cannot attach droce to ethdev %u: %s\n", port_id,
			strerror(-rc));
		return -1;
	}
	r->attached = true;
	r->ctx = ibv_open_device(droce_dev_ibv(r->dev));
	if (r->ctx == NULL || ibv_query_device(r->ctx, &da) != 0 ||
	    ibv_query_port(r->ctx, 1, &pa) != 0 ||
	    ibv_query_gid(r->ctx, 1, o->gid_index, &r->gid) != 0) {
		fprintf(stderr, PERF_NAME ": cannot open droce%u or read GID %d: %s\n", r->dev,
			o->gid_index, strerror(errno));
		return -1;
	}
	/* IBV_MTU_256 is 1, each next one twice as large */
	r->mtu_bytes = o->mtu ? o->mtu : 128u << pa.active_mtu;
	r->mtu = mtu_enum(r->mtu_bytes);
	r->outs = o->outs > 0 ? RTE_MIN(o->outs, da.max_qp_rd_atom) : da.max_qp_rd_atom;
	r->inline_size = inline_default(o);
	return 0;
}

/* The parent domain the QPs and CQs are created on: with a thread
 * domain (each queue has one thread: posts and polls take no lock), or,
 * with --no-td, the plain PD. */
static int
rdma_thread_domain(struct rdma *r)
{
	struct ibv_td_init_attr ta = { .comp_mask = 0 };
	struct ibv_parent_domain_init_attr pa = { .pd = r->pd };

	r->qpd = r->pd;
	if (r->o->no_td)
		return 0;
	r->td = ibv_alloc_td(r->ctx, &ta);
	pa.td = r->td;
	r->qpd = r->td != NULL ? ibv_alloc_parent_domain(r->ctx, &pa) : NULL;
	if (r->qpd == NULL) {
		fprintf(stderr, PERF_NAME ": no thread domain (%s); --no-td runs without\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* A CQ of @p cqe entries, single-threaded unless --no-td. */
static struct ibv_cq *
rdma_cq(struct rdma *r, uint32_t cqe)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = cqe };
	struct ibv_cq_ex *cq;

	if (r->td != NULL) {
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
		ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
		ca.parent_domain = r->qpd;
	}
	cq = ibv_create_cq_ex(r->ctx, &ca);
	return cq != NULL ? ibv_cq_ex_to_cq(cq) : NULL;
}

static int
rdma_resources(struct rdma *r, uint64_t max_size)
{
	const struct perf_opts *o = r->o;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = o->tx_depth,
			.max_recv_wr = needs_recvs(o) ? o->rx_depth : 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = (uint32_t)r->inline_size,
		},
	};
	size_t len;
	unsigned i;

	r->nqps = o->qps;
	r->slot = RTE_ALIGN_CEIL(RTE_MAX(max_size, (uint64_t)64), BUF_ALIGN);
	len = r->slot * 2 * r->nqps;
	r->pd = ibv_alloc_pd(r->ctx);
	if (r->pd != NULL && rdma_thread_domain(r) != 0)
		return -1;
	r->scq = rdma_cq(r, o->tx_depth * r->nqps);
	r->rcq = rdma_cq(r, (needs_recvs(o) ? o->rx_depth : 1) * r->nqps);
	r->buf = aligned_alloc(BUF_ALIGN, len);
	r->qps = calloc(r->nqps, sizeof(*r->qps));
	r->wrs = calloc(o->post_list, sizeof(*r->wrs));
	r->sges = calloc(o->post_list, sizeof(*r->sges));
	if (r->pd == NULL || r->scq == NULL || r->rcq == NULL || r->buf == NULL ||
	    r->qps == NULL || r->wrs == NULL || r->sges == NULL) {
		fprintf(stderr, PERF_NAME ": cannot allocate the PD, CQs or %zu bytes of buffers\n",
			len);
		return -1;
	}
	memset(r->buf, 0, len);
	r->mr = ibv_reg_mr(r->pd, r->buf, len, access);
	if (r->mr == NULL) {
		fprintf(stderr, PERF_NAME ": ibv_reg_mr: %s\n", strerror(errno));
		return -1;
	}
	ia.send_cq = r->scq;
	ia.recv_cq = r->rcq;
	for (i = 0; i < r->nqps; i++) {
		struct rdma_qp *q = &r->qps[i];
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT,
			.pkey_index = 0,
			.port_num = 1,
			.qp_access_flags = access,
		};

		q->local = r->buf + r->slot * 2 * i;
		q->target = q->local + r->slot;
		q->psn = (uint32_t)lrand48() & 0xffffff;
		q->qp = ibv_create_qp(r->qpd, &ia);
		if (q->qp == NULL) {
			fprintf(stderr, PERF_NAME ": ibv_create_qp: %s\n", strerror(errno));
			return -1;
		}
		if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS) != 0) {
			fprintf(stderr, PERF_NAME ": QP %#x to INIT failed\n", q->qp->qp_num);
			return -1;
		}
	}
	return 0;
}

static void
gid_hex(const union ibv_gid *g, char s[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(s + 2 * i, 3, "%02x", g->raw[i]);
}

static int
gid_parse(const char *s, union ibv_gid *g)
{
	int i;

	if (strlen(s) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		unsigned b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		g->raw[i] = (uint8_t)b;
	}
	return 0;
}

/* Swap one line per QP with the peer: QPN, PSN, rkey, the address of the
 * target slot, GID, outstanding READs. */
static int
rdma_exchange(struct rdma *r)
{
	char gid[33], line[256], rgid[64];
	unsigned i;
	int routs;

	gid_hex(&r->gid, gid);
	for (i = 0; i < r->nqps; i++) {
		struct rdma_qp *q = &r->qps[i];

		if (perf_oob_send(&r->oob, "QP %06x %06x %08x %016" PRIx64 " %s %d", q->qp->qp_num,
				  q->psn, r->mr->rkey, (uint64_t)(uintptr_t)q->target, gid,
				  r->outs) != 0)
			return -1;
	}
	for (i = 0; i < r->nqps; i++) {
		struct rdma_qp *q = &r->qps[i];

		if (perf_oob_recv(&r->oob, line, sizeof(line), NULL, NULL) != 0)
			return -1;
		if (sscanf(line, "QP %x %x %x %" SCNx64 " %63s %d", &q->rqpn, &q->rpsn, &q->rrkey,
			   &q->rvaddr, rgid, &routs) != 6 || gid_parse(rgid, &q->rgid) != 0 ||
		    routs < 1 || routs > UINT8_MAX) {
			fprintf(stderr, PERF_NAME ": bad QP line from the peer: '%s'\n", line);
			return -1;
		}
		r->outs = RTE_MIN(r->outs, routs);
	}
	for (i = 0; i < r->nqps; i++)
		perf_report_dest(r->o, true, r->qps[i].qp->qp_num, r->qps[i].psn, r->mr->rkey,
				 (uint64_t)(uintptr_t)r->qps[i].target, r->gid.raw);
	for (i = 0; i < r->nqps; i++)
		perf_report_dest(r->o, false, r->qps[i].rqpn, r->qps[i].rpsn, r->qps[i].rrkey,
				 r->qps[i].rvaddr, r->qps[i].rgid.raw);
	return 0;
}

static int
rdma_connect(struct rdma *r)
{
	unsigned i;

	for (i = 0; i < r->nqps; i++) {
		struct rdma_qp *q = &r->qps[i];
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = r->mtu,
			.dest_qp_num = q->rqpn,
			.rq_psn = q->rpsn,
			.max_dest_rd_atomic = (uint8_t)r->outs,
			.min_rnr_timer = 12,
			.ah_attr = {
				.is_global = 1,
				.port_num = 1,
				.grh = {
					.dgid = q->rgid,
					.sgid_index = (uint8_t)r->o->gid_index,
					.hop_limit = 64,
				},
			},
		};

		if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER) != 0) {
			fprintf(stderr, PERF_NAME ": QP %#x to RTR failed\n", q->qp->qp_num);
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = (uint8_t)r->o->qp_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = q->psn;
		a.max_rd_atomic = (uint8_t)r->outs;
		if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
			fprintf(stderr, PERF_NAME ": QP %#x to RTS failed\n", q->qp->qp_num);
			return -1;
		}
	}
	return 0;
}

/*
 * Traffic nobody times, both ways, before the first measurement: the first
 * packet of a QP waits for ARP, and the first pass through a port's rings
 * is slow (memif's buffers are faulted in page by page: some 10 us per
 * packet for the first thousand). WARM_UP_MSGS WRITEs of one MTU per QP
 * fill every buffer of a ring of up to that many slots.
 */
#define WARM_UP_MSGS 2048

static int
rdma_warm_up(struct rdma *r)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.num_sge = 1,
	}, *bad;
	struct ibv_sge sge = { .length = r->mtu_bytes, .lkey = r->mr->lkey };
	uint64_t give_up = rte_rdtsc() + rte_get_tsc_hz() * PERF_STALL_S;
	unsigned i, posted = 0, done = 0, total = WARM_UP_MSGS * r->nqps;
	unsigned depth = r->o->tx_depth * r->nqps;
	struct ibv_wc wc;
	int rc;

	wr.sg_list = &sge;
	while (done < total) {
		int n;

		for (i = 0; i < r->nqps && posted < total && posted - done < depth; i++, posted++) {
			struct rdma_qp *q = &r->qps[posted % r->nqps];

			sge.addr = (uintptr_t)q->local;
			wr.wr_id = posted;
			wr.wr.rdma.remote_addr = q->rvaddr;
			wr.wr.rdma.rkey = q->rrkey;
			rc = ibv_post_send(q->qp, &wr, &bad);
			if (rc == ENOMEM)
				break;  /* this QP's queue is full: later */
			if (rc != 0) {
				fprintf(stderr, PERF_NAME ": ibv_post_send failed\n");
				return -1;
			}
		}
		n = ibv_poll_cq(r->scq, 1, &wc);
		if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS)) {
			fprintf(stderr, PERF_NAME ": a WRITE to the peer failed: %s\n",
				n < 0 ? "ibv_poll_cq" : ibv_wc_status_str(wc.status));
			return -1;
		}
		done += (unsigned)n;
		if (n == 0 && rte_rdtsc() > give_up) {
			fprintf(stderr, PERF_NAME ": the peer does not answer over the port "
				"(link, addresses, or its engine)\n");
			return -1;
		}
	}
	return perf_oob_sync(&r->oob, rdma_idle, r);
}

static void
rdma_close(struct rdma *r)
{
	unsigned i;

	for (i = 0; r->qps != NULL && i < r->nqps; i++)
		if (r->qps[i].qp != NULL)
			ibv_destroy_qp(r->qps[i].qp);
	if (r->mr != NULL)
		ibv_dereg_mr(r->mr);
	if (r->scq != NULL)
		ibv_destroy_cq(r->scq);
	if (r->rcq != NULL)
		ibv_destroy_cq(r->rcq);
	if (r->qpd != NULL && r->qpd != r->pd)
		ibv_dealloc_pd(r->qpd);
	if (r->td != NULL)
		ibv_dealloc_td(r->td);
	if (r->pd != NULL)
		ibv_dealloc_pd(r->pd);
	if (r->ctx != NULL)
		ibv_close_device(r->ctx);
	if (r->attached)
		droce_dev_detach(r->dev);
	perf_oob_close(&r->oob);
	free(r->buf);
	free(r->qps);
	free(r->wrs);
	free(r->sges);
	free(r->tposted);
	free(r->tcompleted);
}

static int
rdma_run(struct rdma *r, uint16_t port_id)
{
	const struct perf_opts *o = r->o;
	struct perf_info info = { .gid_index = o->gid_index };
	uint64_t sizes[24], samples;
	unsigned nsizes, i;
	char name[16];

	nsizes = perf_sizes(o, sizes);
	if (rdma_open(r, port_id) != 0 || perf_oob_open(&r->oob, o) != 0 ||
	    perf_oob_check_params(&r->oob, o) != 0 ||
	    rdma_resources(r, sizes[nsizes - 1]) != 0)
		return -1;
	/* perftest keeps a timestamp per message in iteration mode */
	samples = o->duration > 0 ? 1 : o->iters * r->nqps;
	r->tposted = perf_stamps_alloc(samples);
	r->tcompleted = perf_stamps_alloc(samples);
	if (r->tposted == NULL || r->tcompleted == NULL) {
		fprintf(stderr, PERF_NAME ": no memory for %" PRIu64 " timestamps\n", samples);
		return -1;
	}
	snprintf(name, sizeof(name), "droce%u", r->dev);
	info.device = name;
	info.mtu = r->mtu_bytes;
	info.inline_size = r->inline_size;
	info.outs = r->outs;
	perf_report_begin(o, &info);
	if (rdma_exchange(r) != 0)
		return -1;
	if (rdma_connect(r) != 0)
		return -1;
	if (perf_wait_link(port_id, PERF_STALL_S) != 0 || rdma_warm_up(r) != 0)
		return -1;
	perf_report_table_head(o);
	for (i = 0; i < nsizes; i++)
		if ((o->mode == PERF_BW ? rdma_bw(r, sizes[i]) : rdma_lat(r, sizes[i])) != 0)
			return -1;
	perf_report_end(o);
	/* The last meeting: neither side tears down while the other still
	 * needs its engine to acknowledge something. */
	return perf_oob_sync(&r->oob, rdma_idle, r);
}

int
perf_rdma_main(const struct perf_opts *o, uint16_t port_id)
{
	struct rdma r = { .o = o, .oob = { .fd = -1 } };
	int rc;

	srand48((long)rte_rdtsc());
	rc = rdma_run(&r, port_id);
	rdma_close(&r);
	return rc == 0 ? 0 : 1;
}
