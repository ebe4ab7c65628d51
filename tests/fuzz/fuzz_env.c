/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every input shares: the EAL (no hugepages), a ring ethdev whose RX
 * and TX rings the harness holds (it is the peer on the other end of the
 * wire), a droce device on it whose engine runs only when the harness
 * says, and the objects that outlive one input.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "droce.h"
#include "fuzz_rx.h"

#define IP_US RTE_IPV4(10, 99, 0, 1)
#define IP_PEER RTE_IPV4(10, 99, 0, 2)
#define RING_SIZE 1024

struct fz_env fz;

static const struct rte_ether_addr mac_us = {{ 0x02, 0x00, 0x00, 0x00, 0x99, 0x01 }};
static const struct rte_ether_addr mac_peer = {{ 0x02, 0x00, 0x00, 0x00, 0x99, 0x02 }};

static void __rte_noreturn
fail(const char *what)
{
	fprintf(stderr, "fuzz_rx: setup failed: %s\n", what);
	abort();
}

/* The unit tests' EAL arguments (no hugepages, no files), quiet. The EAL
 * pins this thread to lcore 0: put its affinity back, so parallel fuzzing
 * jobs spread over the CPUs. */
static void
env_eal(void)
{
	char *argv[] = { "fuzz_rx", "-l", "0", "--no-huge", "-m", "256", "--no-shconf",
			 "--no-pci", "--no-telemetry", "--log-level=3", NULL };
	cpu_set_t cpus;
	bool have_cpus = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;

	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0)
		fail("rte_eal_init");
	if (have_cpus)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
}

static void
env_port(void)
{
	struct droce_port_conf conf = {
		.mac_set = true, .mac = mac_us, .ipv4 = IP_US, .ipv4_prefix = 24,
		.mtu = 4096, .link_up = true,
	};
	struct rte_mempool *mp;
	int port;

	fz.rx = rte_ring_create("fuzz_rx", RING_SIZE, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	fz.tx = rte_ring_create("fuzz_tx", RING_SIZE, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (fz.rx == NULL || fz.tx == NULL)
		fail("rings");
	port = rte_eth_from_rings("fuzz_port", &fz.rx, 1, &fz.tx, 1, SOCKET_ID_ANY);
	if (port < 0)
		fail("rte_eth_from_rings");
	conf.port_id = (uint16_t)port;
	if (droce_dev_attach(&conf, &fz.dev) != 0)
		fail("droce_dev_attach");
	mp = droce_port_mempool(droce_dev_port(fz.dev));
	fz.frames = rte_pktmbuf_pool_create("fuzz_frames", 511, 0, rte_pktmbuf_priv_size(mp),
					    rte_pktmbuf_data_room_size(mp), SOCKET_ID_ANY);
	if (fz.frames == NULL)
		fail("frame pool");

	fz.l3.src_mac = mac_peer;
	fz.l3.dst_mac = mac_us;
	fz.l3.ttl = 64;
	fz.l3.udp_sport = 0xc000;
	/* GID 1 is ::ffff:10.99.0.1; the peer's differs in the last byte. */
	if (droce_port_gid(droce_dev_port(fz.dev), 1, fz.l3.dgid) != 0)
		fail("GID 1");
	memcpy(fz.l3.sgid, fz.l3.dgid, 16);
	fz.l3.sgid[15] = IP_PEER & 0xff;
	memcpy(fz.peer_gid.raw, fz.l3.sgid, 16);
}

/* A heap block of @p len registered with @p access: ASan's redzones are
 * right at its ends. */
static struct ibv_mr *
env_mr(struct ibv_pd *pd, uint8_t **buf, uint32_t len, int access)
{
	struct ibv_mr *mr;

	*buf = calloc(1, len);
	if (*buf == NULL)
		fail("calloc");
	mr = ibv_reg_mr(pd, *buf, len, access);
	if (mr == NULL)
		fail("ibv_reg_mr");
	return mr;
}

static void
env_objects(void)
{
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_ah_attr ah = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = fz.peer_gid, .sgid_index = 1, .hop_limit = 64 },
	};
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	unsigned i;

	fz.ctx = ibv_open_device(droce_dev_ibv(fz.dev));
	if (fz.ctx == NULL)
		fail("ibv_open_device");
	/* Events are drained between frames, never waited for. */
	if (fcntl(fz.ctx->async_fd, F_SETFL, fcntl(fz.ctx->async_fd, F_GETFL) | O_NONBLOCK) != 0)
		fail("async_fd");
	fz.pd = ibv_alloc_pd(fz.ctx);
	fz.pd_other = ibv_alloc_pd(fz.ctx);
	fz.xrcd = ibv_open_xrcd(fz.ctx, &xa);
	fz.ah = fz.pd != NULL ? ibv_create_ah(fz.pd, &ah) : NULL;
	if (fz.pd == NULL || fz.pd_other == NULL || fz.xrcd == NULL || fz.ah == NULL)
		fail("PD, XRC domain or AH");
	fz.mr_len[FZ_MR_REMOTE] = 65536;
	fz.mr_len[FZ_MR_LOCAL] = 4096;
	fz.mr_len[FZ_MR_OTHER_PD] = 4096;
	fz.mr[FZ_MR_REMOTE] = env_mr(fz.pd, &fz.mr_buf[FZ_MR_REMOTE], 65536, remote);
	fz.mr[FZ_MR_LOCAL] = env_mr(fz.pd, &fz.mr_buf[FZ_MR_LOCAL], 4096, IBV_ACCESS_LOCAL_WRITE);
	fz.mr[FZ_MR_OTHER_PD] = env_mr(fz.pd_other, &fz.mr_buf[FZ_MR_OTHER_PD], 4096, remote);
	for (i = 0; i < FZ_SLOTS; i++)
		fz.slot_mr[i] = env_mr(fz.pd, &fz.slot_buf[i], FZ_SLOT_BUF, IBV_ACCESS_LOCAL_WRITE);
}

void
fz_env_init(void)
{
	env_eal();
	env_port();
	env_objects();
}

void
fz_env_clear(void)
{
	unsigned k;

	for (k = 0; k < FZ_NMR; k++)
		memset(fz.mr_buf[k], 0, fz.mr_len[k]);
}

void
fz_env_run(void)
{
	struct rte_mbuf *out[64];
	unsigned i, n;
	int work;

	for (i = 0; i < 16; i++) {
		work = droce_dev_poll(fz.dev);
		n = rte_ring_dequeue_burst(fz.tx, (void **)out, RTE_DIM(out), NULL);
		rte_pktmbuf_free_bulk(out, n);
		if (work <= 0 && n == 0)
			break;
	}
}
