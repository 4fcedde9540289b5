#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

ssize_t read_full_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

int write_full_at(int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

#define ROOM_STEP (64ull << 20)

int room_write_at(struct room *r, int fd, const void *buf, size_t len, uint64_t off)
{
	struct statvfs v;

	if (r && len > r->ahead) {
		if (fstatvfs(fd, &v) < 0)
			return -errno;
		uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize;
		if (avail < r->keep || avail - r->keep < len) {
			r->full = 1;
			return -ENOSPC;
		}
		uint64_t half = (avail - r->keep - len) / 2;
		r->ahead = len + (half < ROOM_STEP ? half : ROOM_STEP);
	}
	if (r)
		r->ahead -= len;
	return write_full_at(fd, buf, len, off);
}

int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += n;
	}
	return 0;
}

ssize_t read_text_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read_full_at(fd, buf, size - 1, 0);
	close(fd);
	if (n < 0)
		return n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return n;
}

int64_t fd_size(int fd, int *is_blockdev)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (is_blockdev)
		*is_blockdev = S_ISBLK(st.st_mode);
	if (S_ISBLK(st.st_mode)) {
		uint64_t sz;
		if (ioctl(fd, BLKGETSIZE64, &sz) < 0)
			return -errno;
		return (int64_t)sz;
	}
	if (S_ISREG(st.st_mode))
		return st.st_size;
	return -ENOTBLK;
}

int open_file_or_blockdev(const char *path, int flags, mode_t mode, mode_t *kind)
{
	struct stat st;
	int fd = open(path, flags | O_NONBLOCK | O_NOCTTY, mode);

	/* Only a regular file someone holds a lease on says EWOULDBLOCK: its
	 * open waits for the lease to break, as a blocking open does. */
	if (fd < 0 && errno == EWOULDBLOCK && !(flags & O_NONBLOCK))
		fd = open(path, flags | O_NOCTTY, mode);
	if (kind)
		*kind = 0;
	if (fd < 0) {
		int e = errno;
		if (e == ENXIO && stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
			if (kind)
				*kind = S_IFSOCK;
			return -ENOTBLK;
		}
		return -e;
	}
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (!r && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		if (kind)
			*kind = st.st_mode & S_IFMT;
		r = -ENOTBLK;
	}
	int fl = r ? 0 : fcntl(fd, F_GETFL);
	if (!r && !(flags & O_NONBLOCK) && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
		r = -errno;
	if (r < 0)
		close(fd);
	return r < 0 ? r : fd;
}

const char *file_kind_name(mode_t kind)
{
	switch (kind & S_IFMT) {
	case S_IFIFO: return "a FIFO (named pipe)";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFDIR: return "a directory";
	case S_IFLNK: return "a symbolic link";
	default: return "a special file";
	}
}

int commit_tmp_at(int dfd, int fd, const char *tmp, const char *name, int r)
{
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	return r;
}

char *read_all_file(const char *path, size_t extra, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 64u << 10, n = 0;
	char *buf = malloc(cap + extra + 1);
	while (buf) {
		if (n == cap) {
			char *nb = realloc(buf, 2 * cap + extra + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			buf = NULL;
			errno = e;
			break;
		}
		if (r == 0) {
			buf[n] = 0;
			*len = n;
			break;
		}
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	errno = e;
	return buf;
}

uint64_t proc_kb(const char *path, const char *key)
{
	char buf[4096];
	const char *m;

	if (read_text_file(path, buf, sizeof buf) <= 0 || !(m = strstr(buf, key)))
		return 0;
	return strtoull(m + strlen(key), NULL, 10) * 1024;
}
