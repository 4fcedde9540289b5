/* The record `arm` leaves for `status`: what was loaded, so a later
 * status can say whether the armed image is still the one the running
 * system would build. */
#ifndef KDI_ARMED_H
#define KDI_ARMED_H

#include <stddef.h>
#include <stdint.h>

/* Under the root given with --root (default "/"): /run is a tmpfs, so
 * the record goes with the loaded kernel at every reboot. */
#define ARMED_STATE "/run/kdumpinit/armed"

struct armed_state {
	char release[128];		/* uname -r when armed */
	char kernel[256], initramfs[256];
	int64_t kernel_mtime, initramfs_mtime;
	int64_t kernel_size, initramfs_size;
	unsigned cpus;			/* nr_cpus= given; 0 with --cmdline */
	char cmdline[4096];
};

/* Writes s to ROOT/run/kdumpinit/armed (temporary name, rename).
 * 0 or -errno. */
int armed_write(const char *root, const struct armed_state *s);
/* Reads it back: 0, -ENOENT (never armed by kdumpinit since boot),
 * -EINVAL (not a record we wrote), other -errno. */
int armed_read(const char *root, struct armed_state *s);
/* Removes it (arm --unload). 0 or -errno; -ENOENT is not an error. */
int armed_remove(const char *root);

/* ROOT/REL into buf ("" and "/" are the real root). */
const char *root_path(const char *root, const char *rel, char *buf, size_t sz);

#endif
