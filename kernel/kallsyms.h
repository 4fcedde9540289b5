/* The crashed kernel's own symbol table, as VMCOREINFO points to it
 * (SYMBOL(kallsyms_names), _offsets, _token_table, ...: Linux 6.0 and
 * later): a few names to addresses, with no vmlinux. */
#ifndef KDI_KALLSYMS_H
#define KDI_KALLSYMS_H

#include <stdint.h>

#include "kmem.h"

/* Looks up names[0..n): addr[i] is its address, or 0 when the table does
 * not have it. Returns how many were found, or -ENOENT (no table in
 * VMCOREINFO, or one that does not decode), -EFAULT, -ENOMEM. The table
 * is checked against SYMBOL(_stext) where VMCOREINFO has it. */
int ksyms_lookup(struct kmem *km, const char *const *names, uint64_t *addr, unsigned n);

#endif
