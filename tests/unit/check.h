/* check.h: the smallest test harness that can fail.
 *
 * Each case is a void function run with RUN(fn). CHECK(cond, fmt, ...)
 * counts one assertion and records the first failure; a case that made no
 * assertion at all fails ("asserted nothing"), so an empty or skipped body
 * never passes by accident. Output is one line per case, as run.sh wants:
 *   ok PREFIX.NAME
 *   FAIL PREFIX.NAME: file:line: why
 * main returns check_done(): 1 when any case failed. */
#ifndef KDI_UNIT_CHECK_H
#define KDI_UNIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CHECK_PREFIX
#define CHECK_PREFIX "unit"
#endif

static int check_asserts, check_failed, check_npass, check_nfail;
static char check_why[400];

__attribute__((format(printf, 3, 4), unused))
static void check_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (check_failed++)
		return;		/* keep the first reason */
	int n = snprintf(check_why, sizeof check_why, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(check_why + n, sizeof check_why - n, fmt, ap);
	va_end(ap);
	/* One line per case: no newlines inside the reason. */
	for (char *p = check_why; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		check_asserts++;                                            \
		if (!(cond))                                                \
			check_fail(__FILE__, __LINE__, __VA_ARGS__);        \
	} while (0)

#define CHECK_INT(got, want)                                                \
	do {                                                                \
		long long g_ = (long long)(got), w_ = (long long)(want);    \
		CHECK(g_ == w_, "%s is %lld, want %lld", #got, g_, w_);     \
	} while (0)

#define CHECK_STR(got, want)                                                \
	do {                                                                \
		const char *g_ = (got), *w_ = (want);                       \
		CHECK(g_ && !strcmp(g_, w_), "%s is \"%s\", want \"%s\"",   \
		      #got, g_ ? g_ : "(null)", w_);                        \
	} while (0)

/* Case-insensitive "does s mention word". */
__attribute__((unused))
static int check_mentions(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (; s && *s; s++) {
		size_t i = 0;
		while (i < n && s[i] && (s[i] | 0x20) == (word[i] | 0x20))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

__attribute__((unused))
static void check_run(const char *name, void (*fn)(void))
{
	check_asserts = check_failed = 0;
	check_why[0] = 0;
	fn();
	if (!check_failed && !check_asserts) {
		check_failed = 1;
		snprintf(check_why, sizeof check_why, "asserted nothing");
	}
	if (check_failed) {
		printf("FAIL %s.%s: %s\n", CHECK_PREFIX, name, check_why);
		check_nfail++;
	} else {
		printf("ok %s.%s\n", CHECK_PREFIX, name);
		check_npass++;
	}
	fflush(stdout);
}

#define RUN(fn) check_run(#fn, fn)

__attribute__((unused))
static int check_done(void)
{
	return check_nfail ? 1 : 0;
}

#endif
