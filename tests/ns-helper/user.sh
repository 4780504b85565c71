#!/bin/sh
# An unprivileged user, a process of its own in `unshare -U -m -r' (a user
# namespace it owns, a mount namespace owned by that) whose files exist
# only there: eu-stacktrace run by that user spawns a helper with the
# user's privileges, which reaches the files by openat2 under the
# process's root, or by entering the owning user namespace (NS_GET_USERNS)
# and then the mount namespace; map_files is for privileged helpers only.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
echo "# test user $test_user (uid $test_uid)"
out=$tmp/u
mkdir "$out"
chown "$test_user" "$out"
# SCHED_FIFO with SCHED_RESET_ON_FORK (chrt -f -R 1, as ns-lib.sh's
# sample): the checks count live samples, which a profiler kept off the CPU
# by the tests beside it loses; the policy survives setpriv's exec and uid
# change, and the command it starts is reset to the normal policy.
as_user () { chrt -f -R 1 setpriv --reuid="$test_uid" --regid="$test_gid" --clear-groups "$@"; }

chain="nswork_leaf:nswork_run,ns_middle,ns_outer,main,$libc_start"
hidden="ns_hidden_leaf:ns_middle,ns_outer,main,$libc_start"
for way in default openat2 setns map_files; do
  name=user-$way
  ways=$way
  [ "$way" = default ] && ways=
  # shellcheck disable=SC2046  # the command prints the words of a command line on purpose
  as_user env EU_STACKTRACE_NS_HELPER="$helper" EU_STACKTRACE_NS_HELPER_WAYS="$ways" \
    "$EU_STACKTRACE" -v --stats -f json -o "$out/$name.jsonl" -- \
    $(ns_command user "$name" "" 600) > "$tmp/$name.out" 2> "$tmp/$name.err"
  status=$?
  cp "$out/$name.jsonl" "$tmp/$name.jsonl" 2>/dev/null || : > "$tmp/$name.jsonl"
  grep -E "samples read|namespace helper:" "$tmp/$name.err" | sed "s/^/# $name: /"
  w1=$(way_of "$name" /app/bin/nsprog) w2=$(way_of "$name" /app/lib/libnswork.so)
  case $way in
    default|openat2) want=openat2 ;;
    *) want=$way ;;
  esac
  if [ "$way" = map_files ]; then
    # Following map_files takes CAP_CHECKPOINT_RESTORE in the initial user
    # namespace: a user's helper has none, and says so.
    if [ $status -eq 0 ] && [ -z "$w1" ] \
        && grep -q "/app/bin/nsprog: host path: No such file or directory; namespace helper: map_files: Operation not permitted" "$tmp/$name.err"; then
      tap_ok "as $test_user, map_files only: not permitted to a helper without privileges, and reported"
    else
      tap_not_ok "as $test_user, map_files only: refused and reported (status $status)"; diag "$tmp/$name.err"
    fi
    continue
  fi
  if [ $status -eq 0 ] && [ "$w1" = "$want" ] && [ "$w2" = "$want" ]; then
    tap_ok "as $test_user, ways: ${ways:-all}: the helper opened the namespace's files by $want"
  else
    tap_not_ok "as $test_user, ways: ${ways:-all}: opened by $want (got '$w1', '$w2', status $status)"
    diag "$tmp/$name.err"
  fi
  check_chains "$name" "as $test_user, by $want: frames in the namespace's files" 200 "$chain" "$hidden"
done

# The helper as the user: no capability at all, and its own process's
# files through the protocol, each way.
RUN_AS=$test_user start_ns user proto "" sleep 60 || exit 1
for way in openat2 setns map_files; do
  as_user "$nsh_client" "$helper" open "$pid" /app/bin/nsprog "$way" > "$tmp/proto-$way.out" 2>&1
  got=$(sed -n 's/^fd build-id //p' "$tmp/proto-$way.out")
  want=$("$PYTHON3" -c 'import nsh, sys; print(nsh.build_id_of(sys.argv[1]))' "$stage/root/app/bin/nsprog")
  if [ "$way" = map_files ]; then
    if grep -q '"ok":false' "$tmp/proto-$way.out" && grep -q "Operation not permitted" "$tmp/proto-$way.out"; then
      tap_ok "protocol, as $test_user: map_files refused by the kernel to an unprivileged helper"
    else
      tap_not_ok "protocol, as $test_user: map_files refused"; diag "$tmp/proto-$way.out"
    fi
  elif [ -n "$got" ] && [ "$got" = "$want" ]; then
    tap_ok "protocol, as $test_user: /app/bin/nsprog by $way is the very file (build-id $got)"
  else
    tap_not_ok "protocol, as $test_user: /app/bin/nsprog by $way"; diag "$tmp/proto-$way.out"
  fi
done
# The helper as the user starts with no capability, and its broker too.
"$PYTHON3" - "$helper" "$test_uid" "$test_gid" > "$tmp/caps.out" <<'PY'
import sys, time
import nsh
h = nsh.Helper(sys.argv[1], user=int(sys.argv[2]), group=int(sys.argv[3]))
h.request(op="open", pid=1, path="/")   # it has started once this is answered
print(nsh.status_field(h.pid, "CapEff"), nsh.status_field(h.broker_pid(), "CapEff"),
      nsh.status_field(h.pid, "NoNewPrivs"), nsh.status_field(h.pid, "Seccomp"))
h.close()
PY
read -r main_caps broker_caps nnp seccomp < "$tmp/caps.out"
if [ "$main_caps" = 0000000000000000 ] && [ "$broker_caps" = 0000000000000000 ] \
    && [ "$nnp" = 1 ] && [ "$seccomp" = 2 ]; then
  tap_ok "a helper spawned as $test_user: CapEff $main_caps (broker $broker_caps), no_new_privs, seccomp filter on"
else
  tap_not_ok "an unprivileged helper: no capability, sandboxed"; diag "$tmp/caps.out"
fi
plan_and_done
