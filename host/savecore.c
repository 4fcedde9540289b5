/* save --dir: savecore at boot. Validate everything first, check free
 * space, write DIR/<crash time>/{vmcore,dmesg.txt,info.txt} under
 * temporary names, fsync, rename, and only then mark the device's dump
 * saved. A failure leaves nothing under a final name and the device as it
 * was. */
#include "savecore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "source.h"
#include "../config/target.h"
#include "../dump/dumpfile.h"
#include "../dump/save.h"
#include "../kernel/vmcoreinfo.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* DIR, opened once: everything below it is reached through fds, never
 * by a path a link planted in DIR could redirect. */
struct crashdir {
	int fd;
	const char *path;
	uid_t uid;			/* who saves: only their dumps are pruned */
	struct room *room;		/* --min-free, kept while writing; or NULL */
};

/* Written last into each dump directory: it says kdumpinit wrote the
 * directory and when, in save order (the clock may be wrong: a dead RTC
 * crashes in 1970). Only directories carrying a valid one are pruned. */
#define MARKER ".kdumpinit"
#define MARKER_FMT "kdumpinit save %llu\n"

/* Everything save --dir may leave in a dump directory; the marker last so
 * that a half-removed directory is still recognised. */
static const char *const dump_files[] = { ".vmcore.tmp", ".dmesg.txt.tmp", ".info.txt.tmp",
					  "." MARKER ".tmp", "vmcore", "dmesg.txt", "info.txt",
					  MARKER };

/* Opens dir's subdirectory name if it is one kdumpinit could have made:
 * a real directory (not a link), owned by the saving uid, closed to
 * everyone else. The fd or -errno (-EPERM: not ours). */
static int open_own_dir(const struct crashdir *cd, const char *name)
{
	struct stat a, b;

	if (fstatat(cd->fd, name, &a, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(a.st_mode) || a.st_uid != cd->uid || (a.st_mode & 077))
		return -EPERM;
	int fd = openat(cd->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* The name may have been swapped between the two looks. */
	if (fstat(fd, &b) < 0 || b.st_dev != a.st_dev || b.st_ino != a.st_ino ||
	    b.st_uid != cd->uid || (b.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The save sequence number in sfd's marker. Strict: a regular file of
 * the saving uid holding exactly what write_dump_files writes. 0 or -errno. */
static int read_marker(int sfd, uid_t uid, uint64_t *seq)
{
	char buf[64], again[64];
	struct stat st;
	int fd = openat(sfd, MARKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid &&
	    st.st_size < (off_t)sizeof buf)
		n = read_full_at(fd, buf, sizeof buf - 1, 0);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = 0;
	unsigned long long v;
	char nl;
	if (sscanf(buf, "kdumpinit save %llu%c", &v, &nl) != 2)
		return -EINVAL;
	snprintf(again, sizeof again, MARKER_FMT, v);
	if (strcmp(buf, again))
		return -EINVAL;	/* leading zeros, signs, spaces, trailing bytes */
	*seq = v;
	return 0;
}

/* Removes what save --dir writes from sfd. unlinkat never follows a
 * link: a planted one is removed itself, its target untouched. */
static void clear_dump_files(int sfd)
{
	for (size_t i = 0; i < ARRAY_SIZE(dump_files); i++)
		unlinkat(sfd, dump_files[i], 0);
}

/* Removes the dump directory name: only one of ours (and with a valid
 * marker if marked), only the files save --dir writes. 0, -EPERM (not
 * ours), -ENOTEMPTY (other files in it) or -errno. */
static int remove_dump_dir(const struct crashdir *cd, const char *name, int marked)
{
	uint64_t seq;
	int sfd = open_own_dir(cd, name);

	if (sfd < 0)
		return sfd;
	if (marked && read_marker(sfd, cd->uid, &seq) < 0) {
		close(sfd);
		return -EPERM;
	}
	clear_dump_files(sfd);
	close(sfd);
	return unlinkat(cd->fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

struct dump_dir {
	uint64_t seq;
	char name[256];
};

/* Our dump directories in DIR, with their save order; up to cap. */
static size_t list_dumps(const struct crashdir *cd, struct dump_dir *v, size_t cap)
{
	int fd = dup(cd->fd);
	DIR *dh = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	size_t n = 0;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(dh);	/* the dup shares DIR's offset, left at the end by the last scan */
	while ((de = readdir(dh)) && n < cap) {
		size_t len = strlen(de->d_name);
		/* ., .., names save --dir never makes, and saves not finished
		 * (a leftover is cleared when its name comes up again) */
		if (de->d_name[0] == '.' || len >= sizeof v->name ||
		    (len > 8 && !strcmp(de->d_name + len - 8, ".partial")))
			continue;
		int sfd = open_own_dir(cd, de->d_name);
		if (sfd < 0)
			continue;
		if (read_marker(sfd, cd->uid, &v[n].seq) == 0)
			memcpy(v[n++].name, de->d_name, len + 1);
		close(sfd);
	}
	closedir(dh);
	return n;
}

static int newest_first(const void *a, const void *b)
{
	const struct dump_dir *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? 1 : -1;
	return -strcmp(x->name, y->name);
}

#define MAX_DUMPS 4096

/* The sequence number for the next save: one past the highest in DIR. */
static uint64_t next_seq(const struct crashdir *cd)
{
	struct dump_dir *v = malloc(MAX_DUMPS * sizeof *v);
	uint64_t top = 0;
	size_t n = v ? list_dumps(cd, v, MAX_DUMPS) : 0;

	for (size_t i = 0; i < n; i++)
		top = MAX(top, v[i].seq);
	free(v);
	return top < UINT64_MAX ? top + 1 : top;
}

/* Keeps the newest `max` of our dumps in DIR by save order, and always
 * `saved`, the one this run wrote, whatever the others claim. */
static void prune(const struct crashdir *cd, unsigned max, const char *saved)
{
	struct dump_dir *v = malloc(MAX_DUMPS * sizeof *v);
	size_t n = v ? list_dumps(cd, v, MAX_DUMPS) : 0;
	unsigned kept = 1;	/* saved */

	if (!v) {
		warn("out of memory: old dumps in %s not pruned", cd->path);
		return;
	}
	qsort(v, n, sizeof *v, newest_first);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(v[i].name, saved))
			continue;
		if (kept < max) {
			kept++;
			continue;
		}
		int r = remove_dump_dir(cd, v[i].name, 1);
		if (r == 0)
			msg("removed old dump %s/%s (--max %u)", cd->path, v[i].name, max);
		else if (r == -ENOTEMPTY || r == -EEXIST)
			warn("%s/%s holds other files; not removed", cd->path, v[i].name);
		else
			warn("%s/%s not removed: %s", cd->path, v[i].name, errstr(r));
	}
	free(v);
}
/* What goes into one output file. */
struct content {
	const void *buf;		/* either bytes ... */
	size_t len;
	struct dumpfile *d;		/* ... or the dump, saved per o */
	const struct savecore_opts *o;
	struct save_result *res;
	struct room *room;		/* --min-free, kept while writing; or NULL */
};

/* Writes .name.tmp in sfd (created new, never through a link), then
 * commit_tmp_at renames it to name: a name is only ever seen holding all
 * of its bytes. */
static int write_atomic(int sfd, const char *name, const struct content *c)
{
	char tmp[64];

	if (snprintf(tmp, sizeof tmp, ".%s.tmp", name) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	int fd = openat(sfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r;
	if (c->d) {
		struct save_opts so = c->o->so;
		so.room = c->room;
		r = c->o->elf ? save_elf(c->d, fd, &so, c->res) : save_kdump(c->d, fd, &so, c->res);
	} else
		r = room_write_at(c->room, fd, c->buf, c->len, 0);
	return commit_tmp_at(sfd, fd, tmp, name, r);
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

/* rename that fails with -EEXIST rather than replace anything. */
static int rename_noreplace(int dfd, const char *from, const char *to)
{
	struct stat st;

	if (syscall(SYS_renameat2, dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A filesystem without RENAME_NOREPLACE: look first. DIR is ours or
	 * sticky, so no one else can put a name there in between. */
	if (fstatat(dfd, to, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
	return renameat(dfd, from, dfd, to) < 0 ? -errno : 0;
}

/* name, or name.K for the K-th try: names that never parse as another's. */
static void try_name(char *out, size_t sz, const char *base, int k, const char *sfx)
{
	if (k)
		snprintf(out, sz, "%s.%d%s", base, k, sfx);
	else
		snprintf(out, sz, "%s%s", base, sfx);
}

#define NAME_TRIES 100

/* A fresh directory of ours to write into, base.partial (or base.K.partial
 * if something not ours holds that name). A leftover of ours from a save
 * that died is cleared first. 0 or -errno. */
static int make_partial(const struct crashdir *cd, const char *base, char *part, size_t sz)
{
	for (int k = 0; k < NAME_TRIES; k++) {
		try_name(part, sz, base, k, ".partial");
		if (mkdirat(cd->fd, part, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
		if (remove_dump_dir(cd, part, 0) == 0 && mkdirat(cd->fd, part, 0700) == 0)
			return 0;
	}
	return -EEXIST;
}

/* Renames part to base, or base.K if taken: never over anything. */
static int publish(const struct crashdir *cd, const char *part, const char *base, char *fin,
		   size_t sz)
{
	for (int k = 0; k < NAME_TRIES; k++) {
		try_name(fin, sz, base, k, "");
		int r = rename_noreplace(cd->fd, part, fin);
		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

/* 9999-12-31 23:59:59 UTC: later years have five digits. */
#define LAST_STAMP 253402300799ull

/* The dump's directory name: its crash time in UTC, or unknown-time-SEQ
 * when VMCOREINFO has none that reads as a date (gmtime fails on what
 * overflows struct tm, leaving it unset). */
static void dump_name(char *out, size_t sz, const struct dumpfile *d, uint64_t seq)
{
	struct vmcoreinfo vi;
	struct tm tm;

	vmcoreinfo_parse(&vi, d->vmcoreinfo);
	if (vi_has(&vi, VI_CRASHTIME) && vi_u(&vi, VI_CRASHTIME) <= LAST_STAMP) {
		time_t tt = (time_t)vi_u(&vi, VI_CRASHTIME);
		if (gmtime_r(&tt, &tm) && strftime(out, sz, "%Y-%m-%d-%H:%M:%S", &tm))
			return;
	}
	snprintf(out, sz, "unknown-time-%llu", (unsigned long long)seq);
}

/* Writes the dump's files into sfd, the marker last, each keeping room
 * free. 0 or -errno (-ENOSPC with room->full: stopped for --min-free). */
static int write_dump_files(int sfd, const char *src, const struct target *t,
			    struct dumpfile *d, const struct savecore_opts *o, uint64_t seq,
			    struct save_result *res, struct room *room)
{
	int r = write_atomic(sfd, "vmcore", &(struct content){ .d = d, .o = o, .res = res,
							      .room = room });

	if (!r && d->dmesg)
		r = write_atomic(sfd, "dmesg.txt", &(struct content){ .buf = d->dmesg,
				 .len = d->dmesg_len, .room = room });
	char *rep = NULL, mark[64];
	size_t rep_len = 0;
	FILE *mf = r ? NULL : open_memstream(&rep, &rep_len);
	if (mf) {
		dump_report(mf, src, t, d, 0);
		fprintf(mf, "%-12s %s (%s)%s\n", "saved as", "vmcore", o->elf ? "ELF" : "kdump-compressed",
			dumpfile_complete(d) ? "" : ", INCOMPLETE");
		fclose(mf);
		r = write_atomic(sfd, "info.txt", &(struct content){ .buf = rep, .len = rep_len,
								     .room = room });
	} else if (!r) {
		r = -ENOMEM;
	}
	free(rep);
	snprintf(mark, sizeof mark, MARKER_FMT, (unsigned long long)seq);
	if (!r)
		r = write_atomic(sfd, MARKER, &(struct content){ .buf = mark, .len = strlen(mark),
								 .room = room });
	if (!r && fsync(sfd) < 0)
		r = -errno;
	return r;
}

/* Saves into DIR/NAME: written as NAME.partial, renamed when complete.
 * fin gets NAME. On failure nothing is left. 0 or -errno. */
static int save_into(const struct crashdir *cd, const char *src, const struct target *t,
		     struct dumpfile *d, const struct savecore_opts *o, char *fin, size_t sz,
		     struct save_result *res)
{
	char base[64], part[96];
	uint64_t seq = next_seq(cd);

	dump_name(base, sizeof base, d, seq);
	int r = make_partial(cd, base, part, sizeof part);
	if (r < 0)
		return r;
	int published = 0, sfd = open_own_dir(cd, part);
	if (sfd < 0) {
		r = sfd;
		goto fail;
	}
	r = write_dump_files(sfd, src, t, d, o, seq, res, cd->room);
	if (!r)
		r = publish(cd, part, base, fin, sz);
	published = !r;
	if (!r && fsync(cd->fd) < 0)
		r = -errno;
	if (r < 0)
		clear_dump_files(sfd);
	close(sfd);
fail:
	if (r < 0)
		unlinkat(cd->fd, published ? fin : part, AT_REMOVEDIR);
	return r;
}

/* Opens (creating) DIR. It must not let anyone else swap or remove what is
 * saved there: owned by the saving user or root, and writable by no one
 * else unless sticky (then others cannot rename or remove our entries).
 * DIR itself may be a link, the administrator's choice; nothing below it
 * is reached through one. EXIT_OK or the exit code, said once. */
static int open_crashdir(struct crashdir *cd, const char *path)
{
	struct stat st;

	cd->path = path;
	cd->uid = geteuid();
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		err("cannot create %s: %s", path, strerror(errno));
		return EXIT_SYSTEM;
	}
	cd->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cd->fd < 0 || fstat(cd->fd, &st) < 0) {
		err("cannot open %s: %s", path, strerror(errno));
		return EXIT_SYSTEM;
	}
	if (st.st_uid != cd->uid && st.st_uid != 0) {
		err("%s belongs to uid %u, who could replace or remove what is saved there: "
		    "not saved, the device keeps its dump (use a directory of yours or root's)",
		    path, (unsigned)st.st_uid);
		return EXIT_SYSTEM;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		err("%s is writable by other users and not sticky, so they could swap what is "
		    "saved there: not saved, the device keeps its dump (chmod go-w or +t)", path);
		return EXIT_SYSTEM;
	}
	return EXIT_OK;
}

/* The output's size plus room for dmesg.txt, info.txt and the
 * filesystem's own blocks must fit, with --min-free left over. The size is
 * an upper bound for ELF and raw kdump, an estimate for zlib (its LZ4 size
 * in the dump, see save_kdump_need); that is why the writers keep
 * --min-free too. */
static int check_space(const struct crashdir *cd, const struct dumpfile *d,
		       const struct savecore_opts *o)
{
	int estimate = !o->elf && o->so.zlib;
	uint64_t out = o->elf ? save_elf_bound(d) : save_kdump_need(d, o->so.zlib);
	uint64_t need = out + d->dmesg_len + (4u << 20);
	struct statvfs vfs;

	if (need < out)
		need = UINT64_MAX;
	if (fstatvfs(cd->fd, &vfs) < 0) {
		err("cannot read the free space of %s: %s; not saved, the device keeps it", cd->path,
		    strerror(errno));
		return EXIT_SYSTEM;
	}
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (avail < need || avail - need < o->min_free) {
		err("%s has %.1f MB free; the dump needs %s %.1f MB as %s plus --min-free %.1f MB: "
		    "not saved, the device keeps it", cd->path, avail / 1e6,
		    estimate ? "about" : "up to", need / 1e6,
		    o->elf ? "ELF" : o->so.zlib ? "kdump" : "raw kdump", o->min_free / 1e6);
		return EXIT_SYSTEM;
	}
	return EXIT_OK;
}

/* Rewrites the claim with the dump marked saved: only if it is still the
 * one validated (nobody reformatted the device meanwhile), else -ESTALE. */
static int mark_saved(const struct target *t, uint64_t dump_id)
{
	struct kdi_super sb = t->sb;
	uint8_t area[KDI_SB_AREA];
	int fd = open(t->path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = read_full_at(fd, area, sizeof area, 0);
	struct kdi_super now;
	if (n != (ssize_t)sizeof area || super_decode(area, n, &now) < 0 ||
	    memcmp(now.uuid, sb.uuid, 16)) {
		close(fd);
		return -ESTALE;
	}
	sb.saved_dump_id = dump_id;
	sb.saved_time = (uint64_t)time(NULL);
	super_encode(&sb, area);
	int r = write_full_at(fd, area, sizeof area, 0);
	if (!r && fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* Writes the dump into DIR and marks the device; the exit code. */
static int save_dir(const char *src, struct target *t, struct dumpfile *d,
		    const struct savecore_opts *o)
{
	struct room room = { .keep = o->min_free };
	struct crashdir cd = { .fd = -1, .room = o->min_free ? &room : NULL };
	struct save_result res;
	char fin[128];
	int complete = dumpfile_complete(d);
	int code = open_crashdir(&cd, o->dir);

	if (code == EXIT_OK)
		code = check_space(&cd, d, o);
	if (code != EXIT_OK)
		goto out;
	int r = save_into(&cd, src, t, d, o, fin, sizeof fin, &res);
	if (r < 0 && room.full) {
		err("%s: free space fell below --min-free %.1f MB while saving; nothing saved, "
		    "the dump stays on the device", o->dir, o->min_free / 1e6);
		code = EXIT_SYSTEM;
		goto out;
	}
	if (r < 0) {
		err("saving to %s failed: %s; nothing left there, the device keeps its dump",
		    o->dir, errstr(r));
		code = EXIT_SYSTEM;
		goto out;
	}
	msg("saved %s/%s: %llu pages, %.1f MB%s", o->dir, fin, (unsigned long long)res.pages,
	    res.bytes / 1e6, complete ? "" : " (incomplete dump)");
	/* An incomplete dump stays unsaved unless asked: the next save (a
	 * device read again, a person looking) tries it again. */
	if (o->keep_device) {
		r = 0;
	} else if (!complete && !o->mark_incomplete) {
		warn("%s: not marked saved, the dump is incomplete: the next save tries it again "
		     "(--mark-incomplete marks it)", src);
		r = 0;
	} else {
		r = mark_saved(t, d->dump_id);
	}
	if (r == -ESTALE)
		err("%s changed while saving; not marking it (it will be saved again)", src);
	else if (r < 0)
		err("could not mark the dump on %s saved: %s (it will be saved again)", src, errstr(r));
	if (r < 0)
		code = EXIT_SYSTEM;
	if (o->max)
		prune(&cd, o->max, fin);
	if (code == EXIT_OK && (!complete || res.bad_pages))
		code = EXIT_INCOMPLETE;
out:
	if (cd.fd >= 0)
		close(cd.fd);
	return code;
}

int savecore(const char *src, const struct savecore_opts *o)
{
	struct target t;
	struct dumpfile d;
	int code = EXIT_OK;
	int r = open_dump(src, &t, &d, &code);

	if (code == EXIT_INCOMPLETE)
		dump_unreadable(&t, &d, r);
	if (r == -ENOENT && code == EXIT_OK) {
		target_close(&t);
		if (o->check)
			return 1;
		msg("%s holds no dump: nothing to save", src);
		return EXIT_OK;
	}
	int unsaved = (r == 0 || r == -EBADMSG) && !dump_saved(&t, &d);
	if (o->check) {
		/* Unreadable metadata is unsaved too: the save says why. */
		code = unsaved ? 0 : 1;
	} else if (r < 0) {
		/* Said above, or by open_dump: not again. */
	} else if (!unsaved && !o->force) {
		msg("%s: its dump was already saved; nothing to do (--force saves it again)", src);
	} else {
		char why[200];
		if (!dumpfile_complete(&d))
			warn("%s: the dump is incomplete (%s); saving the intact part, marked incomplete",
			     src, dump_incomplete_why(&d, why, sizeof why));
		code = save_dir(src, &t, &d, o);
	}
	if (r == 0 || r == -EBADMSG)
		dumpfile_free(&d);
	target_close(&t);
	return code;
}
