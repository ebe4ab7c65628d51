/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What droce's librdmacm exports but does not do: multicast (UD, which
 * needs SIDR and multicast groups droce lacks) and rsockets. Each fails
 * with ENOSYS and touches nothing, so a program that probes for them
 * carries on without.
 */
#include <errno.h>
#include <sys/select.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#include "droce_rdmacm_priv.h"

#define ENOSYS_RETURN(v) do { errno = ENOSYS; return (v); } while (0)

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id; (void)addr; (void)context;
	ENOSYS_RETURN(-1);
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr,
		       void *context)
{
	(void)id; (void)mc_join_attr; (void)context;
	ENOSYS_RETURN(-1);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id; (void)addr;
	ENOSYS_RETURN(-1);
}

int rsocket(int domain, int type, int protocol)
{ (void)domain; (void)type; (void)protocol; ENOSYS_RETURN(-1); }
int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{ (void)socket; (void)addr; (void)addrlen; ENOSYS_RETURN(-1); }
int rlisten(int socket, int backlog)
{ (void)socket; (void)backlog; ENOSYS_RETURN(-1); }
int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{ (void)socket; (void)addr; (void)addrlen; ENOSYS_RETURN(-1); }
int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{ (void)socket; (void)addr; (void)addrlen; ENOSYS_RETURN(-1); }
int rshutdown(int socket, int how)
{ (void)socket; (void)how; ENOSYS_RETURN(-1); }
int rclose(int socket)
{ (void)socket; ENOSYS_RETURN(-1); }
ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{ (void)socket; (void)buf; (void)len; (void)flags; ENOSYS_RETURN(-1); }
ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen)
{ (void)socket; (void)buf; (void)len; (void)flags; (void)src_addr; (void)addrlen;
  ENOSYS_RETURN(-1); }
ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{ (void)socket; (void)msg; (void)flags; ENOSYS_RETURN(-1); }
ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{ (void)socket; (void)buf; (void)len; (void)flags; ENOSYS_RETURN(-1); }
ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen)
{ (void)socket; (void)buf; (void)len; (void)flags; (void)dest_addr; (void)addrlen;
  ENOSYS_RETURN(-1); }
ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{ (void)socket; (void)msg; (void)flags; ENOSYS_RETURN(-1); }
ssize_t rread(int socket, void *buf, size_t count)
{ (void)socket; (void)buf; (void)count; ENOSYS_RETURN(-1); }
ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{ (void)socket; (void)iov; (void)iovcnt; ENOSYS_RETURN(-1); }
ssize_t rwrite(int socket, const void *buf, size_t count)
{ (void)socket; (void)buf; (void)count; ENOSYS_RETURN(-1); }
ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{ (void)socket; (void)iov; (void)iovcnt; ENOSYS_RETURN(-1); }
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{ (void)fds; (void)nfds; (void)timeout; ENOSYS_RETURN(-1); }
int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout)
{ (void)nfds; (void)readfds; (void)writefds; (void)exceptfds; (void)timeout;
  ENOSYS_RETURN(-1); }
int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{ (void)socket; (void)addr; (void)addrlen; ENOSYS_RETURN(-1); }
int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{ (void)socket; (void)addr; (void)addrlen; ENOSYS_RETURN(-1); }
int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{ (void)socket; (void)level; (void)optname; (void)optval; (void)optlen; ENOSYS_RETURN(-1); }
int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{ (void)socket; (void)level; (void)optname; (void)optval; (void)optlen; ENOSYS_RETURN(-1); }
int rfcntl(int socket, int cmd, ...)
{ (void)socket; (void)cmd; ENOSYS_RETURN(-1); }
off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{ (void)socket; (void)buf; (void)len; (void)prot; (void)flags; (void)offset;
  ENOSYS_RETURN(-1); }
int riounmap(int socket, void *buf, size_t len)
{ (void)socket; (void)buf; (void)len; ENOSYS_RETURN(-1); }
size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{ (void)socket; (void)buf; (void)count; (void)offset; (void)flags; ENOSYS_RETURN(0); }
