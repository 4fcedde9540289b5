/* The crash reservation of the running kernel, both parts:
 *   crashkernel=SIZE        fixed memory, never used by the running system
 *                           (/sys/kernel/kexec_crash_size): it holds the
 *                           crash kernel, its initramfs, and its RAM;
 *   crashkernel=SIZE,cma    (6.17+, CONFIG_CMA) CMA areas the running system
 *                           keeps using for movable pages; the crash kernel
 *                           gets them as RAM (/sys/kernel/kexec_crash_cma_ranges).
 * What arm --cpus auto, status and the plan count. */
#ifndef KDI_RESERVE_H
#define KDI_RESERVE_H

#include <stdint.h>

#define RESERVE_CMA_RANGES_MAX 4	/* the kernel's CRASHKERNEL_CMA_RANGES_MAX */

struct crash_reserve {
	uint64_t fixed;		/* bytes; 0 none */
	uint64_t cma;		/* bytes of CMA the crash kernel gets */
	unsigned cma_ranges;
	int cma_known;		/* the kernel has kexec_crash_cma_ranges (it knows ,cma) */
	uint64_t cma_asked;	/* crashkernel=SIZE,cma on its command line; 0 none */
	int cma_bad;		/* the ranges file could not be read or parsed (then cma is 0) */
};

/* Reads ROOT/sys/kernel/kexec_crash_size, kexec_crash_cma_ranges and
 * /proc/cmdline. Never fails: what cannot be read is 0, and cma_bad says
 * when the ranges were there but unreadable. */
void crash_reserve_read(const char *root, struct crash_reserve *r);

/* One line for status and arm: "88.0 MiB fixed", "16.0 MiB fixed + 256.0
 * MiB CMA (1 range)", and what is wrong with the CMA part (asked on a
 * kernel that does not know it, or asked and not reserved). */
const char *crash_reserve_say(const struct crash_reserve *r, char *buf, unsigned sz);
/* The part that needs the user's attention, or NULL: ",cma asked on a
 * kernel that ignores it" and the like. */
const char *crash_reserve_problem(const struct crash_reserve *r, char *buf, unsigned sz);

/* At most this many CPUs are asked of a crash kernel: more workers than
 * 16 no longer speed up LZ4 onto one disk. */
#define RESERVE_CPUS_MAX 16

/* The CPUs online (ROOT/sys/devices/system/cpu/online, else this
 * process's count): what --cpus auto and estimate size the capture for. */
unsigned reserve_cpus_online(const char *root);
/* How many CPUs (compression workers) a crash kernel given reserved bytes
 * runs with room to spare (arm --cpus auto), at most online and
 * RESERVE_CPUS_MAX; dedicated: kdumpinit's own crash kernel, which loses
 * less of the reservation. At least 1. */
unsigned reserve_auto_cpus(uint64_t reserved, unsigned online, int dedicated);
/* The smallest reservation, in whole MiB, that reserve_auto_cpus gives
 * cpus CPUs (kdumpinit estimate). */
uint64_t reserve_floor(unsigned cpus, int dedicated);

#endif
