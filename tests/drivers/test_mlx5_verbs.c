/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libdroce and the system's libibverbs in one process, as on an mlx5
 * port: the program links libdroce (which exports the verbs API under
 * the version DROCE_0.1), and Debian's mlx5 PMD (librte_net_mlx5, its
 * librte_common_mlx5 and rdma-core's libmlx5) links libibverbs.so.1,
 * whose symbols carry the versions IBVERBS_1.x and IBVERBS_PRIVATE_x.
 * The loader binds a versioned reference only to a definition of that
 * version, so each library gets its own ibv_open_device(); this test
 * shows that it does:
 *
 * - in this process: the PMD loads with every reference resolved
 *   (RTLD_NOW), and ibv_open_device@IBVERBS_1.1 lies in libibverbs.so.1,
 *   ibv_open_device@DROCE_0.1 in libdroce, and the program's own
 *   reference is the latter;
 * - through the loader's own account (LD_DEBUG=bindings in a child that
 *   loads the PMD with every binding done at once): every ibv_ reference
 *   of librte_common_mlx5 and libmlx5 binds to libibverbs.so.1, every one
 *   of this program to libdroce, and nothing with an IBVERBS version to
 *   libdroce.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <infiniband/verbs.h>

#include "droce_test.h"

/* The Mellanox PMD as the EAL loads it from its plugin directory. */
#define MLX5_PMD "librte_net_mlx5.so.23"

/* The program's own references to the verbs API (bound at start). */
static struct ibv_context *(*volatile app_open_device)(struct ibv_device *) = ibv_open_device;
static struct ibv_device **(*volatile app_get_device_list)(int *) = ibv_get_device_list;

/* The file that holds @p addr, or "?". */
static const char *
file_of(const void *addr)
{
	Dl_info info;

	if (addr == NULL || dladdr(addr, &info) == 0 || info.dli_fname == NULL)
		return "?";
	return info.dli_fname;
}

static bool
in_lib(const void *addr, const char *lib)
{
	return strstr(file_of(addr), lib) != NULL;
}

START_TEST(in_process)
{
	void *pmd = dlopen(MLX5_PMD, RTLD_NOW | RTLD_GLOBAL);
	void *sys, *droce;

	ck_assert_msg(pmd != NULL, "dlopen %s: %s (package librte-net-mlx5-23)", MLX5_PMD, dlerror());
	sys = dlvsym(RTLD_DEFAULT, "ibv_open_device", "IBVERBS_1.1");
	droce = dlvsym(RTLD_DEFAULT, "ibv_open_device", "DROCE_0.1");
	ck_assert_msg(in_lib(sys, "libibverbs.so.1"), "IBVERBS_1.1 in %s", file_of(sys));
	ck_assert_msg(in_lib(droce, "libdroce.so"), "DROCE_0.1 in %s", file_of(droce));
	ck_assert_ptr_ne(sys, droce);
	ck_assert_ptr_eq((void *)app_open_device, droce);
	ck_assert_msg(in_lib((void *)app_get_device_list, "libdroce.so"), "ibv_get_device_list in %s",
		      file_of((void *)app_get_device_list));
	/* What libmlx5 registers itself with is the system's too. */
	ck_assert(in_lib(dlvsym(RTLD_DEFAULT, "verbs_register_driver_34", "IBVERBS_PRIVATE_34"),
			 "libibverbs.so.1"));
	dlclose(pmd);
}
END_TEST

/* One "binding file FROM [n] to TO [n]: normal symbol `SYM' [VER]" line. */
struct binding {
	char from[PATH_MAX], to[PATH_MAX], sym[128], ver[64];
};

static bool
binding_parse(const char *line, struct binding *b)
{
	const char *p = strstr(line, "binding file ");

	b->ver[0] = '\0';
	return p != NULL &&
	       sscanf(p, "binding file %4095s [%*d] to %4095s [%*d]: normal symbol `%127[^']' [%63[^]]]",
		      b->from, b->to, b->sym, b->ver) >= 3;
}

START_TEST(loader_bindings)
{
	char self[PATH_MAX], out[64], line[2 * PATH_MAX];
	unsigned pmd = 0, provider = 0, app = 0;
	struct binding b;
	ssize_t n;
	pid_t pid;
	FILE *f;
	int st;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("LD_DEBUG", "bindings", 1);
		setenv("LD_DEBUG_OUTPUT", "/tmp/droce-nicdrv-bindings", 1);
		setenv("LD_BIND_NOW", "1", 1);
		execl(self, self, "--load", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child failed: %#x", st);
	snprintf(out, sizeof(out), "/tmp/droce-nicdrv-bindings.%d", (int)pid);
	f = fopen(out, "r");
	ck_assert_msg(f != NULL, "no loader output in %s", out);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (!binding_parse(line, &b))
			continue;
		/* Nothing that asks for rdma-core's versions gets droce. */
		ck_assert_msg(!(strncmp(b.ver, "IBVERBS", 7) == 0 && strstr(b.to, "libdroce")),
			      "%s", line);
		if (strncmp(b.sym, "ibv_", 4) != 0)
			continue;
		if (strstr(b.from, "librte_common_mlx5") || strstr(b.from, "libmlx5.so")) {
			ck_assert_msg(strstr(b.to, "libibverbs.so.1") != NULL, "%s", line);
			ck_assert_msg(strncmp(b.ver, "IBVERBS", 7) == 0, "%s", line);
			*(strstr(b.from, "libmlx5.so") ? &provider : &pmd) += 1;
		} else if (strcmp(b.from, self) == 0) {
			ck_assert_msg(strstr(b.to, "libdroce.so") != NULL, "%s", line);
			app++;
		}
	}
	fclose(f);
	unlink(out);
	/* librte_common_mlx5 imports 28 verbs functions, libmlx5 some;
	 * this program two (and what Check's helpers take). */
	ck_assert_uint_ge(pmd, 20);
	ck_assert_uint_ge(provider, 1);
	ck_assert_uint_ge(app, 2);
}
END_TEST

int
main(int argc, char **argv)
{
	Suite *s = suite_create("mlx5-verbs");
	TCase *tc = tcase_create("bind");

	/* The child of loader_bindings: load the PMD and say how it went. */
	if (argc == 2 && strcmp(argv[1], "--load") == 0)
		return dlopen(MLX5_PMD, RTLD_NOW | RTLD_GLOBAL) != NULL &&
		       app_open_device != NULL ? EXIT_SUCCESS : EXIT_FAILURE;
	tcase_add_test(tc, in_process);
	tcase_add_test(tc, loader_bindings);
	suite_add_tcase(s, tc);
	return droce_test_run(s) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
