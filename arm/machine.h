/* What the running kernel says about the machine a crash header must
 * describe: System RAM and the crash regions (/proc/iomem), the crash
 * note of each CPU (/sys/devices/system/cpu/cpuN/crash_notes) and
 * VMCOREINFO (/sys/kernel/vmcoreinfo). Sized by what is found: a big
 * server's hundreds of CPUs and RAM ranges are read whole, never cut at
 * a fixed count. Used by the arm64 loader (to build the header) and by
 * the armed record (to tell later whether the header still matches). */
#ifndef KDI_MACHINE_H
#define KDI_MACHINE_H

#include <stddef.h>
#include <stdint.h>

/* The kernel reserves at most two crash regions: crashk_res (the one
 * crashkernel= names, where kexec_load must place every segment) and,
 * with crashkernel=X,high or the arm64 fallback above the DMA zones,
 * crashk_low_res below 4 GiB. Both are "Crash kernel" in /proc/iomem. */
#define MACHINE_CRASH_MAX 2

struct mrange {
	uint64_t start, end;	/* inclusive end, as /proc/iomem */
};

struct cpu_note {
	unsigned cpu;		/* N of cpuN */
	uint64_t addr;		/* physical address of its note buffer */
};

struct machine {
	struct mrange *ram;	/* top-level "System RAM", in /proc/iomem order */
	size_t nram;
	/* ascending: crash[ncrash - 1] is crashk_res (the high one when
	 * there are two), crash[0] then crashk_low_res */
	struct mrange crash[MACHINE_CRASH_MAX];
	int ncrash;
	struct mrange code, data;
	int have_code, have_data;
	struct cpu_note *notes;	/* ascending CPU number */
	size_t nnotes;
	uint64_t notes_size;
	uint64_t vmcoreinfo, vmcoreinfo_size;
};

/* RAM, crash regions, kernel code and data from ROOT/proc/iomem.
 * 0, -E2BIG (more crash regions than the kernel has: said), -ENOMEM, or
 * the -errno of reading the file. */
int machine_read_iomem(const char *root, struct machine *m);
/* Every cpuN under ROOT/sys/devices/system/cpu that has a crash_notes
 * file, in CPU order: offline and possible-but-absent CPUs too (their
 * note buffers exist from boot, and the kernel's own header lists every
 * possible CPU), numbers with holes, any count. With ADDRS 0 only the
 * set is taken (no file is read: crash_notes is root-only), as the
 * record's fingerprint needs. 0, -ENOENT (no such directory), -ENOMEM,
 * or the -errno of a crash_notes that exists but cannot be read; a
 * directory or file that cannot be read is said. */
int machine_read_cpus(const char *root, struct machine *m, int addrs);
/* VMCOREINFO's address and size. 0 or -errno. */
int machine_read_vmcoreinfo(const char *root, struct machine *m);
void machine_free(struct machine *m);

/* What a crash header depends on that hotplug changes: the CPUs with a
 * crash note and the System RAM ranges, counted and hashed (FNV-1a). */
struct machine_print {
	unsigned cpus, ram_ranges;
	uint64_t cpu_hash, ram_hash;
	int ram_hidden;		/* every RAM address reads 0: /proc/iomem as non-root */
};
void machine_fingerprint(const struct machine *m, struct machine_print *p);

#endif
