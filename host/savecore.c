/* save --dir: savecore at boot. Validate everything first, check free
 * space, write DIR/<crash time>/{vmcore,dmesg.txt,info.txt} under
 * temporary names, fsync, rename, and only then mark the device's dump
 * saved. A failure leaves nothing under a final name and the device as it
 * was.
 *
 * The steps, per dump (a device may come to hold several, oldest first):
 * decide (marked saved on the device? already in DIR?), save it into DIR,
 * mark it. DIR is locked for the whole run, so that two saves never see
 * each other's half-written directories, and each saved directory records
 * which dump it holds, so that no dump is ever saved twice into DIR. */
#include "savecore.h"
#include "progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "source.h"
#include "../config/target.h"
#include "../dump/chain.h"
#include "../dump/dumpfile.h"
#include "../dump/save.h"
#include "../kernel/vmcoreinfo.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/sigclean.h"
#include "../lib/util.h"

/* DIR, opened once: everything below it is reached through fds, never
 * by a path a link planted in DIR could redirect. */
struct crashdir {
	int fd;
	int lock_fd;			/* LOCKFILE, flocked: this run owns DIR */
	const char *path;
	uid_t uid;			/* who saves: only their dumps are pruned */
	struct room *room;		/* --min-free, kept while writing; or NULL */
};

/* Which dump a saved directory holds. dump_id is random per capture; the
 * claim's uuid and the capture's start time make a collision between two
 * devices (or a dump_id drawn twice) as good as impossible. */
struct dump_ident {
	char uuid[37];			/* the claim the dump was written under */
	uint64_t dump_id;
	uint64_t start_time;
};

/* Written last into each dump directory: it says kdumpinit wrote the
 * directory, when, in save order (the clock may be wrong: a dead RTC
 * crashes in 1970), and which dump it holds, as read then. Only
 * directories carrying a valid one are pruned, or taken to hold a dump.
 * Markers of versions before the second line have no identity. */
#define MARKER ".kdumpinit"
/* A sealed dump saved without its key (write_stream_copy). */
#define SEALED_NAME "sealed.kdi"
#define MARKER_SEQ "kdumpinit save %llu\n"
#define MARKER_DUMP "dump %s %016llx %llu %s %llu\n"

struct marker {
	uint64_t seq;
	int has_ident;			/* the second line: */
	struct dump_ident id;
	int complete;			/* the dump was complete when saved */
	uint64_t pages;			/* pages it held as read then */
};

/* flocked for the whole run, then removed (while still held, so that a
 * run waiting on the old file sees it go and takes the new one). */
#define LOCKFILE ".kdumpinit.lock"
/* How long a second save waits for the first. A save of a large dump
 * takes minutes; the one waiting would only find it saved, so it does
 * not hold up the boot for that long. */
#define LOCK_WAIT_S 10

/* Everything save --dir may leave in a dump directory; the marker last so
 * that a half-removed directory is still recognised. */
static const char *const dump_files[] = { ".vmcore.tmp", ".dmesg.txt.tmp", ".info.txt.tmp",
					  "." MARKER ".tmp", "vmcore", "dmesg.txt", "info.txt",
					  "." SEALED_NAME ".tmp", SEALED_NAME, MARKER };

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

/* The marker's text for m into buf: what write_dump_files writes, and
 * what a marker read must be exactly. */
static void format_marker(const struct marker *m, char *buf, size_t sz)
{
	int n = snprintf(buf, sz, MARKER_SEQ, (unsigned long long)m->seq);

	if (m->has_ident && n > 0 && (size_t)n < sz)
		snprintf(buf + n, sz - n, MARKER_DUMP, m->id.uuid,
			 (unsigned long long)m->id.dump_id, (unsigned long long)m->id.start_time,
			 m->complete ? "complete" : "incomplete", (unsigned long long)m->pages);
}

/* Parses a marker's text, strictly: it must read back as format_marker
 * writes it (no leading zeros, signs, spaces or trailing bytes), so a
 * marker is either kdumpinit's or nothing. 0 or -EINVAL. */
static int parse_marker(const char *buf, struct marker *m)
{
	unsigned long long seq, id, start, pages;
	char state[12], again[256];
	int n;

	memset(m, 0, sizeof *m);
	n = sscanf(buf, "kdumpinit save %llu dump %36s %llx %llu %11s %llu", &seq, m->id.uuid, &id,
		   &start, state, &pages);
	if (n < 1)
		return -EINVAL;
	m->seq = seq;
	if (n == 6) {
		if (strcmp(state, "complete") && strcmp(state, "incomplete"))
			return -EINVAL;
		m->has_ident = 1;
		m->id.dump_id = id;
		m->id.start_time = start;
		m->complete = !strcmp(state, "complete");
		m->pages = pages;
	}
	format_marker(m, again, sizeof again);
	return strcmp(buf, again) ? -EINVAL : 0;
}

/* The marker in sfd: a regular file of the saving uid holding exactly
 * what write_dump_files writes. 0 or -errno. */
static int read_marker(int sfd, uid_t uid, struct marker *m)
{
	char buf[256];
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
	return parse_marker(buf, m);
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
	struct marker m;
	int sfd = open_own_dir(cd, name);

	if (sfd < 0)
		return sfd;
	if (marked && read_marker(sfd, cd->uid, &m) < 0) {
		close(sfd);
		return -EPERM;
	}
	clear_dump_files(sfd);
	close(sfd);
	return unlinkat(cd->fd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* One of our dump directories in DIR, as list_dumps found it. */
struct dump_dir {
	struct marker m;
	int has_vmcore;			/* a regular file of ours: the dump is there */
	int keep;			/* saved by this run: never pruned */
	int redundant;			/* another copy of its dump is kept before it */
	int gone;			/* pruned */
	char name[256];
};

/* sfd's vmcore (or the sealed copy of one) is a regular file of uid's
 * with bytes in it. */
static int has_vmcore(int sfd, uid_t uid)
{
	static const char *const names[] = { "vmcore", SEALED_NAME };
	struct stat st;

	for (int i = 0; i < 2; i++)
		if (fstatat(sfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == uid && st.st_size > 0)
			return 1;
	return 0;
}

/* Our dump directories in DIR, with their markers; up to cap. */
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
		/* ., .., the lock, names save --dir never makes, and saves
		 * not finished (a leftover is cleared when its name comes up
		 * again) */
		if (de->d_name[0] == '.' || len >= sizeof v->name ||
		    (len > 8 && !strcmp(de->d_name + len - 8, ".partial")))
			continue;
		int sfd = open_own_dir(cd, de->d_name);
		if (sfd < 0)
			continue;
		memset(&v[n], 0, sizeof v[n]);
		if (read_marker(sfd, cd->uid, &v[n].m) == 0) {
			v[n].has_vmcore = has_vmcore(sfd, cd->uid);
			memcpy(v[n++].name, de->d_name, len + 1);
		}
		close(sfd);
	}
	closedir(dh);
	return n;
}

#define MAX_DUMPS 4096

/* The sequence number for the next save: one past the highest in DIR. */
static uint64_t next_seq(const struct crashdir *cd)
{
	struct dump_dir *v = malloc(MAX_DUMPS * sizeof *v);
	uint64_t top = 0;
	size_t n = v ? list_dumps(cd, v, MAX_DUMPS) : 0;

	for (size_t i = 0; i < n; i++)
		top = MAX(top, v[i].m.seq);
	free(v);
	return top < UINT64_MAX ? top + 1 : top;
}

static int same_dump(const struct marker *a, const struct marker *b)
{
	return a->has_ident && b->has_ident && !strcmp(a->id.uuid, b->id.uuid) &&
	       a->id.dump_id == b->id.dump_id && a->id.start_time == b->id.start_time;
}

/* Of two copies of one dump, the better: the one this run saved, one
 * whose vmcore is there, complete, more pages, saved later. <0 when a is. */
static int better_copy(const struct dump_dir *a, const struct dump_dir *b)
{
	if (a->keep != b->keep)
		return a->keep ? -1 : 1;
	if (a->has_vmcore != b->has_vmcore)
		return a->has_vmcore ? -1 : 1;
	if (a->m.complete != b->m.complete)
		return a->m.complete ? -1 : 1;
	if (a->m.pages != b->m.pages)
		return a->m.pages > b->m.pages ? -1 : 1;
	if (a->m.seq != b->m.seq)
		return a->m.seq > b->m.seq ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Copies of one dump next to each other, the best first; directories
 * whose marker names no dump each stand alone. */
static int by_dump(const void *pa, const void *pb)
{
	const struct dump_dir *a = pa, *b = pb;
	const struct dump_ident *x = &a->m.id, *y = &b->m.id;

	if (a->m.has_ident != b->m.has_ident)
		return a->m.has_ident ? -1 : 1;
	if (a->m.has_ident) {
		int c = strcmp(x->uuid, y->uuid);
		if (c)
			return c;
		if (x->dump_id != y->dump_id)
			return x->dump_id < y->dump_id ? -1 : 1;
		if (x->start_time != y->start_time)
			return x->start_time < y->start_time ? -1 : 1;
	}
	return better_copy(a, b);
}

static int oldest_first(const void *pa, const void *pb)
{
	const struct dump_dir *a = pa, *b = pb;

	if (a->m.seq != b->m.seq)
		return a->m.seq < b->m.seq ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The best copy of dump id in DIR: one of ours, complete (renamed from
 * .partial, marker written last) with its vmcore. 1 (in *copy), 0 none,
 * -ENOMEM. */
static int find_copy(const struct crashdir *cd, const struct dump_ident *id,
		     struct dump_dir *copy)
{
	struct dump_dir *v = malloc(MAX_DUMPS * sizeof *v);
	struct marker want = { .has_ident = 1, .id = *id };
	int found = 0;

	if (!v)
		return -ENOMEM;
	size_t n = list_dumps(cd, v, MAX_DUMPS);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].has_vmcore || !same_dump(&v[i].m, &want))
			continue;
		if (!found || better_copy(&v[i], copy) < 0)
			*copy = v[i];
		found = 1;
	}
	free(v);
	return found;
}

static void remove_old(const struct crashdir *cd, const struct dump_dir *e, unsigned max)
{
	int r = remove_dump_dir(cd, e->name, 1);

	if (r == 0)
		msg("removed old dump %s/%s (--max %u%s)", cd->path, e->name, max,
		    e->redundant ? "; a second copy of a dump kept in another directory" : "");
	else if (r == -ENOTEMPTY || r == -EEXIST)
		warn("%s/%s holds other files; not removed", cd->path, e->name);
	else
		warn("%s/%s not removed: %s", cd->path, e->name, errstr(r));
}

/* Keeps max of our dumps in DIR, removing the oldest by save order, and
 * never keep[], those this run saved, whatever the others claim. Second
 * copies of one dump go first: a crash's only copy is never removed to
 * keep two of another's. A removal that fails is not made up for by
 * removing a newer dump. */
static void prune(const struct crashdir *cd, unsigned max, char (*keep)[128], unsigned nkeep)
{
	struct dump_dir *v = malloc(MAX_DUMPS * sizeof *v);
	size_t n = v ? list_dumps(cd, v, MAX_DUMPS) : 0;

	if (!v) {
		warn("out of memory: old dumps in %s not pruned", cd->path);
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < nkeep; k++)
			v[i].keep |= !strcmp(v[i].name, keep[k]);
	qsort(v, n, sizeof *v, by_dump);
	for (size_t i = 1; i < n; i++)
		v[i].redundant = same_dump(&v[i - 1].m, &v[i].m) && !v[i].keep;
	qsort(v, n, sizeof *v, oldest_first);
	size_t left = n;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n && left > max; i++) {
			if (v[i].keep || v[i].gone || (pass == 0 && !v[i].redundant))
				continue;
			remove_old(cd, &v[i], max);
			v[i].gone = 1;
			left--;
		}
	free(v);
}

/* What goes into one output file. */
struct content {
	const void *buf;		/* either bytes ... */
	size_t len;
	struct dumpfile *d;		/* ... or the dump, saved per o */
	int sealed_copy;		/* ... or d's stream as it is (sealed.kdi) */
	const struct savecore_opts *o;
	struct save_result *res;
	struct room *room;		/* --min-free, kept while writing; or NULL */
};

/* A sealed dump saved without its key: its stream as it is on the
 * device, in a claimed file of its own (a fresh superblock, the stream at
 * data_offset), which `save --key`, `info` and `dmesg` read like a device.
 * Stream offsets (GAP) are from the dump's START, so they stay true.
 * Bytes the device cannot give are zeros: a reader sees a gap there, as
 * it did on the device. */
static int write_stream_copy(int fd, const struct dumpfile *d, struct room *room)
{
	uint8_t area[KDI_SB_AREA];
	struct kdi_super sb;
	uint64_t len = d->stream_end - d->base, size = KDI_DATA_OFFSET + len;
	size_t bsz = 1u << 20;

	if (size < KDI_MIN_DEVICE)
		size = KDI_MIN_DEVICE;
	super_init(&sb, size, "sealed copy");
	super_encode(&sb, area);
	int r = room_write_at(room, fd, area, sizeof area, 0);
	uint8_t *buf = r ? NULL : malloc(bsz);
	if (!r && !buf)
		r = -ENOMEM;
	for (uint64_t off = 0; !r && off < len; off += bsz) {
		size_t k = len - off < bsz ? (size_t)(len - off) : bsz;
		ssize_t n = read_full_at(d->fd, buf, k, d->base + off);
		if (n < (ssize_t)k)
			memset(buf + (n > 0 ? n : 0), 0, k - (size_t)(n > 0 ? n : 0));
		r = room_write_at(room, fd, buf, k, KDI_DATA_OFFSET + off);
	}
	free(buf);
	if (!r && ftruncate(fd, (off_t)size) < 0)
		r = -errno;
	return r;
}

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
	if (c->sealed_copy) {
		r = write_stream_copy(fd, c->d, c->room);
	} else if (c->d) {
		struct save_opts so = c->o->so;
		struct save_progress sp;
		so.room = c->room;
		if (!c->o->quiet) {
			save_progress_start(&sp, c->d->start.page_size);
			so.progress = save_progress_tick;
			so.progress_arg = &sp;
		}
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
 * if something not ours holds that name). A leftover of ours is from a
 * save that died: the lock says no other save is writing it. It is
 * cleared first. 0 or -errno. */
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
	/* Sealed, no key: the capture's start, in the clear, is as close. */
	int have = d->locked ? d->start.start_time != 0 : vi_has(&vi, VI_CRASHTIME);
	uint64_t stamp = d->locked ? d->start.start_time : vi_u(&vi, VI_CRASHTIME);
	if (have && stamp <= LAST_STAMP) {
		time_t tt = (time_t)stamp;
		if (gmtime_r(&tt, &tm) && strftime(out, sz, "%Y-%m-%d-%H:%M:%S", &tm))
			return;
	}
	snprintf(out, sz, "unknown-time-%llu", (unsigned long long)seq);
}

/* d's identity, as its saved directory records it. */
static void dump_ident(const struct dumpfile *d, struct dump_ident *id)
{
	uuid_format(d->start.sb_uuid, id->uuid);
	id->dump_id = d->dump_id;
	id->start_time = d->start.start_time;
}

/* Writes the dump's files into sfd, the marker (m) last, each keeping room
 * free. 0 or -errno (-ENOSPC with room->full: stopped for --min-free). */
static int write_dump_files(int sfd, const char *src, const struct target *t,
			    struct dumpfile *d, const struct savecore_opts *o,
			    const struct marker *m, struct save_result *res, struct room *room)
{
	int r;
	if (d->locked) {
		r = write_atomic(sfd, SEALED_NAME, &(struct content){ .d = d, .sealed_copy = 1,
								     .room = room });
		memset(res, 0, sizeof *res);
		res->bytes = d->stream_end - d->base;
	} else {
		r = write_atomic(sfd, "vmcore", &(struct content){ .d = d, .o = o, .res = res,
								  .room = room });
	}

	if (!r && d->dmesg)
		r = write_atomic(sfd, "dmesg.txt", &(struct content){ .buf = d->dmesg,
				 .len = d->dmesg_len, .room = room });
	char *rep = NULL, mark[256];
	size_t rep_len = 0;
	FILE *mf = r ? NULL : open_memstream(&rep, &rep_len);
	if (mf) {
		dump_report(mf, src, t, d, 0);
		if (d->locked)
			fprintf(mf, "%-12s %s (still sealed: kdumpinit save --key SECRET %s)%s\n",
				"saved as", SEALED_NAME, SEALED_NAME,
				dumpfile_complete(d) ? "" : ", INCOMPLETE");
		else
			fprintf(mf, "%-12s %s (%s)%s\n", "saved as", "vmcore",
				o->elf ? "ELF" : "kdump-compressed",
				dumpfile_complete(d) ? "" : ", INCOMPLETE");
		fprintf(mf, "%-12s %016llx (claim %s, captured at %llu)\n", "dump id",
			(unsigned long long)m->id.dump_id, m->id.uuid,
			(unsigned long long)m->id.start_time);
		fclose(mf);
		r = write_atomic(sfd, "info.txt", &(struct content){ .buf = rep, .len = rep_len,
								     .room = room });
	} else if (!r) {
		r = -ENOMEM;
	}
	free(rep);
	format_marker(m, mark, sizeof mark);
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
	struct marker m = { .seq = next_seq(cd), .has_ident = 1,
			    .complete = dumpfile_complete(d), .pages = d->pages_stored };

	dump_ident(d, &m.id);
	dump_name(base, sizeof base, d, m.seq);
	int r = make_partial(cd, base, part, sizeof part);
	if (r < 0)
		return r;
	/* Interrupted, the partial directory goes, files first; published,
	 * it stays (sigclean.h). */
	struct sigclean dir = { 1, { { cd->fd, part, AT_REMOVEDIR } } }, files = { 0 };
	sigset_t held;
	sigclean_arm(&dir);
	int published = 0, sfd = open_own_dir(cd, part);
	if (sfd < 0) {
		r = sfd;
		goto fail;
	}
	_Static_assert(ARRAY_SIZE(dump_files) < SIGCLEAN_MAX, "sigclean list");
	for (size_t i = 0; i < ARRAY_SIZE(dump_files); i++) {
		files.e[i].dfd = sfd;
		files.e[i].name = dump_files[i];
	}
	files.n = ARRAY_SIZE(dump_files);
	files.e[files.n++] = dir.e[0];
	sigclean_arm(&files);
	r = write_dump_files(sfd, src, t, d, o, &m, res, cd->room);
	sigclean_hold(&held);
	if (!r)
		r = publish(cd, part, base, fin, sz);
	published = !r;
	if (published)
		sigclean_disarm();
	sigclean_release(&held);
	if (!r && fsync(cd->fd) < 0)
		r = -errno;
	if (r < 0)
		clear_dump_files(sfd);
	close(sfd);
fail:
	if (r < 0)
		unlinkat(cd->fd, published ? fin : part, AT_REMOVEDIR);
	sigclean_disarm();
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

/* Opens DIR's lock file, creating it: never through a link, and only a
 * regular file of ours (in a sticky DIR another user could have put one
 * there: its owner could hold it for ever). The fd or -errno (-EPERM:
 * not ours, *owner says whose). */
static int open_lockfile(const struct crashdir *cd, uid_t *owner)
{
	struct stat st;
	int fd = openat(cd->fd, LOCKFILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			0600);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != cd->uid) {
		*owner = st.st_uid;
		close(fd);
		return -EPERM;
	}
	/* Nobody else needs to open it: one who can may hold it. */
	if (st.st_mode & 077)
		fchmod(fd, 0600);
	return fd;
}

/* fd is still the file named LOCKFILE in DIR (the run before us removes
 * it as it ends: a lock on the removed file locks nothing). */
static int lock_current(const struct crashdir *cd, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstatat(cd->fd, LOCKFILE, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Takes DIR's lock: one save --dir at a time, or each would clear the
 * other's NAME.partial as a leftover, and both save the same dump. Waits
 * up to LOCK_WAIT_S for another run. 0, -EWOULDBLOCK (still held), or
 * -errno (-EPERM: the lock file is not ours, *owner). */
static int lock_crashdir(struct crashdir *cd, uid_t *owner)
{
	struct timespec t0, nap = { 0, 100 * 1000 * 1000 };
	int said = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int fd = open_lockfile(cd, owner);
		if (fd < 0)
			return fd;
		int r = flock(fd, LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
		if (r == 0 && lock_current(cd, fd)) {
			cd->lock_fd = fd;
			return 0;
		}
		close(fd);
		if (r < 0 && r != -EWOULDBLOCK)
			return r;
		if (seconds_since(&t0) >= LOCK_WAIT_S)
			return -EWOULDBLOCK;
		/* r == 0: locked, but the run that held it removed the file
		 * meanwhile; the next open makes or finds the new one. */
		if (r == 0)
			continue;
		if (!said++)
			msg("another save into %s is running: waiting up to %d s for it to finish",
			    cd->path, LOCK_WAIT_S);
		nanosleep(&nap, NULL);
	}
}

/* Removes the lock file while still holding it, then lets go. */
static void unlock_crashdir(struct crashdir *cd)
{
	if (cd->lock_fd < 0)
		return;
	if (lock_current(cd, cd->lock_fd))
		unlinkat(cd->fd, LOCKFILE, 0);
	close(cd->lock_fd);
	cd->lock_fd = -1;
}

/* The output's size plus room for dmesg.txt, info.txt and the
 * filesystem's own blocks must fit, with --min-free left over. The size is
 * an upper bound for ELF and raw kdump, an estimate for zlib (its LZ4 size
 * in the dump, see save_kdump_need); that is why the writers keep
 * --min-free too. */
static int check_space(const struct crashdir *cd, const struct dumpfile *d,
		       const struct savecore_opts *o)
{
	int estimate = !o->elf && o->so.zlib && !d->locked;
	uint64_t out = d->locked ? KDI_DATA_OFFSET + (d->stream_end - d->base) :
		       o->elf ? save_elf_bound(d) : save_kdump_need(d, o->so.zlib);
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
		err("%s has %.1f MiB free; the dump needs %s %.1f MiB as %s plus --min-free %.1f MiB: "
		    "not saved, the device keeps it", cd->path, avail / 1048576.0,
		    estimate ? "about" : "up to", need / 1048576.0,
		    o->elf ? "ELF" : o->so.zlib ? "kdump" : "raw kdump", o->min_free / 1048576.0);
		return EXIT_SYSTEM;
	}
	return EXIT_OK;
}

/* Where dump_id is among t's dumps, oldest first; -1 if not there. */
static int chain_pos(const struct target *t, uint64_t dump_id)
{
	struct chain c;

	if (chain_walk(t->fd, t->base, t->limit, &c) < 0)
		return -1;
	for (unsigned i = 0; i < c.n; i++)
		if (c.d[i].dump_id == dump_id)
			return (int)i;
	return -1;
}

/* The claim, read now, already counts dump_id as saved: it names it, or a
 * dump after it (dumps are saved oldest first, the claim names the newest
 * saved). Another run may have marked it since this one loaded the
 * device: it waited on DIR's lock meanwhile. */
static int marked_since(const struct target *t, const struct kdi_super *now, uint64_t dump_id)
{
	if (!now->saved_dump_id)
		return 0;
	if (now->saved_dump_id == dump_id)
		return 1;
	int mine = chain_pos(t, dump_id), theirs = chain_pos(t, now->saved_dump_id);
	return mine >= 0 && theirs > mine;
}

/* Rewrites the claim with the dump marked saved: only if it is still the
 * one validated (nobody reformatted the device meanwhile), else -ESTALE.
 * Never moves the mark back to an older dump. 0 written, 1 already
 * marked, or -errno. */
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
	if (marked_since(t, &now, dump_id)) {
		close(fd);
		return 1;
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

/* mark_saved, said; EXIT_OK or EXIT_SYSTEM. */
static int mark_device(const char *src, const struct target *t, const struct dumpfile *d)
{
	int r = mark_saved(t, d->dump_id);

	if (r == 0)
		msg("%s: marked its dump saved", src);
	else if (r == 1)
		msg("%s: its dump was marked saved meanwhile (another save)", src);
	else if (r == -ESTALE)
		err("%s changed while saving; not marking it (it will be saved again)", src);
	else if (r < 0)
		err("could not mark the dump on %s saved: %s (it will be saved again)", src, errstr(r));
	return r < 0 ? EXIT_SYSTEM : EXIT_OK;
}

/* One save --dir run: DIR, opened and locked when a dump first needs it,
 * and what the run saved there, which pruning keeps. */
struct savecore_run {
	const struct savecore_opts *o;
	struct crashdir cd;
	struct room room;
	int dir_code;			/* -1 not opened yet, else open_run_dir's code */
	char saved[KDI_CHAIN_MAX][128];
	unsigned nsaved;
	unsigned held;			/* a dump this run left unmarked (its position), or 0 */
};

static void run_init(struct savecore_run *run, const struct savecore_opts *o)
{
	memset(run, 0, sizeof *run);
	run->o = o;
	run->room.keep = o->min_free;
	run->cd.fd = run->cd.lock_fd = -1;
	run->cd.room = o->min_free ? &run->room : NULL;
	run->dir_code = -1;
}

/* Removes, saying so, the NAME.partial directories a save --dir left
 * when it died where it could not clean up (SIGKILL, a crash, power; a
 * signal it can catch removes its own): the lock says no save is writing
 * one. Only ours (open_own_dir), only the files save --dir writes. */
static void remove_leftovers(const struct crashdir *cd)
{
	int fd = dup(cd->fd);
	DIR *dh = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dh);	/* the dup shares DIR's offset */
	while ((de = readdir(dh))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= 8 || strcmp(de->d_name + len - 8, ".partial"))
			continue;
		int r = remove_dump_dir(cd, de->d_name, 0);
		if (r == 0)
			msg("removed %s/%s, left by a save that did not finish", cd->path, de->d_name);
		else if (r == -ENOTEMPTY || r == -EEXIST)
			warn("%s/%s, left by a save that did not finish, holds other files: not removed",
			     cd->path, de->d_name);
	}
	closedir(dh);
}

/* DIR opened and locked, once per run. EXIT_OK or the exit code, said. */
static int open_run_dir(struct savecore_run *run)
{
	struct crashdir *cd = &run->cd;
	uid_t owner = 0;

	if (run->dir_code >= 0)
		return run->dir_code;
	run->dir_code = open_crashdir(cd, run->o->dir);
	if (run->dir_code != EXIT_OK)
		return run->dir_code;
	int r = lock_crashdir(cd, &owner);
	if (r == -EWOULDBLOCK)
		err("another save into %s is still running after %d s (it holds %s/%s): not saved "
		    "by this run, the device keeps its dump", cd->path, LOCK_WAIT_S, cd->path, LOCKFILE);
	else if (r == -EPERM)
		err("%s/%s is not this user's (uid %u owns it, or it is no regular file): "
		    "cannot lock %s, not saved, the device keeps its dump (remove it)", cd->path,
		    LOCKFILE, (unsigned)owner, cd->path);
	else if (r < 0)
		err("cannot lock %s (%s/%s): %s; not saved, the device keeps its dump", cd->path,
		    cd->path, LOCKFILE, errstr(r));
	if (r < 0)
		run->dir_code = EXIT_SYSTEM;
	else
		remove_leftovers(cd);
	return run->dir_code;
}

/* Prunes (--max) and lets DIR go. */
static void run_finish(struct savecore_run *run)
{
	if (run->dir_code == EXIT_OK && run->o->max && run->nsaved)
		prune(&run->cd, run->o->max, run->saved, run->nsaved);
	unlock_crashdir(&run->cd);
	if (run->cd.fd >= 0)
		close(run->cd.fd);
	run->cd.fd = -1;
}

/* Marks d saved, unless an older dump of the device was left unmarked by
 * this run: the claim names the newest dump saved and so covers every one
 * before it, and marking d would mark that one too. d then waits in DIR;
 * the next save finds it there and marks it after the older one. */
static int mark_in_order(struct savecore_run *run, const char *src, const struct target *t,
			 const struct dumpfile *d)
{
	if (run->held && d->position > run->held) {
		msg("%s: dump %u not marked saved yet: dump %u before it is not, and a mark covers "
		    "every dump before it (the next save marks both)", src, d->position, run->held);
		return EXIT_OK;
	}
	int code = mark_device(src, t, d);
	if (code != EXIT_OK && !run->held)
		run->held = d->position ? d->position : 1;
	return code;
}

/* This read of d holds more than the copy in DIR: the copy was incomplete
 * and a device read again (read errors that went away) can give more.
 * A dump cut short reads the same every time, and is not saved again. */
static int reads_better(const struct dumpfile *d, const struct marker *copy)
{
	return !copy->complete && (dumpfile_complete(d) || d->pages_stored > copy->pages);
}

/* d is in DIR already (copy): not saved again, and marked saved on the
 * device if it is not yet; an incomplete one too, even without
 * --mark-incomplete: it was read again and reads no better, and a dump
 * left unsaved keeps the device's room. */
static int keep_copy(struct savecore_run *run, const char *src, const struct target *t,
		     const struct dumpfile *d, const struct dump_dir *copy)
{
	const struct savecore_opts *o = run->o;
	int mark = !o->keep_device && !dump_saved(t, d);

	msg("%s: its dump is already saved in %s/%s%s: not saved again", src, o->dir, copy->name,
	    copy->m.complete ? "" : " (incomplete, and this read holds no more)");
	return mark ? mark_in_order(run, src, t, d) : EXIT_OK;
}

/* Checks the space, saves d into DIR and marks the device; the exit code.
 * reread: d is in DIR already, incomplete, and this second read holds
 * more; it is the last, so d is marked saved however it reads. */
static int save_dump(struct savecore_run *run, const char *src, const struct target *t,
		     struct dumpfile *d, int reread)
{
	const struct savecore_opts *o = run->o;
	struct save_result res;
	char fin[128];
	int complete = dumpfile_complete(d);
	int code = check_space(&run->cd, d, o);

	if (code != EXIT_OK)
		return code;
	int r = save_into(&run->cd, src, t, d, o, fin, sizeof fin, &res);
	if (r < 0 && run->room.full) {
		err("%s: free space fell below --min-free %.1f MiB while saving; nothing saved, "
		    "the dump stays on the device", o->dir, o->min_free / 1048576.0);
		return EXIT_SYSTEM;
	}
	if (r < 0) {
		err("saving to %s failed: %s; nothing left there, the device keeps its dump",
		    o->dir, errstr(r));
		return EXIT_SYSTEM;
	}
	if (run->nsaved < ARRAY_SIZE(run->saved))
		memcpy(run->saved[run->nsaved++], fin, sizeof fin);
	msg("saved %s/%s: %llu pages, %.1f MiB%s", o->dir, fin, (unsigned long long)res.pages,
	    res.bytes / 1048576.0, complete ? "" : " (incomplete dump)");
	if (o->newest) {
		struct test_saved *s = o->newest;
		snprintf(s->path, sizeof s->path, "%s/%s", o->dir, fin);
		s->crash_time = d->start.start_time;
		if (!d->locked) {
			struct vmcoreinfo vi;
			vmcoreinfo_parse(&vi, d->vmcoreinfo);
			if (vi_has(&vi, VI_CRASHTIME))
				s->crash_time = vi_u(&vi, VI_CRASHTIME);
		}
		s->end_time = d->have_end ? d->end.end_time : 0;
	}
	/* An incomplete dump stays unsaved unless asked: the next save reads
	 * the device once more (read errors may have gone away), then marks
	 * it, saved again (reread) or not (keep_copy). */
	if (o->keep_device)
		code = EXIT_OK;
	else if (!complete && !o->mark_incomplete && !reread) {
		warn("%s: not marked saved, the dump is incomplete: the next save reads it once more, "
		     "then marks it (--mark-incomplete marks it now)", src);
		if (!run->held)
			run->held = d->position ? d->position : 1;
	} else
		code = mark_in_order(run, src, t, d);
	if (code == EXIT_OK && (!complete || res.bad_pages))
		code = EXIT_INCOMPLETE;
	return code;
}

/* One dump of the device, loaded into d: decides (saved on the device?
 * already in DIR?), saves it into DIR, marks it. The exit code for it.
 * A device holding several dumps is saved by calling this for each,
 * oldest first, in one run. */
static int savecore_one(struct savecore_run *run, const char *src, const struct target *t,
			struct dumpfile *d)
{
	const struct savecore_opts *o = run->o;
	struct dump_ident id;
	struct dump_dir copy;
	char why[200];

	if (dump_saved(t, d) && !o->force) {
		msg("%s: its dump was already saved; nothing to do (--force saves it again into a "
		    "DIR that does not hold it)", src);
		return EXIT_OK;
	}
	/* A key that is not the dump's is a mistake to say, not a reason
	 * to move the dump off the device sealed. */
	if (d->locked && d->wrong_key)
		return dump_locked(src, d, o->key);
	if (!d->locked)
		dump_locked(src, d, o->key);	/* a key for a dump in the clear: said */
	if (d->locked)
		msg("%s: the dump is sealed and no key was given: saving it still sealed, as %s",
		    src, SEALED_NAME);
	int code = open_run_dir(run);
	if (code != EXIT_OK)
		return code;
	dump_ident(d, &id);
	int found = find_copy(&run->cd, &id, &copy);
	if (found < 0)
		warn("out of memory looking for this dump in %s: saving it (it may be there already)",
		     o->dir);
	if (found > 0 && !reads_better(d, &copy.m))
		return keep_copy(run, src, t, d, &copy);
	if (found > 0)
		warn("%s: %s/%s holds this dump incomplete (%llu pages); this read holds more "
		     "(%llu pages%s): saving it again, then marking it saved", src, o->dir, copy.name,
		     (unsigned long long)copy.m.pages, (unsigned long long)d->pages_stored,
		     dumpfile_complete(d) ? ", complete" : "");
	else if (!dumpfile_complete(d))
		warn("%s: the dump is incomplete (%s); saving the intact part, marked incomplete",
		     src, dump_incomplete_why(d, why, sizeof why));
	return save_dump(run, src, t, d, found > 0);
}

/* Keeps the worse of two exit codes: a failure over an incomplete dump
 * over success. */
static int worse(int a, int b)
{
	if (a == EXIT_OK || (a == EXIT_INCOMPLETE && b != EXIT_OK))
		return b;
	return a;
}

/* Saves d (the dump open_dump chose: the oldest not yet saved) and each
 * dump after it on the device, oldest first, in one run, reloading t and d
 * for each; the worst exit code. A dump that fails to save (DIR full, or
 * unwritable) ends the run: the ones after it wait on the device, said. */
static int save_each(struct savecore_run *run, const char *src, struct target *t,
		     struct dumpfile *d, int *loaded)
{
	unsigned n = d->ndumps;
	int code = savecore_one(run, src, t, d);

	for (unsigned k = d->position + 1; d->position && k <= n; k++) {
		if (code != EXIT_OK && code != EXIT_INCOMPLETE) {
			err("%s: dump%s %u%s not saved by this run; the device keeps %s", src,
			    k < n ? "s" : "", k, k < n ? " and after" : "", k < n ? "them" : "it");
			break;
		}
		dumpfile_free(d);
		target_close(t);
		int c = EXIT_OK, r = open_dump_nth(src, k, run->o->key, DUMPFILE_DEFER_PAGES, t, d, &c);
		*loaded = r == 0 || r == -EBADMSG;
		if (c == EXIT_INCOMPLETE)
			dump_unreadable(t, d, r);
		if (r == 0)
			c = savecore_one(run, src, t, d);
		if (r != 0 && !run->held)
			run->held = k;	/* never marked: nor is any after it */
		code = worse(code, c);
		if (!*loaded)
			break;
	}
	return code;
}

int savecore(const char *src, const struct savecore_opts *o)
{
	struct target t;
	struct dumpfile d;
	int code = EXIT_OK;
	int r = open_dump(src, o->key, DUMPFILE_DEFER_PAGES, &t, &d, &code);

	if (code == EXIT_INCOMPLETE)
		dump_unreadable(&t, &d, r);
	if (r == -ENOENT && code == EXIT_OK) {
		target_close(&t);
		if (o->check)
			return 1;
		msg("%s holds no dump: nothing to save", src);
		return EXIT_OK;
	}
	if (o->check) {
		/* Three answers: a dump to save (a damaged one too: its
		 * metadata unreadable, its START lost), none (nothing, or
		 * saved), or the source cannot be read at all (no device, not
		 * claimed, an I/O error), which the boot service must not
		 * take for "none". */
		if (r == 0 || r == -EBADMSG)
			code = dump_saved(&t, &d) ? 1 : 0;
		else
			code = SAVE_CHECK_UNREADABLE;
	} else if (r == 0) {
		struct savecore_run run;
		int loaded = 1;
		run_init(&run, o);
		code = save_each(&run, src, &t, &d, &loaded);
		run_finish(&run);
		if (!loaded)
			r = -ENOENT;	/* nothing left to free */
	}
	/* else said above, or by open_dump: not again. */
	if (r == 0 || r == -EBADMSG)
		dumpfile_free(&d);
	target_close(&t);
	return code;
}
