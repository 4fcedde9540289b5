#!/bin/bash
# kdumpinit estimate on a machine made of files (--root): /proc/kcore is a
# synthetic vmcore (mkvmcore: an ELF core with physical addresses, as
# kcore's RAM segments are), /proc/iomem its RAM, /proc/kpageflags the
# flags this suite chooses. Checked:
#  - the compression: with every block sampled, the level-0 and level-1
#    sizes are the capture's own dump of the same memory (kdumpinit
#    capture; within 1 % and the records' allowance);
#  - the sample: a quarter of the blocks, three draws, within 15 % of all;
#  - the classes: each kpageflags class counted as the capture's rules
#    say (free, cache, cache with private, anon and hugetlb, poisoned and
#    offline, compound tails with their head), and each level keeps
#    exactly the classes it should;
#  - the "Crash kernel" range of iomem is not counted;
#  - the text and --json say the same;
#  - what goes wrong is said: no kpageflags, no kcore, iomem without
#    addresses (not root), bad options.
# The comparison with real captures is in the e2e suites (tests/e2e/run.sh
# estimate.*): the estimate taken in the guest before its crash.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/suite.sh estimate
PY=/usr/bin/python3
cd "$W" || exit 1

"$MKVMCORE" -o vm --mem 256M --segments 2 --zero-pct 30 --seed 5 >/dev/null 2>&1 ||
	{ bad setup "mkvmcore failed"; finish; }
# root DIR [CRASH]: iomem from the vmcore's segments (CRASH: a
# "Crash kernel" range inside the first), kpageflags from classes.py's
# layout, 4 CPUs.
mkroot() {
	rm -rf "$1"
	mkdir -p "$1/proc" "$1/sys/devices/system/cpu"
	ln -s "$W/vm" "$1/proc/kcore"
	echo 0-3 >"$1/sys/devices/system/cpu/online"
	$PY - "$W/vm" "$1" "${2:-}" "${3:-plain}" <<'PYEOF'
import struct, sys
vm, root, crash, layout = sys.argv[1:5]
d = open(vm, 'rb').read(1 << 16)
phoff, = struct.unpack_from('<Q', d, 32)
phnum, = struct.unpack_from('<H', d, 56)
ram = []
for i in range(phnum):
    t, _, off, va, pa, fs = struct.unpack_from('<IIQQQQ', d, phoff + 56 * i)
    if t == 1:
        ram.append((pa, pa + fs))
with open(root + '/proc/iomem', 'w') as f:
    f.write('00000000-00000fff : Reserved\n')
    for k, (a, b) in enumerate(ram):
        f.write('%08x-%08x : System RAM\n' % (a, b - 1))
        if k == 0:
            f.write('  01000000-01ffffff : Kernel code\n')
            if crash:
                f.write('  04000000-05ffffff : Crash kernel\n')
    f.write('fee00000-fee00fff : Local APIC\n')
top = max(b for a, b in ram) // 4096
flags = [0] * top
B = lambda n: 1 << n
if layout == 'classes':
    def put(lo, n, v):
        for p in range(lo, lo + n):
            flags[p] = v
    put(0x2000, 3000, B(10))                 # free (buddy)
    put(0x3000, 2000, B(5))                  # page cache
    put(0x4000, 1000, B(5) | B(35))          # page cache with private
    put(0x5000, 1500, B(5) | B(12))          # anon on the LRU: user
    put(0x6000, 500, B(13) | B(14))          # swap cache, not anon: cache
    put(0x6400, 512, B(17))                  # hugetlb: user
    put(0x6800, 30, B(19))                   # hwpoison
    put(0x6900, 20, B(23))                   # offline
    put(0x7000, 1, B(15) | B(5))             # a large folio's head, cache
    put(0x7001, 511, B(16))                  # its tails
    put(0x7400, 1, B(15) | B(7))             # a slab head
    put(0x7401, 7, B(16) | B(7))             # its tails: kernel
with open(root + '/proc/kpageflags', 'wb') as f:
    f.write(b''.join(struct.pack('<Q', v) for v in flags))
PYEOF
}
js() {	# FILE EXPR: a member of a JSON file
	$PY -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"
}
near() {	# NAME A B PCT: |A-B| <= PCT % of B
	if $PY -c "import sys; a,b,p=map(float,sys.argv[1:4]); sys.exit(0 if abs(a-b)<=p/100*b else 1)" "$2" "$3" "$4"; then
		ok "$1 ($2 against $3, within $4 %)"
	else
		bad "$1" "$2 against $3: more than $4 % apart"
	fi
}
mkroot r

# The compression: every block, levels 0 and 1, against the capture's dump.
"$K" estimate --root r --level 0,1 --sample all --json >all.json 2>all.err ||
	bad estimate.all "exit $?: $(head -c 300 all.err)"
for lv in 0 1; do
	"$K" capture --vmcore vm --output "cap$lv.img" --level "$lv" >/dev/null 2>&1
	"$K" info --json "cap$lv.img" >"cap$lv.json" 2>/dev/null
	real=$(js "cap$lv.json" "j['dumps'][0]['dump_bytes']" 2>/dev/null)
	kept=$(js "cap$lv.json" "j['dumps'][0]['pages_kept']" 2>/dev/null)
	est=$(js all.json "[l for l in j['levels'] if l['level']==$lv][0]['dump_bytes']" 2>/dev/null)
	# The records other than pages: the estimate allows 256 KiB for a
	# real kernel's; this core's are about 20 KB.
	[ -n "$real" ] && [ -n "$est" ] && near "compression.level$lv" "$((est - 262144))" "$real" 1 ||
		bad "compression.level$lv" "capture '${real:-}' bytes, estimate '${est:-}'"
	ekept=$(js all.json "[l for l in j['levels'] if l['level']==$lv][0]['kept_pages']" 2>/dev/null)
	if [ "$lv" = 0 ] && [ "$ekept" = "$kept" ]; then
		ok "kept.level0 (every page of RAM: $kept)"
	elif [ "$lv" = 0 ]; then
		bad kept.level0 "estimate keeps '$ekept' pages, the capture $kept"
	fi
done
# The sample: a quarter of the memory, three draws.
for s in 1 2 3; do
	"$K" estimate --root r --level 0,1 --sample 64 --seed "$s" --json >s$s.json 2>/dev/null
	for lv in 0 1; do
		a=$(js s$s.json "[l for l in j['levels'] if l['level']==$lv][0]['dump_bytes']" 2>/dev/null)
		b=$(js all.json "[l for l in j['levels'] if l['level']==$lv][0]['dump_bytes']" 2>/dev/null)
		[ -n "$a" ] && [ -n "$b" ] && near "sample.seed$s.level$lv" "$a" "$b" 15 ||
			bad "sample.seed$s.level$lv" "no estimate"
	done
done
# --sample all is every kept page: the whole, whatever the seed.
"$K" estimate --root r --level 1 --sample all --seed 5 --json >all5.json 2>/dev/null
a=$(js all.json "[l for l in j['levels'] if l['level']==1][0]['dump_bytes']" 2>/dev/null)
b=$(js all5.json "j['levels'][0]['dump_bytes']" 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "sample.all-is-whole (the same $a bytes with seed 5)" ||
	bad sample.all-is-whole "'$a' then '$b'"
# The same seed draws the same blocks.
"$K" estimate --root r --level 1 --sample 64 --seed 2 --json >s2b.json 2>/dev/null
a=$(js s2.json "[l for l in j['levels'] if l['level']==1][0]['dump_bytes']" 2>/dev/null)
b=$(js s2b.json "j['levels'][0]['dump_bytes']" 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "sample.seeded (the same $a bytes)" || bad sample.seeded "'$a' then '$b'"

# The classes.
mkroot rc "" classes
"$K" estimate --root rc --level 0,1,2,4,8,16,17,31 --sample 16 --seed 1 --json >c.json 2>c.err ||
	bad classes.run "exit $?: $(head -c 300 c.err)"
total=$(js c.json "j['pages']" 2>/dev/null)
want="{'free': 3000, 'cache': 2000+500+512, 'cache_private': 1000, 'user': 1500+512, 'poisoned_or_offline': 50}"
got=$(js c.json "{k: v for k, v in j['classes'].items() if k != 'kernel'} == $want and j['classes']['kernel'] == j['pages'] - 3000 - 3012 - 1000 - 2012 - 50" 2>/dev/null)
[ "$got" = True ] && ok "classes (free 3000, cache 3012 with a folio's tails, private 1000, user 2012, gone 50)" ||
	bad classes "$(js c.json "j['classes']" 2>&1)"
# What each level keeps: the pages less the classes it drops.
for pair in 0:50 1:50 2:3062 4:4062 8:2062 16:3050 17:3050 31:9074; do
	lv=${pair%%:*} drop=${pair#*:}
	k=$(js c.json "[l for l in j['levels'] if l['level']==$lv][0]['kept_pages']" 2>/dev/null)
	[ -n "$total" ] && [ "$k" = $((total - drop)) ] && ok "level$lv.kept ($k of $total)" ||
		bad "level$lv.kept" "'$k' kept of '$total', $drop should be dropped"
done
a=$(js c.json "[l for l in j['levels'] if l['level']==31][0]['dump_bytes'] < [l for l in j['levels'] if l['level']==1][0]['dump_bytes']" 2>/dev/null)
[ "$a" = True ] && ok "level31.smaller" || bad level31.smaller "level 31's estimate is not below level 1's"

# The crash kernel's reservation is never in the vmcore: not counted.
mkroot rk crash
"$K" estimate --root rk --level 1 --sample 8 --json >k.json 2>/dev/null
p=$(js k.json "j['pages']" 2>/dev/null) q=$(js all.json "j['pages']" 2>/dev/null)
[ -n "$p" ] && [ -n "$q" ] && [ $((q - p)) = 8192 ] && ok "crash-kernel (32 MiB, 8192 pages, left out)" ||
	bad crash-kernel "pages '$p' with the reservation, '$q' without"

# The text and the JSON say the same.
"$K" estimate --root rc --level 1,31 --sample 16 --seed 4 >t.txt 2>/dev/null
"$K" estimate --root rc --level 1,31 --sample 16 --seed 4 --json >t.json 2>/dev/null
r=$($PY - t.txt t.json <<'PYEOF'
import json, re, sys
t, j = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
mib = lambda b: "%.1f MiB" % (b / 1048576.0)
bad = []
for l in j['levels']:
    m = re.search(r'^\s*%d\s+(\d+)\s+(.+? MiB)\s+(.+? MiB)' % l['level'], t, re.M)
    if not m:
        bad.append('no row for level %d' % l['level']); continue
    if int(m.group(1)) != l['kept_pages'] or m.group(2) != mib(l['dump_bytes']) or m.group(3) != mib(l['device_bytes']):
        bad.append('level %d: %r vs %r' % (l['level'], m.groups(), l))
r = j['reservation']
if 'crashkernel=%dM' % (r['stock_1cpu'] >> 20) not in t or '%dM on %d' % (r['stock'] >> 20, r['stock_cpus']) not in t:
    bad.append('reservation %r' % r)
if not (r['dedicated_1cpu'] < r['stock_1cpu'] <= r['stock'] and r['stock_cpus'] == 4 and r['cpus_online'] == 4):
    bad.append('reservation out of order %r' % r)
if j['schema'] != 'kdumpinit-estimate/1' or 'assumes:' not in t:
    bad.append('schema or assumptions')
print('; '.join(bad) or 'ok')
PYEOF
)
[ "$r" = ok ] && ok "text-json (rows, reservation, schema)" || bad text-json "$r"

# What goes wrong is said, and nothing is printed as if it were an estimate.
expect() {	# NAME RC PATTERN ARGS...
	local name=$1 rc=$2 pat=$3 got
	shift 3
	"$K" estimate "$@" >o.txt 2>e.txt
	got=$?
	if [ "$got" = "$rc" ] && grep -q -- "$pat" e.txt && [ ! -s o.txt ]; then
		ok "$name (exit $rc: $(head -n 1 e.txt))"
	else
		bad "$name" "exit $got, want $rc and '$pat': $(head -c 200 e.txt)"
	fi
}
mkroot rn && rm rn/proc/kpageflags
expect no-kpageflags 1 "kpageflags: No such file" --root rn
mkroot rn && rm rn/proc/kcore
expect no-kcore 1 "kcore: No such file" --root rn
mkroot rn && rm rn/proc/kcore && echo "not an ELF" >rn/proc/kcore
expect bad-kcore 1 "not an ELF64 core" --root rn
mkroot rn && sed -i 's/^[0-9a-f]*-[0-9a-f]*/00000000-00000000/' rn/proc/iomem
expect iomem-not-root 1 "shown to root only" --root rn
mkroot rn && : >rn/proc/kpageflags
expect kpageflags-empty 1 "no flags for any page" --root rn
expect bad-level 2 "level: '1,40'" --level 1,40
expect bad-sample 2 "sample: '0'" --sample 0
expect bad-rate 2 "write-rate" --write-rate x
expect operand 2 "see 'kdumpinit estimate --help'" extra
finish
