#!/bin/sh
# deps/run.sh LOG CMD [ARG]... -- run one build step of a third-party library
# with its output in LOG, so a normal build prints one line per library and
# a failure shows the end of the log.
set -u
log=$1
shift
mkdir -p "$(dirname "$log")"

# The top-level make's command-line variables (`make CFLAGS=-Werror`) reach
# us twice: in MAKEFLAGS after " -- " (sub-makes would obey them) and in the
# environment (configure scripts would).  They are meant for kdumpinit, not
# for lz4/zlib/libelf, whose flags deps.mk passes explicitly.  The job-server
# flags before " -- " are kept so that -j still works.
case ${MAKEFLAGS:-} in
*" -- "*) MAKEFLAGS=${MAKEFLAGS%% -- *}; export MAKEFLAGS ;;
esac
unset CFLAGS CPPFLAGS LDFLAGS LDLIBS

"$@" >"$log" 2>&1 && exit 0
rc=$?
echo "deps/run.sh: failed ($rc): $*" >&2
echo "---- last lines of $log:" >&2
tail -n 30 "$log" >&2
exit "$rc"
