/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_capture [-m MIN] FILE...: every frame of each capture (pcap or
 * pcapng, as droce writes them) is either neighbour traffic (ARP, ICMPv6)
 * or a RoCEv2 packet that droce_pkt_parse() accepts with a good ICRC, and
 * each file holds at least MIN RoCEv2 packets (default 1): a capture that
 * stops early fails. Prints a count per opcode. The EAL arguments come
 * from DROCE_TEST_EAL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_wire.h"

#define EAL_ARGS_MAX 32
#define IPPROTO_ICMPV6_NUM 58

static const char *const parse_errors[] = {
	[DROCE_PARSE_OK] = "ok",
	[DROCE_PARSE_NOT_ROCE] = "not RoCEv2",
	[DROCE_PARSE_MALFORMED] = "malformed",
	[DROCE_PARSE_BAD_OPCODE] = "unknown opcode",
	[DROCE_PARSE_BAD_ICRC] = "bad ICRC",
};

static struct rte_mempool *pool;

/* Split DROCE_TEST_EAL on spaces into an argv for rte_eal_init(). */
static int
eal_init(const char *prog)
{
	static char *argv[EAL_ARGS_MAX];
	const char *env = getenv("DROCE_TEST_EAL");
	char *args, *tok, *save = NULL;
	int argc = 0;

	args = strdup(env ? env : "-l 0 --no-huge -m 256 --no-shconf --no-pci --no-telemetry");
	if (args == NULL)
		return -1;
	argv[argc++] = (char *)(uintptr_t)prog;
	for (tok = strtok_r(args, " ", &save); tok != NULL && argc < EAL_ARGS_MAX;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	return rte_eal_init(argc, argv);
}

/* Copy a frame into a chain of mbufs (frames may be longer than one). */
static struct rte_mbuf *
frame_mbuf(const uint8_t *data, uint32_t len)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint16_t room, n;

		if (m == NULL)
			goto fail;
		room = rte_pktmbuf_tailroom(m);
		n = (uint16_t)(len - off < room ? len - off : room);
		memcpy(rte_pktmbuf_append(m, n), data + off, n);
		off += n;
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			goto fail;
		}
	} while (off < len);
	return head;
fail:
	rte_pktmbuf_free(head);
	return NULL;
}

/* ARP or IPv6 ICMP (neighbour discovery): the port's own business. */
static bool
is_neighbour(const uint8_t *data, uint32_t len)
{
	uint32_t off = RTE_ETHER_HDR_LEN;
	uint16_t type;

	if (len < RTE_ETHER_HDR_LEN)
		return false;
	type = (uint16_t)(data[12] << 8 | data[13]);
	if (type == RTE_ETHER_TYPE_VLAN && len >= RTE_ETHER_HDR_LEN + 4) {
		type = (uint16_t)(data[16] << 8 | data[17]);
		off += 4;
	}
	if (type == RTE_ETHER_TYPE_ARP)
		return true;
	return type == RTE_ETHER_TYPE_IPV6 && len >= off + sizeof(struct rte_ipv6_hdr) &&
	       data[off + offsetof(struct rte_ipv6_hdr, proto)] == IPPROTO_ICMPV6_NUM;
}

/* @return the number of RoCEv2 frames, or -1 after printing what is wrong. */
static long
check_file(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	unsigned long opcodes[256] = { 0 };
	unsigned long frames = 0, roce = 0, neigh = 0;
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *p;
	int ret;
	unsigned i;

	p = pcap_open_offline(path, errbuf);
	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", path, errbuf);
		return -1;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		fprintf(stderr, "%s: link type %d, not Ethernet\n", path, pcap_datalink(p));
		pcap_close(p);
		return -1;
	}
	while ((ret = pcap_next_ex(p, &h, &data)) == 1) {
		struct droce_pkt pkt;
		enum droce_parse_err e;
		struct rte_mbuf *m;

		frames++;
		if (h->caplen != h->len) {
			fprintf(stderr, "%s: frame %lu: captured %u of %u bytes\n", path, frames,
				h->caplen, h->len);
			goto bad;
		}
		if (is_neighbour(data, h->caplen)) {
			neigh++;
			continue;
		}
		m = frame_mbuf(data, h->caplen);
		if (m == NULL) {
			fprintf(stderr, "%s: frame %lu: no mbufs\n", path, frames);
			goto bad;
		}
		e = droce_pkt_parse(m, &pkt, true);
		rte_pktmbuf_free(m);
		if (e != DROCE_PARSE_OK) {
			fprintf(stderr, "%s: frame %lu (%u bytes): %s\n", path, frames, h->caplen,
				(unsigned)e < RTE_DIM(parse_errors) ? parse_errors[e] : "?");
			goto bad;
		}
		roce++;
		opcodes[pkt.opcode]++;
	}
	if (ret != PCAP_ERROR_BREAK) {
		fprintf(stderr, "%s: %s\n", path, pcap_geterr(p));
		goto bad;
	}
	pcap_close(p);
	printf("%s: %lu frames: %lu RoCEv2 with a good ICRC, %lu ARP/ND\n", path, frames, roce,
	       neigh);
	for (i = 0; i < 256; i++)
		if (opcodes[i] != 0)
			printf("  %-24s %lu\n", droce_opcode_table[i].name, opcodes[i]);
	return (long)roce;
bad:
	pcap_close(p);
	return -1;
}

int
main(int argc, char **argv)
{
	long min = 1, n;
	bool ok = true;
	int i = 1;
	char *end;

	if (argc > 2 && strcmp(argv[1], "-m") == 0) {
		min = strtol(argv[2], &end, 10);
		if (*end != '\0' || min < 1) {
			fprintf(stderr, "-m: '%s' is not a positive number\n", argv[2]);
			return 2;
		}
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-m MIN] FILE...\n", argv[0]);
		return 2;
	}
	if (eal_init(argv[0]) < 0) {
		fprintf(stderr, "%s: rte_eal_init failed\n", argv[0]);
		return 1;
	}
	droce_icrc_init();
	pool = rte_pktmbuf_pool_create("check_capture", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "%s: no mbuf pool\n", argv[0]);
		return 1;
	}
	for (; i < argc; i++) {
		n = check_file(argv[i]);
		if (n >= 0 && n < min)
			fprintf(stderr, "%s: %ld RoCEv2 frames, expected at least %ld\n", argv[i], n,
				min);
		if (n < min)
			ok = false;
	}
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return ok ? 0 : 1;
}
