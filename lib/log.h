/* One place that prints. Library code returns -errno and never prints;
 * the front doors (init/) call these once per failure. */
#ifndef KDI_LOG_H
#define KDI_LOG_H

#include <stdarg.h>

/* The only global state besides verbosity: where log lines go. */
void log_set_kmsg(int fd);      /* also copy every line to /dev/kmsg (PID 1) */
void log_set_verbose(int level);

void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* strerror for our -errno returns: negative or positive accepted. */
const char *errstr(int e);

#endif
