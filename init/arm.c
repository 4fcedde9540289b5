/* kdumpinit arm: load the crash kernel with kexec_file_load, so a host
 * needs no kexec-tools (Debian's links Xen libraries). */
#include "kdumpinit.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/log.h"

/* The number is the C library's, per architecture (musl's arch/ headers):
 * nothing machine-specific here. */
#ifndef SYS_kexec_file_load
#error "this architecture has no kexec_file_load"
#endif
#define KEXEC_FILE_UNLOAD	0x1
#define KEXEC_FILE_ON_CRASH	0x2

/* What distros pass to a capture kernel: one CPU, no device state carried
 * over, IRQ routing tolerant of the dead kernel's leftovers, and reboot
 * ten seconds after any panic of the capture kernel itself. */
#define CAPTURE_ARGS "reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init"

static const char arm_help[] =
	"usage: kdumpinit arm --kernel FILE --initramfs FILE [--append ARGS] [--cmdline ARGS]\n"
	"       kdumpinit arm --unload\n"
	"\n"
	"Loads the crash kernel (kexec_file_load, KEXEC_FILE_ON_CRASH). Its command line\n"
	"is the console= arguments of the running kernel, then\n"
	"  " CAPTURE_ARGS "\n"
	"then --append ARGS (e.g. kdumpinit.dev=LABEL=dump). --cmdline replaces it all.\n"
	"Needs a crashkernel= reservation. Exit: 0 armed, 1 the kernel refused, 2 usage.\n";

/* console= words of the running kernel, so the capture talks where the
 * admin already looks. */
static void console_args(char *out, size_t sz)
{
	char cl[4096];
	size_t n = 0;

	out[0] = 0;
	if (read_text_file("/proc/cmdline", cl, sizeof cl) < 0)
		return;
	for (char *w = strtok(cl, " \t"); w; w = strtok(NULL, " \t"))
		if (!strncmp(w, "console=", 8) && n + strlen(w) + 2 < sz)
			n += snprintf(out + n, sz - n, "%s ", w);
}

static void explain(int e)
{
	char v[64] = "";

	read_text_file("/sys/kernel/kexec_crash_size", v, sizeof v);
	switch (e) {
	case EADDRNOTAVAIL:
	case ENOMEM:
		if (!strcmp(v, "0"))
			err("no memory is reserved for a crash kernel: boot with crashkernel=SIZE");
		else
			err("the crash kernel and initramfs do not fit the %s-byte crashkernel= "
			    "reservation: reserve more, or use a smaller initramfs", v);
		break;
	case EPERM:
		err("not permitted: arming needs root (CAP_SYS_BOOT), and kernel lockdown "
		    "or kexec_load_disabled may forbid it");
		break;
	case ENOEXEC:
	case EKEYREJECTED:
	case EBADMSG:
		err("the kernel rejected the image (%s): wrong format, or unsigned under "
		    "secure boot", strerror(e));
		break;
	case ENOSYS:
		err("this kernel has no kexec_file_load (CONFIG_KEXEC_FILE)");
		break;
	default:
		err("kexec_file_load failed: %s", strerror(e));
	}
}

int cmd_arm(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", 1, 0, 'k' }, { "initramfs", 1, 0, 'i' }, { "append", 1, 0, 'a' },
		{ "cmdline", 1, 0, 'c' }, { "unload", 0, 0, 'u' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *kernel = NULL, *initrd = NULL, *append = "", *cmdline = NULL;
	int unload = 0, c;

	while ((c = getopt_long(argc, argv, "k:i:a:c:uh", opts, NULL)) != -1) {
		switch (c) {
		case 'k': kernel = optarg; break;
		case 'i': initrd = optarg; break;
		case 'a': append = optarg; break;
		case 'c': cmdline = optarg; break;
		case 'u': unload = 1; break;
		case 'h': fputs(arm_help, stdout); return EXIT_OK;
		default: fputs(arm_help, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc || (!unload && (!kernel || !initrd))) {
		fputs(arm_help, stderr);
		return EXIT_USAGE;
	}
	if (unload) {
		if (syscall(SYS_kexec_file_load, -1, -1, 0UL, "", KEXEC_FILE_UNLOAD | KEXEC_FILE_ON_CRASH) < 0) {
			err("unloading the crash kernel failed: %s", strerror(errno));
			return EXIT_SYSTEM;
		}
		msg("crash kernel unloaded");
		return EXIT_OK;
	}

	char cl[4096], con[1024];
	if (cmdline) {
		snprintf(cl, sizeof cl, "%s", cmdline);
	} else {
		console_args(con, sizeof con);
		int n = snprintf(cl, sizeof cl, "%s" CAPTURE_ARGS "%s%s", con, *append ? " " : "", append);
		if (n < 0 || (size_t)n >= sizeof cl) {
			err("command line too long");
			return EXIT_USAGE;
		}
	}
	int kfd = open(kernel, O_RDONLY | O_CLOEXEC);
	if (kfd < 0) {
		err("cannot open kernel %s: %s", kernel, strerror(errno));
		return EXIT_USAGE;
	}
	int ifd = open(initrd, O_RDONLY | O_CLOEXEC);
	if (ifd < 0) {
		err("cannot open initramfs %s: %s", initrd, strerror(errno));
		close(kfd);
		return EXIT_USAGE;
	}
	/* The length counts the terminating NUL: the kernel checks it. */
	long r = syscall(SYS_kexec_file_load, kfd, ifd, strlen(cl) + 1, cl, KEXEC_FILE_ON_CRASH);
	int e = errno;
	close(kfd);
	close(ifd);
	if (r < 0) {
		explain(e);
		return EXIT_SYSTEM;
	}
	char loaded[8] = "?";
	read_text_file("/sys/kernel/kexec_crash_loaded", loaded, sizeof loaded);
	msg("crash kernel armed (kexec_crash_loaded=%s): %s", loaded, cl);
	return EXIT_OK;
}
