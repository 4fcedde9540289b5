#!/bin/bash
# Boot-cycle test (issue 13): an "installed system" in QEMU goes through
# real reboots: boot 1 saves nothing, arms and crashes; the crash kernel
# captures and reboots; boot 2 saves dump 1, arms and crashes again; boot 3
# saves dump 2 and powers off. QEMU runs without -no-reboot: every reboot
# boots the same -kernel/-initrd/-append again, and only boot 3's poweroff
# ends it. The configuration comes from firmware only: kdumpinit.dev from
# an SMBIOS type 11 credential, kdumpinit.level from a fw_cfg credential;
# no kdumpinit.* on any command line and no embedded kdumpinit.conf.
#
# Disks of the guest (found by serial):
#   kdump-dump   the dump disk, claimed on the host with `kdumpinit format`
#   kdump-var    ext4 (mkfs.ext4 on the host), stage 1's /var: the boot
#                counter and /var/crash
#   kdump-raw1   receives `dd if=/proc/vmcore` in the crash kernel of boot 1
#   kdump-raw2   the same for boot 2 (the references of the two dumps)
#
# Afterwards the host reads the console log and the disks: the sequence,
# the settings' sources, both saved dumps byte for byte against their raw
# references (kdcmp.py, level 1), --max, and the time from each panic to
# the reboot.
# No pipefail: many checks end in grep -q, which may close the pipe early (SIGPIPE upstream).
set -u

prog=tests/cycle/run.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
	cat <<USAGE
usage: tests/cycle/run.sh [--workdir DIR] [--timeout SEC] [--cpu MODEL] [-h]

  --workdir DIR   where disks, logs and dumps go (default build/cycle)
  --timeout SEC   overall QEMU timeout (default 900); a timeout is a FAIL
  --cpu MODEL     QEMU -cpu (default max,la57=off)
USAGE
}

workdir='' tmo=900 cpu=max,la57=off
while [ $# -gt 0 ]; do
	case $1 in
	--workdir | --timeout | --cpu) [ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--workdir) workdir=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--cpu) cpu=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$prog: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

# The guest's fixed plan: 1 GiB, crashkernel=256M, --max 2, three boots.
mem=1G ck=256M max=2 boots=3 level=1
kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || kver=6.1.0-57-amd64
kernel=/boot/vmlinuz-$kver
busybox=/bin/busybox
kdumpinit=$top/build/kdumpinit
mkinitramfs=$top/initramfs/mkinitramfs
python=/usr/bin/python3
kdcmp=$top/tests/tools/kdcmp.py
vmcmp=$top/tests/tools/vmcmp.py
elfend=$top/tests/tools/elfend.py
cache=$top/build/cycle
[ -n "$workdir" ] || workdir=$cache

npass=0 nfail=0
pass() { echo "ok $*"; npass=$((npass + 1)); }
failed() { echo "FAIL $*"; nfail=$((nfail + 1)); }
# The checks below hand eval their test in single quotes: it expands when it runs.
# shellcheck disable=SC2016,SC2012
check() {	# NAME WHY-IF-NOT CMD...: ok NAME or FAIL NAME: WHY
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else failed "$name: $why"; fi
}
finish() {
	echo "$npass passed, $nfail failed"
	[ "$nfail" = 0 ] && exit 0
	echo "$prog: console log: ${log:-none}; workdir $workdir"
	exit 1
}
die() { failed "setup: $*"; finish; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- prerequisites ---------------------------------------------------------------
for f in "$kernel" "$busybox" "$mkinitramfs" "$kdcmp" "$vmcmp" "$elfend"; do
	[ -e "$f" ] || die "missing $f"
done
[ -x "$kdumpinit" ] || die "missing $kdumpinit (run make first)"
for c in qemu-system-x86_64 mkfs.ext4 debugfs cpio; do
	command -v "$c" >/dev/null || die "$c not found"
done
mkdir -p "$cache" "$workdir" || die "cannot create $workdir"
# A snapshot of the binary: a rebuild during the run must not mix versions.
cp -f "$kdumpinit" "$workdir/kdumpinit.bin" || die "cannot copy $kdumpinit"
kdumpinit=$workdir/kdumpinit.bin

# --- images (cached, rebuilt when an input changes; as tests/e2e/run.sh) --------
build_cached() {	# OUT "INPUTS" COMMAND...
	local out=$1 inputs=$2 key
	shift 2
	# shellcheck disable=SC2086
	key=$( { sha256sum $inputs | cut -d' ' -f1; echo "${*//$workdir/WORKDIR}"; } | sha256sum | cut -d' ' -f1)
	if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	"$@" >"$out.log" 2>&1 || { cat "$out.log" >&2; die "building $out failed"; }
	echo "$key" >"$out.key"
}
t_build=$(now)
# The crash initramfs as a user builds it for a VM whose device comes from
# firmware (kdumpinit-arm with KDUMPINIT_DEVICE empty: -m virtio_blk; no
# -c, no embedded configuration), plus the test's /testinit and busybox.
crash=$cache/crash-$kver.img
build_cached "$crash" "$kdumpinit $here/testinit $busybox $mkinitramfs" \
	"$mkinitramfs" -k "$kver" -o "$crash" -m virtio_blk -m virtio_pci \
	-b "$kdumpinit" -a "$here/testinit:/testinit" -a "$busybox:/bin/busybox"
stage1=$cache/stage1-$kver.img
build_cached "$stage1" "$crash $here/stage1-init $busybox $kernel $mkinitramfs $kdumpinit" \
	"$mkinitramfs" -k "$kver" -o "$stage1" -m virtio_blk -m virtio_pci -m ext4 \
	-b "$here/stage1-init" -a "$busybox:/bin/busybox" -a "$kernel:/vmlinuz" \
	-a "$crash:/crash.img" -a "$kdumpinit:/bin/kdumpinit"
echo "images: $(du -h --apparent-size "$crash" | cut -f1) crash initramfs, $(du -h --apparent-size "$stage1" | cut -f1) stage 1 ($(since "$t_build")s)"

# --- disks -------------------------------------------------------------------------
dump=$workdir/dump.img var=$workdir/var.img log=$workdir/console.log
rm -rf "$dump" "$var" "$workdir"/raw*.img "$workdir"/raw*.vmcore "$log" "$workdir/milestones" \
	"$workdir/crash" "$workdir/crash-max" "$workdir"/*.out "$workdir/dump2.elf" "$workdir"/boot*.log
"$kdumpinit" format "$dump" --size 1536M --label cycle >"$workdir/format.out" 2>&1 ||
	{ cat "$workdir/format.out"; die "kdumpinit format $dump failed"; }
mkfs.ext4 -q -F -L cycle-var "$var" 2G >"$workdir/mkfs.out" 2>&1 ||
	{ cat "$workdir/mkfs.out"; die "mkfs.ext4 $var failed"; }
rawsize=$(((1 << 30) + (256 << 20)))
for b in 1 2; do
	truncate -s $rawsize "$workdir/raw$b.img" || die "cannot create raw$b.img"
done

drives=()
drive() {	# FILE ID SERIAL
	drives+=(-drive "file=$1,format=raw,if=none,id=$2" -device "virtio-blk-pci,drive=$2,serial=$3")
}
drive "$dump" d0 kdump-dump
drive "$var" d1 kdump-var
drive "$workdir/raw1.img" d2 kdump-raw1
drive "$workdir/raw2.img" d3 kdump-raw2
# No -no-reboot: the crash kernel's reboot boots the system again.
# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
qemu=(qemu-system-x86_64 -accel tcg,thread=multi -cpu "$cpu" -smp 2 -m "$mem"
	-nographic -kernel "$kernel" -initrd "$stage1"
	-append "console=ttyS0 crashkernel=$ck panic=10 cycle.max=$max cycle.boots=$boots"
	-smbios "type=11,value=io.systemd.credential:kdumpinit.dev=SERIAL=kdump-dump"
	-fw_cfg "name=opt/io.systemd.credentials/kdumpinit.level,string=$level"
	"${drives[@]}")
echo "qemu: ${qemu[*]}"

# Console line by line into console.log; milestones on the host clock
# (seconds since QEMU started), numbered by the boot they belong to.
t_qemu=$(now) b=0
{ timeout "$tmo" "${qemu[@]}" </dev/null 2>&1; echo "__QEMU_RC__ $?"; } |
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"__QEMU_RC__ "*) echo "${line#* }" >"$workdir/qemu.rc"; continue ;;
		esac
		printf '%s\n' "$line" >>"$log"
		m=
		case $line in
		*"cycle-stage1: boot "*": up at "*) b=${line#*cycle-stage1: boot }; b=${b%%:*}; m="up$b" ;;
		*"Kernel panic - not syncing: sysrq triggered crash"*) m="panic$b" ;;
		*"cycle-testinit: up at"*) m="crashup$b" ;;
		*"cycle-testinit: raw copy done"*) m="rawdone$b" ;;
		*"kdumpinit: "*"starting as PID 1"*) m="kdstart$b" ;;
		*kdumpinit:*"final action: reboot"*) m="reboot$b" ;;
		esac
		[ -z "$m" ] || echo "$m $(since "$t_qemu")" >>"$workdir/milestones"
	done
d_qemu=$(since "$t_qemu")
qrc=$(cat "$workdir/qemu.rc" 2>/dev/null || echo "?")
rm -f "$workdir/qemu.rc"
declare -A at=()
while read -r k v; do [ -n "${at[$k]:-}" ] || at[$k]=$v; done <"$workdir/milestones" 2>/dev/null

# --- the run ----------------------------------------------------------------------------
if [ "$qrc" = 124 ]; then
	failed "qemu: no poweroff within ${tmo}s (timeout)"
else
	check qemu "QEMU exited $qrc (want 0, by boot $boots's poweroff)" [ "$qrc" = 0 ]
fi
nlinux=$(grep -a -c "Linux version" "$log")
check boots "want $boots system boots and $((boots - 1)) crash kernels ($((2 * boots - 1)) kernels), the log has $nlinux" \
	[ "$nlinux" = $((2 * boots - 1)) ]
# Console lines of one boot of the installed system, and of each crash
# kernel (from boot N's panic to boot N+1).
section() {	# N: the log from boot N's stage 1 to boot N+1's
	awk -v n="$1" '
		/cycle-stage1: boot [0-9]+: up at/ { s = $0; sub(/.*cycle-stage1: boot /, "", s); sub(/:.*/, "", s); cur = s + 0 }
		cur == n' "$log"
}
for b in $(seq 1 $boots); do section "$b" >"$workdir/boot$b.log"; done
bootline() { grep -a -o "cycle-stage1: boot $1: $2.*" "$workdir/boot$1.log" | head -n 1; }
saverc() { bootline "$1" "save exit" | grep -o '[0-9]*$'; }
statusrc() { bootline "$1" "status exit" | grep -o '[0-9]*$'; }
# The directory is the crash time, colons included: "saved /var/crash/NAME: N pages".
savedname() { grep -a -o "cycle-save: kdumpinit: saved /var/crash/[^ ]*" "$workdir/boot$1.log" | sed 's|.*/var/crash/||; s|:$||' | head -n 1; }

if grep -a "Command line:" "$log" | grep -q "kdumpinit\."; then
	failed "no-cmdline-config: a kernel command line carries kdumpinit. settings: $(grep -a "Command line:" "$log" | grep "kdumpinit\." | head -n 1)"
else
	pass "no-cmdline-config: no kdumpinit.* on any of the $nlinux kernel command lines"
fi
if cpio -it <"$crash" 2>/dev/null | grep -q "kdumpinit.conf"; then
	failed "no-embedded-config: the crash initramfs holds a kdumpinit.conf"
else
	pass "no-embedded-config: the crash initramfs holds no kdumpinit.conf"
fi

# Boot 1: nothing to save, arm, status, crash.
check boot1.save "save exit '$(saverc 1)' (want 0) or no 'nothing to save': $(grep -a 'cycle-save:' "$workdir/boot1.log" | head -n 2 | tr '\n' ' ')" \
	eval '[ "$(saverc 1)" = 0 ] && grep -a "cycle-save:" "$workdir/boot1.log" | grep -qi "nothing to save"'
for b in $(seq 1 $((boots - 1))); do
	check "boot$b.arm" "$(bootline "$b" "arm exit") $(bootline "$b" FAIL)" \
		eval 'bootline '"$b"' "crash kernel armed" | grep -q .'
	check "boot$b.status" "status exit '$(statusrc "$b")' (want 0 ready) or its device not from smbios: $(grep -a 'cycle-status:' "$workdir/boot$b.log" | tr '\n' '|')" \
		eval '[ "$(statusrc '"$b"')" = 0 ] && grep -a "cycle-status: device" "$workdir/boot'"$b"'.log" | grep -q "SERIAL=kdump-dump (smbios)"'
	check "boot$b.crash" "no sysrq panic after boot $b" grep -a -q "Kernel panic - not syncing: sysrq triggered crash" "$workdir/boot$b.log"
	# The crash kernel: its settings from firmware, the raw copy, the capture, the reboot.
	check "crash$b.settings" "no 'settings: dev=SERIAL=kdump-dump (smbios), level=1 (fw_cfg)': $(grep -a 'kdumpinit: settings' "$workdir/boot$b.log" | tail -n 1)" \
		grep -a -q "kdumpinit: settings: dev=SERIAL=kdump-dump (smbios), level=$level (fw_cfg)" "$workdir/boot$b.log"
	check "crash$b.rawcopy" "$(grep -a 'cycle-testinit: FAIL' "$workdir/boot$b.log" | head -n 1)" \
		grep -a -q "cycle-testinit: raw copy done" "$workdir/boot$b.log"
	check "crash$b.reboot" "no kdumpinit reboot line after boot $b's crash: $(grep -a 'kdumpinit:' "$workdir/boot$b.log" | tail -n 2 | tr '\n' '|')" \
		eval 'sed -n "/sysrq triggered crash/,\$p" "$workdir/boot'"$b"'.log" | grep -a -q "kdumpinit:.*reboot"'
done
if grep -a "Kernel panic" "$log" | grep -vq "sysrq triggered crash"; then
	failed "no-other-panic: $(grep -a "Kernel panic" "$log" | grep -v "sysrq triggered crash" | head -n 1)"
else
	pass "no-other-panic: the only panics are the two sysrq crashes"
fi

# Boots 2 and 3 each save the dump of the crash before them, and mark it.
d1=$(savedname 2) d2=$(savedname 3)
check boot2.save "save exit '$(saverc 2)' (want 0), saved '$d1': $(grep -a 'cycle-save:' "$workdir/boot2.log" | tr '\n' '|')" \
	eval '[ "$(saverc 2)" = 0 ] && [ -n "$d1" ]'
check boot2.marked "after boot 2's save, status does not say the dump is saved: $(grep -a 'cycle-status: device' "$workdir/boot2.log")" \
	eval 'grep -a "cycle-status: device" "$workdir/boot2.log" | grep -q "holds a complete dump, saved"'
check boot3.save "save exit '$(saverc 3)' (want 0), saved '$d2': $(grep -a 'cycle-save:' "$workdir/boot3.log" | tr '\n' '|')" \
	eval '[ "$(saverc 3)" = 0 ] && [ -n "$d2" ] && [ "$d2" != "$d1" ]'
check boot3.no-prune "boot 3's save (--max $max) removed a dump: $(grep -a 'removed old dump' "$workdir/boot3.log")" \
	eval '! grep -a -q "removed old dump" "$workdir/boot3.log"'
check boot3.status "status exit '$(statusrc 3)' (want 6: not armed on the last boot)" [ "$(statusrc 3)" = 6 ]
check boot3.poweroff "boot 3 did not power off: $(tail -n 2 "$workdir/boot3.log" | tr '\n' '|')" \
	eval 'bootline 3 "last boot: powering off" | grep -q .'
"$kdumpinit" save "$dump" --check >"$workdir/check.out" 2>&1
rc=$?
check device.saved "save --check on the dump disk exited $rc (want 1: no dump waits)" [ $rc = 1 ]

# --- the /var disk -------------------------------------------------------------------
cnt=$(debugfs -R "cat /boot-count" "$var" 2>/dev/null)
check var.counter "the boot counter on /var says '$cnt', want $boots" [ "$cnt" = "$boots" ]
mkdir -p "$workdir/crash" && chmod 0700 "$workdir/crash"
debugfs -R "rdump /crash $workdir/crash" "$var" >"$workdir/rdump.out" 2>&1
dirs=$(cd "$workdir/crash/crash" 2>/dev/null && ls | sort | tr '\n' ' ')
want=$(printf '%s\n' "$d1" "$d2" | sort | tr '\n' ' ')
check var.dumps "/var/crash holds '$dirs', want both dumps '$want' (--max $max)" eval '[ -n "$d2" ] && [ "$dirs" = "$want" ]'
for f in vmcore dmesg.txt info.txt; do
	check "var.files.$f" "missing in a dump directory" \
		eval '[ -s "$workdir/crash/crash/$d1/$f" ] && [ -s "$workdir/crash/crash/$d2/$f" ]'
done

# --- byte comparison against the raw references ----------------------------------------
t_cmp=$(now)
for b in 1 2; do
	name=$([ $b = 1 ] && echo "$d1" || echo "$d2")
	raw=$workdir/raw$b.img
	if ! end=$("$python" "$elfend" "$raw" 2>&1); then
		failed "raw$b: the raw disk holds no vmcore: $end"
		continue
	fi
	truncate -s "$end" "$raw" && mv -f "$raw" "$workdir/raw$b.vmcore"
	"$python" "$kdcmp" "$workdir/crash/crash/$name/vmcore" "$workdir/raw$b.vmcore" >"$workdir/kdcmp$b.out" 2>&1
	rc=$?
	check "dump$b.bytes" "kdcmp exited $rc: $(tr '\n' '|' <"$workdir/kdcmp$b.out")" [ $rc = 0 ]
	# kdcmp names its sides after its first use: the first is the saved dump.
	[ $rc = 0 ] && head -n 2 "$workdir/kdcmp$b.out" | sed 's/makedumpfile/saved/g; s/kdumpinit/raw/g; s/^/    /'
done
# The dump disk still holds dump 2 (saved, not erased): as ELF it must
# match its reference too, page by page (vmcmp, as tests/e2e at level 1).
"$kdumpinit" save "$dump" --output "$workdir/dump2.elf" --format elf >"$workdir/save-elf.out" 2>&1 &&
	"$python" "$vmcmp" "$workdir/raw2.vmcore" "$workdir/dump2.elf" >"$workdir/vmcmp2.out" 2>&1
rc=$?
check dump2.vmcmp "save --format elf + vmcmp exited $rc: $(tail -n 5 "$workdir/vmcmp2.out" "$workdir/save-elf.out" 2>/dev/null | tr '\n' '|')" [ $rc = 0 ]
d_cmp=$(since "$t_cmp")

# --- a third save prunes the oldest (--max 2), on a copy of /var/crash ---------------
cp -a "$workdir/crash/crash" "$workdir/crash-max"
"$kdumpinit" save "$dump" --dir "$workdir/crash-max" --max $max --force >"$workdir/save3.out" 2>&1
rc=$?
left=$(cd "$workdir/crash-max" && ls | sort | tr '\n' ' ')
check max.prune "a third save (--max $max --force) exited $rc and left '$left'; want '$d2' and a second copy, '$d1' removed: $(tr '\n' '|' <"$workdir/save3.out")" \
	eval '[ $rc = 0 ] && [ ! -e "$workdir/crash-max/$d1" ] && [ -d "$workdir/crash-max/$d2" ] && [ "$(echo $left | wc -w)" = 2 ] && grep -q "removed old dump.*$d1" "$workdir/save3.out"'

# --- timings ------------------------------------------------------------------------------
ms() { local a=${at[$1]:-} b=${at[$2]:-}; [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1fs", b - a }' || echo "-"; }
for b in $(seq 1 $((boots - 1))); do
	echo "timing cycle $b: panic -> kdumpinit reboot $(ms "panic$b" "reboot$b") (crash kernel up $(ms "panic$b" "crashup$b"), raw copy $(ms "crashup$b" "rawdone$b"), kdumpinit $(ms "kdstart$b" "reboot$b")); panic -> boot $((b + 1)) up $(ms "panic$b" "up$((b + 1))")"
done
echo "timing: qemu ${d_qemu}s (boot 1 up at ${at[up1]:--}s), host comparisons ${d_cmp}s"
finish
