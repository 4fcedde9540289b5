#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exitcode.h"
#include "log.h"

int cli_fail(const char *cmd, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	err("%s: %s (see 'kdumpinit %s --help')", cmd, what, cmd);
	return EXIT_USAGE;
}

int cli_bad_value(const char *cmd, const char *opt, const char *value, const char *want)
{
	return cli_fail(cmd, "%s: '%s' is not %s", opt, value, want);
}

/* The long option argv's word names ("--level=4" names "level"), or
 * NULL. An abbreviation getopt_long took is matched the same way. */
static const struct option *long_of(const struct option *longs, const char *word)
{
	const struct option *hit = NULL;
	size_t n = strcspn(word, "=");
	unsigned hits = 0;

	for (const struct option *o = longs; o && o->name; o++) {
		if (strlen(o->name) == n && !strncmp(o->name, word, n))
			return o;
		if (strlen(o->name) > n && !strncmp(o->name, word, n)) {
			hit = o;
			hits++;
		}
	}
	return hits == 1 ? hit : NULL;	/* ambiguous: none */
}

int cli_next(const char *cmd, int argc, char **argv, const char *shorts,
	     const struct option *longs)
{
	opterr = 0;	/* said here, in our words */
	int c = getopt_long(argc, argv, shorts, longs, NULL);
	if (c != '?')
		return c;
	const char *word = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	/* A long option's trouble is said by its name: getopt_long may
	 * leave its short letter (or 0) in optopt. */
	if (strncmp(word, "--", 2) && optopt && optopt != '?') {
		const char *s = strchr(shorts, optopt);
		if (s)
			cli_fail(cmd, "-%c needs a value", optopt);
		else
			cli_fail(cmd, "unknown option '-%c'", optopt);
		return '?';
	}
	if (strncmp(word, "--", 2)) {
		cli_fail(cmd, "unknown option '%s'", word);
		return '?';
	}
	const struct option *o = long_of(longs, word + 2);
	if (!o)
		cli_fail(cmd, "unknown option '%.*s'", (int)strcspn(word, "="), word);
	else if (o->has_arg == no_argument && strchr(word, '='))
		cli_fail(cmd, "--%s takes no value", o->name);
	else
		cli_fail(cmd, "--%s needs a value", o->name);
	return '?';
}

int cli_operands(const char *cmd, int argc, char **argv, int n, const char *what)
{
	int left = argc - optind;

	if (left == n)
		return 0;
	if (left > n)
		return cli_fail(cmd, "unexpected argument '%s'", argv[optind + n]);
	return cli_fail(cmd, "give %s", what);
}
