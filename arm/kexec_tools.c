/* The kexec-tools fallback for kernels without kexec_file_load.
 *
 * Why a fix is needed: kexec-tools 2.0.25 (Debian 12) builds the arm64 ELF
 * core header from /proc/kallsyms' `_text`. A kernel without
 * CONFIG_KALLSYMS_ALL has none, and kexec-tools then uses page_offset 0: a
 * garbage kernel-text PT_LOAD, a /proc/vmcore of 2^64-ish bytes in the
 * crash kernel, and a synchronous external abort on reading it. `_stext`
 * in its place gives the right header (the text PT_LOAD then starts at
 * __pa(_stext), vaddr - paddr = kimage_voffset). kexec-tools has no
 * option for it, so it gets a /proc/kallsyms that has the line: a copy
 * with `_text` appended, bind-mounted over the real one in a mount
 * namespace of its own. Nothing outside that process sees the change. */
#define _GNU_SOURCE
#include "kexec_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "root.h"

/* The address of NAME in kallsyms TEXT ("ADDR TYPE NAME[\t[MOD]]" lines),
 * 0 when absent or hidden (kptr_restrict prints zeros). */
static uint64_t kallsyms_addr(const char *text, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = text; p && *p;) {
		const char *eol = strchr(p, '\n');
		const char *sp = strchr(p, ' ');
		if (sp && (!eol || sp < eol) && sp[1] && sp[2] == ' ' &&
		    !strncmp(sp + 3, name, nl) && (sp[3 + nl] == '\n' || sp[3 + nl] == 0))
			return strtoull(p, NULL, 16);
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

int kallsyms_text_fix(const char *text, uint64_t *stext)
{
	if (kallsyms_addr(text, "_text"))
		return 0;
	*stext = kallsyms_addr(text, "_stext");
	return *stext ? 1 : -ENOENT;
}

static const char *kexec_path(void)
{
	const char *env = getenv("KDUMPINIT_KEXEC");
	if (env && *env)
		return env;
	if (access("/usr/sbin/kexec", X_OK) == 0)
		return "/usr/sbin/kexec";
	return "/sbin/kexec";
}

/* The fixed copy, in a file of its own: a memfd cannot be bind-mounted
 * (its filesystem is internal). /run first (tmpfs), then /tmp. 0 with
 * the name in out, or -errno. */
static int write_fixed(const char *root, const char *fixed, size_t flen, char *out, size_t sz)
{
	static const char *const dirs[] = { "/run", "/tmp" };
	int e = -ENOENT;

	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		char d[512];
		snprintf(out, sz, "%s/kdumpinit-kallsyms.XXXXXX", root_path(root, dirs[i], d, sizeof d));
		int fd = mkstemp(out);
		if (fd < 0) {
			e = -errno;
			continue;
		}
		e = write_full(fd, fixed, flen);
		if (close(fd) < 0 && !e)
			e = -errno;
		if (!e)
			return 0;
		unlink(out);
	}
	return e;
}

/* In the child: the fixed kallsyms (file FIXED) over KALLSYMS, then
 * kexec. Never returns; exit 126 when the namespace cannot be set up,
 * 127 no kexec. */
static void child(const char *kallsyms, const char *fixed, char **argv)
{
	if (fixed) {
		/* Private first, so the bind does not propagate to the host's
		 * namespace (systemd makes / shared). */
		const char *step = "unshare(CLONE_NEWNS)";
		int r = unshare(CLONE_NEWNS);
		if (!r) {
			step = "making / private";
			r = mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
		}
		if (!r) {
			step = "the bind mount";
			r = mount(fixed, kallsyms, NULL, MS_BIND, NULL);
		}
		int e = errno;
		unlink(fixed);	/* the bind keeps it for as long as kexec runs */
		if (r) {
			err("kexec-tools fallback: cannot put the fixed kallsyms over %s (%s): %s",
			    kallsyms, step, strerror(e));
			_exit(126);
		}
	}
	execv(argv[0], argv);
	err("kexec-tools fallback: cannot run %s: %s", argv[0], strerror(errno));
	_exit(127);
}

int kexec_tools_load(const char *root, const char *kernel, const char *initrd, const char *cl)
{
	char kallsyms[512];
	size_t len = 0;
	uint64_t stext = 0;
	char line[96], fixed[600];

	warn("this kernel has no kexec_file_load (CONFIG_KEXEC_FILE unset): falling back to "
	     "kexec-tools' kexec -p");
	root_path(root, "/proc/kallsyms", kallsyms, sizeof kallsyms);
	char *text = read_all_file(kallsyms, sizeof line, &len);
	if (!text) {
		int e = errno;
		err("kexec-tools fallback: cannot read %s: %s", kallsyms, strerror(e));
		return -e;
	}
	int fix = kallsyms_text_fix(text, &stext);
	if (fix < 0) {
		free(text);
		err("kexec-tools fallback: %s has neither _text nor _stext with an address "
		    "(kptr_restrict?): kexec would build a broken crash header; not arming", kallsyms);
		return -ENOENT;
	}
	if (fix) {
		int n = snprintf(line, sizeof line, "%016" PRIx64 " T _text\n", stext);
		memcpy(text + len, line, (size_t)n);
		len += (size_t)n;
		msg("kallsyms has no _text (CONFIG_KALLSYMS_ALL unset): kexec gets _text = _stext "
		    "(0x%" PRIx64 ") so that its crash header is right", stext);
		int r = write_fixed(root, text, len, fixed, sizeof fixed);
		if (r < 0) {
			free(text);
			err("kexec-tools fallback: cannot write the fixed kallsyms in /run or /tmp: %s",
			    errstr(r));
			return r;
		}
	}

	char *ini = NULL, *cmd = NULL;
	/* No initrd: the dedicated kernel carries its own. */
	if ((initrd && asprintf(&ini, "--initrd=%s", initrd) < 0) ||
	    asprintf(&cmd, "--command-line=%s", cl) < 0) {
		free(text);
		free(ini);
		return -ENOMEM;
	}
	/* -c: the kexec_load syscall (the file one is what is missing). */
	char kx[512], kn[512];
	snprintf(kx, sizeof kx, "%s", kexec_path());
	snprintf(kn, sizeof kn, "%s", kernel);
	char *argv[] = { kx, "-c", "-p", kn, ini ? ini : cmd, ini ? cmd : NULL, NULL };
	pid_t pid = fork();
	if (pid == 0)
		child(kallsyms, fix ? fixed : NULL, argv);
	int e = errno, st = 0;
	free(text);
	if (pid < 0) {
		if (fix)
			unlink(fixed);
		free(ini);
		free(cmd);
		err("kexec-tools fallback: fork: %s", strerror(e));
		return -e;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	/* 126: the child said why; anything else is kexec's own failure
	 * (127 also when its dynamic loader finds no library). */
	if (!ok && !(WIFEXITED(st) && WEXITSTATUS(st) == 126))
		err("kexec-tools fallback: %s -c -p failed (%s %d)", argv[0],
		    WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	free(ini);
	free(cmd);
	return ok ? 0 : -EIO;
}

int kexec_tools_unload(void *ctx)
{
	char kx[512];
	int st = 0;

	(void)ctx;
	snprintf(kx, sizeof kx, "%s", kexec_path());
	char *argv[] = { kx, "-p", "-u", NULL };
	pid_t pid = fork();
	if (pid == 0) {
		execv(kx, argv);
		_exit(127);	/* the caller names the failure, once */
	}
	if (pid < 0)
		return -errno;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	/* 127: no kexec (or its loader found no library) */
	return WIFEXITED(st) && WEXITSTATUS(st) == 127 ? -ENOENT : -EIO;
}
