#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../lib/io.h"
#include "../lib/util.h"

static void addwarn(struct config *c, const char *fmt, ...)
{
	va_list ap;

	if (c->nwarn >= CONFIG_MAX_WARN)
		return;
	va_start(ap, fmt);
	vsnprintf(c->warn[c->nwarn++], sizeof c->warn[0], fmt, ap);
	va_end(ap);
}

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof *c);
	c->level = 31;
	c->wait_s = 30;
	c->stall_s = 300;
	c->final = FINAL_REBOOT;
}

static int set_dev(struct config *c, const char *v)
{
	if (!*v || strlen(v) >= sizeof c->dev)
		return -EINVAL;
	snprintf(c->dev, sizeof c->dev, "%s", v);
	return 0;
}

static int set_uint(const char *v, uint64_t max, unsigned *out)
{
	uint64_t x;
	int r = parse_u64(v, 0, &x);

	if (r < 0 || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int set_level(struct config *c, const char *v)
{
	unsigned x;
	int r = set_uint(v, 31, &x);

	if (!r)
		c->level = x;
	return r;
}

static int set_threads(struct config *c, const char *v)
{
	return set_uint(v, 256, &c->threads);
}

static int set_wait(struct config *c, const char *v)
{
	return set_uint(v, 86400, &c->wait_s);
}

static int set_stall(struct config *c, const char *v)
{
	unsigned x;
	int r = set_uint(v, 86400, &x);

	if (!r && x == 0)
		return -EINVAL;	/* "never give up" is the hang we promise not to have */
	if (!r)
		c->stall_s = x;
	return r;
}

static int set_final(struct config *c, const char *v)
{
	static const struct { const char *name; enum final_action a; } map[] = {
		{ "reboot", FINAL_REBOOT }, { "poweroff", FINAL_POWEROFF }, { "halt", FINAL_HALT },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(v, map[i].name)) {
			c->final = map[i].a;
			return 0;
		}
	return -EINVAL;
}

static int set_verbose(struct config *c, const char *v)
{
	unsigned x;
	int r = set_uint(v, 9, &x);

	if (!r)
		c->verbose = x;
	return r;
}

static const struct {
	const char *key;
	int (*set)(struct config *, const char *);
	const char *expect;
} keys[] = {
	{ "dev", set_dev, "a selector list such as SERIAL=abc,/dev/vdb" },
	{ "level", set_level, "a dump level 0..31" },
	{ "threads", set_threads, "a thread count 0..256 (0 = online CPUs)" },
	{ "wait", set_wait, "seconds 0..86400" },
	{ "stall", set_stall, "seconds 1..86400" },
	{ "final", set_final, "reboot, poweroff or halt" },
	{ "verbose", set_verbose, "0..9" },
};

const char *final_action_name(enum final_action a)
{
	static const char *const n[] = { "reboot", "poweroff", "halt" };
	return (unsigned)a < ARRAY_SIZE(n) ? n[a] : "reboot";
}

void config_set(struct config *c, const char *key, const char *value, const char *origin)
{
	if (!strncmp(key, "kdumpinit.", 10))
		key += 10;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strcmp(key, keys[i].key))
			continue;
		if (keys[i].set(c, value) < 0)
			addwarn(c, "%s: kdumpinit.%s=%s is not %s; keeping the default",
				origin, key, value, keys[i].expect);
		return;
	}
	addwarn(c, "%s: unknown setting kdumpinit.%s ignored", origin, key);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int config_load_file(struct config *c, const char *path)
{
	char buf[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read_full_at(fd, buf, sizeof buf, 0);
	close(fd);
	if (n < 0)
		return (int)n;
	if ((size_t)n == sizeof buf) {
		addwarn(c, "%s: longer than %zu bytes; the rest is ignored", path, sizeof buf - 1);
		n--;
	}
	buf[n] = 0;
	int lineno = 0;
	for (char *line = buf, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		/* A comment starts at a '#' outside double quotes: a label
		 * or a path may hold one. */
		int inq = 0;
		for (char *h = line; *h; h++) {
			if (*h == '"')
				inq = !inq;
			else if (*h == '#' && !inq) {
				*h = 0;
				break;
			}
		}
		char *l = trim(line);
		if (!*l)
			continue;
		char *eq = strchr(l, '=');
		char origin[96];
		snprintf(origin, sizeof origin, "%s:%d", path, lineno);
		if (!eq) {
			addwarn(c, "%s: not a key = value line", origin);
			continue;
		}
		*eq = 0;
		char *v = trim(eq + 1);
		size_t vl = strlen(v);
		if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
			v[vl - 1] = 0;
			v++;
		}
		config_set(c, trim(l), v, origin);
	}
	return 0;
}

void config_load_cmdline(struct config *c, const char *cmdline)
{
	char word[1024];
	const char *p = cmdline;

	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		/* The kernel's own rule: double quotes group, and are dropped. */
		size_t n = 0;
		int inq = 0;
		for (; *p && (inq || !isspace((unsigned char)*p)); p++) {
			if (*p == '"') {
				inq = !inq;
				continue;
			}
			if (n < sizeof word - 1)
				word[n++] = *p;
		}
		word[n] = 0;
		if (n < 10 || memcmp(word, "kdumpinit.", 10))
			continue;
		char *eq = strchr(word, '=');
		if (!eq) {
			addwarn(c, "command line: %s has no value", word);
			continue;
		}
		*eq = 0;
		config_set(c, word, eq + 1, "command line");
	}
}
