/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The payload of a transmitted packet: referenced where it lies (zero
 * copy), or copied into the frame's mbuf.
 *
 * Zero copy: the frame droce_tx_start() built with room for the payload
 * is cut back to its headers, and chained to one external-buffer mbuf per
 * SGE the payload touches (rte_pktmbuf_attach_extbuf(), pointing into the
 * memory region), then to a small tail mbuf with the pad bytes; the ICRC
 * goes there too, computed over the payload in place. Every frame gets a
 * reference object from a pool: its rte_mbuf_ext_shared_info counts the
 * frame's external segments, and when the last one is freed (by the PMD,
 * the fault stage, or whoever drops the frame) the callback drops what the
 * frame held: a reference on each region (ibv_dereg_mr() waits for them),
 * and on the send WQE and QP it belongs to (the WQE completes, the QP is
 * freed, only once none is left).
 *
 * Which ports: a PMD that passes the mbuf on (ring) takes any process
 * address in a chain, and so would PMDs that copy the frame with the CPU
 * (memif, af_packet, tap); but those copy each segment anyway, and copying
 * from a chain of three costs them more than droce's one copy saves
 * (docs/benchmarks.md): they get chains only when DROCE_ZCOPY asks.
 * af_xdp sends only the first segment and wants UMEM buffers: copy. Any
 * other PMD drives a device that reads the payload by DMA: it must take
 * chains (RTE_ETH_TX_OFFLOAD_MULTI_SEGS) and the region must be mapped for
 * the device at registration (droce_verbs_mr.c), with IOVA = VA.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "droce_log.h"
#include "droce_mw.h"
#include "droce_port.h"
#include "droce_transport.h"

/* Reference objects: one per zero-copy frame in flight. More than TX
 * rings, staging and the fault stage hold together; when they run out,
 * payloads are copied (tx_copy_no_ref). */
#define ZC_REFS 16383
#define ZC_REFS_CACHE 256

/* What one zero-copy frame holds until its last segment is freed. */
struct zc_ref {
	struct rte_mbuf_ext_shared_info shinfo; /* refcnt: the frame's external segments */
	uint32_t *wqe_refs;          /* the send WQE's count, or NULL (READ response) */
	uint32_t *qp_refs;           /* its QP's */
	unsigned nb_mr;
	struct droce_mr *mr[DROCE_ZC_SEGS_MAX];
};

static struct rte_mempool *zc_pool;
static pthread_mutex_t zc_lock = PTHREAD_MUTEX_INITIALIZER;
static bool zc_enabled = true;
/* Also on ports whose PMD copies anyway (DROCE_ZC_CPU_COPY). */
static bool zc_everywhere;
static uint32_t zc_min = DROCE_ZC_MIN_DEFAULT;
/* Per ethdev: 0 not looked at yet, else enum droce_zc_mode + 1. */
static uint8_t zc_port_mode[RTE_MAX_ETHPORTS];
/* Per ethdev: its PMD has no rte_eth_tx_done_cleanup(). */
static bool zc_no_cleanup[RTE_MAX_ETHPORTS];

int
droce_zc_init(void)
{
	const char *env;
	int rc = 0;

	pthread_mutex_lock(&zc_lock);
	if (zc_pool != NULL)
		goto out;
	env = getenv("DROCE_ZCOPY");
	if (env != NULL && env[0] != '\0') {
		char *end;
		unsigned long v = strtoul(env, &end, 0);

		if (strcmp(env, "off") == 0) {
			zc_enabled = false;
		} else if (strcmp(env, "on") == 0) {
			zc_everywhere = true;
		} else if (*end == '\0' && v <= UINT32_MAX) {
			zc_everywhere = true;
			zc_min = (uint32_t)v;
		} else {
			DROCE_LOG(WARNING, "DROCE_ZCOPY=%s: neither off, on nor a byte count", env);
		}
	}
	/* Engines look at it without the lock, on frames whose SGEs may name
	 * no region yet. */
	__atomic_store_n(&zc_pool, rte_mempool_create("droce_zc_refs", ZC_REFS,
			 sizeof(struct zc_ref), ZC_REFS_CACHE, 0, NULL, NULL, NULL, NULL,
			 SOCKET_ID_ANY, 0), __ATOMIC_RELEASE);
	if (zc_pool == NULL) {
		rc = -rte_errno;
		DROCE_LOG(WARNING, "zero-copy TX off: no pool of references (%s)",
			  rte_strerror(rte_errno));
	}
out:
	pthread_mutex_unlock(&zc_lock);
	return rc;
}

void
droce_zc_configure(bool enable, uint32_t min_len)
{
	/* Read by the engines as they build frames: each on its own. */
	__atomic_store_n(&zc_enabled, enable, __ATOMIC_RELAXED);
	__atomic_store_n(&zc_everywhere, enable, __ATOMIC_RELAXED);
	__atomic_store_n(&zc_min, min_len, __ATOMIC_RELAXED);
}

/* PMDs that copy a frame with the CPU, segment by segment: any address
 * will do. */
static const char *const zc_cpu_pmds[] = {
	"net_memif", "net_af_packet", "net_tap",
};

static enum droce_zc_mode
zc_port_probe(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == NULL ||
	    rte_eth_dev_conf_get(port_id, &conf) != 0)
		return DROCE_ZC_OFF;
	for (unsigned i = 0; i < RTE_DIM(zc_cpu_pmds); i++)
		if (strcmp(info.driver_name, zc_cpu_pmds[i]) == 0)
			return DROCE_ZC_CPU_COPY;
	/* The mbufs go to the ethdev at the other end, in this process. */
	if (strcmp(info.driver_name, "net_ring") == 0)
		return DROCE_ZC_PASS;
	/* af_xdp sends the first segment only, from UMEM memory. */
	if (strcmp(info.driver_name, "net_af_xdp") == 0)
		return DROCE_ZC_OFF;
	/* Enabled, not only offered: an ethdev the application configured
	 * (a shared port) may have left chains off. */
	if ((conf.txmode.offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) &&
	    rte_eal_iova_mode() == RTE_IOVA_VA)
		return DROCE_ZC_DMA;
	return DROCE_ZC_OFF;
}

enum droce_zc_mode
droce_zc_port_mode(uint16_t port_id)
{
	uint8_t m = __atomic_load_n(&zc_port_mode[port_id], __ATOMIC_RELAXED);

	/* Engines of one port may race here: they find the same answer. */
	if (m == 0) {
		m = (uint8_t)(zc_port_probe(port_id) + 1);
		__atomic_store_n(&zc_port_mode[port_id], m, __ATOMIC_RELAXED);
	}
	return (enum droce_zc_mode)(m - 1);
}

void
droce_zc_reclaim(struct droce_tx *tx)
{
	uint16_t port_id = droce_port_ethdev(tx->port);

	/* CPU-copying PMDs free a frame inside rte_eth_tx_burst(); a NIC's
	 * PMD frees sent ones only when it needs descriptors, which may be
	 * never once the traffic stops. The engine's TX queue is 0 (the
	 * only one droce_port_tx() uses), and only the engine calls this. */
	if (droce_zc_port_mode(port_id) != DROCE_ZC_DMA || zc_no_cleanup[port_id])
		return;
	if (rte_eth_tx_done_cleanup(port_id, 0, 0) == -ENOTSUP)
		zc_no_cleanup[port_id] = true;
}

/* The driver (or whoever) freed the frame's last external segment. */
static void
zc_free_cb(void *addr __rte_unused, void *opaque)
{
	struct zc_ref *r = opaque;

	for (unsigned i = 0; i < r->nb_mr; i++)
		__atomic_sub_fetch(&r->mr[i]->zc_refs, 1, __ATOMIC_RELEASE);
	/* The WQE before the QP: the QP's count reaching 0 lets it be freed. */
	if (r->wqe_refs != NULL) {
		__atomic_sub_fetch(r->wqe_refs, 1, __ATOMIC_RELEASE);
		__atomic_sub_fetch(r->qp_refs, 1, __ATOMIC_RELEASE);
	}
	rte_mempool_put(zc_pool, r);
}

/* The runs of the payload, where they lie. */
struct zc_runs {
	unsigned n;
	bool too_many;
	struct droce_mr *mr[DROCE_ZC_SEGS_MAX];
	uint8_t *addr[DROCE_ZC_SEGS_MAX];
	uint32_t len[DROCE_ZC_SEGS_MAX];
	bool unmapped;
};

static int
zc_run(void *arg, struct droce_mr *mr, uint8_t *addr, uint64_t pos __rte_unused, uint64_t n)
{
	struct zc_runs *z = arg;

	if (z->n == DROCE_ZC_SEGS_MAX) {
		z->too_many = true;
		return 0;
	}
	z->unmapped |= !mr->dma_mapped;
	z->mr[z->n] = mr;
	z->addr[z->n] = addr;
	z->len[z->n] = (uint32_t)n;
	z->n++;
	return 0;
}

/*
 * Chain the runs of @p z behind the headers of @p m. @return false when
 * mbufs or reference objects ran out (@p m is then as it was).
 */
static bool
zc_chain(struct droce_tx *tx, struct rte_mbuf *m, const struct zc_runs *z, uint32_t len,
	 struct droce_qp *qp, struct droce_send_wqe *w)
{
	struct rte_mbuf *segs[DROCE_ZC_SEGS_MAX + 1];
	unsigned pad = (4 - (len & 3)) & 3;
	struct zc_ref *r;
	char *tail;

	if (rte_mempool_get(zc_pool, (void **)&r) != 0)
		return false;
	if (rte_pktmbuf_alloc_bulk(tx->mp, segs, z->n + 1) != 0) {
		rte_mempool_put(zc_pool, r);
		return false;
	}
	r->shinfo.free_cb = zc_free_cb;
	r->shinfo.fcb_opaque = r;
	rte_mbuf_ext_refcnt_set(&r->shinfo, (uint16_t)z->n);
	r->nb_mr = z->n;
	r->wqe_refs = w != NULL ? &w->zc_refs : NULL;
	r->qp_refs = w != NULL ? &qp->zc_refs : NULL;
	/* The headers stay in the first mbuf: the payload and pad room go. */
	rte_pktmbuf_trim(m, (uint16_t)(len + pad));
	for (unsigned i = 0; i < z->n; i++) {
		struct rte_mbuf *s = segs[i];

		r->mr[i] = z->mr[i];
		__atomic_add_fetch(&z->mr[i]->zc_refs, 1, __ATOMIC_RELAXED);
		/* IOVA = VA: CPU-copying PMDs ignore it, and regions are
		 * mapped for DMA at that IOVA (droce_verbs_mr.c). */
		rte_pktmbuf_attach_extbuf(s, z->addr[i], (rte_iova_t)(uintptr_t)z->addr[i],
					  (uint16_t)z->len[i], &r->shinfo);
		s->data_len = (uint16_t)z->len[i];
	}
	/* The pad bytes, and room for the ICRC droce_tx_finish() appends. */
	tail = rte_pktmbuf_append(segs[z->n], (uint16_t)pad);
	memset(tail, 0, pad);
	/* droce_tx_start() built the frame in one mbuf. */
	for (unsigned i = 0; i <= z->n; i++) {
		(i == 0 ? m : segs[i - 1])->next = segs[i];
		m->pkt_len += segs[i]->data_len;
	}
	m->nb_segs = (uint16_t)(z->n + 2);
	if (w != NULL) {
		__atomic_add_fetch(&w->zc_refs, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&qp->zc_refs, 1, __ATOMIC_RELAXED);
	}
	return true;
}

/* Out of line: its caller's common case is the gate read already. */
void __rte_noinline
droce_tx_zc_gate(struct droce_tx *tx)
{
	enum droce_zc_mode mode = DROCE_ZC_OFF;

	tx->zc_gate_at = tx->now;
	if (__atomic_load_n(&zc_enabled, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&zc_pool, __ATOMIC_ACQUIRE) != NULL)
		mode = droce_zc_port_mode(droce_port_ethdev(tx->port));
	if (mode == DROCE_ZC_OFF ||
	    (mode == DROCE_ZC_CPU_COPY && !__atomic_load_n(&zc_everywhere, __ATOMIC_RELAXED))) {
		tx->zc_from = UINT32_MAX;
		tx->zc_copy_count = &tx->zcs->tx_copy_port;
	} else {
		tx->zc_from = __atomic_load_n(&zc_min, __ATOMIC_RELAXED);
		tx->zc_copy_count = &tx->zcs->tx_copy_small;
	}
	tx->zc_mode = (uint8_t)mode;
}

/* A payload the gate let through: by reference when its runs allow,
 * else copied. Apart from droce_tx_payload(), whose common case (a copy)
 * then needs none of its stack. */
static int __rte_noinline
zc_payload(struct droce_tx *tx, struct rte_mbuf *m, uint32_t pd_handle,
	   const struct ibv_sge *sge, unsigned num_sge, uint64_t offset, uint32_t len,
	   int access, struct droce_qp *qp, struct droce_send_wqe *w)
{
	struct zc_runs z = { .n = 0 };
	int rc;

	rc = droce_sge_walk(tx->mrt, pd_handle, sge, num_sge, offset, len, access, zc_run, &z);
	if (rc != 0)
		return rc;
	if (z.too_many)
		tx->zcs->tx_copy_sges++;
	else if (tx->zc_mode == DROCE_ZC_DMA && z.unmapped)
		tx->zcs->tx_copy_unmapped++;
	else if (!zc_chain(tx, m, &z, len, qp, w))
		tx->zcs->tx_copy_no_ref++;
	else {
		tx->zcs->tx_zcopy_frames++;
		return 0;
	}
	return droce_sge_read(tx->mrt, pd_handle, sge, num_sge, offset,
			      droce_tx_cur(tx, DROCE_HDR_PAYLOAD), len, access);
}

/*
 * Copy the whole payload @p len of the frame being built from @p src and
 * compute its ICRC on the way (droce_copy_crc32()): the CRC of the headers
 * as the ICRC sees them, continued through the payload as each block is
 * copied, then through the pad; droce_tx_finish() writes it. The payload
 * is read once instead of again by the ICRC. @p len is at least
 * DROCE_COPY_CRC_MIN (out of line: shorter copies, the common ones, pay
 * only the caller's compare). @return false, nothing done, where
 * droce_copy_crc32() declines.
 */
static bool __rte_noinline
tx_copy_icrc(struct droce_tx *tx, struct rte_mbuf *m, const uint8_t *src, uint32_t len)
{
	const struct droce_hdr_tmpl *t = tx->tmpl;
	uint8_t *start = rte_pktmbuf_mtod_offset(m, uint8_t *, t->l2_len - DROCE_ICRC_LRH_LEN);
	uint8_t *payload = droce_tx_cur(tx, DROCE_HDR_PAYLOAD);
	uint8_t *end = rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m));
	uint32_t crc;

	crc = droce_crc32_masked(start, (uint32_t)(payload - start), droce_icrc_mask(t->l3.ipv6));
	if (!droce_copy_crc32(payload, src, len, &crc))
		return false;
	/* The pad, zeros droce_tx_start() wrote. */
	if (end > payload + len)
		crc = (uint32_t)crc32(crc, payload + len, (uInt)(end - payload - len));
	tx->icrc = crc;
	tx->icrc_ready = true;
	return true;
}

/* droce_tx_payload_copy(), inlined where a short payload's copy is
 * most of the frame's work. */
static __rte_always_inline void
tx_payload_copy(struct droce_tx *tx, struct rte_mbuf *m, const uint8_t *src, uint32_t len)
{
	(*tx->zc_copy_count)++;
	/* A looped-back zero-copy frame may point into the region:
	 * droce_copy() keeps memmove()'s contract. */
	if (len < DROCE_COPY_CRC_MIN || !tx_copy_icrc(tx, m, src, len))
		droce_copy(droce_tx_cur(tx, DROCE_HDR_PAYLOAD), src, len);
}

int
droce_tx_payload(struct droce_tx *tx, struct rte_mbuf *m, uint32_t pd_handle,
		 const struct ibv_sge *sge, unsigned num_sge, uint64_t offset, uint32_t len,
		 int access, struct droce_qp *qp, struct droce_send_wqe *w)
{
	const uint8_t *src;

	if (len == 0)
		return 0;
	if (unlikely(tx->zc_gate_at != tx->now))
		droce_tx_zc_gate(tx);
	if (len >= tx->zc_from)
		return zc_payload(tx, m, pd_handle, sge, num_sge, offset, len, access, qp, w);
	src = droce_sge_one_addr(tx->mrt, pd_handle, sge, num_sge, offset, len, access);
	if (src == NULL) {
		(*tx->zc_copy_count)++;
		return droce_sge_read(tx->mrt, pd_handle, sge, num_sge, offset,
				      droce_tx_cur(tx, DROCE_HDR_PAYLOAD), len, access);
	}
	tx_payload_copy(tx, m, src, len);
	return 0;
}

const uint8_t *
droce_tx_payload_run(struct droce_tx *tx, uint32_t pd_handle, const struct ibv_sge *sge,
		     unsigned num_sge, uint64_t offset, uint32_t len, uint32_t frame_len)
{
	if (unlikely(tx->zc_gate_at != tx->now))
		droce_tx_zc_gate(tx);
	if (frame_len >= tx->zc_from)
		return NULL;
	/* A send reads its own regions, which every region allows. */
	return droce_sge_one_addr(tx->mrt, pd_handle, sge, num_sge, offset, len, 0);
}

void
droce_tx_payload_copy(struct droce_tx *tx, struct rte_mbuf *m, const uint8_t *src, uint32_t len)
{
	tx_payload_copy(tx, m, src, len);
}

int
droce_tx_payload_rkey(struct droce_tx *tx, struct rte_mbuf *m, const struct droce_qp *qp,
		      uint32_t rkey, uint32_t pd_handle, uint64_t va, uint32_t len)
{
	struct ibv_sge sge = { .addr = va, .length = len, .lkey = rkey };
	const uint8_t *src;

	if (!droce_key_is_mw(rkey))
		return droce_tx_payload(tx, m, pd_handle, &sge, 1, 0, len, IBV_ACCESS_REMOTE_READ,
					NULL, NULL);
	/* A window reaches its region under the window's lock: copied. */
	src = droce_rkey_addr(tx->mrt, qp->qpn, rkey, pd_handle, va, len,
			      IBV_ACCESS_REMOTE_READ);
	if (src == NULL)
		return -EFAULT;
	tx->zcs->tx_copy_window++;
	droce_copy(droce_tx_cur(tx, DROCE_HDR_PAYLOAD), src, len);
	return 0;
}
