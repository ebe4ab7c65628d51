/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The console: every family's commands become rte_cmdline instances (a
 * fixed-string token per command word, so TAB completes them and '?' shows
 * the choices, then one multi-string token for the arguments, which the
 * command parses itself: its errors can then say which argument is wrong
 * and why). A multi-string token does not match nothing, so a command
 * whose arguments are all optional is registered twice, with and without
 * them; the others once, so that completion lists each word once.
 *
 * Interactive mode is rte_cmdline's own prompt (line editing, history,
 * completion). Script mode (--cmdline-file) feeds the file's lines to the
 * same parser, echoing each, and remembers whether any failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_socket.h>
#include <rte_common.h>

#include "testpmd.h"

/* What the dispatcher needs to know about an instance. */
struct tp_inst {
	const struct tp_cmd *cmd;
	unsigned nwords;
	bool has_args;
};

volatile bool tp_stop;
static bool quit;
static int last_rc;             /* of the command that ran last */
static cmdline_parse_ctx_t *ctx;
static unsigned nb_insts;

static const struct tp_family tp_family_console;

static const struct tp_family *const families[] = {
	&tp_family_port, &tp_family_objects, &tp_family_qp, &tp_family_traffic,
	&tp_family_console,
};

/* "EINVAL" for -EINVAL. */
static const char *
errname(int rc)
{
	const char *name = strerrorname_np(-rc);

	return name != NULL ? name : "?";
}

static void
verror(int rc, bool with_errno, const char *fmt, va_list ap)
{
	printf("error: ");
	vprintf(fmt, ap);
	if (with_errno)
		printf(": %s (%s)", strerror(-rc), errname(rc));
	printf("\n");
}

int
tp_error(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(rc, true, fmt, ap);
	va_end(ap);
	return rc;
}

/* An error whose message says it all: no errno text after it. */
static int __attribute__((format(printf, 2, 3)))
tp_fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(rc, false, fmt, ap);
	va_end(ap);
	return rc;
}

/* A command's words for people: "destroy pd|mr|cq". */
static void
words_str(const char *words, char *buf, size_t len)
{
	size_t i;

	snprintf(buf, len, "%s", words);
	for (i = 0; buf[i] != '\0'; i++)
		if (buf[i] == '#')
			buf[i] = '|';
}

int
tp_usage(const struct tp_args *a)
{
	char w[128];

	words_str(a->cmd->words, w, sizeof(w));
	return tp_fail(-EINVAL, "usage: %s %s", w, a->cmd->usage);
}

static void
dispatch(void *res, struct cmdline *cl, void *data)
{
	const struct tp_inst *in = data;
	struct tp_args a = { .cmd = in->cmd, .cl = cl };
	char *save = NULL, *tok;
	unsigned i;

	for (i = 0; i < in->nwords; i++)
		a.word[i] = (const char *)res + i * STR_TOKEN_SIZE;
	if (in->has_args) {
		char *args = (char *)res + in->nwords * STR_TOKEN_SIZE;

		for (tok = strtok_r(args, " \t", &save); tok != NULL;
		     tok = strtok_r(NULL, " \t", &save)) {
			if (a.argc == TP_MAX_ARGS) {
				last_rc = tp_fail(-E2BIG, "more than %u arguments", TP_MAX_ARGS);
				goto out;
			}
			a.argv[a.argc++] = tok;
		}
	}
	last_rc = in->cmd->fn(&a);
out:
	fflush(stdout);
}

/* ---- building the cmdline context ---- */

static cmdline_parse_token_hdr_t *
token_new(const char *str, unsigned index)
{
	cmdline_parse_token_string_t *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->hdr.ops = &cmdline_token_string_ops;
	t->hdr.offset = index * STR_TOKEN_SIZE;
	t->string_data.str = str;
	return &t->hdr;
}

static void
inst_free(cmdline_parse_inst_t *inst)
{
	unsigned i;

	for (i = 0; inst->tokens[i] != NULL; i++) {
		cmdline_parse_token_string_t *t = (void *)inst->tokens[i];

		if (t->string_data.str[0] != '\0')
			free((char *)(uintptr_t)t->string_data.str);
		free(t);
	}
	free(inst->data);
	free((char *)(uintptr_t)inst->help_str);
	free(inst);
}

static cmdline_parse_inst_t *
inst_new(const struct tp_cmd *cmd, bool has_args)
{
	char words[128], w[128], *save = NULL, *tok, *help;
	cmdline_parse_inst_t *inst;
	struct tp_inst *in;
	unsigned n = 0;

	inst = calloc(1, sizeof(*inst) + (TP_MAX_WORDS + 2) * sizeof(inst->tokens[0]));
	in = calloc(1, sizeof(*in));
	if (inst == NULL || in == NULL) {
		free(inst);
		free(in);
		return NULL;
	}
	inst->f = dispatch;
	inst->data = in;
	in->cmd = cmd;
	in->has_args = has_args;
	snprintf(words, sizeof(words), "%s", cmd->words);
	for (tok = strtok_r(words, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
		char *s = strdup(tok);

		if (s == NULL || n == TP_MAX_WORDS ||
		    (inst->tokens[n] = token_new(s, n)) == NULL) {
			free(s);
			goto fail;
		}
		n++;
	}
	in->nwords = n;
	/* The multi-string token's result needs STR_MULTI_TOKEN_SIZE bytes,
	 * which the words' results leave in CMDLINE_PARSE_RESULT_BUFSIZE. */
	RTE_BUILD_BUG_ON(TP_MAX_WORDS * STR_TOKEN_SIZE + STR_MULTI_TOKEN_SIZE >
			 CMDLINE_PARSE_RESULT_BUFSIZE);
	if (has_args && (inst->tokens[n] = token_new(TOKEN_STRING_MULTI, n)) == NULL)
		goto fail;
	words_str(cmd->words, w, sizeof(w));
	if (asprintf(&help, "%s %s: %s", w, cmd->usage, cmd->help) < 0)
		goto fail;
	inst->help_str = help;
	return inst;
fail:
	inst_free(inst);
	return NULL;
}

static void
ctx_free(void)
{
	unsigned i;

	for (i = 0; i < nb_insts && ctx[i] != NULL; i++)
		inst_free(ctx[i]);
	free(ctx);
	ctx = NULL;
	nb_insts = 0;
}

/* A usage of "" takes no arguments; "[...]" takes optional ones only. */
static bool
takes_none(const struct tp_cmd *c)
{
	return c->usage[0] == '\0' || c->usage[0] == '[';
}

static bool
takes_some(const struct tp_cmd *c)
{
	return c->usage[0] != '\0';
}

static int
ctx_build(void)
{
	const struct tp_cmd *c;
	unsigned f, n = 0;

	for (f = 0; f < RTE_DIM(families); f++)
		for (c = families[f]->cmds; c->words != NULL; c++)
			n += takes_none(c) + takes_some(c);
	ctx = calloc(n + 1, sizeof(*ctx));
	if (ctx == NULL)
		return -ENOMEM;
	for (f = 0; f < RTE_DIM(families); f++)
		for (c = families[f]->cmds; c->words != NULL; c++) {
			if (takes_none(c) && (ctx[nb_insts++] = inst_new(c, false)) == NULL)
				goto fail;
			if (takes_some(c) && (ctx[nb_insts++] = inst_new(c, true)) == NULL)
				goto fail;
		}
	return 0;
fail:
	ctx_free();
	return -ENOMEM;
}

/* ---- running commands ---- */

/* Whether @p w is one of the '#'-separated @p choices. */
static bool
word_is(const char *choices, const char *w, size_t len)
{
	const char *c = choices;

	for (;;) {
		size_t n = strcspn(c, "# ");

		if (n == len && strncmp(c, w, len) == 0)
			return true;
		if (c[n] != '#')
			return false;
		c += n + 1;
	}
}

/*
 * Print the usage of each command whose words @p line starts with.
 * @return how many there were.
 */
static unsigned
usage_of_words(const char *line)
{
	const struct tp_cmd *c;
	unsigned f, n = 0;
	char w[128];

	for (f = 0; f < RTE_DIM(families); f++)
		for (c = families[f]->cmds; c->words != NULL; c++) {
			const char *cw = c->words, *l = line;
			bool match = true;

			while (match && *cw != '\0') {
				size_t len;

				l += strspn(l, " \t");
				len = strcspn(l, " \t");
				match = len > 0 && word_is(cw, l, len);
				l += len;
				cw += strcspn(cw, " ");
				cw += strspn(cw, " ");
			}
			if (match) {
				words_str(c->words, w, sizeof(w));
				tp_fail(-EINVAL, "%s needs arguments: %s %s", w, w, c->usage);
				n++;
			}
		}
	return n;
}

/* Run one line. @return 0, or a negative errno when it failed. */
static int
run_line(struct cmdline *cl, const char *line)
{
	char buf[STR_MULTI_TOKEN_SIZE + 2];
	int r;

	if (snprintf(buf, sizeof(buf), "%s\n", line) >= (int)sizeof(buf))
		return tp_fail(-E2BIG, "line longer than %u characters", STR_MULTI_TOKEN_SIZE);
	last_rc = 0;
	r = cmdline_parse(cl, buf);
	switch (r) {
	case CMDLINE_PARSE_NOMATCH:
		return tp_fail(-EINVAL, "unknown command: %s ('help' lists them)", line);
	case CMDLINE_PARSE_BAD_ARGS:
		if (usage_of_words(line) == 0)
			tp_fail(-EINVAL, "incomplete or unknown command: %s ('help' lists them)",
				line);
		return -EINVAL;
	case CMDLINE_PARSE_AMBIGUOUS:
		return tp_fail(-EINVAL, "ambiguous command: %s", line);
	default:
		return last_rc;
	}
}

int
tp_console_script(const char *path)
{
	unsigned lineno = 0, nb_cmds = 0, nb_failed = 0;
	char line[STR_MULTI_TOKEN_SIZE];
	struct cmdline *cl;
	FILE *f;
	int rc;

	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, TP_NAME ": %s: %s\n", path, strerror(errno));
		return -errno;
	}
	rc = ctx_build();
	/* No descriptors: commands print with stdio, the echo is ours. */
	cl = rc == 0 ? cmdline_new(ctx, TP_PROMPT, -1, -1) : NULL;
	if (cl == NULL) {
		fprintf(stderr, TP_NAME ": cannot set up the console\n");
		fclose(f);
		ctx_free();
		return -ENOMEM;
	}
	while (!quit && !tp_stop && fgets(line, sizeof(line), f) != NULL) {
		size_t len = strlen(line), skip = strspn(line, " \t");

		lineno++;
		if (len > 0 && line[len - 1] != '\n' && !feof(f)) {
			tp_fail(-E2BIG, "%s:%u: line too long", path, lineno);
			nb_failed++;
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (line[skip] == '\0')
			continue;
		if (line[skip] == '#') {
			printf("%s\n", line);
			continue;
		}
		printf(TP_PROMPT "%s\n", line);
		fflush(stdout);
		nb_cmds++;
		if (run_line(cl, line) != 0)
			nb_failed++;
		fflush(stdout);
	}
	if (tp_stop) {
		printf("interrupted\n");
		nb_failed++;
	}
	printf("%s: %u command%s, %u failed\n", path, nb_cmds, nb_cmds == 1 ? "" : "s",
	       nb_failed);
	fflush(stdout);
	cmdline_free(cl);
	ctx_free();
	fclose(f);
	return nb_failed == 0 ? 0 : -1;
}

int
tp_console_interactive(void)
{
	struct cmdline *cl;

	if (ctx_build() != 0 || (cl = cmdline_stdin_new(ctx, TP_PROMPT)) == NULL) {
		fprintf(stderr, TP_NAME ": cannot set up the console\n");
		ctx_free();
		return -ENOMEM;
	}
	cmdline_interact(cl);
	cmdline_stdin_exit(cl);
	printf("\n");
	ctx_free();
	return 0;
}

/* ---- the console's own commands ---- */

static void
help_family(const struct tp_family *fam)
{
	const struct tp_cmd *c;
	char w[128];

	printf("%s: %s\n", fam->name, fam->summary);
	for (c = fam->cmds; c->words != NULL; c++) {
		words_str(c->words, w, sizeof(w));
		printf("  %s%s%s\n      %s\n", w, c->usage[0] != '\0' ? " " : "", c->usage,
		       c->help);
	}
}

static int
cmd_help(struct tp_args *a)
{
	bool all, found = false;
	unsigned f;

	if (a->argc > 1)
		return tp_usage(a);
	if (a->argc == 0) {
		printf("Command families ('help <family>' or 'help all' for the commands):\n");
		for (f = 0; f < RTE_DIM(families); f++)
			printf("  %-8s %s\n", families[f]->name, families[f]->summary);
		printf("Objects get small ids, printed when they are made. TAB completes "
		       "command words, '?' lists what may come next.\n");
		return 0;
	}
	all = strcmp(a->argv[0], "all") == 0;
	for (f = 0; f < RTE_DIM(families); f++)
		if (all || strcmp(a->argv[0], families[f]->name) == 0) {
			help_family(families[f]);
			found = true;
		}
	if (!found)
		return tp_fail(-EINVAL, "no command family '%s' ('help' lists them)", a->argv[0]);
	return 0;
}

static int
cmd_quit(struct tp_args *a)
{
	if (a->argc != 0)
		return tp_usage(a);
	quit = true;
	cmdline_quit(a->cl);
	return 0;
}

/* Run a command that must fail, optionally with a given errno. */
static int
cmd_expect(struct tp_args *a)
{
	char line[STR_MULTI_TOKEN_SIZE];
	size_t len = 0;
	unsigned i;
	int want = 0, rc;

	if (a->argc < 2)
		return tp_usage(a);
	if (strcmp(a->argv[0], "fail") != 0 && (want = tp_errno_by_name(a->argv[0])) == 0)
		return tp_fail(-EINVAL, "'%s' is neither 'fail' nor an errno name (EINVAL, ...)",
			       a->argv[0]);
	/* The command again, as one line; room left for its '\n'. */
	for (i = 1; i < a->argc; i++) {
		int n = snprintf(line + len, sizeof(line) - 1 - len, "%s%s", i > 1 ? " " : "",
				 a->argv[i]);

		if (n < 0 || (size_t)n >= sizeof(line) - 1 - len)
			return tp_fail(-E2BIG, "command too long");
		len += (size_t)n;
	}
	line[len] = '\n';
	line[len + 1] = '\0';
	last_rc = 0;
	rc = cmdline_parse(a->cl, line);
	line[len] = '\0';
	if (rc < 0)
		return tp_fail(-EINVAL, "expect: not a command: %s", line);
	rc = last_rc;
	if (rc == 0)
		return tp_fail(-EPROTO, "expect: the command worked, but %s was expected",
			       want != 0 ? errname(-want) : "a failure");
	if (want != 0 && -rc != want)
		return tp_fail(-EPROTO, "expect: %s was expected, not %s", errname(-want),
			       errname(rc));
	printf("ok: failed as expected (%s)\n", errname(rc));
	return 0;
}

static const struct tp_cmd console_cmds[] = {
	{ "help", "[<family>|all]", "list the command families, or a family's commands",
	  cmd_help },
	{ "quit", "", "destroy every object and exit", cmd_quit },
	{ "expect", "<ERRNO|fail> <command ...>",
	  "run a command that must fail (with that errno): its failure is a success, "
	  "for scripts", cmd_expect },
	{ NULL, NULL, NULL, NULL },
};

static const struct tp_family tp_family_console = {
	"console", "help, quit, expect", console_cmds,
};
