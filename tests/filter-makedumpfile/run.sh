#!/bin/bash
# tests/filter-makedumpfile/run.sh: differential test of kdumpinit's page filtering
# against upstream makedumpfile, on raw vmcores (byte copies of /proc/vmcore,
# as tests/e2e/run.sh --raw-out stores them).
#
# For each vmcore and each dump level:
#   reference  makedumpfile -d LEVEL VMCORE REF        (kdump-compressed, no
#              compression: its 2nd bitmap is exactly the pages it keeps)
#   kdumpinit  kdumpinit capture --vmcore VMCORE --output IMG --level LEVEL
#              kdumpinit save IMG --output ELF --format elf
#   check      tests/tools/mdcmp.py REF ELF: the same non-zero pages, the
#              same bytes
# One line per case (ok/FAIL), then exactly "N passed, N failed, 0 skipped".
#
# Why not `makedumpfile -E` as the reference: its ELF writer keeps excluded
# runs shorter than 256 pages in the file (PFN_EXCLUDED), so its output holds
# pages that its own filter excluded. --elf also runs -E and shows that
# comparison, as a note.
#
# Per-class counts (makedumpfile's --message-level report, kdumpinit's
# `info`) go to build/filter/report.txt, side by side. Other makedumpfile
# builds (--also, default: Debian 12's /usr/bin/makedumpfile 1.7.2 and
# Debian 13's 1.7.6 from build-makedumpfile.sh) are compared with the
# reference on each case, as notes that do not count.
set -uo pipefail

prog=run.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
	cat <<USAGE
usage: tests/filter-makedumpfile/run.sh [--levels "L..."] [--makedumpfile FILE]
                           [--also FILE]... [--no-also] [--elf] [--save-kdump]
                           [--save-kdump-levels "L..."]
                           [--workdir DIR] [--report FILE] [--keep] [VMCORE...]

  VMCORE             raw vmcores (default: build/e2e/raw-4level.vmcore and
                     build/e2e/raw-5level.vmcore)
  --levels "L..."    dump levels (default "1 2 4 8 16 17 31")
  --makedumpfile F   the reference (default build/filter/makedumpfile, made
                     by tests/filter-makedumpfile/build-makedumpfile.sh when missing)
  --also F           another makedumpfile to compare with the reference
                     (repeatable; replaces the defaults)
  --no-also          no other makedumpfile
  --elf              also run makedumpfile -E and compare it with kdumpinit
                     (a note: -E keeps excluded runs under 256 pages)
  --save-kdump       also check 'kdumpinit save --format kdump' output
                     against the reference (a case of its own)
  --save-kdump-levels "L..."
                     --save-kdump at these levels only (default: every level);
                     the writer is one for every level, and reading both
                     kdump files back is most of the suite's time
  --workdir DIR      scratch files (default build/filter/work); a case's
                     files are deleted when it passes, unless --keep
  --report FILE      per-class counts (default build/filter/report.txt)
  --memmap-levels "L..."
                     at these of the levels (default "17 31"; "" none), also
                     capture with --memmap exclude and check it against the
                     struct-page rules and makedumpfile -e (x86_64 vmcores;
                     tests/tools/memmapcmp.py): a case of its own
  --keep             keep every case's files
USAGE
}

levels="1 2 4 8 16 17 31" ref_mdf='' workdir='' report='' keep=0 elf=0 savekd=0 savekd_levels=''
memmap_levels="17 31"
also=() also_set=0 vmcores=()
while [ $# -gt 0 ]; do
	case $1 in
	--levels | --makedumpfile | --also | --workdir | --report | --save-kdump-levels | --memmap-levels)
		[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--levels) levels=$2; shift ;;
	--makedumpfile) ref_mdf=$2; shift ;;
	--also) also+=("$2"); also_set=1; shift ;;
	--no-also) also=(); also_set=1 ;;
	--elf) elf=1 ;;
	--save-kdump) savekd=1 ;;
	--save-kdump-levels) savekd=1 savekd_levels=$2; shift ;;
	--memmap-levels) memmap_levels=$2; shift ;;
	--workdir) workdir=$2; shift ;;
	--report) report=$2; shift ;;
	--keep) keep=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "$prog: unknown option: $1" >&2; usage >&2; exit 2 ;;
	*) vmcores+=("$1") ;;
	esac
	shift
done

build=$top/build/filter
kdumpinit=${KDUMPINIT:-$top/build/kdumpinit}
python=/usr/bin/python3
mdcmp=$top/tests/tools/mdcmp.py
[ -n "$workdir" ] || workdir=$build/work
[ -n "$report" ] || report=$build/report.txt
[ ${#vmcores[@]} -gt 0 ] || vmcores=("$top/build/e2e/raw-4level.vmcore" "$top/build/e2e/raw-5level.vmcore")

die() { echo "$prog: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

for l in $levels; do
	case $l in *[!0-9]*) die "bad level: $l" ;; esac
	[ "$l" -le 31 ] || die "bad level: $l"
done
[ -x "$kdumpinit" ] || die "missing $kdumpinit (run make first)"
[ -f "$mdcmp" ] || die "missing $mdcmp"
for v in "${vmcores[@]}"; do
	[ -f "$v" ] || die "no vmcore $v (tests/e2e/run.sh --raw-out FILE makes one)"
done
if [ -z "$ref_mdf" ]; then
	ref_mdf=$build/makedumpfile
	if [ ! -x "$ref_mdf" ]; then
		"$here/build-makedumpfile.sh" >&2 || die "build-makedumpfile.sh failed"
	fi
fi
[ -x "$ref_mdf" ] || die "reference makedumpfile not executable: $ref_mdf"
if [ $also_set = 0 ]; then
	for f in /usr/bin/makedumpfile "$build/makedumpfile-1.7.6"; do
		[ -x "$f" ] && also+=("$f")
	done
fi
mdf_version() { "$1" -v 2>&1 | sed -n 's/^makedumpfile: version \([^ ]*\).*/\1/p' | head -n 1; }
ref_ver=$(mdf_version "$ref_mdf")
[ -n "$ref_ver" ] || die "$ref_mdf -v does not print a makedumpfile version"
mkdir -p "$workdir" "$(dirname "$report")" || die "cannot create $workdir"

# vmcore_info FILE: "OSRELEASE LEVELS" (paging levels from VMCOREINFO).
vmcore_info() {
	"$python" - "$1" <<'EOF'
import os, re, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ["TOP"], "tests", "tools"))
from vmcmp import Core
n = Core(sys.argv[1]).notes
rel = re.search(rb"OSRELEASE=(\S+)", n)
l5 = re.search(rb"NUMBER\(pgtable_l5_enabled\)=(\S+)", n)
print((rel.group(1).decode() if rel else "unknown"),
      "5-level" if l5 and int(l5.group(1), 0) else "4-level")
EOF
}
export TOP=$top

# md_counts LOG: makedumpfile's report as "class=N" words
# shellcheck source=tests/filter-makedumpfile/mdcounts.sh
. "$top/tests/filter-makedumpfile/mdcounts.sh"
# kd_counts INFO: kdumpinit info's excluded lines as "class=N" words.
kd_counts() {
	awk '
	$NF == "pages" && NF >= 3 && ($1 == "excluded" || /^ /) { printf "%s=%s ", $(NF-2), $(NF-1) }
	$1 == "pages" && $2 == "kept" { printf "kept=%s ", $3 }
	' "$1"
}
word() { local w; for w in $1; do [ "${w%%=*}" = "$2" ] && { echo "${w#*=}"; return; }; done; echo -; }
mdline() { sed -n "s/^$2: //p" "$1" | head -n 1; }

npass=0 nfail=0
t_all=$(now)
{
	echo "# tests/filter-makedumpfile/run.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# reference: $ref_mdf (makedumpfile $ref_ver), kdump-compressed output"
	echo "# kdumpinit: $kdumpinit"
	echo "# makedumpfile counts are from its report (--message-level 22); kdumpinit's"
	echo "# from 'kdumpinit info'. 'kept' = non-zero pages kept, counted by mdcmp."
} >"$report"

# judge_copy VMCORE COPY: COPY is VMCORE with VMCOREINFO's
# OFFSET(page.compound_info) named OFFSET(page.compound_head), in place
# (the same length), in the ELF notes before the first PT_LOAD's bytes: the
# name a makedumpfile older than 7.1's rename reads. Exit 1 when VMCORE has
# no such key (no copy made).
judge_copy() {
	"$python" - "$1" "$2" <<'EOF'
import shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    eh = f.read(64)
    phoff, = struct.unpack_from("<Q", eh, 32)
    phentsize, phnum = struct.unpack_from("<HH", eh, 54)
    f.seek(phoff)
    ph = f.read(phentsize * phnum)
    loads = [struct.unpack_from("<Q", ph, i * phentsize + 8)[0] for i in range(phnum)
             if struct.unpack_from("<I", ph, i * phentsize)[0] == 1]
    f.seek(0)
    head = f.read(min(loads) if loads else 0)
old, new = b"OFFSET(page.compound_info)=", b"OFFSET(page.compound_head)="
at = head.find(old)
if at < 0:
    sys.exit(1)
if head.find(old, at + 1) >= 0:
    sys.exit("two OFFSET(page.compound_info) keys: not renamed")
shutil.copyfile(src, dst)
with open(dst, "r+b") as f:
    f.seek(at)
    f.write(new)
EOF
}

for v in "${vmcores[@]}"; do
	name=$(basename "$v" .vmcore)
	read -r osrel paging < <(vmcore_info "$v") || osrel=unknown
	echo "== $name: kernel $osrel, $paging paging, $(($(stat -c %s "$v") >> 20)) MB"
	echo "" >>"$report"
	echo "== $v: kernel $osrel, $paging paging" >>"$report"
	# The judge. 7.1 renamed page.compound_head to compound_info (bit 0
	# still marks a tail page); a reference that predates the rename
	# reads every tail as a page of its own. It then judges a copy of
	# the vmcore whose key bears the old name, and says so.
	ref_v=$v judge="makedumpfile $ref_ver"
	rm -f "$workdir/$name.judge.vmcore"
	if ! grep -qa 'compound_info' "$ref_mdf" && judge_copy "$v" "$workdir/$name.judge.vmcore"; then
		ref_v=$workdir/$name.judge.vmcore
		judge="makedumpfile $ref_ver on a copy whose VMCOREINFO names OFFSET(page.compound_info) compound_head (it predates 7.1's rename)"
	fi
	echo "judge: $judge"
	echo "judge: $judge" >>"$report"
	for lvl in $levels; do
		case_name="$name level $lvl"
		w=$workdir/$name-L$lvl
		rm -rf "$w" && mkdir -p "$w"
		why='' times=''

		# The reference. makedumpfile refuses an existing output file.
		t=$(now)
		"$ref_mdf" -d "$lvl" --message-level 22 "$ref_v" "$w/ref.kdump" >"$w/ref.log" 2>&1
		rc=$? times+="md $(since "$t")s"
		[ $rc = 0 ] || why="makedumpfile $ref_ver exited $rc: $(grep -m1 -i 'error\|fail\|can.t' "$w/ref.log")"

		if [ -z "$why" ]; then
			t=$(now)
			"$kdumpinit" capture --vmcore "$v" --output "$w/kd.img" --level "$lvl" --threads 1 \
				>"$w/capture.log" 2>&1
			rc=$? times+=", capture $(since "$t")s"
			[ $rc = 0 ] || why="kdumpinit capture exited $rc: $(tail -n 1 "$w/capture.log")"
		fi
		if [ -z "$why" ]; then
			"$kdumpinit" info "$w/kd.img" >"$w/info.out" 2>&1 ||
				why="kdumpinit info exited $?: $(tail -n 1 "$w/info.out")"
		fi
		if [ -z "$why" ]; then
			t=$(now)
			"$kdumpinit" save "$w/kd.img" --output "$w/kd.elf" --format elf >"$w/save.log" 2>&1
			rc=$? times+=", save $(since "$t")s"
			[ $rc = 0 ] || why="kdumpinit save exited $rc: $(tail -n 1 "$w/save.log")"
		fi
		if [ -z "$why" ]; then
			t=$(now)
			"$python" "$mdcmp" "$w/ref.kdump" "$w/kd.elf" >"$w/mdcmp.out" 2>&1
			rc=$? times+=", mdcmp $(since "$t")s"
			if [ $rc != 0 ]; then
				why="mdcmp: $(grep -E '^(only-in-A|only-in-B|byte mismatches|B alias disagreements): [1-9]' "$w/mdcmp.out" |
					sed 's/only-in-A/only in makedumpfile/; s/only-in-B/only in kdumpinit/; s/B alias/kdumpinit alias/' | paste -sd';' | sed 's/;/; /g')"
				[ "$why" != "mdcmp: " ] || why="mdcmp exited $rc: $(tail -n 1 "$w/mdcmp.out")"
			fi
		fi

		if [ -z "$why" ]; then
			echo "ok   $case_name ($times)"
			npass=$((npass + 1))
		else
			echo "FAIL $case_name: $why ($times)"
			[ -f "$w/mdcmp.out" ] && grep -A3 -E '^(only-in-A|only-in-B|byte mismatches): [1-9]' "$w/mdcmp.out" | sed 's/^/       /'
			nfail=$((nfail + 1))
		fi

		# The memory map's pages (kdumpinit.memmap=exclude) against the
		# struct-page rules and makedumpfile -e (tests/tools/memmapcmp.py),
		# at the levels of --memmap-levels.
		if [[ " $memmap_levels " == *" $lvl "* ]]; then
			mwhy='' t=$(now)
			rm -f "$w/kept.kdump" "$w/ref-e.kdump"
			mkdir -p "$w/e-work"
			if ! "$ref_mdf" -d $((lvl & ~1)) "$ref_v" "$w/kept.kdump" >"$w/kept.log" 2>&1; then
				mwhy="makedumpfile -d $((lvl & ~1)) failed: $(grep -m1 -i 'error\|can.t' "$w/kept.log")"
			elif ! "$ref_mdf" -d "$lvl" -e --work-dir "$w/e-work" "$ref_v" "$w/ref-e.kdump" >"$w/ref-e.log" 2>&1; then
				mwhy="makedumpfile -e failed: $(grep -m1 -i 'error\|can.t' "$w/ref-e.log")"
			elif ! "$kdumpinit" capture --vmcore "$v" --output "$w/kd-e.img" --level "$lvl" --threads 2 \
				--memmap exclude >"$w/capture-e.log" 2>&1; then
				mwhy="capture --memmap exclude failed: $(tail -n 1 "$w/capture-e.log")"
			elif ! "$kdumpinit" save "$w/kd-e.img" --output "$w/kd-e.elf" --format elf >"$w/save-e.log" 2>&1; then
				mwhy="save failed: $(tail -n 1 "$w/save-e.log")"
			elif ! "$python" "$top/tests/tools/memmapcmp.py" "$v" "$w/kept.kdump" "$w/ref.kdump" \
				"$w/ref-e.kdump" "$w/kd-e.elf" >"$w/memmapcmp.out" 2>&1; then
				mwhy="memmapcmp: $(grep -E '^(rule|-e FAIL)' "$w/memmapcmp.out" | paste -sd';' | sed 's/;/; /g')"
				[ "$mwhy" != "memmapcmp: " ] || mwhy="memmapcmp: $(tail -n 1 "$w/memmapcmp.out")"
			fi
			if [ -z "$mwhy" ]; then
				echo "ok   $case_name, memmap=exclude against makedumpfile -e ($(since "$t")s): $(grep -E '^memory map|^-e ' "$w/memmapcmp.out" | paste -sd';' | sed 's/;/; /g')"
				npass=$((npass + 1))
			else
				echo "FAIL $case_name, memmap=exclude: $mwhy"
				nfail=$((nfail + 1))
			fi
			cat "$w/memmapcmp.out" >>"$report" 2>/dev/null
			rm -rf "$w/kept.kdump" "$w/ref-e.kdump" "$w/kd-e.img" "$w/kd-e.elf" "$w/e-work"
		fi

		# kdumpinit's kdump-compressed output, the same way (--save-kdump).
		if [ $savekd = 1 ] && { [ -z "$savekd_levels" ] || [[ " $savekd_levels " == *" $lvl "* ]]; }; then
			kwhy='' t=$(now)
			if [ ! -f "$w/kd.img" ] || [ ! -f "$w/ref.kdump" ]; then
				kwhy="no capture or no reference"
			elif ! "$kdumpinit" save "$w/kd.img" --output "$w/kd.kdump" --format kdump >"$w/save-kdump.log" 2>&1; then
				kwhy="kdumpinit save --format kdump failed: $(tail -n 1 "$w/save-kdump.log")"
			elif ! "$python" "$mdcmp" "$w/ref.kdump" "$w/kd.kdump" >"$w/mdcmp-kdump.out" 2>&1; then
				kwhy="mdcmp: $(grep -E '^(only-in-A|only-in-B|byte mismatches): [1-9]' "$w/mdcmp-kdump.out" |
					sed 's/only-in-A/only in makedumpfile/; s/only-in-B/only in kdumpinit/' | paste -sd';' | sed 's/;/; /g')"
				[ "$kwhy" != "mdcmp: " ] || kwhy="mdcmp: $(tail -n 1 "$w/mdcmp-kdump.out")"
			fi
			if [ -z "$kwhy" ]; then
				echo "ok   $case_name, save --format kdump ($(since "$t")s)"
				npass=$((npass + 1))
				rm -f "$w/kd.kdump"
			else
				echo "FAIL $case_name, save --format kdump: $kwhy"
				nfail=$((nfail + 1))
				why=${why:-"save --format kdump: $kwhy"}
			fi
		fi

		# Other makedumpfile builds against the reference: notes only.
		notes=() also_vers=() also_counts=()
		for m in ${also[@]+"${also[@]}"}; do
			mv_=$(mdf_version "$m")
			rm -f "$w/also.kdump"
			if ! "$m" -d "$lvl" --message-level 22 "$ref_v" "$w/also.kdump" >"$w/also-$mv_.log" 2>&1; then
				notes+=("makedumpfile $mv_ failed: $(grep -m1 -i 'error\|can.t' "$w/also-$mv_.log")")
				continue
			fi
			also_vers+=("$mv_")
			also_counts+=("$(md_counts "$w/also-$mv_.log")")
			if "$python" "$mdcmp" "$w/also.kdump" "$w/ref.kdump" >"$w/also-$mv_.mdcmp" 2>&1; then
				notes+=("makedumpfile $mv_ keeps the same pages as $ref_ver")
			else
				notes+=("makedumpfile $mv_ DIFFERS from $ref_ver: $(grep -E '^(only-in-A|only-in-B|byte mismatches): [1-9]' "$w/also-$mv_.mdcmp" | sed "s/only-in-A/only in $mv_/; s/only-in-B/only in $ref_ver/" | paste -sd';' | sed 's/;/; /g')")
			fi
			rm -f "$w/also.kdump"
		done
		if [ $elf = 1 ]; then
			if "$ref_mdf" -E -d "$lvl" --message-level 22 "$ref_v" "$w/ref.elf" >"$w/ref-elf.log" 2>&1 &&
				[ -f "$w/kd.elf" ]; then
				"$python" "$mdcmp" "$w/ref.elf" "$w/kd.elf" >"$w/elf.mdcmp" 2>&1
				notes+=("makedumpfile -E vs kdumpinit: $(grep -E '^(only-in-A|only-in-B|byte mismatches): ' "$w/elf.mdcmp" | sed 's/only-in-A/only in -E/; s/only-in-B/only in kdumpinit/' | paste -sd';' | sed 's/;/; /g')")
			else
				notes+=("makedumpfile -E failed or no kdumpinit ELF")
			fi
			rm -f "$w/ref.elf"
		fi
		for n in ${notes[@]+"${notes[@]}"}; do echo "     note: $n"; done

		# The report: makedumpfile's classes next to kdumpinit's.
		mc=$(md_counts "$w/ref.log" 2>/dev/null)
		kc=$([ -f "$w/info.out" ] && kd_counts "$w/info.out")
		{
			echo ""
			echo "-- $name level $lvl: $([ -z "$why" ] && echo ok || echo "FAIL: $why")"
			printf '   %-15s %12s %12s' class "md-$ref_ver" kdumpinit
			for av in ${also_vers[@]+"${also_vers[@]}"}; do printf ' %12s' "md-$av"; done
			echo
			for c in zero cache cache-private user free hwpoison offline; do
				mcv=$(word "$mc" "$c") kcv=$(word "$kc" "$c")
				# kdumpinit info leaves out classes with no pages.
				[ "$kcv" = - ] && [ -f "$w/info.out" ] && kcv=0
				printf '   %-15s %12s %12s' "$c" "$mcv" "$kcv"
				for ac in ${also_counts[@]+"${also_counts[@]}"}; do printf ' %12s' "$(word "$ac" "$c")"; done
				[ "$mcv" != "$kcv" ] && [ "$kcv" != - ] && printf '   <- kdumpinit differs'
				echo
			done
			if [ -f "$w/mdcmp.out" ]; then
				printf '   %-15s %12s %12s\n' "kept non-zero" "$(mdline "$w/mdcmp.out" "A kept non-zero")" \
					"$(mdline "$w/mdcmp.out" "B kept non-zero")"
			fi
			for n in ${notes[@]+"${notes[@]}"}; do echo "   note: $n"; done
			[ -z "$why" ] || echo "   files kept in $w"
		} >>"$report"

		if [ -z "$why" ] && [ $keep = 0 ]; then
			rm -rf "$w"
		else
			rm -f "$w/kd.img"  # the ELF, the reference and the logs are what a failure needs
		fi
	done
	rm -f "$workdir/$name.judge.vmcore"
done

echo "report: $report (total $(since "$t_all")s)"
echo "$npass passed, $nfail failed, 0 skipped"
[ $nfail = 0 ]
