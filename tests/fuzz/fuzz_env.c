/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every input shares: a droce device on a ring ethdev whose rings the
 * harness holds (tests/common's droce_peer: the EAL without hugepages, the
 * engine run only when the harness says), a pool to build frames in, and
 * the objects that outlive one input.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "droce.h"
#include "fuzz_rx.h"

struct fz_env fz;

static void __rte_noreturn
die(const char *what)
{
	fprintf(stderr, "fuzz_rx: setup failed: %s\n", what);
	abort();
}

/* The device on a ring ethdev, quiet. The EAL pins this thread to lcore 0:
 * its affinity is put back, so parallel fuzzing jobs spread over the CPUs. */
static void
env_port(void)
{
	cpu_set_t cpus;
	bool have_cpus = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;

	if (droce_peer_open(&fz.peer, 4096) != 0)
		die("droce_peer_open");
	if (have_cpus)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	rte_log_set_global_level(RTE_LOG_ERR);
	fz.frames = rte_pktmbuf_pool_create("fuzz_frames", 511, 0,
					    rte_pktmbuf_priv_size(fz.peer.mp),
					    rte_pktmbuf_data_room_size(fz.peer.mp), SOCKET_ID_ANY);
	if (fz.frames == NULL)
		die("frame pool");
}

/* A heap block of @p len registered with @p access: ASan's redzones are
 * right at its ends. */
static struct ibv_mr *
env_mr(struct ibv_pd *pd, uint8_t **buf, uint32_t len, int access)
{
	struct ibv_mr *mr;

	*buf = calloc(1, len);
	if (*buf == NULL)
		die("calloc");
	mr = ibv_reg_mr(pd, *buf, len, access);
	if (mr == NULL)
		die("ibv_reg_mr");
	return mr;
}

static void
env_objects(void)
{
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_ah_attr ah = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = fz.peer.gid, .sgid_index = 1, .hop_limit = 64 },
	};
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						     IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	unsigned i;

	/* Events are drained between frames, never waited for. */
	if (fcntl(fz.peer.ctx->async_fd, F_SETFL, fcntl(fz.peer.ctx->async_fd, F_GETFL) | O_NONBLOCK) != 0)
		die("async_fd");
	fz.pd = ibv_alloc_pd(fz.peer.ctx);
	fz.pd_other = ibv_alloc_pd(fz.peer.ctx);
	fz.xrcd = ibv_open_xrcd(fz.peer.ctx, &xa);
	fz.ah = fz.pd != NULL ? ibv_create_ah(fz.pd, &ah) : NULL;
	if (fz.pd == NULL || fz.pd_other == NULL || fz.xrcd == NULL || fz.ah == NULL)
		die("PD, XRC domain or AH");
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
	droce_peer_run(&fz.peer);
	droce_peer_drain(&fz.peer);
}
