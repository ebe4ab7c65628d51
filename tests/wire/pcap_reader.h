/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal reader of classic pcap files (Ethernet link type), for tests. */
#ifndef DROCE_TEST_PCAP_READER_H
#define DROCE_TEST_PCAP_READER_H

#include <stddef.h>
#include <stdint.h>

struct pcap_frame {
	uint8_t *data;
	uint32_t len;
};

struct pcap_file {
	size_t n;
	struct pcap_frame *frames;
};

/** Load every frame of @p path. @return 0 or a negative errno. */
int pcap_load(const char *path, struct pcap_file *f);
void pcap_free(struct pcap_file *f);

#endif
