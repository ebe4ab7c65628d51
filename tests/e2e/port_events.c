/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port events through the verbs API, as a pair under run_pair.sh:
 * the server (no address argument) waits for IBV_EVENT_PORT_ACTIVE when
 * the client's memif side attaches, then IBV_EVENT_PORT_ERR when it goes;
 * the client (an address argument) holds its device open for 3 seconds.
 * With --again (run_relink.sh) it waits for one more PORT_ACTIVE after the
 * PORT_ERR: the peer came back.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int
wait_event(struct ibv_context *ctx, enum ibv_event_type want, int seconds)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&pfd, 1, seconds * 1000) > 0) {
		if (ibv_get_async_event(ctx, &ev) != 0)
			continue;
		printf("event: %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (ev.event_type == want)
			return 0;
	}
	fprintf(stderr, "no %s within %d s\n", ibv_event_type_str(want), seconds);
	return 1;
}

int
main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	int rc;

	if (list == NULL || list[0] == NULL || (ctx = ibv_open_device(list[0])) == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	if (argc > 1 && argv[argc - 1][0] != '-' && argv[argc - 2][0] != '-') {
		/* The client: just be there for a while (long enough for a
		 * peer that restarts its ethdev after 2 s to find it). */
		sleep(3);
		rc = 0;
	} else {
		fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
		rc = wait_event(ctx, IBV_EVENT_PORT_ACTIVE, 15);
		if (rc == 0 && ibv_query_port(ctx, 1, &pa) == 0)
			printf("port state: %s\n", ibv_port_state_str(pa.state));
		if (rc == 0)
			rc = wait_event(ctx, IBV_EVENT_PORT_ERR, 15);
		if (rc == 0 && argc > 1 && strcmp(argv[1], "--again") == 0)
			rc = wait_event(ctx, IBV_EVENT_PORT_ACTIVE, 15);
	}
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc;
}
