/* The record `arm` leaves in /run for `status`: what was loaded, read back
 * to tell whether the armed image is still the one the running system
 * would build. */
#include "armed.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/util.h"

const char *root_path(const char *root, const char *rel, char *buf, size_t sz)
{
	if (!root || !root[0] || !strcmp(root, "/"))
		root = "";
	snprintf(buf, sz, "%s%s", root, rel);
	return buf;
}

int armed_write(const char *root, const struct armed_state *s)
{
	char dir[512], path[512], tmp[520];

	root_path(root, "/run/kdumpinit", dir, sizeof dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	root_path(root, ARMED_STATE, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	char b[8192];
	int n = snprintf(b, sizeof b,
			 "# kdumpinit arm: what it loaded, for kdumpinit status\n"
			 "release %s\nkernel %s\nkernel_mtime %" PRId64 "\nkernel_size %" PRId64 "\n"
			 "initramfs %s\ninitramfs_mtime %" PRId64 "\ninitramfs_size %" PRId64 "\n"
			 "cpus %u\ncmdline %s\n",
			 s->release, s->kernel, s->kernel_mtime, s->kernel_size, s->initramfs,
			 s->initramfs_mtime, s->initramfs_size, s->cpus, s->cmdline);
	int r = n > 0 && (size_t)n < sizeof b ? write_full(fd, b, (size_t)n) : -E2BIG;
	return commit_tmp_at(AT_FDCWD, fd, tmp, path, r);
}

static int set_i64(const char *v, int64_t *out)
{
	uint64_t n;
	int r = parse_u64(v, 10, &n);
	if (r == 0)
		*out = (int64_t)n;
	return r;
}

int armed_read(const char *root, struct armed_state *s)
{
	char path[512], b[8192];
	ssize_t n = read_text_file(root_path(root, ARMED_STATE, path, sizeof path), b, sizeof b);
	int bad = 0;

	memset(s, 0, sizeof *s);
	if (n < 0)
		return (int)n;
	for (char *l = strtok(b, "\n"); l; l = strtok(NULL, "\n")) {
		char *v = strchr(l, ' ');
		if (l[0] == '#')
			continue;
		if (!v) {
			bad = 1;
			continue;
		}
		*v++ = 0;
		uint64_t u = 0;
		if (!strcmp(l, "release"))
			snprintf(s->release, sizeof s->release, "%s", v);
		else if (!strcmp(l, "kernel"))
			snprintf(s->kernel, sizeof s->kernel, "%s", v);
		else if (!strcmp(l, "initramfs"))
			snprintf(s->initramfs, sizeof s->initramfs, "%s", v);
		else if (!strcmp(l, "cmdline"))
			snprintf(s->cmdline, sizeof s->cmdline, "%s", v);
		else if (!strcmp(l, "kernel_mtime"))
			bad |= set_i64(v, &s->kernel_mtime) < 0;
		else if (!strcmp(l, "kernel_size"))
			bad |= set_i64(v, &s->kernel_size) < 0;
		else if (!strcmp(l, "initramfs_mtime"))
			bad |= set_i64(v, &s->initramfs_mtime) < 0;
		else if (!strcmp(l, "initramfs_size"))
			bad |= set_i64(v, &s->initramfs_size) < 0;
		else if (!strcmp(l, "cpus"))
			bad |= parse_u64(v, 10, &u) < 0, s->cpus = (unsigned)u;
	}
	return bad || !s->release[0] || !s->kernel[0] || !s->initramfs[0] ? -EINVAL : 0;
}

int armed_remove(const char *root)
{
	char path[512];

	if (unlink(root_path(root, ARMED_STATE, path, sizeof path)) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}
