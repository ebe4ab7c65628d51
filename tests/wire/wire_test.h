/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the lib/wire unit tests: mbufs from bytes, the capture files. */
#ifndef DROCE_TEST_WIRE_H
#define DROCE_TEST_WIRE_H

#include <check.h>

#include <rte_mbuf.h>

#include "droce_wire.h"
#include "pcap_reader.h"

/** Large enough for the 4154-byte frames of rxe-rc-mtu4096.pcap. */
#define TEST_MBUF_DATA 9216

extern struct rte_mempool *test_pool;
extern const char *test_vectors_dir;

/**
 * An mbuf holding @p len bytes of @p data, cut into segments at the
 * @p ncuts increasing offsets in @p cuts (none: one segment). Segments
 * have no head- or tailroom: nothing can be appended to them.
 */
struct rte_mbuf *test_mbuf_split(const uint8_t *data, uint32_t len,
				 const uint32_t *cuts, unsigned ncuts);

static inline struct rte_mbuf *
test_mbuf(const uint8_t *data, uint32_t len)
{
	return test_mbuf_split(data, len, NULL, 0);
}

/** Addresses for built frames: 10.0.0.1 -> 10.0.0.2 or fd00::1 -> fd00::2. */
void test_addr(struct droce_l3_addr *a, bool ipv6, uint16_t vlan_tci);

/**
 * A complete frame for @p a whose BTH, extension headers, payload and pad
 * are the @p l4_len bytes of @p l4, ICRC appended.
 */
struct rte_mbuf *test_build(const struct droce_l3_addr *a, const void *l4,
			    uint32_t l4_len);

/** Load tests/vectors/@p name; fails the test when it cannot. */
void test_pcap_load(const char *name, struct pcap_file *f);

Suite *suite_table(void);
Suite *suite_vectors(void);
Suite *suite_malformed(void);
Suite *suite_icrc(void);
Suite *suite_mbuf(void);
Suite *suite_hdr_tmpl(void);
Suite *suite_predict(void);
Suite *suite_copy(void);

#endif
