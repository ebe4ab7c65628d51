/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The IB communication manager's messages (IBA Vol. 1 chapter 12) in
 * 256-byte management datagrams, as rdma_cm sends them on RoCE: REQ, MRA,
 * REJ, REP, RTU, DREQ and DREP, SIDR REQ and SIDR REP (service ID
 * resolution, for UD), and the rdma_cm header (cma_hdr) at the start of
 * REQ and SIDR REQ private data.
 *
 * No state: decode a MAD into a struct, encode a struct into a MAD. One
 * field table per message drives both directions, so the two cannot
 * disagree. Fields keep the spec's names and widths; numbers are host
 * order, identifiers that are opaque byte strings (GIDs, private data)
 * stay byte arrays.
 */
#ifndef DROCE_CM_MSG_H
#define DROCE_CM_MSG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A MAD: header and data. */
#define DROCE_MAD_SIZE 256
#define DROCE_MAD_HDR_SIZE 24
#define DROCE_MAD_DATA_SIZE (DROCE_MAD_SIZE - DROCE_MAD_HDR_SIZE)
/** The general service QP, and the Q_Key every GSI MAD carries. */
#define DROCE_GSI_QPN 1u
#define DROCE_GSI_QKEY 0x80010000u
#define DROCE_GSI_PKEY 0xffffu
#define DROCE_MAD_BASE_VERSION 1
#define DROCE_MGMT_CLASS_CM 0x07
#define DROCE_CM_CLASS_VERSION 2
/** CM messages are all unsolicited Send()s: no GetResp pairing. */
#define DROCE_MAD_METHOD_SEND 0x03

/** Attribute IDs of the CM's messages. */
enum droce_cm_attr {
	DROCE_CM_REQ = 0x0010,
	DROCE_CM_MRA = 0x0011,
	DROCE_CM_REJ = 0x0012,
	DROCE_CM_REP = 0x0013,
	DROCE_CM_RTU = 0x0014,
	DROCE_CM_DREQ = 0x0015,
	DROCE_CM_DREP = 0x0016,
	DROCE_CM_SIDR_REQ = 0x0017,
	DROCE_CM_SIDR_REP = 0x0018,
};

/** Private data room of each message. */
#define DROCE_CM_REQ_PDATA 92
#define DROCE_CM_MRA_PDATA 222
#define DROCE_CM_REJ_PDATA 148
#define DROCE_CM_REP_PDATA 196
#define DROCE_CM_RTU_PDATA 224
#define DROCE_CM_DREQ_PDATA 220
#define DROCE_CM_DREP_PDATA 224
#define DROCE_CM_REJ_ARI 72
#define DROCE_CM_SIDR_REQ_PDATA 216
#define DROCE_CM_SIDR_REP_PDATA 136
#define DROCE_CM_SIDR_REP_INFO 72

/** REJ and MRA say which message they answer (the msg_rejected field). */
enum droce_cm_msg_ref {
	DROCE_CM_REF_REQ = 0,
	DROCE_CM_REF_REP = 1,
	DROCE_CM_REF_OTHER = 2,
};

/** REJ reasons (IBA Table 112; the kernel's enum ib_cm_rej_reason). */
enum droce_cm_rej_reason {
	DROCE_REJ_NO_QP = 1,
	DROCE_REJ_NO_RESOURCES = 3,
	DROCE_REJ_TIMEOUT = 4,
	DROCE_REJ_INVALID_COMM_ID = 6,
	DROCE_REJ_INVALID_SERVICE_ID = 8,
	DROCE_REJ_STALE_CONN = 10,
	DROCE_REJ_INVALID_MTU = 26,
	DROCE_REJ_CONSUMER_DEFINED = 28,
};

/** SIDR REP status (IBA Table 119; the kernel's enum ib_cm_sidr_status). */
enum droce_cm_sidr_status {
	DROCE_SIDR_SUCCESS = 0,
	DROCE_SIDR_UNSUPPORTED = 1,      /**< no one serves the service ID */
	DROCE_SIDR_REJECT = 2,           /**< the consumer rejected it */
	DROCE_SIDR_NO_QP = 3,
	DROCE_SIDR_REDIRECT = 4,
	DROCE_SIDR_UNSUPPORTED_VERSION = 5,
};

/** The common MAD header. */
struct droce_mad_hdr {
	uint8_t base_version;
	uint8_t mgmt_class;
	uint8_t class_version;
	uint8_t method;
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;
	uint16_t attr_id;
	uint32_t attr_mod;
};

/** A REQ's primary or alternate path. On RoCE the LIDs are 0xffff. */
struct droce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label;
	uint8_t packet_rate;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;
	uint8_t subnet_local;
	uint8_t local_ack_timeout;
};

struct droce_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;          /**< as on the wire: big-endian bytes read as a number */
	uint32_t local_qkey;
	uint32_t local_qpn;
	uint8_t responder_resources;
	uint32_t local_eecn;
	uint8_t initiator_depth;
	uint32_t remote_eecn;
	uint8_t remote_cm_response_timeout;
	uint8_t transport_type;          /**< 0: RC, 1: UC */
	uint8_t end_to_end_flow_control;
	uint32_t starting_psn;
	uint8_t local_cm_response_timeout;
	uint8_t retry_count;
	uint16_t pkey;
	uint8_t path_mtu;                /**< IBV_MTU_* */
	uint8_t rdc_exists;
	uint8_t rnr_retry_count;
	uint8_t max_cm_retries;
	uint8_t srq;
	uint8_t extended_transport;
	struct droce_cm_path primary;
	struct droce_cm_path alternate;
	uint8_t private_data[DROCE_CM_REQ_PDATA];
};

struct droce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_mraed;               /**< enum droce_cm_msg_ref */
	uint8_t service_timeout;
	uint8_t private_data[DROCE_CM_MRA_PDATA];
};

struct droce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t msg_rejected;            /**< enum droce_cm_msg_ref */
	uint8_t reject_info_length;
	uint16_t reason;                 /**< enum droce_cm_rej_reason */
	uint8_t ari[DROCE_CM_REJ_ARI];
	uint8_t private_data[DROCE_CM_REJ_PDATA];
};

struct droce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;
	uint32_t local_eecn;
	uint32_t starting_psn;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;
	uint8_t failover_accepted;
	uint8_t end_to_end_flow_control;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint64_t local_ca_guid;
	uint8_t private_data[DROCE_CM_REP_PDATA];
};

/** RTU and DREP: the two IDs and private data. */
struct droce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[DROCE_CM_RTU_PDATA];
};

struct droce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;
	uint8_t private_data[DROCE_CM_DREQ_PDATA];
};

/** SIDR REQ: which QP serves @p service_id? */
struct droce_cm_sidr_req {
	uint32_t request_id;             /**< the requester's ID, echoed in the REP */
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[DROCE_CM_SIDR_REQ_PDATA];
};

struct droce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;                  /**< enum droce_cm_sidr_status */
	uint8_t additional_info_length;
	uint32_t qpn;                    /**< the QP that serves the service ID */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[DROCE_CM_SIDR_REP_INFO];
	uint8_t private_data[DROCE_CM_SIDR_REP_PDATA];
};

/** One decoded CM MAD; hdr.attr_id says which member of the union is valid. */
struct droce_cm_msg {
	struct droce_mad_hdr hdr;
	union {
		struct droce_cm_req req;
		struct droce_cm_mra mra;
		struct droce_cm_rej rej;
		struct droce_cm_rep rep;
		struct droce_cm_rtu rtu;   /**< also DREP */
		struct droce_cm_dreq dreq;
		struct droce_cm_sidr_req sidr_req;
		struct droce_cm_sidr_rep sidr_rep;
	};
};

/** Set up @p m as a CM Send() of @p attr with transaction ID @p tid, the body zeroed. */
void droce_cm_msg_init(struct droce_cm_msg *m, enum droce_cm_attr attr, uint64_t tid);

/**
 * Decode a CM MAD.
 * @return 0; -EPROTONOSUPPORT for a MAD that is not a CM Send() of class
 *   version 2; -ENOTSUP for a CM attribute droce does not handle (LAP, APR).
 */
int droce_cm_msg_decode(const uint8_t mad[DROCE_MAD_SIZE], struct droce_cm_msg *m);

/** Encode @p m, whose hdr.attr_id must be one droce_cm_msg_decode() accepts. */
void droce_cm_msg_encode(const struct droce_cm_msg *m, uint8_t mad[DROCE_MAD_SIZE]);

/** "REQ", "REP", ...; "?" for anything else. */
const char *droce_cm_attr_name(uint16_t attr_id);

/*
 * The rdma_cm header: the first 36 bytes of a REQ's or SIDR REQ's private data
 * (struct cma_hdr in the kernel's cma.c), and the service IDs of the
 * port spaces.
 */
#define DROCE_CMA_HDR_SIZE 36
#define DROCE_CMA_VERSION 0x00
#define DROCE_RDMA_PS_TCP 0x0106
#define DROCE_RDMA_PS_UDP 0x0111
#define DROCE_RDMA_PS_IB 0x013f
/** Service IDs of IP port spaces: 0x0000000001PPpppp, PP the port space, pppp the port. */
#define DROCE_CMA_SERVICE_ID(ps, port) (((uint64_t)(ps) << 16) | (uint16_t)(port))
/** The Q_Key of every RDMA_PS_UDP QP (the kernel's RDMA_UDP_QKEY). */
#define DROCE_RDMA_UDP_QKEY 0x01234567u

struct droce_cma_hdr {
	uint8_t ip_version;        /**< 4 or 6 */
	uint16_t src_port;         /**< the active side's port */
	uint8_t src_addr[16];      /**< IPv4 in the last 4 bytes, as the kernel lays it out */
	uint8_t dst_addr[16];
};

/** @return 0, or -EPROTO if @p pdata holds no version-0 cma_hdr of IPv4 or IPv6. */
int droce_cma_hdr_decode(const uint8_t *pdata, struct droce_cma_hdr *h);
void droce_cma_hdr_encode(const struct droce_cma_hdr *h, uint8_t *pdata);

#ifdef __cplusplus
}
#endif
#endif /* DROCE_CM_MSG_H */
