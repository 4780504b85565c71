#!/bin/sh
# eu-stacktrace carries on when its helper dies: a spawned helper killed in
# the middle of a run is started again, and a library that the namespaced
# process loads afterwards is still found through it; a helper that keeps
# dying, or cannot start, is given up, and the run completes, reporting the
# files it could not find and why.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
cat > "$tmp/dlopen.setup" <<EOF
cp "$TOP_BUILDDIR/tests/workloads/dlopen" "\$root/app/bin/dlopen"
cp "$TOP_BUILDDIR/tests/workloads/plugin.so" "\$root/app/lib/plugin.so"
EOF

# The dlopen workload in a root of its own: /app/bin/dlopen, then, once
# sent SIGUSR1 (after the helper is killed), /app/lib/plugin.so.
# (The sanitized build: the client's restart runs clean.)
mkdir -p "$tmp/killed"
# (SCHED_FIFO, reset on fork, as ns-lib.sh's sample: the samples are counted.)
chrt -f -R 1 "$EU_STACKTRACE_ASAN" -v --stats -f json -o "$tmp/killed.jsonl" -- \
  sh "$nsh_src/ns-run.sh" root "$tmp/killed" "$stage" "$tmp/dlopen.setup" -- \
  /app/bin/dlopen /app/lib/plugin.so 300 800 go > "$tmp/killed.out" 2> "$tmp/killed.err" &
eu=$!
started_pids="$started_pids $eu"
# Once the helper has opened the program, kill it.
i=0
while ! grep -q "/app/bin/dlopen: opened by the namespace helper" "$tmp/killed.err" && [ $i -lt 3000 ]; do
  sleep 0.02
  i=$((i + 1))
done
first=$(pgrep -P "$eu" -x eu-stacktrace-n)
[ -n "$first" ] || first=$(pgrep -P "$eu" -f eu-stacktrace-ns-helper)
if [ -n "$first" ]; then
  kill -9 "$first"
  echo "# killed the helper, pid $first, after it opened /app/bin/dlopen"
fi
# Now the library may be loaded (the workload waits at most 60 s for it).
# It is eu-stacktrace's child (ns-run.sh and enter-root exec); other tests
# run workloads named dlopen too.
pkill -USR1 -P "$eu" -x dlopen || echo "# no dlopen process to let go on"
wait "$eu"
status=$?
grep -E "namespace helper|samples read|lost:" "$tmp/killed.err" | sed 's/^/# /'
if [ -n "$first" ] && [ $status -eq 0 ] && grep -q "killed by signal 9.*starting it again" "$tmp/killed.err" \
    && ! grep -q Sanitizer "$tmp/killed.err"; then
  tap_ok "the helper, killed mid-run, is reported and started again; the run completes"
else
  tap_not_ok "a killed helper is restarted (status $status, helper '${first}')"; diag "$tmp/killed.err"
fi
if [ "$(way_of killed /app/lib/plugin.so)" = map_files ] && grep -q "lost:             1 times, started again 1 times" "$tmp/killed.err"; then
  tap_ok "the library loaded after the kill was opened by the restarted helper (map_files)"
else
  tap_not_ok "the library loaded after the kill was opened by the restarted helper"
fi
check_chains killed "after the restart: frames in the library loaded then" 300 \
  "plugin_hot:plugin_middle,plugin_entry,run_plugin,main,$libc_start"

# A helper that dies at once, every time.
printf '#!/bin/sh\nexit 3\n' > "$tmp/dying-helper"
chmod 755 "$tmp/dying-helper"
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
EU=$EU_STACKTRACE_ASAN EU_STACKTRACE_NS_HELPER=$tmp/dying-helper sample dying -- $(ns_command root dying "" 300)
status=$?
if [ $status -eq 0 ] && grep -q "lost:             4 times, started again 3 times" "$tmp/dying.err" \
    && ! grep -q Sanitizer "$tmp/dying.err" \
    && grep -q "/app/lib/libnswork.so: host path: No such file or directory; namespace helper: the helper failed: .*(exit status 3); not started again" "$tmp/dying.err"; then
  tap_ok "a helper that keeps dying is given up after 3 restarts; the run completes and says why"
else
  tap_not_ok "a helper that keeps dying is given up (status $status)"; diag "$tmp/dying.err"
fi
"$PYTHON3" - "$tmp/dying.jsonl" > "$tmp/dying.count" <<'PY'
import json, sys
samples = [json.loads(l) for l in open(sys.argv[1])]
ours = [s for s in samples if s["comm"] == "nsprog"]
print(len(samples), len(ours), sum(1 for s in ours if s["frames"] and s["frames"][0]["address"]))
PY
read -r samples ours with_pc < "$tmp/dying.count"
if [ "$ours" -gt 200 ] && [ "$with_pc" = "$ours" ]; then
  tap_ok "... and every sample is still written, with its pc ($ours of nsprog's, $samples in all)"
else
  tap_not_ok "... every sample still written ($samples, $ours of nsprog's, $with_pc with a pc)"
fi

# A helper that serves, but does not go when the run closes its
# connection: the real helper under a wrapper that then sleeps, with the
# pid eu-stacktrace spawned.  The run ends anyway (ns-connection.c's reap
# waits a second, then kills it), and the wrapper is gone after it.
cat > "$tmp/lingering-helper" <<EOF
#!/bin/sh
echo \$\$ > "$tmp/lingering.pid"
"$helper" "\$@"
exec sleep 600
EOF
chmod 755 "$tmp/lingering-helper"
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
EU_STACKTRACE_NS_HELPER=$tmp/lingering-helper sample lingering -- $(ns_command root lingering "" 300)
status=$?
lingering=$(cat "$tmp/lingering.pid" 2> /dev/null)
if [ $status -eq 0 ] && [ -n "$lingering" ] && ! kill -0 "$lingering" 2> /dev/null \
    && grep -q "/app/bin/nsprog: opened by the namespace helper" "$tmp/lingering.err"; then
  tap_ok "a helper that does not go when its connection closes is killed; the run completes"
else
  tap_not_ok "a lingering helper (status $status, pid '$lingering')"; diag "$tmp/lingering.err"
  [ -n "$lingering" ] && kill -9 "$lingering" 2> /dev/null
fi

# A helper that cannot start.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
EU_STACKTRACE_NS_HELPER=$tmp/no-such-helper sample missing -- $(ns_command root missing "" 300)
status=$?
if [ $status -eq 0 ] && grep -q "/app/bin/nsprog: host path: No such file or directory; namespace helper: cannot start $tmp/no-such-helper: No such file or directory" "$tmp/missing.err"; then
  tap_ok "a helper that cannot start: the run completes and says why the files were not found"
else
  tap_not_ok "a helper that cannot start (status $status)"; diag "$tmp/missing.err"
fi
plan_and_done
