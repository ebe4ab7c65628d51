/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What droce's librdmacm exports but does not do: rsockets. Each call
 * fails with ENOSYS and touches nothing, so a program that probes for
 * them carries on without. (riowrite() returns a size: 0, with errno set.)
 */
#include <errno.h>
#include <sys/select.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#include "droce_rdmacm_priv.h"

/* The stubs ignore their arguments by design. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define FAIL { errno = ENOSYS; return -1; }

/* rsockets: sockets over RC QPs, a library of their own in rdma-core. */
int rsocket(int domain, int type, int protocol) FAIL
int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen) FAIL
int rlisten(int socket, int backlog) FAIL
int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen) FAIL
int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen) FAIL
int rshutdown(int socket, int how) FAIL
int rclose(int socket) FAIL
ssize_t rrecv(int socket, void *buf, size_t len, int flags) FAIL
ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen) FAIL
ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags) FAIL
ssize_t rsend(int socket, const void *buf, size_t len, int flags) FAIL
ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
		const struct sockaddr *dest_addr, socklen_t addrlen) FAIL
ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags) FAIL
ssize_t rread(int socket, void *buf, size_t count) FAIL
ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt) FAIL
ssize_t rwrite(int socket, const void *buf, size_t count) FAIL
ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt) FAIL
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout) FAIL
int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	    struct timeval *timeout) FAIL
int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen) FAIL
int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen) FAIL
int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen) FAIL
int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen) FAIL
int rfcntl(int socket, int cmd, ...) FAIL
off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset) FAIL
int riounmap(int socket, void *buf, size_t len) FAIL
size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	errno = ENOSYS;
	return 0;
}
