#!/bin/sh
# Processes in mount namespaces of their own (unshare -m: a tmpfs that the
# host does not see, or that tmpfs as their root after pivot_root) whose
# program and library exist only there: the helper returns the right file
# each way (map_files, openat2, setns), and eu-stacktrace, sampling them
# live, resolves their frames to the right functions through it, with one
# unwinding thread or two sharing the helper, and in its sanitized build.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage

# The protocol: each way, each file, compared with the staged copy.
for kind in plain root; do
  start_ns "$kind" "proto-$kind" "" sleep 60 || exit 1
  "$PYTHON3" - "$pid" "$kind" "$tmp/proto-$kind" "$stage" "$helper" > "$tmp/proto-$kind.tap" <<'PY'
import os, sys
import nsh
pid, kind, dir_, stage, helper = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
files = {"plain": [(f"{dir_}/bin/nsprog", "plain/bin/nsprog"), (f"{dir_}/lib/libnswork.so", "plain/lib/libnswork.so")],
         "root": [("/app/bin/nsprog", "root/app/bin/nsprog"), ("/app/lib/libnswork.so", "root/app/lib/libnswork.so")]}[kind]
h = nsh.Helper(helper)
for path, staged in files:
    start, end = nsh.maps_of(pid, path)
    want_id, want_sum = nsh.build_id_of(f"{stage}/{staged}"), nsh.sha256(f"{stage}/{staged}")
    for way in ("map_files", "openat2", "setns"):
        reply, fd = h.open(pid, path, start=hex(start), end=hex(end), build_id=want_id, ways=[way])
        same = fd is not None and nsh.sha256_fd(fd) == want_sum and nsh.build_id_of_fd(fd) == want_id
        print(f"{'ok' if reply.get('ok') and reply.get('way') == way and same else 'not ok'} - "
              f"{kind}: {path} by {way}: {'the very file (same bytes, build-id ' + want_id[:12] + ')' if same else reply}")
        if fd is not None:
            os.close(fd)
    # A mapping that mprotect split since the recording: map_files has no
    # entry of the recorded range any more, but one that holds its start.
    reply, fd = h.open(pid, path, start=hex(start + 16), end=hex(end + 4096), build_id=want_id,
                       ways=["map_files"])
    same = fd is not None and nsh.sha256_fd(fd) == want_sum
    print(f"{'ok' if reply.get('ok') and same else 'not ok'} - {kind}: {path} by map_files, from "
          f"a range that is no longer exact: the mapping holding its start ({reply.get('way') or reply})")
    if fd is not None:
        os.close(fd)
h.close()
PY
  tap_relay < "$tmp/proto-$kind.tap"
  kill "$pid"
done

# Live, each way in turn (EU_STACKTRACE_NS_HELPER_WAYS restricts the
# helper), in a namespace with a root of its own.
chain="nswork_leaf:nswork_run,ns_middle,ns_outer,main,$libc_start"
hidden="ns_hidden_leaf:ns_middle,ns_outer,main,$libc_start"
for way in map_files openat2 setns; do
  # shellcheck disable=SC2046  # the command prints the words of a command line on purpose
  EU_STACKTRACE_NS_HELPER_WAYS=$way sample "live-$way" --ns-helper=spawn -- \
    $(ns_command root "live-$way" "" 700)
  w1=$(way_of "live-$way" /app/bin/nsprog) w2=$(way_of "live-$way" /app/lib/libnswork.so)
  if [ "$w1" = "$way" ] && [ "$w2" = "$way" ]; then
    tap_ok "live, root of its own: the helper opened /app/bin/nsprog and /app/lib/libnswork.so by $way"
  else
    tap_not_ok "live, root of its own: opened by $way (got '$w1', '$w2')"; diag "$tmp/live-$way.err"
  fi
  check_chains "live-$way" "live, by $way: frames in the namespace's files" 250 "$chain" "$hidden"
done

# The default (every way, in order), in a namespace that shares the host's
# root but mounts the program's directory over an empty one.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
sample live-plain -- $(ns_command plain live-plain "" 700)
w=$(way_of live-plain "$tmp/live-plain/bin/nsprog")
if [ "$w" = map_files ]; then
  tap_ok "live, plain unshare -m: the helper opened the program by map_files, its first way"
else
  tap_not_ok "live, plain unshare -m: opened by map_files (got '$w')"; diag "$tmp/live-plain.err"
fi
check_chains live-plain "live, plain unshare -m: frames in the namespace's files" 250 "$chain" "$hidden"

# Without the helper, the same files are not found, and the run says why.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
sample live-none --ns-helper=none -- $(ns_command root live-none "" 300)
if grep -q "/app/bin/nsprog: host path: No such file or directory" "$tmp/live-none.err"; then
  tap_ok "--ns-helper=none: /app/bin/nsprog is reported not found, with the host's reason"
else
  tap_not_ok "--ns-helper=none: /app/bin/nsprog reported not found"; diag "$tmp/live-none.err"
fi

# Two unwinding threads share one helper, asked once per file.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
sample live-jobs -j 2 -- $(ns_command root live-jobs "" 700)
if grep -q "namespace helper:   2 requests, 2 found" "$tmp/live-jobs.err"; then
  tap_ok "-j 2: two unwinders asked the helper once per file (2 requests for 2 files)"
else
  tap_not_ok "-j 2: the helper asked once per file"; diag "$tmp/live-jobs.err"
fi
check_chains live-jobs "-j 2: frames in the namespace's files" 250 "$chain" "$hidden"

# -p: a running process; its maps come from /proc/PID/maps, without
# build-ids: the files are matched by inode.
start_ns root live-pid "" 2500 || exit 1
sample live-pid -p "$pid"
check_chains live-pid "-p, maps without build-ids: frames in the namespace's files" 250 "$chain" "$hidden"

# The sanitized build, clean on the same work.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
EU=$EU_STACKTRACE_ASAN sample live-asan -- $(ns_command root live-asan "" 500)
status=$?
if [ $status -eq 0 ] && ! grep -q "Sanitizer" "$tmp/live-asan.err" && [ "$(way_of live-asan /app/bin/nsprog)" = map_files ]; then
  tap_ok "AddressSanitizer/UBSan build: clean, and the helper opened the namespace's files"
else
  tap_not_ok "AddressSanitizer/UBSan build clean (status $status)"; diag "$tmp/live-asan.err"
fi
check_chains live-asan "sanitized build: frames in the namespace's files" 100 "$chain"
plan_and_done
