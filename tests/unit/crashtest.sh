#!/bin/bash
# kdumpinit test on a machine made of files (--root): status's checks
# first (nothing crashed when not ready), the confirmation, the marker,
# sysrq c written to ROOT/proc/sysrq-trigger; then the next boot's save
# --dir reporting it (a new boot_id): passed with where the dump went and
# the seconds from the panic to the dump's end, failed when the device
# holds no dump or only an older one, nothing reported in the same boot;
# and status showing each state. The real crash and reboot are in the
# cycle suite (tests/cycle: boot 1 crashes through kdumpinit test).
set -u
cd "$(dirname "$0")/../.."
top=$PWD
. tests/lib/suite.sh crashtest
cd "$W" || exit 1

R=$W/root kver=$(uname -r)
mkdir -p "$R/sys/kernel" "$R/run/kdumpinit" "$R/etc/default" "$R/proc/sys/kernel/random" boot
echo 268435456 >"$R/sys/kernel/kexec_crash_size"
echo 1 >"$R/sys/kernel/kexec_crash_loaded"
echo kernel >boot/vmlinuz
echo image >boot/img
touch -d '2026-01-01 10:00' boot/vmlinuz
touch -d '2026-01-01 11:00' boot/img
{
	echo "# kdumpinit arm: what it loaded, for kdumpinit status"
	echo "release $kver"
	echo "kernel $W/boot/vmlinuz"
	echo "kernel_mtime $(stat -c %Y boot/vmlinuz)"
	echo "kernel_size $(stat -c %s boot/vmlinuz)"
	echo "initramfs $W/boot/img"
	echo "initramfs_mtime $(stat -c %Y boot/img)"
	echo "initramfs_size $(stat -c %s boot/img)"
	echo "cpus 1"
	echo "cmdline reset_devices nr_cpus=1 irqpoll panic=10 rdinit=/init"
} >"$R/run/kdumpinit/armed"
"$K" format dev.img --size 96M --label dump >/dev/null 2>&1 || bad setup "format dev.img"
boot() { echo "$1" >"$R/proc/sys/kernel/random/boot_id"; }
boot 11111111-2222-3333-4444-555555555555
S=$R/var/lib/kdumpinit
trig() { : >"$R/proc/sysrq-trigger"; }
trig
tst() { "$K" test --root "$R" --dev "$W/dev.img" "$@" </dev/null >out 2>err; }
has() {	# NAME FILE PATTERN
	if grep -qE -- "$3" "$2"; then ok "$1"; else bad "$1" "no '$3' in $2: $(tr '\n' '|' <"$2" | head -c 400)"; fi
}
st() { "$K" status --root "$R" --dev "$W/dev.img" "$@" >sout 2>&1; }

# Not ready: nothing crashed, no marker.
echo 0 >"$R/sys/kernel/kexec_crash_loaded"
tst --yes
rc=$?
[ $rc = 6 ] && [ ! -e "$S/test" ] && [ ! -s "$R/proc/sysrq-trigger" ] &&
	ok "not-ready (exit 6, no marker, no sysrq: $(tail -n 1 err))" || bad not-ready "exit $rc, marker or trigger written"
echo 1 >"$R/sys/kernel/kexec_crash_loaded"
# No --yes and no terminal: asked nothing, crashed nothing.
tst
rc=$?
[ $rc = 2 ] && [ ! -e "$S/test" ] && [ ! -s "$R/proc/sysrq-trigger" ] && grep -q -- "give --yes" err &&
	ok "no-yes (exit 2: $(head -n 1 err))" || bad no-yes "exit $rc: $(cat err)"
# A state directory that is a link: not followed, nothing crashed.
mkdir -p "$R/var/lib" elsewhere && ln -s "$W/elsewhere" "$S"
tst --yes
rc=$?
[ $rc = 1 ] && [ -z "$(ls elsewhere)" ] && [ ! -s "$R/proc/sysrq-trigger" ] &&
	ok "state-link (exit 1: $(tail -n 1 err))" || bad state-link "exit $rc, $(ls elsewhere)"
rm "$S"
# No sysrq trigger: said, the marker taken back.
rm "$R/proc/sysrq-trigger"
tst --yes
rc=$?
[ $rc = 1 ] && [ ! -e "$S/test" ] && grep -q "sysrq-trigger" err &&
	ok "no-trigger (exit 1, marker removed: $(tail -n 1 err))" || bad no-trigger "exit $rc: $(cat err)"
trig

# Ready: status's report, the marker, c written.
t0=$(date +%s)
tst --yes
rc=$?
[ $rc = 0 ] && [ "$(cat "$R/proc/sysrq-trigger")" = c ] && ok "crash (exit 0, c written)" ||
	bad crash "exit $rc, trigger '$(cat "$R/proc/sysrq-trigger")': $(cat err)"
has report out '^image +current'
has marker "$S/test" "^boot_id=11111111-2222-3333-4444-555555555555$"
mt=$(sed -n 's/^time=//p' "$S/test")
[ -n "$mt" ] && [ "$mt" -ge "$t0" ] && ok "marker.time ($mt)" || bad marker.time "'$mt' before $t0"
st
has status.same-boot sout '^test +asked .* in this boot, and no crash followed'

# The next boot: its save reports. First, the device holds no dump.
boot 66666666-2222-3333-4444-555555555555
st
has status.pending sout "^test +crashed .*; not reported yet"
"$K" save dev.img --dir "$W/crash" --state "$S" >save.out 2>&1
rc=$?
[ $rc = 0 ] && ok "save.no-dump (exit 0)" || bad save.no-dump "exit $rc"
has report.failed save.out "kdumpinit test: FAILED, crashed .*: .*dev.img held no dump from the test's crash"
[ ! -e "$S/test" ] && ok "failed.marker-removed" || bad failed.marker-removed "the marker is still there"
has result.failed "$S/last-test" '^result=failed$'
st
has status.failed sout '^last test +FAILED, crashed '
st --json
has status.json sout '"last test"'

# Passed: a dump of a crash after the marker.
boot 11111111-2222-3333-4444-555555555555
trig
tst --yes || bad crash.again "exit $?: $(cat err)"
boot 77777777-2222-3333-4444-555555555555
now=$(date +%s)
"$MKVMCORE" -o vm --mem 32M --crashtime "$now" >/dev/null 2>&1
"$K" capture --vmcore vm --output dev.img --level 1 >cap.out 2>&1 || bad capture "$(tail -n 2 cap.out)"
"$K" save dev.img --dir "$W/crash" --state "$S" >save.out 2>&1
rc=$?
[ $rc = 0 ] && ok "save.passed (exit 0)" || bad save.passed "exit $rc: $(tail -n 3 save.out)"
has report.passed save.out "kdumpinit test: passed, crashed .*: dump saved to $W/crash/[^ ,]+, [0-9]+ s from the panic to the dump's end"
has result.passed "$S/last-test" '^result=passed$'
d=$(sed -n 's/^saved=//p' "$S/last-test")
[ -n "$d" ] && [ -d "$d" ] && [ -e "$d/vmcore" ] && ok "result.saved ($d holds the vmcore)" || bad result.saved "'$d'"
[ ! -e "$S/test" ] && ok "passed.marker-removed" || bad passed.marker-removed "the marker is still there"
st
has status.passed sout "^last test +passed, crashed .*: dump saved to $d, [0-9]+ s from"

# An older dump only: the crash kernel did not capture the test's crash.
boot 11111111-2222-3333-4444-555555555555
trig
rm -f dev.img && "$K" format dev.img --size 96M --label dump >/dev/null 2>&1 || bad setup.again "format dev.img"
tst --yes || bad crash.third "exit $?: $(cat err)"
boot 88888888-2222-3333-4444-555555555555
"$MKVMCORE" -o old --mem 32M --crashtime 1700000000 --seed 9 >/dev/null 2>&1
"$K" capture --vmcore old --output dev.img --level 1 >cap.out 2>&1 || bad capture.old "$(tail -n 2 cap.out)"
"$K" save dev.img --dir "$W/crash" --state "$S" >save.out 2>&1
has report.older save.out "kdumpinit test: FAILED, .*the newest dump saved is older than the test's crash"

# The same boot: nothing to report yet; the marker stays.
mkdir -p same && printf 'time=%s\nboot_id=%s\ndev=\n' "$(date +%s)" "$(cat /proc/sys/kernel/random/boot_id)" >same/test
"$K" save dev.img --dir "$W/crash" --state "$W/same" >save.out 2>&1
[ -e same/test ] && [ ! -e same/last-test ] && ! grep -q "kdumpinit test:" save.out &&
	ok "same-boot (no report, the marker stays)" || bad same-boot "$(cat save.out)"
# A marker that does not parse: removed, said, no result.
mkdir -p junk && echo garbage >junk/test
"$K" save dev.img --dir "$W/crash" --state "$W/junk" >save.out 2>&1
[ ! -e junk/test ] && [ ! -e junk/last-test ] && grep -q "not a test marker" save.out &&
	ok "junk-marker (removed: $(grep -m1 'not a test marker' save.out))" || bad junk-marker "$(cat save.out)"
# --state belongs to --dir.
"$K" save dev.img --output x --state "$S" >o 2>e
rc=$?
[ $rc = 2 ] && grep -q -- "--state goes with --dir" e && ok "state-without-dir (exit 2)" || bad state-without-dir "exit $rc: $(cat e)"
"$K" test --root "$R" extra </dev/null >o 2>e
rc=$?
[ $rc = 2 ] && grep -q "see 'kdumpinit test --help'" e && ok "operand (exit 2)" || bad operand "exit $rc: $(cat e)"
finish
