#include "testmark.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../arm/root.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"

#define MARK "test"
#define RESULT "last-test"
/* A minute of clock skew between the running system and the crash
 * kernel's clock (both from the RTC, the crash kernel's without NTP). */
#define SKEW 60

void boot_id_read(const char *root, char out[40])
{
	char path[512], v[64];
	ssize_t n = read_text_file(root_path(root, "/proc/sys/kernel/random/boot_id", path, sizeof path),
				   v, sizeof v);
	out[0] = 0;
	if (n < 36)
		return;
	for (int i = 0; i < 36; i++)
		if (!(v[i] == '-' || hex_digit(v[i]) >= 0))
			return;
	memcpy(out, v, 36);
	out[36] = 0;
}

/* Writes NAME in dir whole: a new file, synced, renamed over the old;
 * dir opened without following a link, made when missing. */
static int write_state(const char *dir, const char *name, const char *text)
{
	char tmp[64];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r = 0;

	if (dfd < 0 && errno == ENOENT) {
		/* Its parents too (a system without /var/lib yet). */
		char p[512];
		snprintf(p, sizeof p, "%s", dir);
		for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
			if (s)
				*s = 0;
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -errno;
			if (!s)
				break;
			*s = '/';
		}
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (dfd < 0)
		return -errno;
	snprintf(tmp, sizeof tmp, ".%s.%ld", name, (long)getpid());
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		close(dfd);
		return r;
	}
	r = commit_tmp_at(dfd, fd, tmp, name, write_full(fd, text, strlen(text)));
	if (r == 0)
		(void)fsync(dfd);
	close(dfd);
	return r;
}

/* KEY=VALUE lines of DIR/NAME into buf; 0 or -errno. Not a link. */
static int read_state(const char *dir, const char *name, char *buf, size_t sz)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read_full_at(fd, buf, sz - 1, 0);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	return 0;
}

/* The value of KEY in text, copied into out (sz), or NULL. */
static const char *get(const char *text, const char *key, char *out, size_t sz)
{
	size_t kl = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, kl) && l[kl] == '=') {
			const char *v = l + kl + 1, *e = strchr(v, '\n');
			size_t n = e ? (size_t)(e - v) : strlen(v);
			if (n >= sz)
				return NULL;
			memcpy(out, v, n);
			out[n] = 0;
			return out;
		}
	return NULL;
}

static int get_u64(const char *text, const char *key, uint64_t *v)
{
	char b[32];
	return get(text, key, b, sizeof b) && parse_u64(b, 10, v) == 0 ? 0 : -EINVAL;
}

int testmark_write(const char *dir, const struct test_mark *m)
{
	char text[512];
	snprintf(text, sizeof text, "# kdumpinit test: this machine was crashed on purpose; the next "
		 "boot's save reports it\ntime=%" PRIu64 "\nboot_id=%s\ndev=%s\n",
		 m->time, m->boot_id, m->dev);
	return write_state(dir, MARK, text);
}

int testmark_read(const char *dir, struct test_mark *m)
{
	char text[1024];
	int r = read_state(dir, MARK, text, sizeof text);
	if (r < 0)
		return r;
	memset(m, 0, sizeof *m);
	if (get_u64(text, "time", &m->time) < 0 || !get(text, "boot_id", m->boot_id, sizeof m->boot_id))
		return -EINVAL;
	if (!get(text, "dev", m->dev, sizeof m->dev))
		m->dev[0] = 0;
	return 0;
}

int testmark_remove(const char *dir)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", dir, MARK);
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int testresult_read(const char *dir, struct test_result *r)
{
	char text[2048], v[32];
	int rc = read_state(dir, RESULT, text, sizeof text);
	if (rc < 0)
		return rc;
	memset(r, 0, sizeof *r);
	r->seconds = -1;
	if (!get(text, "result", v, sizeof v) || (strcmp(v, "passed") && strcmp(v, "failed")) ||
	    get_u64(text, "time", &r->time) < 0)
		return -EINVAL;
	r->passed = !strcmp(v, "passed");
	(void)get_u64(text, "reported", &r->reported);
	uint64_t s;
	if (get_u64(text, "seconds", &s) == 0 && s < 1000000)
		r->seconds = (int64_t)s;
	if (!get(text, "saved", r->saved, sizeof r->saved))
		r->saved[0] = 0;
	if (!get(text, "why", r->why, sizeof r->why))
		r->why[0] = 0;
	return 0;
}

void test_time_say(uint64_t t, char *buf, size_t sz)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, sz, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, sz, "%" PRIu64, t);
}

void testresult_say(const struct test_result *r, char *buf, size_t sz)
{
	char when[40], secs[64] = "";
	test_time_say(r->time, when, sizeof when);
	if (r->seconds >= 0)
		snprintf(secs, sizeof secs, ", %" PRId64 " s from the panic to the dump's end", r->seconds);
	if (r->passed)
		snprintf(buf, sz, "passed, crashed %s: dump saved to %s%s", when, r->saved, secs);
	else
		snprintf(buf, sz, "FAILED, crashed %s: %s", when, r->why);
}

/* A value that goes on one line of the state file. */
static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

int testmark_conclude(const char *dir, const char *boot_id, const struct test_saved *s,
		      const char *why_not)
{
	struct test_mark m;
	struct test_result r = { .seconds = -1 };
	char text[1536], line[900];

	int rc = testmark_read(dir, &m);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		warn("%s/%s: not a test marker kdumpinit test wrote: removed", dir, MARK);
		testmark_remove(dir);
		return 0;
	}
	if (boot_id[0] && !strcmp(boot_id, m.boot_id))
		return 0;	/* the same boot: no crash came between */
	r.time = m.time;
	r.reported = (uint64_t)time(NULL);
	if (s && s->crash_time + SKEW >= m.time) {
		r.passed = 1;
		snprintf(r.saved, sizeof r.saved, "%s", s->path);
		if (s->end_time >= s->crash_time && s->end_time - s->crash_time < 1000000)
			r.seconds = (int64_t)(s->end_time - s->crash_time);
	} else {
		snprintf(r.why, sizeof r.why, "%s", s ? "the newest dump saved is older than the test's crash" :
			 why_not && *why_not ? why_not : "no dump was saved");
	}
	one_line(r.saved);
	one_line(r.why);
	size_t n = (size_t)snprintf(text, sizeof text,
				    "# kdumpinit test's result, written by kdumpinit save at the boot after it\n"
				    "result=%s\ntime=%" PRIu64 "\nreported=%" PRIu64 "\n",
				    r.passed ? "passed" : "failed", r.time, r.reported);
	n += (size_t)snprintf(text + n, sizeof text - n, r.passed ? "saved=%s\n" : "why=%s\n",
			      r.passed ? r.saved : r.why);
	if (r.seconds >= 0)
		snprintf(text + n, sizeof text - n, "seconds=%" PRId64 "\n", r.seconds);
	rc = write_state(dir, RESULT, text);
	testresult_say(&r, line, sizeof line);
	if (rc < 0)
		err("kdumpinit test: %s; cannot write %s/%s: %s", line, dir, RESULT, strerror(-rc));
	else if (r.passed)
		msg("kdumpinit test: %s", line);
	else
		err("kdumpinit test: %s", line);
	testmark_remove(dir);
	return 1;
}
