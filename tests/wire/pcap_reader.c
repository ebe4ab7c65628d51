/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pcap_reader.h"

#define PCAP_MAGIC_US 0xa1b2c3d4u
#define PCAP_MAGIC_NS 0xa1b23c4du
#define PCAP_LINKTYPE_ETHERNET 1
#define PCAP_MAX_FRAME 65536

struct pcap_global {
	uint32_t magic;
	uint16_t major, minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_record {
	uint32_t ts_sec, ts_frac, incl_len, orig_len;
};

/* The captures are little-endian, as the machines that run the tests. */
int
pcap_load(const char *path, struct pcap_file *f)
{
	struct pcap_global g;
	struct pcap_record r;
	FILE *fp = fopen(path, "rb");
	int ret = -EINVAL;

	f->n = 0;
	f->frames = NULL;
	if (fp == NULL)
		return -errno;
	if (fread(&g, sizeof(g), 1, fp) != 1 ||
	    (g.magic != PCAP_MAGIC_US && g.magic != PCAP_MAGIC_NS) ||
	    g.linktype != PCAP_LINKTYPE_ETHERNET)
		goto out;
	while (fread(&r, sizeof(r), 1, fp) == 1) {
		struct pcap_frame *fr;

		if (r.incl_len == 0 || r.incl_len > PCAP_MAX_FRAME)
			goto out;
		fr = realloc(f->frames, (f->n + 1) * sizeof(*fr));
		if (fr == NULL)
			goto out;
		f->frames = fr;
		fr = &f->frames[f->n];
		fr->len = r.incl_len;
		fr->data = malloc(r.incl_len);
		if (fr->data == NULL)
			goto out;
		f->n++;
		if (fread(fr->data, r.incl_len, 1, fp) != 1)
			goto out;
	}
	ret = feof(fp) ? 0 : -EIO;
out:
	fclose(fp);
	if (ret != 0)
		pcap_free(f);
	return ret;
}

void
pcap_free(struct pcap_file *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->frames[i].data);
	free(f->frames);
	f->frames = NULL;
	f->n = 0;
}
