#include "reach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config/modalias.h"
#include "../lib/io.h"
#include "../lib/util.h"

/* ---- sysfs, read bounded and validated ---- */

/* A sysfs name as the kernel makes them (device, driver, module and
 * IOMMU names). Anything else is not one of them: refused. */
static int valid_name(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:+-") == strlen(s);
}

/* The last component of the target of link dir/name, which must be a
 * link, validated. 0, -ENOENT (no such link), -EINVAL. */
static int link_name(const char *dir, const char *name, char *out, size_t sz)
{
	char path[PATH_MAX], t[PATH_MAX];

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return -ENAMETOOLONG;
	ssize_t n = readlink(path, t, sizeof t);
	if (n < 0)
		return -ENOENT;
	if ((size_t)n >= sizeof t)
		return -EINVAL;
	t[n] = 0;
	const char *b = strrchr(t, '/');
	b = b ? b + 1 : t;
	if (strlen(b) >= sz || !valid_name(b))
		return -EINVAL;
	strcpy(out, b);
	return 0;
}

/* OUT as one printable word, else "": a modalias is only a hint (see
 * reach_missing), so a strange one is dropped. */
static void word_or_nothing(char *out)
{
	for (const char *c = out; *c; c++)
		if (*c <= ' ' || *c > '~') {
			out[0] = 0;
			return;
		}
}

/* dir/name as one printable word shorter than sz, else "". */
static void read_word(const char *dir, const char *name, char *out, size_t sz)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	ssize_t n = read_text_file(path, out, sz);
	if (n <= 0 || (size_t)n >= sz - 1)
		n = 0;
	out[n] = 0;
	word_or_nothing(out);
}

/* '-' as '_', as module names are compared (kmod does the same). */
static void modname(char *s)
{
	for (; *s; s++)
		if (*s == '-')
			*s = '_';
}

/* The node's modalias attribute, else its uevent's MODALIAS= (a bus with
 * none: mmc), one printable word shorter than sz, else "". */
static void read_alias(const char *dir, char *out, size_t sz)
{
	read_word(dir, "modalias", out, sz);
	if (!out[0] && uevent_modalias(dir, out, sz) < 0)
		out[0] = 0;
	word_or_nothing(out);
}

static int node_read(const char *dir, struct reach_node *nd)
{
	const char *b = strrchr(dir, '/');
	int r;

	if (strlen(b + 1) >= sizeof nd->name || !valid_name(b + 1))
		return -EINVAL;
	strcpy(nd->name, b + 1);
	/* The driver link, then the driver's own module link: the two
	 * links meant, nothing else is followed. */
	if ((r = link_name(dir, "driver", nd->driver, sizeof nd->driver)) == -EINVAL)
		return r;
	if (nd->driver[0] && (r = link_name(dir, "driver/module", nd->module, sizeof nd->module)) == -EINVAL)
		return r;
	if (!nd->module[0])
		strcpy(nd->module, nd->driver);
	modname(nd->module);
	read_alias(dir, nd->modalias, sizeof nd->modalias);
	return 0;
}

static int chain_at(const struct sysroot *r, const char *path, struct reach_chain *c);

int reach_chain_read(const struct sysroot *r, const char *name, struct reach_chain *c)
{
	char path[PATH_MAX], devno[32];
	unsigned maj, min;
	char end;

	memset(c, 0, sizeof *c);
	if (!valid_name(name))
		return -ENOENT;
	snprintf(path, sizeof path, "%s/class/block/%s", r->sys, name);
	read_word(path, "dev", devno, sizeof devno);
	if (sscanf(devno, "%u:%u%c", &maj, &min, &end) != 2)
		return -ENOENT;
	snprintf(path, sizeof path, "%s/dev/block/%u:%u", r->sys, maj, min);
	return chain_at(r, path, c);
}

int reach_chain_read_net(const struct sysroot *r, const char *ifname, struct reach_chain *c)
{
	char path[PATH_MAX];

	memset(c, 0, sizeof *c);
	if (!valid_name(ifname))
		return -ENOENT;
	snprintf(path, sizeof path, "%s/class/net/%s/device", r->sys, ifname);
	int rc = chain_at(r, path, c);
	strcpy(c->layer, "nbd");
	return rc;
}

/* The chain from the device directory path (a link into sys/devices). */
static int chain_at(const struct sysroot *r, const char *path, struct reach_chain *c)
{
	char top[PATH_MAX], *real, *rtop;
	int rc = 0;

	snprintf(top, sizeof top, "%s/devices", r->sys);
	if (!(real = realpath(path, NULL)))
		return -ENOENT;
	if (!(rtop = realpath(top, NULL))) {
		free(real);
		return -ENOENT;
	}
	size_t tl = strlen(rtop);
	if (strncmp(real, rtop, tl) || real[tl] != '/') {
		rc = -EXDEV;
		goto out;
	}
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/dm", real);
	if (access(p, F_OK) == 0)
		strcpy(c->layer, "dm");
	snprintf(p, sizeof p, "%s/md", real);
	if (access(p, F_OK) == 0)
		strcpy(c->layer, "md");
	/* Up by name, not by link: each parent directory is where the
	 * device model put it, down to the root bus. */
	for (; strlen(real) > tl; *strrchr(real, '/') = 0) {
		char sub[64];
		int hs = link_name(real, "subsystem", sub, sizeof sub) == 0;
		snprintf(p, sizeof p, "%s/driver", real);
		if (!hs && access(p, F_OK) != 0)
			continue;
		if (c->n == REACH_NODES) {
			rc = -E2BIG;
			goto out;
		}
		struct reach_node *nd = &c->node[c->n++];
		if ((rc = node_read(real, nd)) < 0)
			goto out;
		/* The IOMMU unit translating this device's DMA, if it names
		 * one that is registered as such. */
		if (!c->iommu[0] && link_name(real, "iommu", sub, sizeof sub) == 0) {
			snprintf(p, sizeof p, "%s/class/iommu/%s", r->sys, sub);
			if (access(p, F_OK) == 0)
				strcpy(c->iommu, sub);
		}
	}
out:
	free(real);
	free(rtop);
	return rc;
}

/* ---- the dedicated kernel's lists ---- */

static int load(const char *kernel, const char *ext, char **out, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof path, "%s%s", kernel, ext);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), r = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size > (16 << 20))
		r = -EFBIG;
	else if (!(*out = malloc((size_t)st.st_size + 1)))
		r = -ENOMEM;
	else if ((r = (int)read_full_at(fd, *out, (size_t)st.st_size, 0)) >= 0) {
		(*out)[r] = 0;
		if (len)
			*len = (size_t)r;
		r = 0;
	}
	close(fd);
	return r;
}

int reach_kernel_load(struct reach_kernel *k, const char *kernel)
{
	int r;

	memset(k, 0, sizeof *k);
	if ((r = load(kernel, ".modules.builtin", &k->builtin, NULL)) < 0 ||
	    (r = load(kernel, ".modules.builtin.modinfo", &k->modinfo, &k->modinfo_len)) < 0 ||
	    (r = load(kernel, ".config", &k->config, NULL)) < 0)
		reach_kernel_free(k);
	return r;
}

void reach_kernel_free(struct reach_kernel *k)
{
	free(k->builtin);
	free(k->modinfo);
	free(k->config);
	memset(k, 0, sizeof *k);
}

/* ---- the comparison ---- */

/* OPTION=y in a .config. */
static int config_y(const char *config, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *l = config; *l; l += strcspn(l, "\n"), l += *l == '\n')
		if (!strncmp(l, opt, n) && !strncmp(l + n, "=y", 2) && (l[n + 2] == '\n' || !l[n + 2]))
			return 1;
	return 0;
}

/* Drivers bound here that the device is reached without: the PCIe port
 * services driver (AER, hotplug, PME) binds bridges, which forward
 * without it (the dedicated kernel leaves CONFIG_PCIEPORTBUS out). */
static const char *const not_needed[] = { "pcieport" };

/* The IOMMU units by name (drivers/iommu: intel/dmar.c "dmar%d",
 * amd/init.c "ivhd%d", arm-smmu-v3.c "smmu3.%pa") and their options. */
static const struct {
	const char *prefix, *option;
} iommus[] = {
	{ "dmar", "CONFIG_INTEL_IOMMU" }, { "ivhd", "CONFIG_AMD_IOMMU" }, { "smmu3.", "CONFIG_ARM_SMMU_V3" },
};

static int lack(char *out, size_t sz, const char *what, const char *why)
{
	size_t l = strlen(out);
	snprintf(out + l, sz - l, "%s%s%s%s%s", l ? ", " : "", what, why ? " (" : "", why ? why : "",
		 why ? ")" : "");
	return 1;
}

int reach_missing(const struct reach_kernel *k, const struct reach_chain *c, char *out, size_t sz)
{
	int n = 0;

	out[0] = 0;
	for (int i = 0; i < c->n; i++) {
		const struct reach_node *nd = &c->node[i];
		int skip = !nd->driver[0];
		for (size_t j = 0; j < ARRAY_SIZE(not_needed); j++)
			skip |= !strcmp(nd->driver, not_needed[j]);
		if (!skip && !modules_builtin_has(k->builtin, nd->module) &&
		    !modinfo_alias(k->modinfo, k->modinfo_len, nd->modalias, NULL, 0))
			n += lack(out, sz, nd->module, NULL);
	}
	/* An md array too: the crash kernel rebuilds a RAID1 with
	 * device-mapper (config/stack.h), never with md. A network dump
	 * device: the NBD client over the NIC. */
	const char *lopt = !strcmp(c->layer, "nbd") ? "CONFIG_BLK_DEV_NBD" : "CONFIG_BLK_DEV_DM";
	if (c->layer[0] && !config_y(k->config, lopt))
		n += lack(out, sz, lopt, c->layer);
	if (c->iommu[0]) {
		const char *opt = "an IOMMU driver";
		for (size_t j = 0; j < ARRAY_SIZE(iommus); j++)
			if (!strncmp(c->iommu, iommus[j].prefix, strlen(iommus[j].prefix)))
				opt = iommus[j].option;
		if (strncmp(opt, "CONFIG_", 7) || !config_y(k->config, opt))
			n += lack(out, sz, opt, c->iommu);
	}
	return n;
}
