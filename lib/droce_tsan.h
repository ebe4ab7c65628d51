/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Happens-before edges for ThreadSanitizer where droce synchronises
 * through DPDK code that is not instrumented (Debian's DPDK libraries are
 * built without TSan): RCU grace periods (rte_rcu_qsbr_synchronize) and
 * the lock-free rte_hash. TSan sees neither side's atomics there, so it
 * would take what they order for races. Without TSan these are nothing.
 */
#ifndef DROCE_TSAN_H
#define DROCE_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define DROCE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DROCE_TSAN 1
#endif
#endif

#ifdef DROCE_TSAN
#include <sanitizer/tsan_interface.h>
/** What this thread did so far happens before a later DROCE_TSAN_ACQUIRE(@p p). */
#define DROCE_TSAN_RELEASE(p) __tsan_release((void *)(p))
/** What every DROCE_TSAN_RELEASE(@p p) so far followed happens before this thread's next steps. */
#define DROCE_TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#else
#define DROCE_TSAN_RELEASE(p) do { } while (0)
#define DROCE_TSAN_ACQUIRE(p) do { } while (0)
#endif

#endif /* DROCE_TSAN_H */
