/* What kdumpinit test leaves for the next boot, and what that boot's save
 * makes of it: the marker (written before the crash) and the result
 * (written by save --dir at the next boot), two small files in the state
 * directory, which status reads. Below test, save and status: each of
 * them only reads or writes these files through here. */
#ifndef KDI_TESTMARK_H
#define KDI_TESTMARK_H

#include <stddef.h>
#include <stdint.h>

/* Kept across reboots; ROOT prefixed with --root. */
#define TEST_STATE_DIR "/var/lib/kdumpinit"

struct test_mark {
	uint64_t time;		/* unix seconds when test crashed the machine */
	char boot_id[40];	/* the boot that crashed (/proc/sys/kernel/random/boot_id) */
	char dev[256];		/* the dump device status named */
};

struct test_result {
	int passed;
	uint64_t time;		/* the test's crash */
	uint64_t reported;	/* when save reported it */
	char saved[512];	/* where the dump went, when passed */
	int64_t seconds;	/* from the panic to the dump's end; -1 unknown */
	char why[256];		/* when not passed */
};

/* This boot's id (36 characters), or "" when it cannot be read. */
void boot_id_read(const char *root, char out[40]);

/* DIR/test, written whole (a new file renamed over), mode 0644; DIR
 * made 0755 when missing. 0 or -errno. */
int testmark_write(const char *dir, const struct test_mark *m);
/* 0, -ENOENT when there is none, -EINVAL when it does not parse. */
int testmark_read(const char *dir, struct test_mark *m);
int testmark_remove(const char *dir);
int testresult_read(const char *dir, struct test_result *r);

/* The newest dump a save --dir saved (or found saved), for the report. */
struct test_saved {
	char path[512];
	uint64_t crash_time;	/* the panic (VMCOREINFO's CRASHTIME), else capture start */
	uint64_t end_time;	/* END's time, 0 unknown */
};

/* Called by save --dir when it is done. When DIR holds the marker of an
 * earlier boot, the test's crash is over: it passed when s names a dump
 * from that crash on (not before the marker's time, less a minute of
 * clock skew), and failed otherwise, why_not saying what save found.
 * Writes DIR/last-test, removes the marker, says the result in one line,
 * and returns 1; 0 when there was no test to report (or the marker is of
 * this boot: the crash has not happened). */
int testmark_conclude(const char *dir, const char *boot_id, const struct test_saved *s,
		      const char *why_not);

/* "2026-12-07 18:40:12 UTC" */
void test_time_say(uint64_t t, char *buf, size_t sz);
/* One line for status: "passed 2026-12-07 18:40:12 UTC: ...". */
void testresult_say(const struct test_result *r, char *buf, size_t sz);

#endif
