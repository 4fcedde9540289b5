/* Full-transfer I/O: loops over short transfers and EINTR, tells EOF from
 * error, returns -errno. */
#ifndef KDI_IO_H
#define KDI_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Returns bytes read (< len only at EOF) or -errno. */
ssize_t read_full_at(int fd, void *buf, size_t len, uint64_t off);
/* Returns 0 or -errno; a zero-length write counts as -EIO. */
int write_full_at(int fd, const void *buf, size_t len, uint64_t off);
int write_full(int fd, const void *buf, size_t len);
/* Reads a small text file into buf (NUL-terminated, trailing newline
 * stripped). Returns length or -errno. */
ssize_t read_text_file(const char *path, char *buf, size_t size);
/* Size of a regular file or block device, or -errno. */
int64_t fd_size(int fd, int *is_blockdev);

#endif
