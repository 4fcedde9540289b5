#!/bin/bash
# arm64 end-to-end kdump test: QEMU -M virt -cpu max under TCG
# boots Debian 12's stock arm64 kernel (extracted from the archive, not
# installed); the arm64 kdumpinit arms the crash kernel (the kernel has no
# kexec_file_load: with its own kexec_load loader, or kexec-tools' kexec -p
# with its _text fix); sysrq-c; in the crash kernel /testinit (tests/e2e's,
# used as it is) copies /proc/vmcore raw to one disk, then kdumpinit as
# PID 1 captures to the disk its settings name, and reboots. Before the
# crash the guest unloads the crash kernel with arm --unload
# (kexec_crash_loaded 1 -> 0: kexec_load's unload, as the kernel has no
# kexec_file_load) and arms it again; the armed record is checked for the
# header's fingerprint. The settings
# come from the device tree only: /chosen/kdumpinit,conf, added to QEMU's
# own DTB (dumpdtb + fdtput). On the x86_64 host: kdumpinit info and
# save --format elf, and vmcmp of the saved file against the raw copy
# (every non-zero page byte-identical, level 1). Then (unless
# --no-makedumpfile) mdparity.sh: upstream makedumpfile 1.7.8, cross-built
# for aarch64 at test time (tests/filter-makedumpfile/build-makedumpfile-
# arm64.sh) and run under qemu-aarch64-static, -d 1, 17 and 31 on the raw
# copy against kdumpinit's filter of it at the same level (kdcmp.py), and
# drgn (if installed) reading init_uts_ns from the saved kdump file.
#
# Parts copied from tests/e2e/run.sh (not shared: that script is x86_64's):
# the milestone reader and the PASS/FAIL/STEP accounting.
#
#   tests/e2e-arm64/run.sh [--mem SIZE] [--crashkernel SIZE] [--timeout SEC]
#                          [--workdir DIR] [--no-makedumpfile]
#                          [--loader own|kexec-tools] [--no-raw [--level N]]
#                          [--kernel-tree DIR | --trixie] [--crash-kernel FILE]
#                          [--seed N] [--raw-out FILE]
# --seed N: the first kernel's memory load drawn from N (e2e.seed=N,
# tests/e2e/seedload.sh and seedtasks.c, cross-built here when
# aarch64-linux-gnu-gcc is there) instead of the fixed one; tests/soak.
# --raw-out FILE: also store the raw vmcore copy as FILE.
# --crash-kernel: arm kdumpinit's dedicated crash kernel (make ARCH=arm64
# crash-kernel: an Image with kdumpinit built in): with --no-raw alone,
# with no initramfs (as users run it); otherwise with an archive over its
# own holding testinit and busybox (the raw copy).
# --kernel-tree: boot the kernel of another extracted arm64 kernel package
# (dpkg-deb -x, lib -> usr/lib, depmod -b), e.g. Debian 13's 6.12, with its
# modules; busybox and kexec-tools still come from Debian 12's packages.
# --trixie: Debian 13's 6.12 (pinned in packages; 52-bit VA under -cpu max,
# 4 KiB pages, so 5 table levels: makedumpfile 1.7.2 refuses it, 1.7.8 too
# ("PAGE SIZE 0x1000 and VA Bits 52 not supported"; upstream added it after
# 1.7.8): no makedumpfile comparison).
# --no-raw: kdumpinit is the crash kernel's only init (no busybox, no raw
# copy, so no vmcmp, header or makedumpfile checks), at --level N (from
# the DT): the image as users run it, for the crashkernel= floor.
# --crashkernel '256M,high crashkernel=64M,low' with --mem 4G: two crash
# regions, checked to reach the crash kernel as its memory (one more case).
# --loader: how kdumpinit arm loads the crash kernel here: its own
# kexec_load loader (default), or kexec-tools (KDUMPINIT_KEXEC=/sbin/kexec
# in the guest) with the _stext fix.
set -uo pipefail
prog=e2e-arm64
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

mem=1G ck=256M tmo=900 workdir='' mdf=1 loader=own noraw=0 level=1 ktree='' crashkernel='' seed='' rawout=''
while [ $# -gt 0 ]; do
	case $1 in
	--mem) mem=$2; shift ;;
	--crashkernel) ck=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--workdir) workdir=$2; shift ;;
	--no-makedumpfile) mdf=0 ;;
	--loader) loader=$2; shift ;;
	--no-raw) noraw=1 ;;
	--kernel-tree) ktree=$2; shift ;;
	--trixie) ktree=trixie ;;
	--level) level=$2; shift ;;
	--crash-kernel) crashkernel=$(realpath "$2"); shift ;;
	--seed) seed=$2; shift ;;
	--raw-out) rawout=$2; shift ;;
	-h | --help) sed -n '2,53p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$prog: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

case $loader in own | kexec-tools) ;; *) echo "$prog: --loader is own or kexec-tools" >&2; exit 2 ;; esac
case $seed in '') ;; *[!0-9]* | ??????????*) echo "$prog: --seed needs a number below 10^9" >&2; exit 2 ;; esac
build=${ARM64_E2E_BUILD:-$top/build/arm64/e2e}
[ -n "$workdir" ] || workdir=$build/run
# E2E_KDUMPINIT_ARM64, E2E_KDUMPINIT: other builds (tests/soak).
kd_arm=${E2E_KDUMPINIT_ARM64:-$top/build/arm64/kdumpinit}	# goes into the guest
kd_host=${E2E_KDUMPINIT:-$top/build/kdumpinit}		# runs here
mkinitramfs=$top/initramfs/mkinitramfs
python=/usr/bin/python3

nfail=0 npass=0 nstep=0 nskip=0
say() { echo "$@"; }
pass() { say "PASS: $*"; npass=$((npass + 1)); }
step() { say "STEP: $*"; nstep=$((nstep + 1)); }
failed() { say "FAIL: $*"; nfail=$((nfail + 1)); }
die() { echo "$prog: error: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for t in qemu-system-aarch64 fdtput dtc dpkg-deb depmod; do
	command -v "$t" >/dev/null || die "$t not found (deps/packages, group arm64)"
done
[ -x "$kd_arm" ] || die "no $kd_arm (make ARCH=arm64)"
[ -x "$kd_host" ] || die "no $kd_host (make)"
mkdir -p "$workdir" || die "cannot create $workdir"

t=$(now)
out=$("$here/fetch.sh" "$build") || die "fetching the arm64 packages failed"
kver=$(echo "$out" | sed -n 's/^KVER=//p')
root=$(echo "$out" | sed -n 's/^ROOT=//p')
kernel=$root/boot/vmlinuz-$kver
modroot=$root
if [ "$ktree" = trixie ]; then
	ktree=$(echo "$out" | sed -n 's/^TREE_k612=//p') mdf=0
	[ -n "$ktree" ] || die "fetch.sh prepared no Debian 13 kernel tree"
fi
if [ -n "$ktree" ]; then
	kernel=$(ls "$ktree"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$kernel" ] || die "no boot/vmlinuz-* in $ktree"
	kver=${kernel##*/vmlinuz-} modroot=$ktree
fi
busybox=$root/bin/busybox
[ -f "$kernel" ] && [ -x "$busybox" ] || die "fetch.sh left no kernel or busybox in $root"
step "arm64 packages: kernel $kver, kexec-tools, busybox ($(since "$t")s)"

# kexec and the libraries it loads, at their own paths (the closure of
# DT_NEEDED, found in the unpacked tree).
kexec_adds=(-a "$root/sbin/kexec:/sbin/kexec")
needed() { LC_ALL=C readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
todo=("$root/sbin/kexec") seen=" "
while [ ${#todo[@]} -gt 0 ]; do
	f=${todo[0]} todo=("${todo[@]:1}")
	for n in $(needed "$f"); do
		case $seen in *" $n "*) continue ;; esac
		seen="$seen$n "
		p=$(cd "$root" && find lib usr/lib -name "$n" 2>/dev/null | head -n 1)
		[ -n "$p" ] || die "kexec needs $n, which no package in tests/e2e-arm64/packages has"
		# The real file (a packed symlink would dangle).
		kexec_adds+=(-a "$(readlink -f "$root/$p"):/$p")
		todo+=("$root/$p")
	done
done
# The interpreter is /lib/ld-linux-aarch64.so.1.
kexec_adds+=(-a "$(readlink -f "$root/lib/ld-linux-aarch64.so.1"):/lib/ld-linux-aarch64.so.1")

mods=(-m virtio_pci -m virtio_blk)
crash=$workdir/crash.img stage1=$workdir/stage1.img
crash_adds=(-a "$top/tests/e2e/testinit:/testinit" -a "$busybox:/bin/busybox")
[ $noraw = 1 ] && crash_adds=() mdf=0
armkernel=$kernel crash_pack=(-a "$crash:/crash.img")
if [ -n "$crashkernel" ]; then
	# The dedicated kernel carries kdumpinit and its drivers: no modules.
	[ -f "$crashkernel" ] || die "--crash-kernel $crashkernel: no such file"
	armkernel=$crashkernel
	if [ $noraw = 1 ]; then
		crash_pack=()
	else
		ov=$workdir/overlay
		rm -rf "$ov" && mkdir -p "$ov/bin" "$ov/etc" && cp "$top/tests/e2e/testinit" "$ov/testinit" &&
			cp "$busybox" "$ov/bin/busybox" && : >"$ov/etc/kdumpinit.modules" &&
			(cd "$ov" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$crash" ||
			die "cannot make the test overlay"
	fi
else
	"$mkinitramfs" -k "$kver" -d "$modroot" -o "$crash" "${mods[@]}" --arch arm64 -b "$kd_arm" \
		${crash_adds[@]+"${crash_adds[@]}"} >"$workdir/mkinit-crash.log" 2>&1 ||
		{ cat "$workdir/mkinit-crash.log"; die "mkinitramfs (crash) failed"; }
fi
# --seed: the seeded load's script, and its thread helper where an
# aarch64 compiler is there (seedload does without it).
seed_adds=()
if [ -n "$seed" ]; then
	seed_adds=(-a "$top/tests/e2e/seedload.sh:/bin/seedload")
	if command -v aarch64-linux-gnu-gcc >/dev/null; then
		aarch64-linux-gnu-gcc -static -O2 -Wall -pthread -o "$workdir/seedtasks" "$top/tests/e2e/seedtasks.c" ||
			die "building seedtasks for aarch64 failed"
		seed_adds+=(-a "$workdir/seedtasks:/bin/seedtasks")
	else
		say "note: no aarch64-linux-gnu-gcc: the seeded load has no threads"
	fi
fi
"$mkinitramfs" -k "$kver" -d "$modroot" -o "$stage1" -z gzip "${mods[@]}" -b "$here/stage1-init" \
	-a "$busybox:/bin/busybox" -a "$armkernel:/vmlinuz" ${crash_pack[@]+"${crash_pack[@]}"} ${seed_adds[@]+"${seed_adds[@]}"} \
	-a "$kd_arm:/bin/kdumpinit" "${kexec_adds[@]}" >"$workdir/mkinit-stage1.log" 2>&1 ||
	{ cat "$workdir/mkinit-stage1.log"; die "mkinitramfs (stage 1) failed"; }
if [ -n "$crashkernel" ]; then
	step "images: dedicated crash kernel $(stat -c %s "$crashkernel") bytes$([ $noraw = 1 ] && echo ", no initramfs" || echo " with a $(stat -c %s "$crash")-byte test overlay"), stage 1 $(stat -c %s "$stage1") bytes (gzip)"
else
	step "images: crash initramfs $(stat -c %s "$crash") bytes, stage 1 $(stat -c %s "$stage1") bytes (gzip)"
fi

dump=$workdir/dump.img raw=$workdir/raw.img log=$workdir/console.log
rm -f "$dump" "$raw" "$log" "$workdir/raw.vmcore" "$workdir/saved.elf" "$workdir/saved.kdump"
"$kd_host" format "$dump" --size 1536M --label e2e-arm64 >"$workdir/format.out" 2>&1 ||
	{ cat "$workdir/format.out"; die "kdumpinit format failed"; }
memb=$(numfmt --from=iec "$mem")
truncate -s $((memb + (256 << 20))) "$raw" || die "cannot create $raw"

machine=(-M virt -cpu max,pauth-impdef=on -accel tcg,thread=multi -smp 2 -m "$mem" -nographic)
# The device tree: QEMU's own, with the settings in /chosen. The crash
# kernel inherits /chosen through kexec (drivers/of/kexec.c and
# kexec-tools copy vendor properties), so kdumpinit reads them there.
dtb=$workdir/virt.dtb
qemu-system-aarch64 "${machine[@]}" -machine dumpdtb="$dtb" >"$workdir/dumpdtb.log" 2>&1 ||
	{ cat "$workdir/dumpdtb.log"; die "qemu dumpdtb failed"; }
fdtput -t s "$dtb" /chosen kdumpinit,conf "dev = SERIAL=kdump-dump" "level = $level" ||
	die "fdtput /chosen kdumpinit,conf failed"

drives=()
drive() { drives+=(-drive "file=$1,format=raw,if=none,id=$2" -device "virtio-blk-pci,drive=$2,serial=$3"); }
drive "$dump" d1 kdump-dump
drive "$raw" d2 kdump-raw
qemu=(qemu-system-aarch64 "${machine[@]}" -no-reboot -dtb "$dtb" -kernel "$kernel" -initrd "$stage1"
	-append "console=ttyAMA0 crashkernel=$ck panic=10 e2e.append=$([ $noraw = 1 ] && echo - || echo rdinit=/testinit,e2e.mode=arm64) e2e.kexec=$([ $loader = own ] && echo 0 || echo 1)${seed:+ e2e.seed=$seed}"
	"${drives[@]}")
say "qemu: ${qemu[*]}"

declare -A at=()
t_qemu=$(now)
{ timeout "$tmo" "${qemu[@]}" </dev/null 2>&1; echo "__QEMU_RC__ $?"; } |
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in "__QEMU_RC__ "*) echo "${line#* }" >"$workdir/qemu.rc"; continue ;; esac
		printf '%s\n' "$line" >>"$log"
		m=
		case $line in
		*"e2e-stage1: crash kernel armed"*) m=armed ;;
		*"e2e-stage1: crashing"*) m=crashing ;;
		*"sysrq: Trigger a crash"*) m=crash crashed=1 ;;
		*"Booting Linux on physical CPU"*) [ -z "${crashed:-}" ] || m=crashboot ;;
		*"e2e-testinit: up at"*) m=crashup ;;
		*"e2e-testinit: raw copy done"*) m=rawdone ;;
		*"kdumpinit: "*"starting as PID 1"*) m=kdstart ;;
		*"kdumpinit: capture finished"*) m=captured ;;
		*kdumpinit:*"final action: "*) m=final ;;
		esac
		[ -z "$m" ] || echo "$m $(since "$t_qemu")" >>"$workdir/milestones"
	done
d_qemu=$(since "$t_qemu")
qrc=$(cat "$workdir/qemu.rc" 2>/dev/null || echo "?")
while read -r k v; do at[$k]=$v; done <"$workdir/milestones" 2>/dev/null
mv -f "$workdir/milestones" "$workdir/milestones.last" 2>/dev/null
rm -f "$workdir/qemu.rc"
ms() { [ -n "${at[$1]:-}" ] && echo "${at[$1]}s" || echo "-"; }

post=$workdir/crash-console.log
sed -n '/Trigger a crash/,$p' "$log" >"$post"
case $qrc in
0) step "QEMU exited by itself after ${d_qemu}s" ;;
124) failed "QEMU did not exit within ${tmo}s (timeout)" ;;
*) failed "QEMU exited with status $qrc" ;;
esac
if grep -q "e2e-stage1: crash kernel armed" "$log"; then
	pass "armed by the arm64 kdumpinit: $(grep -m1 -o 'e2e-stage1: crash kernel armed.*' "$log")"
else
	failed "crash kernel not armed: $(grep -m1 -e 'e2e-stage1: FAIL' -e 'kdumpinit: error' "$log")"
fi
if [ $loader = own ]; then
	if grep -q "kdumpinit: own arm64 loader: Image 0x" "$log" && ! grep -q "falling back to kexec-tools" "$log"; then
		pass "armed by kdumpinit's own loader: $(grep -m1 -o 'own arm64 loader: .*' "$log")"
	else
		failed "not armed by the own loader: $(grep -m1 -e 'own arm64 loader' -e 'kexec-tools' "$log")"
	fi
elif grep -q "kdumpinit: warning: this kernel has no kexec_file_load" "$log"; then
	pass "kdumpinit said on the console that it falls back to kexec-tools"
else
	failed "no console line about the kexec-tools fallback"
fi
# Two crash regions (--crashkernel 'X,high crashkernel=Y,low', a guest
# with RAM above 4 GiB): the own loader puts everything in the high one
# and hands the low one to the crash kernel, which must then boot with
# both as its memory.
case $ck in
*,low*)
	low=$(grep -a -m1 -o 'crashkernel low memory reserved: 0x[0-9a-f]*' "$log" | grep -o '0x[0-9a-f]*$')
	if [ $loader = own ] && [ -n "$low" ] && grep -q "and the low one for the crash kernel's use" "$log" &&
		sed -n '/Trigger a crash/,$p' "$log" | grep -a -q -E "node +0: \[mem 0x0*${low#0x}-"; then
		pass "two crash regions: segments in the high one, the low one ($low) the crash kernel's memory too"
	elif [ $loader = own ]; then
		failed "two crash regions: low '${low:-none}', $(grep -a -m1 -o 'own arm64 loader: Image.*' "$log")"
	fi
	;;
esac
# The record status reads: who built the header, and from how many CPUs
# (-smp 2) and RAM ranges.
want_hdr=$([ $loader = own ] && echo own || echo kexec-tools)
rec=$(grep -a -m1 -o 'e2e-stage1: armed record: .*' "$log")
if echo "$rec" | grep -q "header $want_hdr .*header_cpus 2 header_ram_ranges [1-9]"; then
	pass "the armed record names the header's maker and what it was built from: ${rec#*: }"
else
	failed "armed record: '${rec:-none}', want header $want_hdr, header_cpus 2, header_ram_ranges"
fi
# arm --unload where there is no kexec_file_load: kexec_load unloads.
if grep -q "e2e-stage1: crash kernel unloaded: kexec_crash_loaded 1 -> 0" "$log" &&
	grep -q "kdumpinit: crash kernel unloaded (kexec_load; kexec_crash_loaded=0)" "$log"; then
	pass "arm --unload without kexec_file_load: kexec_load unloaded it (kexec_crash_loaded 1 -> 0)"
else
	failed "arm --unload: $(grep -a -m1 -e 'e2e-stage1: FAIL' -e 'unloading the crash kernel failed.*' -e 'kdumpinit: crash kernel unloaded.*' "$log")"
fi
grep -q "e2e-stage1: crash kernel re-armed after the unload" "$log" &&
	pass "armed again after the unload (kexec_crash_loaded 0 -> 1)" ||
	failed "not armed again after the unload: $(grep -a -m1 'e2e-stage1: FAIL' "$log")"
if [ $loader = own ]; then
	:
elif grep -q "e2e-stage1: kallsyms has no _text" "$log"; then
	grep -q "kdumpinit: kallsyms has no _text .*kexec gets _text = _stext" "$log" &&
		pass "no _text in kallsyms: kdumpinit gave kexec _text = _stext" ||
		failed "kallsyms has no _text, but kdumpinit did not apply the _stext fix"
else
	step "this kernel's kallsyms has _text (no fix needed)"
fi
grep -q "sysrq triggered crash" "$log" && step "first kernel crashed" || failed "first kernel did not crash"
if [ -n "$seed" ]; then
	sl=$(grep -a -m1 -o 'seedload: seed .*' "$log")
	[ -n "$sl" ] && step "$sl" || failed "no seedload line: the seeded load (e2e.seed=$seed) did not run"
fi
if grep "Kernel panic" "$log" | grep -vq "sysrq triggered crash"; then
	failed "crash kernel panicked: $(grep "Kernel panic" "$log" | grep -v "sysrq triggered crash" | head -n 1)"
else
	pass "no panic in the crash kernel"
fi
grep -q "Internal error\|SError\|synchronous external abort" "$post" &&
	failed "the crash kernel faulted: $(grep -m1 "Internal error\|SError\|synchronous external abort" "$post")"
if [ $noraw = 0 ]; then
vmsize=$(grep -m1 -o 'copying /proc/vmcore ([0-9]* bytes)' "$log" | grep -o '[0-9]*')
memk=$((memb / 1024))
# The header is right when /proc/vmcore is about the guest's memory (plus
# the kernel-text segment and headers): the broken one claims ~2^64.
if [ -n "$vmsize" ] && [ "$vmsize" -gt $((memb / 2)) ] && [ "$vmsize" -lt $((memb + (64 << 20))) ]; then
	pass "/proc/vmcore is $vmsize bytes for a $mem guest (a sane ELF core header)"
else
	failed "/proc/vmcore size '${vmsize:-none}' for a $mem guest"
fi
fi
if [ $noraw = 1 ]; then
	grep -q "e2e-testinit" "$log" && failed "/testinit ran with --no-raw" ||
		pass "kdumpinit was the crash kernel's only init"
	vmsize=$(grep -a -o 'kdumpinit: vmcore: /proc/vmcore, .* \([0-9.]*\) MiB of memory' "$post" | head -n 1)
	[ -n "$vmsize" ] && step "$vmsize" || failed "kdumpinit did not open /proc/vmcore"
	say "crash kernel: $(grep -a -m1 -o 'e2e-bad-none\|kdumpinit: plan: MemAvailable [0-9]* MiB' "$post"), $(grep -a -m1 -o 'Memory: [0-9K/]* available' "$post")"
else
grep -q "e2e-testinit: raw copy done" "$log" && step "raw copy of /proc/vmcore taken" ||
	failed "raw copy not taken: $(grep -m1 'e2e-testinit: FAIL' "$log")"
fi
if grep -q "kdumpinit: settings: dev=SERIAL=kdump-dump (dt), level=$level (dt)" "$post"; then
	pass "settings from the device tree: $(grep -m1 -o 'kdumpinit: settings: .*' "$post")"
else
	failed "no 'settings: dev=SERIAL=kdump-dump (dt), level=$level (dt)' line: $(grep -m1 -o 'kdumpinit: settings.*' "$post")"
fi
grep -q "kdumpinit: final action: reboot" "$post" &&
	pass "kdumpinit captured and rebooted: $(grep -m1 -o 'kdumpinit: capture finished.*' "$post")" ||
	{ failed "no 'kdumpinit: final action: reboot'; last kdumpinit lines:"; grep "kdumpinit:" "$post" | tail -n 5 | sed 's/^/    /'; }
say "times: armed $(ms armed), crash $(ms crash), crash kernel's first line $(ms crashboot), testinit $(ms crashup), raw copy done $(ms rawdone), kdumpinit started $(ms kdstart), capture finished $(ms captured), reboot $(ms final)"
grep -a -m1 -o "kdumpinit: capture: .* pages kept.*" "$post" | sed 's/^/  /'

if [ $noraw = 1 ]; then
	:
elif end=$("$python" "$top/tests/tools/elfend.py" "$raw" 2>&1); then
	truncate -s "$end" "$raw" && mv -f "$raw" "$workdir/raw.vmcore"
	[ "$end" = "${vmsize:-}" ] && pass "raw vmcore: $end bytes, as /proc/vmcore was" ||
		failed "raw copy: ELF ends at $end, /proc/vmcore was ${vmsize:-?} bytes"
	if [ -n "$rawout" ]; then
		cp --sparse=always "$workdir/raw.vmcore" "$rawout" && step "raw vmcore stored as $rawout" ||
			failed "cannot store $rawout"
	fi
else
	failed "raw disk has no vmcore: $end"
fi

if [ -f "$workdir/raw.vmcore" ]; then
	if "$python" "$here/hdrcheck.py" "$workdir/raw.vmcore" >"$workdir/hdrcheck.out" 2>&1; then
		pass "the ELF core header ($loader) matches the crashed kernel's VMCOREINFO: image PT_LOAD at kimage_voffset, the rest the linear map"
	else
		failed "the ELF core header ($loader):"; sed 's/^/    /' "$workdir/hdrcheck.out"
	fi
fi
t=$(now)
if "$kd_host" info "$dump" >"$workdir/info.out" 2>&1; then
	pass "kdumpinit info on the x86_64 host (exit 0, $(since "$t")s)"
else
	failed "kdumpinit info exited $?:"; sed 's/^/    /' "$workdir/info.out"
fi
t=$(now)
if "$kd_host" save "$dump" --output "$workdir/saved.elf" --format elf >"$workdir/save.out" 2>&1; then
	pass "kdumpinit save --format elf on the x86_64 host ($(since "$t")s)"
else
	failed "kdumpinit save exited $?:"; sed 's/^/    /' "$workdir/save.out"
fi
if [ -f "$workdir/raw.vmcore" ] && [ -f "$workdir/saved.elf" ]; then
	if "$python" "$top/tests/tools/vmcmp.py" "$workdir/raw.vmcore" "$workdir/saved.elf" >"$workdir/vmcmp.out" 2>&1; then
		pass "vmcmp: every non-zero page of the raw vmcore is in the saved ELF, byte-identical: $(tail -n 1 "$workdir/vmcmp.out")"
	else
		failed "vmcmp:"; tail -n 8 "$workdir/vmcmp.out" | sed 's/^/    /'
	fi
fi
mach=$("$python" -c 'import struct,sys; f=open(sys.argv[1],"rb"); h=f.read(20); print(struct.unpack("<H", h[18:20])[0] if h[:4]==b"\x7fELF" else -1)' "$workdir/saved.elf" 2>/dev/null)
[ "$mach" = 183 ] && pass "the saved ELF is an arm64 vmcore (e_machine 183, EM_AARCH64)" ||
	failed "the saved ELF's e_machine is '${mach:-?}', not 183 (EM_AARCH64)"
# drgn on this host opens the saved arm64 dump (kdump format) and reads
# init_uts_ns. Optional: python3-drgn is no dependency of the project.
if ! "$python" -c 'import drgn' 2>/dev/null; then
	echo "skip drgn: python3-drgn is not installed"; nskip=$((nskip + 1))
elif ! "$kd_host" save "$dump" --output "$workdir/saved.kdump" --format kdump >"$workdir/save-kdump.out" 2>&1; then
	failed "kdumpinit save --format kdump: $(tail -n 1 "$workdir/save-kdump.out")"
elif got=$("$python" "$here/drgnuts.py" "$workdir/saved.kdump" 2>&1); then
	pass "drgn opens the saved arm64 kdump file and reads init_uts_ns: $got"
else
	failed "drgn on the saved kdump file: $got"
fi
if "$kd_host" dmesg "$dump" >"$workdir/dmesg.out" 2>&1 && grep -q "sysrq: Trigger a crash" "$workdir/dmesg.out"; then
	pass "kdumpinit dmesg on the host: the crashed kernel's log ends in the sysrq crash"
else
	failed "kdumpinit dmesg: $(tail -n 2 "$workdir/dmesg.out" | tr '\n' ' ')"
fi

# Filtering parity (mdparity.sh): upstream makedumpfile 1.7.8 cross-built
# for aarch64 and run under qemu-aarch64-static, against kdumpinit's own
# capture of the same raw vmcore at levels 1, 17 and 31: kept pages
# byte-identical, per-class counts side by side (Debian's 1.7.2 from ROOT
# as a note).
if [ "$mdf" = 1 ] && [ -f "$workdir/raw.vmcore" ]; then
	"$here/mdparity.sh" "$workdir/raw.vmcore" "$workdir/parity" "$root" >"$workdir/mdparity.out" 2>&1
	cat "$workdir/mdparity.out"
	np=$(grep -c '^PASS: ' "$workdir/mdparity.out") nf=$(grep -c '^FAIL: ' "$workdir/mdparity.out")
	npass=$((npass + np)) nfail=$((nfail + nf))
	[ $((np + nf)) -gt 0 ] || failed "mdparity.sh reported nothing"
fi

say "$npass passed, $nfail failed, $nskip skipped ($nstep steps)"
[ $nfail = 0 ]
