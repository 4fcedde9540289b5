/* kdumpinit test, as kdumpctl test and kdump-config test: the only way to
 * know that a crash is captured and saved is to crash. It checks first
 * (status: nothing is crashed on a machine that would lose the dump),
 * asks, records a marker, syncs and crashes through sysrq. The next
 * boot's save --dir reports the result (host/testmark.h). */
#include "crashtest.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "status.h"
#include "testmark.h"
#include "../arm/root.h"
#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"

/* How long a crash asked for may take to come before the test says it
 * did not: sysrq c panics at once, and the panic's notifiers are quick. */
#define CRASH_WAIT 10

static const char test_help[] =
	"usage: kdumpinit test [--yes] [--dev SEL] [--root DIR]\n"
	"\n"
	"Crashes this machine now, on purpose, to show that a crash is captured and\n"
	"saved. First the checks of kdumpinit status, printed: the crash kernel loaded,\n"
	"its image current, the dump device there and claimed (a dump waiting to be\n"
	"saved may stay: the next boot saves both); if one fails, nothing is crashed. Then, confirmed, it records a marker\n"
	"(" TEST_STATE_DIR "/test), syncs the filesystems and crashes the kernel\n"
	"(sysrq c). At the next boot kdumpinit-save.service saves the dump and reports\n"
	"the test in its log; kdumpinit status then shows \"last test\": passed, where\n"
	"the dump went and the seconds from the panic to the dump's end; or FAILED, and\n"
	"why.\n"
	"  --yes       no question (without it: type yes on the terminal)\n"
	"  --dev SEL   the dump device, as for status\n"
	"  --root DIR  read DIR/sys, DIR/run, DIR/etc; write DIR" TEST_STATE_DIR " and\n"
	"              DIR/proc/sysrq-trigger, and do not wait for a crash (tests)\n"
	"Exit: status's code when not ready (nothing crashed), 1 when the crash could\n"
	"not be asked for or did not come, 2 usage or not confirmed. A crash does not\n"
	"return.\n";

/* yes on the terminal; anything else, or no terminal, is no. */
static int confirmed(void)
{
	char line[16];

	if (!isatty(STDIN_FILENO))
		return -1;
	fputs("This crashes the machine now: every program and unsaved file goes with it.\n"
	      "Type yes to crash it: ", stdout);
	fflush(stdout);
	return fgets(line, sizeof line, stdin) && !strcmp(line, "yes\n");
}

int cmd_test(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "yes", 0, 0, 'y' }, { "dev", 1, 0, 'd' }, { "root", 1, 0, 'R' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *root = "", *dev = NULL;
	int c, yes = 0;
	char dir[512], path[512];

	while ((c = cli_next("test", argc, argv, "yd:R:h", opts)) != -1) {
		switch (c) {
		case 'y': yes = 1; break;
		case 'd': dev = optarg; break;
		case 'R': root = optarg; break;
		case 'h': fputs(test_help, stdout); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (cli_operands("test", argc, argv, 0, ""))
		return EXIT_USAGE;
	if (!yes && !isatty(STDIN_FILENO))
		return cli_fail("test", "this crashes the machine: give --yes (stdin is not a terminal)");

	/* A dump waiting to be saved is no reason not to: the test's crash
	 * goes after it, and the next boot saves both, the test's last. */
	int code = status_report(root, dev, 0);
	if (code != EXIT_OK && code != EXIT_UNSAVED) {
		err("test: not ready (status above, exit %d): nothing crashed", code);
		return code;
	}
	if (code == EXIT_UNSAVED)
		msg("test: a dump waits to be saved: the test's crash goes after it, and the next boot "
		    "saves both");
	if (!yes && confirmed() != 1) {
		err("test: not confirmed: nothing crashed");
		return EXIT_USAGE;
	}
	struct test_mark m = { .time = (uint64_t)time(NULL) };
	boot_id_read(root, m.boot_id);
	snprintf(m.dev, sizeof m.dev, "%s", dev ? dev : "");
	root_path(root, TEST_STATE_DIR, dir, sizeof dir);
	int r = testmark_write(dir, &m);
	if (r < 0) {
		err("test: cannot write %s/test: %s: nothing crashed", dir, strerror(-r));
		return EXIT_SYSTEM;
	}
	/* No O_CREAT: a trigger that is not there is not made. */
	int fd = open(root_path(root, "/proc/sysrq-trigger", path, sizeof path), O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		err("test: cannot open %s: %s: nothing crashed", path, strerror(-r));
		testmark_remove(dir);
		return EXIT_SYSTEM;
	}
	msg("test: marker %s/test written; syncing, then crashing through %s (sysrq c)", dir, path);
	sync();
	r = write_full(fd, "c", 1);
	close(fd);
	if (r < 0) {
		err("test: writing c to %s: %s: nothing crashed", path, strerror(-r));
		testmark_remove(dir);
		return EXIT_SYSTEM;
	}
	if (root[0] && strcmp(root, "/")) {
		msg("test: --root %s: the crash is not waited for", root);
		return EXIT_OK;
	}
	sleep(CRASH_WAIT);
	err("test: no crash %d s after sysrq c: the kernel did not panic (marker removed)", CRASH_WAIT);
	testmark_remove(dir);
	return EXIT_SYSTEM;
}
