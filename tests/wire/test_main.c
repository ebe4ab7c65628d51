/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/wire unit tests. Usage: test_wire [VECTORS_DIR]; the EAL arguments
 * come from DROCE_TEST_EAL, the vectors directory from argv[1] or
 * DROCE_VECTORS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "wire_test.h"

#define EAL_ARGS_MAX 32

struct rte_mempool *test_pool;
const char *test_vectors_dir;

static void
free_ext(void *addr, void *shinfo)
{
	free(addr);
	free(shinfo);
}

/*
 * Each segment's data is a malloc'd buffer of exactly its length, attached
 * as an external buffer: a read past the data is a heap overflow that
 * AddressSanitizer reports, where the slack of a pool mbuf would hide it.
 */
struct rte_mbuf *
test_mbuf_split(const uint8_t *data, uint32_t len, const uint32_t *cuts,
		unsigned ncuts)
{
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;

	for (unsigned i = 0; i <= ncuts; i++) {
		uint32_t to = i < ncuts ? cuts[i] : len;
		struct rte_mbuf *seg = rte_pktmbuf_alloc(test_pool);
		struct rte_mbuf_ext_shared_info *shinfo = calloc(1, sizeof(*shinfo));
		uint8_t *buf = malloc(to > from ? to - from : 1);

		ck_assert_ptr_nonnull(seg);
		ck_assert_ptr_nonnull(shinfo);
		ck_assert_ptr_nonnull(buf);
		ck_assert_uint_le(from, to);
		shinfo->free_cb = free_ext;
		shinfo->fcb_opaque = shinfo;
		rte_mbuf_ext_refcnt_set(shinfo, 1);
		rte_pktmbuf_attach_extbuf(seg, buf, (rte_iova_t)(uintptr_t)buf,
					  (uint16_t)(to - from), shinfo);
		ck_assert_ptr_nonnull(rte_pktmbuf_append(seg, (uint16_t)(to - from)));
		memcpy(buf, data + from, to - from);
		if (head == NULL)
			head = seg;
		else
			ck_assert_int_eq(rte_pktmbuf_chain(head, seg), 0);
		from = to;
	}
	return head;
}

void
test_addr(struct droce_l3_addr *a, bool ipv6, uint16_t vlan_tci)
{
	static const uint8_t v4[2][16] = {
		{ [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		{ [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
	};
	static const uint8_t v6[2][16] = {
		{ 0xfd, [15] = 1 },
		{ 0xfd, [15] = 2 },
	};

	*a = (struct droce_l3_addr){
		.ipv6 = ipv6,
		.src_mac = {{ 0x02, 0, 0, 0, 0, 0x01 }},
		.dst_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }},
		.vlan_tci = vlan_tci,
		.tclass = 0x68,
		.ttl = 17,
		.flow_label = 0xabcde,
		.ip_id = 0x4321,
		.udp_sport = 50123,
	};
	memcpy(a->sgid, ipv6 ? v6[0] : v4[0], 16);
	memcpy(a->dgid, ipv6 ? v6[1] : v4[1], 16);
}

struct rte_mbuf *
test_build(const struct droce_l3_addr *a, const void *l4, uint32_t l4_len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool);
	unsigned hdr_len = droce_l3_hdr_len(a);
	uint8_t *p;

	ck_assert_ptr_nonnull(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdr_len + l4_len));
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(droce_l3_hdr_write(m, a, l4_len), hdr_len);
	memcpy(p + hdr_len, l4, l4_len);
	ck_assert_int_eq(droce_icrc_append(m, (uint16_t)(sizeof(struct rte_ether_hdr) +
			 (a->vlan_tci ? sizeof(struct rte_vlan_hdr) : 0))), 0);
	return m;
}

void
test_pcap_load(const char *name, struct pcap_file *f)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", test_vectors_dir, name);
	ck_assert_msg(pcap_load(path, f) == 0, "cannot load %s", path);
}

/* Split DROCE_TEST_EAL on spaces into an argv for rte_eal_init(). */
static int
eal_init(const char *prog)
{
	static char *argv[EAL_ARGS_MAX];
	const char *env = getenv("DROCE_TEST_EAL");
	char *args = strdup(env != NULL ? env :
			    "-l 0 --no-huge -m 256 --no-shconf --no-pci --no-telemetry");
	int argc = 0;

	argv[argc++] = (char *)(uintptr_t)prog;
	for (char *save, *t = strtok_r(args, " ", &save); t != NULL && argc < EAL_ARGS_MAX;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	return rte_eal_init(argc, argv);
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	test_vectors_dir = argc > 1 ? argv[1] : getenv("DROCE_VECTORS");
	if (test_vectors_dir == NULL) {
		fprintf(stderr, "usage: %s VECTORS_DIR (or set DROCE_VECTORS)\n", argv[0]);
		return EXIT_FAILURE;
	}
	if (eal_init(argv[0]) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return EXIT_FAILURE;
	}
	printf("ICRC path: %s\n", droce_icrc_init());
	test_pool = rte_pktmbuf_pool_create("wire_test", 255, 0, 0,
					    RTE_PKTMBUF_HEADROOM + TEST_MBUF_DATA,
					    SOCKET_ID_ANY);
	if (test_pool == NULL) {
		fprintf(stderr, "cannot create the mbuf pool\n");
		return EXIT_FAILURE;
	}

	/* The EAL lives once per process: every test runs in this one. */
	sr = srunner_create(suite_table());
	srunner_add_suite(sr, suite_vectors());
	srunner_add_suite(sr, suite_malformed());
	srunner_add_suite(sr, suite_icrc());
	srunner_add_suite(sr, suite_mbuf());
	srunner_add_suite(sr, suite_hdr_tmpl());
	srunner_add_suite(sr, suite_predict());
	srunner_add_suite(sr, suite_copy());
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	rte_mempool_free(test_pool);
	rte_eal_cleanup();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
