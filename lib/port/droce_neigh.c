/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table: IP address to MAC for the hosts on the port's link,
 * learned from ARP, neighbour discovery and IPv4 RoCE traffic, resolved
 * with ARP requests (IPv4) or neighbour solicitations (IPv6). Both
 * families share one design and one table: the key is the 16-byte GID
 * form of the address (IPv4-mapped for IPv4), the entry is pending until
 * an answer comes, valid for NEIGH_TTL_S, and solicited again while in
 * use before it expires. An rte_hash maps the address to a slot of
 * p->neigh[].
 *
 * Every engine of the port uses the table, and learning runs for RoCE
 * frames on the hot path, so lookups take no lock: the hash is in
 * RW_CONCURRENCY_LF mode and a slot's contents (the 16-byte address
 * included) are read under its seqlock. Changes (a new address, a new MAC,
 * expiry) take the port's neigh_lock; a sender that is already known as it
 * says costs a lookup and a store of its time. Expiry runs on queue 0's
 * engine. A deleted key's slot is freed one scan (a second) later, and
 * readers check that the slot still holds the address they looked up, so
 * a reader never takes another host's MAC. droce_port_dump() reads the
 * slots the same way.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_cycles.h>
#include <rte_errno.h>

#include "droce_port_priv.h"

/* A learned entry is forgotten this long after the last ARP or RoCE frame
 * from its host... */
#define NEIGH_TTL_S 300
/* ...and asked for again (while still used) once it is this old, so that
 * a busy entry is refreshed before it expires. */
#define NEIGH_REFRESH_S 240
/* An unanswered entry is forgotten when nobody asked for it this long. */
#define NEIGH_PENDING_TTL_S 10
/* At most one ARP request per address per this many milliseconds. */
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
		/* Overflow buckets: adding fails only when every slot is
		 * taken; lock-free lookups beside one writer at a time. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE |
			      RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};
	unsigned i;

	snprintf(name, sizeof(name), "droce_nb%u", p->port_id);
	rte_spinlock_init(&p->neigh_lock);
	for (i = 0; i < DROCE_NEIGH_MAX; i++)
		rte_seqlock_init(&p->neigh[i].sl);
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

/*
 * The slot's fields are stored and loaded with relaxed atomics inside the
 * seqlock: the seqlock makes a copy consistent, the atomics make a copy
 * that races with a writer (and is then retried) well defined.
 */
static void
neigh_fields_copy(struct droce_neigh *dst, const struct droce_neigh *src)
{
	unsigned i;

	for (i = 0; i < sizeof(dst->ip); i++)
		__atomic_store_n(&dst->ip[i], __atomic_load_n(&src->ip[i], __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	__atomic_store_n(&dst->state, __atomic_load_n(&src->state, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&dst->vlan_tci, __atomic_load_n(&src->vlan_tci, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	for (i = 0; i < RTE_ETHER_ADDR_LEN; i++)
		__atomic_store_n(&dst->mac.addr_bytes[i],
				 __atomic_load_n(&src->mac.addr_bytes[i], __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
}

/* Under neigh_lock: give slot @p e these fields. */
static void
neigh_set(struct droce_neigh *e, const uint8_t ip[16], enum droce_neigh_state state,
	  const struct rte_ether_addr *mac, uint16_t vlan_tci)
{
	struct droce_neigh v = { .state = state, .vlan_tci = vlan_tci };

	memcpy(v.ip, ip, sizeof(v.ip));
	if (mac != NULL)
		v.mac = *mac;
	rte_seqlock_write_lock(&e->sl);
	neigh_fields_copy(e, &v);
	rte_seqlock_write_unlock(&e->sl);
}

static void
neigh_copy(const struct droce_port *p, int32_t pos, struct droce_neigh *out)
{
	const struct droce_neigh *e = &p->neigh[pos];
	uint32_t sn;

	do {
		sn = rte_seqlock_read_begin(&e->sl);
		neigh_fields_copy(out, e);
	} while (rte_seqlock_read_retry(&e->sl, sn));
}

/* A consistent copy of slot @p pos's ip, state, mac and vlan_tci in
 * @p out. @return true when it holds @p ip. Any engine, no lock. */
static bool
neigh_read(const struct droce_port *p, int32_t pos, const uint8_t ip[16],
	   struct droce_neigh *out)
{
	neigh_copy(p, pos, out);
	return memcmp(out->ip, ip, sizeof(out->ip)) == 0 && out->state != DROCE_NEIGH_FREE;
}

/* Under neigh_lock: the slot of @p ip, added as pending when absent.
 * NULL when full. */
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
	neigh_set(e, ip, DROCE_NEIGH_PENDING, NULL, 0);
	__atomic_store_n(&e->updated, now, __ATOMIC_RELAXED);
	__atomic_store_n(&e->solicited, 0, __ATOMIC_RELAXED);
	return e;
}

void
droce_neigh_learn(struct droce_port *p, const uint8_t ip[16],
		  const struct rte_ether_addr *mac, uint16_t vlan_tci,
		  uint64_t now)
{
	struct droce_neigh cur, *e;
	int32_t pos;

	if (!droce_neigh_on_link(p, ip) || !rte_is_valid_assigned_ether_addr(mac))
		return;
	/* The common case, a known host that says what it said before: no lock. */
	pos = rte_hash_lookup(p->neigh_hash, ip);
	if (pos >= 0 && neigh_read(p, pos, ip, &cur) && cur.state == DROCE_NEIGH_VALID &&
	    cur.vlan_tci == vlan_tci && rte_is_same_ether_addr(&cur.mac, mac)) {
		__atomic_store_n(&p->neigh[pos].updated, now, __ATOMIC_RELAXED);
		return;
	}
	rte_spinlock_lock(&p->neigh_lock);
	e = neigh_get(p, ip, now);
	if (e != NULL) {
		__atomic_store_n(&e->updated, now, __ATOMIC_RELAXED);
		neigh_set(e, ip, DROCE_NEIGH_VALID, mac, vlan_tci);
	}
	rte_spinlock_unlock(&p->neigh_lock);
}

/* Send an ARP request (IPv4) or NS (IPv6) for @p e, which holds @p ip,
 * on @p pq unless one went out very recently: the engine that wins the
 * update of the time sends it. */
static void
neigh_solicit(struct droce_port *p, struct droce_port_queue *pq, struct droce_neigh *e,
	      const uint8_t ip[16], uint64_t now)
{
	uint64_t last = __atomic_load_n(&e->solicited, __ATOMIC_RELAXED);

	if (last != 0 && now - last < p->tsc_hz * NEIGH_SOLICIT_MS / 1000)
		return;
	if (!__atomic_compare_exchange_n(&e->solicited, &last, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (droce_gid_is_v4mapped(ip)) {
		rte_be32_t be;

		memcpy(&be, ip + 12, sizeof(be));
		droce_arp_request(p, pq, rte_be_to_cpu_32(be));
	} else {
		droce_nd_solicit(p, pq, ip);
	}
}

int
droce_neigh_resolve(struct droce_port *p, struct droce_port_queue *pq, const uint8_t ip[16],
		    struct rte_ether_addr *mac, uint16_t *vlan_tci)
{
	uint64_t now = rte_get_tsc_cycles();
	struct droce_neigh cur, *e;
	int32_t pos = rte_hash_lookup(p->neigh_hash, ip);

	if (pos < 0 || !neigh_read(p, pos, ip, &cur)) {
		rte_spinlock_lock(&p->neigh_lock);
		e = neigh_get(p, ip, now);
		rte_spinlock_unlock(&p->neigh_lock);
		if (e == NULL) {
			/* Full: have the next scan make room from what has
			 * expired, and let the caller retry. */
			__atomic_store_n(&p->neigh_gc_next, 0, __ATOMIC_RELAXED);
			return -EAGAIN;
		}
		neigh_solicit(p, pq, e, ip, now);
		return -EAGAIN;
	}
	e = &p->neigh[pos];
	if (cur.state == DROCE_NEIGH_VALID) {
		if (now - __atomic_load_n(&e->updated, __ATOMIC_RELAXED) >
		    p->tsc_hz * NEIGH_REFRESH_S)
			neigh_solicit(p, pq, e, ip, now);
		*mac = cur.mac;
		*vlan_tci = cur.vlan_tci;
		return 0;
	}
	/* Pending: someone still wants it. */
	__atomic_store_n(&e->updated, now, __ATOMIC_RELAXED);
	neigh_solicit(p, pq, e, ip, now);
	return -EAGAIN;
}

int
droce_neigh_probe(struct droce_port *p, const uint8_t ip[16])
{
	uint64_t now = rte_get_tsc_cycles(), last;
	struct droce_neigh cur, *e;
	int32_t pos = rte_hash_lookup(p->neigh_hash, ip);

	if (pos >= 0 && neigh_read(p, pos, ip, &cur) && cur.state == DROCE_NEIGH_VALID)
		return 0;
	rte_spinlock_lock(&p->neigh_lock);
	e = neigh_get(p, ip, now);
	if (e != NULL)
		__atomic_store_n(&e->updated, now, __ATOMIC_RELAXED);
	rte_spinlock_unlock(&p->neigh_lock);
	/* Only an engine sends: queue 0's scans now and solicits what is
	 * pending (or makes room when the table is full). A solicitation of
	 * the last NEIGH_SOLICIT_MS waits its turn, as the data path's do. */
	last = e != NULL ? __atomic_load_n(&e->solicited, __ATOMIC_RELAXED) : 0;
	if (last == 0 || now - last >= p->tsc_hz * NEIGH_SOLICIT_MS / 1000)
		__atomic_store_n(&p->neigh_gc_next, 0, __ATOMIC_RELAXED);
	return -EAGAIN;
}

/* The scan itself, on its own: its key buffer takes 4 KiB of stack,
 * which the check below, made in every engine iteration, need not set up. */
static __rte_noinline void
neigh_gc_scan(struct droce_port *p, struct droce_port_queue *pq, uint64_t now)
{
	uint8_t expired[DROCE_NEIGH_MAX][16];
	unsigned nb_expired = 0, i;
	const void *key;
	void *data;
	uint32_t next = 0;
	int32_t pos;

	__atomic_store_n(&p->neigh_gc_next, now + p->tsc_hz * NEIGH_GC_S, __ATOMIC_RELAXED);
	/* A port given IPv6 addresses tells the link where they are, once it
	 * runs, and reports their solicited-node groups (IPv4-only ports stay
	 * as quiet as they were). */
	if (!p->nd_announced && p->started && p->net.nb_ipv6 != 0) {
		p->nd_announced = true;
		droce_nd_announce(p, pq);
		droce_mcast_report_solicited(p);
	}
	rte_spinlock_lock(&p->neigh_lock);
	/* The slots the last scan deleted: no lookup that found them runs
	 * this long. */
	for (i = 0; i < p->nb_neigh_dead; i++)
		rte_hash_free_key_with_position(p->neigh_hash, p->neigh_dead[i]);
	p->nb_neigh_dead = 0;
	/* Collect first: deleting moves keys under a running iteration. */
	while ((pos = rte_hash_iterate(p->neigh_hash, &key, &data, &next)) >= 0) {
		struct droce_neigh *e = &p->neigh[pos];
		uint64_t age = now - __atomic_load_n(&e->updated, __ATOMIC_RELAXED);

		if (e->state == DROCE_NEIGH_VALID ? age > p->tsc_hz * NEIGH_TTL_S :
		    age > p->tsc_hz * NEIGH_PENDING_TTL_S)
			memcpy(expired[nb_expired++], e->ip, sizeof(e->ip));
		else if (e->state == DROCE_NEIGH_PENDING)
			neigh_solicit(p, pq, e, e->ip, now);
	}
	for (i = 0; i < nb_expired; i++) {
		pos = rte_hash_del_key(p->neigh_hash, expired[i]);
		if (pos < 0)
			continue;
		neigh_set(&p->neigh[pos], expired[i], DROCE_NEIGH_FREE, NULL, 0);
		p->neigh_dead[p->nb_neigh_dead++] = pos;
	}
	rte_spinlock_unlock(&p->neigh_lock);
}

void
droce_neigh_gc(struct droce_port *p, struct droce_port_queue *pq, uint64_t now)
{
	if (now >= __atomic_load_n(&p->neigh_gc_next, __ATOMIC_RELAXED))
		neigh_gc_scan(p, pq, now);
}

void
droce_neigh_dump(const struct droce_port *p, FILE *f)
{
	uint64_t now = rte_get_tsc_cycles();
	struct droce_neigh e;
	char mac[RTE_ETHER_ADDR_FMT_SIZE];
	char ip[INET6_ADDRSTRLEN];
	unsigned i;

	fprintf(f, "  neighbours:\n");
	for (i = 0; i < DROCE_NEIGH_MAX; i++) {
		neigh_copy(p, (int32_t)i, &e);
		if (e.state == DROCE_NEIGH_FREE)
			continue;
		rte_ether_format_addr(mac, sizeof(mac), &e.mac);
		droce_gid_format(e.ip, ip, sizeof(ip));
		fprintf(f, "    %s %s vlan %u %s, %" PRIu64 " s old\n", ip, e.state == DROCE_NEIGH_VALID ? mac : "(incomplete)",
			e.vlan_tci & RTE_VLAN_ID_MASK,
			e.state == DROCE_NEIGH_VALID ? "valid" : "pending",
			(now - __atomic_load_n(&p->neigh[i].updated, __ATOMIC_RELAXED)) /
			p->tsc_hz);
	}
}
