#!/bin/bash
# make demo: crash a QEMU guest, show kdumpinit capturing the dump from the
# crash kernel (its console lines), then what `kdumpinit info` sees on the
# dump disk. Takes a few minutes under TCG. Options as for run.sh; the
# default dump level here is 31, and there is no raw reference copy:
# kdumpinit is the crash kernel's only init, as users run it.
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" --demo --no-raw --level 31 --workdir "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/e2e/demo" "$@"
