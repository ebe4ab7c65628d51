/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GID table. rxe's order, so that tools' habits carry over (`-g 1`
 * picks IPv4): index 0 is the IPv6 link-local address the MAC makes
 * (fe80::/64 with the modified EUI-64 interface id, RFC 4291 appendix A),
 * index 1 the IPv4-mapped address ::ffff:a.b.c.d when the port has IPv4,
 * then the configured IPv6 addresses in the order given (the kernel adds
 * a netdev's addresses to rxe's table in the order they were assigned).
 * The table is built at attach and never changes, so any thread reads it.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "droce_port_priv.h"

static const uint8_t v4mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

bool
droce_gid_is_v4mapped(const uint8_t gid[16])
{
	return memcmp(gid, v4mapped_prefix, sizeof(v4mapped_prefix)) == 0;
}

void
droce_gid_from_ipv4(uint32_t ip, uint8_t gid[16])
{
	rte_be32_t be = rte_cpu_to_be_32(ip);

	memcpy(gid, v4mapped_prefix, sizeof(v4mapped_prefix));
	memcpy(gid + 12, &be, sizeof(be));
}

void
droce_gid_table_build(struct droce_port *p)
{
	const uint8_t *mac = p->mac.addr_bytes;
	uint8_t *gid = p->gids[0];
	unsigned i;

	memset(p->gids, 0, sizeof(p->gids));
	gid[0] = 0xfe;
	gid[1] = 0x80;
	/* Modified EUI-64: flip the universal/local bit, put ff:fe in the middle. */
	gid[8] = mac[0] ^ 0x02;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
	p->nb_gids = 1;
	if (p->ipv4 != 0)
		droce_gid_from_ipv4(p->ipv4, p->gids[p->nb_gids++]);
	for (i = 0; i < p->net.nb_ipv6; i++)
		memcpy(p->gids[p->nb_gids++], p->net.ipv6[i].addr, 16);
}

void
droce_gid_format(const uint8_t gid[16], char *buf, size_t len)
{
	if (inet_ntop(AF_INET6, gid, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

int
droce_port_gid_count(const struct droce_port *p)
{
	return p->nb_gids;
}

int
droce_port_gid(const struct droce_port *p, int index, uint8_t gid[16])
{
	if (index < 0 || index >= p->nb_gids)
		return -EINVAL;
	memcpy(gid, p->gids[index], 16);
	return 0;
}

/* Two GIDs equal? Two 8-byte compares, inline: every received frame
 * looks its destination up here, where a libc memcmp() call per GID of
 * the table cost more than the comparison. */
static inline bool
gid_eq(const uint8_t a[16], const uint8_t b[16])
{
	uint64_t a0, a1, b0, b1;

	memcpy(&a0, a, 8);
	memcpy(&a1, a + 8, 8);
	memcpy(&b0, b, 8);
	memcpy(&b1, b + 8, 8);
	return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

int
droce_port_gid_find(const struct droce_port *p, const uint8_t gid[16])
{
	int i;

	for (i = 0; i < p->nb_gids; i++)
		if (gid_eq(p->gids[i], gid))
			return i;
	return -1;
}

uint16_t
droce_port_gid_vlan(const struct droce_port *p)
{
	return p->net.vlan;
}
