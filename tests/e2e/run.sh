#!/bin/bash
# End-to-end kdump test: boot a QEMU guest, arm the crash kernel with
# kdumpinit, crash it, let kdumpinit (PID 1 of the crash initramfs) capture
# /proc/vmcore to a claimed disk and reboot, then check the dump on the host
# against a raw copy of /proc/vmcore taken in the crash kernel just before.
#
# Disks of the guest (found by serial, never by name):
#   kdump-scratch  small ext2 image; stage 1 reads it to fill the page cache
#   kdump-dump     the dump disk, claimed on the host with `kdumpinit format`
#   kdump-raw      receives `dd if=/proc/vmcore` (the reference copy)
set -uo pipefail

prog=run.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
	cat <<USAGE
usage: tests/e2e/run.sh [--cpu MODEL] [--mem SIZE] [--crashkernel SIZE]
                        [--workdir DIR] [--level N] [--timeout SEC]
                        [--raw-only | --no-raw] [--raw-out FILE]
                        [--arm-helper FILE] [--kernel-tree DIR]
                        [--firmware] [--watchdog SECONDS [--stall-disk]]
                        [--slow-disk BYTES_PER_S] [--final ACTION]
                        [--disk TYPE] [--blkdebug CONF]
                        [--cut-at ERE] [--keep-dump] [--dump-size SIZE]
                        [--append-first ARGS] [--after DUMPIMG:RAW] [--demo]
                        [--crash-kernel FILE] [--crash-cpus N] [--smp N]
                        [--min-workers N] [--seal] [--seed N]
                        [--late-disk SECONDS] [-h]

  --cpu MODEL        QEMU -cpu (default max,la57=off: 4-level paging;
                     max gives 5-level paging under TCG)
  --mem SIZE         guest memory (default 1G)
  --crashkernel SIZE crashkernel= reservation (default 256M)
  --workdir DIR      where disks, logs and dumps go
                     (default build/e2e/<cpu>)
  --level N          dump level for kdumpinit (default 1: only zero pages
                     are dropped, so vmcmp can demand every other page;
                     with another level vmcmp is skipped)
  --timeout SEC      overall QEMU timeout (default 900)
  --raw-only         only take the raw /proc/vmcore copy (the crash kernel
                     reboots after it; kdumpinit does not capture)
  --no-raw           no raw copy and no /testinit: kdumpinit is the crash
                     kernel's only init, exactly as users run it (no vmcmp)
  --raw-out FILE     also store the raw vmcore copy as FILE; and check
                     kdumpinit estimate, taken in the guest before its
                     crash, against captures of that raw vmcore at levels
                     1, 17 and 31 (within 15 %)
  --arm-helper FILE  arm with this static kexec_file_load helper instead of
                     'kdumpinit arm' (FILE KERNEL INITRD CMDLINE)
  --kernel-tree DIR  boot the kernel of an extracted kernel package (dpkg-deb
                     -x linux-image-*.deb DIR), e.g. Debian 13's 6.12, with its
                     modules, instead of Debian 12's installed one
  --firmware         kdumpinit.dev and the level come from firmware only:
                     an SMBIOS type 11 credential and a kdumpinit.conf
                     credential in fw_cfg; none on any command line
  --watchdog SECONDS an i6300esb watchdog (-watchdog-action reset), its module
                     in both images; the first kernel runs it with this
                     timeout until the panic, and the crash kernel gets
                     kdumpinit.watchdog=SECONDS: the capture must complete
                     and say so on the console
  --stall-disk       with --watchdog and --no-raw: the dump disk takes a 4 MiB
                     burst, then 1 KiB/s (QEMU throttling), and
                     kdumpinit.stall=3600: the stalled capture must end in
                     the hardware watchdog's reset, the dump on the disk
                     incomplete and saveable up to its last chunk
  --late-disk SEC    with --no-raw: the dump disk is not there when the crash
                     kernel boots; SEC seconds after kdumpinit says it waits,
                     QEMU's monitor hot-adds it (device_add), as a USB disk or
                     an HBA's shows up late: kdumpinit must say it still waits
                     (every 10 s) and capture to it as soon as it comes
  --slow-disk BPS    the dump disk writes at most BPS bytes a second (QEMU
                     throttling): a slow capture that still progresses
  --final ACTION     kdumpinit.final=ACTION (reboot, poweroff or halt) for
                     the crash kernel, --no-raw only; with halt, the machine
                     must stay halted for the watchdog timeout + 10 s (then
                     QEMU is ended), and with --watchdog kdumpinit must say
                     it stopped the watchdog (magic close) before the halt
  --disk TYPE        with --no-raw: four claimed dump disks, one per bus
                     (nvme; ahci: ich9-ahci + ide-hd; scsi: virtio-scsi +
                     scsi-hd; virtio: virtio-blk), serials kdump-TYPE, and
                     a read-only disk with the kernel's whole module tree;
                     the first kernel runs 'kdumpinit modules SERIAL=...'
                     for each (checked against modprobe here) and packs
                     the modules found for TYPE into the crash image, which
                     has no other driver; the capture goes to kdump-TYPE
                     (kdumpinit.dev=SERIAL=kdump-TYPE), the other three
                     must stay byte for byte as they were. More TYPEs,
                     each a fifth disk beside the four: megasas
                     (megasas-gen2 + scsi-hd), pvscsi (pvscsi + scsi-hd),
                     usb-storage (qemu-xhci + usb-storage), usb-uas
                     (qemu-xhci + usb-uas + scsi-hd), sdhci (sdhci-pci +
                     sd-card, selected by LABEL=e2e: QEMU's card has a
                     fixed serial), nvme-intel-iommu and nvme-amd-iommu
                     (q35 with kernel-irqchip=split and that IOMMU, the
                     first kernel with intel_iommu=on; the disk on NVMe,
                     serial kdump-nvme-iommu: NVMe's hold 20 characters),
                     lsi (lsi53c895a + scsi-hd, Linux's sym53c8xx: an HBA
                     the dedicated crash kernel leaves out); each also
                     checks the dump complete and that drgn opens its
                     save (tests/e2e/README.md). With --crash-kernel: the
                     first kernel arms through the service script
                     (dist/kdumpinit-arm, KDUMPINIT_CRASH_KERNEL naming
                     the dedicated kernel, its lists beside it) after
                     'kdumpinit arm --dry-run --dev SEL', the reach
                     check: the dedicated kernel, with no initramfs, for
                     a disk it reaches; for lsi the check names the
                     driver it lacks (exit 10) and the service arms the
                     stock kernel with the image stage 1 packed
  --blkdebug CONF    the dump disk goes through QEMU's blkdebug driver with
                     this rules file (write errors): kdumpinit must say where
                     each write failed, end in its final action, and leave a
                     dump marked incomplete whose saved pages are all right
                     (pagecheck, not vmcmp)
  --cut-at ERE       a power cut: QEMU is killed (SIGKILL) at the first
                     kdumpinit console line of the crash kernel that matches
                     ERE; the dump must read as incomplete (or empty, when no
                     write was made), and what save keeps must be right
  --dump-size SIZE   the claimed dump disk's size (default 1536M); one too
                     small for the dump must be filled and the dump marked
                     incomplete (device full), the kernel's pages in it
  --keep-dump        keep dump.img of an earlier run in --workdir instead of
                     claiming a new one: the next capture must replace the
                     dump there cleanly
  --after DUMPIMG:RAW  a second crash before the first was saved: the dump
                     disk is a copy of DUMPIMG, which holds an unsaved dump
                     of RAW's crash (an earlier run's disk and --raw-out).
                     This capture must go after it; the checks below read
                     the new dump, and the first, saved again, must still
                     match RAW page for page
  --append-first ARGS  more words for the first kernel's command line only,
                     as given (no expansion here: memmap=nn!ss arrives so);
                     the crash kernel's is made by stage 1 and kdumpinit
                     arm, which take only console= (and the other hardware
                     words docs/CLI.md lists) from the first kernel's
  --crash-kernel FILE  arm kdumpinit's dedicated crash kernel (make
                     crash-kernel: kdumpinit inside) instead of the first
                     kernel with an image: with --no-raw alone, with no
                     initramfs (as users run it); otherwise with a small
                     archive over its own (/testinit, busybox), so that the
                     raw copy is taken in it too
  --crash-cpus N     kdumpinit arm --cpus N (a number or auto)
  --smp N            the guest's CPUs (default 2; the crash kernel leaves out
                     the boot CPU when another one panicked)
  --min-workers N    kdumpinit must run a worker per CPU the crash kernel
                     activated, and at least N
  --demo             show kdumpinit's console lines live, then 'info'
  --seed N           the first kernel's memory load is drawn from N
                     (e2e.seed=N; tests/e2e/seedload.sh, seedtasks.c): the
                     sizes of its tmpfs files and anonymous blobs, how many
                     processes, threads, sleeping tasks and small files, how
                     much page cache, kernel log records, and their order.
                     Without it, the fixed load (README.md). tests/soak
  --nbd              a network dump device: the dump image is served by
                     qemu-nbd on the host's loopback (export "dump"), not
                     attached as a disk; the crash kernel (virtio_net and
                     nbd packed) reaches it through QEMU's user networking,
                     kdumpinit.dev=nbd://10.0.2.2:PORT/dump with
                     kdumpinit.ip=10.0.2.15/24,10.0.2.2
  --nbd-drop SECS    with --nbd: once the capture says 20 %, the export's
                     qemu-nbd is stopped, and started again SECS seconds
                     later on the same port: the crash kernel connects again
                     and the held writes go out (the dump still complete)
  --seal             a sealed dump: a key pair from 'kdumpinit keygen' in the
                     workdir, the public key given to the crash kernel as the
                     fw_cfg credential kdumpinit.pubkey (none on any command
                     line); the host opens the dump with save/info/dmesg --key
                     and checks, besides: the sealing line and the setting's
                     source; info without the key (sealed, complete); save
                     without it or with another key refused; dmesg --key
                     (the panic line) and without. With the raw copy also:
                     no non-zero page of it and no panic line anywhere on the
                     dump device (plainscan.c, at every byte offset; the
                     same scan must find them on a host capture without a
                     key); the kdump and ELF saves byte for byte those of a
                     host capture of the raw copy without a key; drgn and
                     crash open the kdump save (the kernel's -dbg vmlinux);
                     power cuts (the device image cut inside a PAGES chunk,
                     one byte short of one's end, inside END): info says
                     incomplete without the key, save --key exits 5 and
                     saves what a key-less dump cut at the same chunk saves;
                     and an unparsable kdumpinit.pubkey in a bad-input run
                     writes nothing and runs the final action
USAGE
}

cpu=max,la57=off mem=1G ck=256M workdir='' level=1 tmo=900
rawonly=0 noraw=0 rawout='' armhelper='' ktree='' demo=0 firmware=0 wd=0 stalldisk=0 slowdisk=0 final=reboot
disk='' blkdebug='' cutat='' keepdump=0 dumpsize= appendfirst= after= crashkernel= crashcpus= smp=2 minworkers=0
seal=0 seed='' latedisk=0 nbd=0 nbddrop=0
while [ $# -gt 0 ]; do
	case $1 in
	--cpu | --mem | --crashkernel | --workdir | --level | --timeout | --raw-out | --arm-helper | --kernel-tree | --watchdog | --slow-disk | --final | --disk | --blkdebug | --cut-at | --dump-size | --append-first | --after | --crash-kernel | --crash-cpus | --smp | --min-workers | --seed | --late-disk)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--cpu) cpu=$2; shift ;;
	--mem) mem=$2; shift ;;
	--crashkernel) ck=$2; shift ;;
	--workdir) workdir=$2; shift ;;
	--level) level=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--raw-only) rawonly=1 ;;
	--no-raw) noraw=1 ;;
	--raw-out) rawout=$2; shift ;;
	--arm-helper) armhelper=$2; shift ;;
	--kernel-tree) ktree=$2; shift ;;
	--demo) demo=1 ;;
	--firmware) firmware=1 ;;
	--watchdog) wd=$2; shift ;;
	--stall-disk) stalldisk=1 ;;
	--slow-disk) slowdisk=$2; shift ;;
	--cut-at) cutat=$2; shift ;;
	--dump-size) dumpsize=$2; shift ;;
	--keep-dump) keepdump=1 ;;
	--append-first) appendfirst=$2; shift ;;
	--after) after=$2; shift ;;
	--crash-kernel) crashkernel=$(realpath "$2"); shift ;;
	--crash-cpus) crashcpus=$2; shift ;;
	--smp) smp=$2; shift ;;
	--min-workers) minworkers=$2; shift ;;
	--seal) seal=1 ;;
	--nbd) nbd=1 ;;
	--seed) seed=$2; shift ;;
	--late-disk) latedisk=$2; shift ;;
	--nbd-drop) nbd=1 nbddrop=$2; shift ;;
	--blkdebug) blkdebug=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
	--final) final=$2; shift ;;
	--disk) disk=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$prog: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
	[ $# -gt 0 ] || { echo "$prog: a value is missing" >&2; exit 2; }
	shift
done

# Debian 12's kernel: the one linux-image-amd64 (deps/packages) pulls in.
kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || kver=6.1.0-57-amd64
kernel=/boot/vmlinuz-$kver
modroot=()
if [ -n "$ktree" ]; then
	kernel=$(ls "$ktree"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$kernel" ] || { echo "$prog: no boot/vmlinuz-* in $ktree" >&2; exit 2; }
	kver=${kernel##*/vmlinuz-}
	modroot=(-d "$ktree")
fi
busybox=/bin/busybox
# E2E_KDUMPINIT: another build of the binary (tests/soak runs an older
# one to count what it did on the same crashes).
kdumpinit=${E2E_KDUMPINIT:-$top/build/kdumpinit}
mkinitramfs=$top/initramfs/mkinitramfs
python=/usr/bin/python3
vmcmp=$top/tests/tools/vmcmp.py
cache=$top/build/e2e
[ -n "$workdir" ] || workdir=$cache/$(echo "$cpu" | tr ',=' '_-')${ktree:+-$kver}
mode=full; [ $rawonly = 1 ] && mode=raw; [ $noraw = 1 ] && mode=capture
[ $rawonly = 0 ] || [ $noraw = 0 ] || { echo "$prog: --raw-only and --no-raw exclude each other" >&2; exit 2; }
case $wd in '' | *[!0-9]*) echo "$prog: --watchdog needs seconds" >&2; exit 2 ;; esac
case $slowdisk in '' | *[!0-9]*) echo "$prog: --slow-disk needs bytes per second" >&2; exit 2 ;; esac
case $latedisk in '' | *[!0-9]*) echo "$prog: --late-disk needs seconds" >&2; exit 2 ;; esac
case $nbddrop in '' | *[!0-9]*) echo "$prog: --nbd-drop needs seconds" >&2; exit 2 ;; esac
[ "$latedisk" = 0 ] || { [ $mode = capture ] && [ -z "$disk$blkdebug" ] && [ $stalldisk = 0 ] && [ "$slowdisk" = 0 ]; } ||
	{ echo "$prog: --late-disk needs --no-raw, and goes with none of --disk, --blkdebug, --stall-disk, --slow-disk" >&2; exit 2; }
[ $stalldisk = 0 ] || [ "$slowdisk" = 0 ] || { echo "$prog: --stall-disk and --slow-disk exclude each other" >&2; exit 2; }
case $final in reboot) ;; poweroff | halt) [ $mode = capture ] || { echo "$prog: --final $final needs --no-raw" >&2; exit 2; } ;;
*) echo "$prog: --final is reboot, poweroff or halt" >&2; exit 2 ;; esac
[ $stalldisk = 0 ] || { [ "$wd" != 0 ] && [ $mode = capture ]; } ||
	{ echo "$prog: --stall-disk needs --watchdog and --no-raw" >&2; exit 2; }
# --disk: the four buses, the first kernel's drivers for them, and the
# type the capture goes to; an extra type is a fifth disk beside them.
disktypes='nvme ahci scsi virtio'
extratypes='megasas pvscsi usb-storage usb-uas sdhci nvme-intel-iommu nvme-amd-iommu lsi'
# The types whose HBA driver the dedicated crash kernel leaves out
# (crash-kernel/*.config): with --crash-kernel the service must fall back
# to the stock kernel for them.
lacktypes='lsi' lackdrv=sym53c8xx
case " $disktypes $extratypes " in *" ${disk:-none} "*) ;; *) [ -z "$disk" ] || { echo "$prog: --disk is one of: $disktypes $extratypes" >&2; exit 2; } ;; esac
# guesttypes: the disks in the guest; dsel: the selector of the dump disk.
guesttypes=$disktypes dsel=SERIAL=kdump-$disk
case " $extratypes " in *" ${disk:-none} "*) guesttypes="$disktypes $disk" ;; esac
[ "$disk" = sdhci ] && dsel=LABEL=e2e
# NVMe serials hold 20 characters (QEMU cuts a longer one).
case $disk in nvme-*) dsel=SERIAL=kdump-nvme-iommu ;; esac
if [ -n "$disk" ]; then
	[ $mode = capture ] || { echo "$prog: --disk needs --no-raw (the crash image holds only the dump disk's modules)" >&2; exit 2; }
	[ -z "$ktree" ] || { echo "$prog: --disk uses the installed kernel's module tree (no --kernel-tree)" >&2; exit 2; }
	[ -z "$crashkernel" ] || [ -z "$armhelper" ] ||
		{ echo "$prog: --disk with --crash-kernel arms through the service script (no --arm-helper)" >&2; exit 2; }
	[ $firmware = 0 ] && [ "$wd" = 0 ] && [ $stalldisk = 0 ] && [ "$slowdisk" = 0 ] ||
		{ echo "$prog: --disk goes with none of --firmware, --watchdog, --stall-disk, --slow-disk" >&2; exit 2; }
fi
[ $seal = 0 ] || [ $rawonly = 0 ] || { echo "$prog: --seal needs kdumpinit to capture (not --raw-only)" >&2; exit 2; }
case $seed in '') ;; *[!0-9]* | ??????????*) echo "$prog: --seed needs a number below 10^9" >&2; exit 2 ;; esac
# The watchdog's driver goes into both images; its own image names, so
# the plain runs keep their cached ones.
wdmods=() wdtag=
[ "$wd" = 0 ] || { wdmods=(-m i6300esb); wdtag=-wd; }

nfail=0 npass=0 nstep=0
say() { [ $demo = 1 ] || echo "$@"; }
pass() { say "PASS: $*"; npass=$((npass + 1)); }
# A harness step (QEMU ran, the kernel was armed, a copy was taken) is not a
# check of the product: counted apart. A failed one still fails the run.
step() { say "STEP: $*"; nstep=$((nstep + 1)); }
failed() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
die() { echo "$prog: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
bytes() {
	local n=${1%[KkMmGg]} u=${1: -1}
	case $u in
	K | k) echo $((n << 10)) ;; M | m) echo $((n << 20)) ;;
	G | g) echo $((n << 30)) ;; *) echo "$1" ;;
	esac
}

# --- prerequisites -----------------------------------------------------------
for f in "$kernel" "$busybox" "$mkinitramfs"; do
	[ -e "$f" ] || die "missing $f"
done
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found"
if [ $rawonly = 0 ] || [ -z "$armhelper" ]; then
	[ -x "$kdumpinit" ] || die "missing $kdumpinit (run make first)"
fi
[ -z "$armhelper" ] || [ -x "$armhelper" ] || die "arm helper not executable: $armhelper"
if [ $mode = full ]; then
	[ -f "$vmcmp" ] || die "missing $vmcmp"
fi
mkdir -p "$cache" "$workdir" || die "cannot create $workdir"
# Work with a snapshot of the binary: a rebuild during the few minutes of a
# run must not mix two versions (or find none).
if [ -x "$kdumpinit" ]; then
	cp -f "$kdumpinit" "$workdir/kdumpinit.bin" || die "cannot copy $kdumpinit"
	kdumpinit=$workdir/kdumpinit.bin
fi

# --- images (cached in build/e2e, rebuilt when an input changes) ---------------
# build_cached OUT "INPUT FILES" COMMAND...: the key is the hash of the inputs
# and the command line.
build_cached() {
	local out=$1 inputs=$2 key
	shift 2
	# shellcheck disable=SC2086
	# The binary's snapshot lives in the workdir: leave its path out.
	key=$( { sha256sum $inputs | cut -d' ' -f1; echo "${*//$workdir/WORKDIR}"; } | sha256sum | cut -d' ' -f1)
	if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	"$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; die "building $out failed"; }
	echo "$key" >"$out.key"
}

mkscratch() {
	local d
	d=$(mktemp -d) || return 1
	head -c $((40 << 20)) /dev/urandom >"$d/random" &&
		{ yes "kdumpinit e2e page cache line" || :; } | head -c $((16 << 20)) >"$d/text" &&
		mke2fs -q -t ext2 -F -d "$d" "$1" 64M >/dev/null
	local rc=$?
	rm -rf "$d"
	return $rc
}

t_build=$(now)
scratch=$cache/scratch.img
[ -f "$scratch" ] || mkscratch "$scratch" || die "cannot make $scratch"

# The crash initramfs: what users get from mkinitramfs, plus the test-only
# /testinit and busybox. Before kdumpinit exists (raw mode with a helper),
# /init is just the testinit script.
initbin=$kdumpinit
[ $rawonly = 1 ] && [ ! -x "$kdumpinit" ] && initbin=$here/testinit
s1mods=(-m virtio_blk -m virtio_pci -m ext4 "${wdmods[@]}")
if [ -n "$disk" ]; then
	# --disk: no driver of any dump disk here (qemu_fw_cfg, which
	# mkinitramfs always adds, is the only module): the first kernel
	# appends what it resolved as a second cpio archive, which the kernel
	# unpacks over this one (its /etc/kdumpinit.modules replaces ours).
	crash=$cache/crash-base-$kver.img
	build_cached "$crash" "$initbin $mkinitramfs" "$mkinitramfs" -k "$kver" -o "$crash" -b "$initbin"
	# The "installed system" has the drivers of all four buses loaded,
	# as udev would; the module tree comes on its own disk.
	s1mods+=(-m nvme -m ahci -m virtio_scsi -m sd_mod)
	# An extra type's drivers too, in an image of its own name.
	case $disk in
	megasas) s1mods+=(-m megaraid_sas) ;;
	pvscsi) s1mods+=(-m vmw_pvscsi) ;;
	usb-storage) s1mods+=(-m xhci_pci -m usb_storage) ;;
	usb-uas) s1mods+=(-m xhci_pci -m uas) ;;
	sdhci) s1mods+=(-m sdhci_pci -m mmc_block) ;;
	lsi) s1mods+=(-m sym53c8xx) ;;
	esac
	wdtag=-disk
	case $disk in megasas | pvscsi | usb-* | sdhci | lsi) wdtag=-disk-$disk ;; esac
	modimg=$cache/modules-$kver.img
	mkmodimg() {	# OUT DIR: an ext2 image of the module tree DIR
		local mb
		mb=$(du -sm "$2" | cut -f1)
		mke2fs -q -t ext2 -F -L kdump-modules -d "$2" "$1" $((mb + mb / 4 + 16))M
	}
	build_cached "$modimg" "/lib/modules/$kver/modules.dep /lib/modules/$kver/modules.alias" \
		mkmodimg "$modimg" "/lib/modules/$kver"
elif [ -n "$crashkernel" ]; then
	# The dedicated kernel carries kdumpinit. As users run it (--no-raw)
	# it gets no initramfs; for the raw copy, an archive the kernel
	# unpacks over its own with /testinit: rawinit.c, testinit's copy in
	# 20 KB of static C (busybox would cost the reservation 2 MB and so
	# raise the floor measured). No bad-input side runs there: they need
	# busybox and PID namespaces, which the dedicated kernel leaves out.
	[ -f "$crashkernel" ] || die "--crash-kernel $crashkernel: no such file"
	[ "$wd" = 0 ] || die "--crash-kernel: its watchdog drivers are built in; --watchdog packs modules"
	crash=$cache/crash-overlay.img
	mkoverlay() {
		local d
		d=$(mktemp -d) || return 1
		musl-gcc -static -Os -s -Wall -Werror -o "$d/testinit" "$here/rawinit.c" &&
			(cd "$d" && echo testinit | cpio -o -H newc --quiet) >"$1"
		local rc=$?
		rm -rf "$d"
		return $rc
	}
	[ $mode = capture ] || build_cached "$crash" "$here/rawinit.c" mkoverlay "$crash"
else
	nbdmods=() nbdtag=
	[ $nbd = 0 ] || { nbdmods=(-m nbd -m virtio_net); nbdtag=-nbd; }
	crash=$cache/crash-$([ $mode = raw ] && echo raw || echo kdumpinit)$wdtag$nbdtag-$kver.img
	build_cached "$crash" "$initbin $here/testinit $busybox $mkinitramfs" \
		"$mkinitramfs" -k "$kver" "${modroot[@]}" -o "$crash" -m virtio_blk -m virtio_pci "${wdmods[@]}" "${nbdmods[@]}" \
		-b "$initbin" -a "$here/testinit:/testinit" -a "$busybox:/bin/busybox"
fi

# hugefill: hugetlb and THP pages with data, which busybox cannot make.
hugefill=$cache/hugefill
if [ ! -x "$hugefill" ] || [ "$here/hugefill.c" -nt "$hugefill" ]; then
	cc -static -O2 -Wall -o "$hugefill" "$here/hugefill.c" || die "building hugefill failed"
fi
stage1=$cache/stage1-$([ $mode = raw ] && echo raw || echo kdumpinit)$wdtag-$kver.img
s1extra=(-a "$hugefill:/bin/hugefill")
s1in="$here/stage1-init $busybox $kernel $mkinitramfs $hugefill"
# The crash kernel stage 1 arms: the first kernel itself, or --crash-kernel
# (then /crash.img only where there is an overlay).
armkernel=$kernel
if [ -n "$crashkernel" ] && [ -n "$disk" ]; then
	# --disk: the machine as the package leaves it. The stock kernel at
	# /vmlinuz with the base image, the dedicated one installed with its
	# built-in lists beside it (make install-crash-kernel), and the
	# service script that chooses between them (dist/kdumpinit-arm, the
	# package's defaults).
	for f in "" .config .modules.builtin .modules.builtin.modinfo; do
		[ -f "$crashkernel$f" ] || die "--crash-kernel with --disk: no $crashkernel$f (the lists arm --dev reads)"
		s1extra+=(-a "$crashkernel$f:/crash-kernel$f")
		s1in+=" $crashkernel$f"
	done
	s1extra+=(-a "$top/dist/kdumpinit-arm:/bin/kdumpinit-arm" -a "$top/dist/default.kdumpinit:/etc/default.kdumpinit")
	s1in+=" $top/dist/kdumpinit-arm $top/dist/default.kdumpinit"
	stage1=$cache/stage1-dedicated$wdtag-$kver.img
elif [ -n "$crashkernel" ]; then
	armkernel=$crashkernel
	stage1=$cache/stage1-dedicated-$([ $mode = capture ] && echo norawimg || echo overlay)-$kver.img
	s1in+=" $crashkernel"
fi
if [ -z "$crashkernel" ] || [ $mode != capture ] || [ -n "$disk" ]; then
	s1extra+=(-a "$crash:/crash.img")
	s1in+=" $crash"
fi
if [ -n "$armhelper" ]; then
	s1extra+=(-a "$armhelper:/bin/armhelper")
	s1in+=" $armhelper"
fi
if [ -x "$kdumpinit" ]; then
	s1extra+=(-a "$kdumpinit:/bin/kdumpinit")
	s1in+=" $kdumpinit"
fi
# --seed: the seeded load's script and thread helper, in an image of its
# own name (the seed itself is on the command line), so that the plain
# runs keep theirs.
if [ -n "$seed" ]; then
	seedtasks=$cache/seedtasks
	if [ ! -x "$seedtasks" ] || [ "$here/seedtasks.c" -nt "$seedtasks" ]; then
		cc -static -O2 -Wall -pthread -o "$seedtasks" "$here/seedtasks.c" || die "building seedtasks failed"
	fi
	s1extra+=(-a "$here/seedload.sh:/bin/seedload" -a "$seedtasks:/bin/seedtasks")
	s1in+=" $here/seedload.sh $seedtasks"
	stage1=${stage1%-"$kver".img}-seed-$kver.img
fi
build_cached "$stage1" "$s1in" \
	"$mkinitramfs" -k "$kver" "${modroot[@]}" -o "$stage1" "${s1mods[@]}" \
	-b "$here/stage1-init" -a "$busybox:/bin/busybox" -a "$armkernel:/vmlinuz" \
	"${s1extra[@]}"
d_build=$(since "$t_build")
if [ -n "$crashkernel" ] && [ -n "$disk" ]; then
	say "images: dedicated crash kernel $(du -h --apparent-size "$crashkernel" | cut -f1) installed beside the stock one and its $(du -h --apparent-size "$crash" | cut -f1) base image, $(du -h --apparent-size "$stage1" | cut -f1) stage 1 (${d_build}s)"
elif [ -n "$crashkernel" ]; then
	say "images: dedicated crash kernel $(du -h --apparent-size "$crashkernel" | cut -f1)$([ $mode = capture ] && echo ", no initramfs" || echo " with a $(du -h --apparent-size "$crash" | cut -f1) test overlay"), $(du -h --apparent-size "$stage1" | cut -f1) stage 1 (${d_build}s)"
else
	say "images: $(du -h --apparent-size "$crash" | cut -f1) crash initramfs, $(du -h --apparent-size "$stage1" | cut -f1) stage 1 (${d_build}s)"
fi

# --- disks ------------------------------------------------------------------------
dump=$workdir/dump.img raw=$workdir/raw.img log=$workdir/console.log small=$workdir/small.img
[ -z "$disk" ] || dump=$workdir/dump-$disk.img
rm -f "$dump" "$workdir"/dump-*.img "$raw" "$small" "$workdir/raw.vmcore" "$workdir/saved.elf" "$log" "$workdir/milestones"
# A claimed disk far too small for any dump: the PID-1 bad-input cases
# write what fits there and must mark it incomplete.
"$kdumpinit" format "$small" --size 4M --label small >/dev/null 2>&1 || die "kdumpinit format $small failed"
if [ -n "$after" ]; then
	[ -f "${after%%:*}" ] && [ -f "${after#*:}" ] || die "--after: ${after%%:*} or ${after#*:} is not there"
	cp --sparse=always "${after%%:*}" "$dump" || die "cannot copy ${after%%:*}"
	step "dump disk: a copy of ${after%%:*} ($("$kdumpinit" info "$dump" 2>&1 | grep -c '^state') unsaved dump(s) on it)"
elif [ $keepdump = 1 ] && [ -f "$dump" ]; then
	step "dump disk kept from the last run: $dump ($("$kdumpinit" info "$dump" 2>&1 | grep -m1 '^state'))"
elif [ $rawonly = 0 ]; then
	# QEMU's sd-card takes only a power-of-two size.
	dsize=1536M
	[ "$disk" = sdhci ] && dsize=1G
	"$kdumpinit" format "$dump" --size "${dumpsize:-$dsize}" --label e2e >"$workdir/format.out" 2>&1 ||
		{ cat "$workdir/format.out"; die "kdumpinit format $dump failed"; }
else
	truncate -s 16M "$dump"
fi
# --disk: the other three are claimed too (kdumpinit would write to any
# of them if the selector matched it, and would fill a small one), so
# their hashes must not change. Small: hashing them costs seconds.
declare -A before=()
if [ -n "$disk" ]; then
	for t in $guesttypes; do
		[ "$t" = "$disk" ] && continue
		"$kdumpinit" format "$workdir/dump-$t.img" --size 64M --label "e2e-$t" >/dev/null 2>&1 ||
			die "kdumpinit format dump-$t.img failed"
		before[$t]=$(sha256sum <"$workdir/dump-$t.img" | cut -d' ' -f1)
	done
fi
rawsize=$(($(bytes "$mem") + (256 << 20)))
[ $mode = capture ] && rawsize=$((16 << 20))
truncate -s $rawsize "$raw" || die "cannot create $raw"

# --- the guest --------------------------------------------------------------------
# drive FILE ID SERIAL [OPTS]: a raw virtio disk the guest finds by serial.
drives=()
drive() {
	drives+=(-drive "file=$1,format=raw,if=none,id=$2${4:-}" -device "virtio-blk-pci,drive=$2,serial=$3")
}
drive "$scratch" d0 kdump-scratch ,readonly=on
# --stall-disk: a burst for the metadata and the first chunks, then a
# trickle that leaves one 1 MiB write waiting for minutes: the capture stops
# making progress while the VM runs on.
if [ -n "$blkdebug" ]; then
	drives+=(-drive "driver=raw,if=none,id=d1,file.driver=blkdebug,file.config=$blkdebug,file.image.driver=file,file.image.filename=$dump"
		-device "virtio-blk-pci,drive=d1,serial=kdump-dump")
elif [ $stalldisk = 1 ]; then
	drive "$dump" d1 kdump-dump ,throttling.bps-write=1024,throttling.bps-write-max=4194304,throttling.bps-write-max-length=1
elif [ "$slowdisk" != 0 ]; then
	drive "$dump" d1 kdump-dump ,throttling.bps-write=$slowdisk
elif [ -n "$disk" ]; then
	# One claimed disk per bus, each found by its serial; then the module
	# tree, read-only.
	# shellcheck disable=SC2054
	for t in $guesttypes; do
		drives+=(-drive "file=$workdir/dump-$t.img,format=raw,if=none,id=dd$t")
		case $t in
		nvme) drives+=(-device "nvme,drive=dd$t,serial=kdump-$t") ;;
		nvme-*) drives+=(-device "nvme,drive=dd$t,serial=kdump-nvme-iommu") ;;
		megasas) drives+=(-device megasas-gen2,id=mega -device "scsi-hd,drive=dd$t,bus=mega.0,serial=kdump-$t") ;;
		pvscsi) drives+=(-device pvscsi,id=pvs -device "scsi-hd,drive=dd$t,bus=pvs.0,serial=kdump-$t") ;;
		usb-storage) drives+=(-device qemu-xhci,id=xhci -device "usb-storage,bus=xhci.0,drive=dd$t,serial=kdump-$t") ;;
		usb-uas) drives+=(-device qemu-xhci,id=xhci -device usb-uas,bus=xhci.0,id=uas
			-device "scsi-hd,drive=dd$t,bus=uas.0,scsi-id=0,lun=0,serial=kdump-$t") ;;
		sdhci) drives+=(-device sdhci-pci,id=sdhci -device "sd-card,drive=dd$t") ;;
		lsi) drives+=(-device lsi53c895a,id=lsi -device "scsi-hd,drive=dd$t,bus=lsi.0,serial=kdump-$t") ;;
		ahci) drives+=(-device ich9-ahci,id=ahci -device "ide-hd,drive=dd$t,bus=ahci.0,serial=kdump-$t") ;;
		scsi) drives+=(-device virtio-scsi-pci,id=vscsi -device "scsi-hd,drive=dd$t,bus=vscsi.0,serial=kdump-$t") ;;
		virtio) drives+=(-device "virtio-blk-pci,drive=dd$t,serial=kdump-$t") ;;
		esac
	done
	drive "$modimg" d4 kdump-modules ,readonly=on
elif [ "$latedisk" != 0 ]; then
	# The backend only: the device comes later, through the monitor.
	drives+=(-drive "file=$dump,format=raw,if=none,id=d1")
elif [ $nbd = 1 ]; then
	# The dump image is the server's (qemu-nbd, started below), reached
	# through QEMU's user networking: 10.0.2.2 is the host's loopback.
	drives+=(-netdev user,id=n0 -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56)
	nbdport=$((20000 + RANDOM % 20000))
else
	drive "$dump" d1 kdump-dump
fi
drive "$raw" d2 kdump-raw
drive "$small" d3 kdump-small
# The IOMMU setups: q35 (the IOMMUs' interrupt remapping needs the
# split irqchip under TCG), the IOMMU before the PCI devices, and the
# DMA remapping on in the first kernel as on real hardware (AMD's is on
# by default; 6.1 has no amd_iommu=on: "Unknown option").
machine=() iommuarg=
# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
case $disk in
*-intel-iommu) machine=(-machine q35,kernel-irqchip=split -device intel-iommu,intremap=on) iommuarg=' intel_iommu=on' ;;
*-amd-iommu) machine=(-machine q35,kernel-irqchip=split -device amd-iommu,intremap=on) ;;
esac
# shellcheck disable=SC2054
qemu=(qemu-system-x86_64 -accel tcg,thread=multi "${machine[@]}" -cpu "$cpu" -smp "$smp" -m "$mem"
	-nographic -no-reboot -kernel "$kernel" -initrd "$stage1"
	-append "console=ttyS0 crashkernel=$ck panic=10 e2e.mode=$mode e2e.level=$level e2e.fw=$firmware e2e.wd=$wd e2e.stall=$([ $stalldisk = 1 ] && echo 3600 || echo 0) e2e.final=$final${disk:+ e2e.disk=$disk e2e.kver=$kver e2e.dsel=$dsel$iommuarg}${crashkernel:+${disk:+ e2e.dedicated=1}}${crashcpus:+ e2e.cpus=$crashcpus}${seed:+ e2e.seed=$seed}${rawout:+ e2e.estimate=1}$([ $nbd = 0 ] || echo " e2e.nbd=$nbdport")${appendfirst:+ $appendfirst}"
	"${drives[@]}")
[ "$wd" = 0 ] || qemu+=(-device i6300esb -watchdog-action reset)
qemu+=(-pidfile "$workdir/qemu.pid")
nbdpid=
if [ $nbd = 1 ]; then
	command -v qemu-nbd >/dev/null || die "--nbd: no qemu-nbd (qemu-utils)"
	# -t: it stays for a reconnection; --cache=none: what the guest
	# flushed is in the file when QEMU ends.
	serve_dump() {
		qemu-nbd -f raw -x dump -b 127.0.0.1 -p "$nbdport" -t --cache=none "$dump" \
			>>"$workdir/qemu-nbd.log" 2>&1 &
		echo $! >"$workdir/nbd-dump.pid"
	}
	: >"$workdir/qemu-nbd.log"
	rm -f "$workdir/nbd-dropped" "$workdir/nbd-back"
	serve_dump
	nbdpid=$!
	# PORT+1: a hostile server, garbage for a greeting; PORT+2: a
	# claimed export too small for the dump (export "small").
	"$python" -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4)
while True:
    c, _ = s.accept(); c.sendall(b"HELLO garbage \x00\x01" * 8); c.close()' "$((nbdport + 1))" \
		>>"$workdir/qemu-nbd.log" 2>&1 &
	nbdpid="$nbdpid $!"
	rm -f "$workdir/nbd-small.img"
	"$kdumpinit" format "$workdir/nbd-small.img" --size 8M --label small >/dev/null 2>&1 ||
		die "--nbd: cannot format nbd-small.img"
	qemu-nbd -f raw -x small -b 127.0.0.1 -p "$((nbdport + 2))" -t --cache=none "$workdir/nbd-small.img" \
		>>"$workdir/qemu-nbd.log" 2>&1 &
	nbdpid="$nbdpid $!"
	# PORT+3: a scratch export for the link's own rate (testinit's nbd-dd).
	rm -f "$workdir/nbd-dd.img"
	truncate -s 256M "$workdir/nbd-dd.img"
	qemu-nbd -f raw -x dd -b 127.0.0.1 -p "$((nbdport + 3))" -t --cache=none "$workdir/nbd-dd.img" \
		>>"$workdir/qemu-nbd.log" 2>&1 &
	nbdpid="$nbdpid $!"
	trap '[ -z "$nbdpid" ] || kill $nbdpid 2>/dev/null; [ ! -s "$workdir/nbd-dump.pid" ] || kill "$(cat "$workdir/nbd-dump.pid")" 2>/dev/null' EXIT
	for _ in $(seq 50); do
		(exec 3<>/dev/tcp/127.0.0.1/$nbdport) 2>/dev/null && break
		sleep 0.1
	done
	step "qemu-nbd serves $dump as export dump on 127.0.0.1:$nbdport"
fi
rm -f "$workdir/qemu.pid" "$workdir/halt-held" "$workdir/cut" "$workdir/monitor.sock" "$workdir/hotadded"
[ "$latedisk" = 0 ] || qemu+=(-monitor "unix:$workdir/monitor.sock,server=on,wait=off")
if [ $firmware = 1 ]; then
	# systemd's credential conventions, as a VM host would set them.
	printf '# from fw_cfg\nlevel = %s\n' "$level" >"$workdir/fw-kdumpinit.conf"
	qemu+=(-smbios "type=11,value=io.systemd.credential:kdumpinit.dev=SERIAL=kdump-dump"
		-fw_cfg "name=opt/io.systemd.credentials/kdumpinit.conf,file=$workdir/fw-kdumpinit.conf")
fi
# --seal: a new key pair each run; the public key reaches the crash kernel
# as firmware gives it (the file keygen wrote, its whole line), the secret
# key stays here for save, info and dmesg --key.
keyarg=() keyid='' pubhex=''
if [ $seal = 1 ]; then
	rm -f "$workdir/seal.secret" "$workdir/seal.public"
	"$kdumpinit" keygen "$workdir/seal.secret" "$workdir/seal.public" >"$workdir/keygen.out" 2>&1 ||
		die "kdumpinit keygen failed: $(cat "$workdir/keygen.out")"
	keyid=$(grep -o 'key [0-9a-f]\{16\}' "$workdir/keygen.out" | head -n 1 | cut -d' ' -f2)
	pubhex=$(awk '$1 == "kdumpinit-public-key" { print $2 }' "$workdir/seal.public")
	[ -n "$keyid" ] && [ ${#pubhex} = 64 ] || die "keygen: no key id or public key ($(cat "$workdir/keygen.out"))"
	qemu+=(-fw_cfg "name=opt/io.systemd.credentials/kdumpinit.pubkey,file=$workdir/seal.public")
	keyarg=(--key "$workdir/seal.secret")
fi
[ $demo = 0 ] || echo "demo: booting a $mem guest (cpu $cpu), crashing it, capturing with kdumpinit (log: $log)"
say "qemu: ${qemu[*]}"

# Read the console line by line: keep it all in console.log and note when
# the milestones pass (host clock, seconds since QEMU started).
declare -A at=()
# One more boot, once, when the FIRST kernel died of an emulator fault
# before stage 1 armed anything: "Oops: int3" in its own code while it
# patches it (static keys), which QEMU's multi-threaded TCG can give when
# one vCPU runs code another has just rewritten (seen once in 7.3's boot,
# in set_next_task_fair). Nothing of kdumpinit had run, and no disk was
# written; anything else, or a second such fault, stays a failure.
for attempt in 1 2; do
rm -f "$log" "$workdir/milestones"
unset crashed
t_qemu=$(now)
{ timeout "$tmo" "${qemu[@]}" </dev/null 2>&1; echo "__QEMU_RC__ $?"; } |
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"__QEMU_RC__ "*) echo "${line#* }" >"$workdir/qemu.rc"; continue ;;
		esac
		printf '%s\n' "$line" >>"$log"
		m=
		case $line in
		*"e2e-stage1: crash kernel armed"*) m=armed ;;
		# Kernel lines for these two: they are printed whole, while
		# kernel messages may cut into a line from the guest's shell.
		*"Trigger a crash"*) m=crash crashed=1 ;;
		*"Run /"*" as init process"*) [ -z "${crashed:-}" ] || m=crashup ;;
		*"e2e-testinit: raw copy done"*) m=rawdone ;;
		*kdumpinit:*"final action: "*) [ -z "${crashed:-}" ] || m=reboot ;;
		*"reboot: System halted"*)
			# Held: a watchdog left running would reset it (and
			# -no-reboot end QEMU) within its timeout. We started
			# this QEMU; end it by its pid.
			if [ -n "${crashed:-}" ] && [ "$final" = halt ]; then
				m=halted
				{ sleep $((wd + 10)); echo held >"$workdir/halt-held"
				  kill "$(cat "$workdir/qemu.pid")"; } </dev/null >/dev/null 2>&1 &
			fi ;;
		*"kdumpinit: "*"starting as PID 1"*) m=kdstart ;;
		"kdumpinit: capture:  "[2-9][0-9]"%"*)
			# --nbd-drop: the server stops mid-dump, and comes back.
			if [ "$nbddrop" != 0 ] && [ ! -e "$workdir/nbd-dropped" ]; then
				m=nbddrop
				: >"$workdir/nbd-dropped"
				kill "$(cat "$workdir/nbd-dump.pid")" 2>/dev/null
				{ sleep "$nbddrop"; serve_dump; echo back >"$workdir/nbd-back"; } </dev/null >/dev/null 2>&1 &
			fi ;;
		*"kdumpinit: waiting up to "*)
			if [ -n "${crashed:-}" ] && [ "$latedisk" != 0 ] && [ ! -e "$workdir/hotadded" ]; then
				m=waiting
				: >"$workdir/hotadded"
				{ sleep "$latedisk"
				  "$python" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"device_add virtio-blk-pci,drive=d1,serial=kdump-dump,id=latedump\n"); time.sleep(1)' \
					"$workdir/monitor.sock" && echo "added $(since "$t_qemu")" >"$workdir/hotadded"
				} </dev/null >/dev/null 2>&1 &
			fi ;;
		*"kdumpinit: watchdog: /dev/"*) m=wdopen ;;
		*"kdumpinit: capture finished"*) m=captured ;;
		*"kdumpinit: "*"no progress for"*"hardware watchdog"*) m=nomove ;;
		*"e2e-stage1: watchdog armed"*) m=wdarmed ;;
		esac
		# --cut-at: the power goes, mid-capture, as QEMU dies. Not a case
		# arm above: those take the first pattern that matches, and this
		# one would hide every kdumpinit milestone after it.
		if [ -n "$cutat" ] && [ -n "${crashed:-}" ] && [ ! -e "$workdir/cut" ] &&
			[[ $line == *kdumpinit:* ]] && [[ $line =~ $cutat ]]; then
			kill -9 "$(cat "$workdir/qemu.pid")" 2>/dev/null
			printf '%s\n' "$line" >"$workdir/cut"
			[ -n "$m" ] || m=cut
		fi
		[ -z "$m" ] || echo "$m $(since "$t_qemu")" >>"$workdir/milestones"
		if [ $demo = 1 ]; then
			case $line in kdumpinit:* | *e2e-*FAIL*) printf '  %s\n' "$line" ;; esac
		fi
	done
if [ $attempt = 1 ] && ! grep -aq "e2e-stage1: crash kernel armed" "$log" &&
	grep -aq "Oops: int3" "$log" && ! grep -aq "Trigger a crash" "$log"; then
	echo "note: the first kernel died of an emulator fault at boot ($(grep -a -m1 -o 'RIP: [^ ]*' "$log")" \
		"after 'Oops: int3', before stage 1 ran): booting once more; that log is $log.emulator-fault"
	mv -f "$log" "$log.emulator-fault"
	continue
fi
break
done
d_qemu=$(since "$t_qemu")
qrc=$(cat "$workdir/qemu.rc" 2>/dev/null || echo "?")
mv -f "$workdir/milestones" "$workdir/milestones.last" 2>/dev/null
while read -r k v; do at[$k]=$v; done <"$workdir/milestones.last" 2>/dev/null
rm -f "$workdir/qemu.rc"

# --- console checks ---------------------------------------------------------------
ms2() { local a=${at[$1]:-} b=${at[$2]:-}; [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1fs", b - a }' || echo "-"; }
# What the crash kernel's real PID 1 printed: everything after the sysrq
# crash (the first kernel's `kdumpinit arm` prints kdumpinit: lines too),
# without the bad-input side runs, which testinit re-prints as e2e-bad-NAME:.
post=$workdir/crash-console.log
sed -n '/Trigger a crash/,$p' "$log" | grep -av '^e2e-bad-' >"$post"
if [ "$latedisk" != 0 ]; then
	if grep -q '^added ' "$workdir/hotadded" 2>/dev/null; then
		step "the dump disk hot-added $latedisk s after kdumpinit said it waits ($(cat "$workdir/hotadded") s)"
	else
		failed "the dump disk was not hot-added (no 'kdumpinit: waiting up to' line, or the monitor refused)"
	fi
	if grep -aq "kdumpinit: still waiting for SERIAL=kdump-dump: 10 s of 300 s; block devices: " "$post"; then
		pass "kdumpinit said it still waited, at 10 s: $(grep -a -m1 'still waiting' "$post" | tr -d '\r')"
	else
		failed "no 'kdumpinit: still waiting for SERIAL=kdump-dump: 10 s of 300 s' line"
	fi
	if grep -aq "no usable dump device" "$post"; then
		failed "kdumpinit gave up on the late disk: $(grep -a -m1 'no usable dump device' "$post")"
	fi
fi
if [ "$final" = halt ]; then
	# Halted, then held for the watchdog's timeout + 10 s and ended
	# here: a reset before that would have ended QEMU by itself.
	if [ -f "$workdir/halt-held" ]; then
		step "halted, and still up $((wd + 10)) s later (QEMU ended here)"
	else
		failed "the crash kernel did not stay halted (QEMU status $qrc after ${d_qemu}s)"
	fi
	# The kernel stops i6300esb at halt itself (watchdog core,
	# stop_on_reboot), so staying up proves little: kdumpinit's own check
	# (sysfs state after the magic close, before halt) is what counts.
	if [ "$wd" != 0 ]; then
		if grep -a -q "kdumpinit: warning: watchdog" "$post"; then
			failed "kdumpinit warned about the watchdog: $(grep -a -m1 'kdumpinit: warning: watchdog' "$post")"
		elif grep -a -q "kdumpinit: watchdog: stopped (magic close) before halt" "$post"; then
			pass "kdumpinit stopped the watchdog before halt (sysfs state inactive after the magic close)"
		else
			failed "no 'kdumpinit: watchdog: stopped (magic close) before halt' line"
		fi
	fi
elif [ -n "$cutat" ]; then
	if [ -f "$workdir/cut" ]; then
		step "power cut (QEMU killed, status $qrc) at: $(cat "$workdir/cut")"
	else
		failed "no console line matched --cut-at '$cutat': no power cut (QEMU status $qrc)"
	fi
elif [ "$qrc" = 124 ]; then
	failed "QEMU did not exit within ${tmo}s (timeout)"
elif [ "$qrc" != 0 ]; then
	failed "QEMU exited with status $qrc"
else
	step "QEMU exited by itself after ${d_qemu}s"
fi
grep -q "e2e-stage1: crash kernel armed" "$log" && step "crash kernel armed" ||
	failed "crash kernel not armed: $(grep -m1 'e2e-stage1: FAIL' "$log")"
grep -q "sysrq triggered crash" "$log" && step "first kernel crashed" ||
	failed "first kernel did not crash"
if [ -n "$seed" ]; then
	sl=$(grep -a -m1 -o 'seedload: seed .*' "$log")
	[ -n "$sl" ] && step "$sl" || failed "no seedload line: the seeded load (e2e.seed=$seed) did not run"
fi
# The first kernel's panic is "sysrq triggered crash"; any other is the
# crash kernel's.
if grep "Kernel panic" "$log" | grep -vq "sysrq triggered crash"; then
	failed "crash kernel panicked: $(grep "Kernel panic" "$log" | grep -v "sysrq triggered crash" | head -n 1)"
else
	pass "no panic in the crash kernel"
fi
if [ $mode = capture ]; then
	if grep -q "e2e-testinit" "$log"; then
		failed "/testinit ran in --no-raw mode"
	elif grep -q "kdumpinit: .*starting as PID 1" "$post"; then
		pass "kdumpinit started as the crash kernel's only init"
	else
		failed "kdumpinit did not start as PID 1 of the crash kernel"
	fi
elif grep -q "e2e-testinit: raw copy done" "$log" &&
	rawn=$(grep -m1 -o 'copying /proc/vmcore ([0-9]* bytes)' "$log" | grep -o '[0-9]*') &&
	[ "${rawn:-0}" -gt 0 ]; then
	step "raw copy of /proc/vmcore taken ($rawn bytes)"
else
	failed "raw copy of /proc/vmcore not taken: $(grep -m1 'e2e-testinit: FAIL' "$log")"
fi
# The hardware watchdog (--watchdog): the first kernel ran it up to the
# panic; kdumpinit must have taken it over and said so.
if [ "$wd" != 0 ]; then
	grep -a -q "e2e-stage1: watchdog armed" "$log" && step "first kernel: watchdog armed (${wd} s)" ||
		failed "the first kernel did not arm the watchdog: $(grep -a -m1 'e2e-stage1: FAIL' "$log")"
	if grep -a -q "kdumpinit: watchdog: /dev/watchdog0\{0,1\} (i6300esb), timeout $wd s, petted while the capture progresses" "$post"; then
		pass "kdumpinit took over the watchdog: $(grep -a -m1 -o 'kdumpinit: watchdog: .*' "$post")"
	else
		failed "no 'kdumpinit: watchdog: /dev/watchdog (i6300esb), timeout $wd s' line: $(grep -a -m1 -o 'kdumpinit: watchdog.*' "$post")"
	fi
	say "watchdog: panic to kdumpinit's watchdog line $(ms2 crash wdopen), panic to end of capture $(ms2 crash captured), hardware timeout ${wd}s"
fi
if [ $stalldisk = 1 ]; then
	# The disk stopped taking writes: no progress, so no pets, so the
	# hardware resets the machine; -no-reboot makes that QEMU's exit.
	# kdumpinit's own stall rule (kdumpinit.stall=3600) must not be what
	# ended it, nor any final action.
	if grep -a -q "kdumpinit: .*no progress for .* the hardware watchdog resets the machine" "$post"; then
		pass "kdumpinit saw the stall: $(grep -a -m1 -o 'no progress for [0-9]* s: .* unless the capture moves' "$post")"
	else
		failed "no 'no progress ... the hardware watchdog resets' line from kdumpinit"
	fi
	if grep -a -q "kdumpinit: final action\|kdumpinit: capture finished\|kdumpinit: capture:.*peak memory" "$post"; then
		failed "the stalled capture ended some other way: $(grep -a "kdumpinit: final action\|capture finished\|peak memory" "$post" | head -n 1)"
	elif [ "$qrc" = 0 ] && [ -n "${at[nomove]:-}" ]; then
		pass "hardware watchdog reset: QEMU exited $(awk -v a="${at[nomove]}" -v b="$d_qemu" 'BEGIN { printf "%.1f", b - a }') s after the no-progress line (timeout ${wd} s), no final action ran"
	else
		failed "no watchdog reset seen (QEMU status $qrc)"
	fi
fi
if [ $rawonly = 0 ] && [ $stalldisk = 0 ] && [ -z "$cutat" ]; then
	# What the reservation had to hold, as kdumpinit measured it (VmHWM)
	# against what the crash kernel had free when it started.
	peak=$(grep -a -o "peak memory [0-9.]* MiB" "$post" | tail -n 1 | grep -o "[0-9.]*")
	availmb=$(grep -a -o "plan: MemAvailable [0-9]* MiB" "$post" | tail -n 1 | grep -o "[0-9]*")
	if [ -n "$blkdebug" ] && [ -z "$peak" ]; then
		say "no peak memory line: the write errors ended the capture before its summary"
	elif [ -n "$peak" ] && [ -n "$availmb" ] && awk -v p="$peak" -v a="$availmb" 'BEGIN{exit !(p > 0 && p < a)}'; then
		pass "kdumpinit peak memory ${peak} MiB, of ${availmb} MiB available (crashkernel=$ck)"
	else
		failed "no believable peak memory line (peak '${peak:-}' MiB, available '${availmb:-}' MiB)"
	fi
	# --min-workers: a worker per CPU the crash kernel brought up (what
	# arm's nr_cpus= and the reservation paid for), at least N of them.
	if [ "$minworkers" != 0 ]; then
		ncpu=$(grep -a -o "smpboot: Total of [0-9]* processors" "$post" | tail -n 1 | grep -o "[0-9][0-9]*")
		nthr=$(grep -a -o "kdumpinit: target: .*, \([0-9]*\) threads\{0,1\}$" "$post" | grep -o "[0-9]* threads\{0,1\}$" | grep -o "^[0-9]*")
		if [ -n "$ncpu" ] && [ "$nthr" = "$ncpu" ] && [ "$nthr" -ge "$minworkers" ]; then
			pass "kdumpinit ran $nthr workers, one per CPU the crash kernel activated (at least $minworkers)"
		else
			failed "workers: the crash kernel activated '${ncpu:-?}' CPUs, kdumpinit ran '${nthr:-?}' threads, want at least $minworkers"
		fi
	fi
	# Our lines reach the crash kernel's log whole: PID 1 lifts the
	# /dev/kmsg rate limit there.
	if grep -a -q "init: [0-9]* output lines suppressed due to ratelimiting" "$post"; then
		failed "the crash kernel's log dropped kdumpinit lines: $(grep -a -m1 'suppressed due to ratelimiting' "$post")"
	else
		pass "no kdumpinit line dropped by the /dev/kmsg rate limit"
	fi
	if [ $firmware = 1 ]; then
		if ! grep -a "Command line:" "$post" | grep -q .; then
			failed "firmware mode: the crash kernel printed no command line to check"
		elif grep -a "Command line:" "$post" | grep -q "kdumpinit\."; then
			failed "firmware mode, but the crash kernel's command line has kdumpinit. settings"
		elif grep -a -q "kdumpinit: settings: dev=SERIAL=kdump-dump (smbios), level=$level (fw_cfg)" "$post"; then
			pass "settings from firmware: dev from SMBIOS type 11, level from fw_cfg, and said so"
		else
			failed "no 'settings: dev=SERIAL=kdump-dump (smbios), level=$level (fw_cfg)' line: $(grep -a 'kdumpinit: settings' "$post" | head -n 1)"
		fi
	fi
	# --nbd: the network up, the server's export on an NBD device, the
	# dump written there (the host then reads it in the served file).
	if [ $nbd = 1 ] && [ $seal = 1 ]; then
		# The key from firmware: arm asks nothing (the dry run passes).
		if grep -a -q "e2e-stage1: arm without --allow-clear: exit 0: " "$log" &&
			! grep -a -q "no key is configured" "$log"; then
			pass "nbd, sealed: arm takes the network dump device without --allow-clear (the firmware's key)"
		else
			failed "nbd, sealed: arm without --allow-clear: $(grep -a 'arm without --allow-clear' "$log")"
		fi
	elif [ $nbd = 1 ]; then
		if grep -a -q "e2e-stage1: arm without --allow-clear: exit 2: kdumpinit: error: kdumpinit.dev=nbd://10.0.2.2:$nbdport/dump is a network dump device and no key is configured" "$log"; then
			pass "nbd: arm refuses a network dump device without a key, unless --allow-clear"
		else
			failed "nbd: arm without --allow-clear: $(grep -a 'arm without --allow-clear' "$log")"
		fi
	fi
	if [ $nbd = 1 ]; then
		case " $appendfirst " in
		*" e2e.nbdip=arm "*)
			al=$(grep -a -o "kdumpinit: network dump device nbd://10.0.2.2:$nbdport/dump: kdumpinit.ip=10.0.2.15/24,,52:54:00:12:34:56, the way to the server here (eth0)" "$log" | head -n 1)
			if [ -n "$al" ] && grep -a -q "kdumpinit: settings: .*ip=10.0.2.15/24,,52:54:00:12:34:56 (cmdline)" "$post"; then
				pass "nbd: no kdumpinit.ip= given: arm recorded the way to the server ('$al'), the crash kernel took it"
			else
				failed "nbd: arm's recorded address: $(grep -a -e 'network here' -e 'way to the server' -e 'kdumpinit: settings' "$log" | tr '\n' '|')"
			fi ;;
		*" e2e.nbdip=dhcp "*)
			if grep -a -q "kdumpinit: network: eth0: DHCP lease 10.0.2.15/24, gateway 10.0.2.2, [0-9]* s" "$post"; then
				pass "nbd: kdumpinit.ip=dhcp: the lease from QEMU's DHCP server (10.0.2.15/24, gateway 10.0.2.2)"
			else
				failed "nbd: kdumpinit.ip=dhcp: no lease line: $(grep -a 'kdumpinit: network' "$post" | tr '\n' '|')"
			fi ;;
		esac
		nl=$(grep -a -o "kdumpinit: NBD server 10.0.2.2:$nbdport, export 'dump': [0-9.]* MiB, on /dev/nbd[0-9]*" "$post" | head -n 1)
		if [ -n "$nl" ] && grep -a -q "kdumpinit: network: eth0" "$post" &&
			grep -a -q "kdumpinit: dump complete on /dev/nbd[0-9]" "$post"; then
			pass "nbd: $nl; dump complete there"
		else
			failed "nbd: no 'NBD server ... on /dev/nbdN' and 'dump complete on /dev/nbdN': $(grep -a -e 'kdumpinit: network' -e 'kdumpinit: NBD' -e 'dump complete' "$post" | tr '\n' '|')"
		fi
		if [ "$nbddrop" != 0 ]; then
			dl=$(grep -a -o "kdumpinit: warning: the connection to the NBD server 10.0.2.2:$nbdport dropped" "$post" | head -n 1)
			bl=$(grep -a -o "kdumpinit: connected again to the NBD server 10.0.2.2:$nbdport after [0-9.]* s" "$post" | head -n 1)
			if [ -e "$workdir/nbd-back" ] && [ -n "$dl" ] && [ -n "$bl" ] &&
				grep -a -q "kdumpinit: dump complete on /dev/nbd[0-9]" "$post"; then
				pass "nbd: the server stopped at 20 % and back $nbddrop s later: '$dl', '$bl', the dump complete"
			else
				failed "nbd: the server stopped and back: $([ -e "$workdir/nbd-back" ] || echo 'never restarted; ')$(grep -a -e 'NBD' -e 'nbd' -e 'connected again' -e 'dump complete' "$post" | tail -n 12 | tr '\n' '|')"
			fi
		fi
	fi
	if grep -q "kdumpinit: final action: $final" "$post"; then
		pass "kdumpinit final action: $(grep "kdumpinit: final action" "$post" | tail -n 1)"
	else
		failed "no 'kdumpinit: final action: $final' line from the crash kernel; its last kdumpinit lines:"
		grep "kdumpinit:" "$post" | tail -n 5 | sed 's/^/    /'
	fi
fi

# --disk with --crash-kernel: the reach check in the first kernel, what
# the service armed, which kernel booted after the panic.
dedicated_checks() {
	local rline rrc sline srel
	rline=$(grep -a -o "e2e-reach: .*" "$log" | sed 's/^e2e-reach: //')
	rrc=$(sed -n 's/^exit //p' <<<"$rline" | tail -n 1)
	rline=$(grep -v '^exit ' <<<"$rline" | paste -sd' ' -)
	sline=$(grep -a -o "e2e-service: .*" "$log" | sed 's/^e2e-service: //')
	srel=$(grep -a -m1 -o 'Linux version [^ ]*' "$post" | sed 's/^Linux version //')
	if [ $armed = dedicated ]; then
		[ "$rrc" = 0 ] && [ -z "$rline" ] &&
			pass "reach check: kdumpinit arm --dry-run --dev $dsel with the dedicated kernel exits 0, no driver lacking (its lists reach the disk's chain$(case $disk in *-iommu) echo " and the IOMMU" ;; esac))" ||
			failed "reach check with the dedicated kernel: exit '${rrc:-none}': ${rline:-no line}"
		if grep -a -q "e2e-mkinitramfs:" "$log" || grep -q "the stock kernel is armed" <<<"$sline"; then
			failed "the service built or armed the stock path: $(paste -sd' ' <<<"$sline")"
		elif grep -qx "exit 0" <<<"$sline"; then
			pass "the service (dist/kdumpinit-arm) armed the dedicated kernel, nothing built"
		else
			failed "the service: $(paste -sd' ' <<<"$sline")"
		fi
		case $srel in
		*-kdumpinit) pass "the dedicated kernel booted after the panic ($srel), no initramfs" ;;
		*) failed "after the panic the kernel was '${srel:-none}', not the dedicated one" ;;
		esac
	else
		# The driver it lacks, in arm's words (arm/arm.c), and the
		# stock kernel with the image the service had built.
		local want="the dedicated crash kernel lacks $lackdrv for $dsel"
		[ "$rrc" = 10 ] && grep -qF "kdumpinit: error: $want" <<<"$rline" &&
			pass "reach check names the missing driver (exit 10): $rline" ||
			failed "reach check: exit '${rrc:-none}', want 10 and '$want': ${rline:-no line}"
		grep -qF "kdumpinit-arm: $want: the stock kernel is armed" <<<"$sline" &&
			pass "the service fell back: $(grep -m1 -F "$want" <<<"$sline" | sed 's/^kdumpinit-arm: //')" ||
			failed "the service did not say it fell back: $(paste -sd' ' <<<"$sline")"
		grep -a -q "e2e-mkinitramfs: .*--device $dsel" "$log" && grep -qx "exit 0" <<<"$sline" &&
			pass "the service built the stock image for $dsel (mkinitramfs --device $dsel) and armed it" ||
			failed "the service's image: $(grep -a -m1 -o 'e2e-mkinitramfs: .*' "$log"), $(tail -n 1 <<<"$sline")"
		[ "$srel" = "$kver" ] && pass "the stock kernel booted after the panic ($srel) with its image" ||
			failed "after the panic the kernel was '${srel:-none}', not the stock $kver"
	fi
}

# --disk: what the first kernel resolved for each bus, what it packed,
# what the crash kernel loaded and where the capture went.
if [ -n "$disk" ]; then
	# kmod's names, in load order, duplicates dropped: from
	# `modprobe --show-depends` ("insmod PATH") or kdumpinit's lines.
	depnames() { awk '$1 == "insmod" { n = $2; sub(".*/", "", n); sub("\\.ko.*", "", n); gsub("-", "_", n); if (!seen[n]++) print n }'; }
	fwcfg=$(modprobe -S "$kver" --show-depends qemu_fw_cfg 2>/dev/null | depnames)
	for t in $guesttypes; do
		# The drivers each bus needs, from the disk upwards (the disk's,
		# the controller's, the PCI function's), and the names that
		# must be there whatever modprobe says.
		case $t in
		nvme | nvme-*) tops='nvme' must='nvme nvme_core' ;;
		megasas) tops='sd_mod megaraid_sas' must='sd_mod scsi_mod megaraid_sas' ;;
		pvscsi) tops='sd_mod vmw_pvscsi' must='sd_mod scsi_mod vmw_pvscsi' ;;
		usb-storage) tops='sd_mod usb_storage xhci_pci' must='sd_mod scsi_mod usb_storage usbcore xhci_hcd xhci_pci' ;;
		usb-uas) tops='sd_mod uas xhci_pci' must='sd_mod scsi_mod uas usb_storage usbcore xhci_hcd xhci_pci' ;;
		sdhci) tops='mmc_block sdhci_pci' must='mmc_block mmc_core sdhci sdhci_pci' ;;
		lsi) tops='sd_mod sym53c8xx' must='sd_mod scsi_mod scsi_transport_spi sym53c8xx' ;;
		ahci) tops='sd_mod ahci' must='sd_mod scsi_mod libata libahci ahci' ;;
		scsi) tops='sd_mod virtio_scsi virtio_pci' must='sd_mod scsi_mod virtio_scsi virtio virtio_pci' ;;
		virtio) tops='virtio_blk virtio_pci' must='virtio_blk virtio virtio_pci' ;;
		esac
		lines=$(grep -a -o "e2e-modules: $t: .*" "$log" | sed "s/^e2e-modules: $t: //")
		rc=$(sed -n 's/^exit //p' <<<"$lines" | tail -n 1)
		got=$(grep -v '^#\|^exit \|^kdumpinit:' <<<"$lines" | awk '{ print $1 }')
		# shellcheck disable=SC2086
		want=$({ modprobe -S "$kver" --show-depends -a $tops; [ -z "$fwcfg" ] || echo "insmod $fwcfg"; } | depnames)
		if [ "$rc" != 0 ]; then
			failed "kdump-$t: kdumpinit modules SERIAL=kdump-$t in the first kernel exited '${rc:-none}': $(grep -m1 'kdumpinit:' <<<"$lines")"
		elif [ -n "$want" ] && [ "$got" = "$want" ]; then
			pass "kdump-$t: kdumpinit modules in the first kernel = modprobe --show-depends -a $tops (+ qemu_fw_cfg): $(echo $got)"
		else
			failed "kdump-$t: kdumpinit modules gave '$(echo $got)', modprobe '$(echo $want)'"
		fi
		miss=
		for m in $must; do grep -qx "$m" <<<"$got" || miss="$miss $m"; done
		[ -z "$miss" ] && pass "kdump-$t: the list holds $must" || failed "kdump-$t: the list lacks$miss"
		[ "$t" = "$disk" ] && diskmods=$got
	done
	packed=$(grep -a -o "e2e-stage1: packed [0-9]* modules for kdump-$disk: .*" "$log" | tail -n 1)
	pnames=$(sed 's/.*: //' <<<"$packed" | tr ' ' '\n' | sed '/^$/d; s/\.ko.*//; s/-/_/g')
	[ -n "$pnames" ] && [ "$pnames" = "${diskmods:-}" ] &&
		pass "the first kernel packed exactly the modules it found for kdump-$disk ($(wc -l <<<"$pnames"))" ||
		failed "packed '$(echo $pnames)', found '$(echo ${diskmods:-})'"
	# The image from the host: no driver of any dump disk in it.
	mkdir -p "$workdir/base" && rm -f "$workdir/base/etc/kdumpinit.modules"
	(cd "$workdir/base" && cpio -id --quiet etc/kdumpinit.modules <"$crash") 2>/dev/null
	base=$(sed 's|.*/||; s|\.ko.*||; s|-|_|g' "$workdir/base/etc/kdumpinit.modules" 2>/dev/null)
	[ -f "$workdir/base/etc/kdumpinit.modules" ] && [ "$base" = "$fwcfg" ] &&
		pass "the crash image built on the host packs no disk driver (only '$(echo $base)')" ||
		failed "the crash image built on the host packs '$(echo $base)'"
	nload=$(grep -a -o "kdumpinit: loaded [0-9]* modules\{0,1\}" "$post" | grep -o '[0-9]*' | tail -n 1)
	# With --crash-kernel, which kernel the service armed: the dedicated
	# one, or for a disk it cannot reach the stock one with the image.
	armed=stock
	if [ -n "$crashkernel" ]; then
		armed=dedicated
		case " $lacktypes " in *" $disk "*) armed=fallback ;; esac
		dedicated_checks
	fi
	if [ $armed = dedicated ]; then
		# Nothing packed: the kernel's own drivers reached the disk.
		[ -z "$nload" ] && ! grep -a -q "kdumpinit: warning: module" "$post" &&
			pass "the dedicated crash kernel loaded no module (no initramfs: its drivers are built in)" ||
			failed "the dedicated crash kernel loaded '$nload' modules: $(grep -a -m1 'kdumpinit: warning: module\|kdumpinit: loaded' "$post")"
	elif grep -a -q "kdumpinit: warning: module" "$post"; then
		failed "the crash kernel could not load a module: $(grep -a -m1 'kdumpinit: warning: module' "$post")"
	elif [ -n "$pnames" ] && [ "${nload:-0}" = "$(wc -l <<<"$pnames")" ]; then
		pass "the crash kernel loaded the $nload modules packed"
	else
		failed "the crash kernel loaded '${nload:-}' modules, $(wc -l <<<"$pnames") packed"
	fi
	case $disk in
	nvme | nvme-*) node='nvme[0-9]+n[0-9]+' ;; virtio) node='vd[a-z]+' ;; sdhci) node='mmcblk[0-9]+' ;;
	*) node='sd[a-z]+' ;;
	esac
	if grep -a "Command line:" "$post" | grep -q "kdumpinit.dev=$dsel "; then
		tgt=$(grep -a -o -E "kdumpinit: target: /dev/$node " "$post" | tail -n 1)
		[ -n "$tgt" ] && pass "$dsel selected ${tgt#kdumpinit: target: }in the crash kernel" ||
			failed "$dsel: no 'target: /dev/$node' line: $(grep -a -m1 'kdumpinit: target' "$post")"
	else
		failed "the crash kernel's command line has no kdumpinit.dev=$dsel"
	fi
	# Behind an IOMMU: the crash kernel's IOMMU driver found translation
	# on and took over the first kernel's tables, and the NVMe function
	# joined an IOMMU group (its DMA goes through the IOMMU: the dump
	# written and complete is checked below).
	case $disk in
	*-intel-iommu) itake='DMAR: Copied translation tables from previous kernel' ;;
	# (7.x: "Reused DEV table from previous kernel.")
	*-amd-iommu) itake='AMD-Vi: \(Copied\|Reused\) DEV table from previous kernel' ;;
	*) itake= ;;
	esac
	if [ -n "$itake" ]; then
		# The dump NVMe's own function ("kdumpinit: target:
		# /dev/nvme1n1", "nvme nvme1: pci function 0000:00:05.0") and
		# its group line.
		ictl=$(grep -a -o 'kdumpinit: target: /dev/nvme[0-9]*n' "$post" | tail -n 1 | sed 's|.*/dev/||; s|n$||')
		ifn=$([ -n "$ictl" ] && grep -a -m1 -o "nvme $ictl: pci function [0-9a-f:.]*" "$post" | sed 's/.* //')
		igroup=$([ -n "$ifn" ] && grep -a -m1 -o "pci $ifn: Adding to iommu group [0-9]*" "$post")
		grep -a -q "$itake" "$post" && [ -n "$igroup" ] &&
			pass "the crash kernel's IOMMU driver took over: '$(grep -a -m1 -o "$itake.*" "$post" | tr -d '\r')', '$igroup'" ||
			failed "no IOMMU takeover in the crash kernel ('$itake' and 'Adding to iommu group'): $(grep -a -E 'DMAR|AMD-Vi' "$post" | head -n 3 | paste -sd' ' -)"
	fi
	for t in $guesttypes; do
		[ "$t" = "$disk" ] && continue
		[ "$(sha256sum <"$workdir/dump-$t.img" | cut -d' ' -f1)" = "${before[$t]}" ] &&
			pass "kdump-$t (claimed, not selected) is byte for byte as it was" ||
			failed "kdump-$t was written to"
	done
fi

# PID-1 bad input (testinit's badcase runs): one clear line, then the
# configured final action, never a hang or a panic. Not in the dedicated
# kernel (rawinit.c has none; the stock kernels' runs cover them).
if [ $mode = full ] && [ -n "$crashkernel" ]; then
	say "bad-input side runs: none in the dedicated crash kernel (no busybox, no PID namespaces)"
elif [ $mode = full ]; then
	badcheck() {	# NAME WANT_EXIT PATTERN WHAT
		local got
		got=$(grep -a -o "e2e-testinit: badcase $1: exit [0-9]*" "$log" | grep -o '[0-9]*$')
		if [ "$got" = "$2" ] && grep -a "^e2e-bad-$1: kdumpinit: " "$log" | grep -Eq "$3"; then
			pass "PID 1, $4: message and final action (exit $got)"
		else
			failed "PID 1, $4: want exit $2 and /$3/, got exit '${got:-none}'; lines:"
			grep -a "^e2e-bad-$1: " "$log" | tail -n 6 | sed 's/^/    /'
		fi
	}
	badcheck never 129 "no usable dump device.*appeared within 2 s" "device never appears"
	badcheck refused 129 "matched /dev/vd[a-z]+, refused: .*(claim it first|holds)" "device refused"
	badcheck small 129 "too small: the dump holds what fit and is marked incomplete" "device too small"
	badcheck poweroff 130 "final action: poweroff" "final=poweroff"
	if [ $nbd = 1 ]; then
		badcheck nbd-unknown 129 "export 'no-such-export': no such export on the server" "NBD export unknown"
		badcheck nbd-noserver 129 "gave up after 12 s waiting for the server \(Connection refused\)" "NBD server not answering"
		grep -a -q "^e2e-bad-nbd-noserver: kdumpinit: still waiting for the server: 1[0-9] s of 12 s" "$log" &&
			pass "PID 1, NBD server not answering: a word at 10 s" ||
			failed "PID 1, NBD server not answering: no 'still waiting for the server' at 10 s"
		badcheck nbd-garbage 129 "not an NBD server" "a hostile NBD server"
		badcheck nbd-small 129 "too small: the dump holds what fit and is marked incomplete" "an NBD export too small"
		# The capture's write rate against the link's (a measurement, said,
		# not a bound: it moves with the host's load).
		dd=$(grep -a -o "^e2e-bad-nbd-dd: kdumpinit: test hook: nbd-dd: 128 MiB written through /dev/nbd[0-9]* in [0-9.]* s, synced: [0-9.]* MiB/s" "$log" | head -n 1)
		cs=$(grep -a -o "^kdumpinit: capture: [0-9]* of [0-9]* pages kept .* -> [0-9.]* MiB (ratio [0-9.]*) in [0-9.]* s" "$post" | head -n 1)
		if [ -n "$dd" ] && [ -n "$cs" ]; then
			ddr=${dd##*: } ddr=${ddr% MiB/s}
			cmb=$(echo "$cs" | sed 's/.* -> \([0-9.]*\) MiB.*/\1/') csec=$(echo "$cs" | sed 's/.* in \([0-9.]*\) s$/\1/')
			pass "nbd: the link's own rate, a dd of 128 MiB through NBD: $ddr MiB/s; the capture wrote $cmb MiB in $csec s: $(awk -v m="$cmb" -v s="$csec" -v d="$ddr" 'BEGIN { printf "%.1f MiB/s, %.2f of the link'"'"'s", m / s, m / s / d }')"
		else
			failed "nbd: the link's rate: no dd line ($(grep -a -m2 'e2e-bad-nbd-dd' "$log" | tr '\n' '|')) or no capture summary"
		fi
		"$kdumpinit" info "$workdir/nbd-small.img" >"$workdir/nbd-small.info" 2>&1
		grep -q "incomplete" "$workdir/nbd-small.info" &&
			pass "the too-small export holds a dump marked incomplete, on the server" ||
			failed "the too-small export: $(grep -m1 '^state' "$workdir/nbd-small.info")"
	fi
	if [ $seal = 1 ]; then
		# Fail closed: a key asked for and not read whole writes nothing
		# (testinit's sealcase runs), and PID 1 says why in one line.
		sealcheck() {	# NAME PATTERN WHAT
			badcheck "$1" 129 "error: sealing asked for, its key not read whole \\(.*$2.*\\): nothing is written" "$3"
			grep -a -q "e2e-testinit: badcase $1: kdump-small unchanged" "$log" &&
				pass "$3: nothing written, kdump-small as the small case left it" ||
				failed "$3: $(grep -a -m1 -o "e2e-testinit: badcase $1: kdump-small.*" "$log" || echo 'no before/after line')"
		}
		sealcheck badkey "command line: kdumpinit.pubkey is not" \
			"an unparsable kdumpinit.pubkey (command line over the firmware's key)"
		sealcheck longconf "/etc/kdumpinit.conf: longer than 65536 bytes" \
			"a config file over 64 KiB with the key last"
		sealcheck shortcred "fw_cfg kdumpinit.pubkey: raw holds 40 of its 86 bytes" \
			"the credential kdumpinit.pubkey cut short"
		sealcheck corruptkey "fw_cfg kdumpinit.pubkey: not text" "a bad byte in the credential kdumpinit.pubkey"
		badcheck rngseed 129 "randomness: the kernel's pool not ready after [0-9]+ s; credited .*: done" \
			"the random pool never ready (test hook): credited by PID 1"
		grep -a "^e2e-bad-rngseed: kdumpinit: " "$log" | grep -q "sealing the dump to key $keyid" &&
			pass "the random pool credited by PID 1: the one-time key made, sealing to $keyid" ||
			failed "the random pool credited by PID 1: no 'sealing the dump to key $keyid' line"
		badcheck misuse 129 "the capture's process died \\(signal 6\\)" \
			"libsodium's misuse handler (abort) in the capture's process (test hook)"
	fi
	if "$kdumpinit" info "$small" >"$workdir/small.info" 2>&1; then
		failed "the too-small dump claims to be complete"
	elif [ $? = 5 ] && grep -q "incomplete (device was full" "$workdir/small.info"; then
		pass "the too-small device holds a dump marked incomplete (device was full)"
	else
		failed "info on the too-small device: $(head -c 300 "$workdir/small.info")"
	fi
fi

# Pages a dump leaves out as hwpoison, as pfns: those the first kernel
# marked, from its own "Memory failure: 0xPFN:" lines (whole kernel lines,
# unlike the shell's, which kernel messages can cut into; even an
# "Ignored" recovery leaves the page marked), and, for a marked compound
# head, its tails ("e2e-hwpoison-unit: 0xPFN N", written to /dev/kmsg by
# stage1 from /proc/kpageflags).
poisoned_pages() {
	local pre
	pre=$(sed -n '1,/Trigger a crash/p' "$log")
	{
		grep -a -o "Memory failure: 0x[0-9a-f]*:" <<<"$pre" | grep -o "0x[0-9a-f]*" |
			while read -r p; do printf '%d\n' "$p"; done
		grep -a -o "e2e-hwpoison-unit: 0x[0-9a-f]* [0-9]*" <<<"$pre" |
			while read -r _ p n; do seq $((p)) $((p + n - 1)); done
	} | sort -nu | in_vmcore
}

# Only the pfns /proc/vmcore has (the raw copy's PT_LOADs, when there is
# one): stage 1 poisons fixed addresses, and in a small guest one can fall
# in the crash kernel's reservation, which is not in the vmcore, so no
# dump can leave it out (seen at --mem 768M: 256 and 384 MiB).
in_vmcore() {
	[ -f "$workdir/raw.vmcore" ] || { cat; return; }
	"$python" -c '
import struct, sys
with open(sys.argv[1], "rb") as f:
    e = f.read(64)
    phoff, = struct.unpack_from("<Q", e, 32)
    phentsize, phnum = struct.unpack_from("<HH", e, 54)
    f.seek(phoff)
    ph = f.read(phentsize * phnum)
loads = []
for i in range(phnum):
    t, _, _, _, pa, fs, _, _ = struct.unpack_from("<IIQQQQQQ", ph, i * phentsize)
    if t == 1:
        loads.append((pa, pa + fs))
for line in sys.stdin:
    pa = int(line) * 4096
    if any(lo <= pa < hi for lo, hi in loads):
        print(line.strip())
' "$workdir/raw.vmcore"
}

# kdumpinit estimate, run in the guest seconds before its crash with three
# seeds (the e2e-estimate lines), against this crash captured from its raw
# vmcore at each level it estimated: each draw's dump bytes within 15 %
# (the issue's goal, and the margin the estimate's device size adds).
check_estimate() {
	local lv real e n=0 seed
	declare -A realb=()
	rm -f "$workdir"/estimate-*.json
	while IFS= read -r line; do
		n=$((n + 1))
		echo "$line" >"$workdir/estimate-$n.json"
	done < <(grep -a -o 'e2e-estimate: {.*}' "$log" | sed 's/^e2e-estimate: //')
	if [ $n -lt 3 ]; then
		failed "estimate: the guest printed $n estimates of 3 ($(grep -a -m1 -o 'e2e-estimate-failed: .*' "$log"))"
		[ $n -gt 0 ] || return
	fi
	for f in "$workdir"/estimate-*.json; do
		seed=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["sample"]["seed"])' "$f")
		for lv in $("$python" -c 'import json,sys; print(" ".join(str(l["level"]) for l in json.load(open(sys.argv[1]))["levels"]))' "$f"); do
			if [ -z "${realb[$lv]:-}" ]; then
				rm -f "$workdir/est$lv.img"
				"$kdumpinit" capture --vmcore "$workdir/raw.vmcore" --output "$workdir/est$lv.img" --level "$lv" \
					>"$workdir/est$lv.log" 2>&1
				realb[$lv]=$("$kdumpinit" info --json "$workdir/est$lv.img" 2>/dev/null |
					"$python" -c 'import json,sys; print(json.load(sys.stdin)["dumps"][0]["dump_bytes"])' 2>/dev/null)
				rm -f "$workdir/est$lv.img"
			fi
			real=${realb[$lv]}
			e=$("$python" -c 'import json,sys; print([l for l in json.load(open(sys.argv[1]))["levels"] if l["level"] == int(sys.argv[2])][0]["dump_bytes"])' \
				"$f" "$lv")
			if [ -z "$real" ]; then
				failed "estimate level $lv: the capture of the raw vmcore failed ($(tail -n 1 "$workdir/est$lv.log"))"
			elif "$python" -c 'import sys; a, b = map(int, sys.argv[1:]); sys.exit(abs(a - b) > 0.15 * b)' "$e" "$real"; then
				pass "estimate level $lv, seed $seed: $e bytes estimated, $real captured ($(awk -v a="$e" -v b="$real" 'BEGIN { printf "%+.1f", (a - b) * 100 / b }') %)"
			else
				failed "estimate level $lv, seed $seed: $e bytes estimated, $real captured: more than 15 % apart"
			fi
		done
	done
}

# --- host checks --------------------------------------------------------------------
# The raw disk holds /proc/vmcore followed by zeros: cut it where the ELF ends.
if [ $mode = capture ]; then
	:
elif end=$("$python" "$top/tests/tools/elfend.py" "$raw" 2>&1); then
	want=$(grep -m1 -o 'copying /proc/vmcore ([0-9]* bytes)' "$log" | grep -o '[0-9]*')
	truncate -s "$end" "$raw" && mv -f "$raw" "$workdir/raw.vmcore"
	if [ -n "$want" ] && [ "$want" != "$end" ]; then
		failed "raw copy: ELF ends at $end, /proc/vmcore was $want bytes"
	else
		pass "raw vmcore: $workdir/raw.vmcore ($end bytes)"
	fi
	if [ -n "$rawout" ]; then
		cp --sparse=always "$workdir/raw.vmcore" "$rawout" && step "raw vmcore stored as $rawout" ||
			failed "cannot store $rawout"
		check_estimate
	fi
else
	failed "raw disk has no vmcore: $end"
fi

d_info=- d_save=- d_cmp=-
if [ $rawonly = 0 ]; then
	t=$(now)
	# The dump this run captured is the newest on the disk: after an
	# unsaved one (--after, --keep-dump) it is not the first.
	newest=$("$kdumpinit" info "$dump" 2>/dev/null | grep -c '^state ')
	pick=()
	[ "${newest:-0}" -gt 1 ] && pick=(--dump "$newest")
	"$kdumpinit" info "$dump" "${pick[@]}" "${keyarg[@]}" >"$workdir/info.out" 2>&1
	rc=$? d_info=$(since "$t")
	if [ $demo = 1 ]; then
		echo "demo: kdumpinit info $dump"
		sed 's/^/  /' "$workdir/info.out"
	fi
	if [ $firmware = 1 ]; then
		grep -q "^settings *dev=SERIAL=kdump-dump (smbios), level=$level (fw_cfg)" "$workdir/info.out" &&
			pass "info shows where the settings came from (the dump's SETTINGS chunk)" ||
			failed "info has no 'settings dev=SERIAL=kdump-dump (smbios), level=$level (fw_cfg)' line"
	fi
	if [ -n "$cutat" ]; then
		# Cut: incomplete, or empty when no write was made.
		if [ $rc = 5 ] && grep -q "^state *incomplete" "$workdir/info.out"; then
			pass "kdumpinit info after the power cut: incomplete (exit 5): $(grep -m1 '^state' "$workdir/info.out" | cut -c1-120)"
		elif [ $rc = 4 ] && grep -q "^state *empty" "$workdir/info.out"; then
			pass "kdumpinit info after the power cut: empty (exit 4): nothing was written"
		else
			failed "kdumpinit info after the power cut exited $rc:"; sed 's/^/    /' "$workdir/info.out"
		fi
	elif [ -n "$blkdebug$dumpsize" ]; then
		# Write errors, or a disk too small: incomplete, and info says why.
		[ $rc = 5 ] && grep -q "^state *incomplete" "$workdir/info.out" &&
			pass "kdumpinit info: incomplete (exit 5): $(grep -m1 '^state' "$workdir/info.out")" ||
			{ failed "kdumpinit info on the dump with write errors exited $rc (want 5, incomplete):"; sed 's/^/    /' "$workdir/info.out"; }
	elif [ $stalldisk = 1 ]; then
		# Cut off by the reset: readable up to its last chunk.
		[ $rc = 5 ] && grep -q "incomplete" "$workdir/info.out" &&
			pass "kdumpinit info: incomplete (exit 5): $(grep -m1 incomplete "$workdir/info.out")" ||
			{ failed "kdumpinit info on the cut-off dump exited $rc (want 5, incomplete):"; sed 's/^/    /' "$workdir/info.out"; }
	else
		[ $rc = 0 ] && pass "kdumpinit info (exit 0)" ||
			{ failed "kdumpinit info exited $rc:"; sed 's/^/    /' "$workdir/info.out"; }
	fi
	# The crash kernel's clock: the capture's time (END) within a day of
	# this host's, not 1970 (a crash kernel without its RTC driver).
	if [ $rc = 0 ]; then
		capt=$(sed -n 's/^captured *//p' "$workdir/info.out")
		cs=$(date -d "$capt" +%s 2>/dev/null || echo 0)
		[ $((cs > $(date +%s) - 86400 && cs < $(date +%s) + 86400)) = 1 ] &&
			pass "the crash kernel's clock: captured $capt" ||
			failed "the crash kernel's clock: captured '$capt', not within a day of now (no RTC?)"
	fi
	npois=$(poisoned_pages | wc -l)
	# A cut-off dump has no END record, which holds the counts.
	if [ "$npois" -gt 0 ] && [ $stalldisk = 0 ] && [ -z "$blkdebug$cutat$dumpsize" ]; then
		got=$(awk '$1 == "hwpoison" || $2 == "hwpoison" {print $(NF-1)}' "$workdir/info.out")
		# At level 1 nothing else claims a poisoned page first; at higher
		# levels one that is also free, cache or user memory is counted in
		# that class (makedumpfile's order), so only the saved file can
		# show that every one was left out (checked after save).
		if [ "$level" = 1 ]; then
			[ "${got:-0}" = "$npois" ] && pass "hwpoison: info counts the $npois poisoned pages" ||
				failed "hwpoison: $npois pages poisoned, info says ${got:-0} excluded"
		else
			# Not a check of its own: the saved file's is. Fewer may count
			# as hwpoison (free, cache or user first), and more when a
			# poisoned page sat in a compound page the first kernel made
			# after stage 1 measured it (the whole unit is left out).
			say "note: info counts ${got:-0} pages as hwpoison; $npois were poisoned"
		fi
	fi

	t=$(now)
	"$kdumpinit" save "$dump" "${pick[@]}" "${keyarg[@]}" --output "$workdir/saved.elf" --format elf >"$workdir/save.out" 2>&1
	rc=$? d_save=$(since "$t")
	if [ -n "$cutat" ] && grep -q "^state *empty" "$workdir/info.out"; then
		[ $rc = 4 ] && [ ! -e "$workdir/saved.elf" ] &&
			pass "kdumpinit save of the empty device: nothing saved (exit 4)" ||
			{ failed "kdumpinit save of the empty device exited $rc:"; sed 's/^/    /' "$workdir/save.out"; }
	elif [ $stalldisk = 1 ] || [ -n "$blkdebug$dumpsize" ] || [ -n "$cutat" ]; then
		if [ $rc = 5 ] && [ -s "$workdir/saved.elf" ] && "$python" "$top/tests/tools/elfend.py" "$workdir/saved.elf" >/dev/null 2>&1; then
			pass "kdumpinit save of the cut-off dump: a partial ELF vmcore (exit 5, $(stat -c %s "$workdir/saved.elf") bytes)"
		else
			failed "kdumpinit save of the cut-off dump exited $rc (want 5 and an ELF file):"
			sed 's/^/    /' "$workdir/save.out"
		fi
	else
		[ $rc = 0 ] && pass "kdumpinit save --format elf (exit 0)" ||
			{ failed "kdumpinit save exited $rc:"; sed 's/^/    /' "$workdir/save.out"; }
	fi
	# --disk: the dump complete, and its save opens in drgn with no debug
	# info (VMCOREINFO alone): the release read from init_uts_ns through
	# the crashed kernel's page tables (new_utsname.release at 130).
	if [ -n "$disk" ]; then
		grep -q "^state *complete" "$workdir/info.out" &&
			pass "the dump on kdump-$disk is complete ($(grep -m1 '^state' "$workdir/info.out" | cut -c1-80))" ||
			failed "the dump on kdump-$disk is not complete: $(grep -m1 '^state' "$workdir/info.out")"
		got=$("$python" - "$workdir/saved.elf" 2>&1 <<'PY'
import re, sys, drgn
path = sys.argv[1]
with open(path, "rb") as f:
    m = re.search(rb"SYMBOL\(init_uts_ns\)=([0-9a-f]+)", f.read(1 << 20))
p = drgn.Program()
p.set_core_dump(path)
print(p.read(int(m.group(1), 16) + 130, 65).split(b"\0")[0].decode())
PY
)
		[ "$got" = "$kver" ] && pass "drgn opens the saved ELF: init_uts_ns says $got" ||
			failed "drgn on the saved ELF: '$(tail -n 1 <<<"$got")', want $kver"
	fi
	if [ "$npois" -gt 0 ] && [ -f "$workdir/saved.elf" ]; then
		poisoned=$(poisoned_pages | while read -r pfn; do printf '0x%x\n' $((pfn * 4096)); done | paste -sd, -)
		"$python" "$top/tests/tools/absent.py" "$workdir/saved.elf" "$poisoned" >"$workdir/absent.out" 2>&1 &&
			pass "hwpoison: the $npois poisoned pages are not in the saved dump" ||
			{ failed "hwpoison: poisoned pages in the saved dump:"; sed 's/^/    /' "$workdir/absent.out"; }
	fi

	if [ $mode = capture ]; then
		:
	elif [ -n "$blkdebug$cutat$dumpsize" ] && [ -f "$workdir/raw.vmcore" ] && [ -f "$workdir/saved.elf" ]; then
		# Some pages were lost to the errors: every page saved must be
		# the raw vmcore's, and most must be there.
		"$python" "$top/tests/tools/pagecheck.py" "$workdir/raw.vmcore" "$workdir/saved.elf" --require some \
			>"$workdir/pagecheck.out" 2>&1 &&
			pass "pagecheck: every page saved is the raw vmcore's ($(tail -n 1 "$workdir/pagecheck.out"))" ||
			{ failed "pagecheck on the dump with write errors:"; tail -n 20 "$workdir/pagecheck.out" | sed 's/^/    /'; }
	elif [ "$level" != 1 ] && [ -f "$workdir/raw.vmcore" ] && [ -f "$workdir/saved.elf" ]; then
		# A filtered dump: every page it holds must be the raw copy's,
		# and it must hold what a capture of that copy on the host, with
		# all the memory it wants, holds: byte for byte the same save
		# (the crash kernel's small reservation cost nothing).
		say "SKIP: vmcmp (it checks every non-zero page, which needs --level 1)"
		"$python" "$top/tests/tools/pagecheck.py" "$workdir/raw.vmcore" "$workdir/saved.elf" --require some \
			>"$workdir/pagecheck.out" 2>&1 &&
			pass "pagecheck: every page saved is the raw vmcore's ($(tail -n 1 "$workdir/pagecheck.out"))" ||
			{ failed "pagecheck:"; tail -n 20 "$workdir/pagecheck.out" | sed 's/^/    /'; }
		rm -f "$workdir/host.img" "$workdir/host.elf"
		# The crash kernel's settings that change the pages: the level,
		# and kdumpinit.memmap= (stage 1 hands e2e.memmap= on).
		hostmm=auto
		for w in $appendfirst; do case $w in e2e.memmap=*) hostmm=${w#*=} ;; esac; done
		# Bounded: a capture that never ends is a failure here, not a
		# run that never ends.
		if timeout 300 "$kdumpinit" capture --vmcore "$workdir/raw.vmcore" --output "$workdir/host.img" --level "$level" --memmap "$hostmm" \
			>"$workdir/host.out" 2>&1 && "$kdumpinit" save "$workdir/host.img" --format elf -o "$workdir/host.elf" \
			>>"$workdir/host.out" 2>&1; then
			cmp -s "$workdir/host.elf" "$workdir/saved.elf" &&
				pass "the crash kernel's save is byte for byte a host capture's of the raw copy (level $level, $(stat -c %s "$workdir/saved.elf") bytes)" ||
				failed "the crash kernel's save differs from a host capture's of the raw copy ($(cmp "$workdir/host.elf" "$workdir/saved.elf" 2>&1 | head -n 1))"
		else
			failed "host capture of the raw copy: $(tail -n 3 "$workdir/host.out")"
		fi
		rm -f "$workdir/host.img" "$workdir/host.elf"
	elif [ "$level" != 1 ]; then
		say "SKIP: vmcmp (it checks every non-zero page, which needs --level 1)"
	elif [ -f "$workdir/raw.vmcore" ] && [ -f "$workdir/saved.elf" ]; then
		t=$(now)
		# Poisoned pages are always left out (hwpoison), so vmcmp must
		# find exactly those missing.
		poisoned=$(poisoned_pages | while read -r pfn; do printf '0x%x\n' $((pfn * 4096)); done | paste -sd, -)
		"$python" "$vmcmp" "$workdir/raw.vmcore" "$workdir/saved.elf" ${poisoned:+--excluded "$poisoned"} \
			>"$workdir/vmcmp.out" 2>&1
		rc=$? d_cmp=$(since "$t")
		[ $rc = 0 ] && pass "vmcmp: saved dump matches the raw vmcore ($(tail -n 1 "$workdir/vmcmp.out"))" ||
			{ failed "vmcmp exited $rc:"; tail -n 20 "$workdir/vmcmp.out" | sed 's/^/    /'; }
	else
		failed "vmcmp not run: raw.vmcore or saved.elf missing"
	fi
fi

# --- dmesg of what save wrote ---------------------------------------------------------
# The log from the saved ELF (the pages the dump left out are zero fill,
# the ring's unused ones among them) and from a kdump-compressed save,
# both as the device gives it; makedumpfile --dump-dmesg on the ELF (its
# mmap path reads at wrong offsets across our split PT_LOADs: --non-mmap)
# prints the same lines.
if [ $rawonly = 0 ] && [ $demo = 0 ] && [ -s "$workdir/saved.elf" ] && [ $stalldisk = 0 ] &&
	[ -z "$blkdebug$cutat$dumpsize" ]; then
	"$kdumpinit" dmesg "$dump" "${pick[@]}" "${keyarg[@]}" >"$workdir/dmesg-dev.out" 2>"$workdir/dmesg-dev.err"
	rc=$?
	lines=$(wc -l <"$workdir/dmesg-dev.out")
	"$kdumpinit" save "$dump" "${pick[@]}" "${keyarg[@]}" --output "$workdir/saved-log.kdump" \
		>"$workdir/save-log.out" 2>&1
	for f in saved.elf saved-log.kdump; do
		"$kdumpinit" dmesg "$workdir/$f" >"$workdir/dmesg-$f.out" 2>"$workdir/dmesg-$f.err"
		rf=$?
		[ $rc = 0 ] && [ $rf = 0 ] && [ "$lines" -gt 0 ] && cmp -s "$workdir/dmesg-dev.out" "$workdir/dmesg-$f.out" &&
			pass "dmesg $f: the device's log, $lines lines" ||
			failed "dmesg $f (exit $rf) is not the device's log (exit $rc, $lines lines): $(head -c 200 "$workdir/dmesg-$f.err")"
	done
	rm -f "$workdir/saved-log.kdump"
	if command -v makedumpfile >/dev/null; then
		rm -f "$workdir/dmesg-mdf.out"
		makedumpfile --non-mmap --dump-dmesg "$workdir/saved.elf" "$workdir/dmesg-mdf.out" >"$workdir/mdf.err" 2>&1
		mlines=$(wc -l <"$workdir/dmesg-mdf.out" 2>/dev/null || echo 0)
		if [ ! -s "$workdir/dmesg-mdf.out" ]; then
			say "note: makedumpfile --dump-dmesg did not read the saved ELF: $(grep -m1 -iE 'not supported|fail|error' "$workdir/mdf.err")"
		else
			[ "$mlines" = "$lines" ] && pass "makedumpfile --dump-dmesg on the saved ELF: $mlines lines, as kdumpinit dmesg" ||
				failed "makedumpfile --dump-dmesg on the saved ELF: $mlines lines, kdumpinit dmesg $lines"
		fi
	else
		say "note: makedumpfile --dump-dmesg not run (no makedumpfile)"
	fi
fi

# --- a sealed dump (--seal) -----------------------------------------------------------
# Read through the key above (info, save); here what sealing itself must
# hold. Where the raw copy is there: nothing of memory in the clear on the
# device, the saves those of a key-less capture, sealed power cuts.
if [ $seal = 1 ] && [ $rawonly = 0 ]; then
	sk=$workdir/seal.secret
	grep -a -q "kdumpinit: sealing the dump to key $keyid" "$post" &&
		pass "kdumpinit sealed the dump to the firmware's key: $(grep -a -m1 -o 'kdumpinit: sealing the dump to key [0-9a-f]*' "$post")" ||
		failed "no 'kdumpinit: sealing the dump to key $keyid' line: $(grep -a -m1 -o 'kdumpinit: seal.*' "$post")"
	grep -a "kdumpinit: settings:" "$post" | grep -q "pubkey=${pubhex:0:8}\.\.\. (fw_cfg)" &&
		pass "settings: pubkey=${pubhex:0:8}... from fw_cfg (the credential kdumpinit.pubkey)" ||
		failed "no 'pubkey=${pubhex:0:8}... (fw_cfg)' in the settings line: $(grep -a -m1 'kdumpinit: settings:' "$post")"
	# info without the key: the clear parts (state, END's counts), sealed.
	"$kdumpinit" info "$dump" "${pick[@]}" >"$workdir/info-nokey.out" 2>&1
	rc=$?
	st=$(grep -m1 '^state' "$workdir/info-nokey.out" | tr -s ' ' | cut -c1-110)
	if ! grep -q "^sealed *to key $keyid (X25519, AEGIS-256): no key given" "$workdir/info-nokey.out"; then
		failed "info without the key: no 'sealed to key $keyid ... no key given' line:"; sed 's/^/    /' "$workdir/info-nokey.out"
	elif [ -n "$cutat$blkdebug" ]; then
		[ $rc = 5 ] && grep -q "^state *incomplete" "$workdir/info-nokey.out" &&
			pass "info without the key after the power cut or write errors: sealed to $keyid, $st (exit 5)" ||
			{ failed "info without the key after the power cut or write errors exited $rc:"; sed 's/^/    /' "$workdir/info-nokey.out"; }
	else
		kept=$(awk '$1 == "pages" && $2 == "kept" { print $3 }' "$workdir/info-nokey.out")
		[ $rc = 0 ] && grep -q "^state *complete" "$workdir/info-nokey.out" && [ "${kept:-0}" -gt 0 ] &&
			pass "info without the key: sealed to $keyid, $st, $kept pages kept (exit 0)" ||
			{ failed "info without the key exited $rc (want 0, sealed, complete):"; sed 's/^/    /' "$workdir/info-nokey.out"; }
	fi
	# The whole stream authenticated (docs/FORMAT.md): complete, or
	# after a power cut or write errors, how far.
	authed="opened; complete, authenticated"
	[ -z "$cutat$blkdebug" ] || authed="opened; incomplete: authenticated up to chunk [0-9]+"
	grep -qE "^sealed .*$authed" "$workdir/info.out" &&
		pass "info --key: $(grep -m1 -oE "$authed.*" "$workdir/info.out")" ||
		failed "info --key: no '$authed': $(grep -m1 '^sealed' "$workdir/info.out")"
	# Without the key, or with another, nothing of memory comes out.
	rm -f "$workdir/nokey.elf" "$workdir/otherkey.elf" "$workdir/other.secret" "$workdir/other.public"
	"$kdumpinit" save "$dump" "${pick[@]}" --output "$workdir/nokey.elf" --format elf >"$workdir/save-nokey.out" 2>&1
	rc=$?
	[ $rc != 0 ] && [ $rc != 5 ] && [ ! -e "$workdir/nokey.elf" ] && grep -q "sealed to key $keyid" "$workdir/save-nokey.out" &&
		pass "save without the key: refused (exit $rc), nothing written" ||
		{ failed "save without the key exited $rc$([ -e "$workdir/nokey.elf" ] && echo ', and wrote a file'):"; sed 's/^/    /' "$workdir/save-nokey.out"; }
	"$kdumpinit" keygen "$workdir/other.secret" "$workdir/other.public" >/dev/null 2>&1 &&
		"$kdumpinit" save "$dump" "${pick[@]}" --key "$workdir/other.secret" --output "$workdir/otherkey.elf" --format elf \
			>"$workdir/save-otherkey.out" 2>&1
	rc=$?
	[ $rc != 0 ] && [ $rc != 5 ] && [ ! -e "$workdir/otherkey.elf" ] && grep -q "not its key" "$workdir/save-otherkey.out" &&
		pass "save with another secret key: refused (exit $rc, 'not its key'), nothing written" ||
		{ failed "save with another key exited $rc$([ -e "$workdir/otherkey.elf" ] && echo ', and wrote a file'):"; sed 's/^/    /' "$workdir/save-otherkey.out"; }
	rm -f "$workdir/nokey.elf" "$workdir/otherkey.elf" "$workdir/other.secret" "$workdir/other.public"
	# The kernel log: with the key the panic, without it nothing.
	panicline="Kernel panic - not syncing: sysrq triggered crash"
	"$kdumpinit" dmesg "$dump" "${pick[@]}" --key "$sk" >"$workdir/dmesg.out" 2>"$workdir/dmesg.err"
	rc=$?
	[ $rc = 0 ] && grep -q "$panicline" "$workdir/dmesg.out" &&
		pass "dmesg --key: $(wc -l <"$workdir/dmesg.out") lines, with '$panicline'" ||
		failed "dmesg --key exited $rc, $(grep -c "$panicline" "$workdir/dmesg.out") panic lines: $(tail -n 2 "$workdir/dmesg.err")"
	"$kdumpinit" dmesg "$dump" "${pick[@]}" >"$workdir/dmesg-nokey.out" 2>&1
	rc=$?
	[ $rc != 0 ] && ! grep -q "sysrq" "$workdir/dmesg-nokey.out" &&
		pass "dmesg without the key: refused (exit $rc), no log line" ||
		{ failed "dmesg without the key exited $rc:"; head -n 5 "$workdir/dmesg-nokey.out" | sed 's/^/    /'; }
fi

if [ $seal = 1 ] && [ $mode = full ] && [ -z "$blkdebug$dumpsize" ] && [ -f "$workdir/raw.vmcore" ]; then
	rawv=$workdir/raw.vmcore plain=$workdir/plain.img
	# The same capture without a key, on the host, from the raw copy: the
	# control of the scan below and what the sealed saves must equal.
	hostmm=auto
	for w in $appendfirst; do case $w in e2e.memmap=*) hostmm=${w#*=} ;; esac; done
	rm -f "$plain"
	"$kdumpinit" capture --vmcore "$rawv" --output "$plain" --level "$level" --memmap "$hostmm" >"$workdir/plain.out" 2>&1 ||
		failed "host capture of the raw copy without a key: $(tail -n 2 "$workdir/plain.out")"
	# 1. Nothing in the clear: every non-zero page of the raw copy at every
	# byte offset of the device (and of the bad-input runs' small device,
	# sealed too), and the panic and sysrq lines.
	scan=$cache/plainscan
	if [ ! -x "$scan" ] || [ "$here/plainscan.c" -nt "$scan" ]; then
		cc -O2 -Wall -o "$scan" "$here/plainscan.c" || die "building plainscan failed"
	fi
	texts=(--text "Kernel panic - not syncing" --text "sysrq triggered crash" --text "sysrq: Trigger a crash")
	imgs=("$dump" "$plain")
	[ -n "$crashkernel" ] || imgs+=("$small")
	t=$(now)
	"$scan" "$rawv" "${imgs[@]}" "${texts[@]}" >"$workdir/scan.out" 2>&1 || failed "plainscan: $(tail -n 1 "$workdir/scan.out")"
	d_scan=$(since "$t")
	npg=$(grep -m1 -o ': pages [0-9]*' "$workdir/scan.out" | grep -o '[0-9]*')
	# nfound IMAGE: the pages found there; ntexts IMAGE: the log lines
	nfound() { awk -v f="$1: pages " 'index($0, f) == 1 { print $(NF-4) }' "$workdir/scan.out"; }
	ntexts() { awk -v f="$1: text " 'index($0, f) == 1 { n += substr($0, length(f) + 1) + 0; t = 1 } END { if (t) print n }' "$workdir/scan.out"; }
	[ "$(nfound "$dump")" = 0 ] && [ "${npg:-0}" -gt 0 ] &&
		pass "no page in the clear: none of the raw copy's $npg non-zero pages at any byte offset of the sealed device (scan ${d_scan}s)" ||
		{ failed "plaintext pages on the sealed device ($(nfound "$dump") found):"; grep -F "$dump:" "$workdir/scan.out" | head -n 6 | sed 's/^/    /'; }
	[ "$(ntexts "$dump")" = 0 ] &&
		pass "no log line in the clear: '$panicline', 'sysrq triggered crash', 'sysrq: Trigger a crash' are nowhere on the device" ||
		{ failed "log text on the sealed device:"; grep -F "$dump: text" "$workdir/scan.out" | sed 's/^/    /'; }
	if [ -z "$crashkernel" ]; then
		[ "$(nfound "$small")" = 0 ] && [ "$(ntexts "$small")" = 0 ] && grep -q "^sealed *to key $keyid" "$workdir/small.info" &&
			pass "the bad-input runs' small device: sealed to $keyid too, no page or log line in the clear" ||
			failed "the small device: $(nfound "$small") pages, $(ntexts "$small") log lines in the clear; $(grep -m1 '^sealed' "$workdir/small.info" || echo 'not sealed')"
	fi
	# The control: the same scan finds them on the capture without a key.
	cpg=$(nfound "$plain") ct=$(ntexts "$plain")
	[ "${cpg:-0}" -gt 0 ] 2>/dev/null && [ "${ct:-0}" -gt 0 ] 2>/dev/null &&
		pass "control: the same scan finds $cpg pages and $ct log lines in the clear on a host capture without a key" ||
		{ failed "control: the scan finds '$cpg' pages, '$ct' log lines on the key-less capture (it must find some):"; grep -F "$plain:" "$workdir/scan.out" | head -n 6 | sed 's/^/    /'; }
	"$python" "$top/tests/tools/chunks.py" "$dump" >"$workdir/chunks-sealed.txt" 2>&1
	"$python" "$top/tests/tools/chunks.py" "$plain" >"$workdir/chunks-plain.txt" 2>&1
	np=$(awk '$2 == 5' "$workdir/chunks-sealed.txt" | wc -l)
	[ "$np" -gt 8 ] && { [ -n "$cutat" ] || [ "$np" = "$(awk '$2 == 5' "$workdir/chunks-plain.txt" | wc -l)" ]; } ||
		failed "sealed cuts: $np PAGES chunks sealed, $(awk '$2 == 5' "$workdir/chunks-plain.txt" | wc -l) in the key-less capture"
	cutcopy() {	# IMAGE OFFSET OUT: IMAGE as a cut at OFFSET leaves it
		cp --sparse=always "$1" "$3" && truncate -s "$2" "$3" && truncate -s "$(stat -c %s "$1")" "$3"
	}
fi
# The power cut (--cut-at): up to the cut every chunk opens: the save is
# the key-less capture's with as many PAGES chunks (those before the first
# chunk info found torn or missing).
if [ $seal = 1 ] && [ $mode = full ] && [ -n "$cutat" ] && [ -f "$workdir/raw.vmcore" ] && [ -f "$workdir/saved.elf" ]; then
	stop=$(sed -n 's/^state .*chunk [0-9]* at offset \([0-9]*\).*/\1/p' "$workdir/info.out")
	k=$(awk -v s="${stop:-0}" '$2 == 5 && $1 < s' "$workdir/chunks-sealed.txt" | wc -l)
	po=$(awk -v n=$((k + 1)) '$2 == 5 && ++i == n { print $1; exit }' "$workdir/chunks-plain.txt")
	rm -f "$workdir/cut-plain.elf"
	prc=none
	if [ -n "$stop" ] && [ "$k" -gt 0 ] && [ -n "$po" ] && cutcopy "$plain" "$po" "$workdir/cut-plain.img"; then
		"$kdumpinit" save "$workdir/cut-plain.img" --output "$workdir/cut-plain.elf" --format elf >"$workdir/cut-plain.out" 2>&1
		prc=$?
	fi
	if [ "$prc" = 5 ] && cmp -s "$workdir/saved.elf" "$workdir/cut-plain.elf"; then
		pass "everything up to the cut opens: the sealed save (its $k PAGES chunks before the cut at byte $stop) is byte for byte the key-less capture's cut there"
	else
		failed "the sealed cut save (chunks up to byte ${stop:-?}: $k PAGES chunks) is not the key-less capture's cut at PAGES chunk $((k + 1)) (byte ${po:-?}, its save exit $prc): $(cmp "$workdir/saved.elf" "$workdir/cut-plain.elf" 2>&1 | head -n 1)"
	fi
	rm -f "$workdir/cut-plain.img" "$workdir/cut-plain.elf" "$plain"
fi
if [ $seal = 1 ] && [ $mode = full ] && [ -z "$cutat$blkdebug$dumpsize" ] && [ -f "$workdir/raw.vmcore" ]; then
	# 2. The saves: byte for byte the key-less capture's, kdump and ELF
	# (the kdump pages not compressed: zlib would cost 10 s and compare
	# no other bytes of the dump).
	rm -f "$workdir/saved.kdump" "$workdir/plain.kdump" "$workdir/plain.elf"
	t=$(now)
	"$kdumpinit" save "$dump" "${pick[@]}" --key "$sk" --output "$workdir/saved.kdump" --compress none >"$workdir/save-kdump.out" 2>&1
	rc=$?
	d_skd=$(since "$t")
	"$kdumpinit" save "$plain" --output "$workdir/plain.kdump" --compress none >>"$workdir/plain.out" 2>&1 &&
		"$kdumpinit" save "$plain" --output "$workdir/plain.elf" --format elf >>"$workdir/plain.out" 2>&1 ||
		failed "save of the key-less host capture: $(tail -n 2 "$workdir/plain.out")"
	if [ $rc = 0 ] && [ -s "$workdir/saved.kdump" ] && cmp -s "$workdir/saved.kdump" "$workdir/plain.kdump"; then
		pass "save --key --format kdump (${d_skd}s) is byte for byte the key-less host capture's save ($(stat -c %s "$workdir/saved.kdump") bytes)"
	else
		failed "save --key --format kdump (exit $rc) differs from the key-less capture's: $(cmp "$workdir/saved.kdump" "$workdir/plain.kdump" 2>&1 | head -n 1)"
	fi
	cmp -s "$workdir/saved.elf" "$workdir/plain.elf" &&
		pass "save --key --format elf is byte for byte the key-less capture's ($(stat -c %s "$workdir/saved.elf") bytes)" ||
		failed "save --key --format elf differs from the key-less capture's: $(cmp "$workdir/saved.elf" "$workdir/plain.elf" 2>&1 | head -n 1)"
	# The debuggers on the sealed dump's kdump save (the -dbg vmlinux).
	dbg=$top/build/crash
	mkdir -p "$dbg"
	. "$top/tests/lib/vmlinux.sh"
	if ! vml=$(vmlinux_of "$kver" 2>"$workdir/vmlinux.err"); then
		failed "no -dbg vmlinux for $kver: $(tail -n 1 "$workdir/vmlinux.err")"
	else
		got=$("$python" "$top/tests/crash/drgnprobe.py" "$workdir/saved.kdump" "$vml" 2>&1)
		want=$("$python" "$top/tests/crash/drgnprobe.py" "$rawv" "$vml" 2>&1)
		rt=$(sed -n 's/^tasks //p' <<<"$want") gt=$(sed -n 's/^tasks //p' <<<"$got")
		grep -q "^release $kver" <<<"$got" && grep -q '^panic 1' <<<"$got" && [ -n "$rt" ] && [ "$gt" = "$rt" ] &&
			pass "drgn opens the sealed dump's kdump save: release $kver, the panic in the log, $gt tasks as on the raw copy" ||
			failed "drgn on the sealed dump's save: $(paste -sd' ' <<<"$got") (raw: $(paste -sd' ' <<<"$want"))"
		# crash as well with CRASH=1 (check-full: 6 s more).
		if [ -n "${CRASH:-}" ]; then
			printf 'log\nbt\nquit\n' | timeout 300 crash -s "$vml" "$workdir/saved.kdump" >"$workdir/saved.kdump.crash" 2>&1
			grep -q 'sysrq triggered crash' "$workdir/saved.kdump.crash" && grep -q 'sysrq_handle_crash' "$workdir/saved.kdump.crash" &&
				pass "crash opens the sealed dump's kdump save: the panic in log, sysrq_handle_crash in bt" ||
				{ failed "crash on the sealed dump's kdump save:"; grep -m5 -iE 'error|invalid|crash:' "$workdir/saved.kdump.crash" | sed 's/^/    /'; }
		fi
	fi
	# 4. Power cuts in the sealed capture, made on copies of the device:
	# cut inside a PAGES chunk, one byte short of one's end (the tag of a
	# torn chunk fails: it is dropped, never half opened), inside END. What
	# is left must open up to the cut, and save what the key-less dump
	# saves without that chunk (cut where its header starts: a clear
	# chunk's last byte may be a zero, which a cut leaves as it was).
	# where FILE TYPE NTH HOW: the cut's byte offset in FILE's NTH chunk
	# of TYPE: mid (its payload's middle), short1 (its last byte), end
	# (inside its header), start (where it starts)
	where() {
		awk -v t="$2" -v n="$3" -v h="$4" '$2 == t && ++i == n {
			if (h == "mid") print $1 + 48 + int($3 / 2); else if (h == "short1") print $1 + 48 + $3 - 1
			else if (h == "end") print $1 + 20; else print $1; exit }' "$1"
	}
	# One byte short: of the first chunk from a quarter on whose last
	# byte is not a zero (a cut that leaves a zero there cuts nothing).
	nth=$((np / 4))
	while [ "$nth" -lt "$np" ] &&
		[ "$(od -An -tu1 -j "$(where "$workdir/chunks-sealed.txt" 5 "$nth" short1)" -N 1 "$dump" | tr -d ' ')" = 0 ]; do
		nth=$((nth + 1))
	done
	complete=$(awk '$1 == "pages" && $2 == "kept" { print $3 }' "$workdir/info.out")
	for c in "mid 5 $((np / 2)) mid" "short1 5 $nth short1" "end 7 1 end"; do
		read -r name type n how <<<"$c"
		so=$(where "$workdir/chunks-sealed.txt" "$type" "$n" "$how")
		po=$(where "$workdir/chunks-plain.txt" "$type" "$n" start)
		[ -n "$so" ] && [ -n "$po" ] || { failed "sealed cut $name: no chunk $n of type $type"; continue; }
		cutcopy "$dump" "$so" "$workdir/cut.img" && cutcopy "$plain" "$po" "$workdir/cut-plain.img" ||
			{ failed "sealed cut $name: cannot copy the images"; continue; }
		rm -f "$workdir/cut.elf" "$workdir/cut-plain.elf" "$workdir/cut.kdump"
		"$kdumpinit" info "$workdir/cut.img" >"$workdir/cut-info.out" 2>&1
		irc=$?
		"$kdumpinit" info "$workdir/cut.img" --key "$sk" >"$workdir/cut-info-key.out" 2>&1
		"$kdumpinit" save "$workdir/cut.img" --key "$sk" --output "$workdir/cut.elf" --format elf >"$workdir/cut-save.out" 2>&1
		src=$?
		"$kdumpinit" save "$workdir/cut-plain.img" --output "$workdir/cut-plain.elf" --format elf >"$workdir/cut-plain.out" 2>&1
		prc=$?
		held=$(awk '$1 == "pages" && $2 == "kept" { print $3 }' "$workdir/cut-info-key.out")
		if [ $irc = 5 ] && grep -q "^state *incomplete" "$workdir/cut-info.out" && [ $src = 5 ] && [ $prc = 5 ] &&
			[ "${held:-0}" -gt 0 ] && cmp -s "$workdir/cut.elf" "$workdir/cut-plain.elf"; then
			pass "sealed cut $name (byte $so): info without the key incomplete (exit 5), save --key exit 5 with $held of $complete pages: byte for byte the key-less dump's without that chunk"
		else
			failed "sealed cut $name (byte $so): info exit $irc ($(grep -m1 '^state' "$workdir/cut-info.out" | tr -s ' ' | cut -c1-80)), save --key exit $src, key-less save exit $prc, ${held:-?} pages, $(cmp "$workdir/cut.elf" "$workdir/cut-plain.elf" 2>&1 | head -n 1)"
			sed 's/^/    /' "$workdir/cut-save.out"
		fi
		if [ $name = mid ]; then
			# Its pages are the complete save's, and the kdump save
			# says INCOMPLETE (disk_dump_header.status 0x8 at 424).
			"$python" "$top/tests/tools/pagecheck.py" "$workdir/saved.elf" "$workdir/cut.elf" --require some --less \
				>"$workdir/cut-pagecheck.out" 2>&1 &&
				pass "sealed cut $name: every page saved is the complete save's ($(tail -n 2 "$workdir/cut-pagecheck.out" | head -n 1))" ||
				{ failed "sealed cut $name: pagecheck against the complete save:"; tail -n 5 "$workdir/cut-pagecheck.out" | sed 's/^/    /'; }
			"$kdumpinit" save "$workdir/cut.img" --key "$sk" --output "$workdir/cut.kdump" --compress none >/dev/null 2>&1
			rc=$?
			st=$(od -An -tu4 -j 424 -N 4 "$workdir/cut.kdump" 2>/dev/null | tr -d ' ')
			[ $rc = 5 ] && [ $(( ${st:-0} & 8 )) = 8 ] &&
				pass "sealed cut $name: save --key --format kdump exits 5, its header says INCOMPLETE" ||
				failed "sealed cut $name: save --key --format kdump exited $rc, status '${st:-none}'"
		fi
		rm -f "$workdir/cut.img" "$workdir/cut-plain.img" "$workdir/cut.elf" "$workdir/cut-plain.elf" "$workdir/cut.kdump"
	done
	rm -f "$plain" "$workdir/plain.elf" "$workdir/plain.kdump"
fi

# --- a second crash before the first was saved (--after) ----------------------------
if [ -n "$after" ] && [ $rawonly = 0 ]; then
	first=$(dirname "${after%%:*}")
	[ "${newest:-0}" = 2 ] && pass "second crash before a save: the capture went after the unsaved dump (dump 2 of 2)" ||
		failed "second crash before a save: the disk holds ${newest:-0} dump(s), want 2"
	"$kdumpinit" save "$dump" --dump 1 --output "$workdir/first.elf" --format elf >"$workdir/first.out" 2>&1
	rc=$?
	[ $rc = 0 ] && pass "the first crash's dump, still on the disk, saves (exit 0)" ||
		{ failed "save --dump 1 exited $rc:"; sed 's/^/    /' "$workdir/first.out"; }
	if [ -f "$first/saved.elf" ]; then
		cmp -s "$first/saved.elf" "$workdir/first.elf" &&
			pass "the first dump saves byte for byte as it did before the second crash" ||
			failed "the first dump's save differs from $first/saved.elf"
	fi
	# Page for page against its raw vmcore, its poisoned pages left out.
	poisoned=$(log=$first/console.log poisoned_pages | while read -r pfn; do printf '0x%x\n' $((pfn * 4096)); done | paste -sd, -)
	"$python" "$vmcmp" "${after#*:}" "$workdir/first.elf" ${poisoned:+--excluded "$poisoned"} >"$workdir/vmcmp-first.out" 2>&1 &&
		pass "vmcmp: the first dump matches its raw vmcore ($(tail -n 1 "$workdir/vmcmp-first.out"))" ||
		{ failed "vmcmp of the first dump:"; tail -n 20 "$workdir/vmcmp-first.out" | sed 's/^/    /'; }
fi

# --- timings --------------------------------------------------------------------------
ms() { local a=${at[$1]:-} b=${at[$2]:-}; [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1fs", b - a }' || echo "-"; }
say "timings: build ${d_build}s; qemu ${d_qemu}s = boot+arm ${at[armed]:--}s, load $(ms armed crash)," \
	"crash kernel boot $(ms crash crashup), raw copy $(ms crashup rawdone)," \
	"kdumpinit $(ms kdstart reboot), reboot->exit $([ -n "${at[reboot]:-}" ] && awk -v a="${at[reboot]}" -v b="$d_qemu" 'BEGIN { printf "%.1fs", b - a }' || echo -);" \
	"info ${d_info}s, save ${d_save}s, vmcmp ${d_cmp}s"

[ -z "$disk" ] || say "disk $disk: $(echo ${diskmods:-} | wc -w) modules resolved and packed;" \
	"capture $(grep -a -o '[0-9]* MiB written' "$post" | tail -n 1) to $(grep -a -o -m1 'kdumpinit: target: /dev/[a-z0-9]*' "$post" | sed 's/.* //')," \
	"saved ELF $(stat -c %s "$workdir/saved.elf" 2>/dev/null || echo -) bytes; kdumpinit $(ms kdstart reboot) from start to final action"
echo "harness: $nstep steps done"
echo "$npass passed, $nfail failed, 0 skipped"
if [ $nfail = 0 ]; then
	echo "PASS: e2e ($mode, cpu $cpu, mem $mem, crashkernel=$ck, level $level) in $workdir"
	exit 0
fi
echo "FAIL: e2e ($mode, cpu $cpu): $nfail check(s) failed; console log: $log"
exit 1
