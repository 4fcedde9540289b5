#!/bin/bash
# pfns-read.sh: which physical pages do crash and drgn read from a complete
# dump to do their basic work? The answer sizes the first pass a capture
# writes (what a debugger needs to open the kernel), so that a dump cut
# short still opens.
#
#   tests/debugger/pfns-read.sh KVER RAW [OUTDIR]
#
# KVER is the Debian kernel release (6.1.0-57-amd64, 6.12.117+deb13-amd64,
# 7.3.4+deb13-amd64); RAW a raw ELF vmcore (a /proc/vmcore copy) of that
# kernel, only read. OUTDIR (default build/debugger/KVER) receives:
#   crash-STEP.pfns, drgn-STEP.pfns   the pfns each run read, sorted
#   *.strace, *.out                   the raw trace and the debugger's output
#   facts                             what the vmlinux told (symbols, offsets)
#   table.md                          every pfn classified (pfnmap.py classify)
#   recommend.md                      how much of each set a first pass found
#                                     without the vmlinux would hold (pfnmap.py recommend)
#   level31.txt                       `kdumpinit info` of a level-31 capture
#
# Method: each debugger runs on RAW under strace, tracing only that file
# (-P): crash reads it with lseek and read, drgn with pread64. Neither maps
# a raw ELF vmcore; crash maps a kdump-compressed file's bitmaps. A mapping
# counts as a read of everything it maps. pfnmap.py turns every byte range read into pfns through RAW's
# PT_LOAD headers. Each crash step is its own session: startup alone, then
# startup followed by one command, so a step's set is everything that step
# needs (crash caches what it read, so a later command in the same session
# would not read it again). Likewise each drgn step opens the dump anew.
#
# The vmlinux comes from linux-image-KVER-dbg, pinned in SHA256SUMS: from
# DEBS (a directory holding the .deb already) or apt (the host's for
# bookworm, the private configuration of tests/filter-makedumpfile for
# trixie and trixie-backports), into build/debugger/; only the vmlinux is
# kept. The readers are the host's (crash 8.0.2, python3-drgn 0.0.22 on
# Debian 12); READERS_ROOT=DIR runs instead the crash and drgn of a Debian
# root file system at DIR (a sid chroot: crash 9.0.2, drgn 0.3.0) through
# its own dynamic loader, without chroot or mounts, into OUTDIR default
# build/debugger/KVER-sid. SKIP_CRASH=1, SKIP_DRGN=1 leave one out.
#
# FORMAT=kdump traces the readers on a kdump-compressed file instead:
# RAW captured by kdumpinit at level 31 and saved with --format kdump
# (zero pages share one block there and are not counted); file offsets
# go to pfns through its bitmap and page descriptors. On a raw ELF drgn
# reads the direct map and the kernel image through the PT_LOADs' virtual
# addresses (so does it on what `kdumpinit save --format elf` writes, which
# keeps them); on a kdump-compressed file it walks the page tables, but
# libkdumpfile maps that file, so FORMAT=kdump runs crash only. OUTDIR then
# defaults to build/debugger/KVER[-sid]-kdump.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { sed -n '2,/^set/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
kver=$1 raw=$2
bdir=$top/build/debugger
if [ -n "${READERS_ROOT:-}" ]; then
	r=$READERS_ROOT
	ld="$r/lib64/ld-linux-x86-64.so.2 --library-path $r/usr/lib/x86_64-linux-gnu:$r/lib/x86_64-linux-gnu"
	crash="$ld $r/usr/bin/crash"
	py="env PYTHONHOME=$r/usr $ld $(ls "$r"/usr/bin/python3.* | grep -E 'python3\.[0-9]+$' | head -n 1)"
	out=${3:-$bdir/$kver-sid${FORMAT:+-$FORMAT}}
else
	crash=/usr/bin/crash
	py=/usr/bin/python3
	out=${3:-$bdir/$kver${FORMAT:+-$FORMAT}}
fi
case ${FORMAT:-} in ''|kdump) ;; *) die "FORMAT is kdump or unset" ;; esac
K=${KDUMPINIT:-$top/build/kdumpinit}
[ -x "$K" ] || K=/work/main/build/kdumpinit
die() { echo "pfns-read: $*" >&2; exit 1; }
say() { echo "pfns-read: $*" >&2; }
[ -r "$raw" ] || die "cannot read $raw"
mkdir -p "$out" "$bdir/dl"

# --- the vmlinux ---------------------------------------------------------
verify() { # FILE: its sha256 is the one SHA256SUMS pins for its name
	want=$(awk -v f="$(basename "$1")" '$2 == f { print $1 }' "$here/SHA256SUMS")
	[ -n "$want" ] || { say "$(basename "$1") has no pinned sha256 in SHA256SUMS"; return 1; }
	[ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$want" ] || { say "$1: sha256 is not the pinned one"; return 1; }
}
vml=$bdir/vmlinux-$kver
if [ ! -f "$vml" ]; then
	deb=$(awk -v k="linux-image-$kver-dbg_" 'index($2, k) == 1 { print $2 }' "$here/SHA256SUMS")
	[ -n "$deb" ] || die "no linux-image-$kver-dbg in SHA256SUMS"
	if [ ! -f "$bdir/dl/$deb" ] && [ -n "${DEBS:-}" ] && [ -f "$DEBS/$deb" ]; then
		ln -sf "$DEBS/$deb" "$bdir/dl/$deb"
	fi
	if [ ! -f "$bdir/dl/$deb" ]; then
		pkg=linux-image-$kver-dbg
		case $kver in
		6.1.*) say "apt-get download $pkg (host apt, bookworm)"
			(cd "$bdir/dl" && apt-get download "$pkg") >"$bdir/dl/fetch.log" 2>&1 ||
				die "apt-get download $pkg failed (see $bdir/dl/fetch.log)" ;;
		*) filter_here=$here FILTER_BUILD=$bdir prog=pfns-read
			. "$top/tests/filter-makedumpfile/common.sh"
			fget deb "$pkg" "$deb" >/dev/null || die "cannot fetch $pkg" ;;
		esac
	fi
	verify "$bdir/dl/$deb" || die "refusing $deb"
	say "extracting vmlinux-$kver from $deb"
	tmp=$bdir/x.$$
	rm -rf "$tmp" && mkdir -p "$tmp"
	# 6.1 and 6.12 keep it in /usr/lib/debug/boot, 7.x under lib/modules
	dpkg-deb --fsys-tarfile "$bdir/dl/$deb" |
		tar -C "$tmp" -x --wildcards "./usr/lib/debug/boot/vmlinux-$kver" \
			"./usr/lib/debug/lib/modules/$kver/vmlinux" 2>/dev/null || true
	for f in "$tmp/usr/lib/debug/boot/vmlinux-$kver" "$tmp/usr/lib/debug/lib/modules/$kver/vmlinux"; do
		[ -f "$f" ] && [ ! -L "$f" ] && mv "$f" "$vml.part"
	done
	rm -rf "$tmp"
	[ -f "$vml.part" ] || die "no vmlinux in $deb"
	mv "$vml.part" "$vml"
fi
verify "$vml" || die "vmlinux-$kver is not the pinned one (delete it to extract again)"

# --- facts from the vmlinux: symbols (before KASLR) and struct offsets ---
if [ ! -s "$out/facts" ]; then
	syms='_text _etext __start_rodata __end_rodata _sdata _edata __init_begin __init_end
	      __bss_start __bss_stop _end page_offset_base vmalloc_base vmemmap_base
	      nr_cpu_ids pcpu_unit_size __per_cpu_offset __per_cpu_start init_task'
	nm "$vml" | awk -v want="$syms" 'BEGIN { n = split(want, w); for (i = 1; i <= n; i++) ok[w[i]] = 1 }
		ok[$3] && !seen[$3]++ { print $3, "0x" $1 }' >"$out/facts.tmp"
	# gdb prints "$1 = N"; a member that this kernel lacks prints an error, dropped
	gdb -batch -nx \
		-ex 'print (long)&((struct task_struct *)0)->tasks' \
		-ex 'print (long)&((struct task_struct *)0)->stack' \
		-ex 'print (long)sizeof(struct task_struct)' \
		-ex 'print (long)&((struct task_struct *)0)->thread_group' \
		"$vml" 2>/dev/null | sed -n 's/^\$\([0-9]*\) = \(-\{0,1\}[0-9]*\)$/\1 \2/p' |
		awk 'BEGIN { n[1] = "task_struct.tasks"; n[2] = "task_struct.stack";
			n[3] = "sizeof.task_struct"; n[4] = "task_struct.thread_group" }
			{ print n[$1], $2 }' >>"$out/facts.tmp"
	grep -q '^task_struct.stack ' "$out/facts.tmp" || die "gdb gave no struct offsets from $vml"
	mv "$out/facts.tmp" "$out/facts"
fi

# --- the level-31 dump: its size for scale, the kdump-compressed file -----
if [ ! -s "$out/level31.txt" ] || { [ "${FORMAT:-}" = kdump ] && [ ! -s "$out/level31.kdump" ]; }; then
	rm -f "$out/level31.dump"
	"$K" capture --vmcore "$raw" --output "$out/level31.dump" --level 31 >"$out/level31.capture" 2>&1 ||
		die "kdumpinit capture failed (see $out/level31.capture)"
	"$K" info "$out/level31.dump" >"$out/level31.txt" 2>&1 || true
	if [ "${FORMAT:-}" = kdump ]; then
		rm -f "$out/level31.kdump"
		"$K" save "$out/level31.dump" --output "$out/level31.kdump" --format kdump >"$out/level31.save" 2>&1 ||
			die "kdumpinit save failed (see $out/level31.save)"
	fi
	rm -f "$out/level31.dump"
fi
target=$raw
[ "${FORMAT:-}" = kdump ] && target=$out/level31.kdump

# --- the runs ------------------------------------------------------------
trace() { # NAME CMD...: run CMD under strace, tracing the dump file only
	name=$1; shift
	strace -f -y -s 0 -P "$target" -e trace=openat,pread64,read,lseek,mmap,preadv,preadv2,readv \
		-o "$out/$name.strace" "$@" >"$out/$name.out" 2>&1 || true
	if grep -q ' mmap(' "$out/$name.strace"; then
		say "$name maps $target: all it maps counts as read ($(grep -c ' mmap(' "$out/$name.strace") mappings)"
	fi
	/usr/bin/python3 "$here/pfnmap.py" pfns "$target" "$out/$name.strace" >"$out/$name.pfns"
}

crash_step() { # NAME COMMANDS
	printf '%s\nquit\n' "$2" >"$out/$1.cmds"
	trace "$1" timeout 300 $crash -s "$vml" "$target" -i "$out/$1.cmds"
}
if [ "${SKIP_CRASH:-}" != 1 ]; then
	crash_step crash-startup ''
	crash_step crash-log log
	crash_step crash-bt bt
	crash_step crash-ps ps
	crash_step crash-kmem-i 'kmem -i'
	grep -q 'sysrq triggered crash' "$out/crash-log.out" || say "crash: log without the panic (see $out/crash-log.out)"
	grep -qE '#[0-9]+ .*(panic|sysrq_handle_crash|crash_kexec)' "$out/crash-bt.out" || say "crash: bt without the crash path"
fi

# drgn reads a kdump-compressed file through libkdumpfile, which maps it
# in 4 MiB windows: what it touches there is invisible to strace.
[ "${FORMAT:-}" = kdump ] && SKIP_DRGN=1
if [ "${SKIP_DRGN:-}" != 1 ]; then
	for step in open release printk tasks; do
		trace "drgn-$step" timeout 300 $py "$here/drgnsteps.py" "$target" "$vml" "$step"
		grep -q '^drgnsteps: ok' "$out/drgn-$step.out" || say "drgn $step failed: $(tail -n 1 "$out/drgn-$step.out")"
	done
fi

# --- unions, classes, and the level-31 dump for scale ----------------------
for who in crash drgn; do
	ls "$out/$who"-*.pfns >/dev/null 2>&1 || continue
	sort -nu "$out/$who"-*.pfns >"$out/all-$who.pfns"
done
sort -nu "$out"/all-*.pfns >"$out/union.pfns"
files=$(ls "$out"/crash-*.pfns "$out"/drgn-*.pfns "$out"/all-*.pfns "$out/union.pfns" 2>/dev/null || true)
/usr/bin/python3 "$here/pfnmap.py" classify "$raw" "$out/facts" $files >"$out/table.md"
rfiles=$(ls "$out"/crash-startup.pfns "$out"/crash-bt.pfns "$out"/crash-log.pfns "$out"/crash-ps.pfns \
	"$out"/crash-kmem-i.pfns "$out"/all-*.pfns "$out/union.pfns" 2>/dev/null || true)
/usr/bin/python3 "$here/pfnmap.py" recommend "$raw" $rfiles >"$out/recommend.md"
cat "$out/table.md" "$out/recommend.md"
grep -iE 'pages|stored|kept' "$out/level31.txt" | head -n 5
