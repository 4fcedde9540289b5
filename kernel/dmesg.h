/* The crashed kernel's log, from the lockless printk ring buffer (5.10+),
 * located through VMCOREINFO alone: no vmlinux needed. */
#ifndef KDI_DMESG_H
#define KDI_DMESG_H

#include <stddef.h>
#include <stdint.h>

#include "kmem.h"

struct dmesg_stat {
	unsigned records;	/* records formatted */
	int salvaged;		/* head_id/tail_id were not valid: found by a scan */
	uint64_t scanned;	/* descriptors the scan looked at */
	unsigned rejected;	/* in-use descriptors whose id, seq or text did not check */
};

/* Formats every committed record as makedumpfile --dump-dmesg prints it
 * ("[%5lu.%06lu] text", continuation lines indented, unprintable bytes as
 * \xNN) into a malloc'ed buffer, walking tail_id..head_id.
 *
 * When those ids do not name descriptors that carry them, or frame no
 * record, every descriptor is scanned instead: the ones whose id, seq and
 * data block agree with their slot are printed in sequence order, after a
 * first line "kdumpinit: salvaged log: ..." (st->salvaged set). -ENODATA
 * when that finds nothing.
 *
 * 0; -ENOENT when VMCOREINFO has no ring buffer (older kernel);
 * -EFAULT/-EIO when its memory is unreadable; -EBADMSG when its fields are
 * out of any sane range; -EFBIG when the ring and the text would take
 * more than budget bytes of memory; -ENODATA as above. */
int dmesg_read(struct kmem *km, uint64_t budget, char **text, size_t *len, struct dmesg_stat *st);

/* Where the ring lives in the crashed kernel: the prb pointer, the ring
 * struct, its descriptors, infos and text, as kernel virtual [va, va+len)
 * (what a debugger reads for the log: the capture writes those pages
 * first). Fills up to 5, *n of them: 0, or dmesg_read's errors. */
struct kva_area { uint64_t va, len; };
int dmesg_areas(struct kmem *km, struct kva_area a[5], unsigned *n);

#endif
