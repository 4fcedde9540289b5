/* The crashed kernel's log, from the lockless printk ring buffer (5.10+),
 * located through VMCOREINFO alone: no vmlinux needed. */
#ifndef KDI_DMESG_H
#define KDI_DMESG_H

#include <stddef.h>
#include <stdint.h>

#include "kmem.h"

/* Formats every committed record as makedumpfile --dump-dmesg prints it
 * ("[%5lu.%06lu] text", continuation lines indented, unprintable bytes as
 * \xNN) into a malloc'ed buffer. 0; -ENOENT when VMCOREINFO has no ring
 * buffer (older kernel); -EFAULT/-EIO when its memory is unreadable;
 * -EBADMSG when its fields are out of any sane range; -EFBIG when the
 * ring and the text would take more than budget bytes of memory. */
int dmesg_read(struct kmem *km, uint64_t budget, char **text, size_t *len, unsigned *records);

#endif
