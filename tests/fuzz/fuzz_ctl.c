/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: hostile frames into the parsers of the port's own
 * protocols beside RoCE, which take what any host on the link sends:
 * IPv6 neighbour discovery, IGMP and MLD (lib/wire). Each input is a
 * frame, chained as the input says:
 *
 *   input  := shape frame
 *   shape  := 1 byte: bits 5:0 where the first segment ends (in 4-byte
 *             steps: anywhere in the headers), bits 7:6 the layer 3
 *             offset (an untagged frame, one 802.1Q tag, or past the end)
 *   frame  := the frame's bytes, each segment in a buffer of its own
 *             size, so that a read past it is the sanitizer's to catch
 *
 * Besides ASan's and UBSan's checks, what a parser takes must survive its
 * writer: a message parsed as valid, written again, parses as valid with
 * the same fields (the writers build every message the port sends).
 * Built with the fuzzing build (-Dfuzz=true); CI runs it a fixed number
 * of times (tests/fuzz/run_fuzz.sh).
 */
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "droce_wire.h"

#define FRAME_MAX 4096
#define ROOM (FRAME_MAX + 256)

/* An mbuf over @p len bytes at @p data, made by hand: no EAL, no pool. */
static void
seg_init(struct rte_mbuf *m, void *data, uint16_t len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = data;
	m->buf_len = len;
	m->data_len = len;
	m->pkt_len = len;
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, 1);
}

/* A message written into an empty mbuf of its own. */
struct out_frame {
	struct rte_mbuf m;
	uint8_t buf[ROOM];
};

static struct rte_mbuf *
out_init(struct out_frame *o)
{
	seg_init(&o->m, o->buf, 0);
	o->m.buf_len = sizeof(o->buf);
	return &o->m;
}

static void
check_nd(const struct rte_mbuf *m, uint32_t l3)
{
	static struct out_frame o;
	struct droce_nd_msg a, b;

	if (droce_nd_parse(m, l3, 0, &a) != DROCE_ND_OK)
		return;
	a.vlan_tci = 0;
	if (droce_nd_write(out_init(&o), &a) != 0 ||
	    droce_nd_parse(&o.m, RTE_ETHER_HDR_LEN, 0, &b) != DROCE_ND_OK ||
	    b.type != a.type || b.flags != a.flags || memcmp(b.src, a.src, 16) != 0 ||
	    memcmp(b.dst, a.dst, 16) != 0 || memcmp(b.target, a.target, 16) != 0 ||
	    b.has_lladdr != a.has_lladdr ||
	    (a.has_lladdr && !rte_is_same_ether_addr(&a.lladdr, &b.lladdr)))
		abort();
}

static void
check_igmp(const struct rte_mbuf *m, uint32_t l3)
{
	static struct out_frame o;
	struct droce_igmp_msg a, b;

	if (droce_igmp_parse(m, l3, 0, &a) != DROCE_IGMP_OK)
		return;
	a.vlan_tci = 0;
	if (droce_igmp_write(out_init(&o), &a) != 0 ||
	    droce_igmp_parse(&o.m, RTE_ETHER_HDR_LEN, 0, &b) != DROCE_IGMP_OK ||
	    b.type != a.type || b.src != a.src || b.dst != a.dst || b.group != a.group)
		abort();
}

static void
check_mld(const struct rte_mbuf *m, uint32_t l3)
{
	static struct out_frame o;
	struct droce_mld_msg a, b;

	if (droce_mld_parse(m, l3, 0, &a) != DROCE_MLD_OK)
		return;
	a.vlan_tci = 0;
	if (droce_mld_write(out_init(&o), &a) != 0 ||
	    droce_mld_parse(&o.m, RTE_ETHER_HDR_LEN, 0, &b) != DROCE_MLD_OK ||
	    b.type != a.type || memcmp(b.src, a.src, 16) != 0 || memcmp(b.dst, a.dst, 16) != 0 ||
	    memcmp(b.group, a.group, 16) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t l3_offs[4] = {
		RTE_ETHER_HDR_LEN, RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN, RTE_ETHER_HDR_LEN, FRAME_MAX,
	};
	struct rte_mbuf head, tail;
	uint8_t *a = NULL, *b = NULL;
	uint16_t len, split;
	uint32_t l3;

	if (size < 2 || size - 1 > FRAME_MAX)
		return 0;
	len = (uint16_t)(size - 1);
	split = (uint16_t)((data[0] & 0x3f) * 4);
	l3 = l3_offs[data[0] >> 6];
	if (split == 0 || split >= len)
		split = len;
	a = malloc(split);
	if (a == NULL)
		return 0;
	memcpy(a, data + 1, split);
	seg_init(&head, a, split);
	if (split < len) {
		b = malloc(len - split);
		if (b == NULL) {
			free(a);
			return 0;
		}
		memcpy(b, data + 1 + split, len - split);
		seg_init(&tail, b, (uint16_t)(len - split));
		head.next = &tail;
		head.nb_segs = 2;
		head.pkt_len = len;
	}
	check_nd(&head, l3);
	check_igmp(&head, l3);
	check_mld(&head, l3);
	free(a);
	free(b);
	return 0;
}
