#!/bin/bash
# Runs every suite of `make check` and adds up their "N passed, N failed"
# lines into one closing line. A suite that dies without its line counts as
# one failure, so a crash can never look like a pass.
#
# Suites: the test tools' self-tests, unit tests, synthetic page-filter
# tests, fuzz smoke runs, then real kdump crashes in QEMU (Debian 12's 6.1
# with 4- and 5-level paging, Debian 13's 6.12, and the 88M crashkernel
# floor), then the differential filter test against makedumpfile on the raw
# vmcores those crashes produced. Then the documentation against the
# binary, the host set-up step, and the Debian package in a fresh chroot.
#
# ONLY="NAME..." runs only the suites so named (make check-docs, check-deb).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export KDUMPINIT=$PWD/$BUILD/kdumpinit MKVMCORE=$PWD/$BUILD/tools/mkvmcore
raws=$BUILD/check
mkdir -p "$raws"
pass=0 fail=0

wanted() {	# NAME: is this suite to run (ONLY)?
	[ -z "${ONLY:-}" ] && return 0
	case " $ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

run_suite() {	# NAME COMMAND...
	local name=$1 log out p f
	shift
	wanted "$name" || return 0
	log=$BUILD/tests/$name.log
	mkdir -p "$(dirname "$log")"
	echo "== $name"
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	out=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$out" ]; then
		echo "check: $name printed no result line (exit $rc): counted as a failure"
		fail=$((fail + 1))
		return
	fi
	p=${out%% passed*}
	f=${out#*passed, }
	f=${f%% failed*}
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "check: $name exited $rc with no failure counted: counted as a failure"
		fail=$((fail + 1))
	fi
}

if [ -z "${SKIP_UNIT:-}" ]; then
	run_suite tools bash tests/tools/vmcmp_selftest.sh
	run_suite mdcmp bash tests/filter/mdcmp_selftest.sh
	run_suite unit bash tests/unit/run.sh
	run_suite savecore bash tests/unit/savecore.sh
	run_suite savecore-safety bash tests/unit/savecore_safety.sh
	run_suite modules bash tests/unit/modules.sh
	[ -x tests/mm/run.sh ] && run_suite mm bash tests/mm/run.sh
	[ -f tests/fuzz/fuzz.mk ] && run_suite fuzz make -s -f tests/fuzz/fuzz.mk BUILD="$BUILD" fuzz-smoke
	run_suite docs bash tests/docs/run.sh
	run_suite setup bash tests/setup/run.sh
	run_suite deb bash tests/deb/run.sh
fi

if [ -z "${SKIP_E2E:-}" ]; then
	# The filter suite compares the raw vmcores these runs store: never one
	# a failed or earlier run left behind.
	for r in 6.1-4level 6.1-5level 6.12-4level; do
		wanted "e2e-$r" && rm -f "$raws/raw-$r.vmcore"
	done
	run_suite e2e-6.1-4level bash tests/e2e/run.sh --cpu max,la57=off \
		--raw-out "$raws/raw-6.1-4level.vmcore"
	run_suite e2e-6.1-5level bash tests/e2e/run.sh --cpu max \
		--raw-out "$raws/raw-6.1-5level.vmcore"
	tree=
	{ wanted e2e-6.12-4level || wanted e2e-firmware-6.12; } && tree=$(tests/filter/get-trixie-kernel.sh | sed -n 's/^MODROOT=//p')
	if ! wanted e2e-6.12-4level; then
		:
	elif [ -n "$tree" ]; then
		run_suite e2e-6.12-4level bash tests/e2e/run.sh --cpu max,la57=off --kernel-tree "$tree" \
			--raw-out "$raws/raw-6.12-4level.vmcore" --workdir "$BUILD/e2e/6.12-4level"
	else
		echo "check: Debian 13's kernel could not be fetched: counted as a failure"
		fail=$((fail + 1))
	fi
	# The floor: Debian 12's kernel at crashkernel=88M (22 MB for userspace),
	# kdumpinit the crash kernel's only init, full filtering.
	run_suite e2e-88M bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M \
		--level 31 --workdir "$BUILD/e2e/88M"
	# Firmware only: dev from SMBIOS type 11, the level from a fw_cfg
	# kdumpinit.conf, on Debian 13's kernel (its modules are .ko.xz).
	if wanted e2e-firmware-6.12; then
		run_suite e2e-firmware-6.12 bash tests/e2e/run.sh --cpu max,la57=off --no-raw --level 31 \
			--firmware --kernel-tree "$tree" --workdir "$BUILD/e2e/firmware-6.12"
	fi
	run_suite filter bash tests/filter/run.sh --save-kdump --no-also --levels "1 2 4 8 16 31" \
		"$raws"/raw-*.vmcore
fi

# make check-full: the larger guests at the 88M floor, 1.5 GiB and 6 GiB
# (about 10 more minutes: the 6 GiB guest's load takes most of it).
if [ -n "${FULL:-}" ]; then
	run_suite e2e-88M-1536M bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M \
		--mem 1536M --level 31 --workdir "$BUILD/e2e/88M-1536M"
	run_suite fresh bash tests/fresh/run.sh demo
	run_suite e2e-88M-6G bash tests/e2e/run.sh --cpu max,la57=off --no-raw --crashkernel 88M \
		--mem 6G --level 31 --timeout 1800 --workdir "$BUILD/e2e/88M-6G"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
