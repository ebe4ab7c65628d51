/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-QP counters: droce keeps them inside the QP and shows them through
 * its /droce/qp telemetry command (lib/telemetry), so the console asks its
 * own process's telemetry socket, as dpdk-telemetry.py would, and prints
 * the answer. Telemetry answers are flat JSON objects of numbers and
 * strings, which a few lines can read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>

#include "testpmd.h"

/* DPDK's telemetry messages are at most this long (max_output_len). */
#define TEL_BUF 16384

/* Connect to the v2 socket and check that the process behind it is us. */
static int
tel_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };
	char info[1024], *pid;
	ssize_t n;
	int fd, rc;

	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dpdk_telemetry.v2",
			     rte_eal_get_runtime_dir()) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		rc = -errno;
		close(fd);
		return rc == -ECONNREFUSED ? -ENOENT : rc;
	}
	/* The server speaks first: {"version":..., "pid":N, "max_output_len":N}. A
	 * socket left by, or taken over from, another process with the same
	 * --file-prefix is not ours to read. */
	n = recv(fd, info, sizeof(info) - 1, 0);
	if (n <= 0) {
		close(fd);
		return n < 0 ? -errno : -EPROTO;
	}
	info[n] = '\0';
	pid = strstr(info, "\"pid\":");
	if (pid == NULL || strtol(pid + 6, NULL, 10) != getpid()) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* Print the pairs of the flat object at @p p, except those in @p skip. */
static void
print_pairs(const char *p)
{
	static const char *const skip[] = { "qpn", "type", "state" };
	char key[64], val[64];
	unsigned i, k, n = 0;
	bool shown;

	while (*p == '"') {
		for (p++, k = 0; *p != '\0' && *p != '"'; p++)
			if (k < sizeof(key) - 1)
				key[k++] = *p;
		key[k] = '\0';
		if (*p++ != '"' || *p++ != ':')
			return;
		if (*p == '"')
			p++;
		for (k = 0; *p != '\0' && *p != '"' && *p != ',' && *p != '}'; p++)
			if (k < sizeof(val) - 1)
				val[k++] = *p;
		val[k] = '\0';
		if (*p == '"')
			p++;
		if (*p == ',')
			p++;
		for (i = 0, shown = true; i < sizeof(skip) / sizeof(skip[0]); i++)
			if (strcmp(key, skip[i]) == 0)
				shown = false;
		if (!shown)
			continue;
		/* PSNs in hex, as everywhere else in the console. */
		k = strlen(key);
		if (k > 4 && strcmp(key + k - 4, "_psn") == 0)
			snprintf(val, sizeof(val), "0x%lx", strtoul(val, NULL, 10));
		printf("%s%s %s", n++ % 4 == 0 ? "\n    " : "  ", key, val);
	}
	printf("\n");
}

int
tp_telemetry_qp(unsigned dev, uint32_t qpn)
{
	char cmd[64], *buf, *obj;
	ssize_t n;
	int fd, rc = 0;

	fd = tel_connect();
	if (fd < 0)
		return fd;
	buf = malloc(TEL_BUF + 1);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	snprintf(cmd, sizeof(cmd), "/droce/qp,%u,%u", dev, qpn);
	errno = 0;
	if (send(fd, cmd, strlen(cmd), 0) < 0 || (n = recv(fd, buf, TEL_BUF, 0)) <= 0) {
		rc = errno != 0 ? -errno : -EPROTO;
		goto out;
	}
	buf[n] = '\0';
	/* {"/droce/qp":{"qpn":17,...}}, or null when droce knows no such QP. */
	obj = strchr(buf + 1, '{');
	if (obj == NULL) {
		rc = -ESRCH;
		goto out;
	}
	printf("  engine (telemetry /droce/qp):");
	print_pairs(obj + 1);
out:
	free(buf);
	close(fd);
	return rc;
}
