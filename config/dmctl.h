/* The device-mapper ioctls kdumpinit needs, on /dev/mapper/control (or
 * a path given: PID 1 makes the node itself), with no libdevmapper: read
 * a mapping's table as text, create a mapping from one, remove it. The
 * structures are written here from the kernel's uapi layout
 * (include/uapi/linux/dm-ioctl.h, interface version 4). */
#ifndef KDI_DMCTL_H
#define KDI_DMCTL_H

#include <stddef.h>
#include <stdint.h>

#define DMCTL_CONTROL "/dev/mapper/control"
/* /dev/mapper/control's node: misc major 10, minor 236 (MAPPER_CTRL_MINOR). */
#define DMCTL_MAJOR 10
#define DMCTL_MINOR 236

/* A target as the kernel reports or takes it. */
struct dmctl_target {
	uint64_t start, len;	/* sectors */
	char type[16];
	char params[512];	/* "8:2 2048", "2 128 8:2 2048 8:18 2048" */
};

#define DMCTL_MAX_TARGETS 32

/* The live table of the mapping called name: up to max targets in out.
 * @return their count, -E2BIG past max, -ENXIO no such mapping, or the
 * ioctl's -errno. */
int dmctl_table(const char *control, const char *name, struct dmctl_target *out, int max);
/* Creates mapping name with the n targets and activates it (create, load,
 * resume). On failure nothing is left behind. 0 with its dev_t's major and
 * minor, or -errno (-EBUSY: the name exists). */
int dmctl_create(const char *control, const char *name, const struct dmctl_target *t, int n,
		 unsigned *major, unsigned *minor);
/* Removes mapping name. 0 or -errno. */
int dmctl_remove(const char *control, const char *name);

#endif
