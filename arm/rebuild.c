/* kdumpinit rebuild: runs the arming service's own script, installed
 * beside this binary (PREFIX/sbin/kdumpinit -> PREFIX/lib/kdumpinit/
 * kdumpinit-arm), with --force: the capture image built again from what
 * is installed now, then armed, with every check the service makes. One
 * program does that work, so the command and the unit cannot drift. */
#include "rebuild.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/log.h"

static const char rebuild_help[] =
	"usage: kdumpinit rebuild [--kver KVER] [--kernel FILE] [--build-only]\n"
	"\n"
	"Builds the capture image again (kdumpinit-mkinitramfs) for the running kernel,\n"
	"or KVER, and arms the crash kernel with it: what kdumpinit-arm.service does\n"
	"at boot, forced (kdumpinit-arm --force), with the same checks (a dump device configured, a\n"
	"crashkernel= reservation, lockdown, the dedicated kernel's drivers).\n"
	"With a dedicated crash kernel (KDUMPINIT_CRASH_KERNEL) nothing is built: it\n"
	"is armed again. --build-only builds and does not arm.\n"
	"Exit: kdumpinit-arm's: 0 armed (or built), 1 an error it names.\n";

/* PREFIX/lib/kdumpinit/kdumpinit-arm of the PREFIX/sbin this binary runs
 * from, in path. 0 or -errno. */
static int script_path(char *path, size_t sz)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n <= 0)
		return -errno;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;			/* PREFIX/sbin */
	slash = strrchr(self, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;			/* PREFIX */
	if ((size_t)snprintf(path, sz, "%s/lib/kdumpinit/kdumpinit-arm", self) >= sz)
		return -ENAMETOOLONG;
	return 0;
}

int cmd_rebuild(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kver", 1, 0, 'k' }, { "kernel", 1, 0, 'K' }, { "build-only", 0, 0, 'b' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	/* kdumpinit-arm --force [--kver K] [--kernel F] [--build-only] */
	char *args[8] = { "kdumpinit-arm", "--force" };
	int na = 2, c;

	while ((c = cli_next("rebuild", argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'k': args[na++] = "--kver"; args[na++] = optarg; break;
		case 'K': args[na++] = "--kernel"; args[na++] = optarg; break;
		case 'b': args[na++] = "--build-only"; break;
		case 'h': fputs(rebuild_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
		if (na > 6)
			return cli_fail("rebuild", "each option once");
	}
	if (cli_operands("rebuild", argc, argv, 0, ""))
		return EXIT_USAGE;
	args[na] = NULL;

	/* KDUMPINIT_ARM_SCRIPT: the tests' copy from dist/. */
	char path[PATH_MAX];
	const char *env = getenv("KDUMPINIT_ARM_SCRIPT");
	int r = env && *env ? (snprintf(path, sizeof path, "%s", env), 0) :
		script_path(path, sizeof path);
	struct stat st;
	if (r < 0 || stat(path, &st) < 0) {
		err("rebuild: cannot find the arming script%s%s (%s): is kdumpinit installed (make "
		    "install)?", r < 0 ? "" : " ", r < 0 ? "" : path, errstr(r < 0 ? r : -errno));
		return EXIT_SYSTEM;
	}
	/* Run only what root or we installed, which nobody else can change. */
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		err("rebuild: %s is not a regular file owned by root and writable only by it: not "
		    "run", path);
		return EXIT_SYSTEM;
	}
	execv(path, args);
	err("rebuild: cannot run %s: %s", path, strerror(errno));
	return EXIT_SYSTEM;
}
