/* Host commands: capture, save, info, format. Each parses its options,
 * calls library code, prints once and returns an exit code. */
#include "json.h"
#include "keys.h"
#include "progress.h"
#include "savecore.h"
#include "source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <sodium.h>

#include "../config/config.h"
#include "../config/probe.h"
#include "../config/stack.h"
#include "../config/target.h"
#include "commands.h"
#include "../init/run_capture.h"
#include "../arch/arch.h"
#include "../kernel/dmesg.h"
#include "../dump/chain.h"
#include "../dump/dumpfile.h"
#include "../dump/save.h"
#include "../kernel/vmcore.h"
#include "../lib/cli.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/sigclean.h"
#include "../lib/util.h"

static int help(const char *text)
{
	fputs(text, stdout);
	return EXIT_OK;
}

/* The options info and dmesg share: SOURCE [--dump N] [--key FILE],
 * the secret key read into sk. *which the dump (0 all, or the last),
 * *key whether one was read, *json whether --json was given (json NULL:
 * the command has none). 0, -1 after the help, or the exit code
 * (said). */
static int source_opts(const char *cmd, const char *text, int argc, char **argv,
		       unsigned *which, int *key, int *json, uint8_t sk[32])
{
	static const struct option opts[] = {
		{ "dump", 1, 0, 'D' }, { "key", 1, 0, 'K' }, { "json", 0, 0, 'J' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;

	*which = 0;
	*key = 0;
	while ((c = cli_next(cmd, argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'D':
			if (parse_u64(optarg, 0, &v) < 0 || v < 1 || v > KDI_CHAIN_MAX)
				return cli_bad_value(cmd, "--dump", optarg, "a dump's number, 1 the oldest");
			*which = v;
			break;
		case 'K':
			if (keyfile_read(optarg, 1, sk) < 0)
				return EXIT_USAGE;
			*key = 1;
			break;
		case 'J':
			if (!json)
				return cli_fail(cmd, "unknown option '--json'");
			*json = 1;
			break;
		case 'h':
			help(text);
			return -1;	/* done, exit 0 */
		default: return EXIT_USAGE;
		}
	}
	return cli_operands(cmd, argc, argv, 1, "the dump device or file (SOURCE)");
}

/* Runs a command that may read a secret key into sk: the key's only
 * copy here lives in this frame, locked in memory, and is wiped on every
 * way out of the command (host/keys.c). */
static int with_key(int (*cmd)(int, char **, uint8_t *), int argc, char **argv)
{
	uint8_t sk[32];

	(void)sodium_mlock(sk, sizeof sk);
	int code = cmd(argc, argv, sk);
	(void)sodium_munlock(sk, sizeof sk);
	return code;
}

/* ---------------- capture ---------------- */

static const char capture_help[] =
	"usage: kdumpinit capture --vmcore FILE --output TARGET [--level N] [--threads N]\n"
	"                         [--mmap|--no-mmap] [--oversubscribe] [--pubkey FILE]\n"
	"                         [--full keep|overwrite] [--memmap auto|exclude|keep]\n"
	"\n"
	"Runs the capture pipeline (the code PID-1 mode runs) on an ELF vmcore.\n"
	"TARGET is a device or file claimed by 'kdumpinit format', or a path that\n"
	"does not exist yet (a new claimed file is created). Anything else is refused.\n"
	"  --vmcore FILE   the ELF vmcore, e.g. /proc/vmcore or a copy of it\n"
	"  --output TARGET where the dump goes\n"
	"  --level N       makedumpfile dump level bits, 0..31 (default 31; bit 1 = zero pages)\n"
	"  --threads N     compression workers (default, and 0: one per CPU it may run on;\n"
	"                  never more than those CPUs)\n"
	"  --oversubscribe run all N workers even beyond the CPUs (tests of the partitioning)\n"
	"  --no-mmap       read the vmcore with pread (the default for a file)\n"
	"  --mmap          read it through mmap windows (the default for /proc/vmcore)\n"
	"  --pubkey FILE   seal the dump to this public key (kdumpinit keygen; as\n"
	"                  kdumpinit.pubkey=): every chunk holding memory is encrypted;\n"
	"                  a file that is not a key: nothing written, exit 2\n"
	"  --full keep|overwrite  TARGET holds dumps not yet saved and has no room after\n"
	"                  them: keep them and capture nothing (default), or write over\n"
	"                  them (kdumpinit.full=). With room, the dump goes after them.\n"
	"  --memmap auto|exclude|keep  leave out the pages of struct pages that describe\n"
	"                  only pages left out: from 1 GiB of them (auto, the default),\n"
	"                  always, or never (kdumpinit.memmap=)\n"
	"Exit: 0 complete, 3 bad vmcore, 4 target refused, 5 incomplete, 1 I/O error.\n";

int cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "vmcore", 1, 0, 'v' }, { "output", 1, 0, 'o' }, { "level", 1, 0, 'l' },
		{ "threads", 1, 0, 't' }, { "no-mmap", 0, 0, 'M' }, { "mmap", 0, 0, 'm' },
		{ "oversubscribe", 0, 0, 'O' }, { "full", 1, 0, 'F' }, { "memmap", 1, 0, 'e' },
		{ "pubkey", 1, 0, 'P' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *vmcore = NULL, *output = NULL;
	struct capture_req rq = { .level = 31, .threads = online_cpus(), .cpus = online_cpus(),
				  .window = 64u << 20 };
	const struct capture_hooks hk = { .progress = 1 };
	uint8_t pk[32];
	uint64_t v;
	int c;

	while ((c = cli_next("capture", argc, argv, "v:o:l:t:h", opts)) != -1) {
		switch (c) {
		case 'v': vmcore = optarg; break;
		case 'o': output = optarg; break;
		case 'l':
			if (parse_u64(optarg, 0, &v) < 0 || v > 31)
				return cli_bad_value("capture", "--level", optarg, "a dump level, 0 to 31");
			rq.level = v;
			break;
		case 't':
			/* 0: as many as the CPUs, as kdumpinit.threads=0. */
			if (parse_u64(optarg, 0, &v) < 0 || v > 256)
				return cli_bad_value("capture", "--threads", optarg,
						     "0 (one per CPU) to 256");
			rq.threads = v ? v : online_cpus();
			break;
		case 'M': rq.read_mode = READ_PREAD; break;
		case 'm': rq.read_mode = READ_MMAP; break;
		case 'O': rq.cpus = 0; break;
		case 'F':
			if (strcmp(optarg, "keep") && strcmp(optarg, "overwrite"))
				return cli_bad_value("capture", "--full", optarg, "keep or overwrite");
			rq.full = strcmp(optarg, "keep") ? CHAIN_FULL_OVERWRITE : CHAIN_FULL_KEEP;
			break;
		case 'e':
			if (!strcmp(optarg, "auto"))
				rq.memmap = MEMMAP_AUTO;
			else if (!strcmp(optarg, "exclude"))
				rq.memmap = MEMMAP_EXCLUDE;
			else if (!strcmp(optarg, "keep"))
				rq.memmap = MEMMAP_KEEP;
			else
				return cli_bad_value("capture", "--memmap", optarg,
						     "auto, exclude or keep");
			break;
		case 'P':
			/* Unreadable: refused before anything is written. */
			if (keyfile_read(optarg, 0, pk) < 0)
				return EXIT_USAGE;
			rq.pubkey = pk;
			break;
		case 'h': return help(capture_help);
		default: return EXIT_USAGE;
		}
	}
	if (!vmcore || !output)
		return cli_fail("capture", "give %s", !vmcore && !output ? "--vmcore FILE and --output TARGET" :
				!vmcore ? "--vmcore FILE" : "--output TARGET");
	if (cli_operands("capture", argc, argv, 0, ""))
		return EXIT_USAGE;
	return run_capture(vmcore, output, 1, &rq, &hk);
}

/* ---------------- info ---------------- */

static const char info_help[] =
	"usage: kdumpinit info SOURCE [--dump N] [--key FILE] [--json]\n"
	"\n"
	"Prints what a dump device or file holds: state (empty, complete, incomplete),\n"
	"the crashed kernel's release and crash time, pages kept and sizes.\n"
	"A sealed dump shows what is in the clear without --key (its secret key file);\n"
	"with it, everything, each chunk's tag checked.\n"
	"A device holding several dumps (a crash came before the last was saved):\n"
	"each, oldest first, or only dump N (1 the oldest).\n"
	"--json: the same as one JSON object (schema kdumpinit-info/1, docs/CLI.md).\n"
	"Exit: 0 a complete dump, 5 an incomplete one, 4 empty or not a dump device.\n";

static int info_with(int argc, char **argv, uint8_t skb[32])
{
	unsigned only;
	int hk, js = 0, r0 = source_opts("info", info_help, argc, argv, &only, &hk, &js, skb);
	if (r0)
		return r0 < 0 ? EXIT_OK : r0;
	const uint8_t *sk = hk ? skb : NULL;
	const char *src = argv[optind];
	struct json j;
	json_init(&j, stdout);

	/* Every dump on the device, oldest first (or the one --dump names);
	 * the exit code is the worst of them (an incomplete one makes it 5). */
	int worst = EXIT_OK;
	for (unsigned k = only ? only : 1;; k++) {
		struct target t;
		struct dumpfile d;
		int code = EXIT_OK;
		int r = open_dump_nth(src, k, sk, 0, &t, &d, &code);

		/* An unreadable header is said once, by the report's state line. */
		if (r < 0 && r != -ENOENT && code != EXIT_INCOMPLETE)
			return code;
		if (t.fd < 0 && code != EXIT_OK) {
			if (js && j.depth)
				json_end(&j, ']'), json_u64(&j, "exit", code), json_end(&j, '}');
			return code;
		}
		if (js && k == (only ? only : 1)) {
			json_obj(&j, NULL);
			dump_json_head(&j, src, &t);
			json_arr(&j, "dumps");
		}
		if (!js && k > (only ? only : 1))
			putchar('\n');
		code = js ? dump_report_json(&j, &t, &d, r) : dump_report(stdout, src, &t, &d, r);
		unsigned n = d.ndumps;
		if (r == 0 || r == -EBADMSG)
			dumpfile_free(&d);
		target_close(&t);
		if (code > worst || (worst == EXIT_OK && code != EXIT_OK))
			worst = code;
		if (only || k >= n)
			break;
	}
	if (js) {
		json_end(&j, ']');
		json_u64(&j, "exit", worst);
		json_end(&j, '}');
	}
	return worst;
}

int cmd_info(int argc, char **argv)
{
	return with_key(info_with, argc, argv);
}

/* ---------------- save ---------------- */

static const char save_help[] =
	"usage: kdumpinit save SOURCE --output FILE [--dump N] [--format kdump|elf] [--compress zlib|none]\n"
	"                         [--threads N] [--force] [--key FILE] [--quiet]\n"
	"       kdumpinit save [SOURCE] --dir DIR [--min-free SIZE] [--max N] [--keep-device]\n"
	"                         [--mark-incomplete] [--format ...] [--force] [--key FILE] [--quiet]\n"
	"                         [--state DIR]\n"
	"       kdumpinit save [SOURCE] --check [--json]\n"
	"Progress goes to stderr as the capture's does, a line per 5 % step (--quiet: none).\n"
	"A device may hold several dumps (a crash before the last was saved): --output\n"
	"saves the oldest not yet saved, else the newest, or --dump N (1 the oldest);\n"
	"--dir saves each one not yet saved, oldest first.\n"
	"\n"
	"Reads the dump on SOURCE (a claimed device or a capture file), validates every\n"
	"chunk and writes FILE:\n"
	"  --format kdump  (default) kdump-compressed, as makedumpfile writes it: crash,\n"
	"                  drgn (libkdumpfile) and makedumpfile read it. Pages zlib-\n"
	"                  compressed on every core, or raw with --compress none.\n"
	"  --format elf    an ELF vmcore for gdb, crash and drgn: PT_NOTE copied,\n"
	"                  excluded pages as p_filesz < p_memsz.\n"
	"FILE is written under a temporary name (removed on SIGINT, SIGTERM, SIGHUP;\n"
	"one a killed save left is removed by the next) and renamed when complete; an\n"
	"existing FILE is not overwritten unless --force.\n"
	"\n"
	"savecore mode (--dir, for boot): writes DIR/<crash time>/{vmcore,dmesg.txt,info.txt}\n"
	"(mode 0600, temporary names, fsync, rename), then marks the device's dump saved\n"
	"(not with --keep-device; an incomplete dump only with --mark-incomplete, so that\n"
	"the next save tries it again). Refuses when DIR has less free than the output's size\n"
	"(an upper bound; for zlib kdump an estimate from the LZ4 size) plus --min-free,\n"
	"or when others could rearrange DIR; stops, saving nothing, if writing would eat\n"
	"into --min-free. --max N keeps the N dumps saved last into DIR (kdumpinit's own\n"
	"only, see docs/CLI.md). A dump already saved is skipped unless --force. --check\n"
	"exits 0 when SOURCE holds an unsaved dump (a damaged one too), 1 when it holds\n"
	"none (or saved), 4 when SOURCE cannot be read (missing, not claimed, I/O error);\n"
	"with --json it also prints that answer as one JSON object (kdumpinit-save-check/1).\n"
	"--dir also reports a kdumpinit test whose crash came before this boot: passed\n"
	"when it saved a dump of that crash, failed otherwise; the result goes to\n"
	"--state DIR (default " TEST_STATE_DIR ")/last-test, which status shows.\n"
	"SOURCE may be a selector: LABEL=, UUID=, SERIAL=, PARTUUID=, PARTLABEL=.\n"
	"Without SOURCE (--dir, --check) it is the firmware credential kdumpinit.dev\n"
	"(fw_cfg, SMBIOS type 11, device tree, EFI), as the crash kernel reads it.\n"
	"A sealed dump (kdumpinit.pubkey) is opened with --key FILE, its secret key:\n"
	"every chunk's tag is checked; a chunk that fails is left out and said.\n"
	"Without a key --output refuses (exit 2); --dir saves it still sealed, as\n"
	"DIR/<time>/sealed.kdi, which save --key reads later, anywhere. A key that is\n"
	"not the dump's: exit 2, nothing moved.\n"
	"Exit: 0 saved (or nothing to save with --dir), 5 saved but incomplete,\n"
	"4 no dump, 1 I/O error or no space.\n";

/* A temporary name of save --output for OUTPUT: its name, ".partial-"
 * and mkstemp's six letters or digits. */
static int partial_of(const char *name, const char *base)
{
	size_t b = strlen(base), p = strlen(".partial-");

	if (strncmp(name, base, b) || strncmp(name + b, ".partial-", p) || strlen(name) != b + p + 6)
		return 0;
	for (const char *c = name + b + p; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			return 0;
	return 1;
}

/* Removes, saying so, what an earlier save of OUTPUT left when it died
 * where it could not clean up (SIGKILL, a crash, power; a signal it can
 * catch removes its own): OUTPUT.partial-XXXXXX in OUTPUT's directory,
 * which may be anyone's. Only a regular file of ours, never through a
 * link, and not one a save still writes: each holds a lock on its file
 * until it ends. */
static void remove_leftovers(const char *output)
{
	char dbuf[4096], bbuf[4096];
	struct dirent *de;

	snprintf(dbuf, sizeof dbuf, "%s", output);
	snprintf(bbuf, sizeof bbuf, "%s", output);
	const char *dir = dirname(dbuf), *base = basename(bbuf);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int lfd = dfd < 0 ? -1 : dup(dfd);
	DIR *dh = lfd < 0 ? NULL : fdopendir(lfd);
	if (!dh) {
		if (lfd >= 0)
			close(lfd);
		if (dfd >= 0)
			close(dfd);
		return;
	}
	while ((de = readdir(dh))) {
		struct stat a, b;
		if (!partial_of(de->d_name, base))
			continue;
		int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && a.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dfd, de->d_name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
		    unlinkat(dfd, de->d_name, 0) == 0)
			msg("removed %s/%s (%.1f MiB), left by a save of %s that did not finish", dir,
			    de->d_name, a.st_size / 1048576.0, output);
		close(fd);
	}
	closedir(dh);
	close(dfd);
}

/* OUTPUT.partial-XXXXXX, new, into tmp, locked for as long as this save
 * writes it (remove_leftovers leaves it alone). Another save's
 * remove_leftovers may take the name between mkstemp and the lock, and
 * remove it: then another name. The fd or -errno. */
static int open_partial(const char *output, char *tmp, size_t sz)
{
	for (int k = 0; k < 8; k++) {
		struct stat a, b;
		snprintf(tmp, sz, "%s.partial-XXXXXX", output);
		int fd = mkstemp(tmp);
		if (fd < 0)
			return -errno;
		fchmod(fd, 0600);	/* a vmcore holds the machine's secrets */
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 && lstat(tmp, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
	return -EEXIST;
}

/* save --check --json: its answer as one object (schema
 * kdumpinit-save-check/1): the exit code and what it means. */
static void check_json(const char *src, int code)
{
	struct json j;

	json_init(&j, stdout);
	json_obj(&j, NULL);
	json_str(&j, "schema", "kdumpinit-save-check/1");
	json_str(&j, "source", src);
	json_u64(&j, "exit", code);
	json_str(&j, "answer", code == 0 ? "dump" : code == 1 ? "none" : "unreadable");
	json_end(&j, '}');
}

/* save --dir at boot: the report of a kdumpinit test whose crash came
 * before this boot, if there is one (host/testmark.h). */
static void test_report(const char *state, const struct test_saved *s, const char *why_not)
{
	char boot[40];

	boot_id_read("", boot);
	testmark_conclude(state, boot, s, why_not);
}

static int save_with(int argc, char **argv, uint8_t skb[32])
{
	static const struct option opts[] = {
		{ "output", 1, 0, 'o' }, { "format", 1, 0, 'f' }, { "force", 0, 0, 'F' },
		{ "compress", 1, 0, 'c' }, { "threads", 1, 0, 't' },
		{ "dir", 1, 0, 'd' }, { "min-free", 1, 0, 'm' }, { "max", 1, 0, 'x' },
		{ "keep-device", 0, 0, 'k' }, { "check", 0, 0, 'C' },
		{ "mark-incomplete", 0, 0, 'I' }, { "dump", 1, 0, 'D' }, { "key", 1, 0, 'K' },
		{ "json", 0, 0, 'J' }, { "quiet", 0, 0, 'q' }, { "state", 1, 0, 'S' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct savecore_opts sc = { 0 };
	struct test_saved newest = { .path = "" };
	const char *state = TEST_STATE_DIR;
	const char *output = NULL, *format = "kdump";
	struct save_opts so = { .zlib = 1, .threads = online_cpus() };
	int force = 0, c, js = 0, quiet = 0, state_given = 0;
	unsigned which = 0;
	uint64_t v;

	while ((c = cli_next("save", argc, argv, "o:f:h", opts)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'f': format = optarg; break;
		case 'F': force = 1; break;
		case 'c':
			if (strcmp(optarg, "zlib") && strcmp(optarg, "none"))
				return cli_bad_value("save", "--compress", optarg, "zlib or none");
			so.zlib = !strcmp(optarg, "zlib");
			break;
		case 't':
			if (parse_u64(optarg, 0, &v) < 0 || v > 256)
				return cli_bad_value("save", "--threads", optarg, "0 (one per CPU) to 256");
			so.threads = v ? v : online_cpus();
			break;
		case 'd': sc.dir = optarg; break;
		case 'K':
			if (keyfile_read(optarg, 1, skb) < 0)
				return EXIT_USAGE;
			sc.key = skb;
			break;
		case 'm':
			if (parse_size(optarg, &sc.min_free) < 0)
				return cli_bad_value("save", "--min-free", optarg, "a size (512M, 2GiB)");
			break;
		case 'x':
			if (parse_u64(optarg, 0, &v) < 0 || v < 1 || v > 1000)
				return cli_bad_value("save", "--max", optarg, "a count, 1 to 1000");
			sc.max = v;
			break;
		case 'k': sc.keep_device = 1; break;
		case 'I': sc.mark_incomplete = 1; break;
		case 'C': sc.check = 1; break;
		case 'J': js = 1; break;
		case 'q': quiet = 1; break;
		case 'S': state = optarg; state_given = 1; break;
		case 'D':
			if (parse_u64(optarg, 0, &v) < 0 || v < 1 || v > KDI_CHAIN_MAX)
				return cli_bad_value("save", "--dump", optarg, "a dump's number, 1 the oldest");
			which = v;
			break;
		case 'h': return help(save_help);
		default: return EXIT_USAGE;
		}
	}
	if (!!output + !!sc.dir + sc.check != 1)
		return cli_fail("save", "give one of --output FILE, --dir DIR and --check");
	if (js && !sc.check)
		return cli_fail("save", "--json goes with --check");
	if (state_given && !sc.dir)
		return cli_fail("save", "--state goes with --dir");
	if (optind < argc - 1)
		return cli_fail("save", "unexpected argument '%s'", argv[optind + 1]);
	if (optind == argc && output)
		return cli_fail("save", "give the dump device or file (SOURCE) to save to %s", output);
	if (strcmp(format, "elf") && strcmp(format, "kdump"))
		return cli_bad_value("save", "--format", format, "kdump or elf");
	if (which && !output) {
		err("--dump picks the dump --output saves; save --dir saves every dump not yet saved");
		return EXIT_USAGE;
	}
	const char *src = optind < argc ? argv[optind] : NULL;
	char fwdev[sizeof ((struct config *)0)->dev];
	if (!src) {
		/* KDUMPINIT_FW_ROOT: a fake /sys and /proc for the tests. */
		const char *root = getenv("KDUMPINIT_FW_ROOT");
		const char *from = firmware_device(root && *root ? root : "/", fwdev, sizeof fwdev);
		if (!from) {
			/* At boot with nothing configured: nothing to do, not a failure. */
			msg("no SOURCE and no firmware credential kdumpinit.dev: nothing to save");
			if (js)
				check_json(NULL, EXIT_SYSTEM);
			if (sc.dir)
				test_report(state, NULL, "no dump device is configured: save had nothing to read");
			return sc.check ? EXIT_SYSTEM : EXIT_OK;
		}
		msg("dump device %s, from the firmware (%s)", fwdev, from);
		src = fwdev;
	}
	if (sc.dir || sc.check) {
		sc.force = force;
		sc.quiet = quiet;
		sc.elf = !strcmp(format, "elf");
		sc.so = so;
		sc.newest = sc.dir ? &newest : NULL;
		int code = savecore(src, &sc);
		if (js)
			check_json(src, code);
		if (sc.dir) {
			char why[1400];
			if (code == EXIT_OK || code == EXIT_INCOMPLETE)
				snprintf(why, sizeof why, "%s held no dump from the test's crash: the crash "
					 "kernel did not capture it (kdumpinit info %s; its console says why)",
					 src, src);
			else
				snprintf(why, sizeof why, "saving from %s failed (exit %d): see this boot's "
					 "kdumpinit-save.service log", src, code);
			test_report(state, newest.path[0] ? &newest : NULL, why);
		}
		return code;
	}
	struct stat st;
	if (!force && stat(output, &st) == 0) {
		err("%s exists; not overwriting it (use --force)", output);
		return EXIT_USAGE;
	}

	struct target t;
	struct dumpfile d;
	int code = EXIT_OK;
	int r = open_dump_nth(src, which, sc.key, DUMPFILE_DEFER_PAGES, &t, &d, &code);
	if (code == EXIT_INCOMPLETE)
		dump_unreadable(&t, &d, r);
	if (r == 0 && dump_locked(src, &d, sc.key) != EXIT_OK) {
		dumpfile_free(&d);
		target_close(&t);
		return EXIT_USAGE;
	}
	if (d.ndumps > 1)
		msg("%s holds %u dumps: saving dump %u (%s; --dump N for another, 1 the oldest)",
		    src, d.ndumps, d.position, which ? "as asked" :
		    d.saved ? "the newest: all are saved" : "the oldest not yet saved");
	if (r == -ENOENT && code == EXIT_OK) {
		err("%s holds no dump (empty): nothing saved", src);
		target_close(&t);
		return EXIT_TARGET;
	}
	if (r < 0) {
		target_close(&t);
		return code;
	}
	int complete = dumpfile_complete(&d);
	char why[200];
	if (!complete)
		warn("%s: the dump is incomplete (%s); saving the intact part", src,
		     dump_incomplete_why(&d, why, sizeof why));

	/* A unique name next to OUTPUT, which may be anyone's directory:
	 * save --dir writes fixed names, but into a directory of its own. */
	char tmp[4096];
	remove_leftovers(output);
	int fd = open_partial(output, tmp, sizeof tmp);
	if (fd < 0) {
		err("cannot create a temporary file next to %s: %s", output, errstr(fd));
		dumpfile_free(&d);
		target_close(&t);
		return EXIT_SYSTEM;
	}
	/* Interrupted, it goes; published, it stays (sigclean.h). */
	struct sigclean clean = { 1, { { AT_FDCWD, tmp, 0 } } };
	sigset_t held;
	sigclean_arm(&clean);
	struct save_result res;
	struct save_progress sp;
	if (!quiet) {
		save_progress_start(&sp, d.start.page_size);
		so.progress = save_progress_tick;
		so.progress_arg = &sp;
	}
	r = !strcmp(format, "elf") ? save_elf(&d, fd, &so, &res) : save_kdump(&d, fd, &so, &res);
	if (!r && fsync(fd) < 0)
		r = -errno;
	sigclean_hold(&held);
	r = commit_tmp_at(AT_FDCWD, fd, tmp, output, r);
	sigclean_disarm();
	sigclean_release(&held);
	if (r < 0) {
		err("writing %s failed: %s; nothing left under that name", output, errstr(r));
		code = EXIT_SYSTEM;
	} else {
		if (!strcmp(format, "elf"))
			msg("saved %s: ELF, %llu pages in %llu PT_LOADs, %.1f MiB%s", output,
			    (unsigned long long)res.pages, (unsigned long long)res.phnum,
			    res.bytes / 1048576.0, complete ? "" : " (incomplete dump)");
		else
			msg("saved %s: kdump-compressed (%s), %llu pages, %.1f MiB%s", output,
			    so.zlib ? "zlib" : "raw", (unsigned long long)res.pages, res.bytes / 1048576.0,
			    complete ? "" : " (incomplete dump, marked so)");
		if (res.bad_pages)
			warn("%llu pages did not decode and were written as zeros",
			     (unsigned long long)res.bad_pages);
		code = (complete && !res.bad_pages) ? EXIT_OK : EXIT_INCOMPLETE;
	}
	dumpfile_free(&d);
	target_close(&t);
	return code;
}

int cmd_save(int argc, char **argv)
{
	return with_key(save_with, argc, argv);
}

/* ---------------- format ---------------- */

static const char format_help[] =
	"usage: kdumpinit format TARGET [--label L] [--size BYTES] [--force]\n"
	"\n"
	"Claims TARGET (a block device or a file) for dumps: writes the kdumpinit\n"
	"superblock with a new UUID. Refuses, unless --force, a target holding any\n"
	"filesystem, swap, LUKS, RAID/LVM or partition-table signature, unrecognised\n"
	"data, or an existing claim; refuses always an LVM volume, md array or\n"
	"dm-crypt mapping (no crash kernel assembles them). A file that does not\n"
	"exist is created with --size.\n"
	"  --label L      up to 63 bytes, for kdumpinit.dev=LABEL=L: printable ASCII,\n"
	"                 no space, quote, backslash or comma\n"
	"  --size BYTES   size of a new file (K, M, G suffixes)\n"
	"  --force        overwrite what is there (it is lost)\n"
	"Exit: 0 claimed, 4 refused, 2 usage, 1 I/O error.\n";

/* A refused or failed format leaves nothing half-done: a file it created
 * goes again. Returns code. */
static int format_abandon(int fd, const char *path, int created, int code)
{
	close(fd);
	if (created)
		unlink(path);
	return code;
}

int cmd_format(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "label", 1, 0, 'L' }, { "size", 1, 0, 's' }, { "force", 0, 0, 'F' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *label = NULL;
	uint64_t size = 0;
	int force = 0, c, created = 0;

	while ((c = cli_next("format", argc, argv, "L:s:Fh", opts)) != -1) {
		switch (c) {
		case 'L':
			/* A label must reach the crash kernel whole, as one word
			 * of its command line (kdumpinit.dev=LABEL=L): the rule of
			 * config/target.h, and no ',' (which separates selectors). */
			if (!optarg[0] || strlen(optarg) >= KDI_LABEL_MAX || strchr(optarg, ',') ||
			    !selector_text_ok(optarg, strlen(optarg))) {
				err("--label '%s': a label is 1 to %d bytes of printable ASCII without "
				    "space, quote, backslash or comma (it goes whole onto the crash "
				    "kernel's command line)", optarg, KDI_LABEL_MAX - 1);
				return EXIT_USAGE;
			}
			label = optarg;
			break;
		case 's':
			if (parse_size(optarg, &size) < 0)
				return cli_bad_value("format", "--size", optarg, "a size (64M, 2GiB)");
			break;
		case 'F': force = 1; break;
		case 'h': return help(format_help);
		default: return EXIT_USAGE;
		}
	}
	if (cli_operands("format", argc, argv, 1, "the device or file to claim (TARGET)"))
		return EXIT_USAGE;
	const char *path = argv[optind];

	mode_t kind;
	int fd = open_file_or_blockdev(path, O_RDWR | O_CLOEXEC | O_EXCL, 0, &kind);
	if (fd == -ENOTBLK || fd == -EISDIR) {
		err("%s is %s, not a regular file or block device: not claimed", path,
		    file_kind_name(fd == -EISDIR ? S_IFDIR : kind));
		return EXIT_TARGET;
	}
	if (fd == -ENOENT && size) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && ftruncate(fd, size) < 0) {
			err("cannot size %s: %s", path, strerror(errno));
			close(fd);
			unlink(path);
			return EXIT_SYSTEM;
		}
		fd = fd < 0 ? -errno : fd;
		created = fd >= 0 ? 1 : -1;	/* -1: tried, and it could not be made */
	}
	if (fd < 0) {
		int e = -fd;
		if (e == ENOENT && created < 0)
			err("cannot create %s: the directory it would go in does not exist", path);
		else if (e == ENOENT)
			err("%s does not exist (give --size to create a file)", path);
		else if (e == EBUSY)
			err("%s is in use (mounted or held by another program): not claimed", path);
		else
			err("cannot open %s: %s", path, strerror(e));
		return e == ENOENT || e == EBUSY ? EXIT_TARGET : EXIT_SYSTEM;
	}
	int blk;
	int64_t sz = fd_size(fd, &blk);
	if (sz < 0) {
		err("cannot read the size of %s: %s", path, errstr((int)sz));
		return format_abandon(fd, path, created, EXIT_SYSTEM);
	}
	if ((uint64_t)sz < KDI_MIN_DEVICE) {
		err("%s is %lld bytes; a dump target needs at least %u", path, (long long)sz,
		    KDI_MIN_DEVICE);
		return format_abandon(fd, path, created, EXIT_TARGET);
	}
	/* A stacked device the crash kernel cannot rebuild would never see
	 * a dump; one it can is rebuilt from the table `arm --dev` records
	 * (config/stack.h), and is claimed through the device here as any. */
	struct stat st;
	char what[600] = "";
	static struct dm_table dt;
	static const struct sysroot sysroot = { "/sys", "/dev" };
	int stacked = blk && fstat(fd, &st) == 0 ?
		stack_record(&sysroot, NULL, major(st.st_rdev), minor(st.st_rdev), &dt, what, sizeof what) :
		STACK_PLAIN;
	if (stacked < 0) {
		err("%s is %s: not claimed", path, what);
		return format_abandon(fd, path, created, EXIT_TARGET);
	}
	if (stacked == STACK_PLAIN && what[0])
		msg("%s is %s", path, what);
	if (stacked == STACK_TABLE)
		msg("%s is %s: `kdumpinit arm --dev` records its table for the crash kernel "
		    "(kdumpinit.dm=); arm again whenever the volume changes", path, what);
	struct probe p;
	int r = probe_fd(&p, fd, sz);
	if (r < 0) {
		err("cannot read %s: %s", path, errstr(r));
		return format_abandon(fd, path, created, EXIT_SYSTEM);
	}
	if (!created && !force && (p.foreign || p.nonzero || p.claimed || p.claim_damaged)) {
		if (p.claimed) {
			char u[37];
			uuid_format(p.sb.uuid, u);
			err("%s is already claimed (UUID %s): use --force to claim it anew "
			    "(a dump on it is lost)", path, u);
		} else {
			err("%s holds %s: refusing to overwrite it (use --force if it is disposable)",
			    path, probe_describe(&p));
		}
		close(fd);
		return EXIT_TARGET;
	}

	/* Zero the head up to the stream start, so an older dump or a stale
	 * signature never shows through; with --force also the tail, where a
	 * GPT keeps its backup. */
	uint8_t *z = calloc(1, KDI_DATA_OFFSET);
	struct kdi_super sb;
	uint8_t area[KDI_SB_AREA];
	r = z ? 0 : -ENOMEM;
	if (!r)
		r = write_full_at(fd, z, KDI_DATA_OFFSET, 0);
	if (!r && force && (uint64_t)sz >= 2 * KDI_DATA_OFFSET)
		r = write_full_at(fd, z, KDI_DATA_OFFSET, sz - KDI_DATA_OFFSET);
	super_init(&sb, sz, label);
	super_encode(&sb, area);
	if (!r)
		r = write_full_at(fd, area, sizeof area, 0);
	if (!r && fsync(fd) < 0)
		r = -errno;
	free(z);
	if (r < 0) {
		err("writing the claim to %s failed: %s", path, errstr(r));
		return format_abandon(fd, path, created, EXIT_SYSTEM);
	}
	close(fd);
	char u[37];
	uuid_format(sb.uuid, u);
	printf("%s: claimed for kdumpinit, UUID %s%s%s, %.1f MiB\n", path, u,
	       label ? ", label " : "", label ? label : "", sz / 1048576.0);
	return EXIT_OK;
}

/* ---------------- dmesg ---------------- */

static const char dmesg_help[] =
	"usage: kdumpinit dmesg SOURCE [--dump N] [--key FILE]\n"
	"\n"
	"Prints the crashed kernel's log, as makedumpfile --dump-dmesg does. SOURCE is\n"
	"a dump device or file (the log the capture wrote before the pages), an ELF\n"
	"vmcore such as /proc/vmcore, or a file save wrote (ELF or kdump-compressed):\n"
	"read from the 5.10+ printk ring buffer through VMCOREINFO, no vmlinux needed.\n"
	"A sealed dump needs --key (its secret key).\n"
	"A damaged ring (wild head/tail ids) is scanned for records, which are printed\n"
	"after a line saying the log was salvaged.\n"
	"A device holding several dumps: --dump N (1 the oldest); by default the oldest\n"
	"not yet saved, else the newest.\n"
	"Exit: 0 printed, 3 no log in a vmcore (nothing salvaged), 4 no dump / no log on\n"
	"the device.\n";

/* The log from a vmcore or a saved dump (ELF or kdump-compressed), read
 * through its memory. 0 with *code when it was one (said), else the
 * error: not a vmcore, the caller tries a dump device. */
static int dmesg_from_vmcore(const char *path, int *code)
{
	struct vmcore vc;
	enum vmcore_err why;
	int r = vmcore_open_saved(&vc, path, &why);

	if (r < 0 && (why == VMC_BAD_KDUMP || why == VMC_KDUMP_CODEC)) {
		err("%s is %s: no log read", path, vmcore_strerror(why));
		*code = EXIT_INPUT;
		return 0;
	}
	if (r < 0)
		return r;
	struct kmem km;
	char *text = NULL;
	size_t len = 0;
	struct dmesg_stat st;
	r = kmem_init(&km, &vc, arch_lookup(vc.e_machine));
	if (!r)
		r = dmesg_read(&km, 1ull << 30, &text, &len, &st);
	if (r == 0) {
		if (st.salvaged)
			warn("%s: the log ring's head/tail ids are not usable: %u records salvaged by "
			     "scanning its %llu descriptors (%u rejected); records may be missing",
			     path, st.records, (unsigned long long)st.scanned, st.rejected);
		fwrite(text, 1, len, stdout);
		*code = EXIT_OK;
	} else {
		err("%s: no log: %s", path, r == -ENOENT ? "VMCOREINFO has no printk ring buffer "
		    "(kernel older than 5.10?)" :
		    r == -EFBIG ? "its ring buffer claims more than 1 GiB" :
		    r == -ENODATA ? "the ring is damaged and no record in it could be salvaged" :
		    !km.ok ? "page tables cannot be walked" :
		    r == -EFAULT ? "its memory is not in the dump (left out, or cut short)" :
		    r == -EIO ? "its memory does not read (a read error, or a page that does not "
		    "decode)" : errstr(r));
		*code = EXIT_INPUT;
	}
	free(text);
	kmem_fini(&km);
	vmcore_close(&vc);
	return 0;
}

static int dmesg_with(int argc, char **argv, uint8_t skb[32])
{
	unsigned which;
	int hk, r0 = source_opts("dmesg", dmesg_help, argc, argv, &which, &hk, NULL, skb);
	if (r0)
		return r0 < 0 ? EXIT_OK : r0;
	const uint8_t *sk = hk ? skb : NULL;
	char *src = argv[optind];
	int code = EXIT_OK;
	if (!which && dmesg_from_vmcore(src, &code) == 0)
		return code;

	struct target t;
	struct dumpfile d;
	int r = open_dump_nth(src, which, sk, 0, &t, &d, &code);
	if (code == EXIT_INCOMPLETE)
		dump_unreadable(&t, &d, r);
	if (r == -ENOENT && code == EXIT_OK) {
		err("%s holds no dump (empty)", src);
		code = EXIT_TARGET;
	} else if (r == 0 && dump_locked(src, &d, sk) != EXIT_OK) {
		code = EXIT_USAGE;
	} else if (r == 0 || (r < 0 && d.dmesg)) {
		if (d.dmesg) {
			fwrite(d.dmesg, 1, d.dmesg_len, stdout);
			code = EXIT_OK;
		} else {
			err("%s: the dump holds no kernel log", src);
			code = EXIT_TARGET;
		}
	}
	if (r == 0 || r == -EBADMSG)
		dumpfile_free(&d);
	target_close(&t);
	return code;
}

int cmd_dmesg(int argc, char **argv)
{
	return with_key(dmesg_with, argc, argv);
}
