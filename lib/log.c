#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int kmsg_fd = -1;
static int verbose;

void log_set_kmsg(int fd) { kmsg_fd = fd; }
void log_set_verbose(int level) { verbose = level; }

/* A line is formatted once and written with one write() per sink, so lines
 * from worker threads never interleave mid-line. */
static void emit(const char *tag, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof line, "kdumpinit: %s", tag);

	if (n < 0)
		return;
	int m = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, n);
	if (kmsg_fd >= 0) {
		/* Level 7: kept in the kernel log (and in a later vmcore) but
		 * not echoed by the kernel to the console we already wrote. */
		char k[1040];
		int kn = snprintf(k, sizeof k, "<7>%.*s", n, line);
		if (kn > 0)
			(void)!write(kmsg_fd, k, kn > (int)sizeof k ? (int)sizeof k : kn);
	}
}

#define DEFINE_LOG(name, tag, cond)			\
	void name(const char *fmt, ...)			\
	{						\
		va_list ap;				\
		if (!(cond))				\
			return;				\
		va_start(ap, fmt);			\
		emit(tag, fmt, ap);			\
		va_end(ap);				\
	}

DEFINE_LOG(msg, "", 1)
DEFINE_LOG(warn, "warning: ", 1)
DEFINE_LOG(err, "error: ", 1)
DEFINE_LOG(dbg, "debug: ", verbose > 0)

const char *errstr(int e)
{
	return strerror(e < 0 ? -e : e);
}
