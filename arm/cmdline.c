#include "cmdline.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../lib/io.h"
#include "../lib/util.h"
#include "root.h"

/* The running kernel's arguments the crash kernel gets too: those about
 * the hardware, which is the same machine. Everything else is the first
 * system's own (root=, quiet, crashkernel=, hugepages=, nr_cpus=, cma=,
 * swiotlb=, ...) and is left behind: kdump-utils removes those words
 * (KDUMP_COMMANDLINE_REMOVE, crashkernel, panic_on_warn, root), and a
 * list of what to keep cannot miss a new one. */
static const char *const carried[] = {
	"console",		/* the capture talks where the admin already looks, */
	"earlycon",		/* from its first line on: a UART the firmware */
	"earlyprintk",		/* tables do not name (x86's spelling) */
	/* The IOMMU in the mode the first kernel left it: the crash kernel
	 * copies its tables (intel 4.2, AMD 4.13) so that DMA still in
	 * flight lands where it was mapped; another mode loses that. */
	"iommu", "intel_iommu", "amd_iommu", "iommu.passthrough",
	"pci",			/* this machine's PCI quirks: nomsi, noaer, realloc */
	"acpi",			/* off, noirq; on arm64 force/on picks ACPI over the DT */
};

int cmdline_carried(const char *word)
{
	size_t wl = strcspn(word, " \t");

	for (size_t i = 0; i < ARRAY_SIZE(carried); i++) {
		size_t n = strlen(carried[i]);
		if (wl >= n && !memcmp(word, carried[i], n) && (wl == n || word[n] == '='))
			return 1;
	}
	return 0;
}

int cmdline_boot_apicid(const char *root, unsigned *id)
{
	/* processor 0's block comes first and its apicid line is near its
	 * top, before the long flags line: 4 KiB holds it */
	char t[4096], path[512];
	ssize_t r = read_text_file(root_path(root, "/proc/cpuinfo", path, sizeof path), t, sizeof t);
	if (r < 0)
		return (int)r;
	int cpu = -1;
	for (char *l = t, *e; *l; l = e + !!*e) {
		e = l + strcspn(l, "\n");
		char *colon = memchr(l, ':', (size_t)(e - l));
		if (!colon)
			continue;
		size_t kl = (size_t)(colon - l);
		while (kl && (l[kl - 1] == ' ' || l[kl - 1] == '\t'))
			kl--;
		char v[32];
		snprintf(v, sizeof v, "%.*s", (int)(e - colon - 1), colon + 1);
		char *s = v + strspn(v, " \t");
		uint64_t n;
		/* "apicid" alone: kdump-utils' get_bootcpu_apicid, and the id
		 * the kernel matches disable_cpu_apicid= against; "initial
		 * apicid" is CPUID's, which firmware may have changed since */
		if (kl == 9 && !memcmp(l, "processor", 9))
			cpu = parse_u64(s, 10, &n) == 0 && n == 0 ? 0 : 1;
		else if (cpu == 0 && kl == 6 && !memcmp(l, "apicid", 6)) {
			if (parse_u64(s, 10, &n) < 0 || n > UINT32_MAX)
				return -EINVAL;
			*id = (unsigned)n;
			return 0;
		}
	}
	return -ENOENT;
}

int cmdline_build(const char *root, const char *machine, unsigned cpus, const char *append,
		  char *out, size_t sz)
{
	char cl[4096], path[512];
	size_t n = 0;
	int w;

	out[0] = 0;
	if (read_text_file(root_path(root, "/proc/cmdline", path, sizeof path), cl, sizeof cl) < 0)
		cl[0] = 0;
	/* Words as the kernel splits them (lib/cmdline.c, next_arg): a
	 * double quote holds spaces, so a quoted value is one word. */
	for (char *p = cl; *p;) {
		p += strspn(p, " \t");
		char *s = p;
		for (int q = 0; *p && (q || (*p != ' ' && *p != '\t')); p++)
			q ^= *p == '"';
		if (p - s == 2 && !memcmp(s, "--", 2))
			break;		/* the rest is init's, not the kernel's */
		if (p > s && cmdline_carried(s)) {
			w = snprintf(out + n, sz - n, "%.*s ", (int)(p - s), s);
			if (w < 0 || (size_t)w >= sz - n)
				return -ENAMETOOLONG;
			n += (size_t)w;
		}
	}
	w = snprintf(out + n, sz - n, CAPTURE_PRE " nr_cpus=%u " CAPTURE_POST, cpus);
	if (w < 0 || (size_t)w >= sz - n)
		return -ENAMETOOLONG;
	n += (size_t)w;
	/* The CPU the first kernel booted on may be any CPU but the one that
	 * crashed; when the crash kernel brings up its CPUs (nr_cpus= above
	 * 1) it would send INIT to that old boot CPU, which resets some real
	 * machines (kdump-utils passes it too). x86 only: the parameter is
	 * arch/x86's. Linux 6.9 (5c5682b9f87a) finds the real boot CPU
	 * itself and dropped the parameter: there it is an unknown word the
	 * kernel hands to init, which ignores it. */
	unsigned id;
	if (!strcmp(machine, "x86_64") && cmdline_boot_apicid(root, &id) == 0) {
		w = snprintf(out + n, sz - n, " disable_cpu_apicid=%u", id);
		if (w < 0 || (size_t)w >= sz - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	w = snprintf(out + n, sz - n, "%s%s", *append ? " " : "", append);
	if (w < 0 || (size_t)w >= sz - n)
		return -ENAMETOOLONG;
	return 0;
}
