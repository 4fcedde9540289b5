#!/usr/bin/python3
"""drgnsteps: one basic drgn task on a vmcore, for pfns-read.sh to trace.

usage: drgnsteps.py VMCORE VMLINUX STEP

STEP is one of
  open     the dump and the vmlinux's debug info (every step does this first)
  release  prog['init_uts_ns'].name.release
  printk   the log, drgn.helpers.linux.printk.get_printk_records()
  tasks    every task, drgn.helpers.linux.pid.for_each_task(), pid and comm
  session  all of the above in one session, then the stack trace of the
           crashed thread (prog.crashed_thread(): the task of the PRSTATUS
           note of the CPU that crashed), for coverage.sh

Prints "drgnsteps: ok STEP ..." and exits 0 when the step worked.
"""
import sys

import drgn


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    vmcore, vmlinux, step = sys.argv[1:]
    prog = drgn.Program()
    prog.set_core_dump(vmcore)
    prog.load_debug_info([vmlinux])
    what = ""
    if step == "session":
        from drgn.helpers.linux.pid import for_each_task
        from drgn.helpers.linux.printk import get_printk_records
        rel = prog["init_uts_ns"].name.release.string_().decode()
        recs = get_printk_records(prog)
        hit = sum(1 for r in recs if b"sysrq triggered crash" in r.text)
        n = 0
        for t in for_each_task(prog):
            t.pid.value_()
            t.comm.string_()
            n += 1
        th = prog.crashed_thread()
        # drgn 0.0.22 cannot unwind 6.12 on ("unknown ORC entry type 3"):
        # said, and the rest of the session still counts
        try:
            frames = [f.name or hex(f.pc) for f in th.stack_trace()]
        except Exception as e:  # noqa: BLE001  drgn raises plain Exception here
            frames = []
            print(f"stack trace failed: {e}")
        for f in frames:
            print(f"frame {f}")
        what = (f"release {rel}, {len(recs)} records, {hit} with the panic, {n} tasks, "
                f"crashed thread {th.tid} with {len(frames)} frames")
    elif step == "release":
        what = prog["init_uts_ns"].name.release.string_().decode()
    elif step == "printk":
        from drgn.helpers.linux.printk import get_printk_records
        recs = get_printk_records(prog)
        hit = [r for r in recs if b"sysrq triggered crash" in r.text]
        what = f"{len(recs)} records, {len(hit)} with the panic"
    elif step == "tasks":
        from drgn.helpers.linux.pid import for_each_task
        n = 0
        for t in for_each_task(prog):
            t.pid.value_()
            t.comm.string_()
            n += 1
        what = f"{n} tasks"
    elif step != "open":
        sys.exit(f"drgnsteps: unknown step {step}")
    print(f"drgnsteps: ok {step} {what}")


if __name__ == "__main__":
    main()
