/* A fake sysfs (and /dev) under a temporary root, for the unit tests of
 * what reads the device model: test_modalias (config/modalias.c) and
 * test_reach (arm/reach.c), test_target (config/target.c). Paths are relative to `root`, which the test
 * makes (mkdtemp); sr points at its sys/ and dev/. Any failure to build
 * the tree exits 2: a broken fixture, not a failed case. Include once,
 * after check.h. */
#ifndef KDI_TEST_FAKESYS_H
#define KDI_TEST_FAKESYS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[1024];
static char sys[1200], dev[1200];
__attribute__((unused)) static const struct sysroot sr = { sys, dev };

__attribute__((unused)) static const char *path_of(const char *rel)
{
	static char bufs[8][4096];
	static int k;
	char *b = bufs[k++ % 8];
	snprintf(b, 4096, "%s/%s", root, rel);
	return b;
}

__attribute__((unused)) static void mkdirs(const char *rel)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

__attribute__((unused)) static void put_text(const char *rel, const char *text)
{
	char d[4096];
	snprintf(d, sizeof d, "%s", rel);
	char *sl = strrchr(d, '/');
	if (sl) {
		*sl = 0;
		mkdirs(d);
	}
	FILE *f = fopen(path_of(rel), "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(rel);
		exit(2);
	}
}

/* A file of len bytes that may hold NULs (sysfs binary attributes). */
__attribute__((unused)) static void put_bin(const char *rel, const void *data, size_t len)
{
	put_text(rel, "");
	FILE *f = fopen(path_of(rel), "w");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(rel);
		exit(2);
	}
}

/* rel link -> rel target, as an absolute symlink. */
__attribute__((unused)) static void put_link(const char *target, const char *link)
{
	char d[4096];
	snprintf(d, sizeof d, "%s", link);
	*strrchr(d, '/') = 0;
	mkdirs(d);
	unlink(path_of(link));
	if (symlink(path_of(target), path_of(link)) < 0) {
		perror(link);
		exit(2);
	}
}

/* A device node sys/devices/PATH bound to BUS's driver DRV (module MOD, or
 * none: built into the running kernel). */
__attribute__((unused)) static void put_dev(const char *path, const char *bus, const char *drv, const char *mod,
		    const char *modalias)
{
	char p[512], t[512];
	snprintf(p, sizeof p, "sys/devices/%s", path);
	mkdirs(p);
	snprintf(t, sizeof t, "sys/bus/%s", bus);
	mkdirs(t);
	snprintf(p, sizeof p, "sys/devices/%s/subsystem", path);
	put_link(t, p);
	if (drv) {
		snprintf(t, sizeof t, "sys/bus/%s/drivers/%s", bus, drv);
		mkdirs(t);
		snprintf(p, sizeof p, "sys/devices/%s/driver", path);
		put_link(t, p);
		if (mod) {
			char m[256], l[600];
			snprintf(m, sizeof m, "sys/module/%s", mod);
			mkdirs(m);
			snprintf(l, sizeof l, "%s/module", t);
			put_link(m, l);
		}
	}
	if (modalias) {
		snprintf(p, sizeof p, "sys/devices/%s/modalias", path);
		put_text(p, modalias);
	}
}

#endif
