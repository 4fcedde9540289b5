/* PID-1 mode: the init of the crash kernel. Every path ends in the
 * configured final action; main never returns, nothing waits forever. */
#include "pid1.h"
#include "devwait.h"
#include "../net/netdump.h"
#include "hwdog.h"
#include "run_capture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../config/config.h"
#include "../config/firmware.h"
#include "../config/stack.h"
#include "../config/target.h"
#include "../lib/exitcode.h"
#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/rng.h"
#include "../lib/util.h"

#define CONF_FILE "/etc/kdumpinit.conf"
#define MODULE_LIST "/etc/kdumpinit.modules"
#define VMCORE "/proc/vmcore"
#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE 4
#endif

static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Block every asynchronous signal (we take none: there is nobody to send
 * them but the kernel) and leave the synchronous faults deliverable, so a
 * bad page under an mmap window raises SIGBUS we can handle. */
static void block_signals(void)
{
	sigset_t s;
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT };

	sigfillset(&s);
	for (size_t i = 0; i < ARRAY_SIZE(faults); i++)
		sigdelset(&s, faults[i]);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

/* Skips a filesystem that is already there (marker exists): a test init
 * or an outer namespace may have mounted it, and stacking a second proc
 * would hide what it set up. */
static void mount_one(const char *src, const char *dir, const char *type, const char *marker)
{
	if (access(marker, F_OK) == 0)
		return;
	mkdir(dir, 0755);
	if (mount(src, dir, type, MS_NOSUID | MS_NOEXEC, NULL) < 0 && errno != EBUSY)
		warn("mounting %s on %s failed: %s", type, dir, strerror(errno));
}

/* The kernel hands init /dev/console on 0-2 when the initramfs has that
 * node; without it they are closed and we open it ourselves. Fds that are
 * already open are kept: a test init may have pointed them somewhere. */
static void setup_console(void)
{
	int fd = -1;

	if (fcntl(0, F_GETFD) >= 0 && fcntl(1, F_GETFD) >= 0 && fcntl(2, F_GETFD) >= 0)
		goto kmsg;
	fd = open("/dev/console", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;		/* keep what the kernel gave us */
	for (int i = 0; i < 3; i++)
		dup2(fd, i);
	if (fd > 2)
		close(fd);
kmsg:;
	/* /dev/kmsg rate-limits writers (printk.devkmsg=ratelimit), which
	 * would drop our lines from the crash kernel's log in a burst. Only
	 * in a crash kernel, which is ours alone: PID 1 of a test namespace
	 * on a normal system must not change that system's setting. */
	if (access("/proc/vmcore", F_OK) == 0) {
		int d = open("/proc/sys/kernel/printk_devkmsg", O_WRONLY | O_CLOEXEC);
		/* Best effort: printk.devkmsg=off on the command line locks
		 * it, and the write then fails. */
		if (d >= 0) {
			write_full(d, "on\n", 3);
			close(d);
		}
	}
	int k = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (k >= 0)
		log_set_kmsg(k);
}

/* ---- final action ---- */

static volatile int final_started;
/* The hardware watchdog. Not in pid1_main's frame like the rest: the
 * final action, reached from every path and from the stall thread too,
 * must pet it up to reboot(2) or stop it before a power-off. */
static struct hwdog hwdog = HWDOG_INIT;

static void do_reboot_cmd(int cmd)
{
	if (cmd == RB_AUTOBOOT) {
		reboot(cmd);
		return;
	}
	/* The kernel kills the caller of halt/power-off when it is PID 1, so
	 * a child asks. */
	pid_t p = fork();
	if (p == 0) {
		reboot(cmd);
		_exit(1);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* sync() can block on a wedged device; run it in a child and give it a
 * bounded time. The dump itself was already fdatasync'd. */
static void bounded_sync(unsigned seconds)
{
	pid_t p = fork();

	if (p == 0) {
		hwdog_drop_in_child(&hwdog);
		sync();
		_exit(0);
	}
	if (p < 0)
		return;
	for (unsigned i = 0; i < seconds * 10; i++) {
		if (waitpid(p, NULL, WNOHANG) == p)
			return;
		if (i % 10 == 0)
			hwdog_pet(&hwdog);
		sleep_ms(100);
	}
	warn("sync did not finish in %u s; going on", seconds);
}

static void final_action(enum final_action a) __attribute__((noreturn));
static void final_action(enum final_action a)
{
	static const int cmds[] = { [FINAL_REBOOT] = RB_AUTOBOOT,
				    [FINAL_POWEROFF] = RB_POWER_OFF,
				    [FINAL_HALT] = RB_HALT_SYSTEM };
	final_started = 1;
	bounded_sync(10);
	msg("final action: %s", final_action_name(a));
	/* reboot: the watchdog stays armed, petted just before, so a reboot
	 * that hangs still ends in a reset and one that works beats it.
	 * poweroff and halt must not be undone by a reset: stop it. */
	if (a == FINAL_REBOOT) {
		hwdog_pet(&hwdog);
	} else if (hwdog.fd >= 0) {
		int r = hwdog_disarm(&hwdog);
		if (r == -EBUSY && hwdog_nowayout(&hwdog))
			warn("watchdog: the driver has nowayout set; it will reset the machine "
			     "within %u s", hwdog.timeout_s);
		else if (r == -EBUSY)
			warn("watchdog: still running after the magic close; it will reset the "
			     "machine within %u s", hwdog.timeout_s);
		else if (r < 0)
			warn("watchdog: stopping it failed (%s); it may reset the machine",
			     errstr(r));
		else
			msg("watchdog: stopped (magic close) before %s", final_action_name(a));
	}
	do_reboot_cmd(cmds[a]);
	err("%s failed (%s); rebooting instead", final_action_name(a), strerror(errno));
	for (;;) {
		reboot(RB_AUTOBOOT);
		err("reboot failed (%s); retrying in 10 s", strerror(errno));
		sleep_ms(10000);
		reap();
	}
}

/* ---- watchdog: a capture that stops progressing is given up, tried
 * once more without its optional steps when it stalled before its pages,
 * and otherwise ends in the final action instead of hanging the machine ---- */

/* The same thread pets the hardware watchdog (init/hwdog), by one rule:
 * before the capture, while PID 1 goes through its bounded steps (the
 * device wait), every second until setup_until; during the capture, only
 * when the heartbeat moved since the last look. A capture that stops
 * moving is then reset by the hardware after its timeout (or given up by
 * the stall rule above first, if kdumpinit.stall is shorter); one that
 * moves, however slowly, is petted at each block and each step. After
 * that the final action pets it itself.
 *
 * The capture runs in a child process, so that a stalled one can be
 * stopped whatever it is doing (a loop in corrupt memory cannot be
 * interrupted from another thread), and its state is in memory both
 * share (live). */
#define KILL_GRACE_S 30		/* a child killed and not gone: stuck in the kernel */

struct watchdog {
	struct capture_live *live;	/* shared with the capture's process */
	volatile int armed;
	unsigned stall_s;
	enum final_action final;
	double setup_until;		/* now_mono(): pet without progress until then */
	_Atomic int child;		/* the capture's pid while it runs, else 0 */
	_Atomic int stalled;		/* it was killed for a stall */
	_Atomic int stage;		/* ... at this stage (enum capture_stage) */
	int shared;			/* live is shared memory: a child may run it */
};

/* What the device holds, as far as the run's shared state says, for the
 * line that gives the capture up. */
static void say_device(const struct capture_live *l, char *buf, size_t n)
{
	int st = atomic_load_explicit(&l->stage, memory_order_relaxed);
	uint64_t pages = atomic_load_explicit(&l->pages, memory_order_relaxed);
	uint64_t bytes = atomic_load_explicit(&l->flushed, memory_order_relaxed);

	switch (st) {
	case CAPTURE_READING:
		snprintf(buf, n, "nothing was written: it stalled reading the crashed kernel "
			 "(its vmcore, page filter or log)");
		break;
	case CAPTURE_LOG_WRITTEN:
	case CAPTURE_STEP_DEBUGGER:
	case CAPTURE_STEP_MEMMAP:
		snprintf(buf, n, "the log is on the device, no page yet (it stalled in %s)",
			 st == CAPTURE_STEP_DEBUGGER ? "the debugger-page finder" :
			 st == CAPTURE_STEP_MEMMAP ? "the memory map's step" : "its set-up");
		break;
	default:
		snprintf(buf, n, "the log and %llu pages are on the device (%.1f MiB), readable up "
			 "to its last complete chunk", (unsigned long long)pages, bytes / 1048576.0);
		break;
	}
}

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	uint64_t last = 0;
	double since = now_mono(), killed_at = 0;
	int warned = 0;

	for (;;) {
		sleep_ms(1000);
		if (final_started)
			continue;	/* final_action pets, or stops it */
		if (!w->armed) {
			if (now_mono() < w->setup_until)
				hwdog_pet(&hwdog);
			since = now_mono();
			killed_at = 0;
			continue;
		}
		uint64_t beat = atomic_load_explicit(&w->live->heartbeat, memory_order_relaxed);
		if (killed_at) {
			/* SIGKILL waits for a system call in a stuck driver. */
			if (now_mono() - killed_at > KILL_GRACE_S) {
				err("the stalled capture did not stop within %u s (stuck in the kernel): "
				    "giving up", KILL_GRACE_S);
				final_action(w->final);
			}
			continue;
		}
		if (beat != last) {
			last = beat;
			since = now_mono();
			warned = 0;
			hwdog_pet(&hwdog);
		} else if (hwdog.fd >= 0 && !warned && hwdog.timeout_s < w->stall_s &&
			   now_mono() - since >= hwdog.timeout_s / 2.0) {
			char dev[200];
			warned = 1;
			say_device(w->live, dev, sizeof dev);
			err("no progress for %.0f s: the hardware watchdog resets the machine in "
			    "about %.0f s unless the capture moves; %s", now_mono() - since,
			    hwdog.timeout_s - (now_mono() - since), dev);
		} else if (now_mono() - since > w->stall_s) {
			char dev[200];
			say_device(w->live, dev, sizeof dev);
			err("no progress for %u s (device or memory stuck?): stopping the capture; %s",
			    w->stall_s, dev);
			pid_t c = atomic_load(&w->child);
			if (c <= 0)
				final_action(w->final);
			atomic_store(&w->stage, atomic_load(&w->live->stage));
			atomic_store(&w->stalled, 1);
			killed_at = now_mono();
			kill(c, SIGKILL);
		}
	}
	return NULL;
}

/* Runs one capture in a child process, watched; its exit code, or -1 when
 * it was killed (wd->stalled says when for a stall). Without a child
 * (fork failed) it runs here, as before. */
static int capture_attempt(struct watchdog *wd, const char *path, const struct capture_req *rq,
			   const struct capture_hooks *hk)
{
	memset((void *)wd->live, 0, sizeof *wd->live);
	atomic_store(&wd->stalled, 0);
	pid_t pid = wd->shared ? fork() : -1;
	if (pid == 0) {
		hwdog_drop_in_child(&hwdog);
		_exit(run_capture(VMCORE, path, 0, rq, hk));
	}
	if (pid < 0) {
		if (wd->shared)
			warn("cannot start the capture's process (%s): capturing in PID 1 itself, "
			     "which a stall cannot stop", strerror(errno));
		wd->armed = 1;
		int code = run_capture(VMCORE, path, 0, rq, hk);
		wd->armed = 0;
		return code;
	}
	atomic_store(&wd->child, pid);
	wd->armed = 1;
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	wd->armed = 0;
	atomic_store(&wd->child, 0);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (!atomic_load(&wd->stalled))
		err("the capture's process died (signal %d)", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return -1;
}

/* ---- modules ---- */

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static void load_modules(void)
{
	char list[8192];
	ssize_t n = read_text_file(MODULE_LIST, list, sizeof list);
	int loaded = 0;

	if (n < 0)
		return;		/* nothing packed: drivers are built in */
	for (char *path = strtok(list, "\n"); path; path = strtok(NULL, "\n")) {
		if (!*path || *path == '#')
			continue;
		int flags = (has_suffix(path, ".xz") || has_suffix(path, ".zst") ||
			     has_suffix(path, ".gz")) ? MODULE_INIT_COMPRESSED_FILE : 0;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			warn("module %s: %s", path, strerror(errno));
			continue;
		}
		if (syscall(SYS_finit_module, fd, "", flags) < 0) {
			int e = errno;
			if (e == EEXIST)
				dbg("module %s already present", path);
			else if (flags && (e == EOPNOTSUPP || e == EINVAL))
				warn("module %s: this kernel cannot load compressed modules (%s); "
				     "pack it uncompressed", path, strerror(e));
			else
				warn("module %s: %s", path, strerror(e));
		} else {
			loaded++;
		}
		close(fd);
	}
	msg("loaded %d module%s", loaded, loaded == 1 ? "" : "s");
}

/* ---- finding the device ----
 *
 * Matching a selector and checking the claim read the devices (LABEL=
 * and UUID= read every one), and a read from a failing disk can block
 * for good, in a state no signal ends. So each probe runs in a child that
 * sends back what it found; PID 1 waits for the answer PROBE_TIMEOUT_S at
 * most, then goes on without that selector while its probe is stuck. The
 * capture reopens the device the probe accepted, under the watchdog. */

#define PROBE_TIMEOUT_S 5

struct probe_answer {
	int r;			/* target_open's; -ENOENT with no path: no match */
	char path[256];		/* the device the selector matched, or "" */
	char msg[400];		/* why target_open refused it */
};

struct prober {
	pid_t stuck;		/* a probe of this selector past its time, or 0 */
	int said_failure;	/* a probe that timed out or failed, said once */
	char said[256];		/* the last device we spoke of, said once */
};

/* What one probe does: find sel's device anywhere; or, with a stacked
 * device (kdumpinit.dm), rebuild the mapping from dm, and once it is
 * there (mapped: its name) accept sel only on it, never on a device below
 * it, whatever claim a mirror's own head shows. */
struct probe_job {
	const struct selector *sel;
	const struct dm_table *dm;
	const char *mapped;
};

static void probe_child(int fd, const struct probe_job *job)
{
	const struct sysroot root = { "/sys", "/dev" };
	struct probe_answer a = { .r = -ENOENT };
	struct target t;
	enum target_refusal why;

	if (job->dm) {
		a.r = stack_assemble(&root, DMCTL_CONTROL, job->dm, STACK_DM_NAME, a.path,
				     sizeof a.path, a.msg, sizeof a.msg);
	} else if (job->mapped) {
		if (selector_matches(&root, job->sel, job->mapped)) {
			snprintf(a.path, sizeof a.path, "/dev/%s", job->mapped);
			a.r = target_open(&t, a.path, 0, &why, a.msg, sizeof a.msg);
			target_close(&t);
		}
	} else if (selector_find(&root, job->sel, a.path, sizeof a.path) == 0) {
		a.r = target_open(&t, a.path, 0, &why, a.msg, sizeof a.msg);
		target_close(&t);
	}
	/* Less than PIPE_BUF: one write, whole or not at all. */
	_exit(write_full(fd, &a, sizeof a) < 0);
}

/* Waits until fd has data or `until` (now_mono) passes: 1 or 0. */
static int readable_by(int fd, double until)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do {
		int left = (int)((until - now_mono()) * 1000);
		r = poll(&p, 1, left > 0 ? left : 0);
	} while (r < 0 && errno == EINTR);
	return r > 0;
}

/* The child's answer: 0, or -EIO when it died without one. */
static int read_answer(int fd, struct probe_answer *a)
{
	size_t got = 0;

	while (got < sizeof *a) {
		ssize_t n = read(fd, (char *)a + got, sizeof *a - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		got += n;
	}
	a->path[sizeof a->path - 1] = a->msg[sizeof a->msg - 1] = 0;
	return 0;
}

/* Runs one probe of sel. 0 with *a filled; -ETIMEDOUT when no answer
 * came in time: the child is killed and *stuck names it (a process
 * blocked on a dead disk may outlive the kill, and cannot be waited for);
 * -errno when it could not be asked. */
static int probe_once(const struct probe_job *job, struct probe_answer *a, pid_t *stuck)
{
	int pfd[2];

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid == 0) {
		hwdog_drop_in_child(&hwdog);
		close(pfd[0]);
		probe_child(pfd[1], job);
	}
	int e = errno;
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -e;
	}
	int r = readable_by(pfd[0], now_mono() + PROBE_TIMEOUT_S) ? read_answer(pfd[0], a) : -ETIMEDOUT;
	close(pfd[0]);
	if (r == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		*stuck = pid;
	}
	return r;		/* an answered child is collected by reap() */
}

/* probe_once, unless the probe before is still blocked on the device it
 * read: then -EBUSY, and no more probes piled up behind it. */
static int probe_next(struct prober *pr, const struct probe_job *job, struct probe_answer *a)
{
	if (pr->stuck && waitpid(pr->stuck, NULL, WNOHANG) == 0)
		return -EBUSY;
	pr->stuck = 0;
	return probe_once(job, a, &pr->stuck);
}

/* One look for sel: 0 with the accepted device in path, else -errno;
 * what went wrong is said once per device. */
static int probe_selector(const struct selector *sel, const char *mapped, struct prober *pr,
			  char *path, size_t sz)
{
	struct probe_answer a;
	const struct probe_job job = { .sel = sel, .mapped = mapped };

	int r = probe_next(pr, &job, &a);
	if (r == -EBUSY)
		return r;
	if (r < 0 && !pr->said_failure++) {
		if (r == -ETIMEDOUT)
			err("%s%s: looking for the device took more than %u s (a failing disk?); "
			    "going on without it", selector_name(sel->type), sel->value,
			    PROBE_TIMEOUT_S);
		else
			err("cannot look for %s%s: %s", selector_name(sel->type), sel->value,
			    errstr(r));
	}
	if (r < 0)
		return r;
	if (a.r == 0) {
		snprintf(path, sz, "%s", a.path);
		return 0;
	}
	if (a.path[0] && strcmp(pr->said, a.path)) {
		snprintf(pr->said, sizeof pr->said, "%s", a.path);
		if (a.r == -EPERM)
			err("%s%s matched %s, refused: %s", selector_name(sel->type), sel->value,
			    a.path, a.msg);
		else
			err("%s%s matched %s, cannot open it: %s", selector_name(sel->type),
			    sel->value, a.path, errstr(a.r));
	}
	return a.r;
}

/* One try at rebuilding the stacked dump device from kdumpinit.dm: 0
 * with its name ("dm-0") in mapped; -ENOENT while one of its devices is
 * not here (which one in missing, for the "still waiting" line); other
 * failures are said once. */
static int assemble_step(const struct dm_table *dm, struct prober *pr, char *mapped, size_t sz,
			 char *missing, size_t msz)
{
	struct probe_answer a;
	const struct probe_job job = { .dm = dm };

	int r = probe_next(pr, &job, &a);
	if (r == -EBUSY)
		return r;
	if (r == 0)
		r = a.r;
	if (r == 0) {
		snprintf(mapped, sz, "%s", a.path);
		return 0;
	}
	if (r == -ENOENT) {
		snprintf(missing, msz, "%s", a.msg);
		return r;
	}
	if (!pr->said_failure++)
		err("kdumpinit.dm: cannot rebuild the dump device%s%s: %s (is dm-mod in the image, "
		    "or CONFIG_BLK_DEV_DM in the kernel?)", r == -ETIMEDOUT ? "" : ": ",
		    r == -ETIMEDOUT ? "" : a.msg, r == -ETIMEDOUT ? "a device did not answer" : errstr(r));
	return r;
}

/* The block devices the kernel has so far, for the "still waiting" line:
 * on real hardware the question is whether the driver found the disk at
 * all (a USB disk, an HBA still scanning) or found it under another name. */
static void block_devices(char *buf, size_t n)
{
	DIR *d = opendir("/sys/class/block");
	struct dirent *e;
	size_t len = 0;

	snprintf(buf, n, "none yet");
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int w = snprintf(buf + len, n - len, "%s%s", len ? " " : "", e->d_name);
		if (w < 0 || (size_t)w >= n - len) {
			snprintf(buf + (len < n - 4 ? len : n - 4), 4, "...");
			break;
		}
		len += w;
	}
	if (d)
		closedir(d);
}

/* The first selector's device that carries a claim, in path. Looks every
 * DEVWAIT_POLL_MS until kdumpinit.wait runs out: USB storage and large
 * HBAs take minutes to show their disks (kdump-utils waits 300 s). The
 * watchdog thread pets the hardware meanwhile (setup_until). */
static int wait_for_target(const struct config *c, char *path, size_t sz)
{
	struct selector sel[SEL_MAX];
	struct prober pr[SEL_MAX];
	struct devwait dw;
	char bad[80];

	int n = selectors_parse(c->dev, sel, SEL_MAX, bad, sizeof bad);
	if (n < 0) {
		err("kdumpinit.dev=%s: '%s' is not a selector (use /dev/NAME, SERIAL=, LABEL=, "
		    "UUID=, PARTUUID=, PARTLABEL= or WWN=)", c->dev, bad);
		return -EINVAL;
	}
	/* A stacked device: rebuilt first, then the only place looked at. */
	static struct dm_table dm;
	struct prober dmpr;
	char mapped[256] = "", missing[400] = "";
	if (c->dm[0] && dmtable_parse(c->dm, &dm, bad, sizeof bad) < 0)
		return -EINVAL;		/* config_set checked it: not reached */
	memset(pr, 0, sizeof pr);
	memset(&dmpr, 0, sizeof dmpr);
	msg("waiting up to %u s for %s%s", c->wait_s, c->dev,
	    c->dm[0] ? " on the device kdumpinit.dm= describes" : "");
	devwait_start(&dw, now_mono(), c->wait_s);
	for (;;) {
		if (c->dm[0] && !mapped[0] &&
		    assemble_step(&dm, &dmpr, mapped, sizeof mapped, missing, sizeof missing) == 0)
			msg("rebuilt the dump device as /dev/%s (%s, %u segment%s)", mapped,
			    STACK_DM_NAME, dm.ntargets, dm.ntargets == 1 ? "" : "s");
		for (int i = 0; i < n && (!c->dm[0] || mapped[0]); i++)
			if (probe_selector(&sel[i], mapped[0] ? mapped : NULL, &pr[i], path, sz) == 0)
				return 0;
		reap();
		double now = now_mono();
		switch (devwait_next(&dw, now)) {
		case DEVWAIT_GIVE_UP:
			return -ETIMEDOUT;
		case DEVWAIT_SAY: {
			char devs[160];
			block_devices(devs, sizeof devs);
			if (c->dm[0] && !mapped[0] && missing[0])
				msg("still waiting for %s: %.0f s of %u s; kdumpinit.dm= needs %s; block "
				    "devices: %s", c->dev, now - dw.start, c->wait_s, missing, devs);
			else
				msg("still waiting for %s: %.0f s of %u s; block devices: %s", c->dev,
				    now - dw.start, c->wait_s, devs);
			break;
		}
		case DEVWAIT_LOOK:
			break;
		}
		sleep_ms(devwait_sleep_ms(&dw, now));
	}
}

/* ---- randomness ----
 * A sealed dump's one-time key is drawn from the kernel's pool, and
 * getrandom blocks until the pool is ready, with no bound: in a crash
 * kernel on hardware with no random source and no cycle counter that can
 * be for good. So PID 1 waits RNG_WAIT_S at most, and then credits the
 * pool itself with what it has: clock readings with the jitter of a busy
 * loop, and pages of the crashed kernel's memory (its own pool's state
 * among them, somewhere). The key is then only as unpredictable as those
 * (docs/DESIGN.md, "Sealed dumps"), which the console says. */
#define RNG_WAIT_S 10

static void ensure_random(void)
{
	static struct { struct timespec t[256]; uint8_t mem[3][4096]; } mix;
	/* Test hook (tests/e2e): the pool taken as never ready. */
	const char *hook = getenv("KDUMPINIT_TEST_HOOK");
	int r = hook && !strcmp(hook, "rng-timeout") ? -ETIMEDOUT : rng_wait(RNG_WAIT_S * 1000);

	if (r == 0)
		return;
	if (r != -ETIMEDOUT) {
		warn("randomness: %s", errstr(r));
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(mix.t); i++) {
		clock_gettime(CLOCK_MONOTONIC_RAW, &mix.t[i]);
		for (volatile long k = mix.t[i].tv_nsec & 0x3ff; k > 0; k--)
			;
	}
	int fd = open(VMCORE, O_RDONLY | O_CLOEXEC);
	off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	for (int i = 0; fd >= 0 && i < 3 && size > 0; i++)
		(void)!pread(fd, mix.mem[i], sizeof mix.mem[i], size / 4 * (i + 1));
	if (fd >= 0)
		close(fd);
	r = rng_credit(&mix, sizeof mix, 256);
	explicit_bzero(&mix, sizeof mix);
	warn("randomness: the kernel's pool not ready after %d s; credited with clock jitter "
	     "and crashed memory (the one-time key is as unpredictable as those): %s",
	     RNG_WAIT_S, r < 0 ? errstr(r) : "done");
}

/* Right after the modules (its driver is one) and the settings (it may
 * be off): the sooner it runs, the less of a hang goes unwatched. */
static void open_hwdog(const struct config *c)
{
	int refused;

	if (c->watchdog_s == WATCHDOG_OFF) {
		dbg("watchdog: off (kdumpinit.watchdog=off): the device is left alone");
		return;
	}
	int r = hwdog_open(&hwdog, c->watchdog_s, &refused);
	if (r == -ENOENT) {
		dbg("no watchdog device");
		return;
	}
	if (r < 0) {
		warn("watchdog: cannot open it (%s); capturing without it", errstr(r));
		return;
	}
	if (refused)
		warn("watchdog: %s refused a timeout of %u s; keeping its own", hwdog.driver,
		     (unsigned)c->watchdog_s);
	msg("watchdog: %s (%s), timeout %u s%s, petted while the capture progresses", hwdog.dev,
	    hwdog.driver, hwdog.timeout_s,
	    c->watchdog_s != WATCHDOG_KEEP ? "" : hwdog.hw_timeout ? " (the hardware's)" : " (default)");
}

/* Test hook (tests/e2e --nbd, KDUMPINIT_TEST_HOOK=nbd-dd=MIB): the
 * link's own write rate, what a dd through the same NBD gets: MIB MiB
 * written with O_DIRECT from the start of the attached export, synced,
 * said. Only on a scratch export: the run then finds it unclaimed. */
static void link_rate(const char *path, unsigned mib)
{
	void *buf = NULL;
	int fd = -1, e;

	for (int i = 0; i < 50 && (fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC)) < 0; i++)
		sleep_ms(100);
	e = fd < 0 ? errno : posix_memalign(&buf, 4096, 1u << 20);
	if (e) {
		warn("test hook: nbd-dd: %s: %s", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return;
	}
	memset(buf, 0x5a, 1u << 20);
	double t0 = now_mono();
	unsigned done = 0;
	while (done < mib && write(fd, buf, 1u << 20) == 1 << 20)
		done++;
	int synced = fdatasync(fd) == 0;
	double el = now_mono() - t0;
	msg("test hook: nbd-dd: %u MiB written through %s in %.2f s%s: %.1f MiB/s", done, path, el,
	    synced ? ", synced" : ", not synced", el > 0 ? done / el : 0);
	close(fd);
	free(buf);
}

void pid1_main(void)
{
	struct config cfg;
	static struct watchdog wd;
	char cmdline[4096] = "";

	block_signals();
	mount_one("proc", "/proc", "proc", "/proc/self");
	mount_one("sysfs", "/sys", "sysfs", "/sys/kernel");
	mount_one("devtmpfs", "/dev", "devtmpfs", "/dev/null");
	setup_console();
	msg("kdumpinit %s starting as PID 1", KDI_VERSION);

	config_defaults(&cfg);
	/* A file not read whole says so among the warnings below. */
	(void)config_load_file(&cfg, CONF_FILE);
	if (read_text_file("/proc/cmdline", cmdline, sizeof cmdline) < 0)
		warn("cannot read /proc/cmdline; using defaults");
	config_load_cmdline(&cfg, cmdline);
	/* Firmware settings (systemd's credentials: fw_cfg, SMBIOS type 11,
	 * the device tree) rank below the command line and above the file,
	 * whatever the order of the calls. fw_cfg needs its module, so they
	 * are read after the modules; nothing before that uses the settings
	 * but the module list, which is not one of them. */
	log_set_verbose(cfg.verbose);
	load_modules();
	/* EFI variables need efivarfs (a module: loaded above when packed).
	 * Read-only: nothing here writes firmware variables. */
	if (access("/sys/firmware/efi", F_OK) == 0 &&
	    access("/sys/firmware/efi/efivars/.", F_OK) == 0 &&
	    mount("efivarfs", "/sys/firmware/efi/efivars", "efivarfs",
		  MS_RDONLY | MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL) < 0 && errno != EBUSY)
		dbg("efivarfs: %s (EFI settings not read)", strerror(errno));
	config_load_firmware(&cfg, "/", FW_SRC_ALL);
	log_set_verbose(cfg.verbose);
	for (int i = 0; i < cfg.nwarn; i++)
		warn("%s", cfg.warn[i]);
	char srcs[512] = "";
	if (config_format_sources(&cfg, srcs, sizeof srcs) > 0)
		msg("settings: %s", srcs);

	/* Before any device is opened: a dump that was (or may have been)
	 * asked to be sealed, without its key, is not written at all. */
	int seal = config_seal(&cfg);
	if (seal < 0) {
		err("sealing asked for, its key not read whole (%s): nothing is written, "
		    "not even in the clear", cfg.seal_why);
		final_action(cfg.final);
	}

	open_hwdog(&cfg);
	/* One page both processes see: the capture's state for the watchdog. */
	wd.live = mmap(NULL, sizeof *wd.live, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (wd.live == MAP_FAILED) {
		static struct capture_live mine;
		warn("no shared memory for the capture's state (%s): a stall ends the capture",
		     strerror(errno));
		wd.live = &mine;
	} else {
		wd.shared = 1;
	}
	wd.stall_s = cfg.stall_s;
	wd.final = cfg.final;
	/* The device wait is bounded by kdumpinit.wait, plus the probes
	 * that overrun it (PROBE_TIMEOUT_S each) and the checks around it. */
	wd.setup_until = now_mono() + cfg.wait_s + 60;
	pthread_t wt;
	if (pthread_create(&wt, NULL, watchdog_main, &wd) != 0) {
		warn("no watchdog thread: a stuck device could hold the capture");
		/* Nobody would pet it: it would reset a working capture. */
		if (hwdog.fd >= 0 && hwdog_disarm(&hwdog) == 0)
			warn("watchdog: stopped, for want of the thread that pets it");
	}

	if (access(VMCORE, R_OK) < 0) {
		err("%s is missing: this is not a crash kernel booted after a panic "
		    "(kexec -p); nothing to capture", VMCORE);
		final_action(cfg.final);
	}
	if (!cfg.dev[0]) {
		err("no dump device configured: set kdumpinit.dev= on the crash kernel's command "
		    "line (kdumpinit arm --append), in %s, or as the firmware credential "
		    "kdumpinit.dev (SMBIOS type 11, fw_cfg)", CONF_FILE);
		final_action(cfg.final);
	}
	char path[256];
	/* A network dump device: the network up and the server's export
	 * attached as /dev/nbdN, which is then looked for and its claim
	 * checked as a disk's (the same wait, what is left of it). */
	const struct config *tc = &cfg;
	static struct config ncfg;
	if (netdump_is(cfg.dev)) {
		double t0 = now_mono();
		if (netdump_attach(cfg.dev, cfg.ip, cfg.wait_s, path, sizeof path) < 0)
			final_action(cfg.final);
		const char *hook = getenv("KDUMPINIT_TEST_HOOK");
		if (hook && !strncmp(hook, "nbd-dd=", 7))
			link_rate(path, (unsigned)strtoul(hook + 7, NULL, 10));
		ncfg = cfg;
		snprintf(ncfg.dev, sizeof ncfg.dev, "%s", path);
		double left = cfg.wait_s - (now_mono() - t0);
		ncfg.wait_s = left > 10 ? (unsigned)left : 10;
		tc = &ncfg;
	}
	int r = wait_for_target(tc, path, sizeof path);
	if (r == -ETIMEDOUT) {
		err("no usable dump device for kdumpinit.dev=%s appeared within %u s "
		    "(kdumpinit.wait=); is its driver in the initramfs (mkinitramfs -m)?",
		    cfg.dev, cfg.wait_s);
		final_action(cfg.final);
	}
	if (r < 0)
		final_action(cfg.final);

	if (seal > 0)
		ensure_random();
	/* run_capture reopens and re-checks it, with the watchdog armed. */
	const struct capture_req rq = {
		.level = cfg.level,
		.threads = cfg.threads ? cfg.threads : online_cpus(),
		.cpus = online_cpus(),
		.window = 64u << 20,
		.settings = srcs,
		.full = cfg.full_overwrite ? CHAIN_FULL_OVERWRITE : CHAIN_FULL_KEEP,
		.memmap = cfg.memmap == 1 ? MEMMAP_EXCLUDE : cfg.memmap == 2 ? MEMMAP_KEEP : MEMMAP_AUTO,
		.pubkey = seal > 0 ? cfg.pubkey : NULL,
	};
	const struct capture_hooks hk = { .live = wd.live, .progress = 1 };
	int code = capture_attempt(&wd, path, &rq, &hk);
	/* A stall before the pages: the log is on the device, and what
	 * stalled is most likely an optional step in corrupt memory. Once
	 * more without them, over the first attempt's dump, under the same
	 * stall rule. */
	if (code < 0 && atomic_load(&wd.stalled) && atomic_load(&wd.stage) < CAPTURE_PAGES) {
		struct capture_req again = rq;
		again.retry = 1;
		again.replace_dump_id = atomic_load(&wd.live->dump_id);
		msg("trying once more, without the optional steps");
		code = capture_attempt(&wd, path, &again, &hk);
	}
	if (code == EXIT_OK)
		msg("capture finished");
	else if (code < 0)
		err("the capture did not finish; see above");
	else
		err("capture ended with errors (exit code %d); see above", code);
	final_action(cfg.final);
}
