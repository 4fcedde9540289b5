/* The kexec-tools fallback of kdumpinit arm: kernels without
 * kexec_file_load (CONFIG_KEXEC_FILE unset, as in Debian 12's and 13's
 * arm64 kernels) are armed by running kexec-tools' `kexec -p`, with the
 * crash-header fix below applied where it is needed. */
#ifndef KDI_KEXEC_TOOLS_H
#define KDI_KEXEC_TOOLS_H

#include <stddef.h>
#include <stdint.h>

/* What /proc/kallsyms (TEXT, NUL-terminated) means for kexec-tools'
 * arm64 ELF core header: 0 when `_text` is there (its header is right);
 * 1 when only `_stext` is (*stext set: kexec-tools 2.0.25 would build the
 * header with page_offset 0, so `_text` must be supplied as `_stext`);
 * -ENOENT when neither has an address (kptr_restrict, not root): the
 * header would be broken and nothing can fix it. */
int kallsyms_text_fix(const char *text, uint64_t *stext);

/* Runs `KEXEC -c -p KERNEL --initrd=INITRD --command-line=CL` (KEXEC:
 * $KDUMPINIT_KEXEC, else /usr/sbin/kexec or /sbin/kexec), in a private
 * mount namespace whose /proc/kallsyms gains a `_text` line when
 * kallsyms_text_fix says so. ROOT prefixes /proc (tests). Says on the
 * console that it falls back and why. 0, or -errno (said once). */
int kexec_tools_load(const char *root, const char *kernel, const char *initrd, const char *cl);

/* Runs `KEXEC -p -u` (the same KEXEC): unloads the crash kernel. CTX is
 * unused (an unload_ops way, arm/unload.h). 0, -ENOENT (no kexec), or
 * -EIO (it failed). Prints nothing: the caller says what failed. */
int kexec_tools_unload(void *ctx);

#endif
