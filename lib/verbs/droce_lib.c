/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Starting droce inside a process that did not start DPDK: on the first
 * ibv_get_device_list(), read the configuration (DROCE_CONF or the
 * embedded default), start the EAL, attach every configured port and run
 * its engine; at exit, stop the engines and the EAL.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "droce.h"
#include "droce_conf.h"
#include "droce_gsi.h"
#include "droce_verbs_priv.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool init_done;
static int init_rc;
static pid_t init_pid;
/* Set while this thread starts the EAL: a PMD linked against libibverbs
 * (mlx4/mlx5) that asks for devices then must not wait for itself. */
static __thread bool in_init;

/*
 * At exit, droce stops its engines (after they sent what they owed, a
 * last ACK say) and leaves the ports and the EAL's memory to the end of
 * the process. It does not close them: in DPDK 22.11, closing a memif
 * port while its peer disconnects races with memif's handler on the EAL's
 * interrupt thread (which rte_eal_cleanup() does not stop either), and
 * the two processes of a test often exit at the same moment.
 */
static void
lib_fini(void)
{
	unsigned i = droce_dev_count();

	/* A forked child inherits this handler but not the engines. */
	if (getpid() != init_pid)
		return;
	while (i-- > 0) {
		struct droce_engine *e;

		for (e = droce_dev_get(i)->engines[0]; e != NULL; e = e->next)
			droce_engine_stop(e);
		droce_port_capture_stop(droce_dev_get(i)->port);
	}
}

/*
 * A memif server's socket file outlives a process that ends without
 * closing its port (see lib_fini), and memif then refuses to start
 * ("Address already in use"). Before the EAL starts, remove such a file
 * when nobody listens on it any more; a live server's is left alone.
 */
static void
lib_remove_stale_memif_socket(const char *arg)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *sock = strstr(arg, "socket=");
	size_t len;
	int fd;

	if (strstr(arg, "net_memif") == NULL || strstr(arg, "role=client") != NULL ||
	    strstr(arg, "socket-abstract=no") == NULL || sock == NULL)
		return;
	sock += strlen("socket=");
	len = strcspn(sock, ",");
	if (len == 0 || len >= sizeof(sun.sun_path))
		return;
	memcpy(sun.sun_path, sock, len);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 && errno == ECONNREFUSED) {
		unlink(sun.sun_path);
		DROCE_LOG(INFO, "removed the stale memif socket %s", sun.sun_path);
	}
	close(fd);
}


/* rte_eal_init() pins the calling thread to the main lcore; a verbs
 * program did not ask for that, so its affinity is put back. */
static int
lib_eal_init(struct droce_conf *c)
{
	char *argv[DROCE_CONF_MAX_EAL_ARGS + 1];
	cpu_set_t cpus;
	bool have_cpus;
	int rc;

	memcpy(argv, c->eal_argv, sizeof(c->eal_argv[0]) * (size_t)c->eal_argc);
	argv[c->eal_argc] = NULL;
	for (int i = 1; i < c->eal_argc; i++)
		lib_remove_stale_memif_socket(c->eal_argv[i]);
	have_cpus = pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0;
	rc = rte_eal_init(c->eal_argc, argv);
	if (have_cpus)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	if (rc < 0)
		return rte_errno == EALREADY ? -EALREADY : -(rte_errno ? rte_errno : EINVAL);
	return 0;
}

static int
lib_attach_ports(struct droce_conf *c)
{
	unsigned i, idx;
	int rc;

	for (i = 0; i < c->nb_ports; i++) {
		struct droce_conf_port *cp = &c->ports[i];

		if (rte_eth_dev_get_port_by_name(cp->device, &cp->port.port_id) != 0) {
			DROCE_LOG(ERR, "%s: [port%u] device %s: no such ethdev (missing --vdev?)",
				  c->source, i, cp->device);
			return -ENODEV;
		}
		cp->port.capture = cp->capture[0] != '\0' ? cp->capture : NULL;
		rc = droce_dev_attach(&cp->port, &idx);
		if (rc != 0) {
			DROCE_LOG(ERR, "%s: [port%u] %s: %s", c->source, i, cp->device,
				  strerror(-rc));
			return rc;
		}
		rc = c->engine_lcore >= 0 ? droce_dev_run_lcore(idx, (unsigned)c->engine_lcore) :
			droce_dev_run_thread(idx, c->idle_sleep_us);
		if (rc != 0) {
			DROCE_LOG(ERR, "droce%u: cannot start its engine: %s", idx, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

bool
droce_lib_owns_eal(void)
{
	/* Set once the EAL droce started is up, and never cleared. */
	return __atomic_load_n(&init_pid, __ATOMIC_ACQUIRE) == getpid();
}

int
droce_lib_init(void)
{
	struct droce_conf c;
	char err[512];
	int rc;

	if (in_init)
		return 0;
	pthread_mutex_lock(&init_lock);
	if (init_done)
		goto out;
	init_done = true;
	in_init = true;
	/* A DPDK application that attached its own devices configured droce. */
	if (droce_dev_count() > 0)
		goto out;
	rc = droce_conf_from_env(&c, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "droce: %s\n", err);
		init_rc = rc;
		goto out;
	}
	rc = lib_eal_init(&c);
	if (rc == -EALREADY) {
		/* The application runs DPDK but attached nothing: no devices. */
		droce_conf_free(&c);
		goto out;
	}
	if (rc != 0) {
		fprintf(stderr, "droce: cannot start DPDK with [eal] args from %s: %s\n",
			c.source, strerror(-rc));
		init_rc = rc;
		droce_conf_free(&c);
		goto out;
	}
	__atomic_store_n(&init_pid, getpid(), __ATOMIC_RELEASE);
	rte_log_set_level(droce_logtype, c.log_level);
	rc = lib_attach_ports(&c);
	droce_conf_free(&c);
	atexit(lib_fini);
	init_rc = rc;
out:
	in_init = false;
	rc = init_rc;
	pthread_mutex_unlock(&init_lock);
	return rc;
}
