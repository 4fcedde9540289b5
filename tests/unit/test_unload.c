/* Unit tests for arm --unload's fallback order (arm/unload.c), without
 * root and without unloading anything: the three ways are stand-ins that
 * record their calls. kexec_file_load's unload first; on a kernel
 * without it (ENOSYS: Debian's arm64) kexec_load with no segments; then
 * kexec-tools' kexec -p -u; the first that works ends it, and a failure
 * of all three names each. */
#define CHECK_PREFIX "unload"
#include "check.h"

#include <errno.h>

#include "../../arm/unload.c"

struct fake {
	int rc[3];		/* what file, load, tools return */
	char calls[8];		/* 'f', 'l', 't' in call order */
	int n;
};

static int way(void *ctx, int i, char c)
{
	struct fake *f = ctx;
	if (f->n < (int)sizeof f->calls - 1)
		f->calls[f->n++] = c;
	return f->rc[i];
}

static int f_file(void *ctx) { return way(ctx, 0, 'f'); }
static int f_load(void *ctx) { return way(ctx, 1, 'l'); }
static int f_tools(void *ctx) { return way(ctx, 2, 't'); }

static int run(struct fake *f)
{
	const struct unload_ops ops = { f_file, f_load, f_tools, f };
	return unload_crash_kernel(&ops);
}

static void t_file_works(void)
{
	struct fake f = { { 0, 0, 0 }, "", 0 };
	CHECK_INT(run(&f), UNLOAD_FILE);
	CHECK_STR(f.calls, "f");
}

/* Debian's arm64: no kexec_file_load; kexec_load unloads. */
static void t_no_file_load(void)
{
	struct fake f = { { -ENOSYS, 0, 0 }, "", 0 };
	CHECK_INT(run(&f), UNLOAD_LOAD);
	CHECK_STR(f.calls, "fl");
	CHECK_STR(unload_how_name(UNLOAD_LOAD), "kexec_load");
}

static void t_tools_last(void)
{
	struct fake f = { { -ENOSYS, -EINVAL, 0 }, "", 0 };
	CHECK_INT(run(&f), UNLOAD_TOOLS);
	CHECK_STR(f.calls, "flt");
}

/* All fail: the last error comes back, after every way was tried. */
static void t_all_fail(void)
{
	struct fake f = { { -ENOSYS, -EPERM, -ENOENT }, "", 0 };
	CHECK_INT(run(&f), -ENOENT);
	CHECK_STR(f.calls, "flt");
}

/* A way left out (NULL) is skipped, not called. */
static void t_way_left_out(void)
{
	struct fake f = { { -ENOSYS, -ENOSYS, 0 }, "", 0 };
	const struct unload_ops ops = { f_file, f_load, NULL, &f };
	CHECK_INT(unload_crash_kernel(&ops), -ENOSYS);
	CHECK_STR(f.calls, "fl");
	CHECK_STR(unload_how_name(0), "?");
}

int main(void)
{
	RUN(t_file_works);
	RUN(t_no_file_load);
	RUN(t_tools_last);
	RUN(t_all_fail);
	RUN(t_way_left_out);
	return check_done();
}
