/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exported verbs of <infiniband/verbs.h> that droce does not
 * implement. Each fails the way rdma-core's API says a device without the
 * feature fails: NULL with errno EOPNOTSUPP for object creators, the
 * positive errno EOPNOTSUPP for verbs that return an errno. The unimport
 * verbs take only objects an import returned, and no import succeeds, so
 * they have nothing to do.
 *
 * (The verbs rdma-core implements inline in verbs.h, such as
 * ibv_create_flow or ibv_alloc_dm, reach droce through
 * struct verbs_context, whose empty slots already make them fail with
 * EOPNOTSUPP.)
 */
#include <errno.h>

#include "droce_verbs_priv.h"

/* The stubs ignore their arguments by design. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define FAIL_ERRNO { return EOPNOTSUPP; }
#define FAIL_NULL { errno = EOPNOTSUPP; return NULL; }

/* dma-buf memory belongs to a kernel device droce has no access to. */
struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access) FAIL_NULL

/* Importing objects from another process: rdma-core shares them through
 * the kernel's uverbs file descriptor, which droce does not have. */
struct ibv_context *ibv_import_device(int cmd_fd) FAIL_NULL
struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle) FAIL_NULL
struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle) FAIL_NULL
struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle) FAIL_NULL
void ibv_unimport_pd(struct ibv_pd *pd) {}
void ibv_unimport_mr(struct ibv_mr *mr) {}
void ibv_unimport_dm(struct ibv_dm *dm) {}

/* Enhanced connection establishment: a vendor option exchange droce has
 * no options for. */
int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece) FAIL_ERRNO
int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece) FAIL_ERRNO

/* Resolving a MAC through the kernel's neighbour table: droce resolves
 * its own neighbours (ARP) inside the engine when an AH or QP is used.
 * rdma-core returns a negative value on failure here. */
int
ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr,
			    uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t *vid)
{
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}
