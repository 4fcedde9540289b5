#!/bin/bash
# Sealed dumps (capture --pubkey, docs/CLI.md "Sealed dumps"):
# round trips against the same vmcore captured unsealed; no page of
# memory, no VMCOREINFO or log text and no PAGES payload of the unsealed
# capture on the sealed device (each scan shown to find them on the
# unsealed one); the wrong key refused; every kind of damage a forger who
# re-forges the XXH64s can do (bytes of every chunk, header fields,
# reordered, replayed, repeated and dropped chunks) stops the reader at
# that chunk with nothing unauthenticated in the save; power cuts keep
# what came before; save --dir without the key (sealed.kdi); bad public
# keys write nothing; keygen. The damage is done and judged by
# tests/tools/sealtool.py (its docstring says how).
set -u
cd "$(dirname "$0")/../.."
K=${KDUMPINIT:-$PWD/build/kdumpinit}
MK=${MKVMCORE:-$PWD/build/tools/mkvmcore}
ST=$PWD/tests/tools/sealtool.py
W=$(mktemp -d "${TMPDIR:-/tmp}/kdi-sealed.XXXXXX")
pass=0 fail=0
T=${T:-}
shopt -s extglob
ok() { [[ -z $T || $1 == $T ]] || return 0; echo "ok $1"; pass=$((pass + 1)); }
bad() { [[ -z $T || $1 == $T ]] || return 0; echo "FAIL $1: $2"; fail=$((fail + 1)); }
why=
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name" "${why:-condition false}"; fi; why=; }
trap 'rm -rf "$W"' EXIT

# sealtool's ok/FAIL lines are cases of this suite; a tool that dies
# without naming a failure is one.
tool() {	# LABEL ARGS...: run sealtool, count its cases
	local label=$1 rc n=0 l
	shift
	python3 "$ST" "$@" >"$W/tool.out" 2>"$W/tool.err"
	rc=$?
	while IFS= read -r l; do
		case $l in
		"ok "*) ok "${l#ok }"; n=$((n + 1)) ;;
		"FAIL "*) l=${l#FAIL }; bad "${l%%: *}" "${l#*: }"; n=$((n + 1)) ;;
		esac
	done <"$W/tool.out"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$W/tool.out"; then
		bad "$label" "sealtool exit $rc after $n cases: $(tail -n 2 "$W/tool.err" | tr '\n' ' ')"
	fi
}
has() { grep -qE "$1" "$2" || { why="'$1' not in $(basename "$2"): $(head -c 300 "$2" | tr '\n' '|')"; return 1; }; }
hasnt() { ! grep -qE "$1" "$2" || { why="'$1' in $(basename "$2"): $(grep -m1 -E "$1" "$2")"; return 1; }; }
rc_is() { [ "$RC" = "$1" ] || { why="exit $RC, want $1: $(head -c 300 "$W/err" | tr '\n' ' ')"; return 1; }; }
run() { "$K" "$@" >"$W/out" 2>"$W/err"; RC=$?; }
fmt() { "$K" format "$1" --size "$2" >/dev/null 2>&1; }
cap() {	# DEV VMCORE ARGS...: a fresh device of 512M (sparse), captured to
	rm -f "$1"
	fmt "$1" 512M && "$K" capture --vmcore "$2" --output "$1" "${@:3}" >"$W/cap.out" 2>&1
}
small() {	# DEV SIZE VMCORE ARGS...: the same on a small device (sealtool reads it whole)
	rm -f "$1"
	fmt "$1" "$2" && "$K" capture --vmcore "$3" --output "$1" "${@:4}" >"$W/cap.out" 2>&1
}
found() { sed -n 's/^found \([0-9]*\) of .*/\1/p' "$W/scan"; }
of() { sed -n 's/^found [0-9]* of \([0-9]*\).*/\1/p' "$W/scan"; }

# ---- 9. keygen (first: every other case uses its keys)
"$K" keygen "$W/a.sec" "$W/a.pub" >"$W/kg.out" 2>&1; RC=$?
check "keygen.makes_a_pair" rc_is 0
ida=$(sed -n 's/.*key \([0-9a-f]\{16\}\):.*/\1/p' "$W/kg.out")
"$K" keygen "$W/b.sec" "$W/b.pub" >"$W/kgb.out" 2>&1
idb=$(sed -n 's/.*key \([0-9a-f]\{16\}\):.*/\1/p' "$W/kgb.out")
why="modes $(stat -c %a "$W/a.sec" "$W/a.pub" | paste -sd/)"
check "keygen.secret_key_mode_0600" test "$(stat -c %a "$W/a.sec")" = 600
why="$(cat "$W/a.sec" "$W/a.pub" | sed 's/ [0-9a-f]\{8\}/ ********/' | paste -sd'|')"
check "keygen.one_line_each_hex64" eval 'grep -qxE "kdumpinit-secret-key [0-9a-f]{64}" "$W/a.sec" &&
	grep -qxE "kdumpinit-public-key [0-9a-f]{64}" "$W/a.pub" && test "$(wc -l <"$W/a.sec")" = 1 -a "$(wc -l <"$W/a.pub")" = 1'
cp "$W/a.sec" "$W/a.sec.0"; cp "$W/a.pub" "$W/a.pub.0"
run keygen "$W/a.sec" "$W/new.pub"
check "keygen.refuses_existing_secret" eval 'rc_is 2 && cmp -s "$W/a.sec" "$W/a.sec.0" && test ! -e "$W/new.pub"'
run keygen "$W/new.sec" "$W/a.pub"
check "keygen.refuses_existing_public" eval 'rc_is 2 && cmp -s "$W/a.pub" "$W/a.pub.0" && test ! -e "$W/new.sec"'
ln -s "$W/linked-target" "$W/link.sec"
run keygen "$W/link.sec" "$W/link.pub"
why="exit $RC: $(cat "$W/err")"
check "keygen.never_through_a_link" eval 'test $RC -ne 0 && test ! -e "$W/linked-target" && test ! -e "$W/link.pub"'
why="ids $ida $idb"
check "keygen.two_runs_two_keys" eval '[ -n "$ida" ] && [ -n "$idb" ] && [ "$ida" != "$idb" ] &&
	[ "$(cut -d" " -f2 "$W/a.sec")" != "$(cut -d" " -f2 "$W/b.sec")" ] && [ "$(cut -d" " -f2 "$W/a.pub")" != "$(cut -d" " -f2 "$W/b.pub")" ]'

# ---- the vmcores: 7.1 layout with a real guest's mix (30 % of its kernel
# pages random: stored raw, so the unsealed control finds pages), and an
# arm64 one, which has a printk ring.
"$MK" -o "$W/v256" --mem 256M --mm 7.1 --mix ref >/dev/null 2>&1 &&
	"$MK" -o "$W/v64" --mem 64M --mm 7.1 --mix ref --seed 7 >/dev/null 2>&1 &&
	"$MK" -o "$W/va" --arch arm64 --mem 64M --mm 6.12 --mix ref >/dev/null 2>&1 ||
	{ echo "FAIL setup: mkvmcore"; echo "$pass passed, $((fail + 1)) failed, 0 skipped"; exit 1; }

# ---- 1. round trips: save --key of a sealed capture is the unsealed one's save
for lv in 1 31; do
	cap "$W/p$lv" "$W/v256" --level "$lv" --threads 1
	"$K" save "$W/p$lv" --output "$W/p$lv.kdump" >/dev/null 2>&1
	for th in 1 2; do
		cap "$W/s$lv-$th" "$W/v256" --pubkey "$W/a.pub" --level "$lv" --threads "$th"; RC=$?
		why="capture exit $RC: $(tail -n 2 "$W/cap.out" | tr '\n' ' ')"
		check "roundtrip.level$lv.threads$th.capture" eval 'test $RC = 0 && grep -q "sealing the dump to key $ida" "$W/cap.out"'
		run save "$W/s$lv-$th" --key "$W/a.sec" --output "$W/s$lv-$th.kdump"
		why="exit $RC, $(cat "$W/err")"
		check "roundtrip.level$lv.threads$th.save_key_is_unsealed_save" eval 'test $RC = 0 && test -s "$W/p$lv.kdump" && cmp -s "$W/s$lv-$th.kdump" "$W/p$lv.kdump"'
		run info "$W/s$lv-$th" --key "$W/a.sec"
		check "roundtrip.level$lv.threads$th.info_key_complete" eval 'rc_is 0 && has "^state +complete" "$W/out" && has "sealed +to key $ida .*opened; complete, authenticated" "$W/out"'
	done
done
"$K" save "$W/p31" --output "$W/p31.elf" --format elf >/dev/null 2>&1
run save "$W/s31-2" --key "$W/a.sec" --output "$W/s31.elf" --format elf
check "roundtrip.elf_save_key_is_unsealed_save" eval 'rc_is 0 && cmp -s "$W/s31.elf" "$W/p31.elf"'
run info "$W/s1-1"
check "roundtrip.info_without_key_clear_facts_only" eval 'rc_is 0 && has "^state +complete" "$W/out" &&
	has "^sealed +to key $ida .*no key given" "$W/out" && has "^kernel +7\.1\.0-mkvmcore" "$W/out" &&
	has "^dump level +1$" "$W/out" && hasnt "^(crash time|memory|excluded|kernel log) " "$W/out"'
run info "$W/p1" --key "$W/a.sec"
check "roundtrip.unsealed_capture_has_no_sealed_line" eval 'rc_is 0 && hasnt "^sealed " "$W/out"'
# the kernel log: the arm64 vmcore has one (the x86 one not: said)
cap "$W/sa" "$W/va" --pubkey "$W/a.pub" --level 31
cap "$W/pa" "$W/va" --level 31
"$K" dmesg "$W/va" >"$W/va.log" 2>/dev/null
"$K" dmesg "$W/pa" >"$W/pa.log" 2>/dev/null
run dmesg "$W/sa" --key "$W/a.sec"
why="exit $RC, $(wc -l <"$W/out") lines, the unsealed $(wc -l <"$W/pa.log"), the vmcore $(wc -l <"$W/va.log")"
check "roundtrip.dmesg_key_is_the_log" eval 'test $RC = 0 && grep -q "Booting Linux" "$W/out" && cmp -s "$W/out" "$W/pa.log" && cmp -s "$W/out" "$W/va.log"'
run dmesg "$W/sa"
check "roundtrip.dmesg_without_key_exit_2_prints_nothing" eval 'rc_is 2 && test ! -s "$W/out" && has "needs the secret key" "$W/err"'
run dmesg "$W/s31-1" --key "$W/a.sec"
check "roundtrip.dmesg_key_no_log_said" eval 'test $RC -ne 0 && has "holds no kernel log" "$W/err"'
"$K" save "$W/pa" --output "$W/pa.kdump" >/dev/null 2>&1
run save "$W/sa" --key "$W/a.sec" --output "$W/sa.kdump"
check "roundtrip.arm64_save_key_is_unsealed_save" eval 'rc_is 0 && cmp -s "$W/sa.kdump" "$W/pa.kdump"'
run save "$W/s31-1" --output "$W/nokey.kdump"
check "roundtrip.save_output_without_key_exit_2" eval 'rc_is 2 && has "secret key \(--key FILE\)" "$W/err" && test ! -e "$W/nokey.kdump"'

# ---- 2. no plaintext on the sealed device
for lv in 1 31; do
	python3 "$ST" scan "$W/v256" "$W/p$lv" >"$W/scan" 2>&1
	n=$(found) m=$(of)
	why="$(cat "$W/scan")"
	check "plaintext.level$lv.control_scan_finds_pages_on_unsealed" eval '[ "${n:-0}" -gt 0 ] && grep -q "at 8 of the 8 byte phases" "$W/scan"'
	for th in 1 2; do
		python3 "$ST" scan "$W/v256" "$W/s$lv-$th" >"$W/scan" 2>&1
		why="$(cat "$W/scan")"
		check "plaintext.level$lv.threads$th.no_page_of_memory_on_sealed" eval '[ "$(found)" = 0 ] && [ "$(of)" = "$m" ] && [ "$m" -gt 1000 ]'
	done
done
needles=(OSRELEASE= CRASHTIME= PAGESIZE= 'SYMBOL(' 'NUMBER(' VMCOREINFO)
python3 "$ST" strings "$W/p1" "${needles[@]}" >"$W/str.p"
python3 "$ST" strings "$W/s1-1" "${needles[@]}" >"$W/str.s"
why="unsealed: $(paste -sd, "$W/str.p")"
check "plaintext.control_vmcoreinfo_text_on_unsealed" eval '! grep -q "^0 " "$W/str.p" && test "$(wc -l <"$W/str.p")" = ${#needles[@]}'
why="sealed: $(paste -sd, "$W/str.s")"
check "plaintext.no_vmcoreinfo_text_on_sealed" eval 'test "$(grep -c "^0 " "$W/str.s")" = ${#needles[@]}'
python3 "$ST" strings "$W/pa" "Booting Linux" "Machine model" OSRELEASE= >"$W/str.p"
python3 "$ST" strings "$W/sa" "Booting Linux" "Machine model" OSRELEASE= 6.12.0-mkvmcore >"$W/str.s"
why="unsealed: $(paste -sd, "$W/str.p"); sealed: $(paste -sd, "$W/str.s")"
check "plaintext.no_kernel_log_text_on_sealed" eval '! grep -q "^0 " "$W/str.p" && test "$(grep -c "^0 " "$W/str.s")" = 3 && grep -q "^[1-9][0-9]* 6.12.0-mkvmcore" "$W/str.s"'
python3 "$ST" samples "$W/p1" "$W/s1-1" >"$W/scan" 2>&1; n=$(found) m=$(of)
why="sealed: $(cat "$W/scan")"
check "plaintext.no_unsealed_pages_payload_on_sealed" eval '[ "$n" = 0 ] && [ "${m:-0}" -ge 20 ]'
cap "$W/p1b" "$W/v256" --level 1 --threads 2
python3 "$ST" samples "$W/p1" "$W/p1b" >"$W/scan" 2>&1
why="another unsealed capture: $(cat "$W/scan")"
check "plaintext.control_payload_samples_found_in_another_unsealed_capture" eval '[ "$(found)" = "$m" ]'
python3 "$ST" scan "$W/va" "$W/sa" >"$W/scan" 2>&1
why="$(cat "$W/scan")"
check "plaintext.arm64_no_page_of_memory_on_sealed" eval '[ "$(found)" = 0 ] && [ "$(of)" -gt 100 ]'

# ---- 3. the wrong key
cp --sparse=always "$W/s31-1" "$W/wk"
run save "$W/wk" --key "$W/b.sec" --output "$W/wk.kdump"
check "wrongkey.save_exit_2_names_both_ids" eval 'rc_is 2 && has "sealed to key $ida, and the key given is $idb: not its key" "$W/err" && test ! -e "$W/wk.kdump"'
run dmesg "$W/sa" --key "$W/b.sec"
check "wrongkey.dmesg_exit_2_names_both_ids" eval 'rc_is 2 && has "$ida.*$idb" "$W/err" && test ! -s "$W/out"'
run info "$W/wk" --key "$W/b.sec"
check "wrongkey.info_says_not_its_key" eval 'has "^sealed +to key $ida .*the key given is not its key" "$W/out" && hasnt "^(crash time|excluded) " "$W/out"'
run save "$W/wk" --key "$W/b.sec" --dir "$W/wkdir"
check "wrongkey.save_dir_refuses_moves_nothing" eval 'rc_is 2 && test -z "$(ls -A "$W/wkdir" 2>/dev/null)" &&
	"$K" save "$W/wk" --check >/dev/null 2>&1 && "$K" info "$W/wk" >"$W/out" 2>&1 && has "^state +complete, not saved yet" "$W/out"'
run save "$W/s31-1" --key "$W/a.pub" --output "$W/pubkey.kdump"
check "wrongkey.public_key_given_as_secret_exit_2" eval 'rc_is 2 && test ! -e "$W/pubkey.kdump"'

# ---- 4-6. damage, on small devices (sealtool reads them whole)
small "$W/t31" 8M "$W/v64" --pubkey "$W/a.pub" --level 31 --threads 1
small "$W/t31b" 8M "$W/v64" --pubkey "$W/a.pub" --level 31 --threads 1
small "$W/u31" 8M "$W/v64" --level 31 --threads 1
small "$W/t1" 8M "$W/v64" --pubkey "$W/a.pub" --level 1 --threads 2
small "$W/u1" 8M "$W/v64" --level 1 --threads 2
tool layout layout "$W/t31" "$W/u31"
tool selftest attack selftest "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31" "$W/u31"
tool tamper attack tamper "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31"
tool headers attack headers "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31"
tool cuts attack cuts "$K" "$W/a.sec" "$W/v64" "$W/t1" "$W/u1"
tool reorder attack reorder "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31"
tool replay attack replay "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31" "$W/t31b"
tool dup attack dup "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31"
tool drop attack drop "$K" "$W/a.sec" "$W/v64" "$W/t31" "$W/u31"

# ---- 7. save --dir without the key: sealed.kdi
cp --sparse=always "$W/sa" "$W/sd"
run save "$W/sd" --dir "$W/crash"
kdi=$(find "$W/crash" -name sealed.kdi 2>/dev/null)
why="exit $RC, $(cat "$W/err"); files: $(cd "$W/crash" 2>/dev/null && find . -type f | paste -sd' ')"
check "savedir.without_key_writes_sealed_kdi" eval 'test $RC = 0 && test "$(echo "$kdi" | grep -c .)" = 1 && test "$(stat -c %a "$kdi")" = 600'
why="the device's stream and sealed.kdi's differ"
check "savedir.sealed_kdi_holds_the_stream_as_on_the_device" python3 "$ST" samestream "$W/sd" "$kdi"
run info "$W/sd"
check "savedir.device_marked_saved" eval 'has "^state +complete, saved" "$W/out" && ! "$K" save "$W/sd" --check >/dev/null 2>&1'
run info "$kdi"
check "savedir.info_on_sealed_kdi_without_key" eval 'rc_is 0 && has "^state +complete" "$W/out" && has "^sealed +to key $ida .*no key given" "$W/out"'
run save "$kdi" --key "$W/a.sec" --output "$W/kdi.kdump"
check "savedir.save_key_of_sealed_kdi_is_the_direct_save" eval 'rc_is 0 && cmp -s "$W/kdi.kdump" "$W/pa.kdump" && cmp -s "$W/kdi.kdump" "$W/sa.kdump"'
run dmesg "$kdi" --key "$W/a.sec"
check "savedir.dmesg_key_of_sealed_kdi" eval 'rc_is 0 && cmp -s "$W/out" "$W/va.log"'
python3 "$ST" scan "$W/va" "$kdi" >"$W/scan" 2>&1
why="$(cat "$W/scan")"
check "savedir.no_page_of_memory_in_sealed_kdi" eval '[ "$(found)" = 0 ] && [ "$(of)" -gt 100 ]'
why="$(grep -rlE "Booting Linux|OSRELEASE=" "$W/crash")"
check "savedir.no_log_or_vmcoreinfo_text_in_the_directory" eval '! grep -rqE "Booting Linux|OSRELEASE=" "$W/crash"'

# ---- 8. a bad public key: exit 2, the device as it was (nothing in the clear)
fmt "$W/bk" 48M	# room for a second dump: a capture that went on would write
"$K" capture --vmcore "$W/v64" --output "$W/bk" --level 31 >/dev/null 2>&1	# a dump there already
sum0=$(sha256sum <"$W/bk")
hex=$(cut -d' ' -f2 "$W/a.pub")
printf 'kdumpinit-publik-key %s\n' "$hex" >"$W/bad-prefix.pub"
printf 'kdumpinit-public-key %s\n' "${hex:1}" >"$W/bad-63.pub"
printf 'kdumpinit-public-key %s\n' "${hex:0:63}g" >"$W/bad-nonhex.pub"
printf 'kdumpinit-public-key %s0\n' "$hex" >"$W/bad-65.pub"
printf 'kdumpinit-public-key %064d\n' 0 >"$W/bad-lowpoint.pub"
printf 'kdumpinit-public-key %s\nmore\n' "$hex" >"$W/bad-twolines.pub"
: >"$W/bad-empty.pub"
cp "$W/a.sec" "$W/bad-secret.pub"
for f in prefix 63 nonhex 65 lowpoint twolines empty secret missing; do
	"$K" capture --vmcore "$W/v64" --output "$W/bk" --level 31 --pubkey "$W/bad-$f.pub" >"$W/out" 2>&1; RC=$?
	why="exit $RC: $(head -c 200 "$W/out")"
	check "badpubkey.$f.exit_2_device_unchanged" eval 'test $RC = 2 && test "$(sha256sum <"$W/bk")" = "$sum0"'
done
# the control: the good key's capture does write there
"$K" capture --vmcore "$W/v64" --output "$W/bk" --level 31 --pubkey "$W/a.pub" >"$W/out" 2>&1; RC=$?
why="exit $RC: $(tail -n 1 "$W/out")"
check "badpubkey.control_good_key_writes" eval 'test $RC = 0 && test "$(sha256sum <"$W/bk")" != "$sum0"'

# ---- 10. secret key files, taken as ssh takes an identity: one open to
# group or others, someone else's, a link or not a regular file is refused
# (exit 2) in one line naming the fix, before anything is read or written.
(umask 000 && "$K" keygen "$W/u.sec" "$W/u.pub" >/dev/null 2>&1)
why="mode $(stat -c %a "$W/u.sec" 2>/dev/null)"
check "keygen.secret_key_0600_under_umask_000" test "$(stat -c %a "$W/u.sec" 2>/dev/null)" = 600
cp "$W/a.sec" "$W/m.sec"
for m in 644 640 604 660 620 602 610 601; do
	chmod "$m" "$W/m.sec"
	run info "$W/sa" --key "$W/m.sec"
	why="exit $RC: $(cat "$W/err")"
	check "secretkey.mode_0$m.refused_in_one_line_naming_chmod" eval 'rc_is 2 && test "$(wc -l <"$W/err")" = 1 &&
		has "m\.sec: (readable by|writable by|open to) group or others \(mode 0$m\): run chmod 600 .*/m\.sec$" "$W/err" && test ! -s "$W/out"'
done
chmod 644 "$W/m.sec"
run save "$W/sa" --key "$W/m.sec" --output "$W/m.kdump"
check "secretkey.save_refuses_a_readable_key_writes_nothing" eval 'rc_is 2 && has "readable by group or others \(mode 0644\): run chmod 600" "$W/err" && test ! -e "$W/m.kdump"'
run save "$W/sa" --key "$W/m.sec" --dir "$W/m.dir"
check "secretkey.save_dir_refuses_a_readable_key_moves_nothing" eval 'rc_is 2 && test ! -e "$W/m.dir" && "$K" save "$W/sa" --check >/dev/null 2>&1'
run dmesg "$W/sa" --key "$W/m.sec"
check "secretkey.dmesg_refuses_a_readable_key_prints_nothing" eval 'rc_is 2 && has "run chmod 600" "$W/err" && test ! -s "$W/out"'
for m in 600 400; do
	chmod "$m" "$W/m.sec"
	run info "$W/sa" --key "$W/m.sec"
	check "secretkey.mode_0$m.own_file_taken" eval 'rc_is 0 && has "^sealed +to key $ida .*opened" "$W/out"'
done
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$W/m.sec"
	run info "$W/sa" --key "$W/m.sec"
	check "secretkey.someone_elses_refused_naming_chown" eval 'rc_is 2 && test "$(wc -l <"$W/err")" = 1 && has "owned by uid 65534, not by you \(uid 0\): run chown 0 " "$W/err"'
	chown 0 "$W/m.sec"
else
	# /etc/passwd is root's: a file someone else owns
	run info "$W/sa" --key /etc/passwd
	check "secretkey.someone_elses_refused_naming_chown" eval 'rc_is 2 && has "owned by uid 0, not by you" "$W/err"'
fi
ln -s "$W/a.sec" "$W/keylink.sec"
run info "$W/sa" --key "$W/keylink.sec"
check "secretkey.link_refused" eval 'rc_is 2 && test "$(wc -l <"$W/err")" = 1 && has "keylink\.sec: a symbolic link: give the key file itself" "$W/err"'
mkfifo "$W/fifo.sec"
timeout 20 "$K" info "$W/sa" --key "$W/fifo.sec" >"$W/out" 2>"$W/err"; RC=$?
check "secretkey.fifo_refused_without_waiting" eval 'rc_is 2 && has "fifo\.sec is not a regular file" "$W/err"'
run info "$W/sa" --key "$W"
check "secretkey.directory_refused" eval 'rc_is 2 && has "is not a regular file" "$W/err"'

# No copy of the secret key is left when a command ends: gdb's core of it
# at exit_group holds neither the key's bytes nor its hex. The control, a
# core taken while the key is in use (at the device's open, after the key
# file's), finds it: the search can fail.
keycopies() {	# CORE: copies of a.sec's key (its 32 bytes, its hex) in CORE
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read(); h = open(sys.argv[2]).read().split()[1]
print(d.count(bytes.fromhex(h)) + d.count(h.encode()))' "$1" "$W/a.sec" 2>/dev/null || echo error
}
core_of() {	# CORE CONTINUES ARGS...: gcore of kdumpinit ARGS at an exit_group, or at
	# the entry of open(at) number CONTINUES/2+1
	local core=$1 n=$2 ex=(-ex 'catch syscall exit_group') i
	shift 2
	rm -f "$core"
	[ "$n" = 0 ] || ex=(-ex 'catch syscall open openat')
	ex+=(-ex run)
	for ((i = 0; i < n; i++)); do ex+=(-ex continue); done
	gdb -q -batch "${ex[@]}" -ex "gcore $core" --args "$K" "$@" >"$W/gdb.out" 2>&1
}
if command -v gdb >/dev/null; then
	core_of "$W/core" 2 info "$W/sa" --key "$W/a.sec"
	n=$(keycopies "$W/core")
	why="$n copies; gdb: $(tail -n 2 "$W/gdb.out" | tr '\n' ' ')"
	check "secretkey.memory.control_key_found_while_in_use" eval '[ "$n" != error ] && [ "$n" -ge 1 ]'
	rm -rf "$W/core.dir"
	for c in "info|info $W/sa --key $W/a.sec" "dmesg|dmesg $W/sa --key $W/a.sec" \
		"save_output|save $W/sa --key $W/a.sec --output $W/core.kdump --force" \
		"save_dir|save $W/sa --key $W/a.sec --dir $W/core.dir --keep-device"; do
		# shellcheck disable=SC2086 # the words of the command
		core_of "$W/core" 0 ${c#*|}
		n=$(keycopies "$W/core")
		why="$n copies in the core at exit; gdb: $(tail -n 2 "$W/gdb.out" | tr '\n' ' ')"
		check "secretkey.memory.${c%%|*}.no_copy_at_exit" eval 'test -s "$W/core" && [ "$n" = 0 ]'
	done
	rm -f "$W/core"
else
	bad "secretkey.memory" "gdb is not installed (make setup)"
fi

# ---- 11. info --key on a sealed copy (sealed.kdi, section 7): the claim
# the dump was written under is START's, vouched for by SEAL's tag, not the
# copy's own; without the key, or with START changed, only the copy's.
dev_claim=$("$K" info "$W/sd" | sed -n 's/^claim \+\([0-9a-f-]\{36\}\).*/\1/p')
kdi_claim=$("$K" info "$kdi" | sed -n 's/^claim \+\([0-9a-f-]\{36\}\).*/\1/p')
run info "$kdi" --key "$W/a.sec"
why="device $dev_claim, copy $kdi_claim: $(grep '^claim' "$W/out")"
check "sealedcopy.info_key_claim_is_starts_then_the_copys" eval 'rc_is 0 && [ -n "$dev_claim" ] && [ "$dev_claim" != "$kdi_claim" ] &&
	has "^claim +$dev_claim \(the dump.s, authenticated\); this file.s: $kdi_claim \(label sealed copy\)$" "$W/out"'
run info "$kdi"
check "sealedcopy.info_without_key_claim_is_the_copys" eval 'has "^claim +$kdi_claim \(label sealed copy\)$" "$W/out" && hasnt "authenticated\)" "$W/out"'
run info "$W/sd" --key "$W/a.sec"
check "sealedcopy.device_claim_is_its_own_when_they_agree" eval 'rc_is 0 && has "^claim +$dev_claim$" "$W/out"'
cp --sparse=always "$kdi" "$W/forged.kdi"
python3 -c 'import sys
sys.path.insert(0, sys.argv[2]); import sealtool as s
img = bytearray(open(sys.argv[1], "rb").read())
c = [c for c in s.chunks(img) if c.type == s.START][0]
img[c.off + 48 + 32:c.off + 48 + 48] = bytes(range(16))	# START.sb_uuid
s.reforge(img, c.off)
open(sys.argv[1], "wb").write(img)' "$W/forged.kdi" "$(dirname "$ST")"
run info "$W/forged.kdi" --key "$W/a.sec"
why="exit $RC: $(head -n 6 "$W/out" | tr '\n' '|')"
check "sealedcopy.forged_start_claim_not_shown_as_the_dumps" eval 'test $RC != 0 && hasnt "00010203-0405" "$W/out" && hasnt "authenticated\);" "$W/out"'

echo "$pass passed, $fail failed, 0 skipped"
[ $fail = 0 ]
