/* Stacked dump devices: what the crash kernel can rebuild, and rebuilding
 * it there. No crash kernel runs lvm2 or mdadm, so a logical volume or
 * an md array is never assembled in it. Two kinds can be, from a table
 * recorded on the host (config/dmtable.h) with device-mapper alone:
 *   - an LVM logical volume (or any device-mapper mapping) made only of
 *     linear and striped targets over plain disks and partitions;
 *   - an md RAID1 array, as a linear mapping over one of its mirrors: the
 *     lowest in-sync slot that is not write-mostly, the disk md resyncs
 *     and repairs the others from, so the dump reaches every mirror on the
 *     array's next resync or `echo repair > /sys/block/mdN/md/sync_action`.
 * Everything else stacked is refused with what to use instead: dm-crypt
 * (the crash kernel has no key), thin, snapshot, cache, LVM RAID, md
 * RAID0/4/5/6/10, arrays of external metadata, and anything stacked on
 * top of another stacked device. A multipath map is not refused: its
 * paths are plain disks in the crash kernel, each showing the claim. */
#ifndef KDI_STACK_H
#define KDI_STACK_H

#include <stddef.h>

#include "dmctl.h"
#include "dmtable.h"
#include "target.h"

/* Where the host reads a mapping's table from (tests pass their own);
 * NULL reads it with dmctl_table on DMCTL_CONTROL. Returns as dmctl_table. */
typedef int (*stack_table_fn)(const char *name, struct dmctl_target *out, int max);

enum stack_kind {
	STACK_PLAIN,		/* a disk, a partition, a multipath map: nothing to do */
	STACK_TABLE,		/* *t holds the table the crash kernel rebuilds */
};

/* Block device MAJ:MIN on the host. @return STACK_PLAIN (what says how
 * the crash kernel finds a multipath map, else ""), STACK_TABLE
 * (what: "an LVM logical volume (vg-dump), 2 linear segments"),
 * -EOPNOTSUPP (refused: what says what it is and what to use instead),
 * or another -errno when it cannot be read (what says what). */
int stack_record(const struct sysroot *r, stack_table_fn table, unsigned maj, unsigned min,
		 struct dm_table *t, char *what, size_t sz);

/* The device at the top of the stack block device NAME belongs to (an
 * md array's mirror -> the array, a volume's partition -> the volume),
 * by sysfs's holders/: a LABEL= on a RAID1 of metadata 1.0 finds a mirror
 * as readily as the array, and the array is what decides. 0 with its
 * MAJ:MIN, or -ENOENT. */
int stack_top(const struct sysroot *r, const char *name, unsigned *maj, unsigned *min);
/* The same by name: NAME becomes its top's name (unchanged when sysfs
 * shows no holder or cannot say). */
void stack_top_name(const struct sysroot *r, char *name, size_t sz);

/* The mapping PID 1 makes, and the one it looks for. */
#define STACK_DM_NAME "kdumpinit-dump"

/* In the crash kernel: once every device of t is here, creates mapping
 * name from it on control. 0 with its block device's name ("dm-0") in
 * dev; -ENOENT while a device is missing (which one in what); another
 * -errno when the kernel refused (what says at which step). */
int stack_assemble(const struct sysroot *r, const char *control, const struct dm_table *t,
		   const char *name, char *dev, size_t devsz, char *what, size_t sz);

#endif
