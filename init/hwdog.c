#include "hwdog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/watchdog.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../lib/io.h"

/* /dev/watchdog is the first device's legacy node and exists since 2.x;
 * watchdog0 is the same device's own node (3.11+), tried in case a
 * minimal devtmpfs lacks the legacy one. */
static const char *const nodes[] = { "/dev/watchdog", "/dev/watchdog0" };

/* The module whose driver is named name (its sysfs entry
 * /sys/module/M/drivers/BUS:NAME), in buf: 0, or -ENOENT. */
static int module_of(const char *name, char *buf, size_t size)
{
	DIR *d = opendir("/sys/module");
	struct dirent *m;
	int r = -ENOENT;

	if (!d)
		return -errno;
	while (r && (m = readdir(d))) {
		char p[320];
		if (m->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "/sys/module/%.64s/drivers", m->d_name);
		DIR *dd = opendir(p);
		if (!dd)
			continue;
		for (struct dirent *e; r && (e = readdir(dd));) {
			const char *c = strchr(e->d_name, ':');
			if (c && !strcmp(c + 1, name)) {
				snprintf(buf, size, "%.63s", m->d_name);
				r = 0;
			}
		}
		closedir(dd);
	}
	closedir(d);
	return r;
}

/* A user knows the driver as the module packed with mkinitramfs -m
 * (i6300esb), but the watchdog's sysfs node is virtual, with no link to
 * its PCI device (6.1): the identity it reports ("i6300ESB timer") is the
 * name of the PCI driver, which /sys/module lists under its module. */
static void name_driver(struct hwdog *h)
{
	struct watchdog_info info;
	char id[sizeof info.identity + 1] = "";

	snprintf(h->sysdir, sizeof h->sysdir, "/sys/class/watchdog/watchdog0");
	if (access(h->sysdir, F_OK) < 0)
		h->sysdir[0] = 0;
	memset(&info, 0, sizeof info);
	if (ioctl(h->fd, WDIOC_GETSUPPORT, &info) == 0)
		snprintf(id, sizeof id, "%.*s", (int)sizeof info.identity, (const char *)info.identity);
	if (!id[0])
		snprintf(h->driver, sizeof h->driver, "unknown driver");
	else if (module_of(id, h->driver, sizeof h->driver) < 0)
		snprintf(h->driver, sizeof h->driver, "%.63s", id);
}

int hwdog_open(struct hwdog *h, unsigned timeout_s, int *refused)
{
	int e = ENOENT;

	*refused = 0;
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0] && h->fd < 0; i++) {
		h->fd = open(nodes[i], O_WRONLY | O_CLOEXEC);
		if (h->fd >= 0)
			snprintf(h->dev, sizeof h->dev, "%s", nodes[i]);
		else if (errno != ENOENT)
			e = errno;	/* EBUSY (open elsewhere), ENODEV */
	}
	if (h->fd < 0)
		return -e;
	name_driver(h);

	int t = (int)timeout_s;
	if (t > 0 && ioctl(h->fd, WDIOC_SETTIMEOUT, &t) == 0 && t > 0) {
		h->timeout_s = (unsigned)t;	/* the driver may round it */
	} else {
		*refused = t > 0;
		t = 0;
		h->hw_timeout = 1;
		if (ioctl(h->fd, WDIOC_GETTIMEOUT, &t) < 0 || t <= 0) {
			t = HWDOG_DEFAULT_TIMEOUT;
			h->hw_timeout = 0;
			if (ioctl(h->fd, WDIOC_SETTIMEOUT, &t) < 0 || t <= 0)
				t = HWDOG_DEFAULT_TIMEOUT;	/* unknown: say the default */
		}
		h->timeout_s = (unsigned)t;
	}
	hwdog_pet(h);
	return 0;
}

int hwdog_pet(struct hwdog *h)
{
	int r = 0;

	pthread_mutex_lock(&h->lock);
	if (h->fd >= 0 && ioctl(h->fd, WDIOC_KEEPALIVE, 0) < 0) {
		/* A driver without the ioctl takes any write as a ping. */
		r = write(h->fd, "\0", 1) == 1 ? 0 : -errno;
	}
	pthread_mutex_unlock(&h->lock);
	return r;
}

/* Whether the timer still runs after the magic close: sysfs "state"
 * (4.x+), else "nowayout" (CONFIG_WATCHDOG_NOWAYOUT or the module's
 * nowayout=1 refuse the close). Without either we cannot tell, and
 * assume the close worked. */
static int still_running(const struct hwdog *h)
{
	char p[96], v[16];

	if (!h->sysdir[0])
		return 0;
	snprintf(p, sizeof p, "%s/state", h->sysdir);
	if (read_text_file(p, v, sizeof v) > 0)
		return !strncmp(v, "active", 6);
	snprintf(p, sizeof p, "%s/nowayout", h->sysdir);
	return read_text_file(p, v, sizeof v) > 0 && v[0] == '1';
}

void hwdog_drop_in_child(struct hwdog *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}

int hwdog_nowayout(const struct hwdog *h)
{
	char p[96], v[8];

	snprintf(p, sizeof p, "%s/nowayout", h->sysdir);
	return h->sysdir[0] && read_text_file(p, v, sizeof v) > 0 && v[0] == '1';
}

int hwdog_disarm(struct hwdog *h)
{
	int r = 0;

	pthread_mutex_lock(&h->lock);
	if (h->fd >= 0) {
		if (write(h->fd, "V", 1) != 1)
			r = -errno;
		if (close(h->fd) < 0 && !r)
			r = -errno;
		h->fd = -1;
		if (!r && still_running(h))
			r = -EBUSY;
	}
	pthread_mutex_unlock(&h->lock);
	return r;
}
