/* The crash kernel's command line: the running kernel's arguments that
 * describe the hardware (carried), what every capture needs (added), and
 * on x86_64 the boot CPU's APIC id. docs/CLI.md lists both with why. */
#ifndef KDI_CMDLINE_H
#define KDI_CMDLINE_H

#include <stddef.h>

/* What distros pass to a capture kernel: no device state carried over,
 * IRQ routing tolerant of the dead kernel's leftovers, and reboot ten
 * seconds after any panic of the capture kernel itself; nr_cpus=N goes
 * between the two. nr_cpus= appears exactly once: the kernel
 * (kernel/smp.c, nrcpus()) lets a later nr_cpus= lower the count but not
 * raise it. */
#define CAPTURE_PRE "reset_devices"
#define CAPTURE_POST "irqpoll panic=10 rdinit=/init"
#define CAPTURE_ARGS CAPTURE_PRE " nr_cpus=1 " CAPTURE_POST

/* 1 if WORD (up to its end or a space) is carried from the running
 * kernel's command line: NAME or NAME=... for a NAME of the table in
 * cmdline.c. */
int cmdline_carried(const char *word);
/* The APIC id of processor 0, the CPU the running kernel booted on, from
 * ROOT/proc/cpuinfo's "apicid" line (x86). 0, -ENOENT (no such line: not
 * x86, or processor 0 not listed), -EINVAL (a value that is not a
 * number), or the -errno of reading the file. */
int cmdline_boot_apicid(const char *root, unsigned *id);
/* The whole line for CPUS CPUs on MACHINE (uname -m of the running
 * kernel, which is the crash kernel's too): the carried words of
 * ROOT/proc/cmdline in their order, CAPTURE_PRE nr_cpus=CPUS
 * CAPTURE_POST, disable_cpu_apicid= on x86_64 when cpuinfo gives it,
 * then APPEND. A /proc/cmdline that cannot be read carries nothing. 0,
 * or -ENAMETOOLONG when it does not fit sz. */
int cmdline_build(const char *root, const char *machine, unsigned cpus, const char *append,
		  char *out, size_t sz);

#endif
