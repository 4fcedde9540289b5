#!/bin/bash
# Suite crash-kernel-host: the dedicated crash kernel and crashkernel=,cma
# on the host side, black-box and without loading anything (arm --dry-run
# and status against a fake /sys, /proc and /run given with --root):
#   - arm's reading of a kernel image: the release from a bzImage's header
#     or an arm64 Image's banner, its PE signature, on synthetic images
#     (every field at an edge) and on the real ones when they are here;
#   - --initramfs left out: only for a dedicated kernel (*-kdumpinit);
#   - lockdown (securityfs' lockdown file): an unsigned image is refused
#     before loading with exit 9, a signed one goes on; none lets all by;
#   - both parts of the reservation in status, and a crashkernel=,cma the
#     kernel did not honour (no CMA support, reserved less, unreadable);
#   - --cpus auto counting the CMA part, by the dedicated kernel's rule;
#   - dist/kdumpinit-arm with KDUMPINIT_CRASH_KERNEL: the dedicated
#     kernel armed as it is, nothing built; under lockdown the stock
#     kernel and its image, with the reason status then prints.
set -u
cd "$(dirname "$0")/../.."
top=$PWD
K=${KDUMPINIT:-$PWD/build/kdumpinit}
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-ck.XXXXXX")
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
# expect NAME WANT-RC PATTERN CMD...: the exit code, and PATTERN (ERE) in
# stdout + stderr.
expect() {
	local n=$1 want=$2 pat=$3
	shift 3
	"$@" >"$W/out" 2>&1
	local rc=$?
	if [ "$want" != any ] && [ "$rc" != "$want" ]; then
		bad "$n" "exit $rc, wanted $want: $(tr '\n' '|' <"$W/out")"
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" "$W/out"; then
		bad "$n" "no /$pat/ in: $(tr '\n' '|' <"$W/out")"
	else
		ok "$n"
	fi
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
[ -x "$K" ] || { bad setup "$K is missing (make)"; finish; }

# ---- synthetic images ------------------------------------------------
# mkimg.py KIND RELEASE SIGNED OUT: a bzImage (its setup header: HdrS,
# protocol 2.15, kernel_version -> "RELEASE (...) #1", init_size) or an
# arm64 Image (its magic, and "Linux version RELEASE" across a 64 KiB
# boundary, where a scan in blocks would cut it), each with a PE header
# whose certificate table is filled (SIGNED=1), empty (0), or points past
# the end of the file (2: not a signature).
cat >"$W/mkimg.py" <<'EOF'
import struct, sys
kind, rel, signed, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
size = 0x30000
b = bytearray(size)
b[0:2] = b"MZ"
struct.pack_into("<I", b, 0x3c, 0x40)
b[0x40:0x44] = b"PE\0\0"
struct.pack_into("<HH", b, 0x40 + 4, 0x8664 if kind == "bz" else 0xaa64, 1)
struct.pack_into("<H", b, 0x40 + 20, 240)          # SizeOfOptionalHeader
opt = 0x40 + 24
struct.pack_into("<H", b, opt, 0x20b)              # PE32+
struct.pack_into("<I", b, opt + 108, 16)           # NumberOfRvaAndSizes
cert = {1: (0x20000, 0x200), 0: (0, 0), 2: (size - 0x10, 0x200)}[signed]
struct.pack_into("<II", b, opt + 144, *cert)
if kind == "bz":
    b[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", b, 0x206, 0x20f)
    struct.pack_into("<H", b, 0x20e, 0x400 - 0x200)
    s = (rel + " (builder@host) #1 SMP").encode() + b"\0"
    b[0x400:0x400 + len(s)] = s
    struct.pack_into("<I", b, 0x260, 11 << 20)
else:
    b[0x38:0x3c] = b"ARM\x64"
    b[0x2000:0x2010] = b"Linux version x"    # not a release: skipped
    s = ("Linux version " + rel + " (builder@host) #1 SMP").encode()
    at = 0x10000 - 5
    b[at:at + len(s)] = s
open(out, "wb").write(b)
EOF
img() { python3 "$W/mkimg.py" "$@" || bad "mkimg $*" "python3 failed"; }
I=$W/img
mkdir -p "$I"
img bz 7.3.4-kdumpinit 0 "$I/ded.bz"
img bz 7.3.4-kdumpinit 1 "$I/ded-signed.bz"
img bz 6.1.0-test-amd64 1 "$I/stock-signed.bz"
img bz 6.1.0-test-amd64 0 "$I/stock.bz"
img bz 7.3.4-kdumpinit 2 "$I/ded-badcert.bz"
img arm64 7.3.4-kdumpinit 0 "$I/ded.Image"
img arm64 6.12.0-arm64 0 "$I/stock.Image"
head -c 10 "$I/ded.bz" >"$I/short"
: >"$I/empty"
echo initrd >"$I/initrd"

A=$W/root
mkdir -p "$A/proc" "$A/sys/kernel/security" "$A/sys/devices/system/cpu" "$A/run"
echo "BOOT_IMAGE=/vmlinuz root=/dev/vda1 console=ttyS0" >"$A/proc/cmdline"
echo 0-63 >"$A/sys/devices/system/cpu/online"
echo $((24 << 20)) >"$A/sys/kernel/kexec_crash_size"
arm() { "$K" arm --dry-run --root "$A" "$@"; }
lock() { echo "$1" >"$A/sys/kernel/security/lockdown"; }

# ---- --initramfs left out --------------------------------------------
expect "arm: a dedicated bzImage needs no --initramfs" 0 'rdinit=/init$' arm --kernel "$I/ded.bz"
expect "arm: a dedicated arm64 Image (banner across a 64 KiB block) needs no --initramfs" 0 '' \
	arm --kernel "$I/ded.Image"
expect "arm: a stock kernel without --initramfs is refused (2), its release named" 2 \
	'6\.1\.0-test-amd64, not \*-kdumpinit\): it has no kdumpinit inside, give --initramfs' arm --kernel "$I/stock.bz"
expect "arm: a stock arm64 Image without --initramfs is refused (2)" 2 '6\.12\.0-arm64' arm --kernel "$I/stock.Image"
expect "arm: a stock kernel with --initramfs goes on" 0 '' arm --kernel "$I/stock.bz" --initramfs "$I/initrd"
expect "arm: a 10-byte file is no dedicated kernel (2), release unknown" 2 'release is unknown' arm --kernel "$I/short"
expect "arm: an empty file is no dedicated kernel (2)" 2 'release is unknown' arm --kernel "$I/empty"
expect "arm: a missing kernel is a usage error (2)" 2 'cannot open kernel' arm --kernel "$I/none"
expect "arm --dry-run: an initramfs that does not open is a usage error (2)" 2 \
	'cannot open initramfs .*/none' arm --kernel "$I/stock.bz" --initramfs "$I/none"
# No reservation: said in arm's own words before any loader runs (a
# kexec that would be called records it).
printf '#!/bin/sh\ntouch "%s/kexec-ran"\n' "$W" >"$W/kexec"
chmod +x "$W/kexec"
echo 0 >"$A/sys/kernel/kexec_crash_size"
expect "arm without a reservation: refused (1), how to reserve said in arm's words" 1 \
	'no memory is reserved for a crash kernel: add crashkernel=.*/etc/default/grub.*nothing is armed' \
	env KDUMPINIT_KEXEC="$W/kexec" "$K" arm --root "$A" --kernel "$I/stock.bz" --initramfs "$I/initrd"
if [ -e "$W/kexec-ran" ]; then bad "arm without a reservation: no loader runs" "the kexec ran"
else ok "arm without a reservation: no loader runs"; fi
echo $((24 << 20)) >"$A/sys/kernel/kexec_crash_size"

# ---- lockdown --------------------------------------------------------
lock "none [integrity] confidentiality"
expect "lockdown integrity: the unsigned dedicated kernel is refused (9), with what to do" 9 \
	'is not signed \(kdumpinit.s dedicated crash kernel\), and this kernel is locked down \(integrity\).*signed kernel' \
	arm --kernel "$I/ded.bz"
expect "lockdown integrity: an unsigned stock kernel is refused too (9)" 9 'locked down' \
	arm --kernel "$I/stock.bz" --initramfs "$I/initrd"
expect "lockdown integrity: a signed stock kernel goes on" 0 '' arm --kernel "$I/stock-signed.bz" --initramfs "$I/initrd"
expect "lockdown integrity: a signed dedicated kernel goes on (the kernel judges the key)" 0 '' \
	arm --kernel "$I/ded-signed.bz"
expect "lockdown integrity: a certificate table past the file's end is no signature (9)" 9 'not signed' \
	arm --kernel "$I/ded-badcert.bz"
expect "lockdown integrity: an image with no PE header is unsigned (9)" 9 'not signed' \
	arm --kernel "$I/short"
lock "none integrity [confidentiality]"
expect "lockdown confidentiality: the unsigned dedicated kernel is refused (9)" 9 'locked down \(confidentiality\)' \
	arm --kernel "$I/ded.bz"
lock "[none] integrity confidentiality"
expect "lockdown none: the unsigned dedicated kernel goes on" 0 '' arm --kernel "$I/ded.bz"
# The real images, where this machine has them: Debian signs its kernels.
real=/boot/vmlinuz-$(uname -r)
if [ -r "$real" ]; then
	lock "none [integrity] confidentiality"
	if python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(4096); pe=struct.unpack_from("<I",d,0x3c)[0]; sys.exit(0 if struct.unpack_from("<I",d,pe+24+148)[0] else 1)' "$real" 2>/dev/null; then
		expect "lockdown integrity: this machine's signed $real goes on" 0 '' arm --kernel "$real" --initramfs "$I/initrd"
	else
		expect "lockdown integrity: this machine's unsigned $real is refused (9)" 9 'not signed' arm --kernel "$real" --initramfs "$I/initrd"
	fi
fi
ded=$top/build/crash-kernel/vmlinuz
if [ -r "$ded" ]; then
	lock "none [integrity] confidentiality"
	expect "lockdown integrity: the real dedicated kernel (make crash-kernel) is refused (9)" 9 \
		"kdumpinit.s dedicated crash kernel" arm --kernel "$ded"
	lock "[none] integrity confidentiality"
	expect "the real dedicated kernel needs no --initramfs" 0 '' arm --kernel "$ded"
fi
rm -f "$A/sys/kernel/security/lockdown"
expect "no securityfs lockdown file: the unsigned dedicated kernel goes on" 0 '' arm --kernel "$I/ded.bz"

# ---- both parts of the reservation -------------------------------------
st() { "$K" status --root "$A" --dev /dev/null "$@"; }
cma() { printf '%s\n' "$@" >"$A/sys/kernel/kexec_crash_cma_ranges"; }
echo $((16 << 20)) >"$A/sys/kernel/kexec_crash_size"
echo "console=ttyS0 crashkernel=16M crashkernel=256M,cma" >"$A/proc/cmdline"
cma 00000000a0000000-00000000afffffff
expect "status: 16M fixed + 256M CMA, and their sum" 6 \
	'^reservation +16\.0 MiB fixed \(crashkernel=\) \+ 256\.0 MiB CMA \(crashkernel=,cma; 1 range\): 272\.0 MiB for the crash kernel$' st
cma 00000000a0000000-00000000a7ffffff 0000000100000000-0000000107ffffff
expect "status: CMA in two ranges is added up" 6 '\+ 256\.0 MiB CMA \(crashkernel=,cma; 2 ranges\)' st
echo "console=ttyS0 crashkernel=16M crashkernel=512M,cma" >"$A/proc/cmdline"
expect "status: less CMA reserved than asked is said" 6 'crashkernel=512M,cma asked, 256 MiB reserved' st
rm -f "$A/sys/kernel/kexec_crash_cma_ranges"
echo "console=ttyS0 crashkernel=88M crashkernel=256M,cma" >"$A/proc/cmdline"
expect "status: ,cma on a kernel without crash CMA: a clear word, not a failure" 6 \
	'crashkernel=256M,cma is on the command line, but this kernel has no crash CMA \(it needs 6\.17\+ built with CONFIG_CMA\)' st
cma "zz-yy"
expect "status: an unreadable ranges file is said, its CMA not counted" 6 'cannot be parsed: its CMA is not counted' st
cma 00000000a0000000-00000000afffffff
echo "console=ttyS0 crashkernel=16M" >"$A/proc/cmdline"
expect "status: CMA ranges without ,cma on the command line still count" 6 '\+ 256\.0 MiB CMA' st
grep -q 'kernel has no crash CMA\|asked,' "$W/out" && bad "status: no problem line without ,cma asked" "$(cat "$W/out")" ||
	ok "status: no problem line when nothing was asked that is missing"
lock "none [integrity] confidentiality"
expect "status: lockdown is shown, and what it means for the dedicated kernel" 6 \
	'^lockdown +integrity: only signed crash kernels load' st
rm -f "$A/sys/kernel/security/lockdown"

# ---- --cpus auto with the CMA part -----------------------------------
cpus() {	# NAME WANT ARGS...: nr_cpus=WANT exactly once
	local n=$1 want=$2 out c
	shift 2
	out=$(arm "$@" 2>&1)
	c=$(echo "$out" | grep -o 'nr_cpus=[0-9]*' | tr '\n' ' ')
	[ "$c" = "nr_cpus=$want " ] && ok "$n" || bad "$n" "got '$c' in: $out"
}
rm -f "$A/sys/kernel/kexec_crash_cma_ranges"
echo $((24 << 20)) >"$A/sys/kernel/kexec_crash_size"
cpus "--cpus auto, dedicated, 24M fixed, no CMA: 1" 1 --kernel "$I/ded.bz" --cpus auto
cpus "--cpus auto, stock, 24M fixed, no CMA: 1" 1 --kernel "$I/stock.bz" --initramfs "$I/initrd" --cpus auto
cma 00000000a0000000-00000000afffffff
cpus "--cpus auto, stock, 24M + 256M CMA: the CMA pays for 16 (the cap)" 16 --kernel "$I/stock.bz" --initramfs "$I/initrd" --cpus auto
cpus "--cpus auto, dedicated, 24M + 256M CMA: 16 (the cap)" 16 --kernel "$I/ded.bz" --cpus auto
cma 00000000a0000000-00000000a3ffffff
# 24M + 64M = 88M: the stock rule gives 1 (what 88M fixed gives), the
# dedicated kernel, which loses 19 MB instead of 66 (arm/arm.c), 10:
# avail1 = 92274688 - 4194304 - 19e6 = 69080384, 1 + (69080384 - 20.8e6)
# / 5.15e6 = 10.
cpus "--cpus auto, stock, 24M + 64M CMA (88M in all): 1" 1 --kernel "$I/stock.bz" --initramfs "$I/initrd" --cpus auto
cpus "--cpus auto, dedicated, 24M + 64M CMA (88M in all): 10" 10 --kernel "$I/ded.bz" --cpus auto
rm -f "$A/sys/kernel/kexec_crash_cma_ranges"
# The dedicated rule's steps, fixed part alone: each neighbour is here.
for m in 24:1 44:1 45:2 50:2 51:3 65:5 66:6 116:15 117:16; do
	echo $((${m%:*} << 20)) >"$A/sys/kernel/kexec_crash_size"
	cpus "--cpus auto, dedicated, ${m%:*} MiB: ${m#*:}" "${m#*:}" --kernel "$I/ded.bz" --cpus auto
done
rm -f "$A/sys/kernel/kexec_crash_cma_ranges"

# ---- dist/kdumpinit-arm with a dedicated kernel ------------------------
F=$W/fake
LOG=$W/calls
mkdir -p "$F/boot" "$F/etc/default" "$F/sys/kernel/security" "$F/proc" "$F/opt" "$W/bin"
echo "console=ttyS0" >"$F/proc/cmdline"
# Stub kdumpinit: `arm --dry-run` is the real binary's (it reads the fake
# root: lockdown, the image); anything else is only logged, so nothing is
# ever loaded here. Stub mkinitramfs: logs a build.
cat >"$W/bin/kdumpinit" <<EOF
#!/bin/sh
case " \$* " in *" --dry-run "*) exec "$K" "\$@" ;; esac
echo "kdumpinit \$*" >>"$LOG"
# ARM_RC: what a real load of the dedicated kernel answers (9: the kernel
# itself refused the unsigned image).
case " \$* " in *" --initramfs "*) ;; *" arm "*) exit \${ARM_RC:-0} ;; esac
EOF
# With --pubkey the image is a cpio holding /etc/kdumpinit.conf with its
# "pubkey = HEX" line, as the real one writes it (kdumpinit-arm reads it).
cat >"$W/bin/mkinitramfs" <<EOF
#!/bin/sh
echo "mkinitramfs \$*" >>"$LOG"
pub=
for a in "\$@"; do [ "\$prev" = --pubkey ] && pub=\$a; prev=\$a; done
prev=
for a in "\$@"; do
	if [ "\$prev" = -o ] && [ -n "\$pub" ]; then
		d=\$(mktemp -d); mkdir "\$d/etc"
		echo "pubkey = \$(sed -n 's/^kdumpinit-public-key //p' "\$pub")" >"\$d/etc/kdumpinit.conf"
		(cd "\$d" && echo etc/kdumpinit.conf | cpio -o -H newc --quiet) >"\$a"; rm -rf "\$d"
	elif [ "\$prev" = -o ]; then
		echo built >"\$a"
	fi
	[ "\$prev" = --manifest ] && echo m >"\$a"; prev=\$a
done
[ "\$1" = --print-manifest ] || case " \$* " in *" --print-manifest "*) echo m ;; esac
EOF
chmod +x "$W/bin/kdumpinit" "$W/bin/mkinitramfs"
kv=6.1.0-test
echo vmlinuz >"$F/boot/vmlinuz-$kv"
cp "$I/ded.bz" "$F/opt/crash-kernel"
# Its lists, as make install-crash-kernel puts them beside it (arm/reach.c):
# lists KERNEL [WITHOUT-MODULE] [CONFIG].
lists() {
	printf '%s\n' kernel/drivers/scsi/sd_mod.ko kernel/drivers/scsi/megaraid/megaraid_sas.ko |
		grep -v "/${2:-none}\.ko" >"$1.modules.builtin"
	printf 'sd_mod.alias=scsi:t-0x00*\0' >"$1.modules.builtin.modinfo"
	printf '%s\n' "${3:-CONFIG_INTEL_IOMMU=y}" >"$1.config"
}
lists "$F/opt/crash-kernel"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=/opt/crash-kernel' >"$F/etc/default/kdumpinit"
echo $((24 << 20)) >"$F/sys/kernel/kexec_crash_size"
runarm() { : >"$LOG"; env KDUMPINIT_ROOT="$F" KDUMPINIT="$W/bin/kdumpinit" KDUMPINIT_MKINITRAMFS="$W/bin/mkinitramfs" \
	KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" sh dist/kdumpinit-arm "$@" >"$W/out" 2>&1; }
built() { grep -c '^mkinitramfs' "$LOG"; }
t() { [ "$1" = "$2" ] && ok "$3" || bad "$3" "got $1, wanted $2: $(tr '\n' '|' <"$W/out") $(tr '\n' '|' <"$LOG")"; }

runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/0 "kdumpinit-arm: KDUMPINIT_CRASH_KERNEL names a dedicated kernel: armed, nothing built"
grep -qxF "kdumpinit arm --kernel $F/opt/crash-kernel --cpus auto --append kdumpinit.dev=LABEL=dump --root $F --dev LABEL=dump" "$LOG" &&
	ok "kdumpinit-arm: arm gets the dedicated kernel, no --initramfs" || bad "kdumpinit-arm: dedicated arm args" "$(cat "$LOG")"
grep -q "LABEL=dump is not here: the dedicated crash kernel's drivers are not checked" "$W/out" &&
	ok "kdumpinit-arm: a device not here now: the dedicated kernel armed, its drivers not checked, said" ||
	bad "kdumpinit-arm: device not here" "$(cat "$W/out")"

# The dump device's chain in a fake sysfs: sda <- SCSI device (sd, built
# into the running kernel: no module link) <- target <- host <- HBA
# (megaraid_sas) behind IOMMU dmar0 <- PCIe bridge (pcieport) <- root bus.
S=$F/sys
node() {	# DIR BUS [DRIVER [MODULE]] [MODALIAS]
	mkdir -p "$S/devices/$1" "$S/bus/$2"
	ln -sfn "$S/bus/$2" "$S/devices/$1/subsystem"
	if [ -n "${3:-}" ]; then
		mkdir -p "$S/bus/$2/drivers/$3"
		ln -sfn "$S/bus/$2/drivers/$3" "$S/devices/$1/driver"
		[ -z "${4:-}" ] || { mkdir -p "$S/module/$4"; ln -sfn "$S/module/$4" "$S/bus/$2/drivers/$3/module"; }
	fi
	[ -z "${5:-}" ] || echo "$5" >"$S/devices/$1/modalias"
}
hba=pci0000:00/0000:00:01.0/0000:01:00.0
node pci0000:00/0000:00:01.0 pci pcieport pcieportdrv
node $hba pci megaraid_sas megaraid_sas pci:v00001000d0000005Dsv00001028sd00001F49bc01sc04i00
node $hba/host0 scsi
node $hba/host0/target0:2:0 scsi
node $hba/host0/target0:2:0/0:2:0:0 scsi sd '' scsi:t-0x00
node $hba/host0/target0:2:0/0:2:0:0/block/sda block
echo 8:0 >"$S/devices/$hba/host0/target0:2:0/0:2:0:0/block/sda/dev"
mkdir -p "$S/class/block" "$S/dev/block" "$S/class/iommu" "$S/devices/virtual/iommu/dmar0" "$F/dev"
ln -sfn "$S/devices/$hba/host0/target0:2:0/0:2:0:0/block/sda" "$S/class/block/sda"
ln -sfn "$S/devices/$hba/host0/target0:2:0/0:2:0:0/block/sda" "$S/dev/block/8:0"
ln -sfn "$S/devices/virtual/iommu/dmar0" "$S/class/iommu/dmar0"
ln -sfn "$S/devices/virtual/iommu/dmar0" "$S/devices/$hba/iommu"
: >"$F/dev/sda"
printf '%s\n' 'KDUMPINIT_DEVICE=/dev/sda' 'KDUMPINIT_CRASH_KERNEL=/opt/crash-kernel' >"$F/etc/default/kdumpinit"
rm -f "$F/var/lib/kdumpinit/initrd-$kv.img"*
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/0 "kdumpinit-arm: the dedicated kernel has every driver of the chain and the IOMMU's: armed, nothing built"
grep -qxF "kdumpinit arm --kernel $F/opt/crash-kernel --cpus auto --append kdumpinit.dev=/dev/sda --root $F --dev /dev/sda" "$LOG" &&
	ok "kdumpinit-arm: the chain checked, the dedicated kernel armed" || bad "kdumpinit-arm: chain checked" "$(cat "$LOG") $(cat "$W/out")"
# fallback CASE WITHOUT-MODULE CONFIG NOTE: the stock kernel armed, built,
# with NOTE (fixed string) as --note, said by the service too.
fallback() {
	lists "$F/opt/crash-kernel" "$2" "$3"
	rm -f "$F/var/lib/kdumpinit/initrd-$kv.img"*
	runarm --kver "$kv"; rc=$?
	t "$rc/$(built)" 0/1 "kdumpinit-arm, $1: falls back to the stock kernel, its image built"
	grep -qF -- "--kernel $F/boot/vmlinuz-$kv --initramfs " "$LOG" && grep -qF -- "--note $4" "$LOG" &&
		grep -qF "$4" "$W/out" && ok "kdumpinit-arm, $1: the stock kernel armed, with why as --note, said" ||
		bad "kdumpinit-arm, $1: --note" "$(cat "$LOG") $(cat "$W/out")"
}
fallback "the HBA's driver not built in" megaraid_sas CONFIG_INTEL_IOMMU=y \
	"the dedicated crash kernel lacks megaraid_sas for /dev/sda: the stock kernel is armed (it needs crashkernel=88M or more)"
fallback "the IOMMU's driver not built in" none '# CONFIG_INTEL_IOMMU is not set' \
	"the dedicated crash kernel lacks CONFIG_INTEL_IOMMU (dmar0) for /dev/sda: the stock kernel"
# A network dump device (kdumpinit.dev=nbd://): the dedicated kernel must
# have the NBD client and the drivers of the NIC the route to the server
# goes through here (a fake eth0: virtio_net on virtio_pci, the default
# route), else arm says what it lacks, exit 10, as for a disk.
node pci0000:00/0000:00:03.0 pci virtio-pci virtio_pci pci:v00001AF4d00001000sv00001AF4sd00000001bc02sc00i00
node pci0000:00/0000:00:03.0/virtio2 virtio virtio_net virtio_net virtio:d00000001v00001AF4
mkdir -p "$S/class/net/eth0" "$F/proc/net"
ln -sfn "$S/devices/pci0000:00/0000:00:03.0/virtio2" "$S/class/net/eth0/device"
echo 1 >"$S/class/net/eth0/type"
echo 52:54:00:12:34:56 >"$S/class/net/eth0/address"
printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\neth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n' >"$F/proc/net/route"
nbdsel=nbd://10.0.5.9:10809/host1
nbdargs="kdumpinit.dev=$nbdsel kdumpinit.ip=10.0.2.15/24,10.0.2.2 kdumpinit.pubkey=$(printf '%064x' 9)"
printf '%s\n' kernel/drivers/virtio/virtio_pci.ko >"$F/opt/crash-kernel.modules.builtin"
printf 'virtio_pci.alias=pci:v00001AF4d*sv*sd*bc*sc*i*\0' >"$F/opt/crash-kernel.modules.builtin.modinfo"
echo '# CONFIG_BLK_DEV_NBD is not set' >"$F/opt/crash-kernel.config"
"$K" arm --dry-run --root "$F" --kernel "$F/opt/crash-kernel" --dev "$nbdsel" --append "$nbdargs" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 10 ] && grep -q "the dedicated crash kernel lacks virtio_net, CONFIG_BLK_DEV_NBD (nbd) for $nbdsel (through eth0)" "$W/err" &&
	ok "arm --dev nbd://: the dedicated kernel without the NIC's driver and NBD: exit 10, says both and the interface" ||
	bad "arm --dev nbd://, dedicated kernel lacking" "exit $rc: $(cat "$W/err")"
printf '%s\n' kernel/drivers/virtio/virtio_pci.ko kernel/drivers/net/virtio_net.ko >"$F/opt/crash-kernel.modules.builtin"
echo CONFIG_BLK_DEV_NBD=y >"$F/opt/crash-kernel.config"
"$K" arm --dry-run --root "$F" --kernel "$F/opt/crash-kernel" --dev "$nbdsel" --append "$nbdargs" >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 0 ] && grep -q "kdumpinit.dev=$nbdsel" "$W/out" && ! grep -q "lacks" "$W/err" &&
	ok "arm --dev nbd://: the dedicated kernel with both: armed (dry run)" ||
	bad "arm --dev nbd://, dedicated kernel with both" "exit $rc: $(cat "$W/err")"
rm -rf "$S/class/net" "$F/proc/net"
lists "$F/opt/crash-kernel"
rm -f "$F/opt/crash-kernel.config"
rm -f "$F/var/lib/kdumpinit/initrd-$kv.img"*
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/1 "kdumpinit-arm: no lists beside the dedicated kernel: the stock kernel (cannot tell)"
grep -qF -- "--note the dedicated crash kernel has no built-in list beside it ($F/opt/crash-kernel.modules.builtin" "$LOG" &&
	ok "kdumpinit-arm: no lists: says so as --note" || bad "kdumpinit-arm: no lists note" "$(cat "$LOG")"
lists "$F/opt/crash-kernel"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=/opt/crash-kernel' >"$F/etc/default/kdumpinit"
runarm --kver "$kv" --build-only; rc=$?
t "$rc/$(built)/$(grep -c '^kdumpinit arm' "$LOG")" 0/0/0 "kdumpinit-arm --build-only with a dedicated kernel: nothing to build, nothing armed"
echo "none [integrity] confidentiality" >"$F/sys/kernel/security/lockdown"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/1 "kdumpinit-arm under lockdown: falls back to the stock kernel, its image built"
grep -qF -- "--kernel $F/boot/vmlinuz-$kv --initramfs " "$LOG" && grep -qF -- "--note the dedicated crash kernel /opt/crash-kernel is not signed and this kernel is locked down" "$LOG" &&
	ok "kdumpinit-arm under lockdown: arms the stock kernel, with the reason as --note" ||
	bad "kdumpinit-arm under lockdown: arm args" "$(cat "$LOG")"
grep -q "is not signed and this kernel is locked down" "$W/out" && ok "kdumpinit-arm under lockdown: says so" ||
	bad "kdumpinit-arm under lockdown: says so" "$(cat "$W/out")"
rm -f "$F/sys/kernel/security/lockdown"
export ARM_RC=9
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/1 "kdumpinit-arm: the kernel refuses the dedicated kernel at load (exit 9, no securityfs to tell): the stock kernel"
grep -qF -- "--note the kernel refused the unsigned dedicated crash kernel /opt/crash-kernel" "$LOG" &&
	ok "kdumpinit-arm: the refusal at load is the --note" || bad "kdumpinit-arm: refusal note" "$(cat "$LOG")"
export ARM_RC=1
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 1/0 "kdumpinit-arm: the dedicated kernel fails to load otherwise (exit 1): that failure, no fall-back"
unset ARM_RC
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=stock' >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/1 "kdumpinit-arm: KDUMPINIT_CRASH_KERNEL=stock: the running kernel with its image"
# Builds, not the manifest's print (which every run makes).
builds() { grep '^mkinitramfs' "$LOG" | grep -vc -- --print-manifest; }
runarm --kver "$kv"; rc=$?
t "$rc/$(builds)" 0/0 "kdumpinit-arm again: the image is current, not built again"
# kdumpinit rebuild runs the same script, forced (KDUMPINIT_ARM_SCRIPT: this
# tree's, not an installed one).
: >"$LOG"
env KDUMPINIT_ARM_SCRIPT="$top/dist/kdumpinit-arm" KDUMPINIT_ROOT="$F" KDUMPINIT="$W/bin/kdumpinit" \
	KDUMPINIT_MKINITRAMFS="$W/bin/mkinitramfs" KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" \
	"$K" rebuild --kver "$kv" >"$W/out" 2>&1; rc=$?
t "$rc/$(builds)/$(grep -c '^kdumpinit arm' "$LOG")" 0/1/1 "kdumpinit rebuild: the current image built again (--force), then armed"
: >"$LOG"
env KDUMPINIT_ARM_SCRIPT="$top/dist/kdumpinit-arm" KDUMPINIT_ROOT="$F" KDUMPINIT="$W/bin/kdumpinit" \
	KDUMPINIT_MKINITRAMFS="$W/bin/mkinitramfs" KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" \
	"$K" rebuild --kver "$kv" --build-only >"$W/out" 2>&1; rc=$?
t "$rc/$(builds)/$(grep -c '^kdumpinit arm' "$LOG")" 0/1/0 "kdumpinit rebuild --build-only: built, not armed"
cp "$top/dist/kdumpinit-arm" "$W/arm-open"
chmod 0666 "$W/arm-open"
env KDUMPINIT_ARM_SCRIPT="$W/arm-open" "$K" rebuild >"$W/out" 2>&1; rc=$?
grep -q "not a regular file owned by root and writable only by it: not run" "$W/out" && [ $rc = 1 ] &&
	ok "kdumpinit rebuild: a script others may write is not run (1)" || bad "rebuild: writable script" "exit $rc: $(cat "$W/out")"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=/opt/none' >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)/$(grep -c '^kdumpinit arm' "$LOG")" 1/0/0 "kdumpinit-arm: a KDUMPINIT_CRASH_KERNEL that is not there: an error, nothing armed"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=relative' >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(grep -c '^kdumpinit arm' "$LOG")" 1/0 "kdumpinit-arm: KDUMPINIT_CRASH_KERNEL neither auto, stock nor a path: an error"
cp "$I/stock.bz" "$F/opt/crash-kernel"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=/opt/crash-kernel' >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(grep -c '^kdumpinit arm' "$LOG")" 1/0 "kdumpinit-arm: KDUMPINIT_CRASH_KERNEL names a stock kernel: refused, nothing armed"

# ---- sealed dumps: the services and mkinitramfs carry the keys ----------
# KDUMPINIT_PUBKEY reaches the capture: on the dedicated kernel's command
# line (no image), into the stock kernel's image (mkinitramfs --pubkey);
# a file that is not a key stops arming. KDUMPINIT_KEY reaches save.
mkdir -p "$F/etc/kdumpinit"
"$K" keygen "$F/etc/kdumpinit/dump.key" "$F/etc/kdumpinit/dump.pub" >/dev/null 2>&1
hex=$(sed -n 's/^kdumpinit-public-key //p' "$F/etc/kdumpinit/dump.pub")
cp "$I/ded.bz" "$F/opt/crash-kernel"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=/opt/crash-kernel' \
	'KDUMPINIT_PUBKEY=/etc/kdumpinit/dump.pub' >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/0 "kdumpinit-arm, sealed, dedicated kernel: armed, nothing built"
grep -qxF "kdumpinit arm --kernel $F/opt/crash-kernel --cpus auto --append kdumpinit.pubkey=$hex kdumpinit.dev=LABEL=dump --root $F --dev LABEL=dump" "$LOG" &&
	ok "kdumpinit-arm, sealed, dedicated kernel: kdumpinit.pubkey= on its command line" ||
	bad "kdumpinit-arm, sealed, dedicated kernel: arm args" "$(cat "$LOG")"
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=stock' \
	'KDUMPINIT_PUBKEY=/etc/kdumpinit/dump.pub' >"$F/etc/default/kdumpinit"
rm -f "$F/var/lib/kdumpinit/initrd-$kv.img"*
runarm --kver "$kv"; rc=$?
t "$rc/$(built)" 0/1 "kdumpinit-arm, sealed, stock kernel: its image built"
grep '^mkinitramfs ' "$LOG" | grep -v -- '--print-manifest' | grep -qF -- "--pubkey $F/etc/kdumpinit/dump.pub" &&
	ok "kdumpinit-arm, sealed, stock kernel: mkinitramfs gets --pubkey" ||
	bad "kdumpinit-arm, sealed, stock kernel: mkinitramfs args" "$(cat "$LOG")"
grep -q '^kdumpinit arm .*--initramfs' "$LOG" &&
	ok "kdumpinit-arm, sealed, stock kernel: the image carries the key: armed" ||
	bad "kdumpinit-arm, sealed, stock kernel: not armed" "$(cat "$W/out")"
# The key the crash kernel will read must be KDUMPINIT_PUBKEY's, whole:
# an image (current by its manifest) with another key, or whose config is
# over the 65536 bytes the crash kernel reads, is not armed; nor is a
# KDUMPINIT_APPEND whose kdumpinit.pubkey= would outrank it.
simg=$F/var/lib/kdumpinit/initrd-$kv.img
mkimg() {	# CONFIG TEXT: the image holds it as /etc/kdumpinit.conf
	rm -rf "$W/sealconf" && mkdir -p "$W/sealconf/etc" && printf '%s\n' "$1" >"$W/sealconf/etc/kdumpinit.conf" &&
		(cd "$W/sealconf" && echo etc/kdumpinit.conf | cpio -o -H newc --quiet) >"$simg"
}
# Images built, not counting --print-manifest's look.
builds() { grep '^mkinitramfs' "$LOG" | grep -vc -- --print-manifest; }
other=$(echo "$hex" | tr 0-9a-f 1-9a-f0)
long=$(i=0; while [ $i -lt 1100 ]; do echo "# a long configuration, past the crash kernel's limit of 64 KiB"; i=$((i + 1)); done)
for case in other long gzip; do
	case $case in
	other) mkimg "pubkey = $other" ;;
	long) mkimg "$long
pubkey = $hex" ;;
	gzip) mkimg "level = 3
pubkey = $hex" && gzip -c "$simg" >"$simg.gz" && mv "$simg.gz" "$simg" ;;
	esac
	runarm --kver "$kv"; rc=$?
	if [ $case = gzip ]; then
		t "$rc/$(builds)/$(grep -c '^kdumpinit arm' "$LOG")" 0/0/1 "kdumpinit-arm, sealed: a gzip image carrying the key: armed"
		continue
	fi
	t "$rc/$(builds)/$(grep -c '^kdumpinit arm' "$LOG")" 1/0/0 "kdumpinit-arm, sealed: an image with the $case key: not armed"
	grep -q "does not carry KDUMPINIT_PUBKEY's key whole" "$W/out" && ok "kdumpinit-arm, sealed, $case key: says why" ||
		bad "kdumpinit-arm, sealed, $case key: says why" "$(cat "$W/out")"
done
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=stock' \
	'KDUMPINIT_PUBKEY=/etc/kdumpinit/dump.pub' "KDUMPINIT_APPEND='kdumpinit.pubkey=$other'" >"$F/etc/default/kdumpinit"
runarm --kver "$kv"; rc=$?
t "$rc/$(builds)/$(grep -c '^kdumpinit arm' "$LOG")" 1/0/0 "kdumpinit-arm, sealed: KDUMPINIT_APPEND with another kdumpinit.pubkey=: not armed"
for badkey in secret short missing; do
	case $badkey in
	secret) cp "$F/etc/kdumpinit/dump.key" "$F/etc/kdumpinit/bad.pub" ;;
	short) echo "kdumpinit-public-key ${hex%?}" >"$F/etc/kdumpinit/bad.pub" ;;
	missing) rm -f "$F/etc/kdumpinit/bad.pub" ;;
	esac
	printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_CRASH_KERNEL=/opt/crash-kernel' \
		'KDUMPINIT_PUBKEY=/etc/kdumpinit/bad.pub' >"$F/etc/default/kdumpinit"
	runarm --kver "$kv"; rc=$?
	t "$rc/$(built)/$(grep -c '^kdumpinit arm' "$LOG")" 1/0/0 "kdumpinit-arm: KDUMPINIT_PUBKEY a $badkey file: nothing built or armed"
	grep -q "not arming, dumps would not be sealed" "$W/out" && ok "kdumpinit-arm: KDUMPINIT_PUBKEY $badkey: says why" ||
		bad "kdumpinit-arm: KDUMPINIT_PUBKEY $badkey: says why" "$(cat "$W/out")"
done
printf '%s\n' 'KDUMPINIT_DEVICE=LABEL=dump' 'KDUMPINIT_KEY=/etc/kdumpinit/dump.key' >"$F/etc/default/kdumpinit"
: >"$LOG"
env KDUMPINIT_ROOT="$F" KDUMPINIT="$W/bin/kdumpinit" KDUMPINIT_VENDOR_DEFAULTS="$top/dist/default.kdumpinit" \
	sh dist/kdumpinit-save >"$W/out" 2>&1
grep -qxF "kdumpinit save LABEL=dump --dir /var/crash --key $F/etc/kdumpinit/dump.key --max 3 --min-free 1G --mark-incomplete" "$LOG" &&
	ok "kdumpinit-save: KDUMPINIT_KEY becomes save --key" || bad "kdumpinit-save: KDUMPINIT_KEY" "$(cat "$LOG") $(cat "$W/out")"
# mkinitramfs --pubkey (the real script): the key as the embedded file's
# last value, after -c's; in the manifest; a file that is not a key: no image.
mk() { initramfs/mkinitramfs -k "$(uname -r)" -b "$K" "$@" >"$W/mk.out" 2>&1; }
printf 'level = 1\npubkey = 00\n' >"$W/conf"
if mk -o "$W/sealed.img" -c "$W/conf" --pubkey "$F/etc/kdumpinit/dump.pub" -M "$W/sealed.manifest" &&
   (mkdir -p "$W/x" && cd "$W/x" && cpio -idm etc/kdumpinit.conf <"$W/sealed.img" 2>/dev/null) &&
   [ "$(tail -n 1 "$W/x/etc/kdumpinit.conf")" = "pubkey = $hex" ] && grep -qx 'level = 1' "$W/x/etc/kdumpinit.conf"; then
	ok "mkinitramfs --pubkey: pubkey = HEX is the embedded config's last line, after -c's"
else
	bad "mkinitramfs --pubkey" "$(cat "$W/mk.out") $(cat "$W/x/etc/kdumpinit.conf" 2>/dev/null)"
fi
grep -q "^pubkey [0-9a-f]\{64\} $F/etc/kdumpinit/dump.pub\$" "$W/sealed.manifest" &&
	ok "mkinitramfs --pubkey: the key's sha256 is in the manifest" || bad "mkinitramfs --pubkey: manifest" "$(cat "$W/sealed.manifest")"
for badkey in secret short; do
	case $badkey in
	secret) cp "$F/etc/kdumpinit/dump.key" "$W/bad.pub" ;;
	short) echo "kdumpinit-public-key ${hex%?}" >"$W/bad.pub" ;;
	esac
	rm -f "$W/bad.img"
	mk -o "$W/bad.img" -p "$W/bad.pub"; rc=$?
	[ "$rc" != 0 ] && [ ! -e "$W/bad.img" ] && grep -q "is not a kdumpinit public key" "$W/mk.out" &&
		ok "mkinitramfs -p: a $badkey file is refused, no image" || bad "mkinitramfs -p $badkey" "rc $rc: $(cat "$W/mk.out")"
done

# ---- status of what was armed ------------------------------------------
mkdir -p "$A/run/kdumpinit"
echo 1 >"$A/sys/kernel/kexec_crash_loaded"
armed() {	# KERNEL RELEASE DEDICATED [NOTE]
	{
		echo "release $(uname -r)"
		echo "kernel $1"
		echo "kernel_mtime $(stat -c %Y "$1")"
		echo "kernel_size $(stat -c %s "$1")"
		echo "initramfs ${5:-}"
		echo "initramfs_mtime 0"
		echo "initramfs_size 0"
		echo "cpus 1"
		echo "cmdline reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init kdumpinit.dev=LABEL=dump"
		echo "crash_release $2"
		echo "dedicated $3"
		[ -z "${4:-}" ] || echo "note $4"
	} >"$A/run/kdumpinit/armed"
}
armed "$I/ded.bz" 7.3.4-kdumpinit 1
expect "status: the armed dedicated kernel, its release, kdumpinit inside" any \
	"^armed kernel +dedicated 7\.3\.4-kdumpinit \($I/ded\.bz, kdumpinit inside\)" st
grep -q '^armed image' "$W/out" && bad "status: no image line for a dedicated kernel alone" "$(cat "$W/out")" ||
	ok "status: no 'armed image' line for the dedicated kernel alone"
grep -qE '^image +current \(no manifest beside the kernel: the kdumpinit inside not checked\)' "$W/out" &&
	ok "status: a dedicated kernel with no manifest: current, the kdumpinit inside not checked" ||
	bad "status: dedicated, no manifest" "$(cat "$W/out")"
# KERNEL.manifest (make crash-kernel): the embedded binary's sha256,
# against the kdumpinit that runs status.
printf '# test\ninit %s\nsource x\n' "$(sha256sum <"$K" | cut -d' ' -f1)" >"$I/ded.bz.manifest"
expect "status: the kdumpinit inside the dedicated kernel is this one: current" any '^image +current$' st
printf 'init %s\n' "$(echo other | sha256sum | cut -d' ' -f1)" >"$I/ded.bz.manifest"
expect "status: the dedicated kernel carries another kdumpinit: stale, make crash-kernel again" any \
	'^image +stale: the dedicated kernel .* carries another kdumpinit than this one .*make crash-kernel again' st
rm -f "$I/ded.bz.manifest"
armed "$I/stock.bz" 6.1.0-test-amd64 0 "the dedicated crash kernel /opt/crash-kernel is not signed and this kernel is locked down" "$I/initrd"
expect "status: a stock kernel armed in the dedicated one's stead says why" any \
	'^armed because +the dedicated crash kernel /opt/crash-kernel is not signed and this kernel is locked down' st
grep -qE '^armed kernel +stock 6\.1\.0-test-amd64' "$W/out" && ok "status: the stock kernel's release" ||
	bad "status: the stock kernel's release" "$(cat "$W/out")"
armed "$I/stock.bz" 6.1.0-test-amd64 0 "the dedicated crash kernel lacks megaraid_sas for LABEL=dump: the stock kernel is armed (it needs crashkernel=88M or more)" "$I/initrd"
expect "status: a stock kernel armed because the dedicated one lacks a driver says which, for which device" any \
	'^armed because +the dedicated crash kernel lacks megaraid_sas for LABEL=dump: the stock kernel is armed' st
finish
