/* What arm and status need to know of a kernel image before loading it:
 * its release, whether it is kdumpinit's dedicated crash kernel (which
 * carries kdumpinit as its initramfs), whether it bears a signature, and
 * whether the running kernel's lockdown will take an unsigned one. */
#ifndef KDI_KIMAGE_H
#define KDI_KIMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The suffix of the dedicated crash kernel's release (CONFIG_LOCALVERSION
 * in crash-kernel/common.config): how arm tells it from a distro kernel. */
#define KIMAGE_DEDICATED_SUFFIX "-kdumpinit"

enum kimage_sig {
	KIMAGE_NOT_PE = -1,	/* no PE/COFF header (no EFI stub): cannot bear one */
	KIMAGE_UNSIGNED = 0,	/* PE, empty certificate table */
	KIMAGE_SIGNED = 1,	/* PE with an Authenticode certificate table */
};

struct kimage_info {
	char release[65];	/* "" when the image does not say */
	int dedicated;		/* release ends in KIMAGE_DEDICATED_SUFFIX */
	int sig;		/* enum kimage_sig */
};

/* Reads FD (an x86 bzImage or an arm64 Image; other files give an empty
 * release). 0, or -errno of reading it. */
int kimage_inspect(int fd, struct kimage_info *ki);

enum kimage_lockdown {
	LOCKDOWN_UNKNOWN = -1,	/* no /sys/kernel/security/lockdown (no LSM, securityfs not mounted) */
	LOCKDOWN_NONE = 0,
	LOCKDOWN_INTEGRITY,
	LOCKDOWN_CONFIDENTIALITY,
};

/* The running kernel's lockdown mode, under ROOT (tests give a fake
 * sysfs). Under integrity or confidentiality, kexec_file_load takes only
 * images whose signature the kernel verifies. */
int kimage_lockdown(const char *root);
const char *kimage_lockdown_name(int mode);

#endif
