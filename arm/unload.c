/* Taking the crash kernel out (see unload.h).
 *
 * Why three ways: kexec_file_load exists only with CONFIG_KEXEC_FILE,
 * which Debian's arm64 kernels (6.1, 6.12) leave unset: there it is
 * ENOSYS, and an unload that stops at it fails at every shutdown and
 * leaves a removed package's crash kernel loaded. kexec_load unloads
 * with no segments: do_kexec_load() (kernel/kexec.c) frees the crash
 * image when nr_segments is 0 and KEXEC_ON_CRASH is set, whichever
 * syscall loaded it, and the arch bits may be KEXEC_ARCH_DEFAULT.
 * kexec-tools' `kexec -p -u` is the last resort (a kernel built with
 * neither syscall cannot have a crash kernel loaded, but a seccomp or
 * LSM policy may allow kexec's own path). */
#define _GNU_SOURCE
#include "unload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/log.h"

#define KEXEC_ON_CRASH		0x1
#define KEXEC_ARCH_DEFAULT	0
#define KEXEC_FILE_UNLOAD	0x1
#define KEXEC_FILE_ON_CRASH	0x2

int unload_by_file(void *ctx)
{
	(void)ctx;
#ifdef SYS_kexec_file_load
	if (syscall(SYS_kexec_file_load, -1, -1, 0UL, "", KEXEC_FILE_UNLOAD | KEXEC_FILE_ON_CRASH) < 0)
		return -errno;
	return 0;
#else
	return -ENOSYS;
#endif
}

int unload_by_load(void *ctx)
{
	(void)ctx;
	if (syscall(SYS_kexec_load, 0UL, 0UL, NULL, (unsigned long)(KEXEC_ON_CRASH | KEXEC_ARCH_DEFAULT)) < 0)
		return -errno;
	return 0;
}

const char *unload_how_name(int how)
{
	static const char *const names[] = { "?", "kexec_file_load", "kexec_load", "kexec -p -u" };
	return how >= UNLOAD_FILE && how <= UNLOAD_TOOLS ? names[how] : names[0];
}

int unload_crash_kernel(const struct unload_ops *ops)
{
	int (*const way[3])(void *) = { ops->file, ops->load, ops->tools };
	char why[256];
	size_t n = 0;
	int r = -ENOSYS;

	why[0] = 0;
	for (int i = 0; i < 3; i++) {
		if (!way[i])
			continue;
		r = way[i](ops->ctx);
		if (r == 0)
			return UNLOAD_FILE + i;
		int k = snprintf(why + n, sizeof why - n, "%s%s: %s", n ? "; " : "",
				 unload_how_name(UNLOAD_FILE + i), errstr(r));
		if (k > 0 && (size_t)k < sizeof why - n)
			n += (size_t)k;
	}
	err("unloading the crash kernel failed: %s", why);
	return r;
}
