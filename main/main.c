/* kdumpinit: one static binary. As PID 1 it is the crash kernel's init;
 * otherwise the first argument names a host command. */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../arm/arm.h"
#include "../arm/rebuild.h"
#include "../host/commands.h"
#include "../host/crashtest.h"
#include "../host/estimate.h"
#include "../host/keys.h"
#include "../host/modules.h"
#include "../host/status.h"
#include "../init/pid1.h"
#include "../lib/exitcode.h"
#include "../lib/log.h"

static const char help[] =
	"kdumpinit " KDI_VERSION " - crash-dump capture for Linux kdump\n"
	"\n"
	"As PID 1 of a crash kernel's initramfs it captures /proc/vmcore to the\n"
	"device named by kdumpinit.dev= and runs kdumpinit.final= (see README.md).\n"
	"\n"
	"usage: kdumpinit COMMAND [ARGS]   (COMMAND --help for details)\n"
	"  format    claim a device or file for dumps\n"
	"  capture   capture an ELF vmcore file to a claimed target\n"
	"  save      write a dump as a kdump-compressed or ELF vmcore\n"
	"            (--dir: savecore, at boot)\n"
	"  info      show what a dump device holds\n"
	"  dmesg     print the crashed kernel's log\n"
	"  arm       load the crash kernel (kexec_file_load)\n"
	"  rebuild   build the capture image again and arm it (what the service does)\n"
	"  modules   the kernel modules a dump device needs here\n"
	"  status    is a crash kernel armed, current, with its device (for monitoring)\n"
	"  keygen    make a key pair for sealed (encrypted) dumps\n"
	"  estimate  the dump's size and time at each level, the reservation to give it\n"
	"  test      crash this machine on purpose; the next boot reports the dump saved\n"
	"  --help, --version\n"
	"\n"
	"Exit codes: 0 ok, 1 system/I-O error, 2 usage, 3 bad vmcore,\n"
	"4 target refused or no dump, 5 dump incomplete; status: 6 7 8;\n"
	"arm: 9 (an unsigned kernel under lockdown).\n";

static const struct {
	const char *name;
	int (*run)(int, char **);
} commands[] = {
	{ "capture", cmd_capture }, { "save", cmd_save }, { "info", cmd_info },
	{ "format", cmd_format }, { "arm", cmd_arm }, { "dmesg", cmd_dmesg },
	{ "modules", cmd_modules }, { "status", cmd_status }, { "keygen", cmd_keygen },
	{ "rebuild", cmd_rebuild }, { "estimate", cmd_estimate },
	{ "test", cmd_test },
};

int main(int argc, char **argv)
{
	if (getpid() == 1)
		pid1_main();
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(help, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("kdumpinit " KDI_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	err("unknown command '%s' (try --help)", argv[1]);
	return EXIT_USAGE;
}
