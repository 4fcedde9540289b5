/* Unit tests for the crash kernel's command line (arm/cmdline.c), on a
 * fake root whose /proc/cmdline and /proc/cpuinfo each case writes:
 *  - the carried words (console=, earlycon, the IOMMU's, pci=, acpi=), in
 *    their order, and none of the first system's own (root=, quiet,
 *    crashkernel=, hugepages=, nr_cpus=, swiotlb=, cma=, ...); a quoted
 *    value is one word; nothing after "--" (init's arguments);
 *  - disable_cpu_apicid= on x86_64: processor 0's "apicid", not its
 *    "initial apicid" nor another processor's; none without a cpuinfo, or
 *    with one that has no apicid (arm64's), or on aarch64 at all;
 *  - --append last, and a line that does not fit refused. */
#define _GNU_SOURCE
#define CHECK_PREFIX "cmdline"
#include "check.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* arm/ is not in the unit archive (a program, not a library). */
#include "../../arm/cmdline.c"
#include "../../arm/root.c"

static char root[64];

static void put(const char *rel, const char *text)
{
	char p[256];

	snprintf(p, sizeof p, "%s%s", root, rel);
	if (!text) {
		unlink(p);
		return;
	}
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The line for CPUS on MACHINE with --append APPEND, or "" on failure. */
static const char *line(const char *machine, unsigned cpus, const char *append)
{
	static char out[4096];

	if (cmdline_build(root, machine, cpus, append, out, sizeof out) < 0)
		out[0] = 0;
	return out;
}

/* Two processors as x86 lists them; processor 0 booted with APIC id 6
 * (firmware numbering), its CPUID id 4, processor 1's 0. */
static const char cpuinfo_x86[] =
	"processor\t: 0\n"
	"vendor_id\t: GenuineIntel\n"
	"physical id\t: 0\n"
	"initial apicid\t: 4\n"
	"apicid\t\t: 6\n"
	"flags\t\t: fpu vme de pse tsc msr apic\n"
	"\n"
	"processor\t: 1\n"
	"vendor_id\t: GenuineIntel\n"
	"apicid\t\t: 0\n"
	"initial apicid\t: 0\n";

static const char cpuinfo_arm64[] =
	"processor\t: 0\n"
	"BogoMIPS\t: 50.00\n"
	"Features\t: fp asimd evtstrm\n"
	"CPU implementer\t: 0x41\n"
	"\n"
	"processor\t: 1\n"
	"BogoMIPS\t: 50.00\n";

static void t_carried(void)
{
	put("/proc/cpuinfo", NULL);
	put("/proc/cmdline",
	    "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet console=tty0 crashkernel=256M "
	    "hugepages=16 hugepagesz=2M intel_iommu=on iommu=pt nr_cpus=8 swiotlb=65536 "
	    "cma=64M earlycon=uart8250,io,0x3f8 pci=nomsi,noaer acpi=force slub_debug "
	    "consoleblank=0 pcie_aspm=off iommu.passthrough=1 console=ttyS0,115200\n");
	CHECK_STR(line("aarch64", 1, ""),
		  "console=tty0 intel_iommu=on iommu=pt earlycon=uart8250,io,0x3f8 "
		  "pci=nomsi,noaer acpi=force iommu.passthrough=1 console=ttyS0,115200 "
		  "reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init");
}

static void t_words(void)
{
	/* a name is the whole word up to = or its end: consoleblank= and
	 * pcie_aspm= are not console= and pci= */
	CHECK_INT(cmdline_carried("console=ttyS0"), 1);
	CHECK_INT(cmdline_carried("earlycon"), 1);
	CHECK_INT(cmdline_carried("earlycon rest"), 1);
	CHECK_INT(cmdline_carried("consoleblank=0"), 0);
	CHECK_INT(cmdline_carried("pcie_aspm=off"), 0);
	CHECK_INT(cmdline_carried("iommu.strict=0"), 0);
	CHECK_INT(cmdline_carried("crashkernel=256M"), 0);
	CHECK_INT(cmdline_carried(""), 0);
}

static void t_quotes_and_init(void)
{
	/* a quoted value with spaces is one word, carried whole or not at
	 * all; after "--" the words are init's */
	put("/proc/cpuinfo", NULL);
	put("/proc/cmdline",
	    "dyndbg=\"file x.c +p pci=bogus\" console=\"ttyS0,115200\" -- console=ttyS1 single\n");
	CHECK_STR(line("aarch64", 2, ""),
		  "console=\"ttyS0,115200\" reset_devices nr_cpus=2 irqpoll panic=10 rdinit=/init");
}

static void t_apicid(void)
{
	unsigned id = 99;

	put("/proc/cmdline", "console=ttyS0\n");
	put("/proc/cpuinfo", cpuinfo_x86);
	CHECK_INT(cmdline_boot_apicid(root, &id), 0);
	CHECK_INT(id, 6);
	CHECK_STR(line("x86_64", 1, "kdumpinit.dev=LABEL=dump"),
		  "console=ttyS0 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init "
		  "disable_cpu_apicid=6 kdumpinit.dev=LABEL=dump");
	/* the parameter is x86's: never on arm64, whatever cpuinfo says */
	CHECK_STR(line("aarch64", 1, ""),
		  "console=ttyS0 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init");
}

static void t_apicid_absent(void)
{
	unsigned id;

	put("/proc/cmdline", "console=ttyS0\n");
	put("/proc/cpuinfo", NULL);
	CHECK_INT(cmdline_boot_apicid(root, &id), -ENOENT);
	CHECK_STR(line("x86_64", 1, ""),
		  "console=ttyS0 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init");
	put("/proc/cpuinfo", cpuinfo_arm64);
	CHECK_INT(cmdline_boot_apicid(root, &id), -ENOENT);
	CHECK_STR(line("x86_64", 1, ""),
		  "console=ttyS0 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init");
	/* processor 0 not listed: processor 1's id is not the boot CPU's */
	put("/proc/cpuinfo", "processor\t: 1\napicid\t\t: 2\n");
	CHECK_INT(cmdline_boot_apicid(root, &id), -ENOENT);
	put("/proc/cpuinfo", "processor\t: 0\napicid\t\t: x2\n");
	CHECK_INT(cmdline_boot_apicid(root, &id), -EINVAL);
	CHECK_STR(line("x86_64", 1, ""),
		  "console=ttyS0 reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init");
}

static void t_no_cmdline(void)
{
	put("/proc/cmdline", NULL);
	put("/proc/cpuinfo", "processor\t: 0\napicid\t\t: 0\n");
	CHECK_STR(line("x86_64", 3, "a=b"),
		  "reset_devices nr_cpus=3 irqpoll panic=10 rdinit=/init disable_cpu_apicid=0 a=b");
}

static void t_too_long(void)
{
	char big[5000], out[128];

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	put("/proc/cmdline", "console=ttyS0\n");
	put("/proc/cpuinfo", NULL);
	CHECK_INT(cmdline_build(root, "x86_64", 1, big, out, sizeof out), -ENAMETOOLONG);
	CHECK_INT(cmdline_build(root, "x86_64", 1, "", out, 20), -ENAMETOOLONG);
	CHECK_INT(cmdline_build(root, "x86_64", 1, "", out, sizeof out), 0);
}

int main(void)
{
	char p[128];

	snprintf(root, sizeof root, "/tmp/kdi-cmdline-XXXXXX");
	if (!mkdtemp(root)) {
		printf("FAIL cmdline.setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(p, sizeof p, "%s/proc", root);
	mkdir(p, 0755);
	RUN(t_carried);
	RUN(t_words);
	RUN(t_quotes_and_init);
	RUN(t_apicid);
	RUN(t_apicid_absent);
	RUN(t_no_cmdline);
	RUN(t_too_long);
	put("/proc/cmdline", NULL);
	put("/proc/cpuinfo", NULL);
	rmdir(p);
	rmdir(root);
	return check_done();
}
