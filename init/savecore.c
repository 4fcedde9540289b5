/* save --dir: savecore at boot. Validate everything first, check free
 * space, write DIR/<crash time>/{vmcore,dmesg.txt,info.txt} under
 * temporary names, fsync, rename, and only then mark the device's dump
 * saved. A failure leaves nothing under a final name and the device as it
 * was. */
#include "kdumpinit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "../config/target.h"
#include "../dump/dumpfile.h"
#include "../dump/save.h"
#include "../dump/vmcore.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

/* dir + sep + name into out; -ENAMETOOLONG rather than a cut path. */
static int join(char *out, size_t sz, const char *dir, const char *sep, const char *name)
{
	size_t a = strlen(dir), b = strlen(sep), c = strlen(name);

	if (a + b + c >= sz)
		return -ENAMETOOLONG;
	memcpy(out, dir, a);
	memcpy(out + a, sep, b);
	memcpy(out + a + b, name, c + 1);
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* What goes into one output file. */
struct content {
	const void *buf;		/* either bytes ... */
	size_t len;
	struct dumpfile *d;		/* ... or the dump, saved per o */
	const struct savecore_opts *o;
	struct save_result *res;
};

/* Writes dir/.name.tmp, fsyncs, renames it to dir/name: a name is only
 * ever seen holding all of its bytes. */
static int write_atomic(const char *dir, const char *name, const struct content *c)
{
	char tmp[4200], fin[4200], dot[300];
	if (join(dot, sizeof dot, ".", name, ".tmp") || join(tmp, sizeof tmp, dir, "/", dot) ||
	    join(fin, sizeof fin, dir, "/", name))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r;
	if (c->d)
		r = c->o->elf ? save_elf(c->d, fd, c->res) : save_kdump(c->d, fd, &c->o->so, c->res);
	else
		r = write_full(fd, c->buf, c->len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, fin) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

static void remove_partial(const char *dir)
{
	static const char *const names[] = { ".vmcore.tmp", ".dmesg.txt.tmp", ".info.txt.tmp",
					      "vmcore", "dmesg.txt", "info.txt" };
	char p[4200];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (join(p, sizeof p, dir, "/", names[i]) == 0)
			unlink(p);
	}
	rmdir(dir);
}

/* Dump directories are named by their crash time: sorting names sorts
 * dumps. Only names of exactly that shape are ever removed. */
static int is_dump_dir_name(const char *n)
{
	static const char shape[] = "dddd-dd-dd-dd:dd:dd";
	size_t i;

	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? (n[i] < '0' || n[i] > '9') : n[i] != shape[i])
			return 0;
	}
	return n[i] == 0 || (n[i] == '.' && n[i + 1] >= '1' && n[i + 1] <= '9');
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps the newest `max` dump directories in dir. */
static void prune(const char *dir, unsigned max)
{
	DIR *dh = opendir(dir);
	char *names[4096];
	size_t n = 0;
	struct dirent *de;

	if (!dh)
		return;
	while ((de = readdir(dh)) && n < ARRAY_SIZE(names))
		if (is_dump_dir_name(de->d_name))
			names[n++] = strdup(de->d_name);
	closedir(dh);
	qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i + max < n; i++) {
		char p[4200];
		if (join(p, sizeof p, dir, "/", names[i]))
			continue;
		remove_partial(p);
		if (access(p, F_OK) == 0)
			warn("%s holds other files; not removed", p);
		else
			msg("removed old dump %s (--max %u)", p, max);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

static int mark_saved(const char *src, const struct target *t, uint64_t dump_id)
{
	struct kdi_super sb = t->sb;
	uint8_t area[KDI_SB_AREA];
	int fd = open(t->path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	/* Re-read the claim: write back only if it is still the one we
	 * validated (nobody reformatted the device meanwhile). */
	ssize_t n = read_full_at(fd, area, sizeof area, 0);
	struct kdi_super now;
	if (n != (ssize_t)sizeof area || super_decode(area, n, &now) < 0 ||
	    memcmp(now.uuid, sb.uuid, 16)) {
		close(fd);
		err("%s changed while saving; not marking it", src);
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

int savecore(const char *src, const struct savecore_opts *o)
{
	struct target t;
	struct dumpfile d;
	int code = EXIT_OK;
	int r = open_dump(src, &t, &d, &code);

	if (r == -ENOENT && code == EXIT_OK) {
		target_close(&t);
		if (o->check)
			return 1;
		msg("%s holds no dump: nothing to save", src);
		return EXIT_OK;
	}
	if (r < 0 && code != EXIT_INCOMPLETE) {
		target_close(&t);
		return o->check ? 1 : code;
	}
	int unsaved = !dump_saved(&t, &d);
	if (o->check) {
		if (r == 0 || r == -EBADMSG)
			dumpfile_free(&d);
		target_close(&t);
		return unsaved ? 0 : 1;
	}
	if (r < 0) {
		err("%s: the dump's metadata is unreadable: nothing can be saved (%s)", src, d.why);
		target_close(&t);
		return EXIT_INCOMPLETE;
	}
	if (!unsaved && !o->force) {
		msg("%s: its dump was already saved; nothing to do (--force saves it again)", src);
		dumpfile_free(&d);
		target_close(&t);
		return EXIT_OK;
	}
	int complete = dumpfile_complete(&d);
	if (!complete)
		warn("%s: the dump is incomplete (%s); saving the intact part, marked incomplete",
		     src, d.why[0] ? d.why : "marked so at capture");

	/* Space: the output is at most the stored pages raw plus headers;
	 * ask for the LZ4 size (zlib does better) plus the reserve. */
	uint64_t need = d.bytes_stored + (d.pages_stored + 1) * 24 + (4u << 20);
	struct statvfs vfs;
	if (mkdir(o->dir, 0700) < 0 && errno != EEXIST) {
		err("cannot create %s: %s", o->dir, strerror(errno));
		code = EXIT_SYSTEM;
		goto out;
	}
	if (statvfs(o->dir, &vfs) == 0) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (avail < need + o->min_free) {
			err("%s has %.1f MB free; the dump needs about %.1f MB plus --min-free %.1f MB: "
			    "not saved, the device keeps it", o->dir, avail / 1e6, need / 1e6,
			    o->min_free / 1e6);
			code = EXIT_SYSTEM;
			goto out;
		}
	}

	char v[64], stamp[64], part[4200], fin[4200];
	uint64_t ct = 0;
	if (vmcoreinfo_get(d.vmcoreinfo, "CRASHTIME", v, sizeof v) == 0)
		parse_u64(v, 10, &ct);
	if (!ct)
		ct = d.start.start_time;
	time_t tt = (time_t)ct;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%d-%H:%M:%S", &tm);
	if (strlen(o->dir) > 4000) {
		err("%s: path too long", o->dir);
		code = EXIT_USAGE;
		goto out;
	}
	join(fin, sizeof fin, o->dir, "/", stamp);
	for (int k = 1; access(fin, F_OK) == 0 && k < 10; k++) {
		char sfx[80];
		snprintf(sfx, sizeof sfx, "%s.%d", stamp, k);
		join(fin, sizeof fin, o->dir, "/", sfx);
	}
	if (access(fin, F_OK) == 0) {
		err("%s exists (and 9 more like it); not overwriting", fin);
		code = EXIT_SYSTEM;
		goto out;
	}
	join(part, sizeof part, fin, "", ".partial");
	remove_partial(part);	/* leftovers of an earlier try that died */
	if (mkdir(part, 0700) < 0) {
		err("cannot create %s: %s", part, strerror(errno));
		code = EXIT_SYSTEM;
		goto out;
	}

	struct save_result res;
	r = write_atomic(part, "vmcore", &(struct content){ .d = &d, .o = o, .res = &res });
	if (!r && d.dmesg)
		r = write_atomic(part, "dmesg.txt", &(struct content){ .buf = d.dmesg, .len = d.dmesg_len });
	char *rep = NULL;
	size_t rep_len = 0;
	FILE *mf = r ? NULL : open_memstream(&rep, &rep_len);
	if (mf) {
		dump_report(mf, src, &t, &d, 0);
		fprintf(mf, "%-12s %s (%s)%s\n", "saved as", "vmcore", o->elf ? "ELF" : "kdump-compressed",
			complete ? "" : ", INCOMPLETE");
		fclose(mf);
		r = write_atomic(part, "info.txt", &(struct content){ .buf = rep, .len = rep_len });
	} else if (!r) {
		r = -ENOMEM;
	}
	free(rep);
	if (!r)
		r = fsync_dir(part);
	if (!r && rename(part, fin) < 0)
		r = -errno;
	if (!r)
		r = fsync_dir(o->dir);
	if (r < 0) {
		remove_partial(part);
		err("saving to %s failed: %s; nothing left there, the device keeps its dump",
		    o->dir, errstr(r));
		code = EXIT_SYSTEM;
		goto out;
	}
	msg("saved %s: %llu pages, %.1f MB%s", fin, (unsigned long long)res.pages, res.bytes / 1e6,
	    complete ? "" : " (incomplete dump)");
	if (!o->keep_device) {
		r = mark_saved(src, &t, d.dump_id);
		if (r < 0) {
			err("could not mark the dump on %s saved: %s (it will be saved again)", src,
			    errstr(r));
			code = EXIT_SYSTEM;
		}
	}
	if (o->max)
		prune(o->dir, o->max);
	if (code == EXIT_OK && (!complete || res.bad_pages))
		code = EXIT_INCOMPLETE;
out:
	dumpfile_free(&d);
	target_close(&t);
	return code;
}
