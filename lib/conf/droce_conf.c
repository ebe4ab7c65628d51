/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce's configuration file.
 *
 * rte_cfgfile holds the values, but it skips lines it does not understand,
 * keeps repeated sections and keys, truncates long names and values and
 * never says on which line something is. So a small scan of our own runs
 * first: it rejects what rte_cfgfile would take silently and remembers the
 * line of every section and key, so each message can name it. The scan
 * mirrors rte_cfgfile's rules (the comment character, whitespace
 * trimming, the line buffer size) so both see the same file.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_common.h>
#include <rte_config.h>
#include <rte_ether.h>
#include <rte_kvargs.h>
#include <rte_log.h>

#include "droce_conf.h"
#include "droce_conf_priv.h"
#include "droce_conf_net.h"
#include "droce_driver.h"

/* The only comment character: rte_cfgfile takes one. */
#define CONF_COMMENT '#'
/* rte_cfgfile reads a line into a buffer of CFG_NAME_LEN + CFG_VALUE_LEN + 4
 * bytes with fgets and fails on a line that does not fit with its newline. */
#define CONF_LINE_MAX (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

/* An IB MTU of 1024 fits a 1500-byte Ethernet frame, which every port
 * type carries (rxe chooses the same on a 1500-byte netdev). */
#define CONF_DEFAULT_MTU 1024
#define CONF_DEFAULT_IDLE_SLEEP_US 100
#define CONF_MAX_IDLE_SLEEP_US 1000000
/* A day: long enough for any peer, small enough for 64-bit TSC arithmetic. */
#define CONF_MAX_LINK_WAIT_MS 86400000
#define CONF_DEFAULT_LOG_LEVEL RTE_LOG_NOTICE

/* EAL arguments every default shares: no hugepage files, no PCI probe (it
 * would take the machine's own NIC), no telemetry socket. */
#define CONF_EAL_BASE "--in-memory --no-pci --no-telemetry"

/* Where a section or key was seen; key "" for a section heading. */
struct conf_line {
	char section[CFG_NAME_LEN];
	char key[CFG_NAME_LEN];
	unsigned line;
};

struct conf_ctx {
	const char *path;
	char *err;
	size_t errlen;
	struct conf_line *lines;
	unsigned nb_lines, cap_lines;
};

/*
 * Write "PATH:LINE: [SECTION] KEY: message" into the caller's buffer,
 * leaving out the parts that are not given (line 0, NULL section or key).
 * @return ret, so callers can "return conf_err(...)".
 */
static int __rte_format_printf(6, 7)
conf_err(const struct conf_ctx *x, int ret, unsigned line, const char *section,
	 const char *key, const char *fmt, ...)
{
	char where[64] = "";
	char what[CFG_NAME_LEN * 2 + 8] = "";
	char msg[512];
	va_list ap;

	if (x->err == NULL || x->errlen == 0)
		return ret;
	if (line)
		snprintf(where, sizeof(where), ":%u", line);
	if (section && key)
		snprintf(what, sizeof(what), "[%s] %s: ", section, key);
	else if (section)
		snprintf(what, sizeof(what), "[%s]: ", section);
	else if (key)
		snprintf(what, sizeof(what), "%s: ", key);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s%s: %s%s", x->path, where, what, msg);
	return ret;
}

/* ---- the scan ---- */

static const struct conf_line *
conf_line_find(const struct conf_ctx *x, const char *section, const char *key)
{
	unsigned i;

	for (i = 0; i < x->nb_lines; i++)
		if (strcmp(x->lines[i].section, section) == 0 &&
		    strcmp(x->lines[i].key, key) == 0)
			return &x->lines[i];
	return NULL;
}

static int
conf_line_add(struct conf_ctx *x, const char *section, const char *key, unsigned line)
{
	if (x->nb_lines == x->cap_lines) {
		unsigned cap = x->cap_lines ? 2 * x->cap_lines : 32;
		struct conf_line *v = realloc(x->lines, cap * sizeof(*v));

		if (v == NULL)
			return conf_err(x, -ENOMEM, line, NULL, NULL, "out of memory");
		x->lines = v;
		x->cap_lines = cap;
	}
	snprintf(x->lines[x->nb_lines].section, CFG_NAME_LEN, "%s", section);
	snprintf(x->lines[x->nb_lines].key, CFG_NAME_LEN, "%s", key);
	x->lines[x->nb_lines].line = line;
	x->nb_lines++;
	return 0;
}

/* Trim whitespace at both ends of s[0..*len) in place; returns the start. */
static char *
conf_trim(char *s, size_t *len)
{
	size_t n = *len;

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	s[n] = '\0';
	*len = n;
	return s;
}

/* One "[name]" line. */
static int
conf_scan_section(struct conf_ctx *x, char *s, size_t n, unsigned lineno, char *section)
{
	const struct conf_line *prev;
	char *end = memchr(s, ']', n);
	char *name;
	size_t len;

	if (end == NULL)
		return conf_err(x, -EINVAL, lineno, NULL, NULL, "expected ']' after the section name");
	if (end != s + n - 1)
		return conf_err(x, -EINVAL, lineno, NULL, NULL, "text after ']'");
	len = (size_t)(end - s - 1);
	name = conf_trim(s + 1, &len);
	if (len == 0)
		return conf_err(x, -EINVAL, lineno, NULL, NULL, "empty section name");
	if (len >= CFG_NAME_LEN)
		return conf_err(x, -EINVAL, lineno, NULL, NULL,
				"section name longer than %d characters", CFG_NAME_LEN - 1);
	prev = conf_line_find(x, name, "");
	if (prev != NULL)
		return conf_err(x, -EINVAL, lineno, name, NULL,
				"repeated (first at line %u)", prev->line);
	strcpy(section, name);
	return conf_line_add(x, name, "", lineno);
}

/* One "key = value" line inside @p section ("" before the first section). */
static int
conf_scan_entry(struct conf_ctx *x, char *s, size_t n, unsigned lineno, const char *section)
{
	const struct conf_line *prev;
	char *eq = memchr(s, '=', n);
	size_t klen, vlen;
	char *key;

	if (eq == NULL)
		return conf_err(x, -EINVAL, lineno, NULL, NULL,
				"expected \"[section]\" or \"key = value\"");
	klen = (size_t)(eq - s);
	vlen = n - klen - 1;
	key = conf_trim(s, &klen);
	conf_trim(eq + 1, &vlen);
	if (klen == 0)
		return conf_err(x, -EINVAL, lineno, NULL, NULL, "no key before '='");
	if (klen >= CFG_NAME_LEN)
		return conf_err(x, -EINVAL, lineno, NULL, NULL,
				"key longer than %d characters", CFG_NAME_LEN - 1);
	if (section[0] == '\0')
		return conf_err(x, -EINVAL, lineno, NULL, key,
				"outside any section (put it under [eal], [portN], ...)");
	if (vlen == 0)
		return conf_err(x, -EINVAL, lineno, section, key, "no value");
	if (vlen >= CFG_VALUE_LEN)
		return conf_err(x, -EINVAL, lineno, section, key,
				"value longer than %d characters", CFG_VALUE_LEN - 1);
	prev = conf_line_find(x, section, key);
	if (prev != NULL)
		return conf_err(x, -EINVAL, lineno, section, key,
				"repeated (first at line %u)", prev->line);
	return conf_line_add(x, section, key, lineno);
}

/* Check the syntax of the whole file and record where everything is. */
static int
conf_scan(struct conf_ctx *x)
{
	char section[CFG_NAME_LEN] = "";
	unsigned lineno = 0;
	size_t cap = 0;
	char *buf = NULL;
	ssize_t got;
	int ret = 0;
	FILE *f;

	f = fopen(x->path, "r");
	if (f == NULL) {
		ret = -errno;
		return conf_err(x, ret, 0, NULL, NULL, "cannot open: %s", strerror(-ret));
	}
	while (ret == 0 && (got = getline(&buf, &cap, f)) >= 0) {
		size_t n = (size_t)got;
		char *hash, *s;

		lineno++;
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		if (memchr(buf, '\0', n) != NULL) {
			ret = conf_err(x, -EINVAL, lineno, NULL, NULL, "NUL byte in line");
			break;
		}
		if (n > CONF_LINE_MAX) {
			ret = conf_err(x, -EINVAL, lineno, NULL, NULL,
				       "line longer than %d characters", CONF_LINE_MAX);
			break;
		}
		/* As rte_cfgfile: the first comment character starts a
		 * comment unless a backslash escapes it. */
		hash = memchr(buf, CONF_COMMENT, n);
		if (hash != NULL && (hash == buf || hash[-1] != '\\'))
			n = (size_t)(hash - buf);
		s = conf_trim(buf, &n);
		if (n == 0)
			continue;
		if (s[0] == '[')
			ret = conf_scan_section(x, s, n, lineno, section);
		else
			ret = conf_scan_entry(x, s, n, lineno, section);
	}
	if (ret == 0 && ferror(f))
		ret = conf_err(x, -EIO, 0, NULL, NULL, "read error");
	free(buf);
	fclose(f);
	return ret;
}

/* ---- values ---- */

bool
droce_conf_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static const char *const conf_log_names[] = {
	[RTE_LOG_ERR] = "error",
	[RTE_LOG_WARNING] = "warning",
	[RTE_LOG_NOTICE] = "notice",
	[RTE_LOG_INFO] = "info",
	[RTE_LOG_DEBUG] = "debug",
};
#define CONF_LOG_LEVELS "error, warning, notice, info, debug"

/* @return the RTE_LOG_* level named @p s, or 0. */
static unsigned
conf_log_level(const char *s)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(conf_log_names); i++)
		if (conf_log_names[i] != NULL && strcmp(s, conf_log_names[i]) == 0)
			return i;
	return 0;
}

/*
 * Split @p args into words at whitespace; double quotes group words and
 * are removed ("a b"c is one word, a bc). The words go into one
 * allocation that starts with argv[0] "droce".
 * @return 0, -EINVAL for an unterminated quote, -E2BIG for too many
 * words or -ENOMEM.
 */
static int
conf_split_eal(struct droce_conf *c, const char *args)
{
	static const char prog[] = "droce";
	/* Splitting never grows the text: every word but the last gives up
	 * a separator for its NUL, the last takes the extra byte. */
	char *buf = malloc(sizeof(prog) + strlen(args) + 1);
	char *argv[DROCE_CONF_MAX_EAL_ARGS];
	const char *p = args;
	int argc = 1;
	char *out;

	if (buf == NULL)
		return -ENOMEM;
	memcpy(buf, prog, sizeof(prog));
	argv[0] = buf;
	out = buf + sizeof(prog);
	for (;;) {
		bool quoted = false;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		/* Keep one slot for the NULL that ends argv. */
		if (argc == DROCE_CONF_MAX_EAL_ARGS - 1) {
			free(buf);
			return -E2BIG;
		}
		argv[argc++] = out;
		for (; *p != '\0' && (quoted || !isspace((unsigned char)*p)); p++) {
			if (*p == '"')
				quoted = !quoted;
			else
				*out++ = *p;
		}
		*out++ = '\0';
		if (quoted) {
			free(buf);
			return -EINVAL;
		}
	}
	droce_conf_free(c);
	memcpy(c->eal_argv, argv, argc * sizeof(argv[0]));
	c->eal_argv[argc] = NULL;
	c->eal_argc = argc;
	return 0;
}

/* EAL arguments of a default: in memory, the main lcore on the CPU the
 * caller runs on, plus @p extra. */
static int
conf_default_eal(struct droce_conf *c, const char *extra)
{
	char args[256];
	int cpu = sched_getcpu();

	snprintf(args, sizeof(args), "-l %d " CONF_EAL_BASE "%s%s",
		 cpu < 0 ? 0 : cpu, extra[0] ? " " : "", extra);
	return conf_split_eal(c, args);
}

/* What every configuration starts from before its sections are read. */
static void
conf_init(struct droce_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->engine_lcore = -1;
	c->idle_sleep_us = CONF_DEFAULT_IDLE_SLEEP_US;
	c->log_level = CONF_DEFAULT_LOG_LEVEL;
}

/* Arguments each key handler gets. */
struct conf_entry {
	struct conf_ctx *x;
	struct droce_conf *c;
	struct droce_conf_port *port;  /* [portN] only */
	const char *section, *key, *val;
	unsigned line;
};

#define ENTRY_ERR(e, ...) conf_err((e)->x, -EINVAL, (e)->line, (e)->section, (e)->key, __VA_ARGS__)

static int
conf_eal_args(const struct conf_entry *e)
{
	int ret = conf_split_eal(e->c, e->val);

	if (ret == -EINVAL)
		return ENTRY_ERR(e, "unterminated \"");
	if (ret == -E2BIG)
		return ENTRY_ERR(e, "more than %d arguments", DROCE_CONF_MAX_EAL_ARGS - 2);
	if (ret < 0)
		return conf_err(e->x, ret, e->line, e->section, e->key, "out of memory");
	return 0;
}

static int
conf_engine_lcore(const struct conf_entry *e)
{
	unsigned long v;

	if (strcmp(e->val, "thread") == 0) {
		e->c->engine_lcore = -1;
		return 0;
	}
	if (!droce_conf_uint(e->val, 0, RTE_MAX_LCORE - 1, &v))
		return ENTRY_ERR(e, "'%s' is neither \"thread\" nor an lcore number (0..%d)",
				 e->val, RTE_MAX_LCORE - 1);
	e->c->engine_lcore = (int)v;
	return 0;
}

static int
conf_engine_idle_sleep(const struct conf_entry *e)
{
	unsigned long v;

	if (!droce_conf_uint(e->val, 0, CONF_MAX_IDLE_SLEEP_US, &v))
		return ENTRY_ERR(e, "'%s' is not a number of microseconds (0..%d)",
				 e->val, CONF_MAX_IDLE_SLEEP_US);
	e->c->idle_sleep_us = (unsigned)v;
	return 0;
}

static int
conf_log_level_key(const struct conf_entry *e)
{
	unsigned level = conf_log_level(e->val);

	if (level == 0)
		return ENTRY_ERR(e, "'%s' is not a log level (" CONF_LOG_LEVELS ")", e->val);
	e->c->log_level = level;
	return 0;
}

static int
conf_port_device(const struct conf_entry *e)
{
	if (strlen(e->val) >= sizeof(e->port->device))
		return ENTRY_ERR(e, "longer than %zu characters", sizeof(e->port->device) - 1);
	strcpy(e->port->device, e->val);
	return 0;
}

static int
conf_port_ipv4(const struct conf_entry *e)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(e->val, '/');
	unsigned long prefix;
	struct in_addr in;
	uint32_t ip;

	if (slash == NULL || (size_t)(slash - e->val) >= sizeof(addr) ||
	    !droce_conf_uint(slash + 1, 1, 32, &prefix))
		goto bad;
	memcpy(addr, e->val, (size_t)(slash - e->val));
	addr[slash - e->val] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		goto bad;
	ip = ntohl(in.s_addr);
	/* 0.0.0.0, multicast (224/4) and class E with broadcast (240/4). */
	if (ip == 0 || ip >= 0xe0000000u)
		return ENTRY_ERR(e, "%s is not a unicast address", addr);
	e->port->port.ipv4 = ip;
	e->port->port.ipv4_prefix = (uint8_t)prefix;
	return 0;
bad:
	return ENTRY_ERR(e, "'%s' is not an address with a prefix length (a.b.c.d/1..32)", e->val);
}

static int
conf_port_mac(const struct conf_entry *e)
{
	struct rte_ether_addr mac;

	if (rte_ether_unformat_addr(e->val, &mac) != 0)
		return ENTRY_ERR(e, "'%s' is not a MAC address (xx:xx:xx:xx:xx:xx)", e->val);
	if (!rte_is_unicast_ether_addr(&mac) || rte_is_zero_ether_addr(&mac))
		return ENTRY_ERR(e, "%s is not a unicast address", e->val);
	e->port->port.mac = mac;
	e->port->port.mac_set = true;
	return 0;
}

static int
conf_port_mtu(const struct conf_entry *e)
{
	unsigned long v;

	if (!droce_conf_uint(e->val, 256, 4096, &v) || !rte_is_power_of_2((uint32_t)v))
		return ENTRY_ERR(e, "%s is not an IB MTU (256, 512, 1024, 2048, 4096)", e->val);
	e->port->port.mtu = (uint16_t)v;
	return 0;
}

static int
conf_port_desc(const struct conf_entry *e)
{
	unsigned long v;

	if (!droce_conf_uint(e->val, 1, UINT16_MAX, &v))
		return ENTRY_ERR(e, "'%s' is not a number of descriptors (1..%u)", e->val, UINT16_MAX);
	if (strcmp(e->key, "rxd") == 0)
		e->port->port.nb_rxd = (uint16_t)v;
	else
		e->port->port.nb_txd = (uint16_t)v;
	return 0;
}

static int
conf_port_mbufs(const struct conf_entry *e)
{
	unsigned long v;

	if (!droce_conf_uint(e->val, 1, INT32_MAX, &v))
		return ENTRY_ERR(e, "'%s' is not a number of mbufs (1..%d)", e->val, INT32_MAX);
	e->port->port.nb_mbufs = (uint32_t)v;
	return 0;
}

static int
conf_port_engines(const struct conf_entry *e)
{
	unsigned long v;

	if (!droce_conf_uint(e->val, 1, DROCE_PORT_QUEUES_MAX, &v) || !rte_is_power_of_2((uint32_t)v))
		return ENTRY_ERR(e, "%s is not a number of engines (1, 2, 4, 8 or 16)", e->val);
	e->port->port.nb_queues = (uint16_t)v;
	return 0;
}

static int
conf_port_placement(const struct conf_entry *e)
{
	if (strcmp(e->val, "round_robin") == 0)
		e->port->port.placement = DROCE_PLACE_ROUND_ROBIN;
	else if (strcmp(e->val, "least_loaded") == 0)
		e->port->port.placement = DROCE_PLACE_LEAST_LOADED;
	else
		return ENTRY_ERR(e, "'%s' is not a QP placement (round_robin, least_loaded)", e->val);
	return 0;
}

static int
conf_port_link(const struct conf_entry *e)
{
	if (strcmp(e->val, "auto") == 0)
		e->port->port.link_up = false;
	else if (strcmp(e->val, "up") == 0)
		e->port->port.link_up = true;
	else
		return ENTRY_ERR(e, "'%s' is not a link mode (auto, up)", e->val);
	return 0;
}

static int
conf_port_link_wait(const struct conf_entry *e)
{
	unsigned long v;

	if (!droce_conf_uint(e->val, 0, CONF_MAX_LINK_WAIT_MS, &v))
		return ENTRY_ERR(e, "'%s' is not a number of milliseconds (0..%d)",
				 e->val, CONF_MAX_LINK_WAIT_MS);
	e->port->port.link_wait_ms = (uint32_t)v;
	return 0;
}

static int
conf_port_capture(const struct conf_entry *e)
{
	/* A value is shorter than CFG_VALUE_LEN, far below PATH_MAX. */
	strcpy(e->port->capture, e->val);
	e->port->port.capture = e->port->capture;
	return 0;
}

/* ---- fault injection lists (fault_rx, fault_tx) ---- */

#define CONF_FAULT_KEYS "drop, dup, reorder, corrupt, delay, delay_us, segment, seed"

/* Write "KEY: message" into @p err. @return -EINVAL. */
static int __rte_format_printf(4, 5)
conf_fault_err(char *err, size_t errlen, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s%s%s", key ? key : "", key ? ": " : "", msg);
	return -EINVAL;
}

/* A probability: a plain decimal number in [0, 1]. */
static bool
conf_prob(const char *s, double *out)
{
	char *end;
	double v;

	/* strtod() would also take spaces, a sign, hex, inf and nan. */
	if ((*s < '0' || *s > '9') && *s != '.')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v >= 0 && v <= 1))
		return false;
	*out = v;
	return true;
}

/* One key=value of a fault list. */
static int
conf_fault_pair(struct droce_fault_conf *c, const char *key, const char *val,
		char *err, size_t errlen)
{
	static const struct {
		const char *name;
		size_t off;
	} probs[] = {
		{ "drop", offsetof(struct droce_fault_conf, drop) },
		{ "dup", offsetof(struct droce_fault_conf, duplicate) },
		{ "reorder", offsetof(struct droce_fault_conf, reorder) },
		{ "corrupt", offsetof(struct droce_fault_conf, corrupt) },
		{ "delay", offsetof(struct droce_fault_conf, delay) },
	};
	unsigned long v;
	unsigned i;

	if (val == NULL || val[0] == '\0')
		return conf_fault_err(err, errlen, key, "no value");
	for (i = 0; i < RTE_DIM(probs); i++) {
		if (strcmp(key, probs[i].name) != 0)
			continue;
		if (!conf_prob(val, (double *)((uint8_t *)c + probs[i].off)))
			return conf_fault_err(err, errlen, key,
					      "'%s' is not a probability (0..1)", val);
		return 0;
	}
	if (strcmp(key, "delay_us") == 0) {
		if (!droce_conf_uint(val, 1, DROCE_FAULT_DELAY_US_MAX, &v))
			return conf_fault_err(err, errlen, key,
					      "'%s' is not a number of microseconds (1..%u)",
					      val, DROCE_FAULT_DELAY_US_MAX);
		c->delay_us = (unsigned)v;
		return 0;
	}
	if (strcmp(key, "segment") == 0) {
		if (!droce_conf_uint(val, DROCE_FAULT_SEGMENT_MIN, UINT16_MAX, &v))
			return conf_fault_err(err, errlen, key,
					      "'%s' is not a segment size (%u..%u bytes)", val,
					      DROCE_FAULT_SEGMENT_MIN, UINT16_MAX);
		c->segment = (uint16_t)v;
		return 0;
	}
	if (strcmp(key, "seed") == 0) {
		if (!droce_conf_uint(val, 0, ULONG_MAX, &v))
			return conf_fault_err(err, errlen, key,
					      "'%s' is not a decimal number (0..%lu)", val, ULONG_MAX);
		c->seed = v;
		return 0;
	}
	return conf_fault_err(err, errlen, key, "unknown fault (expected " CONF_FAULT_KEYS ")");
}

int
droce_conf_fault_parse(const char *s, struct droce_fault_conf *c, char *err, size_t errlen)
{
	struct rte_kvargs *kv;
	unsigned i, j;
	int ret = 0;

	if (s == NULL || c == NULL)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	kv = rte_kvargs_parse(s, NULL);
	if (kv == NULL)
		return conf_fault_err(err, errlen, NULL,
				      "not a list of key=value pairs (e.g. drop=0.01,seed=42)");
	for (i = 0; i < kv->count && ret == 0; i++) {
		const char *key = kv->pairs[i].key;

		if (key[0] == '\0') {
			ret = conf_fault_err(err, errlen, NULL, "a value without a key");
			break;
		}
		for (j = 0; j < i; j++)
			if (strcmp(kv->pairs[j].key, key) == 0)
				ret = conf_fault_err(err, errlen, key, "repeated");
		if (ret == 0)
			ret = conf_fault_pair(c, key, kv->pairs[i].value, err, errlen);
	}
	rte_kvargs_free(kv);
	if (ret == 0 && c->delay > 0 && c->delay_us == 0)
		ret = conf_fault_err(err, errlen, "delay", "needs delay_us (how long)");
	if (ret != 0)
		memset(c, 0, sizeof(*c));
	return ret;
}

static int
conf_port_fault(const struct conf_entry *e)
{
	struct droce_fault_conf *c = strcmp(e->key, "fault_rx") == 0 ?
				     &e->port->port.fault_rx : &e->port->port.fault_tx;
	char msg[384];

	if (droce_conf_fault_parse(e->val, c, msg, sizeof(msg)) != 0)
		return ENTRY_ERR(e, "%s", msg);
	return 0;
}

static int
conf_port_cc(const struct conf_entry *e)
{
	char msg[384];

	if (droce_conf_cc_set(&e->port->port, e->key, e->val, msg, sizeof(msg)) != 0)
		return ENTRY_ERR(e, "%s", msg);
	return 0;
}

/* IPv6, VLAN, priority and routes: parsed in droce_conf_net.c. */
static int
conf_port_net(const struct conf_entry *e)
{
	char msg[256];

	if (droce_conf_net_key(e->key, e->val, &e->port->port.net, msg, sizeof(msg)) != 0)
		return ENTRY_ERR(e, "%s", msg);
	return 0;
}

struct conf_key {
	const char *name;
	int (*set)(const struct conf_entry *e);
};

struct conf_section {
	const char *name;          /* "port" stands for port0..port7 */
	const char *key_names;     /* for the "unknown key" message */
	const struct conf_key *keys;
};

static const struct conf_key conf_eal_keys[] = {
	{ "args", conf_eal_args },
	{ NULL, NULL },
};

static const struct conf_key conf_engine_keys[] = {
	{ "lcore", conf_engine_lcore },
	{ "idle_sleep_us", conf_engine_idle_sleep },
	{ NULL, NULL },
};

static const struct conf_key conf_log_keys[] = {
	{ "level", conf_log_level_key },
	{ NULL, NULL },
};

static const struct conf_key conf_port_keys[] = {
	{ "device", conf_port_device },
	{ "ipv4", conf_port_ipv4 },
	{ "mac", conf_port_mac },
	{ "mtu", conf_port_mtu },
	{ "rxd", conf_port_desc },
	{ "txd", conf_port_desc },
	{ "mbufs", conf_port_mbufs },
	{ "engines", conf_port_engines },
	{ "placement", conf_port_placement },
	{ "capture", conf_port_capture },
	{ "link", conf_port_link },
	{ "link_wait_ms", conf_port_link_wait },
	{ "fault_rx", conf_port_fault },
	{ "fault_tx", conf_port_fault },
	{ "ecn", conf_port_cc },
	{ "cnp_interval_us", conf_port_cc },
	{ "dcqcn", conf_port_cc },
	{ "bottleneck", conf_port_cc },
	{ "ipv6", conf_port_net },
	{ "gateway", conf_port_net },
	{ "route", conf_port_net },
	{ "vlan", conf_port_net },
	{ "pcp", conf_port_net },
	{ "dscp", conf_port_net },
	{ NULL, NULL },
};

static const struct conf_section conf_sections[] = {
	{ "eal", "args", conf_eal_keys },
	{ "engine", "lcore, idle_sleep_us", conf_engine_keys },
	{ "log", "level", conf_log_keys },
	{ "port", "device, ipv4, mac, mtu, rxd, txd, mbufs, engines, placement, capture, link, "
	  "link_wait_ms, fault_rx, fault_tx, " DROCE_CONF_CC_KEYS ", " DROCE_CONF_NET_KEYS,
	  conf_port_keys },
};

/*
 * Which section @p name is; for [portN] also N. @return the table entry,
 * or NULL with a message.
 */
static const struct conf_section *
conf_section_find(struct conf_ctx *x, const char *name, unsigned line, unsigned *port, int *ret)
{
	unsigned long n;
	unsigned i;

	*ret = -EINVAL;
	if (strncmp(name, "port", 4) == 0 && droce_conf_uint(name + 4, 0, ULONG_MAX, &n) &&
	    (name[4] != '0' || name[5] == '\0')) {
		if (n >= DROCE_CONF_MAX_PORTS) {
			conf_err(x, -EINVAL, line, name, NULL, "droce has at most %d ports (port0..port%d)",
				 DROCE_CONF_MAX_PORTS, DROCE_CONF_MAX_PORTS - 1);
			return NULL;
		}
		*port = (unsigned)n;
		return &conf_sections[RTE_DIM(conf_sections) - 1];
	}
	for (i = 0; i + 1 < RTE_DIM(conf_sections); i++)
		if (strcmp(name, conf_sections[i].name) == 0)
			return &conf_sections[i];
	conf_err(x, -EINVAL, line, name, NULL,
		 "unknown section (expected eal, engine, log or port0..port%d)",
		 DROCE_CONF_MAX_PORTS - 1);
	return NULL;
}

/* Apply every key of the section whose heading is x->lines[head]. */
static int
conf_apply_section(struct conf_ctx *x, struct rte_cfgfile *cfg, struct droce_conf *c,
		   unsigned head, uint32_t *ports_seen)
{
	const struct conf_line *h = &x->lines[head];
	const struct conf_section *sec;
	struct conf_entry e = { .x = x, .c = c, .section = h->section };
	unsigned i, port = 0;
	int ret;

	sec = conf_section_find(x, h->section, h->line, &port, &ret);
	if (sec == NULL)
		return ret;
	if (sec->keys == conf_port_keys) {
		*ports_seen |= 1u << port;
		e.port = &c->ports[port];
		e.port->port.mtu = CONF_DEFAULT_MTU;
		droce_cc_conf_default(&e.port->port.cc);
	}
	for (i = head + 1; i < x->nb_lines && x->lines[i].key[0] != '\0'; i++) {
		const struct conf_key *k;

		e.key = x->lines[i].key;
		e.line = x->lines[i].line;
		e.val = rte_cfgfile_get_entry(cfg, e.section, e.key);
		if (e.val == NULL)
			return conf_err(x, -EIO, e.line, e.section, e.key,
					"rte_cfgfile did not read this key (file changed?)");
		for (k = sec->keys; k->name != NULL; k++)
			if (strcmp(k->name, e.key) == 0)
				break;
		if (k->name == NULL)
			return ENTRY_ERR(&e, "unknown key (expected %s)", sec->key_names);
		ret = k->set(&e);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The port sections together: numbered without gaps, each with a device
 * of its own. */
static int
conf_check_ports(struct conf_ctx *x, struct droce_conf *c, uint32_t seen)
{
	char name[16];
	unsigned i, j;

	if (seen == 0)
		return conf_err(x, -EINVAL, 0, NULL, NULL,
				"no [port0] section: a configuration needs at least one port");
	c->nb_ports = (unsigned)(32 - __builtin_clz(seen));
	for (i = 0; i < c->nb_ports; i++) {
		const struct conf_line *l;

		snprintf(name, sizeof(name), "port%u", i);
		if (!(seen & (1u << i))) {
			char next[16];

			for (j = i + 1; !(seen & (1u << j)); j++)
				;
			snprintf(next, sizeof(next), "port%u", j);
			return conf_err(x, -EINVAL, conf_line_find(x, next, "")->line, next, NULL,
					"ports must be numbered from 0 without gaps ([%s] is missing)",
					name);
		}
		if (c->ports[i].device[0] == '\0')
			return conf_err(x, -EINVAL, conf_line_find(x, name, "")->line, name, "device",
					"missing (the ethdev name, e.g. net_memif0)");
		for (j = 0; j < i; j++) {
			if (strcmp(c->ports[i].device, c->ports[j].device) != 0)
				continue;
			l = conf_line_find(x, name, "device");
			return conf_err(x, -EINVAL, l->line, name, "device",
					"%s is already the device of [port%u]", c->ports[i].device, j);
		}
	}
	return 0;
}

int
droce_conf_load(const char *path, struct droce_conf *c, char *err, size_t errlen)
{
	const struct rte_cfgfile_parameters params = { .comment_character = CONF_COMMENT };
	struct conf_ctx x = { .path = path, .err = err, .errlen = errlen };
	struct rte_cfgfile *cfg = NULL;
	uint32_t ports_seen = 0;
	unsigned i;
	int ret;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (path == NULL || c == NULL)
		return -EINVAL;
	conf_init(c);
	ret = conf_scan(&x);
	if (ret < 0)
		goto out;
	cfg = rte_cfgfile_load_with_params(path, 0, &params);
	if (cfg == NULL) {
		ret = conf_err(&x, -EIO, 0, NULL, NULL, "rte_cfgfile could not read it");
		goto out;
	}
	for (i = 0; i < x.nb_lines && ret == 0; i++)
		if (x.lines[i].key[0] == '\0')
			ret = conf_apply_section(&x, cfg, c, i, &ports_seen);
	if (ret == 0)
		ret = conf_check_ports(&x, c, ports_seen);
	if (ret == 0 && c->eal_argc == 0) {
		ret = conf_default_eal(c, "");
		if (ret < 0)
			conf_err(&x, ret, 0, NULL, NULL, "out of memory");
	}
	if (ret == 0)
		snprintf(c->source, sizeof(c->source), "%s", path);
out:
	if (cfg != NULL)
		rte_cfgfile_close(cfg);
	free(x.lines);
	if (ret < 0)
		droce_conf_free(c);
	return ret;
}

/* The default, reporting a failure to allocate the EAL arguments. */
static int
conf_default(struct droce_conf *c)
{
	struct droce_conf_port *p = &c->ports[0];
	int ret;

	conf_init(c);
	snprintf(c->source, sizeof(c->source), "(default)");
	/* net_ring0 without arguments is one port whose TX ring is its own
	 * RX ring: a loopback device that needs no NIC. */
	ret = conf_default_eal(c, "--vdev=net_ring0");
	c->nb_ports = 1;
	snprintf(p->device, sizeof(p->device), "net_ring0");
	p->port.ipv4 = RTE_IPV4(10, 255, 0, 1);
	p->port.ipv4_prefix = 24;
	p->port.mtu = 4096;
	droce_cc_conf_default(&p->port.cc);
	return ret;
}

void
droce_conf_default(struct droce_conf *c)
{
	/* On failure eal_argc stays 0, which droce_conf_from_env() reports. */
	conf_default(c);
}

/* DROCE_CAPTURE: port 0 into @p path, port N into path with ".N" before
 * the extension of its last component ("a.pcapng" -> "a.1.pcapng"). */
static int
conf_env_capture(struct droce_conf *c, const char *path, struct conf_ctx *x)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	unsigned i;

	base = base ? base + 1 : path;
	/* A leading dot names a hidden file, not an extension. */
	dot = strrchr(base, '.');
	if (dot == NULL || dot == base)
		dot = path + strlen(path);
	for (i = 0; i < c->nb_ports; i++) {
		struct droce_conf_port *p = &c->ports[i];
		int n;

		if (i == 0)
			n = snprintf(p->capture, sizeof(p->capture), "%s", path);
		else
			n = snprintf(p->capture, sizeof(p->capture), "%.*s.%u%s",
				     (int)(dot - path), path, i, dot);
		if (n < 0 || (size_t)n >= sizeof(p->capture))
			return conf_err(x, -ENAMETOOLONG, 0, NULL, NULL, "path too long");
		p->port.capture = p->capture;
	}
	return 0;
}

/* DROCE_CAPTURE and DROCE_LOG, over whatever the configuration said. */
static int
conf_env_overrides(struct droce_conf *c, struct conf_ctx *x)
{
	const char *capture = getenv("DROCE_CAPTURE");
	const char *log = getenv("DROCE_LOG");
	int ret;

	if (capture != NULL && capture[0] != '\0') {
		x->path = "DROCE_CAPTURE";
		ret = conf_env_capture(c, capture, x);
		if (ret < 0)
			return ret;
	}
	if (log != NULL && log[0] != '\0') {
		unsigned level = conf_log_level(log);

		x->path = "DROCE_LOG";
		if (level == 0)
			return conf_err(x, -EINVAL, 0, NULL, NULL,
					"'%s' is not a log level (" CONF_LOG_LEVELS ")", log);
		c->log_level = level;
	}
	return 0;
}

int
droce_conf_from_env(struct droce_conf *c, char *err, size_t errlen)
{
	const char *path = getenv("DROCE_CONF");
	struct conf_ctx x = { .path = "(default)", .err = err, .errlen = errlen };
	int ret;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (c == NULL)
		return -EINVAL;
	if (path != NULL && path[0] != '\0') {
		ret = droce_conf_load(path, c, err, errlen);
		if (ret < 0)
			return ret;
	} else if (conf_default(c) < 0) {
		droce_conf_free(c);
		return conf_err(&x, -ENOMEM, 0, NULL, NULL, "out of memory");
	}
	ret = conf_env_overrides(c, &x);
	if (ret < 0)
		droce_conf_free(c);
	return ret;
}

void
droce_conf_free(struct droce_conf *c)
{
	if (c == NULL)
		return;
	/* Every argument string lives in the one allocation that argv[0]
	 * starts, so a caller that let rte_eal_init() reorder eal_argv[1..]
	 * still frees the right thing. */
	if (c->eal_argc > 0)
		free(c->eal_argv[0]);
	memset(c->eal_argv, 0, sizeof(c->eal_argv));
	c->eal_argc = 0;
}
