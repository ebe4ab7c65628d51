/* SPDX-License-Identifier: BSD-3-Clause */
/* What the console prints: ports, GIDs, faults, QPs, completions. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ethdev.h>

#include "droce_stats.h"
#include "testpmd.h"

const char *
tp_qp_type_name(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	case IBV_QPT_XRC_SEND: return "XRC_SEND";
	case IBV_QPT_XRC_RECV: return "XRC_RECV";
	default: return "?";
	}
}

const char *
tp_qp_state_name(enum ibv_qp_state s)
{
	switch (s) {
	case IBV_QPS_RESET: return "RESET";
	case IBV_QPS_INIT: return "INIT";
	case IBV_QPS_RTR: return "RTR";
	case IBV_QPS_RTS: return "RTS";
	case IBV_QPS_SQD: return "SQD";
	case IBV_QPS_SQE: return "SQE";
	case IBV_QPS_ERR: return "ERR";
	default: return "?";
	}
}

const char *
tp_wc_opcode_name(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	case IBV_WC_TSO: return "TSO";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

unsigned
tp_mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 0;
}

enum ibv_mtu
tp_mtu_from_bytes(unsigned bytes)
{
	enum ibv_mtu m;

	for (m = IBV_MTU_256; m <= IBV_MTU_4096; m++)
		if (tp_mtu_bytes(m) == bytes)
			return m;
	return 0;
}

void
tp_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

void
tp_access_str(int flags, char *buf, size_t len)
{
	static const struct {
		int flag;
		const char *name;
	} names[] = {
		{ IBV_ACCESS_LOCAL_WRITE, "lw" }, { IBV_ACCESS_REMOTE_WRITE, "rw" },
		{ IBV_ACCESS_REMOTE_READ, "rr" }, { IBV_ACCESS_REMOTE_ATOMIC, "ra" },
	};
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < RTE_DIM(names); i++)
		if ((flags & names[i].flag) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "",
					      names[i].name);
	if (n == 0)
		snprintf(buf, len, "none");
}

void
tp_show_port_info(unsigned p)
{
	const struct tp_port *tp = &tp_ports[p];
	char name[RTE_ETH_NAME_MAX_LEN], link[RTE_ETH_LINK_MAX_STR_LEN], gs[INET6_ADDRSTRLEN];
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	struct rte_ether_addr ea;
	struct rte_eth_link l;
	uint32_t ip = droce_port_ipv4(tp->port);
	int i, n = droce_port_gid_count(tp->port);

	if (rte_eth_dev_get_name_by_port(tp->ethdev, name) != 0)
		snprintf(name, sizeof(name), "?");
	if (rte_eth_link_get_nowait(tp->ethdev, &l) != 0 ||
	    rte_eth_link_to_str(link, sizeof(link), &l) < 0)
		snprintf(link, sizeof(link), "unknown");
	droce_port_mac(tp->port, &ea);
	rte_ether_format_addr(mac, sizeof(mac), &ea);
	printf("port %u: droce%u on ethdev %u (%s)\n", p, tp->dev, tp->ethdev, name);
	printf("  MAC %s  IPv4 ", mac);
	if (ip != 0)
		printf("%u.%u.%u.%u/%u", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff,
		       tp->prefix);
	else
		printf("none");
	printf("  MTU %u\n  %s\n", droce_port_mtu(tp->port), link);
	/* Every GID of a droce port is a RoCE v2 GID (droce_port.h). libdroce
	 * does not export _ibv_query_gid_ex, which ibv_query_gid_ex() needs. */
	for (i = 0; i < n; i++) {
		union ibv_gid g;

		if (droce_port_gid(tp->port, i, g.raw) != 0)
			continue;
		tp_gid_str(&g, gs, sizeof(gs));
		printf("  GID[%d] %-28s RoCE v2, %s, VLAN %u%s\n", i, gs,
		       g.raw[10] == 0xff && g.raw[11] == 0xff ? "IPv4" : "IPv6",
		       droce_port_gid_vlan(tp->port),
		       i == tp->sgid_index ? " (connect uses it)" : "");
	}
}

void
tp_show_port_stats(unsigned p)
{
	struct droce_dev_stats s;
	const char *name;
	uint64_t v;
	unsigned i;

	if (droce_dev_stats(tp_ports[p].dev, &s) != 0)
		return;
	printf("port %u (droce%u) counters:\n", p, tp_ports[p].dev);
	for (i = 0; (name = droce_port_stats_at(&s.port, i, &v)) != NULL; i++)
		printf("  %-22s %" PRIu64 "\n", name, v);
	printf("engine counters:\n");
	for (i = 0; (name = droce_engine_stats_at(&s.engine, i, &v)) != NULL; i++)
		printf("  %-22s %" PRIu64 "\n", name, v);
}

static void
show_fault_conf(const char *dir, const struct droce_fault_conf *c,
		const struct droce_fault_stats *s)
{
	printf("  %s: ", dir);
	if (!droce_fault_conf_active(c))
		printf("off");
	else
		printf("drop=%g,dup=%g,reorder=%g,corrupt=%g,delay=%g,delay_us=%u,segment=%u,"
		       "seed=%" PRIu64, c->drop, c->duplicate, c->reorder, c->corrupt, c->delay,
		       c->delay_us, c->segment, c->seed);
	printf("\n    dropped %" PRIu64 " duplicated %" PRIu64 " reordered %" PRIu64
	       " corrupted %" PRIu64 " delayed %" PRIu64 " segmented %" PRIu64 "\n",
	       s->dropped, s->duplicated, s->reordered, s->corrupted, s->delayed, s->segmented);
}

void
tp_show_fault(unsigned p)
{
	struct droce_fault_conf c;
	struct droce_port_stats s;

	droce_port_stats_get(tp_ports[p].port, &s);
	printf("port %u faults:\n", p);
	droce_port_fault_get(tp_ports[p].port, true, &c);
	show_fault_conf("rx", &c, &s.rx_fault);
	droce_port_fault_get(tp_ports[p].port, false, &c);
	show_fault_conf("tx", &c, &s.tx_fault);
}

void
tp_show_wc(const struct tp_obj *cq, const struct ibv_wc *wc)
{
	printf("cq %u: wr_id %" PRIu64 " status %s opcode %s byte_len %u imm ", cq->id,
	       wc->wr_id, ibv_wc_status_str(wc->status), tp_wc_opcode_name(wc->opcode),
	       wc->byte_len);
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		printf("0x%x", be32toh(wc->imm_data));
	else
		printf("-");
	printf(" qp_num 0x%x src_qp 0x%x", wc->qp_num, wc->src_qp);
	if (wc->wc_flags & IBV_WC_GRH)
		printf(" grh");
	if (wc->status != IBV_WC_SUCCESS)
		printf(" vendor_err 0x%x", wc->vendor_err);
	printf("\n");
}

static int
qp_query(const struct tp_obj *q, struct ibv_qp_attr *attr, struct ibv_qp_init_attr *init)
{
	return tp_verbs_rc(ibv_query_qp(q->qp.qp, attr, ~0, init));
}

/* The header line of a QP: id, type, number, state. */
static void
qp_line(const struct tp_obj *q, enum ibv_qp_state st)
{
	printf("qp %u: %s qpn 0x%x (%u) port %u state %s%s\n", q->id,
	       tp_qp_type_name(q->qp.type), q->qp.qp->qp_num, q->qp.qp->qp_num, q->port,
	       tp_qp_state_name(st), q->qp.opened ? " (opened handle)" : "");
}

int
tp_show_qp(const struct tp_obj *q)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	char gs[INET6_ADDRSTRLEN], acc[32];
	int rc = qp_query(q, &a, &init);

	if (rc != 0)
		return tp_error(rc, "query qp %u", q->id);
	qp_line(q, a.qp_state);
	tp_access_str(a.qp_access_flags, acc, sizeof(acc));
	tp_gid_str(&a.ah_attr.grh.dgid, gs, sizeof(gs));
	/* The names `modify qp` takes. */
	printf("  port %u pkey %u qkey 0x%x access %s mtu %u\n", a.port_num, a.pkey_index,
	       a.qkey, acc, tp_mtu_bytes(a.path_mtu));
	printf("  dqpn 0x%x rq_psn 0x%x sq_psn 0x%x\n", a.dest_qp_num, a.rq_psn, a.sq_psn);
	printf("  timeout %u retry %u rnr_retry %u min_rnr %u max_rd %u max_dest_rd %u\n",
	       a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer, a.max_rd_atomic,
	       a.max_dest_rd_atomic);
	printf("  dgid %s sgid_index %u hop_limit %u\n", gs, a.ah_attr.grh.sgid_index,
	       a.ah_attr.grh.hop_limit);
	printf("  caps: send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u sq_sig_all %d\n",
	       init.cap.max_send_wr, init.cap.max_recv_wr, init.cap.max_send_sge,
	       init.cap.max_recv_sge, init.cap.max_inline_data, init.sq_sig_all);
	return 0;
}

void
tp_show_qps(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct tp_obj *o;
	unsigned n = 0;

	for (o = tp_obj_next(NULL); o != NULL; o = tp_obj_next(o)) {
		if (o->kind != TP_QP)
			continue;
		n++;
		if (qp_query(o, &a, &init) != 0)
			a.qp_state = (enum ibv_qp_state)-1;
		qp_line(o, a.qp_state);
	}
	if (n == 0)
		printf("no QPs\n");
}

void
tp_show_connect_info(const struct tp_obj *q)
{
	char gs[INET6_ADDRSTRLEN];
	struct tp_peer me;
	struct tp_obj *o;

	tp_peer_of(q, &me);
	tp_gid_str(&me.gid, gs, sizeof(gs));
	printf("qp %u: qpn 0x%x gid %s psn 0x%x mtu %u\n", q->id, me.qpn, gs, me.psn,
	       tp_mtu_bytes(me.mtu));
	printf("  the peer connects with: connect qp <its qp> remote 0x%x %s 0x%x\n", me.qpn,
	       gs, me.psn);
	for (o = tp_obj_next(NULL); o != NULL; o = tp_obj_next(o))
		if (o->kind == TP_MR && o->port == q->port)
			printf("  mr %u: rkey 0x%x addr 0x%" PRIxPTR " len %zu"
			       " (post ... remote 0x%x:0x%" PRIxPTR ")\n", o->id, o->mr.mr->rkey,
			       (uintptr_t)o->mr.buf, o->mr.size, o->mr.mr->rkey,
			       (uintptr_t)o->mr.buf);
	if (q->qp.type == IBV_QPT_UD)
		printf("  qkey 0x%x\n", TP_QKEY);
}
