/* fuzz_kimage: what arm and status read before loading a kernel image and
 * from sysfs: kimage_inspect() (arm/kimage.c) on an image file, and
 * crash_reserve_read() (arm/reserve.c) on the crash CMA ranges and the
 * command line.
 *
 * Input: the image, as the file arm opens; the same bytes, cut at the
 * first NUL, are also the kexec_crash_cma_ranges file and the command
 * line of a fake root.
 *
 * Checks beyond "no crash, no read outside the input": the release is
 * NUL-terminated printable ASCII without spaces; dedicated holds exactly
 * when it ends in the suffix; sig is one of its three values; a reserve
 * with CMA counts at least one range and never more than the parser's
 * cap; crash_reserve_say and _problem write NUL-terminated lines. */
#include "fuzz_common.h"

#include <assert.h>
#include <sys/stat.h>

/* arm/ is not in the fuzz archive (it is a program, not a library). */
#include "../../arm/kimage.c"
#include "../../arm/reserve.c"
#include "../../arm/root.c"

static char root[64];

/* The fake root goes with the process. */
static void cleanup(void)
{
	static const char *const files[] = { "/sys/kernel/kexec_crash_size",
		"/sys/kernel/kexec_crash_cma_ranges", "/proc/cmdline", "/sys/kernel", "/sys", "/proc", "" };
	char p[128];
	/* Files first, then their directories; a failure means there was
	 * nothing to remove. */
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(p, sizeof p, "%s%s", root, files[i]);
		remove(p);
	}
}

static void put(const char *rel, const uint8_t *d, size_t n)
{
	char p[128];
	snprintf(p, sizeof p, "%s%s", root, rel);
	FILE *f = fopen(p, "w");
	assert(f);
	fwrite(d, 1, n, f);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct kimage_info ki;

	fz_memfd(&fd, "kimage");
	fz_pwrite(fd, data, size, 0);
	assert(kimage_inspect(fd, &ki) == 0);
	size_t rl = strnlen(ki.release, sizeof ki.release);
	assert(rl < sizeof ki.release);
	for (size_t i = 0; i < rl; i++)
		assert(ki.release[i] > ' ' && ki.release[i] < 127);
	size_t sl = strlen(KIMAGE_DEDICATED_SUFFIX);
	assert(ki.dedicated == (rl > sl && !strcmp(ki.release + rl - sl, KIMAGE_DEDICATED_SUFFIX)));
	assert(ki.sig == KIMAGE_NOT_PE || ki.sig == KIMAGE_UNSIGNED || ki.sig == KIMAGE_SIGNED);

	if (!root[0]) {
		snprintf(root, sizeof root, "/tmp/fuzz_kimage.%d", (int)getpid());
		char p[128];
		mkdir(root, 0700);
		snprintf(p, sizeof p, "%s/sys", root), mkdir(p, 0700);
		snprintf(p, sizeof p, "%s/sys/kernel", root), mkdir(p, 0700);
		snprintf(p, sizeof p, "%s/proc", root), mkdir(p, 0700);
		put("/sys/kernel/kexec_crash_size", (const uint8_t *)"16777216\n", 9);
		atexit(cleanup);
	}
	size_t text = strnlen((const char *)data, size);
	put("/sys/kernel/kexec_crash_cma_ranges", data, text);
	put("/proc/cmdline", data, text);
	struct crash_reserve r;
	crash_reserve_read(root, &r);
	assert(r.fixed == 16777216);
	assert(!r.cma || r.cma_ranges >= 1);
	assert(r.cma_ranges <= RESERVE_CMA_RANGES_MAX * 4);
	assert(!r.cma_bad || (!r.cma && !r.cma_ranges));
	char line[400];
	crash_reserve_say(&r, line, sizeof line);
	assert(strnlen(line, sizeof line) < sizeof line);
	if (crash_reserve_problem(&r, line, sizeof line))
		assert(strnlen(line, sizeof line) < sizeof line);
	return 0;
}
