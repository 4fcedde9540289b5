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

/* Free space a writer keeps on its output's filesystem (save --dir's
 * --min-free, which an estimate made before writing cannot promise).
 * fstatvfs is asked before the first write, then after at most 64 MiB,
 * or half the room above keep if less: cheap far from the reserve, and
 * no run of writes between two looks can reach it (others writing to the
 * filesystem meanwhile aside). */
struct room {
	uint64_t keep;			/* bytes to leave free */
	uint64_t ahead;			/* bytes that may be written before the next look */
	int full;			/* a write was refused: it would have eaten into keep */
};
/* write_full_at, after making sure that len more bytes leave r->keep free
 * on fd's filesystem; r NULL writes unchecked. 0, -ENOSPC with r->full
 * set (nothing written), or -errno. */
int room_write_at(struct room *r, int fd, const void *buf, size_t len, uint64_t off);
/* Finishes a file written under the temporary name tmp in dfd (AT_FDCWD
 * for paths): fsync and close fd, then rename tmp to name, so that name
 * is only ever seen holding all of its bytes. r is the writing's result
 * (0 or -errno); on any failure tmp is removed. Returns the first
 * failure's -errno, or 0. Renaming never follows a link at either name. */
int commit_tmp_at(int dfd, int fd, const char *tmp, const char *name, int r);
/* Reads a small text file into buf (NUL-terminated, trailing newline
 * stripped). Returns length or -errno. */
ssize_t read_text_file(const char *path, char *buf, size_t size);
/* A "Key:   N kB" line of a /proc file (key with its colon), in bytes;
 * 0 when the file or the key is absent. */
uint64_t proc_kb(const char *path, const char *key);
/* All of a file, /proc files too (size 0 in stat), into a malloc'd
 * NUL-terminated buffer with room for extra bytes more; *len its length.
 * NULL with errno. */
char *read_all_file(const char *path, size_t extra, size_t *len);
/* Size of a regular file or block device, or -errno. */
int64_t fd_size(int fd, int *is_blockdev);
/* Opens an input that must be a regular file or a block device (a
 * vmcore, a dump device or file, a capture's target), with open's flags
 * (mode for O_CREAT). Anything else is -ENOTBLK at once, *kind (if not
 * NULL) its S_IFMT bits: a FIFO opened for reading waits in open() for a
 * writer, so open never waits here (O_NONBLOCK until fstat has said what
 * the path is; the fd is blocking again when returned), and a socket,
 * which open refuses with ENXIO, is named as what it is. The fd or
 * -errno. */
int open_file_or_blockdev(const char *path, int flags, mode_t mode, mode_t *kind);
/* What an S_IFMT kind is, for "PATH is KIND, not a regular file or block
 * device": "a FIFO (named pipe)", "a socket", "a character device", ... */
const char *file_kind_name(mode_t kind);

#endif
