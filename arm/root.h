/* Paths under the root given with --root: arm and status read the
 * running system's /proc, /sys and /run through it, so a test gives them
 * a directory that stands for another machine. Below every other arm/
 * module: each reads files, none owns where they are. */
#ifndef KDI_ROOT_H
#define KDI_ROOT_H

#include <stddef.h>

/* ROOT/REL into buf ("" and "/" are the real root). */
const char *root_path(const char *root, const char *rel, char *buf, size_t sz);

#endif
