/* The record `arm` leaves in /run for `status`: what was loaded, read back
 * to tell whether the armed image is still the one the running system
 * would build. */
#include "armed.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/io.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "root.h"

/* crash_hotplug as the record spells it: "yes", "no", "absent". */
static const char *hotplug_word(int v)
{
	return v > 0 ? "yes" : v == 0 ? "no" : "absent";
}

static int hotplug_value(const char *w)
{
	return !strcmp(w, "yes") ? 1 : !strcmp(w, "no") ? 0 : -1;
}

int armed_write(const char *root, const struct armed_state *s)
{
	char dir[512], path[512], tmp[520];

	root_path(root, "/run/kdumpinit", dir, sizeof dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	root_path(root, ARMED_STATE, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	char b[8192];
	int n = snprintf(b, sizeof b,
			 "# kdumpinit arm: what it loaded, for kdumpinit status\n"
			 "release %s\nkernel %s\nkernel_mtime %" PRId64 "\nkernel_size %" PRId64 "\n"
			 "initramfs %s\ninitramfs_mtime %" PRId64 "\ninitramfs_size %" PRId64 "\n"
			 "cpus %u\ncmdline %s\n",
			 s->release, s->kernel, s->kernel_mtime, s->kernel_size, s->initramfs,
			 s->initramfs_mtime, s->initramfs_size, s->cpus, s->cmdline);
	if (n > 0 && (size_t)n < sizeof b && s->crash_release[0])
		n += snprintf(b + n, sizeof b - (size_t)n, "crash_release %s\ndedicated %d\n",
			      s->crash_release, s->dedicated);
	if (n > 0 && (size_t)n < sizeof b && s->note[0])
		n += snprintf(b + n, sizeof b - (size_t)n, "note %s\n", s->note);
	if (n > 0 && (size_t)n < sizeof b && s->header[0])
		n += snprintf(b + n, sizeof b - (size_t)n, "header %s\nhotplug_cpu %s\nhotplug_mem %s\n",
			      s->header, hotplug_word(s->hotplug_cpu), hotplug_word(s->hotplug_mem));
	if (n > 0 && (size_t)n < sizeof b && s->have_print)
		n += snprintf(b + n, sizeof b - (size_t)n,
			      "header_cpus %u\nheader_cpu_hash %016" PRIx64 "\n"
			      "header_ram_ranges %u\nheader_ram_hash %016" PRIx64 "\n",
			      s->print.cpus, s->print.cpu_hash, s->print.ram_ranges, s->print.ram_hash);
	int r = n > 0 && (size_t)n < sizeof b ? write_full(fd, b, (size_t)n) : -E2BIG;
	return commit_tmp_at(AT_FDCWD, fd, tmp, path, r);
}

static int set_i64(const char *v, int64_t *out)
{
	uint64_t n;
	int r = parse_u64(v, 10, &n);
	if (r == 0)
		*out = (int64_t)n;
	return r;
}

int armed_read(const char *root, struct armed_state *s)
{
	char path[512], b[8192];
	ssize_t n = read_text_file(root_path(root, ARMED_STATE, path, sizeof path), b, sizeof b);
	int bad = 0, prints = 0;

	memset(s, 0, sizeof *s);
	s->hotplug_cpu = s->hotplug_mem = -1;
	if (n < 0)
		return (int)n;
	for (char *l = strtok(b, "\n"); l; l = strtok(NULL, "\n")) {
		char *v = strchr(l, ' ');
		if (l[0] == '#')
			continue;
		if (!v) {
			bad = 1;
			continue;
		}
		*v++ = 0;
		uint64_t u = 0;
		if (!strcmp(l, "release"))
			snprintf(s->release, sizeof s->release, "%s", v);
		else if (!strcmp(l, "kernel"))
			snprintf(s->kernel, sizeof s->kernel, "%s", v);
		else if (!strcmp(l, "initramfs"))
			snprintf(s->initramfs, sizeof s->initramfs, "%s", v);
		else if (!strcmp(l, "cmdline"))
			snprintf(s->cmdline, sizeof s->cmdline, "%s", v);
		else if (!strcmp(l, "crash_release"))
			snprintf(s->crash_release, sizeof s->crash_release, "%s", v);
		else if (!strcmp(l, "note"))
			snprintf(s->note, sizeof s->note, "%s", v);
		else if (!strcmp(l, "dedicated"))
			s->dedicated = !strcmp(v, "1");
		else if (!strcmp(l, "kernel_mtime"))
			bad |= set_i64(v, &s->kernel_mtime) < 0;
		else if (!strcmp(l, "kernel_size"))
			bad |= set_i64(v, &s->kernel_size) < 0;
		else if (!strcmp(l, "initramfs_mtime"))
			bad |= set_i64(v, &s->initramfs_mtime) < 0;
		else if (!strcmp(l, "initramfs_size"))
			bad |= set_i64(v, &s->initramfs_size) < 0;
		else if (!strcmp(l, "cpus"))
			bad |= parse_u64(v, 10, &u) < 0, s->cpus = (unsigned)u;
		else if (!strcmp(l, "header"))
			snprintf(s->header, sizeof s->header, "%s", v);
		else if (!strcmp(l, "hotplug_cpu"))
			s->hotplug_cpu = hotplug_value(v);
		else if (!strcmp(l, "hotplug_mem"))
			s->hotplug_mem = hotplug_value(v);
		else if (!strcmp(l, "header_cpus"))
			bad |= parse_u64(v, 10, &u) < 0, s->print.cpus = (unsigned)u, prints++;
		else if (!strcmp(l, "header_cpu_hash"))
			bad |= parse_u64(v, 16, &s->print.cpu_hash) < 0, prints++;
		else if (!strcmp(l, "header_ram_ranges"))
			bad |= parse_u64(v, 10, &u) < 0, s->print.ram_ranges = (unsigned)u, prints++;
		else if (!strcmp(l, "header_ram_hash"))
			bad |= parse_u64(v, 16, &s->print.ram_hash) < 0, prints++;
	}
	s->have_print = prints == 4;
	/* The dedicated kernel may be armed with no initramfs (its own). */
	return bad || !s->release[0] || !s->kernel[0] || (!s->initramfs[0] && !s->dedicated) ?
		-EINVAL : 0;
}

int armed_remove(const char *root)
{
	char path[512];

	if (unlink(root_path(root, ARMED_STATE, path, sizeof path)) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* /sys/devices/system/X/crash_hotplug: 1, 0, or -1 when there is none. */
static int crash_hotplug(const char *root, const char *rel)
{
	char path[512], v[16];

	if (read_text_file(root_path(root, rel, path, sizeof path), v, sizeof v) < 0)
		return -1;
	return strcmp(v, "1") == 0;
}

/* The fingerprint of the machine under ROOT (names only: no root needed). */
static int fingerprint(const char *root, struct machine_print *p)
{
	struct machine m;
	int r;

	memset(&m, 0, sizeof m);
	if ((r = machine_read_iomem(root, &m)) == 0 && (r = machine_read_cpus(root, &m, 0)) == 0)
		machine_fingerprint(&m, p);
	machine_free(&m);
	return r;
}

int armed_take_print(const char *root, struct armed_state *s)
{
	/* After loading: the answer is the loaded image's (6.10 reports
	 * whether *it* gets updated; 6.6 whether it may be). */
	s->hotplug_cpu = crash_hotplug(root, "/sys/devices/system/cpu/crash_hotplug");
	s->hotplug_mem = crash_hotplug(root, "/sys/devices/system/memory/crash_hotplug");
	int r = fingerprint(root, &s->print);
	s->have_print = r == 0 && !s->print.ram_hidden;
	return r < 0 ? r : s->have_print ? 0 : -EACCES;
}

int armed_header_current(const char *root, const struct armed_state *s, struct armed_header *h)
{
	memset(h, 0, sizeof *h);
	if (!s->have_print)
		return -ENODATA;
	h->then = s->print;
	int r = fingerprint(root, &h->now);
	if (r < 0)
		return r;
	if (h->now.ram_hidden)
		return -EACCES;
	int cpus = h->now.cpus != h->then.cpus || h->now.cpu_hash != h->then.cpu_hash;
	int ram = h->now.ram_ranges != h->then.ram_ranges || h->now.ram_hash != h->then.ram_hash;
	h->cpus_changed = cpus && s->hotplug_cpu != 1;
	h->ram_changed = ram && s->hotplug_mem != 1;
	h->kernel_updated = (cpus || ram) && !h->cpus_changed && !h->ram_changed;
	return !h->cpus_changed && !h->ram_changed;
}

const char *armed_header_say(const struct armed_state *s, const struct armed_header *h, int rc,
			     char *buf, size_t sz)
{
	const char *by = s->header[0] ? s->header : "?";

	if (rc == 1 && h->kernel_updated)
		snprintf(buf, sz, "crash header: current: the kernel updated it after hotplug (CPUs %u -> %u, "
			 "RAM ranges %u -> %u)", h->then.cpus, h->now.cpus, h->then.ram_ranges, h->now.ram_ranges);
	else if (rc == 1)
		snprintf(buf, sz, "crash header: current (%u CPUs, %u RAM ranges, built by %s)", h->now.cpus,
			 h->now.ram_ranges, by);
	else if (rc == 0)
		snprintf(buf, sz, "crash header: stale: %s%s changed since arming (CPUs %u -> %u, RAM ranges "
			 "%u -> %u) and this kernel does not update it: a crash now would miss them; arm again "
			 "(systemctl restart kdumpinit-arm)", h->cpus_changed ? "CPUs" : "",
			 h->cpus_changed && h->ram_changed ? " and RAM" : h->ram_changed ? "RAM" : "",
			 h->then.cpus, h->now.cpus, h->then.ram_ranges, h->now.ram_ranges);
	else if (rc == -ENODATA)
		snprintf(buf, sz, "crash header: not recorded (armed by an older kdumpinit): arm again to "
			 "track hotplug");
	else if (rc == -EACCES)
		snprintf(buf, sz, "crash header: cannot tell without root (/proc/iomem hides its addresses)");
	else
		snprintf(buf, sz, "crash header: cannot tell: %s", errstr(rc));
	return buf;
}
