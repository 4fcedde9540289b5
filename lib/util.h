/* Small helpers every layer shares: parsing (config, vmcoreinfo, the
 * CLI), a page size's shift, and loads of little-endian fields from byte
 * buffers (GPT, the crashed kernel's memory: vmcore accepts only
 * little-endian ELF cores). */
#ifndef KDI_UTIL_H
#define KDI_UTIL_H

#include <stdint.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Whole-string unsigned parse, base 0 (dec, 0x hex, 0 octal). -EINVAL on
 * junk, -ERANGE on overflow. */
int parse_u64(const char *s, int base, uint64_t *out);
/* Like parse_u64 with an optional K/M/G/T suffix (powers of 1024). */
int parse_size(const char *s, uint64_t *out);
/* A hex digit's value, or -1 (either case). */
int hex_digit(int c);
/* Exactly 2n hex digits s[0, slen) into out[0, n): 0, or -EINVAL (another
 * length, or a character that is not a hex digit; out then undefined). */
int hex_decode(const char *s, size_t slen, uint8_t *out, size_t n);
/* in[0, n) as 2n lower-case hex digits and a NUL into out. */
void hex_encode(const uint8_t *in, size_t n, char *out);
/* Monotonic seconds, for timeouts and rates. */
double now_mono(void);
/* Sleeps ms milliseconds whatever signal interrupts it. */
void sleep_ms(unsigned ms);
/* Online CPUs, 1..256: the default worker count of capture and save. */
unsigned online_cpus(void);

/* log2 of v, a power of two (a page size: the PAGE_SHIFT of v bytes). For
 * any other v the log2 of the next power of two up; v <= 2^31. */
static inline unsigned log2_pow2(uint32_t v)
{
	unsigned s = 0;

	while ((1u << s) < v)
		s++;
	return s;
}

/* Little-endian fields at any alignment: memcpy is one load on the hosts
 * we build for, and no unaligned access the compiler may assume away. */
static inline uint64_t load_le64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline uint32_t load_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint16_t load_le16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	return v;
}

#endif
