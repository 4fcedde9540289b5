#!/bin/bash
# The command line every host command shares (lib/cli.c), black-box:
#   - each command's options, read from its own --help: an unknown one,
#     a value-taking one without its value, and a value given to one that
#     takes none are each one line on stderr, naming the option and where
#     the help is, exit 2, nothing on stdout, never the help;
#   - "--opt value", "--opt=value" and the option after the operand give
#     the same output;
#   - a missing operand or option is named; a relative path works where an
#     absolute one does;
#   - capture --threads 0 is one worker per CPU, as kdumpinit.threads=0.
# Arming's own refusals (no reservation, an --initramfs a dry run cannot
# open) are in tests/unit/crashkernel.sh, beside its kernel images.
set -u
cd "$(dirname "$0")/../.."
top=$PWD
. tests/lib/suite.sh cli
cd "$W" || exit 1

# one_line NAME PATTERN CMD...: exit 2, nothing on stdout, one line on
# stderr matching PATTERN (ERE) and pointing at --help.
one_line() {
	local n=$1 pat=$2
	shift 2
	"$@" >out 2>err
	local rc=$? lines
	lines=$(wc -l <err)
	if [ $rc != 2 ]; then
		bad "$n" "exit $rc, wanted 2: $(tr '\n' '|' <err)"
	elif [ -s out ]; then
		bad "$n" "stdout not empty: $(head -c 200 out | tr '\n' '|')"
	elif [ "$lines" != 1 ]; then
		bad "$n" "$lines lines on stderr, wanted 1: $(head -c 300 err | tr '\n' '|')"
	elif ! grep -qE -- "$pat" err || ! grep -qE -- "see 'kdumpinit [a-z]+ --help'" err; then
		bad "$n" "no /$pat/ and the pointer to --help in: $(cat err)"
	else
		ok "$n"
	fi
}

# ---- every option of every command, from its --help ------------------
cmds="capture save info format dmesg arm modules status keygen"
for c in $cmds; do
	"$K" "$c" --help >"help-$c" 2>&1 || bad "$c --help" "exit $?"
	# "  --name VALUE", "  --name keep|overwrite", "[--name N]": the
	# option, and whether a word follows it.
	grep -oE -- '--[a-z][a-z-]+( [A-Za-z][A-Za-z|]*)?' "help-$c" | sort -u >"opts-$c"
	one_line "$c: an unknown option is one line" "unknown option '--no-such-option'" \
		"$K" "$c" --no-such-option
	one_line "$c: an unknown short option is one line" "unknown option '-Q'" "$K" "$c" -Q
	tested=0
	while read -r opt word; do
		name=${opt#--}
		[ "$name" = help ] && continue
		# Words that are values (capitals, or a|b choices) mark an option
		# that takes one; a lower-case word is prose.
		if [ -n "$word" ] && { [[ $word == *[A-Z]* ]] || [[ $word == *"|"* ]]; }; then
			one_line "$c $opt without its value" "--$name needs a value" "$K" "$c" "$opt"
		elif [ -z "$word" ] || [[ $word != *[A-Z]* ]]; then
			# Options documented with no value: a value is refused. An
			# option that does take one (documented in prose) is
			# refused for its value instead, still in one line.
			"$K" "$c" "$opt=x" >out 2>err
			if grep -q -- "--$name takes no value" err; then
				one_line "$c $opt=x (takes no value)" "--$name takes no value" "$K" "$c" "$opt=x"
			else
				continue
			fi
		fi
		tested=$((tested + 1))
	done <"opts-$c"
	# keygen has no option but --help.
	if [ $tested -ge 1 ] || { [ $c = keygen ] && [ ! -s "opts-$c" ]; }; then
		ok "$c: $tested options checked from --help"
	else
		bad "$c: options checked" "none of $(tr '\n' ' ' <"opts-$c")"
	fi
done

# ---- the operands and options each command needs ---------------------
one_line "capture without --vmcore and --output names both" 'give --vmcore FILE and --output TARGET' "$K" capture
one_line "capture without --output names it" 'give --output TARGET' "$K" capture --vmcore x
one_line "capture with an extra operand names it" "unexpected argument 'extra'" \
	"$K" capture --vmcore x --output y extra
one_line "capture --level 40: the value and the range" "--level: '40' is not a dump level, 0 to 31" \
	"$K" capture --vmcore x --output y --level 40
one_line "info without SOURCE" 'give the dump device or file' "$K" info
one_line "info --dump 0" "--dump: '0' is not a dump's number" "$K" info --dump 0 x
one_line "dmesg with two operands" "unexpected argument 'b'" "$K" dmesg a b
one_line "save with nothing to do" 'give one of --output FILE, --dir DIR and --check' "$K" save
one_line "save --output without SOURCE" 'give the dump device or file \(SOURCE\)' "$K" save --output x
one_line "save --format bad" "--format: 'gz' is not kdump or elf" "$K" save --format gz --output x y
one_line "format without TARGET" 'give the device or file to claim' "$K" format
one_line "status with an operand" "unexpected argument 'x'" "$K" status x
one_line "arm without --kernel" 'give --kernel FILE' "$K" arm
one_line "modules without a selector" 'give a device selector, or --all-disks' "$K" modules
one_line "keygen with one file" 'give SECRET-FILE and PUBLIC-FILE' "$K" keygen a

# ---- --opt value, --opt=value, and options after the operand -------------
"$MKVMCORE" -o v.core --mem 64M --seed 7 >/dev/null 2>&1 || bad "mkvmcore" "failed"
"$K" capture --vmcore v.core --output d.img --level 31 >cap.out 2>&1
rc=$?
[ $rc = 0 ] && ok "capture with relative paths: complete (0)" || bad "capture with relative paths" "exit $rc: $(tail -2 cap.out)"
"$K" info --dump 1 d.img >i1 2>&1; r1=$?
"$K" info --dump=1 d.img >i2 2>&1; r2=$?
"$K" info d.img --dump=1 >i3 2>&1; r3=$?
"$K" info d.img --dump 1 >i4 2>&1; r4=$?
if [ "$r1$r2$r3$r4" = 0000 ] && cmp -s i1 i2 && cmp -s i1 i3 && cmp -s i1 i4 && grep -q '^state' i1; then
	ok "info: --dump 1 and --dump=1, before and after SOURCE, the same report"
else
	bad "info --dump forms" "exits $r1 $r2 $r3 $r4; $(diff i1 i3 | head -3 | tr '\n' '|')"
fi
# (The synthetic vmcore has no kernel log: dmesg says so, the same both ways.)
"$K" dmesg d.img --dump=1 >m1 2>&1; r1=$?
"$K" dmesg --dump 1 d.img >m2 2>&1; r2=$?
[ "$r1" = "$r2" ] && cmp -s m1 m2 && grep -q 'holds no kernel log' m1 &&
	ok "dmesg: --dump=1 after SOURCE as --dump 1 before" || bad "dmesg --dump forms" "exits $r1 $r2: $(cat m1 m2)"
"$K" save --output=a.kdump d.img >/dev/null 2>&1; r1=$?
"$K" save d.img --output b.kdump >/dev/null 2>&1; r2=$?
[ "$r1$r2" = 00 ] && cmp -s a.kdump b.kdump && ok "save: --output=FILE and SOURCE --output FILE write the same file" ||
	bad "save --output forms" "exits $r1 $r2"

# ---- relative paths --------------------------------------------------
"$K" status --dev d.img >s1 2>&1
"$K" status --dev "$W/d.img" >s2 2>&1
if grep -q "$W/d.img.*claimed" s1 && cmp -s s1 s2; then
	ok "status --dev with a relative path: as with the absolute one"
else
	bad "status --dev relative" "$(grep device s1) | $(grep device s2)"
fi
"$K" format sub/x --size 10M >out 2>err
rc=$?
if [ $rc = 4 ] && grep -q "cannot create sub/x: the directory it would go in does not exist" err && [ ! -e sub ]; then
	ok "format into a directory that does not exist: says so (4), makes nothing"
else
	bad "format nodir" "exit $rc: $(cat err)"
fi

# ---- capture --threads 0 ---------------------------------------------
rm -f t0.img
"$K" capture --vmcore v.core --output t0.img --threads 0 >t0.out 2>&1
rc=$?
cpus=$(nproc)
if [ $rc = 0 ] && grep -qE "level 31, $cpus threads?$" t0.out; then
	ok "capture --threads 0: one worker per CPU ($cpus), complete"
else
	bad "capture --threads 0" "exit $rc: $(grep -E 'target:|error' t0.out | tr '\n' '|')"
fi
# ---- save's progress -------------------------------------------------
# A dump big enough that a zlib save takes seconds: progress lines on
# stderr as the capture's (one per 5 % step, at most one a second), rising;
# none with --quiet, and the file is the same.
"$MKVMCORE" -o big.core --mem 384M --zero-pct 0 --seed 9 >/dev/null 2>&1
"$K" capture --vmcore big.core --output big.img --level 0 >/dev/null 2>&1
rm -f big.core
"$K" save big.img --output p1.kdump --threads 1 >p1.out 2>&1; r1=$?
"$K" save big.img --output p2.kdump --threads 1 --quiet >p2.out 2>&1; r2=$?
pcts=$(sed -n 's/^kdumpinit: save: *\([0-9]*\)%  [0-9]*\/[0-9]* MiB of pages, [0-9.]* MiB\/s, [0-9]* MiB written, ETA [0-9]*s$/\1/p' p1.out | tr '\n' ' ')
if [ "$r1$r2" = 00 ] && [ -n "$pcts" ] && echo "$pcts" | awk '{ for (i = 2; i <= NF; i++) if ($i <= $(i - 1)) exit 1 }'; then
	ok "save: progress lines on stderr, rising ($pcts%)"
else
	bad "save progress" "exits $r1 $r2, percentages '$pcts': $(head -c 300 p1.out)"
fi
if ! grep -q 'save: ' p2.out && cmp -s p1.kdump p2.kdump; then
	ok "save --quiet: no progress line, the same file"
else
	bad "save --quiet" "$(head -c 300 p2.out)"
fi
rm -f big.img p1.kdump p2.kdump
finish
