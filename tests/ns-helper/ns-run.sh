#!/bin/sh
# ns-run.sh KIND DIR STAGE SETUP -- PROGRAM [ARG...]
#
# Runs PROGRAM in a mount namespace of its own whose files exist nowhere
# else: a tmpfs mounted at DIR (an empty directory on the host) and filled
# from STAGE (ns-lib.sh's make_stage).  The process keeps the pid this
# script started with, through every exec.
#
#   plain  unshare -m: the test program at DIR/bin/nsprog, its library in
#          DIR/lib (found through LD_LIBRARY_PATH); the rest is the host's
#   root   unshare -m, and the tmpfs becomes the root (pivot_root, as
#          container runtimes do): /app/bin/nsprog, /app/lib/libnswork.so,
#          and copies of libc and the dynamic linker
#   user   the same as root in `unshare -U -m -r', for an unprivileged user
#
# SETUP, when not empty, is a shell script sourced once the copies are in,
# with $root set to the tmpfs: it adds what a test needs (symlinks,
# debuginfo, special files).
set -eu
if [ "$1" != --inside ]; then
  case $1 in
    plain|root) exec unshare -m --propagation private sh "$0" --inside "$@" ;;
    user) exec unshare -U -m -r --propagation private sh "$0" --inside "$@" ;;
    *) echo "ns-run.sh: unknown kind $1" >&2; exit 2 ;;
  esac
fi
shift
kind=$1 root=$2 stage=$3 setup=$4
shift 4
[ "$1" = -- ] && shift
mount -t tmpfs -o mode=755 eu-stacktrace-ns-test "$root"
if [ "$kind" = plain ]; then
  cp -R "$stage/plain/." "$root/"
else
  cp -R "$stage/root/." "$root/"
fi
if [ -n "$setup" ]; then
  # shellcheck disable=SC1090  # the test writes the setup script at run time
  . "$setup"
fi
if [ "$kind" = plain ]; then
  LD_LIBRARY_PATH=$root/lib exec "$@"
fi
exec "$stage/enter-root" "$root" "$@"
