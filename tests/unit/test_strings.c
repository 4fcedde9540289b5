/* Unit tests for what init/ reads from the parsed VMCOREINFO table instead
 * of the note's text (OSRELEASE, CRASHTIME: info, capture, the savecore
 * directory name) and for commit_tmp_at (lib/io.c), the end of both save
 * paths' temporary files. */
#define CHECK_PREFIX "strings"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../kernel/vmcoreinfo.h"
#include "../../lib/io.h"
#include "../../lib/util.h"

/* OSRELEASE: present even when empty (info printed "kernel " then), the
 * first line wins, absent without one. */
static void osrelease_presence(void)
{
	struct vmcoreinfo vi;

	vmcoreinfo_parse(&vi, "PAGESIZE=4096\n");
	CHECK(!vi.have_osrelease, "no OSRELEASE line: absent");
	vmcoreinfo_parse(&vi, "OSRELEASE=\nOSRELEASE=6.1\n");
	CHECK(vi.have_osrelease, "an empty OSRELEASE is there");
	CHECK_STR(vi.osrelease, "");
	vmcoreinfo_parse(&vi, "OSRELEASEX=1\nOSRELEASE=6.12.0\n");
	CHECK(vi.have_osrelease, "OSRELEASE after a longer key");
	CHECK_STR(vi.osrelease, "6.12.0");
	vmcoreinfo_parse(&vi, NULL);
	CHECK(!vi.have_osrelease, "no note");
}

/* CRASHTIME as parse_u64(value, 10) read it: whole, unsigned, decimal. */
static void crashtime_like_parse_u64(void)
{
	static const char *const values[] = {
		"1750000000", "0", "99999999999999999", "-5", "+5", " 5", "12x", "0x10",
		"", "18446744073709551615", "18446744073709551616", "0010",
	};
	for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
		char note[80];
		struct vmcoreinfo vi;
		uint64_t want = 0;
		int ok = parse_u64(values[i], 10, &want) == 0;

		snprintf(note, sizeof note, "CRASHTIME=%s\nCRASHTIME=7\n", values[i]);
		vmcoreinfo_parse(&vi, note);
		CHECK(vi_has(&vi, VI_CRASHTIME) == ok, "CRASHTIME=%s: table %d, parse_u64 %d",
		      values[i], vi_has(&vi, VI_CRASHTIME), ok);
		if (ok)
			CHECK(vi_u(&vi, VI_CRASHTIME) == want, "CRASHTIME=%s: %llu", values[i],
			      (unsigned long long)vi_u(&vi, VI_CRASHTIME));
	}
}

/* A sign is for NUMBER()s only. */
static void sign_only_in_numbers(void)
{
	struct vmcoreinfo vi;

	vmcoreinfo_parse(&vi, "NUMBER(phys_base)=-16\nSIZE(page)=-64\nKERNELOFFSET=-1000\n");
	CHECK_INT((int64_t)vi_u(&vi, VI_NUM_PHYS_BASE), -16);
	CHECK(!vi_has(&vi, VI_SIZE_PAGE) && !vi_has(&vi, VI_KERNELOFFSET),
	      "a negative SIZE or hex value is malformed");
	CHECK_INT(vi.bad_lines, 2);
}

static char dir[] = "/tmp/kdi-strings.XXXXXX";

static int dir_fd(void)
{
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void commit_renames(void)
{
	int dfd = dir_fd();
	int fd = openat(dfd, ".a.tmp", O_WRONLY | O_CREAT | O_EXCL, 0600);
	struct stat st;

	CHECK(dfd >= 0 && fd >= 0, "set-up");
	CHECK_INT(write_full(fd, "abc", 3), 0);
	CHECK_INT(commit_tmp_at(dfd, fd, ".a.tmp", "a", 0), 0);
	CHECK(fstatat(dfd, "a", &st, 0) == 0 && st.st_size == 3, "a holds the bytes");
	CHECK(fstatat(dfd, ".a.tmp", &st, 0) < 0 && errno == ENOENT, "no temporary left");
	close(dfd);
}

/* A write that failed: nothing under either name, the write's error back. */
static void commit_failed_removes(void)
{
	int dfd = dir_fd();
	int fd = openat(dfd, ".b.tmp", O_WRONLY | O_CREAT | O_EXCL, 0600);
	struct stat st;

	CHECK(dfd >= 0 && fd >= 0, "set-up");
	CHECK_INT(commit_tmp_at(dfd, fd, ".b.tmp", "b", -ENOSPC), -ENOSPC);
	CHECK(fstatat(dfd, "b", &st, 0) < 0 && fstatat(dfd, ".b.tmp", &st, 0) < 0,
	      "neither b nor its temporary");
	close(dfd);
}

/* Paths, as save --output uses it. */
static void commit_by_path(void)
{
	char tmp[64], fin[64];
	struct stat st;

	snprintf(tmp, sizeof tmp, "%s/c.partial", dir);
	snprintf(fin, sizeof fin, "%s/c", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0, "set-up");
	CHECK_INT(commit_tmp_at(AT_FDCWD, fd, tmp, fin, 0), 0);
	CHECK(stat(fin, &st) == 0 && stat(tmp, &st) < 0, "renamed");
}

int main(void)
{
	RUN(osrelease_presence);
	RUN(crashtime_like_parse_u64);
	RUN(sign_only_in_numbers);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(commit_renames);
	RUN(commit_failed_removes);
	RUN(commit_by_path);
	char p[64];
	snprintf(p, sizeof p, "%s/a", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/c", dir);
	unlink(p);
	rmdir(dir);
	return check_done();
}
