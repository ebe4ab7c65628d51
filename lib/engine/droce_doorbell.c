/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The doorbell's two barriers (droce_engine_doorbell()).
 *
 * A poster stores the send queue's producer index and then reads whether
 * the QP is idle; the engine, letting a QP go, stores idle and then reads
 * the producer index. Each side needs its store ordered before its load
 * (x86 lets a load pass an earlier store), or both can miss the other and
 * the WQE waits for nobody. A fence on both sides does it, but the
 * poster's costs every ibv_post_send() the time to drain its store buffer
 * (the WQE just written: some 6 cycles per 64 B WRITE in engine_bench),
 * while the engine lets a QP go rarely.
 *
 * So the cost moves to the rare side, as userspace RCU and folly's
 * asymmetric barriers do: the engine calls membarrier(2) with
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED, which makes every thread of the
 * process that is running execute a full memory barrier (and a thread
 * that is not running passed one when it was switched out). A poster's
 * store and load, kept in order by the compiler, then cannot both miss the
 * engine's: either its load came after the engine's barrier and sees idle,
 * or its store was visible before the barrier returned and the engine's
 * load sees it. The engine calls it at most once per linger period (see
 * droce_engine.c), some 1-4 us here.
 *
 * Without membarrier (kernels before 4.14, seccomp filters) both sides
 * fence, as before. The call fails for a process that forked after the
 * registration, which DPDK does not support; posts fence from then on.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_atomic.h>

#include "droce_engine.h"
#include "droce_log.h"

#ifdef __linux__
#include <linux/membarrier.h>
#endif

bool droce_doorbell_light;

static pthread_once_t doorbell_once = PTHREAD_ONCE_INIT;

#if defined(__linux__) && defined(SYS_membarrier)
static long
doorbell_membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

static void
doorbell_register(void)
{
	long cmds = doorbell_membarrier(MEMBARRIER_CMD_QUERY);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
	    doorbell_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
		DROCE_LOG(INFO, "no membarrier(PRIVATE_EXPEDITED): every post fences");
		return;
	}
	__atomic_store_n(&droce_doorbell_light, true, __ATOMIC_RELAXED);
}

void
droce_doorbell_heavy(void)
{
	if (__atomic_load_n(&droce_doorbell_light, __ATOMIC_RELAXED)) {
		if (doorbell_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
			return;
		/* From now on posts fence. One that did not may have been
		 * missed this once: its QP's next post kicks it. */
		DROCE_LOG(WARNING, "membarrier failed (%d): every post fences from now on", errno);
		__atomic_store_n(&droce_doorbell_light, false, __ATOMIC_RELAXED);
	}
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#else
static void
doorbell_register(void)
{
}

void
droce_doorbell_heavy(void)
{
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

void
droce_doorbell_init(void)
{
	pthread_once(&doorbell_once, doorbell_register);
}
