/* Can the dedicated crash kernel reach the dump device? It has no
 * modules: every driver between the disk and the root bus, and the
 * IOMMU's, must be built in. The chain is read from the running kernel's
 * sysfs (what reaches the device here), the dedicated kernel's drivers
 * from the lists installed beside it: KERNEL.modules.builtin,
 * KERNEL.modules.builtin.modinfo and KERNEL.config (make
 * install-crash-kernel). */
#ifndef KDI_REACH_H
#define KDI_REACH_H

#include <stddef.h>

#include "../config/target.h"

#define REACH_NODES 24

/* One directory of the chain, the disk first, that has a subsystem or a
 * driver. Every name is validated (letters, digits, _ . : + -). */
struct reach_node {
	char name[64];		/* 0000:03:00.0, virtio1, sda */
	char driver[64];	/* the bound driver's name in sysfs; "" unbound */
	char module[64];	/* its module (/sys/module/NAME through driver/module),
				 * else the driver's name; '-' as '_' */
	char modalias[256];	/* printable, no space; "" when none */
};

struct reach_chain {
	int n;
	struct reach_node node[REACH_NODES];
	char layer[8];		/* "dm" or "md" when the disk is one, "nbd" for
				 * a network dump device's NIC, else "" */
	char iommu[64];		/* the IOMMU unit a node's iommu link names
				 * (dmar0, ivhd0, smmu3.0x...), else "" */
};

/* The chain of block device NAME (sys/class/block/NAME/dev ->
 * sys/dev/block/MAJ:MIN -> its directory under sys/devices, then each
 * parent up to the root bus). 0; -ENOENT (no such device); -EXDEV (its
 * directory is not under sys/devices); -E2BIG (over REACH_NODES);
 * -EINVAL (a name or modalias that fails validation). */
int reach_chain_read(const struct sysroot *r, const char *name, struct reach_chain *c);

/* The chain of network interface IFNAME's device (sys/class/net/IFNAME/
 * device, then each parent), for a network dump device: layer "nbd", the
 * NBD client it needs over the NIC. The same returns. */
int reach_chain_read_net(const struct sysroot *r, const char *ifname, struct reach_chain *c);

/* The dedicated kernel's lists, read whole (at most 16 MiB each). */
struct reach_kernel {
	char *builtin;		/* modules.builtin */
	char *modinfo;		/* modules.builtin.modinfo: NUL-separated records */
	size_t modinfo_len;
	char *config;		/* .config */
};

/* Reads KERNEL.modules.builtin, KERNEL.modules.builtin.modinfo and
 * KERNEL.config. 0, or the -errno of the first that cannot be read. */
int reach_kernel_load(struct reach_kernel *k, const char *kernel);
void reach_kernel_free(struct reach_kernel *k);

/* What of chain c kernel k lacks, into out as "megaraid_sas,
 * CONFIG_INTEL_IOMMU (IOMMU dmar0)" ("" when nothing): a bound driver
 * whose module is neither built in nor matched by a built-in alias of
 * the node's modalias; the option dm or md needs; the IOMMU's option (an
 * IOMMU of a kind it does not know counts as lacking). An unbound parent
 * needs nothing: the device is reached through it here without a
 * driver. Returns how many are lacking. */
int reach_missing(const struct reach_kernel *k, const struct reach_chain *c, char *out, size_t sz);

#endif
