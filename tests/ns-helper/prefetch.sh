#!/bin/sh
# A process's files that only the namespace helper has are asked for
# together (st_resolver_prefetch, st_ns_client_prefetch): a recording of a
# process in a mount namespace of its own (its program, library, libc and
# dynamic linker are copies only it has), unwound while the process lives.
# The spawned helper gets several requests before it answers one (strace of
# eu-stacktrace: sends with no reply read between, each request's id in
# order), finds every file, and the output is byte for byte that of the
# same recording unwound through the helper as a service, which is asked
# one file at a time (the oracle: the requests, not the answers, changed).
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
make_stage

# A second process's program sits under a path of 1,500 control bytes,
# which its request writes as \u0001 each: more than a message holds.  It
# is left out of the batch and fails alone; the helper stays.
cat > "$tmp/long.setup" <<'SETUP'
long=$(printf '/%0250d' 0 0 0 0 0 0 | tr 0 '\001')
mkdir -p "$root$long"
cp "$root/app/bin/nsprog" "$root$long/nsprog"
SETUP
long=$(printf '/%0250d' 0 0 0 0 0 0 | tr 0 '\001')
mkdir -p "$tmp/long"
sh "$nsh_src/ns-run.sh" root "$tmp/long" "$stage" "$tmp/long.setup" -- "$long/nsprog" 600000 \
  > "$tmp/long.log" 2>&1 &
long_pid=$!
started_pids="$started_pids $long_pid"
wait_nsprog "$long_pid" || tap_bail "the long-named process did not start: $(cat "$tmp/long.log")"
start_ns root pf "" 600000 || exit 1
# perf records the processes for as long as `sleep 2' runs (a duration, not
# a wait for anything); -B: no build-id table, so that the files are
# checked by their inodes (MMAP2), and the copies are not the host's files.
run_perf record -B -e cpu-clock -F 999 --call-graph dwarf,8192 -p "$pid,$long_pid" \
  -o "$tmp/pf.data" -- sleep 2 > "$tmp/record.out" 2> "$tmp/record.err"
# Off the CPUs, alive for the helper to open their files.
kill -STOP "$pid" "$long_pid"

# unwind NAME ARGS...: eu-stacktrace on the recording, its --stats in
# $tmp/NAME.err, its output in $tmp/NAME.txt.
unwind () {
  name=$1
  shift
  "$EU_STACKTRACE" -v --stats -j 1 -i "$tmp/pf.data" -f text -o "$tmp/$name.txt" "$@" \
    2> "$tmp/$name.err"
  status=$?
  grep -E "^(samples read|namespace helper:|  asked together|  round trips)" "$tmp/$name.err" \
    | sed "s/^/# $name: /"
  return $status
}

# 1. Spawned: the files of the process are asked for together.
strace -f -o "$tmp/spawn.strace" -e trace=sendmsg,recvmsg \
  "$EU_STACKTRACE" -v --stats -j 1 -i "$tmp/pf.data" -f text -o "$tmp/spawn.txt" \
  --ns-helper=spawn 2> "$tmp/spawn.err"
status=$?
grep -E "^(samples read|namespace helper:|  asked together|  round trips)" "$tmp/spawn.err" \
  | sed "s/^/# spawn: /"
together=$(sed -n 's/^  asked together: *\([0-9]*\) files in \([0-9]*\) batches.*/\1 \2/p' \
  "$tmp/spawn.err")
if [ $status -eq 0 ] && [ "$(way_of spawn /app/bin/nsprog)" = map_files ] \
    && [ "$(way_of spawn /app/lib/libnswork.so)" = map_files ] \
    && [ "${together%% *}" -ge 2 ] 2> /dev/null; then
  tap_ok "spawned helper: the process's files asked for together and found ($together: files, batches)"
else
  tap_not_ok "spawned helper: the process's files asked for together"; diag "$tmp/spawn.err"
fi

# The program under the long name: its own failure, nothing lost.
if ! grep -qE "^  lost:|killed by signal|not available" "$tmp/spawn.err" \
    && grep -q "request does not fit in a message" "$tmp/spawn.err"; then
  tap_ok "a name too long for a message fails alone: the helper is neither lost nor given up on"
else
  tap_not_ok "a name too long for a message"
  grep -E "lost|killed|not available|does not fit" "$tmp/spawn.err" | tr '\001' '^' | cut -c1-300 \
    | sed 's/^/#   /'
fi

# What eu-stacktrace itself sent and read on the helper's socket, in order:
# the pid of its first line is eu-stacktrace's (strace -f also follows the
# helper, whose own sends and reads are another pid's).
"$PYTHON3" - "$tmp/spawn.strace" > "$tmp/spawn.order" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
me = lines[0].split()[0]
events = []
for line in lines:
    pid, rest = line.split(None, 1)
    if pid != me:
        continue
    # A call another traced process interrupted is printed in two parts:
    # the request's id is in a send's first, a reply's in its "resumed".
    m = re.search(r'(sendmsg|recvmsg)(?:\(| resumed>).*?\\"id\\":(\d+)', rest)
    if m:
        events.append((m.group(1)[:4], int(m.group(2))))
print(" ".join(f"{k}{i}" for k, i in events))
# The longest run of sends with no read between, and whether every reply
# answered the oldest request still open (ids in order).
run = longest = 0
pending = []
in_order = True
for kind, i in events:
    if kind == "send":
        run += 1
        longest = max(longest, run)
        pending.append(i)
    else:
        run = 0
        in_order = in_order and bool(pending) and pending.pop(0) == i
print(f"longest {longest} in_order {in_order} open {len(pending)}")
PY
sed 's/^/# /' "$tmp/spawn.order"
if grep -q "^longest [2-9] in_order True open 0" "$tmp/spawn.order"; then
  tap_ok "strace: requests sent before the first reply was read, every reply in order ($(tail -n 1 "$tmp/spawn.order"))"
else
  tap_not_ok "strace: requests in flight together"
fi

# 2. The service, asked one file at a time: the same answers.
mkdir "$tmp/sock"
sock=$tmp/sock/ns-helper.socket
start_service "$sock" "$helper" || tap_bail "the helper's service did not start"
if unwind service --ns-helper="$sock" && ! grep -q "asked together" "$tmp/service.err" \
    && [ "$(way_of service /app/bin/nsprog)" = map_files ]; then
  tap_ok "the service: its files asked for one at a time, found by map_files"
else
  tap_not_ok "the service, one at a time"; diag "$tmp/service.err"
fi
samples=$(grep -c . "$tmp/spawn.txt")
if [ "$samples" -gt 0 ] && cmp -s "$tmp/spawn.txt" "$tmp/service.txt" \
    && grep -q "nswork_leaf" "$tmp/spawn.txt"; then
  tap_ok "output identical, asked together or one at a time ($samples lines, frames in the namespace's library)"
else
  tap_not_ok "output identical, asked together or one at a time"
  diff "$tmp/spawn.txt" "$tmp/service.txt" | head -n 20 | sed 's/^/#   /'
fi
kill -KILL "$pid" "$long_pid"
plan_and_done
