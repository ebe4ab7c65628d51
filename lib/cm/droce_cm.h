/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The IB communication manager of one droce port (IBA Vol. 1 chapter 12,
 * as the kernel's drivers/infiniband/core/cm.c runs it): connection IDs,
 * their state machine, REQ/REP/DREQ retransmission with the CM response
 * timeouts, and the answers the CM gives without its consumer (REJ for a
 * REQ nobody listens for, duplicate REP/RTU/DREP for a retransmitted
 * message, DREP for a DREQ of a connection that is gone), and service ID
 * resolution for UD (SIDR REQ and REP: one request, one answer, no
 * connection).
 *
 * Nothing here touches a QP or the network: MADs go out through
 * droce_cm_ops.send (to the peer's QP1), come in through droce_cm_recv(),
 * the clock is droce_cm_ops.now, and retransmissions happen when the owner
 * calls droce_cm_timer(). Events reach the consumer through droce_cm_ops.event, called
 * with the CM's lock held: the consumer may call the droce_cm_send_*()
 * functions on the event's ID from inside (the lock is recursive), but
 * should otherwise only queue.
 */
#ifndef DROCE_CM_H
#define DROCE_CM_H

#include <stdbool.h>
#include <stdint.h>

#include "droce_cm_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Connection states (IBA Figure 138; the kernel's enum ib_cm_state). */
enum droce_cm_state {
	DROCE_CM_IDLE,
	DROCE_CM_LISTEN,
	DROCE_CM_REQ_SENT,
	DROCE_CM_REQ_RCVD,
	DROCE_CM_MRA_REQ_SENT,
	DROCE_CM_MRA_REQ_RCVD,
	DROCE_CM_REP_SENT,
	DROCE_CM_REP_RCVD,
	DROCE_CM_MRA_REP_RCVD,
	DROCE_CM_ESTABLISHED,
	DROCE_CM_DREQ_SENT,
	DROCE_CM_DREQ_RCVD,
	DROCE_CM_TIMEWAIT,
	DROCE_CM_SIDR_REQ_SENT,
	DROCE_CM_SIDR_REQ_RCVD,
};

enum droce_cm_event_type {
	DROCE_CM_EV_REQ_RECEIVED,  /**< on a new ID; msg is the REQ, listener the listening ID */
	DROCE_CM_EV_REP_RECEIVED,
	DROCE_CM_EV_RTU_RECEIVED,  /**< passive side: established */
	DROCE_CM_EV_REJ_RECEIVED,
	DROCE_CM_EV_MRA_RECEIVED,
	DROCE_CM_EV_DREQ_RECEIVED,
	DROCE_CM_EV_DREP_RECEIVED,
	DROCE_CM_EV_REQ_ERROR,     /**< REQ unanswered after every retry */
	DROCE_CM_EV_REP_ERROR,     /**< REP unanswered after every retry */
	DROCE_CM_EV_DREQ_ERROR,    /**< DREQ unanswered after every retry */
	DROCE_CM_EV_SIDR_REQ_RECEIVED, /**< on a new ID; msg is the SIDR REQ, listener the listening ID */
	DROCE_CM_EV_SIDR_REP_RECEIVED, /**< the ID is IDLE again */
	DROCE_CM_EV_SIDR_REQ_ERROR,    /**< SIDR REQ unanswered after every retry */
};

struct droce_cm;
struct droce_cm_id;

struct droce_cm_event {
	enum droce_cm_event_type type;
	const struct droce_cm_msg *msg;       /**< the message received; NULL for *_ERROR */
	struct droce_cm_id *listener;         /**< REQ_RECEIVED and SIDR_REQ_RECEIVED only */
};

struct droce_cm_ops {
	/** Send @p mad to QP1 of the port with GID @p gid. @return 0 or a negative errno. */
	int (*send)(void *arg, const uint8_t gid[16], const uint8_t mad[DROCE_MAD_SIZE]);
	/** Deliver @p ev about @p id to the consumer (see the file comment). */
	void (*event)(void *arg, struct droce_cm_id *id, const struct droce_cm_event *ev);
	/** The clock, in microseconds. */
	uint64_t (*now)(void *arg);
};

/**
 * A CM for the port with GUID @p guid (network-order bytes read as a
 * number, as the REQ and REP carry it). @return NULL with errno set on failure.
 */
struct droce_cm *droce_cm_create(const struct droce_cm_ops *ops, void *arg, uint64_t guid);

/** Free @p cm and every ID still in it, sending nothing. */
void droce_cm_destroy(struct droce_cm *cm);

/** A MAD from QP1 of the port with GID @p src_gid. */
void droce_cm_recv(struct droce_cm *cm, const uint8_t src_gid[16],
		   const uint8_t mad[DROCE_MAD_SIZE]);

/**
 * Retransmit what is due and fail what has run out of retries. An event
 * handler called from here may destroy the event's own ID, no other.
 * @return when to call again (droce_cm_ops.now's clock), UINT64_MAX for never.
 */
uint64_t droce_cm_timer(struct droce_cm *cm);

/**
 * Hold the CM's (recursive) lock: a consumer that keeps its own state per
 * ID updates it under this lock, the one its event handler runs under.
 */
void droce_cm_lock(struct droce_cm *cm);
void droce_cm_unlock(struct droce_cm *cm);

/** A new ID in IDLE with consumer data @p context. @return NULL on ENOMEM. */
struct droce_cm_id *droce_cm_id_create(struct droce_cm *cm, void *context);

/**
 * Forget @p id, as ib_destroy_cm_id() does: a connection being set up is
 * rejected, an established one gets a DREQ (sent once: the peer's retries
 * are answered by the DREP the CM gives for unknown connections).
 */
void droce_cm_id_destroy(struct droce_cm_id *id);

/**
 * Every ID of @p cm tells its peer what droce_cm_id_destroy() would (REJ,
 * DREQ, DREP, SIDR REP) and stays, in its new state: for a process about
 * to exit, as the kernel's rdma_cm destroys a process's IDs when its file
 * closes, while the process's threads may still hold them. A DREQ sent
 * so is retried by droce_cm_timer() until its DREP comes.
 * @return how many messages went out.
 */
unsigned droce_cm_farewell(struct droce_cm *cm);

/** How many IDs of @p cm wait for the DREP to their DREQ. */
unsigned droce_cm_disconnecting(struct droce_cm *cm);

void *droce_cm_id_context(const struct droce_cm_id *id);
void droce_cm_id_set_context(struct droce_cm_id *id, void *context);
enum droce_cm_state droce_cm_id_state(const struct droce_cm_id *id);
/** The peer's GID (where this ID's MADs go). */
const uint8_t *droce_cm_id_remote_gid(const struct droce_cm_id *id);

/** Take REQs and SIDR REQs for @p service_id. @return 0, -EINVAL unless IDLE, -EADDRINUSE. */
int droce_cm_listen(struct droce_cm_id *id, uint64_t service_id);

/** How long to wait for answers: an IBA time exponent (4.096 us << t) each. */
struct droce_cm_timing {
	uint8_t packet_life_time;
	uint8_t cm_response_timeout;   /**< our own, sent as local_cm_response_timeout */
};

/**
 * Send the REQ @p req (its local_comm_id, local_ca_guid and the timeouts are
 * filled in here) to @p gid. @return 0, -EINVAL unless IDLE, or send's error.
 */
int droce_cm_send_req(struct droce_cm_id *id, const uint8_t gid[16],
		      const struct droce_cm_req *req, const struct droce_cm_timing *t);

/** Answer a received REQ with @p rep (IDs and GUID filled in here). */
int droce_cm_send_rep(struct droce_cm_id *id, const struct droce_cm_rep *rep);

/** Active side, after a REP: established. */
int droce_cm_send_rtu(struct droce_cm_id *id, const void *pdata, uint8_t len);

/** Reject a REQ (passive side) or a REP (active side). */
int droce_cm_send_rej(struct droce_cm_id *id, enum droce_cm_rej_reason reason,
		      const void *pdata, uint8_t len);

/** Ask the peer to wait @p service_timeout (IBA time) for our REP or RTU. */
int droce_cm_send_mra(struct droce_cm_id *id, uint8_t service_timeout);

/** Start disconnecting an established connection. */
int droce_cm_send_dreq(struct droce_cm_id *id, const void *pdata, uint8_t len);

/** Answer a DREQ. */
int droce_cm_send_drep(struct droce_cm_id *id, const void *pdata, uint8_t len);

/**
 * Ask the port with GID @p gid which QP serves @p req->service_id (its
 * request_id is filled in here), as cm.c's ib_send_cm_sidr_req(): sent
 * again every @p timeout_us until answered, at most @p max_retries times.
 * @return 0, -EINVAL unless IDLE, or send's error.
 */
int droce_cm_send_sidr_req(struct droce_cm_id *id, const uint8_t gid[16],
			   const struct droce_cm_sidr_req *req, uint64_t timeout_us,
			   uint8_t max_retries);

/**
 * Answer a received SIDR REQ with @p rep (its request_id and service_id
 * filled in here): a QP and Q_Key with status DROCE_SIDR_SUCCESS, or a
 * refusal. The ID is IDLE after.
 */
int droce_cm_send_sidr_rep(struct droce_cm_id *id, const struct droce_cm_sidr_rep *rep);

/** IBA time exponent to microseconds: 4.096 us << t, as the kernel rounds it (whole ms, at least 1). */
uint64_t droce_cm_time_us(uint8_t t);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_CM_H */
