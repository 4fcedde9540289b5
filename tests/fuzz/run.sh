#!/bin/bash
# tests/fuzz/run.sh: runs the libFuzzer targets built by tests/fuzz/fuzz.mk.
#
#   tests/fuzz/run.sh smoke SECONDS TARGET...   each target runs every seed
#       of its committed corpus once, then fuzzes for SECONDS
#   tests/fuzz/run.sh long SECONDS TARGET...    each target fuzzes for
#       SECONDS, growing a working corpus kept in $FUZZ_DIR/corpus/TARGET
#
# Targets run one after the other (one core each). Prints one line per step,
# "ok NAME ..." or "FAIL NAME: why", and ends with "N passed, N failed";
# exits non-zero if anything failed. Environment: FUZZ_DIR (default
# build/fuzz) holds the binaries; logs go to FUZZ_DIR/logs, crashing inputs
# to FUZZ_DIR/artifacts/TARGET/ (the log names the file). The committed
# corpus in tests/fuzz/corpus is only read. FUZZ_FLAGS adds libFuzzer flags.
#
# A hang is a failure. Every input, the seeds' replay included, has
# FUZZ_TIMEOUT seconds (default 10; libFuzzer's -timeout: it stops with
# "ALARM: working on the last Unit" and writes a timeout-* artifact), and
# the step fails as "hang". In case libFuzzer itself never answers, each
# step also runs under timeout(1) with room to spare: that is a hang too.
#
# Reach check (smoke): a target that prints "FZ_REACH name=N ..." at exit
# when FZ_REACH is set (fuzz_dumpfile) has its corpus run so, and the
# corpus step fails when a count is below the minimum reach_for gives:
# seeds that all stop at a gate (the claim rule, say) pass every other
# check and only show as lost coverage.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top" || exit 1
FUZZ_DIR=${FUZZ_DIR:-build/fuzz}
mode=${1:-}
secs=${2:-}
shift 2 2>/dev/null
if { [ "$mode" != smoke ] && [ "$mode" != long ]; } || [ -z "$secs" ] || [ $# -eq 0 ]; then
	echo "usage: $0 smoke|long SECONDS TARGET..." >&2
	echo "0 passed, 1 failed"
	exit 2
fi

npass=0 nfail=0
ok() { echo "ok $*"; npass=$((npass + 1)); }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }

# The targets that read the crashed kernel's memory take VMCOREINFO's
# keys and the addresses and top-of-space words of addrs.dict; libFuzzer
# takes one -dict, so the two are joined here.
KERNEL_DICT=$FUZZ_DIR/dict/kernel.dict

# Per-target libFuzzer options: dictionary and largest input.
opts_for() {
	case $1 in
	fuzz_vmcoreinfo) echo "-dict=tests/fuzz/dict/vmcoreinfo.dict -max_len=8192" ;;
	fuzz_memmap|fuzz_dmesg|fuzz_dbgpages) echo "-dict=$KERNEL_DICT -max_len=70000" ;;
	fuzz_dumpfile|fuzz_sealed) echo "-dict=tests/fuzz/dict/dumpfile.dict -max_len=65536" ;;
	fuzz_firmware) echo "-dict=tests/fuzz/dict/firmware.dict -max_len=16384" ;;
	fuzz_config) echo "-dict=tests/fuzz/dict/config.dict -max_len=16384" ;;
	fuzz_vmcore) echo "-dict=tests/fuzz/dict/vmcore.dict -max_len=65536" ;;
	fuzz_initrd) echo "-max_len=16384" ;;
	fuzz_dmtable) echo "-dict=tests/fuzz/dict/dmtable.dict -max_len=2048" ;;
	fuzz_nbd) echo "-dict=tests/fuzz/dict/nbd.dict -max_len=4096" ;;
	*) echo "" ;;
	esac
}

# Per-target minimum counts of the FZ_REACH line over the committed corpus
# (executions: libFuzzer may run an input twice for its leak check).
reach_for() {
	case $1 in
	# a seed past the claim check, one whole dump, one damaged by the
	# harness and held to what damage may cost
	fuzz_dumpfile) echo "loaded=1 complete=1 damaged=1 kept=1" ;;
	# a seed sealed, opened with the key, whole; a tampered one held to
	# what it may cost
	fuzz_sealed) echo "opened=1 complete=1 kept=1" ;;
	# page tables walked, kallsyms read, init_task's lists and stacks
	# found, an arm64 kernel translated
	fuzz_dbgpages) echo "walked=1 ksyms=1 tasks=1 stacks=1 arm64=1" ;;
	*) echo "" ;;
	esac
}

# "" if the log's FZ_REACH line meets the minimums, else what fell short.
reach_short() {
	local log=$1 line want name min got short=""
	line=$(grep -m1 '^FZ_REACH ' "$log")
	[ -n "$line" ] || { echo "no FZ_REACH line"; return; }
	for want in $2; do
		name=${want%%=*} min=${want#*=}
		got=$(sed -n "s/.* $name=\([0-9]*\).*/\1/p" <<<"$line")
		if [ -z "$got" ] || [ "$got" -lt "$min" ]; then
			short="$short $name=${got:-?} (want >= $min)"
		fi
	done
	echo "${short# }"
}

# A failure's first sanitizer or libFuzzer line, and the artifact. A
# timeout, libFuzzer's (exit status 70, "ALARM") or ours (124, 137), is
# said as a hang.
why_failed() {
	local log=$1 line art
	art=$(grep -m1 -o 'Test unit written to [^ ]*' "$log" | sed 's/Test unit written to //')
	# A replay of files writes no artifact: the file it was running.
	[ -n "$art" ] || art=$(sed -n 's/^Running: //p' "$log" | tail -n1)
	if [ "$2" -eq 70 ] || grep -q -E '^ALARM: working on the last Unit|ERROR: libFuzzer: timeout' "$log"; then
		line="hang: an input ran past $FUZZ_TIMEOUT s (libFuzzer -timeout)"
	elif [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
		line="hang: libFuzzer did not end within ${3:-?} s (timeout(1)); the last input it ran is the likely one"
	else
		line=$(grep -m1 -E '^==[0-9]+==ERROR|runtime error|^==[0-9]+== ERROR: libFuzzer|Assertion .* failed|deadly signal|out-of-memory' "$log")
	fi
	echo "${line:-exit status $2}${art:+ (input: $art)}"
}

FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$FUZZ_DIR/logs" "$(dirname "$KERNEL_DICT")"
cat tests/fuzz/dict/vmcoreinfo.dict tests/fuzz/dict/addrs.dict >"$KERNEL_DICT" || exit 1
for t in "$@"; do
	bin=$FUZZ_DIR/$t
	seeds=tests/fuzz/corpus/$t
	if [ ! -x "$bin" ]; then
		fail "$t: $bin is not built (make fuzz-build)"
		continue
	fi
	art=$FUZZ_DIR/artifacts/$t
	mkdir -p "$art"
	read -ra topts <<<"$(opts_for "$t")"
	common=("${topts[@]}" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 -artifact_prefix="$art/"
		-print_final_stats=1)

	if [ "$mode" = smoke ]; then
		log=$FUZZ_DIR/logs/$t-corpus.log
		files=("$seeds"/*)
		# Room for every seed to use its whole limit, and then some.
		guard=$((${#files[@]} * FUZZ_TIMEOUT + 120))
		if [ ! -e "${files[0]}" ]; then
			fail "$t corpus: no seeds in $seeds"
		elif FZ_REACH=1 timeout -k 10 "$guard" "$bin" "${common[@]}" "${files[@]}" >"$log" 2>&1; then
			reach=$(reach_for "$t")
			short=${reach:+$(reach_short "$log" "$reach")}
			got=$(sed -n 's/^FZ_REACH //p' "$log" | head -n1)
			if [ -n "$short" ]; then
				fail "$t corpus: ${#files[@]} seeds, but reach: $short (log: $log)"
			else
				ok "$t corpus: ${#files[@]} seeds${reach:+, reach: $got}"
			fi
		else
			fail "$t corpus: $(why_failed "$log" $? "$guard") (log: $log)"
		fi
		work=$(mktemp -d "$FUZZ_DIR/smoke-$t.XXXXXX")
		dirs=("$work" "$seeds")
	else
		work=$FUZZ_DIR/corpus/$t
		mkdir -p "$work"
		dirs=("$work" "$seeds")
	fi
	log=$FUZZ_DIR/logs/$t-$mode.log
	guard=$((secs + 4 * FUZZ_TIMEOUT + 120))
	# shellcheck disable=SC2086
	timeout -k 10 "$guard" "$bin" "${common[@]}" -max_total_time="$secs" ${FUZZ_FLAGS:-} \
		"${dirs[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1)
	if [ "$rc" -eq 0 ]; then
		ok "$t fuzzing: $secs s, ${execs:-?} execs (${rate:-?}/s), ${cov:-cov: ?}"
	else
		fail "$t fuzzing: $(why_failed "$log" $rc "$guard") (log: $log)"
	fi
	[ "$mode" = smoke ] && rm -rf "$work"
done
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
