/* Unit tests for config/modalias.c: the modules a dump device needs, from
 * a fake sysfs (virtio-blk with a partition, NVMe with and without
 * multipath, SATA through AHCI, virtio-scsi, USB storage on xHCI, an SD
 * card on SDHCI,
 * dm-crypt on a partition, a watchdog) and a fake module tree whose modules.dep, modules.alias and
 * modules.softdep lines are Debian 12's 6.1 ones; the expected orders are
 * what `modprobe --show-depends -a` printed there, duplicates dropped. */
#define _GNU_SOURCE	/* nftw flags, in glibc (the ASan build) */
#define CHECK_PREFIX "modalias"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../config/modalias.h"

#include "fakesys.h"

/* A class device (block, nvme, ...) with no driver of its own. */
static void put_class(const char *path, const char *cls, const char *name)
{
	char p[512], t[512];
	snprintf(p, sizeof p, "sys/devices/%s", path);
	mkdirs(p);
	snprintf(t, sizeof t, "sys/class/%s", cls);
	mkdirs(t);
	snprintf(p, sizeof p, "sys/devices/%s/subsystem", path);
	put_link(t, p);
	if (name) {
		snprintf(p, sizeof p, "sys/devices/%s", path);
		snprintf(t, sizeof t, "sys/class/%s/%s", cls, name);
		put_link(p, t);
	}
}

/* Debian 12's 6.1 lines for the modules these devices need. */
static const char dep_text[] =
	"kernel/drivers/virtio/virtio.ko:\n"
	"kernel/drivers/virtio/virtio_ring.ko:\n"
	"kernel/drivers/virtio/virtio_pci_modern_dev.ko:\n"
	"kernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n"
	"kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n"
	"kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n"
	"kernel/drivers/scsi/virtio_scsi.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n"
	"kernel/drivers/scsi/scsi_common.ko:\n"
	"kernel/drivers/scsi/scsi_mod.ko: kernel/drivers/scsi/scsi_common.ko\n"
	"kernel/drivers/scsi/sd_mod.ko: kernel/block/t10-pi.ko kernel/lib/crc64-rocksoft.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko kernel/lib/crc-t10dif.ko kernel/lib/crc64.ko kernel/crypto/crct10dif_common.ko\n"
	"kernel/block/t10-pi.ko: kernel/lib/crc64-rocksoft.ko kernel/lib/crc-t10dif.ko kernel/lib/crc64.ko kernel/crypto/crct10dif_common.ko\n"
	"kernel/lib/crc64-rocksoft.ko: kernel/lib/crc64.ko\n"
	"kernel/lib/crc64.ko:\n"
	"kernel/lib/crc-t10dif.ko: kernel/crypto/crct10dif_common.ko\n"
	"kernel/crypto/crct10dif_common.ko:\n"
	"kernel/crypto/crct10dif_generic.ko: kernel/crypto/crct10dif_common.ko\n"
	"kernel/arch/x86/crypto/crct10dif-pclmul.ko: kernel/crypto/crct10dif_common.ko\n"
	"kernel/drivers/nvme/host/nvme-core.ko: kernel/block/t10-pi.ko kernel/lib/crc64-rocksoft.ko kernel/lib/crc-t10dif.ko kernel/lib/crc64.ko kernel/crypto/crct10dif_common.ko\n"
	"kernel/drivers/nvme/host/nvme.ko: kernel/drivers/nvme/host/nvme-core.ko kernel/block/t10-pi.ko kernel/lib/crc64-rocksoft.ko kernel/lib/crc-t10dif.ko kernel/lib/crc64.ko kernel/crypto/crct10dif_common.ko\n"
	"kernel/drivers/ata/libata.ko: kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko\n"
	"kernel/drivers/ata/libahci.ko: kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko\n"
	"kernel/drivers/ata/ahci.ko: kernel/drivers/ata/libahci.ko kernel/drivers/ata/libata.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko\n"
	"kernel/drivers/md/dm-mod.ko:\n"
	"kernel/drivers/md/dm-crypt.ko: kernel/drivers/md/dm-mod.ko\n"
	"kernel/drivers/watchdog/watchdog.ko:\n"
	"kernel/drivers/watchdog/i6300esb.ko: kernel/drivers/watchdog/watchdog.ko\n"
	"kernel/drivers/firmware/qemu_fw_cfg.ko:\n"
	"kernel/drivers/mmc/core/mmc_core.ko:\n"
	"kernel/drivers/mmc/core/mmc_block.ko: kernel/drivers/mmc/core/mmc_core.ko\n"
	"kernel/drivers/mmc/host/sdhci.ko: kernel/drivers/mmc/core/mmc_core.ko\n"
	"kernel/drivers/mmc/host/cqhci.ko: kernel/drivers/mmc/core/mmc_core.ko\n"
	"kernel/drivers/mmc/host/sdhci-pci.ko: kernel/drivers/mmc/host/cqhci.ko kernel/drivers/mmc/host/sdhci.ko kernel/drivers/mmc/core/mmc_core.ko\n"
	"kernel/drivers/usb/common/usb-common.ko:\n"
	"kernel/drivers/usb/core/usbcore.ko: kernel/drivers/usb/common/usb-common.ko\n"
	"kernel/drivers/usb/host/xhci-hcd.ko: kernel/drivers/usb/core/usbcore.ko kernel/drivers/usb/common/usb-common.ko\n"
	"kernel/drivers/usb/host/xhci-pci.ko: kernel/drivers/usb/host/xhci-hcd.ko kernel/drivers/usb/core/usbcore.ko kernel/drivers/usb/common/usb-common.ko\n"
	"kernel/drivers/usb/storage/usb-storage.ko: kernel/drivers/usb/core/usbcore.ko kernel/drivers/usb/common/usb-common.ko kernel/drivers/scsi/scsi_mod.ko kernel/drivers/scsi/scsi_common.ko\n"
	"kernel/drivers/net/virtio_net.ko: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko\n";

static const char alias_text[] =
	"alias crypto-crct10dif-pclmul crct10dif_pclmul\n"
	"alias crypto-crct10dif crct10dif_pclmul\n"
	"alias crct10dif crct10dif_pclmul\n"
	"alias crypto-crct10dif crct10dif_generic\n"
	"alias crct10dif crct10dif_generic\n"
	"alias virtio:d00000001v* virtio_net\n"
	"alias virtio:d00000002v* virtio_blk\n"
	"alias virtio:d00000008v* virtio_scsi\n"
	"alias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci\n"
	"alias pci:v*d*sv*sd*bc01sc08i02* nvme\n"
	"alias pci:v*d*sv*sd*bc01sc06i01* ahci\n"
	"alias pci:v00008086d000025ABsv*sd*bc*sc*i* i6300esb\n"
	"alias scsi:t-0x00* sd_mod\n"
	"alias mmc:block mmc_block\n"
	"alias scsi:t-0x0[47]* sd_mod\n";

static const char softdep_text[] =
	"# Soft dependencies extracted from modules themselves.\n"
	"softdep crc_t10dif pre: crct10dif\n"
	"softdep crc64_rocksoft pre: crc64\n";

static const char *const moddir = "mods";

static void put_tree(const char *dir, const char *builtin)
{
	char p[512];
	snprintf(p, sizeof p, "%s/modules.dep", dir);
	put_text(p, dep_text);
	snprintf(p, sizeof p, "%s/modules.alias", dir);
	put_text(p, alias_text);
	snprintf(p, sizeof p, "%s/modules.softdep", dir);
	put_text(p, softdep_text);
	snprintf(p, sizeof p, "%s/modules.builtin", dir);
	put_text(p, builtin);
}

static void fake_sysfs(void)
{
	mkdirs("sys/class/block");
	mkdirs("dev/mapper");
	put_dev("pci0000:00", "pci", NULL, NULL, NULL);
	put_class("pci0000:00", "pci_bus", NULL);

	/* virtio-blk: vda, partition vda1; virtio-pci built into the running
	 * kernel (a driver link, no module link, a dash in its name). */
	put_dev("pci0000:00/0000:00:04.0", "pci", "virtio-pci", NULL,
		"pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00\n");
	put_dev("pci0000:00/0000:00:04.0/virtio0", "virtio", "virtio_blk", "virtio_blk",
		"virtio:d00000002v00001AF4\n");
	put_class("pci0000:00/0000:00:04.0/virtio0/block/vda", "block", "vda");
	put_text("sys/devices/pci0000:00/0000:00:04.0/virtio0/block/vda/serial", "dumpdev\n");
	put_class("pci0000:00/0000:00:04.0/virtio0/block/vda/vda1", "block", "vda1");
	put_text("sys/devices/pci0000:00/0000:00:04.0/virtio0/block/vda/vda1/partition", "1\n");
	put_text("dev/vda", "");
	put_text("dev/vda1", "");

	/* NVMe: nvme0n1 under controller nvme0 under the PCI function. */
	put_dev("pci0000:00/0000:00:05.0", "pci", "nvme", "nvme",
		"pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02\n");
	put_class("pci0000:00/0000:00:05.0/nvme/nvme0", "nvme", "nvme0");
	put_class("pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n1", "block", "nvme0n1");
	/* The controller's serial, space-padded as QEMU's nvme reports it. */
	put_text("sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/serial", "kdump-nvme          \n");
	put_link("sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0",
		 "sys/devices/pci0000:00/0000:00:05.0/nvme/nvme0/nvme0n1/device");

	/* NVMe multipath: the head disk nvme1n1 in the subsystem, which links
	 * to its controller nvme1. */
	put_dev("pci0000:00/0000:00:08.0", "pci", "nvme", "nvme",
		"pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02\n");
	put_class("pci0000:00/0000:00:08.0/nvme/nvme1", "nvme", "nvme1");
	put_class("pci0000:00/0000:00:08.0/nvme/nvme1/nvme1c1n1", "block", NULL);
	put_class("virtual/nvme-subsystem/nvme-subsys1", "nvme-subsystem", NULL);
	put_link("sys/devices/pci0000:00/0000:00:08.0/nvme/nvme1",
		 "sys/devices/virtual/nvme-subsystem/nvme-subsys1/nvme1");
	put_class("virtual/nvme-subsystem/nvme-subsys1/nvme1n1", "block", "nvme1n1");

	/* SATA: sda behind libata's port and SCSI host on AHCI; sd built in
	 * here under the driver name "sd", found by its modalias. */
	put_dev("pci0000:00/0000:00:1f.2", "pci", "ahci", "ahci",
		"pci:v00008086d00002922sv00001AF4sd00001100bc01sc06i01\n");
	put_class("pci0000:00/0000:00:1f.2/ata1", "ata_port", NULL);
	put_dev("pci0000:00/0000:00:1f.2/ata1/host0", "scsi", NULL, NULL, NULL);
	put_dev("pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0", "scsi", NULL, NULL, NULL);
	put_dev("pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0", "scsi", "sd", NULL,
		"scsi:t-0x00\n");
	put_class("pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda", "block", "sda");
	/* SCSI disks have no serial attribute: VPD page 0x80, raw, as 6.1
	 * showed it under QEMU (libata: the ATA serial's 20 bytes, padded). */
	put_link("sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0",
		 "sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/device");
	put_bin("sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/vpd_pg80",
		"\0\x80\0\x14kdump-ahci          ", 24);

	/* virtio-scsi: sdb (the same sd driver: one sysfs driver directory). */
	put_dev("pci0000:00/0000:00:06.0", "pci", "virtio-pci", NULL,
		"pci:v00001AF4d00001004sv00001AF4sd00000008bc01sc00i00\n");
	put_dev("pci0000:00/0000:00:06.0/virtio1", "virtio", "virtio_scsi", "virtio_scsi",
		"virtio:d00000008v00001AF4\n");
	put_dev("pci0000:00/0000:00:06.0/virtio1/host1", "scsi", NULL, NULL, NULL);
	put_dev("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:0", "scsi", NULL, NULL, NULL);
	put_dev("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:0/1:0:0:0", "scsi", "sd", NULL,
		"scsi:t-0x00\n");
	put_class("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:0/1:0:0:0/block/sdb", "block", "sdb");
	put_link("sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:0/1:0:0:0",
		 "sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:0/1:0:0:0/block/sdb/device");
	put_bin("sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:0/1:0:0:0/vpd_pg80",
		"\0\x80\0\x0akdump-scsi", 14);
	/* sdc: a page that is not 0x80 (0x83, device identification), and
	 * sdd: a page whose length says 5 of the 10 bytes there. */
	put_dev("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:1/1:0:1:0", "scsi", "sd", NULL,
		"scsi:t-0x00\n");
	put_class("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:1/1:0:1:0/block/sdc", "block", "sdc");
	put_link("sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:1/1:0:1:0",
		 "sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:1/1:0:1:0/block/sdc/device");
	put_bin("sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:1/1:0:1:0/vpd_pg80",
		"\0\x83\0\x09kdump-bad", 13);
	put_dev("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:2/1:0:2:0", "scsi", "sd", NULL,
		"scsi:t-0x00\n");
	put_class("pci0000:00/0000:00:06.0/virtio1/host1/target1:0:2/1:0:2:0/block/sdd", "block", "sdd");
	put_link("sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:2/1:0:2:0",
		 "sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:2/1:0:2:0/block/sdd/device");
	put_bin("sys/devices/pci0000:00/0000:00:06.0/virtio1/host1/target1:0:2/1:0:2:0/vpd_pg80",
		"\0\x80\0\x05kdump-long", 14);

	/* USB storage (QEMU's qemu-xhci + usb-storage on 6.1): sde under the
	 * SCSI host of interface 2-1:1.0 of USB device 2-1, which holds the
	 * serial (usb-storage has sd skip the VPD pages: no vpd_pg80); the
	 * root hub usb2's serial is the controller's PCI name. */
	put_dev("pci0000:00/0000:00:0d.0", "pci", "xhci_hcd", "xhci_pci",
		"pci:v00001B36d0000000Dsv00001AF4sd00001100bc0Csc03i30\n");
	put_dev("pci0000:00/0000:00:0d.0/usb2", "usb", "usb", "usbcore", NULL);
	put_text("sys/devices/pci0000:00/0000:00:0d.0/usb2/idVendor", "1d6b\n");
	put_text("sys/devices/pci0000:00/0000:00:0d.0/usb2/serial", "0000:00:0d.0\n");
	put_dev("pci0000:00/0000:00:0d.0/usb2/2-1", "usb", "usb", "usbcore", NULL);
	put_text("sys/devices/pci0000:00/0000:00:0d.0/usb2/2-1/idVendor", "46f4\n");
	put_text("sys/devices/pci0000:00/0000:00:0d.0/usb2/2-1/serial", "kdump-usb\n");
	put_dev("pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0", "usb", "usb-storage", "usb_storage",
		"usb:v46F4p0001d0000dc00dsc00dp00ic08isc06ip50in00\n");
	put_dev("pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2", "scsi", NULL, NULL, NULL);
	put_dev("pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2/target2:0:0", "scsi", NULL, NULL, NULL);
	put_dev("pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2/target2:0:0/2:0:0:0", "scsi", "sd", NULL,
		"scsi:t-0x00\n");
	put_class("pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2/target2:0:0/2:0:0:0/block/sde", "block", "sde");
	put_link("sys/devices/pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2/target2:0:0/2:0:0:0",
		 "sys/devices/pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2/target2:0:0/2:0:0:0/block/sde/device");
	put_text("dev/sde", "");

	/* An SD card (QEMU's sdhci-pci + sd-card on 6.1): mmcblk0 under card
	 * mmc0:4567 under host mmc0. The card's driver mmcblk sets no owner,
	 * so no module link, and the mmc bus has no modalias attribute: only
	 * the uevent's MODALIAS= names mmc_block. */
	put_dev("pci0000:00/0000:00:0e.0", "pci", "sdhci-pci", "sdhci_pci",
		"pci:v00001B36d00000007sv00001AF4sd00001100bc08sc05i01\n");
	put_class("pci0000:00/0000:00:0e.0/mmc_host/mmc0", "mmc_host", NULL);
	put_dev("pci0000:00/0000:00:0e.0/mmc_host/mmc0/mmc0:4567", "mmc", "mmcblk", NULL, NULL);
	put_text("sys/devices/pci0000:00/0000:00:0e.0/mmc_host/mmc0/mmc0:4567/uevent",
		 "DRIVER=mmcblk\nMMC_TYPE=SD\nMMC_NAME=QEMU!\nMODALIAS=mmc:block\n");
	put_class("pci0000:00/0000:00:0e.0/mmc_host/mmc0/mmc0:4567/block/mmcblk0", "block", "mmcblk0");
	put_text("dev/mmcblk0", "");

	/* dm-crypt on vda1. */
	put_class("virtual/block/dm-0", "block", "dm-0");
	put_text("sys/devices/virtual/block/dm-0/dm/name", "crypt\n");
	put_text("sys/devices/virtual/block/dm-0/dm/uuid", "CRYPT-LUKS2-0123456789abcdef-crypt\n");
	put_link("sys/devices/pci0000:00/0000:00:04.0/virtio0/block/vda/vda1",
		 "sys/devices/virtual/block/dm-0/slaves/vda1");
	put_text("dev/dm-0", "");
	put_link("dev/dm-0", "dev/mapper/crypt");
	/* An md RAID1 over vda1: the crash kernel rebuilds it with
	 * device-mapper, so dm_mod, not md_mod or raid1. */
	put_class("virtual/block/md0", "block", "md0");
	put_text("sys/devices/virtual/block/md0/md/level", "raid1\n");
	put_link("sys/devices/pci0000:00/0000:00:04.0/virtio0/block/vda/vda1",
		 "sys/devices/virtual/block/md0/slaves/vda1");
	put_text("dev/md0", "");

	/* A PCI bridge whose driver the target kernel has no module for. */
	put_dev("pci0000:00/0000:00:1c.0", "pci", "pcieport", NULL,
		"pci:v00008086d000029C0sv00001AF4sd00001100bc06sc04i00\n");
	put_dev("pci0000:00/0000:00:1c.0/0000:01:00.0", "pci", "nvme", "nvme",
		"pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02\n");
	put_class("pci0000:00/0000:00:1c.0/0000:01:00.0/nvme/nvme2", "nvme", "nvme2");
	put_class("pci0000:00/0000:00:1c.0/0000:01:00.0/nvme/nvme2/nvme2n1", "block", "nvme2n1");

	/* The watchdog: i6300esb on PCI. */
	put_dev("pci0000:00/0000:00:07.0", "pci", "i6300ESB timer", "i6300esb",
		"pci:v00008086d000025ABsv00001AF4sd00001100bc08sc80i00\n");
	put_class("pci0000:00/0000:00:07.0/watchdog/watchdog0", "watchdog", "watchdog0");
	put_link("sys/devices/pci0000:00/0000:00:07.0",
		 "sys/devices/pci0000:00/0000:00:07.0/watchdog/watchdog0/device");
}

/* The loadable modules of l, space-separated; builtins as "=name",
 * notes as "!name". */
static const char *names(const struct modlist *l)
{
	static char buf[4096];
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < l->n && n < sizeof buf - 80; i++)
		n += snprintf(buf + n, sizeof buf - n, "%s%s%s", n ? " " : "",
			      l->e[i].kind == MOD_LOAD ? "" : l->e[i].kind == MOD_BUILTIN ? "=" : "!",
			      l->e[i].name);
	return buf;
}

static const char *reason_of(const struct modlist *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->e[i].name, name))
			return l->e[i].reason;
	return "(not listed)";
}

static struct modlist list;

/* The modules for selector spec against the tree in dir. */
static int resolve(const char *spec, const char *dir)
{
	struct selector s[SEL_MAX];
	struct modtree t;
	char bad[80], name[128];
	int r;

	memset(&list, 0, sizeof list);
	if (selectors_parse(spec, s, SEL_MAX, bad, sizeof bad) != 1)
		return -EINVAL;
	if ((r = modtree_load(&t, path_of(dir))) < 0)
		return r;
	r = modules_block_name(&sr, &s[0], name, sizeof name);
	if (r == 0)
		r = modules_for_block(&sr, &t, name, &list);
	modtree_free(&t);
	return r;
}

#define VIRTIO_BLK "virtio_ring virtio virtio_blk"
#define VIRTIO_PCI "virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci"
#define T10 "crct10dif_common crc64 crct10dif_pclmul crct10dif_generic crc_t10dif"
#define SD T10 " scsi_common scsi_mod crc64_rocksoft t10_pi sd_mod"

static void alias_patterns(void)
{
	CHECK(alias_match("pci:v00001AF4d*sv*sd*bc*sc*i*", "pci:v00001AF4d00001042sv00001AF4sd00001100bc01sc00i00"), "pci");
	CHECK(!alias_match("pci:v00001AF4d*sv*sd*bc*sc*i*", "pci:v00008086d00001042sv00001AF4sd00001100bc01sc00i00"), "pci vendor");
	CHECK(alias_match("scsi:t-0x0[47]*", "scsi:t-0x07"), "set");
	CHECK(!alias_match("scsi:t-0x0[47]*", "scsi:t-0x05"), "set miss");
	CHECK(alias_match("a[0-9]b", "a5b") && !alias_match("a[!0-9]b", "a5b") && alias_match("a[!0-9]b", "axb"), "range");
	CHECK(alias_match("a?c", "abc") && !alias_match("a?c", "ac"), "?");
	CHECK(alias_match("*", "") && alias_match("a*", "a") && !alias_match("a*b", "acbc"), "*");
	CHECK(alias_match("*a*b*", "xxaybz") && alias_match("a[]]b", "a]b"), "stars, ] in set");
	CHECK(!alias_match("virtio:d00000002v*", "virtio:d00000001v00001AF4"), "virtio");
}

static void virtio_blk_partition(void)
{
	CHECK_INT(resolve("/dev/vda1", moddir), 0);
	CHECK_STR(names(&list), VIRTIO_BLK " " VIRTIO_PCI);
	CHECK_STR(reason_of(&list, "virtio_blk"), "driver of virtio0 (virtio), for vda1");
	CHECK_STR(reason_of(&list, "virtio_pci"), "driver of 0000:00:04.0 (pci), for vda1");
	CHECK_STR(reason_of(&list, "virtio_ring"), "needed by virtio_blk");
	/* The same disk by serial. */
	CHECK_INT(resolve("SERIAL=dumpdev", moddir), 0);
	CHECK_STR(names(&list), VIRTIO_BLK " " VIRTIO_PCI);
	CHECK_STR(reason_of(&list, "virtio_blk"), "driver of virtio0 (virtio), for vda");
}

static void nvme_namespace(void)
{
	CHECK_INT(resolve("/dev/nvme0n1", moddir), 0);
	CHECK_STR(names(&list), T10 " crc64_rocksoft t10_pi nvme_core nvme");
	CHECK_STR(reason_of(&list, "nvme"), "driver of 0000:00:05.0 (pci), for nvme0n1");
	CHECK_STR(reason_of(&list, "crct10dif_pclmul"), "softdep of crc_t10dif");
	/* Multipath: through the subsystem's link to the controller. */
	CHECK_INT(resolve("/dev/nvme1n1", moddir), 0);
	CHECK_STR(names(&list), T10 " crc64_rocksoft t10_pi nvme_core nvme");
	CHECK_STR(reason_of(&list, "nvme"), "driver of 0000:00:08.0 (pci), for nvme1n1");
	/* Behind a bridge whose driver is built in under a name of its own. */
	CHECK_INT(resolve("/dev/nvme2n1", moddir), 0);
	CHECK_STR(names(&list), T10 " crc64_rocksoft t10_pi nvme_core nvme !pcieport");
}

static void sata_ahci(void)
{
	CHECK_INT(resolve("/dev/sda", moddir), 0);
	CHECK_STR(names(&list), SD " libata libahci ahci");
	CHECK_STR(reason_of(&list, "sd_mod"), "modalias of 0:0:0:0 (scsi, driver sd), for sda");
	CHECK_STR(reason_of(&list, "ahci"), "driver of 0000:00:1f.2 (pci), for sda");
}

static void virtio_scsi(void)
{
	CHECK_INT(resolve("/dev/sdb", moddir), 0);
	CHECK_STR(names(&list), SD " virtio_ring virtio virtio_scsi " VIRTIO_PCI);
	CHECK_STR(reason_of(&list, "sd_mod"), "modalias of 1:0:0:0 (scsi, driver sd), for sdb");
	CHECK_STR(reason_of(&list, "virtio_scsi"), "driver of virtio1 (virtio), for sdb");
}

/* SERIAL= on the real buses: QEMU's nvme (device/serial, padded), and
 * the SCSI and SATA disks, which have no serial attribute at all (the
 * fake sysfs first had one under device/, as no 6.1 kernel does): VPD
 * page 0x80, its length obeyed, trailing padding dropped. */
static void serial_by_bus(void)
{
	static const char *const same[][2] = {
		{ "SERIAL=kdump-nvme", "/dev/nvme0n1" },
		{ "SERIAL=kdump-ahci", "/dev/sda" },
		{ "SERIAL=kdump-scsi", "/dev/sdb" },
		{ "SERIAL=kdump", "/dev/sdd" },
		{ "SERIAL=kdump-usb", "/dev/sde" },
	};
	char want[4096];

	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		CHECK_INT(resolve(same[i][1], moddir), 0);
		snprintf(want, sizeof want, "%s", names(&list));
		CHECK(*want, "%s resolves", same[i][1]);
		CHECK_INT(resolve(same[i][0], moddir), 0);
		CHECK_STR(names(&list), want);
	}
	CHECK_INT(resolve("SERIAL=kdump-bad", moddir), -ENOENT);	/* page 0x83 */
	CHECK_INT(resolve("SERIAL=kdump-long", moddir), -ENOENT);	/* past its length */
	CHECK_INT(resolve("SERIAL=kdump-ahci          ", moddir), -ENOENT);
	CHECK_INT(resolve("SERIAL=0000:00:0d.0", moddir), -ENOENT);	/* the root hub's */
}

/* A USB disk's chain: sd, usb-storage, the USB core (the device's and
 * root hub's driver "usb"), the host controller's xhci_pci; the order is
 * modprobe --show-depends -a sd_mod usb_storage xhci_pci's on 6.1. */
static void usb_storage_chain(void)
{
	CHECK_INT(resolve("SERIAL=kdump-usb", moddir), 0);
	CHECK_STR(names(&list), "crct10dif_common crc64 crct10dif_pclmul crct10dif_generic crc_t10dif "
		  "scsi_common scsi_mod crc64_rocksoft t10_pi sd_mod usb_common usbcore usb_storage "
		  "xhci_hcd xhci_pci");
}

/* An SD card: mmc_block from the card's uevent, then the host's chain,
 * as modprobe --show-depends -a mmc_block sdhci_pci orders it on 6.1. */
static void sd_card_chain(void)
{
	CHECK_INT(resolve("/dev/mmcblk0", moddir), 0);
	CHECK_STR(names(&list), "mmc_core mmc_block sdhci cqhci sdhci_pci");
	CHECK_STR(reason_of(&list, "mmc_block"), "modalias of mmc0:4567 (mmc, driver mmcblk), for mmcblk0");
}

static void dm_on_partition(void)
{
	CHECK_INT(resolve("/dev/mapper/crypt", moddir), 0);
	CHECK_STR(names(&list), "dm_mod dm_crypt " VIRTIO_BLK " " VIRTIO_PCI);
	CHECK_STR(reason_of(&list, "dm_mod"), "device-mapper dm-0");
	CHECK_STR(reason_of(&list, "virtio_blk"), "driver of virtio0 (virtio), for dm-0");
	CHECK_INT(resolve("/dev/dm-0", moddir), 0);
	CHECK_STR(names(&list), "dm_mod dm_crypt " VIRTIO_BLK " " VIRTIO_PCI);
}

static void md_raid1_as_dm(void)
{
	CHECK_INT(resolve("/dev/md0", moddir), 0);
	CHECK_STR(names(&list), "dm_mod " VIRTIO_BLK " " VIRTIO_PCI);
	CHECK_STR(reason_of(&list, "dm_mod"), "md array md0 (rebuilt with device-mapper)");
}

static void builtin_skipped(void)
{
	/* A kernel with virtio and virtio_blk built in (as Debian 13's 6.12
	 * has virtio, virtio_ring and virtio_pci). */
	put_tree("mods-builtin", "kernel/drivers/virtio/virtio.ko\nkernel/drivers/virtio/virtio_ring.ko\n"
		 "kernel/drivers/virtio/virtio_pci.ko\n");
	CHECK_INT(resolve("/dev/vda", "mods-builtin"), 0);
	CHECK_STR(names(&list), "=virtio_ring =virtio virtio_blk =virtio_pci");
	CHECK_STR(reason_of(&list, "virtio_pci"), "driver of 0000:00:04.0 (pci), for vda");
}

static void extras(void)
{
	struct modtree t;

	memset(&list, 0, sizeof list);
	CHECK_INT(modtree_load(&t, path_of(moddir)), 0);
	CHECK_INT(modules_for_watchdogs(&sr, &t, &list), 0);
	CHECK_INT(modules_add(&t, "qemu_fw_cfg", "firmware settings (fw_cfg)", &list), 0);
	CHECK_INT(modules_add(&t, "no_such_module", "x", &list), 0);
	CHECK_STR(names(&list), "watchdog i6300esb qemu_fw_cfg");
	CHECK_STR(reason_of(&list, "i6300esb"), "driver of 0000:00:07.0 (pci), for watchdog0");
	modtree_free(&t);
}

static void missing(void)
{
	struct modtree t;

	CHECK_INT(resolve("/dev/vdz", moddir), -ENOENT);
	CHECK_INT(resolve("SERIAL=nothing", moddir), -ENOENT);
	CHECK_INT(modtree_load(&t, path_of("no-such-dir")), -ENOENT);
}

/* A file of n bytes at moddir/rel (what new_bytes stats). */
static void put_size(const char *rel, size_t n)
{
	static char zeros[4096];
	char p[512];

	snprintf(p, sizeof p, "%s/%s", moddir, rel);
	put_bin(p, zeros, n < sizeof zeros ? n : sizeof zeros);
}

/* Every disk behind a controller, for an image whose device is not known:
 * /sys/block's disks in name order, each with all its modules or none;
 * loop and dm left out; one over the budget named and left out. */
static void every_disk(void)
{
	static const char *const disks[][2] = {
		{ "vda", "pci0000:00/0000:00:04.0/virtio0/block/vda" },
		{ "sde", "pci0000:00/0000:00:0d.0/usb2/2-1/2-1:1.0/host2/target2:0:0/2:0:0:0/block/sde" },
		{ "mmcblk0", "pci0000:00/0000:00:0e.0/mmc_host/mmc0/mmc0:4567/block/mmcblk0" },
		{ "dm-0", "virtual/block/dm-0" },
	};
	char left[256], p[600], t[512];
	struct modtree tree;

	mkdirs("sys/block");
	for (size_t i = 0; i < sizeof disks / sizeof disks[0]; i++) {
		snprintf(t, sizeof t, "sys/devices/%s", disks[i][1]);
		snprintf(p, sizeof p, "sys/block/%s", disks[i][0]);
		put_link(t, p);
		/* Its device link: the node above .../block/NAME. */
		if (strncmp(disks[i][1], "virtual/", 8)) {
			char up[512];
			snprintf(up, sizeof up, "%s", t);
			*strstr(up, "/block/") = 0;
			snprintf(p, sizeof p, "%s/device", t);
			put_link(up, p);
		}
	}
	/* A loop device: a disk with no controller (and no device link). */
	put_class("virtual/block/loop0", "block", "loop0");
	put_link("sys/devices/virtual/block/loop0", "sys/block/loop0");
	put_size("kernel/drivers/block/virtio_blk.ko", 1000);
	put_size("kernel/drivers/mmc/host/sdhci-pci.ko", 3000);
	put_size("kernel/drivers/usb/storage/usb-storage.ko", 2000);

	CHECK_INT(modtree_load(&tree, path_of(moddir)), 0);
	memset(&list, 0, sizeof list);
	CHECK_INT(modules_for_disks(&sr, &tree, path_of(moddir), 1 << 20, &list, left, sizeof left), 3);
	CHECK_STR(left, "");
	CHECK_STR(names(&list), "mmc_core mmc_block sdhci cqhci sdhci_pci "
		  "crct10dif_common crc64 crct10dif_pclmul crct10dif_generic crc_t10dif "
		  "scsi_common scsi_mod crc64_rocksoft t10_pi sd_mod usb_common usbcore usb_storage "
		  "xhci_hcd xhci_pci " VIRTIO_BLK " " VIRTIO_PCI);
	/* 3000 + 2000 bytes fit 5500; vda's 1000 more do not: vda left out,
	 * whole (none of virtio's modules listed). */
	memset(&list, 0, sizeof list);
	CHECK_INT(modules_for_disks(&sr, &tree, path_of(moddir), 5500, &list, left, sizeof left), 2);
	CHECK_STR(left, "vda (1 KiB)");
	CHECK_STR(reason_of(&list, "virtio_ring"), "(not listed)");
	CHECK_STR(reason_of(&list, "usb_storage"), "driver of 2-1:1.0 (usb), for sde");
	/* A budget below the first disk's: nothing but names. */
	memset(&list, 0, sizeof list);
	CHECK_INT(modules_for_disks(&sr, &tree, path_of(moddir), 100, &list, left, sizeof left), 0);
	CHECK_STR(left, "mmcblk0 (3 KiB), sde (2 KiB), vda (1 KiB)");
	CHECK_INT(list.n, 0);
	modtree_free(&tree);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

int main(void)
{
	const char *dir = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/kdi-modalias-XXXXXX", dir && *dir ? dir : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(sys, sizeof sys, "%s/sys", root);
	snprintf(dev, sizeof dev, "%s/dev", root);
	fake_sysfs();
	put_tree(moddir, "kernel/drivers/pci/pcie/portdrv.ko\n");

	RUN(alias_patterns);
	RUN(virtio_blk_partition);
	RUN(nvme_namespace);
	RUN(sata_ahci);
	RUN(virtio_scsi);
	RUN(serial_by_bus);
	RUN(usb_storage_chain);
	RUN(sd_card_chain);
	RUN(dm_on_partition);
	RUN(md_raid1_as_dm);
	RUN(builtin_skipped);
	RUN(extras);
	RUN(missing);
	RUN(every_disk);
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
