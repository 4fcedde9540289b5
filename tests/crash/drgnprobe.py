# drgnprobe.py CORE VMLINUX: open a saved dump with drgn and print what
# tests/crash/readers.sh judges, one "key value" line each:
#   release  init_uts_ns.name.release
#   panic    1 if the printk log holds "sysrq triggered crash", else 0
#   tasks    how many tasks for_each_task walks
# An exception at any step prints "error STEP: TYPE: MESSAGE" and stops
# there: the steps before it still count.
# Works with drgn 0.0.22 (Debian 12) and 0.3.0 (sid): both keep
# Program.set_core_dump and load_debug_info.
import sys

import drgn
from drgn.helpers.linux.pid import for_each_task
from drgn.helpers.linux.printk import get_dmesg


def step(name, fn):
    try:
        return fn()
    except Exception as e:  # report any reader failure as a result
        msg = str(e).replace("\n", " ")[:300]
        print(f"error {name}: {type(e).__name__}: {msg}")
        sys.stdout.flush()
        sys.exit(0)


core, vmlinux = sys.argv[1], sys.argv[2]
print(f"drgn {drgn.__version__}")
prog = drgn.Program()
step("open", lambda: prog.set_core_dump(core))
step("debuginfo", lambda: prog.load_debug_info([vmlinux]))
rel = step("release", lambda: prog["init_uts_ns"].name.release.string_().decode())
print(f"release {rel}")
log = step("dmesg", lambda: get_dmesg(prog))
print(f"panic {1 if b'sysrq triggered crash' in log else 0}")
n = step("tasks", lambda: sum(1 for _ in for_each_task(prog)))
print(f"tasks {n}")
