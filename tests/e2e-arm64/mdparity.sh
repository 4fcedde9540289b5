#!/bin/bash
# tests/e2e-arm64/mdparity.sh: filtering parity of kdumpinit against upstream
# makedumpfile 1.7.8 built for aarch64, on one arm64 vmcore.
#
#   tests/e2e-arm64/mdparity.sh VMCORE WORKDIR [OLD_ROOT]
#
# makedumpfile 1.7.8 comes from tests/filter-makedumpfile/build-makedumpfile-
# arm64.sh (cross-built from the pinned source, run under qemu-aarch64-static;
# cached in build/filter/arm64). At levels 1, 17 and 31 it filters VMCORE
# into a kdump-compressed file, kdumpinit captures the same VMCORE at the
# same level and saves it as ELF, and kdcmp.py compares the two: the same
# set of non-zero pages kept, with the same bytes (the case that can fail).
# The per-class counts of both (makedumpfile's --message-level 22 report,
# kdumpinit's capture line) are printed side by side; a class that differs
# is said, not failed (kept pages are what users get). OLD_ROOT: the unpacked
# Debian 12 arm64 packages holding its makedumpfile 1.7.2 (tests/e2e-arm64/
# fetch.sh), whose counts are added as a note.
# Prints PASS:/FAIL: lines (run.sh counts them); exits 1 if any failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
vmcore=${1:?usage: mdparity.sh VMCORE WORKDIR [OLD_ROOT]}
w=${2:?usage: mdparity.sh VMCORE WORKDIR [OLD_ROOT]}
old_root=${3:-}
kd_host=$top/build/kdumpinit
python=/usr/bin/python3
nfail=0
pass() { echo "PASS: $*"; }
failed() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
mkdir -p "$w" || exit 1

t=$(now)
if ! ref=$("$top/tests/filter-makedumpfile/build-makedumpfile-arm64.sh" 2>"$w/mdbuild.log"); then
	failed "no makedumpfile 1.7.8 for aarch64: $(grep -m1 error "$w/mdbuild.log")"
	exit 1
fi
md=${ref#makedumpfile-arm64=} md=${md%% (*} how=${ref#* (} how=${how%)}
pass "makedumpfile 1.7.8 for aarch64 under qemu-user ($(since "$t")s): $how"
old=
[ -n "$old_root" ] && [ -x "$old_root/usr/bin/makedumpfile" ] &&
	old=$(command -v qemu-aarch64-static || command -v qemu-aarch64)

# md_counts LOG: makedumpfile's report as "class=N" words
# shellcheck source=tests/filter-makedumpfile/mdcounts.sh
. "$top/tests/filter-makedumpfile/mdcounts.sh"
# kd_counts LOG: kdumpinit capture's "(excluded: zero N, cache N, ...)".
kd_counts() {
	grep -a -m1 -o '(excluded: [^)]*)' "$1" | sed 's/^(excluded: //; s/)$//' | tr -d ',' |
		awk '{ for (i = 1; i < NF; i += 2) printf "%s=%s ", $i, $(i + 1) }'
}
word() { local x; for x in $1; do [ "${x%%=*}" = "$2" ] && { echo "${x#*=}"; return; }; done; echo 0; }

for L in 1 17 31; do
	mdf=$w/md$L.kdump kd=$w/kd$L.img ke=$w/kd$L.elf
	rm -f "$mdf" "$kd" "$ke"
	t=$(now)
	if ! "$md" -d "$L" --message-level 22 "$vmcore" "$mdf" >"$w/md$L.log" 2>&1; then
		failed "level $L: makedumpfile 1.7.8 (aarch64, qemu-user) failed: $(tr '\r' '\n' <"$w/md$L.log" | grep -v '^ *$' | tail -n 1)"
		continue
	fi
	d_md=$(since "$t")
	"$kd_host" capture --vmcore "$vmcore" --output "$kd" --level "$L" >"$w/kd$L.log" 2>&1 &&
		"$kd_host" save "$kd" --output "$ke" --format elf >>"$w/kd$L.log" 2>&1 ||
		{ failed "level $L: kdumpinit capture/save: $(tail -n 1 "$w/kd$L.log")"; continue; }
	rm -f "$kd"
	ok=0
	if "$python" "$top/tests/tools/kdcmp.py" "$mdf" "$ke" >"$w/kdcmp$L.out" 2>&1; then
		pass "level $L: kept pages byte-identical to makedumpfile 1.7.8's (aarch64, ${d_md}s): $(grep -m1 'makedumpfile kept' "$w/kdcmp$L.out")"
		ok=1
	else
		failed "level $L against makedumpfile 1.7.8:"; tail -n 4 "$w/kdcmp$L.out" | sed 's/^/    /'
	fi
	oc=
	if [ -n "$old" ]; then
		if "$old" -L "$old_root" "$old_root/usr/bin/makedumpfile" -d "$L" --message-level 22 \
			"$vmcore" "$w/old$L.kdump" >"$w/old$L.log" 2>&1; then
			oc=$(md_counts "$w/old$L.log")
		else
			oc=failed
		fi
		rm -f "$w/old$L.kdump"
	fi
	mc=$(md_counts "$w/md$L.log") kc=$(kd_counts "$w/kd$L.log")
	printf '  level %-2s %-14s %12s %12s%s\n' "$L" class md-1.7.8 kdumpinit "$([ -n "$old" ] && printf ' %12s' md-1.7.2)"
	for c in zero cache cache-private user free hwpoison offline; do
		m=$(word "$mc" "$c") k=$(word "$kc" "$c")
		o=$([ -n "$old" ] && printf ' %12s' "$( [ "$oc" = failed ] && echo failed || word "$oc" "$c")")
		printf '           %-14s %12s %12s%s%s\n' "$c" "$m" "$k" "$o" "$([ "$m" != "$k" ] && echo '   <- kdumpinit differs')"
	done
	# The big files only stay when they are needed to see why.
	[ $ok = 1 ] && rm -f "$mdf" "$ke"
done

# The memory map's exclusion on arm64 (kdumpinit.memmap=exclude; makedumpfile
# -e is x86_64 only): at level 31 the pages of struct pages that describe
# only pages left out go, and nothing else: the kept count falls by the
# memmap count, and drgn still reads init_uts_ns.
kx=$w/kd31-exclude.img kk=$w/kd31-keep.img
rm -f "$kx" "$kk"
if "$kd_host" capture --vmcore "$vmcore" --output "$kx" --level 31 --memmap exclude >"$w/kdx.log" 2>&1 &&
	"$kd_host" capture --vmcore "$vmcore" --output "$kk" --level 31 --memmap keep >"$w/kdk.log" 2>&1; then
	n=$(grep -a -o 'memmap [0-9]*' "$w/kdx.log" | tail -n 1 | cut -d' ' -f2)
	ke=$(grep -a -o '[0-9]* of [0-9]* pages kept' "$w/kdx.log" | cut -d' ' -f1)
	kk_=$(grep -a -o '[0-9]* of [0-9]* pages kept' "$w/kdk.log" | cut -d' ' -f1)
	if [ "${n:-0}" -gt 0 ] && [ -n "$ke" ] && [ $((kk_ - ke)) = "$n" ]; then
		pass "level 31, memmap=exclude: $n pages of struct pages left out ($ke kept, $kk_ with the memory map whole): $(grep -a -o 'memory map: [0-9]* pages ([0-9.]* MiB) in [0-9]* pieces' "$w/kdx.log")"
	else
		failed "level 31, memmap=exclude: memmap '${n:-}', kept '$ke' against '$kk_' whole"
	fi
	if "$kd_host" save "$kx" --output "$w/kdx.kdump" --format kdump >"$w/kdx-save.log" 2>&1 &&
		got=$("$python" "$here/drgnuts.py" "$w/kdx.kdump" 2>&1); then
		pass "level 31, memmap=exclude: drgn reads the saved dump ($got)"
	else
		failed "level 31, memmap=exclude: save or drgn: $(tail -n 1 "$w/kdx-save.log") ${got:-}"
	fi
	rm -f "$w/kdx.kdump"
else
	failed "level 31, memmap=exclude: capture: $(tail -n 1 "$w/kdx.log") $(tail -n 1 "$w/kdk.log")"
fi
rm -f "$kx" "$kk"
[ $nfail = 0 ]
