/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "droce_peer.h"
#include "droce_port.h"
#include "droce_stats.h"

/* The EAL starts once per process, from DROCE_TEST_EAL when set. */
static int
peer_eal(void)
{
	static int done;
	char buf[512], *argv[32];
	const char *env = getenv("DROCE_TEST_EAL");
	int argc = 0;

	if (done)
		return 0;
	snprintf(buf, sizeof(buf), "droce-peer %s",
		 env != NULL ? env : "-l 0 --no-huge -m 256 --no-shconf --no-pci --no-telemetry");
	for (char *t = strtok(buf, " "); t != NULL && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0)
		return -rte_errno;
	done = 1;
	return 0;
}

static void
gid_v4(uint32_t ip, uint8_t gid[16])
{
	rte_be32_t be = rte_cpu_to_be_32(ip);

	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, &be, 4);
}

int
droce_peer_open(struct droce_peer *p, uint16_t mtu)
{
	static unsigned n;
	struct droce_port_conf conf = {
		.ipv4 = DROCE_PEER_DEV_IPV4, .ipv4_prefix = 24, .mtu = mtu, .link_up = true,
	};
	char name[32];
	int rc = peer_eal(), port;

	if (rc != 0)
		return rc;
	/* Congestion control as a configured port has it (ECN, CNPs, DCQCN). */
	droce_cc_conf_default(&conf.cc);
	memset(p, 0, sizeof(*p));
	snprintf(name, sizeof(name), "peer_in%u", n);
	p->to_dev = rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "peer_out%u", n);
	p->from_dev = rte_ring_create(name, 1024, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (p->to_dev == NULL || p->from_dev == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "peer%u", n++);
	port = rte_eth_from_rings(name, &p->to_dev, 1, &p->from_dev, 1, SOCKET_ID_ANY);
	if (port < 0)
		return -rte_errno;
	conf.port_id = (uint16_t)port;
	rc = droce_dev_attach(&conf, &p->dev);
	if (rc != 0)
		return rc;
	p->ctx = ibv_open_device(droce_dev_ibv(p->dev));
	if (p->ctx == NULL)
		return -errno;
	p->mp = droce_port_mempool(droce_dev_port(p->dev));
	/* The peer: 10.99.0.2 with a MAC of its own, to the device. */
	p->l3.src_mac = (struct rte_ether_addr){ { 0x02, 0, 0, 0, 0, 0x02 } };
	droce_port_mac(droce_dev_port(p->dev), &p->l3.dst_mac);
	p->l3.ttl = 64;
	p->l3.udp_sport = 0xc000;
	gid_v4(DROCE_PEER_IPV4, p->l3.sgid);
	gid_v4(DROCE_PEER_DEV_IPV4, p->l3.dgid);
	memcpy(p->gid.raw, p->l3.sgid, 16);
	return 0;
}

void
droce_peer_verbs(struct droce_peer *p, size_t len, int access, struct ibv_pd **pd,
		 struct ibv_cq **cq, uint8_t **buf, struct ibv_mr **mr)
{
	*pd = ibv_alloc_pd(p->ctx);
	*cq = ibv_create_cq(p->ctx, 256, NULL, NULL, 0);
	*buf = aligned_alloc(4096, len);
	*mr = *pd != NULL && *buf != NULL ? ibv_reg_mr(*pd, *buf, len, access) : NULL;
}

void
droce_peer_fixture(struct droce_peer *p, size_t len, int access, struct ibv_pd **pd,
		   struct ibv_cq **cq, uint8_t **buf, struct ibv_mr **mr)
{
	if (*pd != NULL)
		return;
	if (droce_peer_open(p, 4096) != 0) {
		fprintf(stderr, "droce_peer_fixture: no device\n");
		abort();
	}
	droce_peer_verbs(p, len, access, pd, cq, buf, mr);
	if (*cq == NULL || *mr == NULL) {
		fprintf(stderr, "droce_peer_fixture: no CQ or MR\n");
		abort();
	}
}

void
droce_peer_teach(struct droce_peer *p)
{
	struct droce_aeth aeth;

	droce_aeth_set(&aeth, DROCE_AETH_ACK | DROCE_AETH_CREDIT_INVALID, 0);
	droce_peer_send(p, &(struct droce_peer_frame){ .opcode = DROCE_OP_ACK,
						       .dqpn = 0xfffffe, .ext = &aeth,
						       .ext_len = sizeof(aeth) });
	droce_peer_drain(p);
}

void
droce_peer_close(struct droce_peer *p)
{
	droce_peer_run(p);
	ibv_close_device(p->ctx);
	droce_dev_detach(p->dev);
	droce_peer_drain(p);
}

struct rte_mbuf *
droce_peer_build(const struct droce_peer *p, const struct droce_peer_frame *f)
{
	unsigned pad = (4 - (f->len & 3)) & 3;
	uint32_t l4 = (uint32_t)sizeof(struct droce_bth) + f->ext_len + f->len + pad;
	struct droce_l3_addr l3 = p->l3;
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->mp), *c;
	unsigned bth_off;
	uint8_t *d;

	if (m == NULL)
		return NULL;
	l3.tclass = f->tclass;
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(droce_l3_hdr_len(&l3) + l4));
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	bth_off = droce_l3_hdr_write(m, &l3, l4);
	droce_bth_set((struct droce_bth *)(d + bth_off), f->opcode, f->se, pad,
		      f->pkey != 0 ? f->pkey : DROCE_PKEY_DEFAULT, f->dqpn, f->ackreq, f->psn);
	d += bth_off + sizeof(struct droce_bth);
	if (f->ext_len)
		memcpy(d, f->ext, f->ext_len);
	if (f->len)
		memcpy(d + f->ext_len, f->payload, f->len);
	memset(d + f->ext_len + f->len, 0, pad);
	droce_icrc_append(m, (uint16_t)(bth_off - sizeof(struct rte_udp_hdr) -
					sizeof(struct rte_ipv4_hdr)));
	if (f->bad_icrc)
		*rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m) - 1) ^= 0x5a;
	if (f->seg == 0)
		return m;
	c = droce_mbuf_split(m, p->mp, (uint16_t)f->seg);
	rte_pktmbuf_free(m);
	return c;
}

void
droce_peer_run(struct droce_peer *p)
{
	/* Enough iterations for a burst of frames and the answers they owe. */
	for (int i = 0; i < 64 && droce_dev_poll(p->dev) != 0; i++)
		;
}

void
droce_peer_queue(struct droce_peer *p, const struct droce_peer_frame *f)
{
	struct rte_mbuf *m = droce_peer_build(p, f);

	if (m == NULL || rte_ring_enqueue(p->to_dev, m) != 0) {
		fprintf(stderr, "droce_peer_queue: no mbuf or no room\n");
		abort();
	}
}

void
droce_peer_send(struct droce_peer *p, const struct droce_peer_frame *f)
{
	droce_peer_queue(p, f);
	droce_peer_run(p);
}

struct rte_mbuf *
droce_peer_recv(struct droce_peer *p, struct droce_pkt *pkt)
{
	struct rte_mbuf *m;

	droce_peer_run(p);
	if (rte_ring_dequeue(p->from_dev, (void **)&m) != 0)
		return NULL;
	if (droce_pkt_parse(m, pkt, true) != DROCE_PARSE_OK)
		pkt->op = NULL;
	return m;
}

int
droce_peer_poll_cq(struct droce_peer *p, struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	int n = 0, k;

	droce_peer_run(p);
	while (n < max && (k = ibv_poll_cq(cq, max - n, wc + n)) > 0)
		n += k;
	return n;
}

unsigned
droce_peer_drain(struct droce_peer *p)
{
	struct rte_mbuf *m;
	unsigned n = 0;

	while (rte_ring_dequeue(p->from_dev, (void **)&m) == 0) {
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

uint64_t
droce_peer_stat(const struct droce_peer *p, const char *name)
{
#define PEER_RX_STAT(f) if (strcmp(name, #f) == 0) return s.engine.rx.f;
#define PEER_CC_STAT(f) if (strcmp(name, #f) == 0) return s.engine.cc.f;
#define PEER_ZC_STAT(f) if (strcmp(name, #f) == 0) return s.engine.zc.f;
	struct droce_dev_stats s;

	if (droce_dev_stats(p->dev, &s) != 0)
		abort();
	DROCE_RX_STATS(PEER_RX_STAT)
	DROCE_CC_STATS(PEER_CC_STAT)
	DROCE_ZC_STATS(PEER_ZC_STAT)
#undef PEER_RX_STAT
#undef PEER_CC_STAT
#undef PEER_ZC_STAT
	fprintf(stderr, "droce_peer_stat: no counter %s\n", name);
	abort();
}
