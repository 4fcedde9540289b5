#!/bin/bash
# --json against the human output (docs/CLI.md, "Machine-readable output"):
# on the same dumps and devices, `info`, `status` and `save --check` print
# both, and each member the text also says must say the same: the state
# and why, the kernel, level, pages, sizes (the text's MiB rounded from the
# JSON's bytes), the excluded classes, the lines of status, the exit code.
# Dumps: complete, two on one device, cut short by a full device, empty,
# sealed read without its key and with it.
set -u
cd "$(dirname "$0")/../.."
. tests/lib/suite.sh json
PY=/usr/bin/python3

# The comparison: text on TEXT, JSON on JSON, each exit code; prints
# "ok" or what disagrees.
cat >"$W/cmp.py" <<'EOF'
import json, re, sys
kind, text_f, json_f, rc_text, rc_json = sys.argv[1:6]
text, raw = open(text_f).read(), open(json_f).read()
bad = []
try:
    j = json.loads(raw)
except ValueError as e:
    print("not JSON: %s: %r" % (e, raw[:200])); sys.exit(1)
if rc_text != rc_json:
    bad.append("exit %s (text) vs %s (--json)" % (rc_text, rc_json))
if j.get("exit") != int(rc_json):
    bad.append("member exit %r, the command exited %s" % (j.get("exit"), rc_json))
mib = lambda b: "%.1f" % (b / 1048576.0)

def field(block, label):
    m = re.search(r"^%s (.*)$" % re.escape(label.ljust(12)), block, re.M)
    return m.group(1) if m else None

if kind == "info":
    if j.get("schema") != "kdumpinit-info/1":
        bad.append("schema %r" % j.get("schema"))
    blocks = [b for b in re.split(r"\n\n(?=source )", text) if b.strip()]
    if len(blocks) != len(j["dumps"]):
        bad.append("%d reports, %d dumps in JSON" % (len(blocks), len(j["dumps"])))
    for b, d in zip(blocks, j["dumps"]):
        n = "dump %s: " % d["number"]
        if field(b, "source") != j["source"]:
            bad.append(n + "source %r vs %r" % (field(b, "source"), j["source"]))
        if not field(b, "claim").startswith(j["claim"]):
            bad.append(n + "claim")
        if field(b, "capacity") != mib(j["capacity_bytes"]) + " MiB":
            bad.append(n + "capacity %r vs %s" % (field(b, "capacity"), j["capacity_bytes"]))
        st = field(b, "state")
        if not st.startswith(d["state"]):
            bad.append(n + "state %r vs %r" % (st, d["state"]))
        if d["state"] == "incomplete" and "(%s)" % d["why"] not in st:
            bad.append(n + "why %r not in %r" % (d["why"], st))
        if d["state"] == "empty":
            continue
        if "saved" in d and (", saved" in st) != d["saved"]:
            bad.append(n + "saved %r vs %r" % (st, d["saved"]))
        if field(b, "kernel") != (d["kernel"] or "unknown"):
            bad.append(n + "kernel %r vs %r" % (field(b, "kernel"), d["kernel"]))
        lv = field(b, "dump level")
        if d["dump_level"] is not None and not lv.startswith(str(d["dump_level"])):
            bad.append(n + "level %r vs %r" % (lv, d["dump_level"]))
        if field(b, "page size") != "%d bytes" % d["page_size"]:
            bad.append(n + "page size")
        if d["sealed"]:
            s = field(b, "sealed")
            if not s or ("to key %s " % d["key_id"]) not in s:
                bad.append(n + "key %r vs %r" % (s, d["key_id"]))
        if d["locked"]:
            c = field(b, "content")
            want = "%d chunks sealed (%s MiB of pages)" % (d["sealed_chunks"], mib(d["sealed_page_bytes"]))
            if c != want:
                bad.append(n + "content %r vs %r" % (c, want))
        else:
            want = "%s MiB in %d segments" % (mib(d["memory_bytes"]), d["segments"])
            if field(b, "memory") != want:
                bad.append(n + "memory %r vs %r" % (field(b, "memory"), want))
            pk = field(b, "pages kept")
            want = "%d (%s MiB uncompressed, %s MiB stored)" % (
                d["pages_kept"], mib(d["pages_kept"] * d["page_size"]), mib(d["bytes_stored"]))
            if pk != want:
                bad.append(n + "pages kept %r vs %r" % (pk, want))
            if field(b, "kernel log") != ("yes" if d["kernel_log"] else "no"):
                bad.append(n + "kernel log")
        ds = field(b, "dump size")
        if not ds or not ds.startswith(mib(d["dump_bytes"]) + " MiB on the device"):
            bad.append(n + "dump size %r vs %s" % (ds, d["dump_bytes"]))
        if d["pages_scanned"] is not None and not d["locked"]:
            if field(b, "scanned") != "%d pages scanned" % d["pages_scanned"]:
                bad.append(n + "scanned")
            ex = dict((m.group(1), int(m.group(2))) for m in
                      re.finditer(r"^(?:excluded|            ) +(\S+) +(\d+) pages$", b, re.M))
            if ex != d["excluded"]:
                bad.append(n + "excluded %r vs %r" % (ex, d["excluded"]))
elif kind == "status":
    if j.get("schema") != "kdumpinit-status/1":
        bad.append("schema %r" % j.get("schema"))
    lines = ["%-13s %s" % (l["item"], l["text"]) for l in j["lines"]]
    if lines != text.rstrip("\n").split("\n"):
        bad.append("lines differ: %r vs %r" % (lines, text.split("\n")))
    want = 1 if j["error"] else 6 if not j["armed"] else 4 if not j["device_ok"] else \
        7 if j["stale"] else 8 if j["unsaved"] else 0
    if want != j["exit"]:
        bad.append("flags say exit %d, exit is %d" % (want, j["exit"]))
else:
    want = {0: "dump", 1: "none", 4: "unreadable"}.get(int(rc_json))
    if j.get("schema") != "kdumpinit-save-check/1" or j.get("answer") != want:
        bad.append("answer %r for exit %s" % (j.get("answer"), rc_json))
print("; ".join(bad) if bad else "ok")
EOF

both() {	# NAME KIND CMD...: the command as text and with --json, compared
	local n=$1 kind=$2 rt rj why
	shift 2
	"$@" >"$W/t" 2>/dev/null
	rt=$?
	"$@" --json >"$W/j" 2>/dev/null
	rj=$?
	why=$($PY "$W/cmp.py" "$kind" "$W/t" "$W/j" $rt $rj 2>&1)
	[ "$why" = ok ] && ok "$n (exit $rj)" || bad "$n" "$why"
}

cd "$W" || exit 1
"$MKVMCORE" -o a.core --mem 64M --seed 3 --crashtime 1750000000 >/dev/null &&
	"$MKVMCORE" -o b.core --mem 96M --seed 4 --zero-pct 40 >/dev/null || bad setup "mkvmcore failed"

"$K" format e.img --size 16M >/dev/null 2>&1
both "info: an empty device" info "$K" info e.img
"$K" capture --vmcore a.core --output one.img --level 31 >/dev/null 2>&1
both "info: a complete dump" info "$K" info one.img
"$K" capture --vmcore a.core --output two.img --level 1 >/dev/null 2>&1
"$K" capture --vmcore b.core --output two.img --level 31 >/dev/null 2>&1
both "info: two dumps on one device" info "$K" info two.img
both "info --dump 2 of two" info "$K" info two.img --dump 2
"$K" save two.img --output first.kdump >/dev/null 2>&1
both "info: the first of two saved" info "$K" info two.img
"$K" format small.img --size 6M >/dev/null 2>&1
"$K" capture --vmcore b.core --output small.img --level 0 >/dev/null 2>&1
both "info: a dump cut short by a full device" info "$K" info small.img
"$K" keygen k.sec k.pub >/dev/null 2>&1
"$K" capture --vmcore a.core --output sealed.img --pubkey k.pub >/dev/null 2>&1
both "info: a sealed dump without its key" info "$K" info sealed.img
both "info: a sealed dump with its key" info "$K" info sealed.img --key k.sec

# Each kind must be able to fail: the comparison on a JSON with one member
# changed.
"$K" info one.img >t 2>/dev/null
"$K" info one.img --json 2>/dev/null | $PY -c 'import json,sys; j=json.load(sys.stdin); j["dumps"][0]["pages_kept"]+=1; print(json.dumps(j))' >j
r=$($PY cmp.py info t j 0 0)
[ "$r" != ok ] && ok "the info comparison fails on one changed member ($r)" || bad "info comparison can fail" "it passed"

# status: on this machine, and against a fake root.
both "status: this machine, a claimed file as --dev" status "$K" status --dev one.img
mkdir -p root/sys/kernel root/run root/etc/default root/proc
echo $((256 << 20)) >root/sys/kernel/kexec_crash_size
echo 0 >root/sys/kernel/kexec_crash_loaded
echo "BOOT_IMAGE=/vmlinuz" >root/proc/cmdline
both "status: a fake root with a reservation, nothing loaded" status "$K" status --root "$W/root" --dev two.img
"$K" status --dev one.img --json >j 2>/dev/null
"$K" status --dev one.img >t 2>/dev/null
rc=$?
sed -i 's/"armed":[a-z]*/"armed":true/; s/"unsaved":[a-z]*/"unsaved":false/' j
r=$($PY cmp.py status t j $rc $rc)
[ "$r" != ok ] && ok "the status comparison fails on flags that do not give the exit ($r)" ||
	bad "status comparison can fail" "it passed"

# save --check
both "save --check: a dump to save" check "$K" save one.img --check
"$K" save one.img --dir "$W/saved" >/dev/null 2>&1 || mkdir -p saved
"$K" save one.img --dir "$W/saved" >/dev/null 2>&1
both "save --check: nothing left to save" check "$K" save one.img --check
both "save --check: a source that does not read" check "$K" save none.img --check
finish
