/* Unit tests for arm/reach.c: can the dedicated crash kernel reach the
 * dump device? A fake sysfs holds the symlinks the device model makes
 * (sys/dev/block/MAJ:MIN and sys/class/block/NAME -> the disk under
 * sys/devices; driver, driver/module, subsystem and iommu links), and a
 * fake dedicated kernel its three lists beside it. The chains:
 *   sda: disk <- SCSI device (sd, no module link: found by its modalias)
 *        <- target <- host <- HBA 0000:01:00.0 (megaraid_sas) behind
 *        IOMMU dmar0 <- PCIe bridge 0000:00:01.0 (pcieport) <- root bus;
 *   sdb: the same under an HBA whose driver name is not its module's
 *        (mpt3sas_hba, module mpt3sas), behind an unbound bridge;
 *   vda: virtio-blk on virtio-pci (a dash in the driver's name);
 *   dm-0: a device-mapper disk. */
#define _GNU_SOURCE	/* nftw flags, in glibc (the ASan build) */
#define CHECK_PREFIX "reach"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../arm/reach.c"

#include "fakesys.h"

/* A disk NAME (MAJ:MIN) at sys/devices/PATH. */
static void put_disk(const char *path, const char *name, const char *devno)
{
	char p[512], t[600];
	snprintf(p, sizeof p, "sys/devices/%s", path);
	put_dev(path, "../class/block", NULL, NULL, NULL);
	snprintf(t, sizeof t, "sys/class/block/%s", name);
	put_link(p, t);
	snprintf(t, sizeof t, "sys/dev/block/%s", devno);
	put_link(p, t);
	snprintf(t, sizeof t, "%s/dev", p);
	put_text(t, devno);
	snprintf(t, sizeof t, "dev/%s", name);
	put_text(t, "");
}

static void put_iommu(const char *devpath, const char *unit)
{
	char v[256], l[512];
	snprintf(v, sizeof v, "sys/devices/virtual/iommu/%s", unit);
	mkdirs(v);
	snprintf(l, sizeof l, "sys/class/iommu/%s", unit);
	put_link(v, l);
	snprintf(l, sizeof l, "sys/devices/%s/iommu", devpath);
	put_link(v, l);
}

#define HBA "pci0000:00/0000:00:01.0/0000:01:00.0"
#define SCSI HBA "/host0/target0:2:0/0:2:0:0"

static void fake_sysfs(void)
{
	mkdirs("sys/class/block");
	mkdirs("sys/devices/pci0000:00");	/* the root bus: no subsystem, no driver */
	put_dev("pci0000:00/0000:00:01.0", "pci", "pcieport", "pcieportdrv",
		"pci:v00008086d00000C01sv00000000sd00000000bc06sc04i00\n");
	put_dev(HBA, "pci", "megaraid_sas", "megaraid_sas",
		"pci:v00001000d0000005Dsv00001028sd00001F49bc01sc04i00\n");
	put_iommu(HBA, "dmar0");
	put_dev(HBA "/host0", "scsi", NULL, NULL, NULL);
	put_dev(HBA "/host0/target0:2:0", "scsi", NULL, NULL, NULL);
	put_dev(SCSI, "scsi", "sd", NULL, "scsi:t-0x00\n");
	put_disk(SCSI "/block/sda", "sda", "8:0");

	/* An unbound bridge (its modalias read, nothing needed), then an
	 * HBA whose driver's sysfs name is not its module's. */
	put_dev("pci0000:00/0000:00:02.0", "pci", NULL, NULL,
		"pci:v00008086d00000C02sv00000000sd00000000bc06sc04i00\n");
	put_dev("pci0000:00/0000:00:02.0/0000:02:00.0", "pci", "mpt3sas_hba", "mpt3sas",
		"pci:v00001000d00000097sv00001000sd00003090bc01sc07i00\n");
	put_dev("pci0000:00/0000:00:02.0/0000:02:00.0/host1", "scsi", NULL, NULL, NULL);
	put_disk("pci0000:00/0000:00:02.0/0000:02:00.0/host1/block/sdb", "sdb", "8:16");

	put_dev("pci0000:00/0000:00:04.0", "pci", "virtio-pci", NULL,
		"pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00\n");
	put_dev("pci0000:00/0000:00:04.0/virtio0", "virtio", "virtio_blk", "virtio_blk",
		"virtio:d00000002v00001AF4\n");
	put_disk("pci0000:00/0000:00:04.0/virtio0/block/vda", "vda", "254:0");

	/* An SD card: its driver mmcblk has no module link, the mmc bus no
	 * modalias file; the uevent's MODALIAS= is what names mmc_block. */
	put_dev("pci0000:00/0000:00:05.0", "pci", "sdhci-pci", "sdhci_pci",
		"pci:v00001B36d00000007sv00001AF4sd00001100bc08sc05i01\n");
	put_dev("pci0000:00/0000:00:05.0/mmc_host/mmc0/mmc0:4567", "mmc", "mmcblk", NULL, NULL);
	put_text("sys/devices/pci0000:00/0000:00:05.0/mmc_host/mmc0/mmc0:4567/uevent",
		 "DRIVER=mmcblk\nMMC_TYPE=SD\nMODALIAS=mmc:block\n");
	put_disk("pci0000:00/0000:00:05.0/mmc_host/mmc0/mmc0:4567/block/mmcblk0", "mmcblk0", "179:0");

	put_disk("virtual/block/dm-0", "dm-0", "253:0");
	mkdirs("sys/devices/virtual/block/dm-0/dm");
}

/* The dedicated kernel's lists at KERNEL.*: BUILTIN (modules.builtin
 * lines), MODINFO ("\0"-separated records), CONFIG. */
static const char kernel_rel[] = "lib/crash-kernel";
static char kernel[1200];

static void put_kernel(const char *builtin, const char *modinfo, size_t modinfo_len, const char *config)
{
	put_text("lib/crash-kernel", "");
	put_text("lib/crash-kernel.modules.builtin", builtin);
	put_text("lib/crash-kernel.modules.builtin.modinfo", "");
	put_bin("lib/crash-kernel.modules.builtin.modinfo", modinfo, modinfo_len);
	put_text("lib/crash-kernel.config", config);
}

static const char all_builtin[] =
	"kernel/drivers/scsi/scsi_mod.ko\n"
	"kernel/drivers/scsi/sd_mod.ko\n"
	"kernel/drivers/scsi/megaraid/megaraid_sas.ko\n"
	"kernel/drivers/scsi/mpt3sas/mpt3sas.ko\n"
	"kernel/drivers/virtio/virtio_pci.ko\n"
	"kernel/drivers/block/virtio_blk.ko";	/* no newline at the end */
static const char all_modinfo[] =
	"sd_mod.file=drivers/scsi/sd_mod\0sd_mod.alias=scsi:t-0x00*\0sd_mod.alias=scsi:t-0x0[47]*\0"
	"megaraid_sas.alias=pci:v00001000d0000005Dsv*sd*bc*sc*i*\0";
static const char intel_config[] = "# CONFIG_AMD_IOMMU is not set\nCONFIG_INTEL_IOMMU=y\n";

/* The chain of NAME against the lists now in place: how many lack, and what. */
static char lacking[400];
static int missing_for(const char *name)
{
	static struct reach_chain c;
	struct reach_kernel k;
	int r = reach_chain_read(&sr, name, &c);
	if (r < 0)
		return r - 1000;
	if ((r = reach_kernel_load(&k, kernel)) < 0)
		return r - 2000;
	r = reach_missing(&k, &c, lacking, sizeof lacking);
	reach_kernel_free(&k);
	return r;
}

static void chain_of_sda(void)
{
	static struct reach_chain c;
	CHECK_INT(reach_chain_read(&sr, "sda", &c), 0);
	CHECK_INT(c.n, 6);
	CHECK_STR(c.node[0].name, "sda");
	CHECK_STR(c.node[0].driver, "");
	CHECK_STR(c.node[1].name, "0:2:0:0");
	CHECK_STR(c.node[1].driver, "sd");
	CHECK_STR(c.node[1].module, "sd");	/* no module link: the driver's name */
	CHECK_STR(c.node[1].modalias, "scsi:t-0x00");
	CHECK_STR(c.node[4].name, "0000:01:00.0");
	CHECK_STR(c.node[4].module, "megaraid_sas");
	CHECK_STR(c.node[5].name, "0000:00:01.0");
	CHECK_STR(c.node[5].module, "pcieportdrv");
	CHECK_STR(c.iommu, "dmar0");
	CHECK_STR(c.layer, "");
}

static void all_built_in(void)
{
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, intel_config);
	CHECK_INT(missing_for("sda"), 0);
	CHECK_STR(lacking, "");
	CHECK_INT(missing_for("vda"), 0);
	CHECK_STR(lacking, "");
}

static void missing_hba(void)
{
	static const char modinfo[] = "sd_mod.alias=scsi:t-0x00*\0";
	put_kernel("kernel/drivers/scsi/sd_mod.ko\n", modinfo, sizeof modinfo, intel_config);
	CHECK_INT(missing_for("sda"), 1);
	CHECK_STR(lacking, "megaraid_sas");
	/* Not built in, but a built-in driver claims the device's modalias:
	 * it binds there in the crash kernel. */
	static const char by_alias[] = "sd_mod.alias=scsi:t-0x00*\0"
				       "megaraid_sas.alias=pci:v00001000d0000005Dsv*sd*bc*sc*i*\0";
	put_kernel("kernel/drivers/scsi/sd_mod.ko\n", by_alias, sizeof by_alias, intel_config);
	CHECK_INT(missing_for("sda"), 0);
	/* Aliases compare as kmod compares them, '-' as '_' on both sides
	 * (config/modalias.c's rule, one function for both callers). */
	static const char underscored[] = "sd_mod.alias=scsi:t_0x00*\0"
					   "megaraid_sas.alias=pci:v00001000d0000005Dsv*sd*bc*sc*i*\0";
	put_kernel("kernel/drivers/scsi/sd_mod.ko\n", underscored, sizeof underscored, intel_config);
	CHECK_INT(missing_for("sda"), 0);
	/* A module file named with '-' is the module with '_'. */
	put_kernel("kernel/drivers/scsi/megaraid/megaraid-sas.ko\n", modinfo, sizeof modinfo, intel_config);
	CHECK_INT(missing_for("sda"), 0);
	/* sd: neither its name nor an alias of its modalias: named as bound. */
	put_kernel(all_builtin, "", 0, intel_config);
	CHECK_INT(missing_for("sda"), 1);
	CHECK_STR(lacking, "sd");
}

static void missing_iommu(void)
{
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, "# CONFIG_INTEL_IOMMU is not set\n");
	CHECK_INT(missing_for("sda"), 1);
	CHECK_STR(lacking, "CONFIG_INTEL_IOMMU (dmar0)");
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, "CONFIG_INTEL_IOMMU=m\nCONFIG_INTEL_IOMMU_X=y\n");
	CHECK_INT(missing_for("sda"), 1);
	/* Both lacking, in chain order, the IOMMU last. */
	put_kernel("", "", 0, "");
	CHECK_INT(missing_for("sda"), 3);
	CHECK_STR(lacking, "sd, megaraid_sas, CONFIG_INTEL_IOMMU (dmar0)");
	/* Not behind the IOMMU: the option is not needed. */
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, "");
	CHECK_INT(missing_for("vda"), 0);
}

static void iommu_kinds(void)
{
	static struct reach_chain c;
	struct reach_kernel k;
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo,
		   "CONFIG_AMD_IOMMU=y\nCONFIG_ARM_SMMU_V3=y\n");
	CHECK_INT(reach_kernel_load(&k, kernel), 0);
	CHECK_INT(reach_chain_read(&sr, "vda", &c), 0);
	strcpy(c.iommu, "ivhd0");
	CHECK_INT(reach_missing(&k, &c, lacking, sizeof lacking), 0);
	strcpy(c.iommu, "smmu3.0x0000000009050000");
	CHECK_INT(reach_missing(&k, &c, lacking, sizeof lacking), 0);
	strcpy(c.iommu, "dmar1");
	CHECK_INT(reach_missing(&k, &c, lacking, sizeof lacking), 1);
	CHECK_STR(lacking, "CONFIG_INTEL_IOMMU (dmar1)");
	/* A kind the check does not know: lacking, named. */
	strcpy(c.iommu, "viommu0");
	CHECK_INT(reach_missing(&k, &c, lacking, sizeof lacking), 1);
	CHECK_STR(lacking, "an IOMMU driver (viommu0)");
	reach_kernel_free(&k);
	/* An iommu link to a unit not in sys/class/iommu is not taken. */
	put_link("sys/devices/virtual/iommu/ghost0", "sys/devices/pci0000:00/0000:00:04.0/iommu");
	CHECK_INT(reach_chain_read(&sr, "vda", &c), 0);
	CHECK_STR(c.iommu, "");
	unlink(path_of("sys/devices/pci0000:00/0000:00:04.0/iommu"));
}

static void name_is_not_module(void)
{
	static struct reach_chain c;
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, intel_config);
	/* The module link names mpt3sas: built in, though bound as mpt3sas_hba. */
	CHECK_INT(reach_chain_read(&sr, "sdb", &c), 0);
	CHECK_STR(c.node[2].driver, "mpt3sas_hba");
	CHECK_STR(c.node[2].module, "mpt3sas");
	CHECK_INT(missing_for("sdb"), 0);
	/* "virtio-pci" in sysfs is the module virtio_pci. */
	CHECK_INT(reach_chain_read(&sr, "vda", &c), 0);
	CHECK_STR(c.node[2].driver, "virtio-pci");
	CHECK_STR(c.node[2].module, "virtio_pci");
	/* Without the module link, the driver's name is all there is. */
	unlink(path_of("sys/bus/pci/drivers/mpt3sas_hba/module"));
	CHECK_INT(missing_for("sdb"), 1);
	CHECK_STR(lacking, "mpt3sas_hba");
	put_link("sys/module/mpt3sas", "sys/bus/pci/drivers/mpt3sas_hba/module");
}

/* mmc_block built in (modules.builtin.modinfo's alias mmc:block) is found
 * through the card's uevent; without it, mmcblk is what lacks. */
static void sd_card(void)
{
	static const char modinfo[] = "mmc_block.alias=mmc:block\0";
	static struct reach_chain c;
	CHECK_INT(reach_chain_read(&sr, "mmcblk0", &c), 0);
	CHECK_STR(c.node[1].module, "mmcblk");
	CHECK_STR(c.node[1].modalias, "mmc:block");
	put_kernel("kernel/drivers/mmc/host/sdhci-pci.ko\n", modinfo, sizeof modinfo, intel_config);
	CHECK_INT(missing_for("mmcblk0"), 0);
	CHECK_STR(lacking, "");
	put_kernel("kernel/drivers/mmc/host/sdhci-pci.ko\n", "", 1, intel_config);
	CHECK_INT(missing_for("mmcblk0"), 1);
	CHECK_STR(lacking, "mmcblk");
}

static void unbound_parent(void)
{
	static struct reach_chain c;
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, intel_config);
	CHECK_INT(reach_chain_read(&sr, "sdb", &c), 0);
	CHECK_INT(c.n, 4);
	CHECK_STR(c.node[3].name, "0000:00:02.0");
	CHECK_STR(c.node[3].driver, "");
	CHECK_STR(c.node[3].modalias, "pci:v00008086d00000C02sv00000000sd00000000bc06sc04i00");
	/* Reached here without a driver there: nothing needed. */
	CHECK_INT(missing_for("sdb"), 0);
	/* pcieport is bound on sda's bridge and is not in the list either. */
	CHECK_INT(missing_for("sda"), 0);
}

static void device_mapper(void)
{
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, intel_config);
	CHECK_INT(missing_for("dm-0"), 1);
	CHECK_STR(lacking, "CONFIG_BLK_DEV_DM (dm)");
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, "CONFIG_BLK_DEV_DM=y");
	CHECK_INT(missing_for("dm-0"), 0);
}

static void validated(void)
{
	static struct reach_chain c;
	const char *ma = "sys/devices/" HBA "/modalias";
	/* A modalias with a space, or longer than its buffer, is dropped. */
	put_text(ma, "pci:v00001000 d0000005D\n");
	CHECK_INT(reach_chain_read(&sr, "sda", &c), 0);
	CHECK_STR(c.node[4].modalias, "");
	char longer[400];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = 0;
	put_text(ma, longer);
	CHECK_INT(reach_chain_read(&sr, "sda", &c), 0);
	CHECK_STR(c.node[4].modalias, "");
	put_text(ma, "pci:v00001000d0000005Dsv00001028sd00001F49bc01sc04i00\n");
	/* A driver link whose name the kernel would not make: refused. */
	mkdirs("sys/bus/pci/drivers/bad name");
	put_link("sys/bus/pci/drivers/bad name", "sys/devices/" HBA "/driver");
	CHECK_INT(reach_chain_read(&sr, "sda", &c), -EINVAL);
	put_link("sys/bus/pci/drivers/megaraid_sas", "sys/devices/" HBA "/driver");
	/* A dev file that is not MAJ:MIN, a name with a slash, no such disk. */
	put_text("sys/devices/" SCSI "/block/sda/dev", "8:0x\n");
	CHECK_INT(reach_chain_read(&sr, "sda", &c), -ENOENT);
	put_text("sys/devices/" SCSI "/block/sda/dev", "8:0\n");
	CHECK_INT(reach_chain_read(&sr, "../sda", &c), -ENOENT);
	CHECK_INT(reach_chain_read(&sr, "sdz", &c), -ENOENT);
	/* sys/dev/block leading out of sys/devices. */
	mkdirs("elsewhere/sdx");
	put_text("sys/class/block/sdx/dev", "8:32\n");
	put_link("elsewhere/sdx", "sys/dev/block/8:32");
	CHECK_INT(reach_chain_read(&sr, "sdx", &c), -EXDEV);
	CHECK_INT(reach_chain_read(&sr, "sda", &c), 0);
}

static void lists(void)
{
	struct reach_kernel k;
	put_kernel(all_builtin, all_modinfo, sizeof all_modinfo, intel_config);
	CHECK_INT(reach_kernel_load(&k, kernel), 0);
	CHECK_INT(k.modinfo_len, sizeof all_modinfo);
	reach_kernel_free(&k);
	unlink(path_of("lib/crash-kernel.config"));
	CHECK_INT(reach_kernel_load(&k, kernel), -ENOENT);
	CHECK(k.builtin == NULL && k.modinfo == NULL, "freed on failure");
	/* A FIFO is refused at once, not waited on. */
	CHECK_INT(mkfifo(path_of("lib/crash-kernel.config"), 0600), 0);
	CHECK_INT(reach_kernel_load(&k, kernel), -EFBIG);
	unlink(path_of("lib/crash-kernel.config"));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

int main(void)
{
	const char *dir = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/kdi-reach-XXXXXX", dir && *dir ? dir : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(sys, sizeof sys, "%s/sys", root);
	snprintf(dev, sizeof dev, "%s/dev", root);
	snprintf(kernel, sizeof kernel, "%s/%s", root, kernel_rel);
	fake_sysfs();

	RUN(chain_of_sda);
	RUN(all_built_in);
	RUN(missing_hba);
	RUN(missing_iommu);
	RUN(iommu_kinds);
	RUN(name_is_not_module);
	RUN(sd_card);
	RUN(unbound_parent);
	RUN(device_mapper);
	RUN(validated);
	RUN(lists);
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
