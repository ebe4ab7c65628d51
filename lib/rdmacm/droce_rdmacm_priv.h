/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside droce's librdmacm: the rdma_cm API of rdma-core's <rdma/rdma_cma.h>
 * on droce devices, speaking the IB CM (lib/cm) over each device's QP1.
 *
 * Objects: a device (one per droce device: its verbs context, a default
 * PD, QP1 and the CM on it, opened on first use and kept for the life of
 * the process), an event channel (events behind an eventfd in semaphore
 * mode: one count per queued event, so poll() and blocking or
 * non-blocking reads behave as on rdma-core's channel file), and an ID.
 *
 * Locking: a device's CM lock (droce_cm_lock()) guards the connection
 * state of every ID on that device, and is the lock CM events arrive
 * under; a channel's lock guards its queue and is taken inside the CM
 * lock, never around it.
 */
#ifndef DROCE_RDMACM_PRIV_H
#define DROCE_RDMACM_PRIV_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/queue.h>

#include <rdma/rdma_cma.h>

#include "droce_cm.h"
#include "droce_gsi.h"

/** Most droce devices the library serves. */
#define CMA_MAX_DEVS 8
/** rdma_cm's private data header (struct cma_hdr) is in front of the REQ's. */
#define CMA_REQ_PDATA (DROCE_CM_REQ_PDATA - DROCE_CMA_HDR_SIZE)
/** As the kernel's cma.c: CMA_CM_RESPONSE_TIMEOUT, CMA_MAX_CM_RETRIES, and
 *  RoCE's packet lifetime (the REQ's local ACK timeout is one more). */
#define CMA_CM_RESPONSE_TIMEOUT 20
#define CMA_MAX_CM_RETRIES 15
#define CMA_IBOE_PACKET_LIFETIME 18

struct cma_id;

struct cma_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;             /**< for QPs created without one */
	struct droce_gsi *gsi;
	struct droce_cm *cm;
	/** IDs whose rdma_resolve_addr() waits for the neighbour (the CM lock) */
	LIST_HEAD(, cma_id) resolving;
};

struct cma_event {
	struct rdma_cm_event ev;       /**< first: handed out */
	TAILQ_ENTRY(cma_event) link;
	uint8_t pdata[DROCE_CM_REP_PDATA];
};

struct cma_channel {
	struct rdma_event_channel ch;  /**< first: handed out; ch.fd the eventfd */
	pthread_mutex_t lock;
	TAILQ_HEAD(, cma_event) q;
	unsigned waiters;              /**< threads inside rdma_get_cm_event() */
	bool destroyed;                /**< by the application, with waiters inside */
};

/** An ID's connection: what the CM exchange settled. */
struct cma_conn {
	uint32_t psn;                  /**< the starting PSN of our REQ or REP: the peer sends from it */
	uint32_t remote_qpn;
	uint32_t remote_psn;           /**< the peer's REQ or REP's: we send from it */
	uint8_t mtu;                   /**< IBV_MTU_* */
	uint8_t responder_resources;   /**< max_dest_rd_atomic */
	uint8_t initiator_depth;       /**< max_rd_atomic */
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t ack_timeout;
};

struct cma_mc;

struct cma_id {
	struct rdma_cm_id id;          /**< first: handed out */
	struct cma_dev *dev;           /**< NULL until bound or resolved */
	struct droce_cm_id *cm_id;     /**< the connection */
	struct droce_cm_id *listen[CMA_MAX_DEVS];
	bool sync;                     /**< created without a channel: calls wait for their event */
	bool disconnected;             /**< DISCONNECTED queued */
	bool want_drep;                /**< rdma_disconnect() called: answer a DREQ at once */
	bool own_cqs;                  /**< rdma_create_qp() made the CQs and channels */
	struct cma_conn conn;
	struct ibv_sa_path_rec path;
	struct ibv_qp_init_attr *ep_qp_attr; /**< rdma_create_ep(): for each rdma_get_request() */
	uint32_t events_out;           /**< handed out, not acknowledged */
	pthread_cond_t acked;
	/** rdma_resolve_addr() waits for the neighbour (the device's CM lock) */
	bool resolving;
	int resolve_sgid;              /**< from this GID of the device */
	uint64_t resolve_until;        /**< then ADDR_ERROR, -ETIMEDOUT (droce_gsi_now_us()) */
	LIST_ENTRY(cma_id) resolving_link;
	pthread_mutex_t mc_lock;       /**< guards mcs */
	LIST_HEAD(, cma_mc) mcs;       /**< multicast groups joined (droce_rdmacm_mcast.c) */
	uint8_t tos;
};

/** Fail as librdmacm's calls do: -1 with errno @p err. */
static inline int
cma_fail(int err)
{
	errno = err;
	return -1;
}

static inline struct cma_id *
cma_id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

/* droce_rdmacm_dev.c */
/** The device with address @p sa (family and address; port ignored), or NULL. */
struct cma_dev *cma_dev_by_addr(const struct sockaddr *sa);
/** The first device that has a GID of @p family. */
struct cma_dev *cma_dev_any(int family);
/** Device @p i (opened), or NULL past the last. */
struct cma_dev *cma_dev_get(unsigned i);
/** The index of @p gid in the device's table, or -1. */
int cma_dev_gid_index(const struct cma_dev *d, const union ibv_gid *gid);

/* droce_rdmacm_event.c */
/** Queue an event about @p c with @p size bytes of @p param (a struct
 *  rdma_conn_param or rdma_ud_param; NULL: none); @p pdata (@p len bytes) is copied. */
void cma_event_queue_param(struct cma_id *c, enum rdma_cm_event_type type, int status,
			   const void *param, size_t size, const void *pdata, uint8_t len,
			   struct cma_id *listener);

/** Queue an event about @p c; @p pdata (@p len bytes) is copied. */
static inline void
cma_event_queue(struct cma_id *c, enum rdma_cm_event_type type, int status,
		const struct rdma_conn_param *param, const void *pdata, uint8_t len,
		struct cma_id *listener)
{
	cma_event_queue_param(c, type, status, param, sizeof(*param), pdata, len, listener);
}

/** The same with a UD event's parameters (SIDR). */
static inline void
cma_event_queue_ud(struct cma_id *c, enum rdma_cm_event_type type, int status,
		   const struct rdma_ud_param *param, const void *pdata, uint8_t len,
		   struct cma_id *listener)
{
	cma_event_queue_param(c, type, status, param, sizeof(*param), pdata, len, listener);
}

/** Sync IDs: wait for the next event, which must be @p want with status 0. */
int cma_event_wait(struct cma_id *c, enum rdma_cm_event_type want);
/** Drop @p c's queued events and wait for its handed-out ones. */
void cma_events_retire(struct cma_id *c);

/* droce_rdmacm_qp.c: move the QP of @p c to @p st. @return 0 or a negative errno. */
int cma_qp_to(struct cma_id *c, enum ibv_qp_state st);
/** RTR, then RTS: the QP ready for the connection. @return 0 or a negative errno. */
int cma_qp_ready(struct cma_id *c);

/* droce_rdmacm_conn.c: the CM's event handler. */
void cma_cm_event(void *arg, struct droce_cm_id *cm_id, const struct droce_cm_event *ev);
/**
 * The new ID of a request (REQ or SIDR REQ) that listener @p l got on
 * device @p d, on CM ID @p cm_id, its addresses from the request's
 * cma_hdr @p h (ours is its destination) and a path of MTU @p mtu.
 * @return NULL if it could not be made.
 */
struct cma_id *cma_conn_id(struct cma_dev *d, struct droce_cm_id *cm_id, struct cma_id *l,
			   const struct droce_cma_hdr *h, uint8_t mtu);
/** The cma_hdr of @p id's request: its source and destination address. */
void cma_hdr_of(const struct rdma_cm_id *id, struct droce_cma_hdr *h);
/** The CM's timing for the requests this process sends (DROCE_CM_TIMEOUT). */
struct droce_cm_timing cma_timing(void);

/* droce_rdmacm_ud.c: RDMA_PS_UDP, with SIDR instead of a connection. */
int cma_ud_connect(struct cma_id *c, const struct rdma_conn_param *param);
int cma_ud_accept(struct cma_id *c, const struct rdma_conn_param *param);
int cma_ud_reject(struct cma_id *c, const void *pdata, uint8_t len);
/**
 * The address handle attributes a UD event of @p c gives for @p dgid from
 * the device's GID @p sgid, as the kernel fills them on RoCE: global,
 * hop limit 64, the ID's TOS, no LID, SL 0.
 */
void cma_ud_ah_attr(const struct cma_id *c, const union ibv_gid *dgid, int sgid,
		    struct ibv_ah_attr *ah);
/** The CM's SIDR events. */
void cma_ud_event(struct cma_dev *d, struct droce_cm_id *cm_id, const struct droce_cm_event *ev);
/** An ID of the UD port space: its QP is UD, its requests SIDR. */
static inline bool
cma_is_ud(const struct rdma_cm_id *id)
{
	return id->ps == RDMA_PS_UDP;
}

/* droce_rdmacm_id.c: the address resolutions of device @p d that wait
 * for their neighbour, tried again; those done get their event. From the
 * GSI's thread. @return when to try again (droce_gsi_now_us()), UINT64_MAX
 * for none. */
uint64_t cma_resolve_run(struct cma_dev *d);

/* droce_rdmacm_mcast.c: forget @p c's groups (its ID goes). */
void cma_mc_release(struct cma_id *c);

/* Address helpers (droce_rdmacm_addr.c). */
/** GID of an IPv4 or IPv6 socket address. */
void cma_addr_gid(const struct sockaddr *sa, union ibv_gid *gid);
/** Socket address of @p gid (IPv4-mapped GIDs become AF_INET) and @p port (network order). */
void cma_gid_addr(const union ibv_gid *gid, uint16_t port, struct sockaddr_storage *ss);
uint16_t cma_addr_port(const struct sockaddr *sa);
void cma_addr_set_port(struct sockaddr *sa, uint16_t port);
bool cma_addr_any(const struct sockaddr *sa);
socklen_t cma_addr_len(const struct sockaddr *sa);
/** A port for an ID bound to port 0 (network order). */
uint16_t cma_ephemeral_port(void);

#endif /* DROCE_RDMACM_PRIV_H */
