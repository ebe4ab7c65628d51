/* SPDX-License-Identifier: BSD-3-Clause */
/* Socket addresses and GIDs: RoCEv2 GIDs are IPv6 addresses, IPv4 ones mapped. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "droce_rdmacm_priv.h"

void
cma_addr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

void
cma_gid_addr(const union ibv_gid *gid, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)gid->raw)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = port;
		memcpy(&sin->sin_addr, &gid->raw[12], 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, gid->raw, 16);
	}
}

uint16_t
cma_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

void
cma_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = port;
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = port;
}

bool
cma_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return true;
}

socklen_t
cma_addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : 0;
}

uint16_t
cma_ephemeral_port(void)
{
	static uint32_t next;
	uint32_t n = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);

	/* The kernel's local port range is 32768-60999; start per process
	 * somewhere in it, so two processes rarely pick the same. */
	return htons((uint16_t)(32768 + ((uint32_t)getpid() * 7919u + n) % 28232u));
}
