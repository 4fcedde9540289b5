/* What the running kernel says about the machine (see machine.h). */
#define _GNU_SOURCE
#include "machine.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "root.h"

/* Room for one more element of SIZE bytes in *p (capacity *cap). */
static int grow(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;

	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *np = reallocarray(*p, c, size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

static int add_crash(struct machine *m, uint64_t s, uint64_t e)
{
	for (int i = 0; i < m->ncrash; i++)
		if (m->crash[i].start == s && m->crash[i].end == e)
			return 0;	/* listed twice: one region */
	if (m->ncrash == MACHINE_CRASH_MAX) {
		err("/proc/iomem has more than %d \"Crash kernel\" regions: the kernel reserves "
		    "crashkernel= and its low part only; not arming with a header that would "
		    "leave one in the dump", MACHINE_CRASH_MAX);
		return -E2BIG;
	}
	int i = m->ncrash++;
	while (i > 0 && m->crash[i - 1].start > s) {
		m->crash[i] = m->crash[i - 1];
		i--;
	}
	m->crash[i] = (struct mrange){ s, e };
	return 0;
}

int machine_read_iomem(const char *root, struct machine *m)
{
	char path[512];
	size_t n, cap = 0;
	char *t = read_all_file(root_path(root, "/proc/iomem", path, sizeof path), 0, &n);
	int r = 0;

	if (!t)
		return -errno;
	for (char *save, *line = strtok_r(t, "\n", &save); line && !r; line = strtok_r(NULL, "\n", &save)) {
		int indent = (int)strspn(line, " ");
		uint64_t s, e;
		char name[64];
		if (sscanf(line + indent, "%" SCNx64 "-%" SCNx64 " : %63[^\n]", &s, &e, name) != 3 || e < s)
			continue;
		if (indent == 0 && !strcmp(name, "System RAM")) {
			if (!(r = grow(&m->ram, &cap, m->nram, sizeof *m->ram)))
				m->ram[m->nram++] = (struct mrange){ s, e };
		} else if (!strcmp(name, "Crash kernel")) {
			r = add_crash(m, s, e);
		} else if (!strcmp(name, "Kernel code") && !m->have_code) {
			m->code = (struct mrange){ s, e };
			m->have_code = 1;
		} else if (!strcmp(name, "Kernel data") && !m->have_data) {
			m->data = (struct mrange){ s, e };
			m->have_data = 1;
		}
	}
	free(t);
	return r;
}

/* N of a "cpuN" directory entry, or -1 (cpufreq, cpuidle, ...). */
static long cpu_number(const char *name)
{
	char *end;

	if (strncmp(name, "cpu", 3) || name[3] < '0' || name[3] > '9')
		return -1;
	unsigned long v = strtoul(name + 3, &end, 10);
	return *end || v > 0x7fffffff ? -1 : (long)v;
}

/* cpuN's note address into *addr: 1, 0 when it has no crash_notes, or
 * -errno. With addrs 0 only whether the file is there. */
static int cpu_note(const char *root, long cpu, int addrs, uint64_t *addr)
{
	char rel[96], path[512], v[64], *end;

	snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%ld/crash_notes", cpu);
	root_path(root, rel, path, sizeof path);
	if (!addrs)
		return access(path, F_OK) == 0 ? 1 : errno == ENOENT ? 0 : -errno;
	ssize_t r = read_text_file(path, v, sizeof v);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return (int)r;
	errno = 0;
	*addr = strtoull(v, &end, 16);
	return end == v || errno ? -EINVAL : 1;
}

static int by_cpu(const void *a, const void *b)
{
	const struct cpu_note *x = a, *y = b;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

int machine_read_cpus(const char *root, struct machine *m, int addrs)
{
	char path[512];
	DIR *d = opendir(root_path(root, "/sys/devices/system/cpu", path, sizeof path));
	size_t cap = 0;
	int r = 0;

	if (!d) {
		r = -errno;
		err("%s: %s", path, errstr(r));
		return r;
	}
	for (struct dirent *de; !r && (de = readdir(d));) {
		long cpu = cpu_number(de->d_name);
		uint64_t a = 0;
		if (cpu < 0)
			continue;
		int have = cpu_note(root, cpu, addrs, &a);
		if (have < 0) {
			r = have;
			err("/sys/devices/system/cpu/cpu%ld/crash_notes: %s", cpu, errstr(r));
		} else if (have && !(r = grow(&m->notes, &cap, m->nnotes, sizeof *m->notes))) {
			m->notes[m->nnotes++] = (struct cpu_note){ (unsigned)cpu, a };
		}
	}
	closedir(d);
	if (r == -ENOMEM)
		err("no memory for the CPUs' crash notes");
	if (r)
		return r;
	/* readdir's order is the directory's: the header lists the notes in
	 * CPU order, as the kernel's own does */
	qsort(m->notes, m->nnotes, sizeof *m->notes, by_cpu);
	if (addrs && m->nnotes) {
		char rel[96], v[64];
		snprintf(rel, sizeof rel, "/sys/devices/system/cpu/cpu%u/crash_notes_size", m->notes[0].cpu);
		if (read_text_file(root_path(root, rel, path, sizeof path), v, sizeof v) >= 0)
			m->notes_size = strtoull(v, NULL, 10);
	}
	return 0;
}

int machine_read_vmcoreinfo(const char *root, struct machine *m)
{
	char path[512], v[64];

	if (read_text_file(root_path(root, "/sys/kernel/vmcoreinfo", path, sizeof path), v, sizeof v) < 0)
		return -ENOENT;
	if (sscanf(v, "%" SCNx64 " %" SCNx64, &m->vmcoreinfo, &m->vmcoreinfo_size) != 2)
		return -EINVAL;
	return 0;
}

void machine_free(struct machine *m)
{
	free(m->ram);
	free(m->notes);
	m->ram = NULL;
	m->notes = NULL;
	m->nram = m->nnotes = 0;
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

void machine_fingerprint(const struct machine *m, struct machine_print *p)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int hidden = m->nram > 0;

	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < m->nnotes; i++)
		h = fnv(h, m->notes[i].cpu);
	p->cpus = (unsigned)m->nnotes;
	p->cpu_hash = h;
	h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < m->nram; i++) {
		h = fnv(fnv(h, m->ram[i].start), m->ram[i].end);
		hidden &= !m->ram[i].start && !m->ram[i].end;
	}
	p->ram_ranges = (unsigned)m->nram;
	p->ram_hash = h;
	p->ram_hidden = hidden;
}
