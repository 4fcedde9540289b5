#!/bin/bash
# Runs every suite of `make check` and adds up their "N passed, N failed,
# N skipped" lines into one closing line, which names the skipped cases. A
# suite that dies without its line counts as one failure, so a crash can
# never look like a pass.
#
# Suites: the test tools' self-tests, unit tests, synthetic page-filter
# tests, fuzz smoke runs, then real kdump crashes in QEMU (Debian 12's 6.1
# with 4- and 5-level paging, Debian 13's 6.12, and the 88M crashkernel
# floor), one arm64 crash (Debian 12's arm64 kernel in QEMU virt), then the
# differential filter test against makedumpfile on the raw vmcores those
# crashes produced, captures from damaged copies of one of them
# (corrupt; check-full: every fault, on 6.1 and 6.12), and damaged copies
# of their dumps (damage). Then the documentation against the
# binary, the host set-up step, and the Debian package in a fresh chroot.
#
# ONLY="NAME..." runs only the suites so named (make check-docs, check-deb).
# CKERNEL=FILE: the dedicated crash kernel the e2e-dedicated-* suites and
# e2e-lockdown take, with its lists beside it (FILE.config, ...), instead
# of building it (make run-crash-kernel).
# T=GLOB (make check-unit T='C.end_signature_*') runs only the cases it
# names, in the suites that select cases by name (unit, savecore,
# savecore-safety, savecore-chain); the other suites are left out, and a suite with no
# case of that name reports "0 passed, 0 failed, 0 skipped".
#
# Every suite ends with "N passed, N failed, N skipped" ("N passed, N
# failed" is read as 0 skipped) and names each skip as "skip NAME: why".
# A skip fails the run unless tests/skips.allowed lists it (SUITE/NAME glob
# and the reason), and so does a suite with fewer cases (passed + failed +
# skipped) than tests/manifest says (not under T). A suite that cannot run
# at all is one skip, SUITE/-.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export KDUMPINIT=$PWD/$BUILD/kdumpinit MKVMCORE=$PWD/$BUILD/tools/mkvmcore
export UNIT_BIN=$PWD/$BUILD/tests/unit
export T=${T:-}
# ONLY is ours: not the filter-synthetic suite's own ONLY (a case regex).
only=${ONLY:-}
unset ONLY
raws=$BUILD/check
mkdir -p "$raws"
pass=0 fail=0 skip=0 skipped=

wanted() {	# NAME: is this suite to run (ONLY, T)?
	if [ -n "$T" ]; then
		case $1 in unit | savecore | savecore-safety | savecore-chain) ;; *) return 1 ;; esac
	fi
	[ -z "$only" ] && return 0
	case " $only " in *" $1 "*) return 0 ;; esac
	return 1
}

# allowed SUITE/NAME: does tests/skips.allowed list this skip?
allowed() {
	local glob reason
	while read -r glob reason; do
		case $glob in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2254
		case $1 in $glob) return 0 ;; esac
	done <tests/skips.allowed
	return 1
}

skipped_one() {	# SUITE/NAME WHY: count a skip; fail it if not allowed
	skip=$((skip + 1))
	skipped="$skipped $1"
	if ! allowed "$1"; then
		echo "check: $1 was skipped ($2), and tests/skips.allowed does not allow it: counted as a failure"
		fail=$((fail + 1))
	fi
}

run_suite() {	# NAME COMMAND...
	local name=$1 log out p f s min l
	shift
	wanted "$name" || return 0
	log=$BUILD/tests/$name.log
	mkdir -p "$(dirname "$log")"
	echo "== $name"
	local t0=$SECONDS
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	# Each suite's wall time, so that make check's budget can be kept.
	echo "check: $name took $((SECONDS - t0)) s" | tee -a "$BUILD/tests/times"
	out=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$out" ]; then
		echo "check: $name printed no result line (exit $rc): counted as a failure"
		fail=$((fail + 1))
		return
	fi
	p=${out%% passed*}
	f=${out#*passed, }
	f=${f%% failed*}
	s=0
	case $out in *" failed, "[0-9]*" skipped"*) s=${out#*failed, }; s=${s%% skipped*} ;; esac
	pass=$((pass + p))
	fail=$((fail + f))
	while IFS= read -r l; do
		l=${l#skip }
		skipped_one "$name/${l%%: *}" "${l#*: }"
	done < <(grep -E '^skip [^ ]+: ' "$log")
	if [ "$s" -ne "$(grep -cE '^skip [^ ]+: ' "$log")" ]; then
		echo "check: $name counts $s skipped but names $(grep -cE '^skip [^ ]+: ' "$log"): counted as a failure"
		fail=$((fail + 1))
	fi
	min=$(awk -v n="$name" '$1 == n { print $2 }' tests/manifest)
	if [ -z "$T" ] && [ -z "$min" ]; then
		echo "check: $name is not in tests/manifest ($((p + f + s)) cases): its count is not checked"
	elif [ -z "$T" ] && [ $((p + f + s)) -lt "$min" ]; then
		echo "check: $name ran $((p + f + s)) cases, tests/manifest says at least $min: counted as a failure"
		fail=$((fail + 1))
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "check: $name exited $rc with no failure counted: counted as a failure"
		fail=$((fail + 1))
	fi
}

# A suite that is not there at all (a partial tree): one skip, SUITE/-.
# A suite make check leaves to check-full, for time: make check stays
# within its 35 minutes on 2 cores, and what it leaves out is a second
# instance of a behaviour it tests once (tests/README.md).
# ONLY naming one runs it without FULL.
full_suite() {	# NAME COMMAND...
	if [ -n "${FULL:-}" ] || { [ -n "$only" ] && wanted "$1"; }; then
		run_suite "$@"
	fi
}

run_if() {	# FILE NAME COMMAND...
	local file=$1
	shift
	wanted "$1" || return 0
	if [ -e "$file" ]; then
		run_suite "$@"
	else
		echo "== $1"
		echo "skip $1: $file is not there"
		skipped_one "$1/-" "$file is not there"
	fi
}

# The key property test's dump levels (keys-synthetic, keys-real).
klevels="31"
[ -z "${FULL:-}" ] || klevels="31 17"

if [ -z "${SKIP_UNIT:-}" ]; then
	run_suite tools bash tests/tools/vmcmp_selftest.sh
	full_suite tools-scale bash tests/tools/scale_selftest.sh
	run_suite mdcmp bash tests/filter-makedumpfile/mdcmp_selftest.sh
	run_suite unit env WORK="$PWD/$BUILD/tests/unit" bash tests/unit/run.sh
	run_suite savecore bash tests/unit/savecore.sh
	run_suite savecore-safety bash tests/unit/savecore_safety.sh
	run_suite savecore-chain bash tests/unit/savecore_chain.sh
	# Sealed dumps (capture --pubkey): round trips, no plaintext, forged damage.
	run_suite sealed bash tests/unit/sealed.sh
	run_suite modules bash tests/unit/modules.sh
	run_suite status bash tests/unit/status.sh
	# Every command's options from its --help: one-line errors, --opt=value,
	# relative paths (lib/cli.c).
	run_suite cli bash tests/unit/cli.sh
	# --json against the human output of info, status and save --check.
	run_suite json bash tests/unit/json.sh
	# kdumpinit estimate on a machine made of files: the capture's own
	# compression, the sample, the classes, errors (the real crashes'
	# check is in the e2e suites that keep a raw vmcore).
	run_suite estimate bash tests/unit/estimate.sh
	# kdumpinit test and the next boot's report, on files (the real crash
	# and reboot: the cycle suite).
	run_suite crashtest bash tests/unit/crashtest.sh
	# The dedicated crash kernel and crashkernel=,cma, host side: image
	# inspection, lockdown, both reservation parts, the service's choice.
	run_suite crash-kernel-host bash tests/unit/crashkernel.sh
	# arm64: make ARCH=arm64 and kdumpinit arm's kexec-tools fallback.
	run_suite arm64 bash tests/e2e-arm64/host.sh
	run_if tests/filter-synthetic/run.sh filter-synthetic bash tests/filter-synthetic/run.sh
	# The same property on the synthetic kernels (6.1, 6.12 5-level, 7.1,
	# arm64 6.12).
	run_suite keys-synthetic env LEVELS="$klevels" bash tests/filter-synthetic/keys.sh --no-real
	run_suite dmesg-rings bash tests/corrupt/rings.sh
	# The capture's first phase (the debugger-page finder and its walks)
	# on the memories of real crashes, some of which hung it before issue
	# 37's fix: small committed reproducers, seconds.
	run_suite replay bash tests/replay/run.sh
	# Each target's corpus, then 2 s of fuzzing each (5 s under check-full).
	run_if tests/fuzz/fuzz.mk fuzz make -s -f tests/fuzz/fuzz.mk BUILD="$BUILD" \
		FUZZ_SMOKE_SECONDS="$([ -n "${FULL:-}" ] && echo 5 || echo 2)" fuzz-smoke
	run_suite docs bash tests/docs/run.sh
	run_suite setup bash tests/setup/run.sh
	run_suite deb bash tests/deb/run.sh
	# Read errors where save reads the dump (blkdebug behind a FUSE file).
	run_suite faults-readerr bash tests/faults/readerr.sh --workdir "$BUILD/faults/readerr"
fi

# e2e-VER-4level on a Debian kernel tests/filter-makedumpfile/get-kernel.sh
# fetches (a tree the harness boots), its raw vmcore kept for the filter
# suites.
e2e_kernel() {	# VER
	local tree
	tree=$(tests/filter-makedumpfile/get-kernel.sh "$1" | sed -n 's/^MODROOT=//p')
	if [ -n "$tree" ]; then
		run_suite "e2e-$1-4level" bash tests/e2e/run.sh --cpu max,la57=off --kernel-tree "$tree" \
			--raw-out "$raws/raw-$1-4level.vmcore" --workdir "$BUILD/e2e/$1-4level"
	else
		echo "check: Debian's $1 kernel could not be fetched: counted as a failure"
		fail=$((fail + 1))
	fi
}

if [ -z "${SKIP_E2E:-}" ]; then
	# The filter suite compares the raw vmcores these runs store: never one
	# a failed or earlier run left behind.
	for r in 6.1-4level 6.1-5level 6.12-4level 6.18-4level 7.3-4level; do
		wanted "e2e-$r" && rm -f "$raws/raw-$r.vmcore"
	done
	run_suite e2e-6.1-4level bash tests/e2e/run.sh --cpu max,la57=off \
		--raw-out "$raws/raw-6.1-4level.vmcore"
	# check-full: the second crash before the first was saved: the 5-level guest
	# crashes onto a copy of the 4-level run's dump disk, whose dump was
	# never saved; its capture must go after that dump, and both must
	# save page for page as their raw vmcores (no extra QEMU run).
	first=$PWD/build/e2e/max_la57-off/dump.img:$(realpath -m "$raws/raw-6.1-4level.vmcore")
	[ -f "${first%%:*}" ] && [ -f "${first#*:}" ] || first=
	full_suite e2e-6.1-5level bash tests/e2e/run.sh --cpu max \
		--raw-out "$raws/raw-6.1-5level.vmcore" ${first:+--after "$first"}
	tree=
	{ wanted e2e-6.12-4level || wanted e2e-firmware-6.12; } && tree=$(tests/filter-makedumpfile/get-kernel.sh 6.12 | sed -n 's/^MODROOT=//p')
	if ! wanted e2e-6.12-4level; then
		:
	elif [ -n "$tree" ]; then
		run_suite e2e-6.12-4level bash tests/e2e/run.sh --cpu max,la57=off --kernel-tree "$tree" \
			--raw-out "$raws/raw-6.12-4level.vmcore" --workdir "$BUILD/e2e/6.12-4level"
	else
		echo "check: Debian 13's kernel could not be fetched: counted as a failure"
		fail=$((fail + 1))
	fi
	# The newest kernel of the matrix, packaged the new way (7.3 from
	# trixie-backports: linux-binary, -modules, -base): kdumpinit as PID 1
	# of its own crash kernel, its .ko.xz modules; its raw vmcore joins the
	# filter suite (7.1 renamed page.compound_head to compound_info).
	wanted e2e-7.3-4level && e2e_kernel 7.3
	# check-full: 6.18, the LTS before 7.x (trixie-backports' linux-image,
	# the old layout), end to end; its raw vmcore joins the filter suite.
	[ -n "${FULL:-}" ] && wanted e2e-6.18-4level && e2e_kernel 6.18
	# The floor: Debian 12's kernel at crashkernel=88M (22 MB for userspace),
	# kdumpinit the crash kernel's only init, full filtering.
	run_suite e2e-88M bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M \
		--level 31 --workdir "$BUILD/e2e/88M"
	# Firmware only: dev from SMBIOS type 11, the level from a fw_cfg
	# kdumpinit.conf, on Debian 13's kernel (its modules are .ko.xz).
	# (check-full; the cycle suite is configured by firmware alone)
	if [ -n "${FULL:-}" ] && wanted e2e-firmware-6.12; then
		run_suite e2e-firmware-6.12 bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
			--firmware --kernel-tree "$tree" --workdir "$BUILD/e2e/firmware-6.12"
	fi
	# A network dump device (check-full): the dump image served by qemu-nbd
	# on the host, the crash kernel's PID 1 up on virtio-net with a static
	# address, the handshake, /dev/nbd0; saved from the served file and
	# compared with the raw vmcore page for page (about 2 min).
	full_suite e2e-nbd bash tests/e2e/run.sh --cpu max,la57=off --nbd --workdir "$BUILD/e2e/nbd"
	# The same with kdumpinit.ip=dhcp: PID 1's lease from QEMU's DHCP server.
	full_suite e2e-nbd-dhcp bash tests/e2e/run.sh --cpu max,la57=off --nbd --append-first e2e.nbdip=dhcp \
		--workdir "$BUILD/e2e/nbd-dhcp"
	# Sealed over the network: the key from firmware (so arm asks for no
	# --allow-clear), no page in the clear on the served export, saved
	# with the key and cut, as e2e-sealed on a disk (about 3 min).
	full_suite e2e-nbd-sealed bash tests/e2e/run.sh --cpu max,la57=off --nbd --seal --workdir "$BUILD/e2e/nbd-sealed"
	# The server stops when the capture is at 20 % and is back 5 s later:
	# the kernel holds the writes, PID 1 connects again (NBD_CMD_RECONFIGURE),
	# and the dump is complete and equal to the raw vmcore (about 2.5 min).
	# No kdumpinit.ip= either: the first kernel's eth0 is up, and arm
	# records the way to the server for the crash kernel.
	full_suite e2e-nbd-drop bash tests/e2e/run.sh --cpu max,la57=off --nbd-drop 5 --append-first e2e.nbdip=arm \
		--workdir "$BUILD/e2e/nbd-drop"
	# A sealed dump, the public key from firmware (the fw_cfg credential
	# kdumpinit.pubkey), level 1 on a 768 MiB guest: no page of the raw
	# copy and no panic line anywhere on the device (the same scan finds
	# them on a key-less capture), save --key byte for byte a key-less
	# capture's, drgn (crash too under check-full), info and dmesg with and
	# without the key, cuts of the sealed device, a bad key writes nothing.
	run_suite e2e-sealed env ${FULL:+CRASH=1} bash tests/e2e/run.sh --cpu max,la57=off --mem 768M --seal \
		--workdir "$BUILD/e2e/sealed"
	# The hardware watchdog (i6300esb, 20 s, armed by the first kernel):
	# a slow but progressing capture completes (check-full: a stalled one
	# is reset by it and stays readable up to its last chunk).
	run_suite e2e-watchdog bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
		--watchdog 20 --slow-disk 6000000 --workdir "$BUILD/e2e/watchdog"
	# A capture that stalls before its pages (the test hook spins the
	# debugger-page finder): the log is on the device, PID 1 stops it and
	# tries once more without the optional steps, over the first attempt's
	# dump; one complete dump results (tests/e2e/stall.sh; ~75 s).
	full_suite e2e-stall-steps bash tests/e2e/stall.sh --workdir "$BUILD/e2e/stall-steps"
	# Stacked dump devices against a real kernel's device-mapper (the
	# build host has none): a guest with dm_mod rebuilds a linear and a
	# striped table from their kdumpinit.dm= words as PID 1 does, writes
	# through each, and `arm --dry-run --dev` records the same words back;
	# then a crash captured by PID 1 onto a two-segment linear mapping it
	# rebuilt, complete on the volume (tests/e2e/dm.sh; about 50 s).
	full_suite e2e-dm env DMTOOL="$BUILD/tools/dmtool" bash tests/e2e/dm.sh --workdir "$BUILD/e2e/dm"
	# A dump disk that comes late (USB storage, a large HBA): hot-added
	# through QEMU's monitor 15 s after PID 1 says it waits; PID 1 says
	# every 10 s that it still waits and captures to it as soon as it comes.
	full_suite e2e-late-disk bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
		--late-disk 15 --workdir "$BUILD/e2e/late-disk"
	# Drivers found where the disks are: four claimed dump disks (NVMe,
	# SATA/AHCI, virtio-scsi, virtio-blk); the first kernel resolves each
	# with `kdumpinit modules SERIAL=...` (checked against modprobe) and
	# packs NVMe's into a crash image with no disk driver of its own; the
	# capture goes there, the other three stay untouched. check-full
	# captures to each of the other three.
	full_suite e2e-disk-nvme bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
		--disk nvme --workdir "$BUILD/e2e/disk-nvme"
	# The hardware people own (a fifth disk beside the four): the two
	# cheapest here, about 50 s each (NVMe behind an Intel IOMMU with DMA
	# remapping on, the crash kernel copying its tables; a VMware PVSCSI
	# HBA); check-full captures to the other five.
	for d in nvme-intel-iommu pvscsi; do
		run_suite "e2e-disk-$d" bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
			--disk "$d" --workdir "$BUILD/e2e/disk-$d"
	done
	# Write errors on the dump disk (QEMU blkdebug): a bad range early in
	# the pages is gone around (GAP), the rest of the dump kept.
	# Sealed in make check: the capture goes around the bad range as the
	# clear one does (check-full) and reads to END, authenticated up to
	# the loss and past it.
	full_suite faults-blkdebug bash tests/faults/blkdebug.sh early --workdir "$BUILD/faults/early"
	run_suite faults-blkdebug-sealed bash tests/faults/blkdebug.sh early --seal \
		--workdir "$BUILD/faults/early-sealed"
	# A power cut (QEMU killed) late in a level-1 capture: drgn opens what
	# is left (the kernel's pages go first; check-full does the same on a
	# guest whose kernel KASLR placed high, memmap=, ~2 min: the dump shows
	# the image above where the cut pfn-order pass stopped, drgn reads
	# init_uts_ns and the kernel log from both saves); a level-1 capture onto a disk
	# 1.25 times the level-31 dump keeps every page level 31 does; cuts
	# inside the metadata and the kernel log, on a real vmcore's dump.
	full_suite faults-powercut bash tests/faults/powercut.sh late --workdir "$BUILD/faults/cut-late"
	run_if "$raws/raw-6.1-4level.vmcore" faults-cutfile bash tests/faults/cutfile.sh \
		"$raws/raw-6.1-4level.vmcore" --workdir "$BUILD/faults/cutfile"
	# The unattended cycle, with real reboots, configured by firmware alone:
	# save nothing, arm, crash, capture, reboot; the save fails (a full
	# /var/crash), arm anyway, crash: the capture goes after the unsaved
	# dump; both saved, oldest first, and powered off (no extra boot).
	run_suite cycle bash tests/cycle/run.sh --fail-save 2 --workdir "$BUILD/cycle"
	# Every level's page set; the kdump-format save (its reading back is
	# most of the time) at levels 1 and 31 here, at every level under
	# check-full.
	kdlevels="1 31"
	[ -z "${FULL:-}" ] || kdlevels="1 2 4 8 16 31"
	# The 5-level vmcore is the 6.1 kernel again with other page tables:
	# e2e-6.1-5level checks every page of it (level 1, vmcmp), and
	# check-full filters it here too.
	fvm=("$raws"/raw-*.vmcore)
	[ -n "${FULL:-}" ] || fvm=("$raws"/raw-6.1-4level.vmcore "$raws"/raw-6.12-4level.vmcore "$raws"/raw-7.3-4level.vmcore)
	# Levels 1 and 31 here (17 and each exclusion class alone under check-full).
	flevels="1 31"
	[ -z "${FULL:-}" ] || flevels="1 2 4 8 16 17 31"
	run_suite filter-makedumpfile bash tests/filter-makedumpfile/run.sh --no-also --levels "$flevels" \
		--save-kdump-levels "$kdlevels" "${fvm[@]}"
	# Each VMCOREINFO key the filter reads made unknown in turn, on one
	# real vmcore per kernel release: every page the full key set keeps is
	# still kept, and the key is named (level 31; 17 too under check-full).
	full_suite keys-real env LEVELS="$klevels" bash tests/filter-synthetic/keys.sh --no-synthetic "$raws"/raw-*.vmcore
	# A dump cut short opens in the debuggers once the debugger's pages,
	# written first, are on the device: level 31 cut at 10-90 % of its
	# bytes and onto a device too small, level 17 cut twice, level 1 cut
	# inside its kernel-first pass, on the oldest, the LTS and the newest
	# kernel (tests/debugger/cuts.sh). drgn here, with each kernel's -dbg
	# vmlinux (about 1.5 minutes of downloads, once); crash as well under
	# check-full only (CRASH=1): Debian 12's 8.0.2 on 6.1, sid's 9.0.2
	# (tests/lib/crash9.sh: 9.3 MB of pinned .debs, 8-18 s once) on 6.1,
	# 6.12 and 7.3 (--no_modules there). Not in make check, for time:
	# on the 7.3 vmcore alone crash took the suite from 51 s to 4 min 4 s
	# (2026-12-07, 2 cores shared, load 5), the raw vmcore twice (21 s
	# failing without --no_modules, 37 s with it) and 6 cuts at 15-30 s
	# each, crash loading the 430 MB vmlinux every time. The check-full
	# suite: 15 min 41 s for the three kernels (55 cases, 2 skips: crash
	# 8.0.2 reads no 6.4+).
	# The newest kernel here; the oldest and the LTS too under check-full.
	cvm=("$raws"/raw-7.3-4level.vmcore)
	[ -z "${FULL:-}" ] || cvm=("$raws"/raw-6.1-4level.vmcore "$raws"/raw-6.12-4level.vmcore "$raws"/raw-7.3-4level.vmcore)
	run_suite debugger-cuts env ${FULL:+CRASH=1} bash tests/debugger/cuts.sh --workdir "$BUILD/debugger/cuts" \
		"${cvm[@]}"
	# Does the startup set hold every page crash and drgn read on 6.1,
	# 6.12 and 7.3 (the raw vmcores of the e2e runs above)? 7 pairs, about
	# 2 min (tests/debugger/coverage.sh).
	full_suite debugger-coverage bash tests/debugger/coverage.sh "$raws"/raw-6.1-4level.vmcore \
		"$raws"/raw-6.12-4level.vmcore "$raws"/raw-7.3-4level.vmcore
	# The dedicated crash kernel (make crash-kernel: Debian's 7.3 source,
	# kdumpinit inside; built once per machine, crash-kernel/README.md) at
	# its floor, crashkernel=28M, under Debian 12's 6.1: level 31 on a
	# 1.5 GiB guest, the save byte for byte a host capture's of the raw
	# copy (check-full: then as users run it, with no initramfs at all,
	# and on 7.3
	# with crashkernel=,cma: 15M fixed, the CMA paying for a worker per
	# CPU (--cpus auto)).
	# Set whichever suites run: the lines below name it even when ONLY
	# leaves them out (set -u).
	# The dump disk types the dedicated kernel captures to under check-full
	# (e2e-dedicated-disk-TYPE; make check: nvme-intel-iommu), and the
	# fallback: an HBA it leaves out (lsi: sym53c8xx). Not nvme-amd-iommu:
	# 7.3 disables AMD interrupt remapping under QEMU's amd-iommu on q35
	# (check_sb_ioapic: nothing at the IVRS's IOAPIC 00:14.0), which the
	# first kernel left on, and the crash kernel gets no interrupt
	# (tests/e2e/README.md).
	ddisks="nvme ahci scsi virtio megasas pvscsi usb-storage usb-uas sdhci lsi"
	ckernel=
	ckwanted=
	for d in $ddisks nvme-amd-iommu-noir; do
		{ [ -n "${FULL:-}" ] || [ -n "$only" ]; } && wanted "e2e-dedicated-disk-$d" && ckwanted=1
	done
	if wanted e2e-dedicated-28M || wanted e2e-dedicated-28M-noinitrd || wanted e2e-dedicated-cma-7.3 || wanted e2e-lockdown ||
		wanted e2e-dedicated-disk-nvme-intel-iommu ||
		[ -n "$ckwanted" ] || { [ -n "${FULL:-}" ] && { wanted e2e-dedicated-28M-6G || wanted e2e-dedicated-28M-sealed; }; }; then
		if [ -n "${CKERNEL:-}" ]; then
			ckernel=$(realpath "$CKERNEL")
		else
			echo "== crash kernel (make run-crash-kernel)"
			ckernel=$PWD/$BUILD/crash-kernel/vmlinuz
			make --no-print-directory -s run-crash-kernel BUILD="$BUILD" || rm -f "$ckernel"
		fi
	fi
	run_suite e2e-dedicated-28M bash tests/e2e/run.sh --cpu max,la57=off --crashkernel 28M --mem 1536M \
		--level 31 --crash-kernel "$ckernel" --workdir "$BUILD/e2e/dedicated-28M"
	full_suite e2e-dedicated-28M-noinitrd bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 28M \
		--mem 1536M --level 31 --crash-kernel "$ckernel" --workdir "$BUILD/e2e/dedicated-noinitrd"
	# A real kernel's lockdown=integrity: arm refuses the unsigned
	# dedicated kernel (exit 9, before loading, and when securityfs is
	# not there to tell); status says so; lockdown=none takes it.
	run_suite e2e-lockdown bash tests/e2e/lockdown.sh "$ckernel" --workdir "$BUILD/e2e/lockdown"
	# The dedicated kernel and the dump disk's hardware: the first kernel
	# (6.1) runs the reach check (arm --dry-run --dev: the disk's driver
	# chain and its IOMMU against the lists installed beside the kernel)
	# and arms through the service script (dist/kdumpinit-arm); the
	# dedicated kernel, no initramfs, captures to NVMe behind an Intel
	# IOMMU with DMA remapping on (its IOMMU driver copies the first
	# kernel's tables). check-full: each other disk type, and an HBA it
	# lacks (lsi, sym53c8xx: the check names it, exit 10, and the service arms
	# the stock kernel with its image, which captures).
	run_suite e2e-dedicated-disk-nvme-intel-iommu bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
		--disk nvme-intel-iommu --crash-kernel "$ckernel" --workdir "$BUILD/e2e/dedicated-disk-nvme-intel-iommu"
	for d in $ddisks; do
		full_suite "e2e-dedicated-disk-$d" bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
			--disk "$d" --crash-kernel "$ckernel" --workdir "$BUILD/e2e/dedicated-disk-$d"
	done
	# NVMe behind the AMD IOMMU with the first kernel's interrupt
	# remapping off (intremap=off), which the dedicated kernel cannot
	# take over under QEMU (above): its DMA translation, reused.
	full_suite e2e-dedicated-disk-nvme-amd-iommu-noir bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
		--disk nvme-amd-iommu --append-first intremap=off --crash-kernel "$ckernel" \
		--workdir "$BUILD/e2e/dedicated-disk-nvme-amd-iommu-noir"
	if [ -n "${FULL:-}" ] && wanted e2e-dedicated-cma-7.3; then
		tree=$(tests/filter-makedumpfile/get-kernel.sh 7.3 | sed -n 's/^MODROOT=//p')
		run_suite e2e-dedicated-cma-7.3 bash tests/e2e/run.sh --cpu max,la57=off --kernel-tree "$tree" \
			--crashkernel "15M crashkernel=256M,cma" --mem 1536M --level 31 --crash-kernel "$ckernel" \
			--crash-cpus auto --smp 4 --min-workers 3 --workdir "$BUILD/e2e/dedicated-cma-7.3"
	fi
	# The memory map's exclusion (kdumpinit.memmap=exclude) in the real
	# crash kernel: 6.1, level 31, the same pages as a host capture of the
	# raw copy, opened by crash (log, bt, kmem -i) and drgn.
	full_suite e2e-memmap bash tests/crash/memmap.sh --workdir "$BUILD/crash/memmap"
	# Fresh crashes, each boot's memory load drawn from its own seed
	# (printed; SOAK_SEED= runs the same again): Debian's 6.1, 6.12, 7.3
	# and arm64 6.1, each captured complete, within a bound, in the crash
	# kernel and on this host at levels 1 and 31 (a failing crash keeps
	# its raw vmcore in build/soak/failed). check-full only: two dozen, 1
	# and 1.5 GiB guests (about an hour); make check's e2e suites take a
	# fresh crash each (`soak --crashes 3` alone took 197 s).
	full_suite soak-full bash tests/soak/run.sh --crashes 24 --mems "1G 1536M" --workdir "$BUILD/soak/work-full"
	# Damaged kernel memory: faults put into a copy of the
	# 6.1 raw vmcore, captured at levels 1 and 31 (two faults; every
	# fault under check-full).
	run_suite corrupt bash tests/corrupt/run.sh ${FULL:+--full} --workdir "$BUILD/corrupt" \
		"$raws/raw-6.1-4level.vmcore"
	# Damage to the dump device: the 6.1 and 7.3 raw vmcores captured at
	# level 31, clear and sealed, then a byte of the header fields of each
	# chunk type, random 512-byte and 4 KiB blocks, a zeroed MiB, START
	# and END damaged; the report names the damage and the save holds
	# every page of every chunk it did not touch, byte for byte (about a
	# minute). check-full: every field of every type, 20 blocks of each
	# size (damage-full, about 8 minutes).
	if [ -z "${FULL:-}" ]; then
		run_suite damage bash tests/damage/run.sh --workdir "$BUILD/damage" \
			"$raws/raw-6.1-4level.vmcore"
	else
		run_suite damage-full bash tests/damage/run.sh --full --workdir "$BUILD/damage" \
			"$raws/raw-6.1-4level.vmcore" "$raws/raw-7.3-4level.vmcore"
	fi
fi

# make check-full: the larger guests at the 88M floor, 1.5 GiB and 6 GiB
# (about 10 more minutes: the 6 GiB guest's load takes most of it), a
# capture to each dump disk type e2e-disk-nvme does not capture to, the
# fault cases make check leaves out, and the 20-cycle soak of the boot cycle.
if [ -n "${FULL:-}" ]; then
	# Every corruption again, on Debian 13's kernel (the 6.12 layouts).
	run_suite corrupt-6.12 bash tests/corrupt/run.sh --full --workdir "$BUILD/corrupt" \
		"$raws/raw-6.12-4level.vmcore"
	run_suite e2e-88M-1536M bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M \
		--mem 1536M --level 31 --workdir "$BUILD/e2e/88M-1536M"
	# Sealed at the 88M floor (the plan counts 1 MB more for sealing),
	# and a sealed capture cut by a power cut in the middle of its pages:
	# up to the cut it opens, the save a key-less capture's cut there.
	run_suite e2e-sealed-88M bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M --level 31 \
		--seal --workdir "$BUILD/e2e/sealed-88M"
	run_suite e2e-sealed-cut bash tests/e2e/run.sh --cpu max,la57=off --seal --slow-disk 6000000 \
		--cut-at '^kdumpinit: capture: .* (1[2-8][0-9]) MiB written' --workdir "$BUILD/e2e/sealed-cut"
	# The dedicated crash kernel's floor on the 6 GiB guest.
	run_suite e2e-dedicated-28M-6G bash tests/e2e/run.sh --cpu max,la57=off --crashkernel 28M --mem 6G \
		--level 31 --timeout 1800 --crash-kernel "$ckernel" --workdir "$BUILD/e2e/dedicated-28M-6G"
	# Sealed at the dedicated kernel's floor (the key from fw_cfg, which
	# it has built in): the 1 MB the plan adds for sealing still fits.
	run_suite e2e-dedicated-28M-sealed bash tests/e2e/run.sh --cpu max,la57=off --crashkernel 28M \
		--mem 1536M --level 31 --crash-kernel "$ckernel" --seal --workdir "$BUILD/e2e/dedicated-28M-sealed"
	run_suite fresh bash tests/fresh/run.sh demo
	# The rest of the hardware people own (about 1 min each): a MegaRAID
	# HBA, USB storage and UAS on xHCI, an SD card on SDHCI, NVMe behind
	# an AMD IOMMU, an LSI 53C895A SCSI HBA (sym53c8xx).
	for d in ahci scsi virtio megasas usb-storage usb-uas sdhci nvme-amd-iommu lsi; do
		run_suite "e2e-disk-$d" bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
			--disk "$d" --workdir "$BUILD/e2e/disk-$d"
	done
	# Write errors late in the pages, and on every write past 100 MiB (the
	# capture gives up, keeps what came before, runs its final action).
	run_suite faults-blkdebug-late bash tests/faults/blkdebug.sh late --workdir "$BUILD/faults/late"
	run_suite faults-blkdebug-after bash tests/faults/blkdebug.sh after --workdir "$BUILD/faults/after"
	run_suite faults-blkdebug-late-sealed bash tests/faults/blkdebug.sh late --seal \
		--workdir "$BUILD/faults/late-sealed"
	# The suites make check leaves out for time (about 7 minutes on 2
	# cores): the stalled capture reset by the hardware watchdog; a
	# level-1 capture cut short on a disk too small (the kernel's pages
	# first); Debian 12's arm64 kernel in QEMU virt (TCG), armed by the
	# arm64 kdumpinit's own kexec_load loader, settings from the DT,
	# checked on this x86_64 host and against arm64 makedumpfile, arm
	# --unload in the guest (~4.5 min). make check still builds and tests
	# the arm64 binary and its loader on this host (suite arm64).
	run_suite e2e-watchdog-stall bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
		--watchdog 20 --stall-disk --workdir "$BUILD/e2e/watchdog-stall"
	run_suite faults-kernelfirst bash tests/faults/kernelfirst.sh --workdir "$BUILD/faults/kernelfirst"
	run_suite e2e-arm64 bash tests/e2e-arm64/run.sh --workdir "$BUILD/arm64/e2e/run"
	# The power cut on a guest whose kernel KASLR placed high (~2 min).
	run_suite faults-powercut-high bash tests/faults/powercut.sh high --workdir "$BUILD/faults/cut-high"
	# Power cuts before the first write, early and in the middle of the
	# pages, while END is written, in a level-31 capture past the
	# debugger's pages, and a new capture onto a cut dump.
	for c in before early middle end l31 replace; do
		run_suite faults-powercut-$c bash tests/faults/powercut.sh $c --workdir "$BUILD/faults/cut-$c"
	done
	# crash (with the matching vmlinux: the 858 MB -dbg package, fetched
	# once into build/crash/) on every fault dump that holds the
	# debugger's pages: power cuts after them (cut-end, level 31, too:
	# its debugger's pages go first like every level's), the full device,
	# write errors.
	run_suite crash-faults bash tests/crash/faults.sh "$BUILD"/faults/{cut-late,cut-high,cut-middle,cut-end,cut-l31,kernelfirst,early,late,after}
	# The arm64 floor: kdumpinit the only init at crashkernel=56M (the
	# kernel's own floor: it runs out of memory at 52M), level 31 (~1 min).
	run_suite e2e-arm64-56M bash tests/e2e-arm64/run.sh --no-raw --level 31 --crashkernel 56M \
		--workdir "$BUILD/arm64/e2e/56M"
	# The dedicated crash kernel for arm64 (make ARCH=arm64 crash-kernel,
	# cached per machine) at crashkernel=32M under Debian 12's arm64 6.1
	# (10 MB available; 28M completes with 7, 24M runs out of memory):
	# with a raw copy (level 1: every page byte for byte; makedumpfile
	# parity at 1, 17, 31), and as users run it, no initramfs, level 31
	# on a 6 GiB guest.
	akernel=	# named below even when ONLY leaves them out (set -u)
	if wanted e2e-arm64-dedicated-32M || wanted e2e-arm64-dedicated-32M-6G; then
		echo "== arm64 crash kernel (make ARCH=arm64 run-crash-kernel)"
		akernel=$PWD/build/arm64/crash-kernel/Image
		make --no-print-directory -s ARCH=arm64 run-crash-kernel || rm -f "$akernel"
	fi
	run_suite e2e-arm64-dedicated-32M bash tests/e2e-arm64/run.sh --crashkernel 32M --mem 1536M \
		--crash-kernel "$akernel" --workdir "$BUILD/arm64/e2e/dedicated-32M"
	run_suite e2e-arm64-dedicated-32M-6G bash tests/e2e-arm64/run.sh --no-raw --level 31 --crashkernel 32M \
		--mem 6G --timeout 1800 --crash-kernel "$akernel" --workdir "$BUILD/arm64/e2e/dedicated-32M-6G"
	# Which crash and drgn read the saves (tests/crash/README.md): Debian 12's
	# crash 8.0.2 and drgn 0.0.22, sid's crash 9.0.2 and drgn 0.3.0 (a
	# debootstrap chroot cached in build/chroot/sid-readers), levels 31 and 1,
	# both formats; each kernel's -dbg vmlinux is pinned (about 3 GB, once).
	run_suite readers bash tests/crash/readers.sh "$raws"/raw-6.1-4level.vmcore \
		"$raws"/raw-6.1-5level.vmcore "$raws"/raw-6.12-4level.vmcore "$raws"/raw-7.3-4level.vmcore
	# arm64 armed through kexec-tools instead (its _stext fix): ~3.5 min.
	run_suite e2e-arm64-kexec-tools bash tests/e2e-arm64/run.sh --loader kexec-tools \
		--workdir "$BUILD/arm64/e2e/kexec-tools"
	# Debian 13's arm64 6.12 (no kexec_file_load either; 52-bit VA, LPA2,
	# under -cpu max), armed by the own loader (~1.5 min).
	run_suite e2e-arm64-6.12 bash tests/e2e-arm64/run.sh --trixie --workdir "$BUILD/arm64/e2e/6.12"
	# The cut suite on arm64 (drgn; crash here reads x86_64 dumps only):
	# the raw copies the two runs above leave, Debian 12's 6.1 (no
	# KALLSYMS_ALL: the startup set without section symbols) and Debian
	# 13's 6.12, each kernel's -dbg vmlinux fetched once through an arm64
	# apt of its own (about 1.8 GB, 2 minutes; ~3.5 min of cuts).
	a64in=$BUILD/debugger/a64in
	mkdir -p "$a64in"
	case $BUILD in /*) a64b=$BUILD ;; *) a64b=$PWD/$BUILD ;; esac
	ln -sf "$a64b/arm64/e2e/run/raw.vmcore" "$a64in/raw-arm64-6.1.vmcore"
	ln -sf "$a64b/arm64/e2e/6.12/raw.vmcore" "$a64in/raw-arm64-6.12.vmcore"
	run_suite debugger-cuts-arm64 bash tests/debugger/cuts.sh --workdir "$BUILD/debugger/cuts-arm64" \
		"$a64in"/raw-arm64-6.1.vmcore "$a64in"/raw-arm64-6.12.vmcore
	run_suite e2e-88M-6G bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M \
		--mem 6G --level 31 --timeout 1800 --workdir "$BUILD/e2e/88M-6G"
	# The soak: twenty crash cycles back to back in one QEMU run, each
	# dump saved at the next boot whose save works (boots 11, 15, 16 and
	# 20 fail theirs: full, read-only, full, full), complete and its own
	# crash's (the first, middle and last byte for byte against a raw copy).
	run_suite cycle-soak bash tests/cycle/run.sh --cycles 20 --fail-save 11,15:ro,16,20 --timeout 3600 \
		--workdir "$BUILD/cycle-soak"
fi

echo "$pass passed, $fail failed, $skip skipped${skipped:+:$skipped}"
[ "$fail" -eq 0 ]
