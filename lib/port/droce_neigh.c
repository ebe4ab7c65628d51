/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table: IP address to MAC for the hosts on the port's link,
 * learned from ARP, neighbour discovery and IPv4 RoCE traffic, resolved
 * with ARP requests (IPv4) or neighbour solicitations (IPv6). Both
 * families share one design and one table: the key is the 16-byte GID
 * form of the address (IPv4-mapped for IPv4), the entry is pending until
 * an answer comes, valid for NEIGH_TTL_S, and solicited again while in
 * use before it expires. An rte_hash maps the address to a slot of
 * p->neigh[]; only the engine thread touches the hash, so it needs no lock. droce_port_dump()
 * may read the slots from another thread: each slot's state is written
 * last, and a slot is never freed before the port, so the worst a
 * concurrent dump sees is an entry in the middle of an update.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "droce_port_priv.h"

/* A learned entry is forgotten this long after the last ARP, ND or RoCE frame
 * from its host... */
#define NEIGH_TTL_S 300
/* ...and asked for again (while still used) once it is this old, so that
 * a busy entry is refreshed before it expires. */
#define NEIGH_REFRESH_S 240
/* An unanswered entry is forgotten when nobody asked for it this long. */
#define NEIGH_PENDING_TTL_S 10
/* At most one ARP request or NS per address per this many milliseconds. */
#define NEIGH_SOLICIT_MS 100
/* Expiry and retries run this often (seconds). */
#define NEIGH_GC_S 1

int
droce_neigh_init(struct droce_port *p)
{
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = DROCE_NEIGH_MAX,
		.key_len = sizeof(((struct droce_neigh *)0)->ip),
		.socket_id = rte_eth_dev_socket_id(p->port_id),
		/* Overflow buckets: adding fails only when every slot is taken. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};

	snprintf(name, sizeof(name), "droce_nb%u", p->port_id);
	p->neigh_hash = rte_hash_create(&hp);
	return p->neigh_hash == NULL ? -rte_errno : 0;
}

void
droce_neigh_fini(struct droce_port *p)
{
	rte_hash_free(p->neigh_hash);
	p->neigh_hash = NULL;
}

/* Whether IPv4 @p ip (host order) is another host of the port's subnet. */
static bool
neigh_on_link4(const struct droce_port *p, uint32_t ip)
{
	uint32_t host = ip & ~p->ipv4_mask;

	if (p->ipv4 == 0 || ip == p->ipv4 ||
	    (ip & p->ipv4_mask) != (p->ipv4 & p->ipv4_mask))
		return false;
	/* The network and broadcast addresses are nobody's, except on
	 * point-to-point /31 links (RFC 3021), which have no such addresses. */
	if (p->ipv4_prefix < 31 && (host == 0 || host == ~p->ipv4_mask))
		return false;
	return true;
}

bool
droce_prefix_match(const struct droce_prefix *pfx, const uint8_t ip[16])
{
	unsigned full = pfx->len / 8, rest = pfx->len % 8;

	if (memcmp(pfx->addr, ip, full) != 0)
		return false;
	return rest == 0 ||
	       ((pfx->addr[full] ^ ip[full]) & (uint8_t)(0xff00 >> rest)) == 0;
}

bool
droce_neigh_on_link(const struct droce_port *p, const uint8_t ip[16])
{
	rte_be32_t be;
	unsigned i;

	if (droce_gid_is_v4mapped(ip)) {
		memcpy(&be, ip + 12, sizeof(be));
		return neigh_on_link4(p, rte_be_to_cpu_32(be));
	}
	/* Multicast and the port's own addresses are no neighbours; every
	 * link-local (fe80::/10) address and the port's prefixes are on link. */
	if (ip[0] == 0xff || droce_port_gid_find(p, ip) >= 0)
		return false;
	if (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80)
		return true;
	for (i = 0; i < p->net.nb_ipv6; i++)
		if (droce_prefix_match(&p->net.ipv6[i], ip))
			return true;
	return false;
}

/* The slot of @p ip, added as pending when absent. NULL when full. */
static struct droce_neigh *
neigh_get(struct droce_port *p, const uint8_t ip[16], uint64_t now)
{
	struct droce_neigh *e;
	int32_t pos;

	pos = rte_hash_lookup(p->neigh_hash, ip);
	if (pos >= 0)
		return &p->neigh[pos];
	pos = rte_hash_add_key(p->neigh_hash, ip);
	if (pos < 0 || pos >= DROCE_NEIGH_MAX) {
		DROCE_PORT_LOG(DEBUG, "port %u: neighbour table full", p->port_id);
		return NULL;
	}
	e = &p->neigh[pos];
	memset(e, 0, sizeof(*e));
	memcpy(e->ip, ip, sizeof(e->ip));
	e->updated = now;
	__atomic_store_n(&e->state, DROCE_NEIGH_PENDING, __ATOMIC_RELEASE);
	return e;
}

void
droce_neigh_learn(struct droce_port *p, const uint8_t ip[16],
		  const struct rte_ether_addr *mac, uint16_t vlan_tci,
		  uint64_t now)
{
	struct droce_neigh *e;

	if (!droce_neigh_on_link(p, ip) || !rte_is_valid_assigned_ether_addr(mac))
		return;
	e = neigh_get(p, ip, now);
	if (e == NULL)
		return;
	e->updated = now;
	if (e->state == DROCE_NEIGH_VALID && e->vlan_tci == vlan_tci &&
	    rte_is_same_ether_addr(&e->mac, mac))
		return;
	e->mac = *mac;
	e->vlan_tci = vlan_tci;
	__atomic_store_n(&e->state, DROCE_NEIGH_VALID, __ATOMIC_RELEASE);
}

/* Send an ARP request or NS for @p e unless one went out very recently. */
static void
neigh_solicit(struct droce_port *p, struct droce_neigh *e, uint64_t now)
{
	if (e->solicited != 0 &&
	    now - e->solicited < p->tsc_hz * NEIGH_SOLICIT_MS / 1000)
		return;
	e->solicited = now;
	if (droce_gid_is_v4mapped(e->ip)) {
		rte_be32_t be;

		memcpy(&be, e->ip + 12, sizeof(be));
		droce_arp_request(p, rte_be_to_cpu_32(be));
	} else {
		droce_nd_solicit(p, e->ip);
	}
}

int
droce_neigh_resolve(struct droce_port *p, const uint8_t ip[16],
		    struct rte_ether_addr *mac, uint16_t *vlan_tci)
{
	uint64_t now = rte_get_tsc_cycles();
	struct droce_neigh *e = neigh_get(p, ip, now);

	if (e == NULL) {
		/* Full: make room from what has expired, and let the caller retry. */
		p->neigh_gc_next = 0;
		droce_neigh_gc(p, now);
		return -EAGAIN;
	}
	if (e->state == DROCE_NEIGH_VALID) {
		if (now - e->updated > p->tsc_hz * NEIGH_REFRESH_S)
			neigh_solicit(p, e, now);
		*mac = e->mac;
		*vlan_tci = e->vlan_tci;
		return 0;
	}
	/* Pending: someone still wants it. */
	e->updated = now;
	neigh_solicit(p, e, now);
	return -EAGAIN;
}

void
droce_neigh_gc(struct droce_port *p, uint64_t now)
{
	uint8_t expired[DROCE_NEIGH_MAX][16];
	unsigned nb_expired = 0, i;
	const void *key;
	void *data;
	uint32_t next = 0;
	int32_t pos;

	if (now < p->neigh_gc_next)
		return;
	p->neigh_gc_next = now + p->tsc_hz * NEIGH_GC_S;
	/* A port given IPv6 addresses tells the link where they are, once it
	 * runs (IPv4-only ports stay as quiet as they were). */
	if (!p->nd_announced && p->started && p->net.nb_ipv6 != 0) {
		p->nd_announced = true;
		droce_nd_announce(p);
	}
	/* Collect first: deleting moves keys under a running iteration. */
	while ((pos = rte_hash_iterate(p->neigh_hash, &key, &data, &next)) >= 0) {
		struct droce_neigh *e = &p->neigh[pos];
		uint64_t age = now - e->updated;

		if (e->state == DROCE_NEIGH_VALID ? age > p->tsc_hz * NEIGH_TTL_S :
		    age > p->tsc_hz * NEIGH_PENDING_TTL_S)
			memcpy(expired[nb_expired++], e->ip, sizeof(e->ip));
		else if (e->state == DROCE_NEIGH_PENDING)
			neigh_solicit(p, e, now);
	}
	for (i = 0; i < nb_expired; i++) {
		pos = rte_hash_del_key(p->neigh_hash, expired[i]);
		if (pos >= 0)
			__atomic_store_n(&p->neigh[pos].state, DROCE_NEIGH_FREE,
					 __ATOMIC_RELEASE);
	}
}

void
droce_neigh_dump(const struct droce_port *p, FILE *f)
{
	uint64_t now = rte_get_tsc_cycles();
	const struct droce_neigh *e;
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	char ip[INET6_ADDRSTRLEN];
	unsigned i;
	uint8_t state;

	fprintf(f, "  neighbours:\n");
	for (i = 0; i < DROCE_NEIGH_MAX; i++) {
		e = &p->neigh[i];
		state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (state == DROCE_NEIGH_FREE)
			continue;
		rte_ether_format_addr(mac, sizeof(mac), &e->mac);
		droce_gid_format(e->ip, ip, sizeof(ip));
		fprintf(f, "    %s %s vlan %u %s, %" PRIu64 " s old\n", ip, state == DROCE_NEIGH_VALID ? mac : "(incomplete)",
			e->vlan_tci & RTE_VLAN_ID_MASK,
			state == DROCE_NEIGH_VALID ? "valid" : "pending",
			(now - e->updated) / p->tsc_hz);
	}
}
