/* Small parsing helpers shared by config, vmcoreinfo and the CLI. */
#ifndef KDI_UTIL_H
#define KDI_UTIL_H

#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Whole-string unsigned parse, base 0 (dec, 0x hex, 0 octal). -EINVAL on
 * junk, -ERANGE on overflow. */
int parse_u64(const char *s, int base, uint64_t *out);
/* Like parse_u64 with an optional K/M/G/T suffix (powers of 1024). */
int parse_size(const char *s, uint64_t *out);
/* Monotonic seconds, for timeouts and rates. */
double now_mono(void);
/* Online CPUs, 1..256: the default worker count of capture and save. */
unsigned online_cpus(void);

#endif
