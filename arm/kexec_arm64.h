/* kdumpinit's own arm64 crash loader, for kernels without kexec_file_load:
 * kexec_load with five segments placed in the crashkernel= region: the
 * Image, the initramfs, a device tree (the running one, /sys/firmware/fdt,
 * with /chosen rewritten), the ELF core header, and a purgatory of six
 * instructions that enters the kernel with the tree's address in x0. */
#ifndef KDI_KEXEC_ARM64_H
#define KDI_KEXEC_ARM64_H

#include <stddef.h>
#include <stdint.h>

/* Loads KERNEL (an arm64 Image) and INITRD with command line CL as the
 * crash kernel. ROOT prefixes /proc and /sys (tests). 0, -ENOTSUP when
 * this is not an arm64 machine or the Image is not one (the caller may
 * then fall back), or another -errno (said once). */
int arm64_kexec_load(const char *root, const char *kernel, const char *initrd, const char *cl);

/* The device-tree edit, for tests: a copy of the flattened tree FDT with
 * /chosen's bootargs, linux,initrd-start/-end, linux,elfcorehdr and
 * linux,usable-memory-range set (cells per the root's #address-cells and
 * #size-cells; the crash region, then the low one when there is one) and kaslr-seed/rng-seed removed; every other property of
 * /chosen is kept. Returns a malloc'd blob (*outlen bytes) or NULL with
 * errno (EINVAL: not a tree). */
struct fdt_chosen {
	const char *bootargs;
	uint64_t initrd_start, initrd_end;
	uint64_t elfcorehdr, elfcorehdr_size;
	uint64_t usable, usable_size;		/* crashk_res */
	uint64_t usable_low, usable_low_size;	/* crashk_low_res; size 0: none */
};
void *fdt_set_chosen(const void *fdt, size_t len, const struct fdt_chosen *ch, size_t *outlen);

#endif
