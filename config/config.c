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
#include "dmtable.h"

void config_warn(struct config *c, const char *fmt, ...)
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
	c->wait_s = 300;
	c->stall_s = 300;
	c->final = FINAL_REBOOT;
	for (int i = 0; i < CFG_NKEYS; i++)
		c->src[i] = CFG_SRC_DEFAULT;
}

static int set_dev(struct config *c, const char *v)
{
	if (!*v || strlen(v) >= sizeof c->dev)
		return -EINVAL;
	snprintf(c->dev, sizeof c->dev, "%s", v);
	return 0;
}

/* Its form is net/link.c's to judge (a layer above): here, one word that
 * fits. */
static int set_ip(struct config *c, const char *v)
{
	if (!*v || strlen(v) >= sizeof c->ip || strpbrk(v, " \t\n\"'\\"))
		return -EINVAL;
	snprintf(c->ip, sizeof c->ip, "%s", v);
	return 0;
}

static int set_dm(struct config *c, const char *v)
{
	struct dm_table t;
	char why[200];

	_Static_assert(sizeof c->dm > DMT_WORD_MAX, "kdumpinit.dm holds a whole word");
	if (dmtable_parse(v, &t, why, sizeof why) < 0)
		return -EINVAL;
	snprintf(c->dm, sizeof c->dm, "%s", v);
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

static int set_watchdog(struct config *c, const char *v)
{
	unsigned x;

	if (!strcmp(v, "off")) {
		c->watchdog_s = WATCHDOG_OFF;
		return 0;
	}
	/* 0 would be "keep the hardware's", which is the default, not a
	 * value to write; the 1 s tick of the petting thread needs 2 s. */
	int r = set_uint(v, 3600, &x);
	if (!r && x < 2)
		return -EINVAL;
	if (!r)
		c->watchdog_s = x;
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

static int set_full(struct config *c, const char *v)
{
	if (strcmp(v, "keep") && strcmp(v, "overwrite"))
		return -EINVAL;
	c->full_overwrite = !strcmp(v, "overwrite");
	return 0;
}

static int set_memmap(struct config *c, const char *v)
{
	static const char *const n[] = { "auto", "exclude", "keep" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(v, n[i])) {
			c->memmap = i;
			return 0;
		}
	return -EINVAL;
}

/* 64 hex digits, or the public key file's line ("kdumpinit-public-key
 * HEX", as kdumpinit keygen writes it). */
static int set_pubkey(struct config *c, const char *v)
{
	static const char pre[] = "kdumpinit-public-key ";
	if (!strncmp(v, pre, sizeof pre - 1))
		v += sizeof pre - 1;
	if (hex_decode(v, strlen(v), c->pubkey, sizeof c->pubkey) < 0)
		return -EINVAL;
	c->have_pubkey = 1;
	c->seal_asked = 1;
	c->seal_why[0] = 0;
	return 0;
}

/* Indexed by enum config_key. */
static const struct {
	const char *key;
	int (*set)(struct config *, const char *);
	const char *expect;
} keys[CFG_NKEYS] = {
	[CFG_DEV] = { "dev", set_dev, "a selector list such as SERIAL=abc,/dev/vdb" },
	[CFG_LEVEL] = { "level", set_level, "a dump level 0..31" },
	[CFG_THREADS] = { "threads", set_threads, "a thread count 0..256 (0 = online CPUs)" },
	[CFG_WAIT] = { "wait", set_wait, "seconds 0..86400" },
	[CFG_STALL] = { "stall", set_stall, "seconds 1..86400" },
	[CFG_WATCHDOG] = { "watchdog", set_watchdog, "seconds 2..3600 or off" },
	[CFG_FINAL] = { "final", set_final, "reboot, poweroff or halt" },
	[CFG_VERBOSE] = { "verbose", set_verbose, "0..9" },
	[CFG_FULL] = { "full", set_full, "keep or overwrite" },
	[CFG_MEMMAP] = { "memmap", set_memmap, "auto, exclude or keep" },
	[CFG_PUBKEY] = { "pubkey", set_pubkey, "a public key of 64 hex digits (kdumpinit keygen)" },
	[CFG_DM] = { "dm", set_dm, "a device-mapper table as kdumpinit arm records it" },
	[CFG_IP] = { "ip", set_ip, "ADDR/PREFIX[,GATEWAY[,MAC]] for a network dump device" },
};

const char *final_action_name(enum final_action a)
{
	static const char *const n[] = { "reboot", "poweroff", "halt" };
	return (unsigned)a < ARRAY_SIZE(n) ? n[a] : "reboot";
}

const char *config_src_name(enum config_src s)
{
	static const char *const n[CFG_SRC_N] = {
		[CFG_SRC_DEFAULT] = "default", [CFG_SRC_FILE] = "file", [CFG_SRC_EFI] = "efi",
		[CFG_SRC_DT] = "dt", [CFG_SRC_SMBIOS] = "smbios", [CFG_SRC_FWCFG] = "fw_cfg",
		[CFG_SRC_CMDLINE] = "cmdline",
	};
	return (unsigned)s < CFG_SRC_N ? n[s] : "?";
}

int config_set_src(struct config *c, const char *key, const char *value, const char *origin,
		   enum config_src src, unsigned *seen)
{
	if (!strncmp(key, "kdumpinit.", 10))
		key += 10;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strcmp(key, keys[i].key))
			continue;
		if (seen && (*seen & 1u << i)) {
			config_warn(c, "%s: kdumpinit.%s given again; the first value stays", origin, key);
			return 0;
		}
		/* An outranked value is still checked, on a copy, so that its
		 * typo is reported whichever order the sources were read in. */
		int apply = src >= c->src[i];
		struct config scratch;
		struct config *t = c;
		if (!apply) {
			scratch = *c;
			t = &scratch;
		}
		if (keys[i].set(t, value) < 0) {
			if (i == CFG_PUBKEY) {
				/* No default to fall back on: the dump was to be
				 * sealed, and a dump in the clear is not one. */
				char why[160];
				snprintf(why, sizeof why, "%s: kdumpinit.pubkey is not %s", origin,
					 keys[i].expect);
				config_seal_unreadable(c, src, seen, why);
				return -EINVAL;
			}
			if (c->src[i] == CFG_SRC_DEFAULT)
				config_warn(c, "%s: kdumpinit.%s=%s is not %s; keeping the default",
					origin, key, value, keys[i].expect);
			else
				config_warn(c, "%s: kdumpinit.%s=%s is not %s; keeping the value from %s",
					origin, key, value, keys[i].expect,
					config_src_name(c->src[i]));
			return -EINVAL;
		}
		if (seen)
			*seen |= 1u << i;
		if (!apply)
			return 0;
		c->src[i] = src;
		return 1;
	}
	config_warn(c, "%s: unknown setting kdumpinit.%s ignored", origin, key);
	return -EINVAL;
}

void config_seal_unreadable(struct config *c, enum config_src src, unsigned *seen,
			    const char *why)
{
	const unsigned bit = 1u << CFG_PUBKEY;

	config_warn(c, "%s; no dump will be written unless a higher source gives a key", why);
	c->seal_asked = 1;
	/* The rules of any value: outranked, or after this source's first
	 * key, it decides nothing. */
	if (src < c->src[CFG_PUBKEY] || (seen && (*seen & bit)))
		return;
	if (seen)
		*seen |= bit;
	c->have_pubkey = 0;
	c->src[CFG_PUBKEY] = src;
	snprintf(c->seal_why, sizeof c->seal_why, "%s", why);
}

int config_seal(const struct config *c)
{
	if (c->have_pubkey)
		return 1;
	return c->seal_asked ? -ENOKEY : 0;
}

void config_set(struct config *c, const char *key, const char *value, const char *origin)
{
	config_set_src(c, key, value, origin, CFG_SRC_CMDLINE, NULL);
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

static void load_line(struct config *c, char *line, const char *origin, enum config_src src,
		      unsigned *seen)
{
	/* A comment starts at a '#' outside double quotes: a label or a
	 * path may hold one. */
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
		return;
	char *eq = strchr(l, '=');
	if (!eq) {
		config_warn(c, "%s: not a key = value line", origin);
		return;
	}
	*eq = 0;
	char *v = trim(eq + 1);
	size_t vl = strlen(v);
	if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
		v[vl - 1] = 0;
		v++;
	}
	config_set_src(c, trim(l), v, origin, src, seen);
}

/* 1 if text[0..n) is a "pubkey =" or "kdumpinit.pubkey =" line, as far
 * as its start shows: a line too long to read may still be the key. */
static int is_pubkey_line(const char *t, size_t n)
{
	size_t i = 0, k;

	while (i < n && isspace((unsigned char)t[i]))
		i++;
	if (n - i >= 10 && !memcmp(t + i, "kdumpinit.", 10))
		i += 10;
	if (n - i < 6 || memcmp(t + i, "pubkey", 6))
		return 0;
	for (k = i + 6; k < n && isspace((unsigned char)t[k]); k++)
		;
	return k < n && t[k] == '=';
}

void config_load_text(struct config *c, const char *text, size_t len, const char *origin,
		      enum config_src src, unsigned *seen)
{
	char line[CONFIG_LINE_MAX];
	char where[128], why[192];
	int lineno = 0;
	size_t i = 0;

	while (i < len) {
		size_t e = i;
		while (e < len && text[e] != '\n' && text[e] != 0)
			e++;
		lineno++;
		snprintf(where, sizeof where, "%s:%d", origin, lineno);
		if (e - i >= sizeof line && is_pubkey_line(text + i, e - i)) {
			snprintf(why, sizeof why, "%s: a kdumpinit.pubkey line longer than %zu bytes",
				 where, sizeof line - 1);
			config_seal_unreadable(c, src, seen, why);
		} else if (e - i >= sizeof line) {
			config_warn(c, "%s: line longer than %zu bytes ignored", where, sizeof line - 1);
		} else {
			memcpy(line, text + i, e - i);
			line[e - i] = 0;
			load_line(c, line, where, src, seen);
		}
		i = e + 1;
	}
}

int config_load_file(struct config *c, const char *path)
{
	/* Static: PID 1 reads one file once, and 64 KiB is no stack's. */
	static char buf[CONFIG_FILE_MAX + 1];
	char why[192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0) {
		n = -errno;
	} else {
		n = read_full_at(fd, buf, sizeof buf, 0);
		close(fd);
	}
	/* Read whole or not at all: a tail dropped could be the key
	 * (kdumpinit-mkinitramfs -p appends it last). */
	if (n > (ssize_t)CONFIG_FILE_MAX) {
		snprintf(why, sizeof why, "%s: longer than %u bytes, not read at all", path,
			 CONFIG_FILE_MAX);
		n = -EFBIG;
	} else if (n < 0) {
		snprintf(why, sizeof why, "%s: cannot be read (%s), not read at all", path,
			 strerror((int)-n));
	}
	if (n < 0) {
		config_seal_unreadable(c, CFG_SRC_FILE, NULL, why);
		return (int)n;
	}
	config_load_text(c, buf, (size_t)n, path, CFG_SRC_FILE, NULL);
	return 0;
}

static int show_value(const struct config *c, enum config_key k, char *buf, size_t size)
{
	switch (k) {
	case CFG_DEV: return snprintf(buf, size, "%s", c->dev);
	case CFG_DM: return snprintf(buf, size, "%s", c->dm);
	case CFG_IP: return snprintf(buf, size, "%s", c->ip);
	case CFG_LEVEL: return snprintf(buf, size, "%u", (unsigned)c->level);
	case CFG_THREADS: return snprintf(buf, size, "%u", c->threads);
	case CFG_WAIT: return snprintf(buf, size, "%u", c->wait_s);
	case CFG_STALL: return snprintf(buf, size, "%u", c->stall_s);
	case CFG_WATCHDOG:
		if (c->watchdog_s == WATCHDOG_OFF)
			return snprintf(buf, size, "off");
		return snprintf(buf, size, "%u", (unsigned)c->watchdog_s);
	case CFG_FINAL: return snprintf(buf, size, "%s", final_action_name(c->final));
	case CFG_VERBOSE: return snprintf(buf, size, "%d", c->verbose);
	case CFG_FULL: return snprintf(buf, size, "%s", c->full_overwrite ? "overwrite" : "keep");
	case CFG_MEMMAP:
		return snprintf(buf, size, "%s", c->memmap == 1 ? "exclude" : c->memmap == 2 ? "keep" : "auto");
	case CFG_PUBKEY:
		/* Its first bytes name it enough for the record. */
		if (!c->have_pubkey)
			return snprintf(buf, size, "invalid");
		return snprintf(buf, size, "%02x%02x%02x%02x...", c->pubkey[0], c->pubkey[1],
				c->pubkey[2], c->pubkey[3]);
	default: return snprintf(buf, size, "?");
	}
}

int config_format_sources(const struct config *c, char *buf, size_t size)
{
	size_t n = 0;
	char v[sizeof c->dm];

	if (size)
		buf[0] = 0;
	for (int k = 0; k < CFG_NKEYS; k++) {
		if (c->src[k] == CFG_SRC_DEFAULT)
			continue;
		show_value(c, k, v, sizeof v);
		int w = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0,
				 "%s%s=%s (%s)", n ? ", " : "", keys[k].key, v,
				 config_src_name(c->src[k]));
		if (w < 0)
			return w;
		n += (size_t)w;
	}
	return (int)n;
}

void config_load_cmdline(struct config *c, const char *cmdline)
{
	/* A word cut short could still parse, as another value (a table's
	 * offset without its last digits): one too long is dropped, said. */
	char word[2048];
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
		if (n == sizeof word - 1) {
			config_warn(c, "command line: %.40s... is longer than %zu bytes, ignored", word,
				    sizeof word - 2);
			continue;
		}
		char *eq = strchr(word, '=');
		if (!eq) {
			config_warn(c, "command line: %s has no value", word);
			continue;
		}
		*eq = 0;
		config_set_src(c, word, eq + 1, "command line", CFG_SRC_CMDLINE, NULL);
	}
}
