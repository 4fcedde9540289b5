/* Unit tests for config/config.c: the kernel command line, the embedded
 * file, warnings, and the precedence PID-1 mode applies (file first, then
 * the command line, as init/pid1.c calls them). */
#define CHECK_PREFIX "config"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../config/config.h"

static char tmpl[4096];

/* Writes text to a fresh temporary file; returns its path (static). */
static const char *conf_file(const char *text)
{
	const char *dir = getenv("TMPDIR");
	snprintf(tmpl, sizeof tmpl, "%s/kdi-conf-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(tmpl);
	if (fd < 0) {
		perror("mkstemp");
		exit(2);
	}
	size_t n = strlen(text);
	if (write(fd, text, n) != (ssize_t)n) {
		perror("write");
		exit(2);
	}
	close(fd);
	return tmpl;
}

static int warned(const struct config *c, const char *a, const char *b)
{
	for (int i = 0; i < c->nwarn; i++)
		if (check_mentions(c->warn[i], a) && (!b || check_mentions(c->warn[i], b)))
			return 1;
	return 0;
}

static void defaults(void)
{
	struct config c;

	memset(&c, 0x5a, sizeof c);
	config_defaults(&c);
	CHECK_INT(c.level, 31);
	CHECK_INT(c.threads, 0);
	CHECK_INT(c.wait_s, 300);
	CHECK_INT(c.stall_s, 300);
	CHECK_INT(c.watchdog_s, WATCHDOG_KEEP);
	CHECK_INT(c.final, FINAL_REBOOT);
	CHECK_INT(c.verbose, 0);
	CHECK_STR(c.dev, "");
	CHECK_INT(c.nwarn, 0);
}

static void set_every_key(void)
{
	struct config c;

	config_defaults(&c);
	config_set(&c, "kdumpinit.dev", "LABEL=dump,/dev/vdb", "t");
	config_set(&c, "level", "1", "t");		/* prefix optional */
	config_set(&c, "kdumpinit.threads", "4", "t");
	config_set(&c, "wait", "0x10", "t");		/* base 0: hex */
	config_set(&c, "stall", "5", "t");
	config_set(&c, "final", "halt", "t");
	config_set(&c, "verbose", "2", "t");
	CHECK_STR(c.dev, "LABEL=dump,/dev/vdb");
	CHECK_INT(c.level, 1);
	CHECK_INT(c.threads, 4);
	CHECK_INT(c.wait_s, 16);
	CHECK_INT(c.stall_s, 5);
	CHECK_INT(c.final, FINAL_HALT);
	CHECK_INT(c.verbose, 2);
	CHECK_INT(c.nwarn, 0);
	config_set(&c, "final", "poweroff", "t");
	CHECK_INT(c.final, FINAL_POWEROFF);
	config_set(&c, "final", "reboot", "t");
	CHECK_INT(c.final, FINAL_REBOOT);
	CHECK_STR(final_action_name(FINAL_REBOOT), "reboot");
	CHECK_STR(final_action_name(FINAL_POWEROFF), "poweroff");
	CHECK_STR(final_action_name(FINAL_HALT), "halt");
}

/* Bad values warn, name the key, and keep what was there before. */
static void bad_values_keep_previous(void)
{
	static const struct { const char *key, *value; } bad[] = {
		{ "level", "32" }, { "level", "-1" }, { "level", "abc" }, { "level", "" },
		{ "level", "3x" }, { "threads", "257" }, { "wait", "86401" },
		{ "stall", "0" }, { "stall", "99999999999999999999" }, { "final", "sideways" },
		{ "verbose", "10" }, { "dev", "" }, { "watchdog", "0" }, { "watchdog", "1" },
		{ "watchdog", "3601" }, { "watchdog", "Off" }, { "watchdog", "" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct config c, before;
		config_defaults(&c);
		config_set(&c, "dev", "/dev/vdb", "t");
		config_set(&c, "level", "7", "t");
		config_set(&c, "threads", "3", "t");
		config_set(&c, "wait", "9", "t");
		config_set(&c, "stall", "11", "t");
		config_set(&c, "final", "halt", "t");
		config_set(&c, "verbose", "1", "t");
		config_set(&c, "watchdog", "45", "t");
		before = c;
		config_set(&c, bad[i].key, bad[i].value, "origin-x");
		CHECK_INT(c.nwarn, before.nwarn + 1);
		CHECK(warned(&c, bad[i].key, "origin-x"),
		      "%s=%s: warning does not name key and origin: \"%s\"", bad[i].key,
		      bad[i].value, c.nwarn ? c.warn[c.nwarn - 1] : "");
		CHECK(!strcmp(c.dev, before.dev) && c.level == before.level &&
		      c.threads == before.threads && c.wait_s == before.wait_s &&
		      c.stall_s == before.stall_s && c.final == before.final &&
		      c.verbose == before.verbose && c.watchdog_s == before.watchdog_s,
		      "%s=%s changed the configuration", bad[i].key, bad[i].value);
	}
}

/* watchdog: seconds, or off, and the source list shows either. */
static void watchdog_values(void)
{
	struct config c;
	char buf[256];

	config_defaults(&c);
	config_set(&c, "kdumpinit.watchdog", "30", "t");
	CHECK_INT(c.watchdog_s, 30);
	config_set(&c, "watchdog", "2", "t");
	CHECK_INT(c.watchdog_s, 2);
	config_set(&c, "watchdog", "3600", "t");
	CHECK_INT(c.watchdog_s, 3600);
	config_format_sources(&c, buf, sizeof buf);
	CHECK_STR(buf, "watchdog=3600 (cmdline)");
	config_set(&c, "watchdog", "off", "t");
	CHECK(c.watchdog_s == WATCHDOG_OFF, "watchdog=off not taken");
	config_format_sources(&c, buf, sizeof buf);
	CHECK_STR(buf, "watchdog=off (cmdline)");
	CHECK_INT(c.nwarn, 0);
}

static void limits_accepted(void)
{
	struct config c;

	config_defaults(&c);
	config_set(&c, "level", "0", "t");
	CHECK_INT(c.level, 0);
	config_set(&c, "threads", "256", "t");
	CHECK_INT(c.threads, 256);
	config_set(&c, "wait", "86400", "t");
	CHECK_INT(c.wait_s, 86400);
	config_set(&c, "stall", "1", "t");
	CHECK_INT(c.stall_s, 1);
	config_set(&c, "verbose", "9", "t");
	CHECK_INT(c.verbose, 9);
	CHECK_INT(c.nwarn, 0);
	/* The longest dev that fits, and one byte more. */
	char dev[600];
	memset(dev, 'a', sizeof dev);
	dev[sizeof c.dev - 1] = 0;
	config_set(&c, "dev", dev, "t");
	CHECK_INT(strlen(c.dev), sizeof c.dev - 1);
	CHECK_INT(c.nwarn, 0);
	dev[sizeof c.dev - 1] = 'b';
	dev[sizeof c.dev] = 0;
	config_set(&c, "dev", dev, "t");
	CHECK_INT(c.nwarn, 1);
	CHECK_INT(strlen(c.dev), sizeof c.dev - 1);
	CHECK(c.dev[sizeof c.dev - 2] == 'a', "an overlong dev replaced the previous one");
}

static void unknown_key_warns(void)
{
	struct config c, before;

	config_defaults(&c);
	before = c;
	config_set(&c, "kdumpinit.levle", "1", "command line");
	CHECK_INT(c.nwarn, 1);
	CHECK(warned(&c, "unknown", "levle"), "warning: \"%s\"", c.warn[0]);
	CHECK(warned(&c, "command line", NULL), "warning lacks origin: \"%s\"", c.warn[0]);
	CHECK_INT(c.level, before.level);
	/* A key with the prefix twice is not the key. */
	config_set(&c, "kdumpinit.kdumpinit.level", "1", "t");
	CHECK_INT(c.nwarn, 2);
	CHECK_INT(c.level, 31);
}

static void warnings_are_capped(void)
{
	struct config c;

	config_defaults(&c);
	for (int i = 0; i < 3 * CONFIG_MAX_WARN; i++)
		config_set(&c, "nope", "1", "t");
	CHECK_INT(c.nwarn, CONFIG_MAX_WARN);
	config_set(&c, "level", "4", "t");
	CHECK_INT(c.level, 4);		/* still applies settings after the cap */
}

static void cmdline_words(void)
{
	struct config c;

	config_defaults(&c);
	config_load_cmdline(&c, "  console=ttyS0 root=/dev/sda1 kdumpinit.level=1\t"
			    "kdumpinit.final=poweroff quiet kdumpinit.threads=2\n"
			    "kdumpinit.dev=/dev/vdb  ");
	CHECK_INT(c.level, 1);
	CHECK_INT(c.final, FINAL_POWEROFF);
	CHECK_INT(c.threads, 2);
	CHECK_STR(c.dev, "/dev/vdb");
	CHECK_INT(c.nwarn, 0);
	/* Words without the prefix are the kernel's, never ours. */
	config_defaults(&c);
	config_load_cmdline(&c, "level=1 final=halt dev=/dev/sda xkdumpinit.level=2");
	CHECK_INT(c.level, 31);
	CHECK_INT(c.final, FINAL_REBOOT);
	CHECK_STR(c.dev, "");
	CHECK_INT(c.nwarn, 0);
	config_load_cmdline(&c, "");
	config_load_cmdline(&c, "   ");
	CHECK_INT(c.nwarn, 0);
}

static void cmdline_quotes(void)
{
	struct config c;

	config_defaults(&c);
	/* The kernel's rule: quotes group words and are dropped. */
	config_load_cmdline(&c, "a=1 kdumpinit.dev=\"LABEL=my dump\" kdumpinit.level=1");
	CHECK_STR(c.dev, "LABEL=my dump");
	CHECK_INT(c.level, 1);
	config_load_cmdline(&c, "\"kdumpinit.dev=PARTLABEL=a b c\" kdumpinit.final=halt");
	CHECK_STR(c.dev, "PARTLABEL=a b c");
	CHECK_INT(c.final, FINAL_HALT);
	/* A quoted space inside another word does not start a kdumpinit word. */
	config_load_cmdline(&c, "foo=\"x kdumpinit.level=5\" kdumpinit.verbose=3");
	CHECK_INT(c.level, 1);
	CHECK_INT(c.verbose, 3);
	/* An unterminated quote runs to the end and must not crash. */
	config_load_cmdline(&c, "kdumpinit.dev=\"LABEL=x y");
	CHECK_STR(c.dev, "LABEL=x y");
	CHECK_INT(c.nwarn, 0);
}

static void cmdline_problems_warn(void)
{
	struct config c;

	config_defaults(&c);
	config_load_cmdline(&c, "kdumpinit.level kdumpinit.bogus=1 kdumpinit.final=nope");
	CHECK_INT(c.nwarn, 3);
	CHECK(warned(&c, "kdumpinit.level", "no value"), "no 'has no value' warning");
	CHECK(warned(&c, "unknown", "bogus"), "no unknown-key warning");
	CHECK(warned(&c, "final", "nope"), "no bad-value warning");
	CHECK_INT(c.level, 31);
	CHECK_INT(c.final, FINAL_REBOOT);
	/* A word far longer than the parser's buffer. */
	char big[5000];
	memset(big, 'x', sizeof big);
	memcpy(big, "kdumpinit.dev=", 14);
	big[sizeof big - 1] = 0;
	config_load_cmdline(&c, big);
	CHECK(strlen(c.dev) < sizeof c.dev, "dev overflowed");
}

static void file_lines(void)
{
	struct config c;
	const char *p = conf_file(
		"# kdumpinit.conf\n"
		"\n"
		"   dev   =   LABEL=dump   \n"
		"kdumpinit.level=1\n"
		"final = \"poweroff\"  # trailing comment\n"
		"\tthreads\t=\t2\t\n"
		"   # indented comment = 7\n"
		"wait=5");			/* no final newline */
	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	CHECK_STR(c.dev, "LABEL=dump");
	CHECK_INT(c.level, 1);
	CHECK_INT(c.final, FINAL_POWEROFF);
	CHECK_INT(c.threads, 2);
	CHECK_INT(c.wait_s, 5);
	CHECK_INT(c.nwarn, 0);
	unlink(p);
}

/* '#' starts a comment only outside double quotes. */
static void file_hash_in_quotes(void)
{
	struct config c;
	const char *p = conf_file(
		"dev = \"LABEL=dump#1\"  # the dump disk\n"
		"level = 17 # \"quoted\" in a comment\n");
	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	CHECK_STR(c.dev, "LABEL=dump#1");
	CHECK_INT(c.level, 17);
	CHECK_INT(c.nwarn, 0);
	unlink(p);
}

static void file_problems_warn_with_line(void)
{
	struct config c;
	const char *p = conf_file(
		"level = 1\n"
		"this line has no equals sign\n"
		"colour = blue\n"
		"stall = 0\n"
		"final = sideways\n"
		"verbose = 1\n");
	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	CHECK_INT(c.nwarn, 4);
	char l2[4200], l3[4200], l4[4200], l5[4200];
	snprintf(l2, sizeof l2, "%s:2", p);
	snprintf(l3, sizeof l3, "%s:3", p);
	snprintf(l4, sizeof l4, "%s:4", p);
	snprintf(l5, sizeof l5, "%s:5", p);
	CHECK(warned(&c, l2, "key = value"), "line 2: no 'not a key = value' warning");
	CHECK(warned(&c, l3, "colour"), "line 3: no unknown-key warning");
	CHECK(warned(&c, l4, "stall"), "line 4: no bad-value warning");
	CHECK(warned(&c, l5, "sideways"), "line 5: no bad-value warning");
	CHECK_INT(c.level, 1);
	CHECK_INT(c.verbose, 1);	/* lines after the bad ones still apply */
	CHECK_INT(c.stall_s, 300);
	CHECK_INT(c.final, FINAL_REBOOT);
	unlink(p);
}

/* A config text of n bytes: "level = 3" first, '#' lines, and last the
 * line `last` (as kdumpinit-mkinitramfs -p appends the key). malloc'd. */
static char *long_text(size_t n, const char *last)
{
	char *text = malloc(n + 1);
	size_t l = strlen(last);

	memcpy(text, "level = 3\n", 10);
	for (size_t i = 10; i < n - l; i++)
		text[i] = (i % 64 == 63) ? '\n' : '#';
	text[n - l - 1] = '\n';
	memcpy(text + n - l, last, l);
	text[n] = 0;
	return text;
}

#define HEXKEY "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* A file is read whole or not at all: one over CONFIG_FILE_MAX sets
 * nothing, is an error, and, as its tail could be the key, leaves no
 * dump to write (config_seal), whether or not it holds a key at all. */
static void file_missing_and_long(void)
{
	struct config c;

	config_defaults(&c);
	CHECK_INT(config_load_file(&c, "/nonexistent/kdumpinit.conf"), -ENOENT);
	CHECK_INT(c.nwarn, 0);
	CHECK_INT(config_seal(&c), 0);

	static const char *const last[] = { "pubkey = " HEXKEY "\n", "threads = 2\n" };
	for (int k = 0; k < 2; k++) {
		char *text = long_text(CONFIG_FILE_MAX + 1, last[k]);
		const char *p = conf_file(text);
		free(text);
		config_defaults(&c);
		CHECK_INT(config_load_file(&c, p), -EFBIG);
		CHECK_INT(c.level, 31);		/* nothing of it applied */
		CHECK_INT(c.have_pubkey, 0);
		CHECK_INT(config_seal(&c), -ENOKEY);
		CHECK(check_mentions(c.seal_why, "longer than 65536"), "why: %s", c.seal_why);
		CHECK(warned(&c, "longer than 65536", "no dump will be written"), "case %d: %d warnings",
		      k, c.nwarn);
		/* A key from a higher source stands over it. */
		config_load_cmdline(&c, "kdumpinit.pubkey=" HEXKEY);
		CHECK_INT(config_seal(&c), 1);
		unlink(p);
	}
	/* Exactly CONFIG_FILE_MAX bytes: read whole, its last line the key. */
	char *text = long_text(CONFIG_FILE_MAX, "pubkey = " HEXKEY "\n");
	const char *p = conf_file(text);
	free(text);
	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	CHECK_INT(c.level, 3);
	CHECK_INT(config_seal(&c), 1);
	CHECK_INT(c.pubkey[1], 0x11);
	CHECK(c.nwarn == 0, "%d warnings: %s", c.nwarn, c.nwarn ? c.warn[0] : "");
	unlink(p);
	/* A file that cannot be read (a directory): the same. */
	config_defaults(&c);
	CHECK(config_load_file(&c, "/") < 0, "a directory read as a config");
	CHECK_INT(config_seal(&c), -ENOKEY);
	CHECK(check_mentions(c.seal_why, "cannot be read"), "why: %s", c.seal_why);
}

/* A line too long to read: skipped with a warning, but a kdumpinit.pubkey
 * line among them is a key not read (no dump), wherever its '=' is. */
static void file_long_lines(void)
{
	static const char *const keyline[] = { "pubkey =", "  kdumpinit.pubkey\t= ", "pubkey=" };
	struct config c;
	size_t n = CONFIG_LINE_MAX + 100;
	char *text = malloc(n + 80);

	for (int k = 0; k < 4; k++) {
		size_t o = (size_t)sprintf(text, "level = 3\n%s", k < 3 ? keyline[k] : "# comment");
		memset(text + o, k < 3 ? ' ' : '#', n - o);
		strcpy(text + n, HEXKEY "\nthreads=2\n");
		const char *p = conf_file(text);
		config_defaults(&c);
		CHECK_INT(config_load_file(&c, p), 0);
		CHECK_INT(c.level, 3);
		CHECK_INT(c.threads, 2);
		CHECK_INT(config_seal(&c), k < 3 ? -ENOKEY : 0);
		CHECK(warned(&c, ":2", k < 3 ? "kdumpinit.pubkey line longer" : "line longer"),
		      "case %d: %s", k, c.nwarn ? c.warn[0] : "no warning");
		unlink(p);
	}
	free(text);
}

/* PID-1 mode: defaults, then the file, then the command line. Whatever the
 * command line sets wins; what only the file sets stays. */
static void cmdline_beats_file(void)
{
	struct config c;
	const char *p = conf_file("dev = /dev/vdb\nlevel = 1\nfinal = halt\nthreads = 3\n");

	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	config_load_cmdline(&c, "quiet kdumpinit.level=0 kdumpinit.dev=LABEL=x");
	CHECK_INT(c.level, 0);
	CHECK_STR(c.dev, "LABEL=x");
	CHECK_INT(c.final, FINAL_HALT);
	CHECK_INT(c.threads, 3);
	/* A bad value on the command line keeps the file's value. */
	config_load_cmdline(&c, "kdumpinit.final=bogus");
	CHECK_INT(c.final, FINAL_HALT);
	CHECK_INT(c.nwarn, 1);
	unlink(p);
}

/* kdumpinit.pubkey: 64 hex digits or keygen's whole line. A bad one does
 * not fall back to "no key" (a dump in the clear): it marks the config
 * bad, unless a higher-ranked source gives a good key. */
static void pubkey_values(void)
{
	static const char hex[] = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF";
	struct config c;

	config_defaults(&c);
	CHECK_INT(c.have_pubkey, 0);
	CHECK_INT(config_seal(&c), 0);
	config_set(&c, "kdumpinit.pubkey", hex, "t");
	CHECK_INT(c.have_pubkey, 1);
	CHECK_INT(config_seal(&c), 1);
	CHECK_INT(c.pubkey[0], 0x00);
	CHECK_INT(c.pubkey[1], 0x11);
	CHECK_INT(c.pubkey[31], 0xff);
	CHECK_INT(c.nwarn, 0);
	char line[128];
	snprintf(line, sizeof line, "kdumpinit-public-key %s", hex);
	config_defaults(&c);
	config_set(&c, "pubkey", line, "t");
	CHECK_INT(c.have_pubkey, 1);
	CHECK_INT(c.pubkey[16], 0x00);
	CHECK_INT(c.pubkey[17], 0x11);

	/* Each of these is not a key: bad, no key, one warning naming it. */
	static const char *const bad[] = {
		"", "0011", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeef",
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0",
		"g0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		"0x112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		"kdumpinit-secret-key 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		config_defaults(&c);
		config_set(&c, "kdumpinit.pubkey", hex, "t");
		config_set(&c, "kdumpinit.pubkey", bad[i], "t");
		CHECK(config_seal(&c) == -ENOKEY && c.have_pubkey == 0 && c.seal_asked,
		      "pubkey '%s' taken", bad[i]);
		CHECK(c.nwarn == 1 && strstr(c.warn[0], "no dump will be written"),
		      "pubkey '%s': warning missing", bad[i]);
	}
	/* The command line outranks the file: its good key stands over the
	 * file's bad one, read in either order; its bad key over the file's
	 * good one leaves the config bad. */
	const char *p = conf_file("pubkey = nothex\n");
	char cmd[128];
	snprintf(cmd, sizeof cmd, "kdumpinit.pubkey=%s", hex);
	config_defaults(&c);
	config_load_cmdline(&c, cmd);
	CHECK_INT(config_load_file(&c, p), 0);
	CHECK_INT(c.have_pubkey, 1);
	CHECK_INT(config_seal(&c), 1);
	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	CHECK_INT(config_seal(&c), -ENOKEY);
	config_load_cmdline(&c, cmd);
	CHECK_INT(c.have_pubkey, 1);
	CHECK_INT(config_seal(&c), 1);
	unlink(p);
	p = conf_file("pubkey = 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
	config_defaults(&c);
	CHECK_INT(config_load_file(&c, p), 0);
	config_load_cmdline(&c, "kdumpinit.pubkey=short");
	CHECK_INT(c.have_pubkey, 0);
	CHECK_INT(config_seal(&c), -ENOKEY);
	unlink(p);
}

int main(void)
{
	RUN(defaults);
	RUN(set_every_key);
	RUN(bad_values_keep_previous);
	RUN(watchdog_values);
	RUN(limits_accepted);
	RUN(unknown_key_warns);
	RUN(warnings_are_capped);
	RUN(cmdline_words);
	RUN(cmdline_quotes);
	RUN(file_hash_in_quotes);
	RUN(cmdline_problems_warn);
	RUN(file_lines);
	RUN(file_problems_warn_with_line);
	RUN(file_missing_and_long);
	RUN(file_long_lines);
	RUN(cmdline_beats_file);
	RUN(pubkey_values);
	return check_done();
}
