/* Both parts of the crash reservation, from sysfs and the command line. */
#include "reserve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/io.h"
#include "../lib/util.h"
#include "root.h"

/* "%08llx-%08llx\n" a range, inclusive (kernel/kexec_core.c). */
static int parse_ranges(char *text, struct crash_reserve *r)
{
	char *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *dash = strchr(l, '-');
		uint64_t a, b;
		if (!dash)
			return -1;
		*dash = 0;
		/* Inclusive ends: a whole 2^64 range, or a sum past 2^64,
		 * is not a reservation. */
		if (parse_u64(l, 16, &a) < 0 || parse_u64(dash + 1, 16, &b) < 0 || b < a ||
		    b - a == UINT64_MAX || r->cma + (b - a + 1) < r->cma ||
		    r->cma_ranges >= RESERVE_CMA_RANGES_MAX * 4)
			return -1;
		r->cma += b - a + 1;
		r->cma_ranges++;
	}
	return 0;
}

/* crashkernel=SIZE,cma: the last such word wins, as in the kernel's
 * parser (it takes the last crashkernel= of each suffix). */
static uint64_t cma_asked(const char *cmdline)
{
	uint64_t asked = 0;
	char w[128];

	for (const char *p = cmdline; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		size_t n = strcspn(p, " \t\n");
		if (n < sizeof w && !strncmp(p, "crashkernel=", 12)) {
			memcpy(w, p + 12, n - 12);
			w[n - 12] = 0;
			char *comma = strchr(w, ',');
			uint64_t v;
			if (comma && !strcmp(comma, ",cma")) {
				*comma = 0;
				if (parse_size(w, &v) == 0)
					asked = v;
			}
		}
		p += n;
	}
	return asked;
}

void crash_reserve_read(const char *root, struct crash_reserve *r)
{
	char path[512], v[64], cl[4096];
	size_t len;

	memset(r, 0, sizeof *r);
	if (read_text_file(root_path(root, "/sys/kernel/kexec_crash_size", path, sizeof path), v,
			   sizeof v) < 0 || parse_u64(v, 10, &r->fixed) < 0)
		r->fixed = 0;
	char *text = read_all_file(root_path(root, "/sys/kernel/kexec_crash_cma_ranges", path,
					     sizeof path), 0, &len);
	if (text) {
		r->cma_known = 1;
		if (parse_ranges(text, r) < 0) {
			r->cma = 0;
			r->cma_ranges = 0;
			r->cma_bad = 1;
		}
		free(text);
	}
	if (read_text_file(root_path(root, "/proc/cmdline", path, sizeof path), cl, sizeof cl) >= 0)
		r->cma_asked = cma_asked(cl);
}

const char *crash_reserve_problem(const struct crash_reserve *r, char *buf, unsigned sz)
{
	if (r->cma_bad)
		snprintf(buf, sz, "/sys/kernel/kexec_crash_cma_ranges cannot be parsed: its CMA is "
			 "not counted");
	else if (r->cma_asked && !r->cma_known)
		snprintf(buf, sz, "crashkernel=%" PRIu64 "M,cma is on the command line, but this kernel "
			 "has no crash CMA (it needs 6.17+ built with CONFIG_CMA): only the fixed part "
			 "counts", r->cma_asked >> 20);
	else if (r->cma_asked && r->cma < r->cma_asked)
		snprintf(buf, sz, "crashkernel=%" PRIu64 "M,cma asked, %" PRIu64 " MiB reserved "
			 "(the kernel log says why: \"crashkernel CMA reservation failed\")",
			 r->cma_asked >> 20, r->cma >> 20);
	else
		return NULL;
	return buf;
}

const char *crash_reserve_say(const struct crash_reserve *r, char *buf, unsigned sz)
{
	if (!r->cma)
		snprintf(buf, sz, "%.1f MiB fixed (crashkernel=)", r->fixed / 1048576.0);
	else
		snprintf(buf, sz, "%.1f MiB fixed (crashkernel=) + %.1f MiB CMA (crashkernel=,cma; "
			 "%u range%s): %.1f MiB for the crash kernel", r->fixed / 1048576.0,
			 r->cma / 1048576.0, r->cma_ranges, r->cma_ranges == 1 ? "" : "s",
			 (r->fixed + r->cma) / 1048576.0);
	return buf;
}

/* --cpus auto: the most CPUs whose compression workers still fit with
 * room to spare. Measured (tests/cpus/measure.sh: Debian 12's 6.1, QEMU
 * with 8 vCPUs and two virtio-blk disks, level 31, the product's
 * initramfs; MemAvailable as kdumpinit's plan prints it, in MB):
 *
 *   nr_cpus          1   2   3   4   5   6   7   8
 *   crashkernel=88M  22  22  22  21  18* 17  15  14   (* OOM, capture cut)
 *   crashkernel=256M 190 190  -  188  -   -   -  183
 *
 * - With one CPU the reservation R loses R/22 + 66 MB before kdumpinit
 *   plans (the kernel, the initramfs, struct pages and watermarks that
 *   grow with R): 88M -> 22 MB, 256M -> 190 MB.
 * - Each further CPU costs 1.0-1.75 MB of MemAvailable (256M: 190 -> 183
 *   from 1 to 8 CPUs; 88M: 21 -> 14 from 4 to 8, the steepest): per-CPU
 *   areas (248 KiB each at boot), per-CPU kthreads and slabs, a virtio
 *   queue per CPU. Counted as 1.75 MB.
 * - kdumpinit's plan uses 5.4 MB plus 3.4 MB per worker (a worker per
 *   CPU; capture_plan in capture/pipeline.c: 8.8, 12.2, 15.5 MB for 1-3).
 * - 88M with 5 CPUs ran out of memory with 5.8 MB left over the plan
 *   (18 MB available, 12.2 planned); 3 and 6 CPUs passed with 6.5 and
 *   4.8 MB. So the rule keeps 12 MB over the plan, what one CPU at 88M
 *   has (13.3 MB, the e2e-88M floor): 88M gets 1 CPU.
 * n CPUs fit when avail1 - 1.75 (n - 1) >= 5.4 + 3.4 n + 12 (MB), so
 * n = 1 + (avail1 - 20.8) / 5.15: 96M 2, 104M 4, 128M 9, 160M 15, 164M
 * and up 16,
 * then at most the online CPUs and RESERVE_CPUS_MAX (more workers than 16 no
 * longer speed up LZ4 onto one disk). The plan still bounds the workers
 * by the memory it finds, so an underestimate here costs speed, not the
 * dump; the measurement is in docs/CLI.md.
 *
 * The dedicated crash kernel (make crash-kernel) loses far less: no
 * modules, no distro initramfs, a kernel of 8 MB at boot. Measured the
 * same way (tests/e2e --crash-kernel, Debian's 6.1 and 7.3 as the first
 * kernel, level 31, MemAvailable at kdumpinit's plan):
 *   crashkernel=28M, 1 CPU, 1.5 GiB guest              9 MB
 *   crashkernel=24M, 1 CPU, 1.5 GiB guest              5 MB
 * R/22 + 19 MB is lost (28M: 29.3 - 1.3 - 19 = 9.0; 24M: 25.2 - 1.1 -
 * 19 = 5.1): two struct-page sections (2 MB each: the low 640 KiB and
 * the reservation's) and the kernel's image and slabs. Its server
 * drivers (HBAs, USB, MMC, UFS, IOMMUs, Hyper-V, Xen) cost 3 MB of
 * that: 16 MB before them. The same per-CPU, per-worker and headroom
 * terms give: 44M 1, 45M 2, 51M 3, 66M 6, 100M 12, from 117M 16.
 *
 * crashkernel=,cma adds its CMA to the crash kernel's RAM: R is the fixed
 * part plus the CMA part (the kernel and initramfs sit in the fixed one,
 * but struct pages and watermarks grow with all of it). */
#define AUTO_LOST_DIV		22
#define AUTO_LOST_FIXED		66000000ull
#define AUTO_LOST_FIXED_DEDICATED 19000000ull
#define AUTO_PER_CPU		1750000ull
#define AUTO_PLAN_FIXED		5400000ull
#define AUTO_PER_WORKER		3400000ull
#define AUTO_HEADROOM		12000000ull

/* CPUs in a sysfs list such as "0-3,8,10-11"; 0 if unreadable. */
static unsigned count_cpus(const char *list)
{
	unsigned n = 0;
	const char *p = list;

	while (*p) {
		char *e;
		unsigned long a = strtoul(p, &e, 10), b = a;
		if (e == p)
			return 0;
		if (*e == '-') {
			p = e + 1;
			b = strtoul(p, &e, 10);
			if (e == p || b < a)
				return 0;
		}
		n += b - a + 1;
		if (*e != ',')
			break;
		p = e + 1;
	}
	return n;
}

unsigned reserve_cpus_online(const char *root)
{
	char path[512], v[1024];

	if (read_text_file(root_path(root, "/sys/devices/system/cpu/online", path, sizeof path),
			   v, sizeof v) >= 0) {
		unsigned n = count_cpus(v);
		if (n)
			return n;
	}
	return online_cpus();
}

/* What is left of a reservation when kdumpinit plans, and what one
 * worker needs of it with the headroom. */
static uint64_t auto_avail(uint64_t reserved, int dedicated)
{
	uint64_t lost = reserved / AUTO_LOST_DIV +
			(dedicated ? AUTO_LOST_FIXED_DEDICATED : AUTO_LOST_FIXED);
	return reserved > lost ? reserved - lost : 0;
}
#define AUTO_NEED1 (AUTO_PLAN_FIXED + AUTO_PER_WORKER + AUTO_HEADROOM)

unsigned reserve_auto_cpus(uint64_t reserved, unsigned online, int dedicated)
{
	uint64_t avail = auto_avail(reserved, dedicated);
	uint64_t n = 1;

	if (avail > AUTO_NEED1)
		n += (avail - AUTO_NEED1) / (AUTO_PER_CPU + AUTO_PER_WORKER);
	if (n > online)
		n = online;
	if (n > RESERVE_CPUS_MAX)
		n = RESERVE_CPUS_MAX;
	return n ? (unsigned)n : 1;
}

uint64_t reserve_floor(unsigned cpus, int dedicated)
{
	uint64_t mib = 1 << 20;
	uint64_t need = AUTO_NEED1 + (uint64_t)(cpus ? cpus - 1 : 0) * (AUTO_PER_CPU + AUTO_PER_WORKER);

	/* avail grows with the reservation: the first whole MiB that holds
	 * the need. Past 4 GiB the answer is "more than kdumpinit asks"
	 * anyway. */
	for (uint64_t r = 16 * mib; r <= 4096 * mib; r += mib)
		if (auto_avail(r, dedicated) >= need)
			return r;
	return 4096 * mib;
}
