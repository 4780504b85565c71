#!/bin/sh
# The helper as a system service: systemd's socket activation, one helper
# per connection (Accept=yes), emulated by systemd-socket-activate, which
# passes each connection the same way (LISTEN_FDS=1, descriptor 3).  A
# user's eu-stacktrace reaches its own namespaced process through the
# privileged service (map_files now); the service refuses that user another
# user's process unless it proves it may read it with a descriptor of the
# process's mount namespace; the shipped units pass systemd-analyze verify.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
# SCHED_FIFO with SCHED_RESET_ON_FORK (chrt -f -R 1, as ns-lib.sh's
# sample): the checks count live samples, which a profiler kept off the CPU
# by the tests beside it loses; the policy survives setpriv's exec and uid
# change, and the command it starts is reset to the normal policy.
as_user () { chrt -f -R 1 setpriv --reuid="$test_uid" --regid="$test_gid" --clear-groups "$@"; }
out=$tmp/u
mkdir "$out" "$tmp/sock"
chown "$test_user" "$out"

sock=$tmp/sock/ns-helper.socket
start_service "$sock" "$helper" || tap_bail "the helper's service did not start"

# Root's eu-stacktrace, through the service.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
sample svc-root --ns-helper="$sock" -- $(ns_command root svc-root "" 500)
if [ "$(way_of svc-root /app/bin/nsprog)" = map_files ] && grep -q "namespace helper:   2 requests, 2 found" "$tmp/svc-root.err"; then
  tap_ok "root's eu-stacktrace --ns-helper=SOCKET: the service opened the namespace's files (map_files)"
else
  tap_not_ok "root's eu-stacktrace through the service"; diag "$tmp/svc-root.err"
fi

# The user's eu-stacktrace: its own process in its own user namespace,
# which the service, privileged, opens by map_files.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
as_user env EU_STACKTRACE_NS_HELPER=/nonexistent "$EU_STACKTRACE" -v --stats -f json \
  -o "$out/svc-user.jsonl" --ns-helper="$sock" -- $(ns_command user svc-user "" 600) \
  > "$tmp/svc-user.out" 2> "$tmp/svc-user.err"
cp "$out/svc-user.jsonl" "$tmp/svc-user.jsonl"
grep -E "samples read|namespace helper:" "$tmp/svc-user.err" | sed "s/^/# svc-user: /"
if [ "$(way_of svc-user /app/bin/nsprog)" = map_files ] && [ "$(way_of svc-user /app/lib/libnswork.so)" = map_files ]; then
  tap_ok "$test_user's eu-stacktrace through the service: its process's files by map_files"
else
  tap_not_ok "$test_user's eu-stacktrace through the service"; diag "$tmp/svc-user.err"
fi
check_chains svc-user "$test_user through the service: frames in the namespace's files" 200 \
  "nswork_leaf:nswork_run,ns_middle,ns_outer,main,$libc_start"

# --ns-helper=auto with no system socket spawns; a socket that does not
# answer leaves the run going, reporting why.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
sample svc-missing --ns-helper="$tmp/sock/none.socket" -- $(ns_command root svc-missing "" 300)
# shellcheck disable=SC2181  # the status of the run above, checked with its message
if [ $? -eq 0 ] && grep -q "/app/bin/nsprog: host path: No such file or directory; namespace helper: cannot connect to $tmp/sock/none.socket" "$tmp/svc-missing.err"; then
  tap_ok "a socket nobody listens on: the run completes and says why the files were not found"
else
  tap_not_ok "a socket nobody listens on"; diag "$tmp/svc-missing.err"
fi

# Another user's process: refused, unless the client proves it may read it.
start_ns root root-proc "" sleep 60 || exit 1
as_user "$nsh_client" "$sock" open "$pid" /app/bin/nsprog > "$tmp/other.out" 2>&1
if grep -q "\"errno\":1,.*uid $test_uid may not read process $pid" "$tmp/other.out" && ! grep -q "^fd" "$tmp/other.out"; then
  tap_ok "$test_user asks the service for root's process: refused ($(sed -n 's/.*"message":"\([^"]*\)".*/\1/p' "$tmp/other.out"))"
else
  tap_not_ok "$test_user asks for root's process: refused"; diag "$tmp/other.out"
fi
as_user "$nsh_client" "$sock" open "$pid" /app/bin/nsprog all 5 5< /proc/self/ns/mnt > "$tmp/wrong-ns.out" 2>&1
if grep -q "not its mount namespace" "$tmp/wrong-ns.out" && ! grep -q "^fd" "$tmp/wrong-ns.out"; then
  tap_ok "... with a descriptor of another mount namespace: refused"
else
  tap_not_ok "... with another mount namespace's descriptor: refused"; diag "$tmp/wrong-ns.out"
fi
as_user "$nsh_client" "$sock" open "$pid" /app/bin/nsprog all 5 5< /etc/hostname > "$tmp/not-ns.out" 2>&1
if grep -q '"errno":1,' "$tmp/not-ns.out" && ! grep -q "^fd" "$tmp/not-ns.out"; then
  tap_ok "... with a descriptor that is no namespace at all: refused"
else
  tap_not_ok "... with a descriptor that is no namespace: refused"; diag "$tmp/not-ns.out"
fi
as_user "$nsh_client" "$sock" open "$pid" /app/bin/nsprog all 5 5< "/proc/$pid/ns/mnt" > "$tmp/right-ns.out" 2>&1
# (The user cannot read the process's maps, so asks without an address
# range: openat2 rather than map_files.)
if grep -q '"ok":true' "$tmp/right-ns.out" && grep -q "^fd build-id [0-9a-f]" "$tmp/right-ns.out"; then
  tap_ok "... with a descriptor of its mount namespace that root opened and handed over: served ($(sed -n 's/.*"way":"\([a-z_0-9]*\)".*/\1/p' "$tmp/right-ns.out"))"
else
  tap_not_ok "... with its mount namespace's descriptor: served"; diag "$tmp/right-ns.out"
fi

# The service hangs up on an idle connection: eu-stacktrace connects again
# at its next request, with no failure.  The dlopen workload loads its
# plugin after 1.5 s of CPU, well after the helper (1 s idle timeout) has
# hung up on the first connection.
cat > "$tmp/dlopen.setup" <<EOF
cp "$TOP_BUILDDIR/tests/workloads/dlopen" "\$root/app/bin/dlopen"
cp "$TOP_BUILDDIR/tests/workloads/plugin.so" "\$root/app/lib/plugin.so"
EOF
idle_sock=$tmp/sock/idle.socket
start_service "$idle_sock" "$helper" --idle-timeout=1 || tap_bail "the idle helper's service did not start"
mkdir -p "$tmp/idle"
sample idle --ns-helper="$idle_sock" -- sh "$nsh_src/ns-run.sh" root "$tmp/idle" "$stage" \
  "$tmp/dlopen.setup" -- /app/bin/dlopen /app/lib/plugin.so 1500 800
status=$?
grep -E "reconnected|lost:" "$tmp/idle.err" | sed 's/^/# idle: /'
if [ $status -eq 0 ] && grep -q "/app/lib/plugin.so: opened by the namespace helper" "$tmp/idle.err" \
    && grep -q "reconnected: *[1-9]" "$tmp/idle.err" && ! grep -q "lost:" "$tmp/idle.err"; then
  tap_ok "a connection the service closed while idle: eu-stacktrace connected again and found the plugin loaded later"
else
  tap_not_ok "eu-stacktrace reconnects after the service's idle timeout"; diag "$tmp/idle.err"
fi

# The units as shipped (the service pointed at this build's helper).
sed "s|@libexecdir@|$TOP_BUILDDIR|" "$TOP_SRCDIR/src/ns-helper/eu-stacktrace-ns-helper@.service.in" \
  > "$tmp/eu-stacktrace-ns-helper@.service"
cp "$TOP_SRCDIR/src/ns-helper/eu-stacktrace-ns-helper.socket" "$tmp/"
if systemd-analyze verify --man=no "$tmp/eu-stacktrace-ns-helper.socket" \
    "$tmp/eu-stacktrace-ns-helper@.service" > "$tmp/verify.out" 2>&1; then
  exposure=$(systemd-analyze security --offline=true "$tmp/eu-stacktrace-ns-helper@.service" 2>/dev/null \
    | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]* [A-Z]*\).*/\1/p')
  tap_ok "systemd-analyze verify accepts the .socket and .service units (exposure: ${exposure:-?})"
else
  tap_not_ok "systemd-analyze verify accepts the units"; diag "$tmp/verify.out"
fi
if grep -q "^ListenSequentialPacket=/run/eu-stacktrace/ns-helper.socket$" "$tmp/eu-stacktrace-ns-helper.socket" \
     && grep -q "^Accept=yes$" "$tmp/eu-stacktrace-ns-helper.socket"; then
  tap_ok "the socket unit listens where --ns-helper=auto looks, one helper per connection"
else
  tap_not_ok "the socket unit listens at /run/eu-stacktrace/ns-helper.socket with Accept=yes"
fi
plan_and_done
