#!/bin/sh
# What the command of `eu-stacktrace -- CMD' is given, against the same
# command run directly from the same shell: its environment (also when the
# debuginfod client is on, which sets variables of its own for its
# requests), its open descriptors (an inherited one kept, none of ours),
# its ignored signals (an ignored SIGUSR1 kept, SIGPIPE at its default
# though eu-stacktrace ignores it) and an empty signal mask, and its exit
# status (said with -v); and that it is sampled from its first instruction:
# a command that ends at once still has its exec's records and its name.
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${PERF:=perf}"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-child.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
tap_plan 7

# What the command reports of itself: its environment, its descriptors
# (where each points), its signal dispositions and mask.
cat > "$tmp/self.sh" <<'EOF'
out=$1
# $_ is the path of the program the shell ran last.
env | grep -v '^_=' | LC_ALL=C sort > "$out.env"
# Standard output is this loop's file, standard error a file of each run:
# their numbers only.  A pipe's number is its own.
for f in /proc/$$/fd/*; do
  printf '%s %s\n' "${f##*/}" "$(readlink "$f" | sed -e "s|^$out.fd\$|this list|" \
    -e 's/^pipe:.*/a pipe/' -e 's/^.*[.]err$/a file (standard error)/' -e 's|^.*/||')"
done > "$out.fd"
# Read by the shell itself: a grep, started with vfork by dash with every
# signal blocked until the grep has exec'd, would find the shell's mask
# full about one run in two, profiled or not.
while read -r key value; do
  case $key in SigIgn: | SigBlk:) echo "$key $value" ;; esac
done < /proc/$$/status > "$out.sig"
exit 3
EOF

# One descriptor the command inherits, one ignored signal, one variable.
exec 7< "$tmp/self.sh"
trap '' USR1
STARTUP_CHECK=value
export STARTUP_CHECK

sh "$tmp/self.sh" "$tmp/direct" 2> "$tmp/direct.err"
direct_status=$?
"$EU_STACKTRACE" -v -f folded -o "$tmp/live.folded" -- sh "$tmp/self.sh" "$tmp/live" \
  2> "$tmp/live.err"
live_status=$?

if [ "$live_status" -eq 0 ] && cmp -s "$tmp/direct.env" "$tmp/live.env"; then
  tap_ok "the command's environment is the one it has when run directly"
else
  tap_not_ok "the command's environment is the one it has when run directly (status $live_status)"
  diff "$tmp/direct.env" "$tmp/live.env" | sed 's/^/#   /' | head -20
  sed 's/^/#   /' "$tmp/live.err" | head
fi

if cmp -s "$tmp/direct.fd" "$tmp/live.fd" && grep -q "^7 self.sh\$" "$tmp/live.fd"; then
  tap_ok "the command's descriptors: the inherited ones, none of ours ($(wc -l < "$tmp/live.fd"))"
else
  tap_not_ok "the command's descriptors: the inherited ones, none of ours"
  diff "$tmp/direct.fd" "$tmp/live.fd" | sed 's/^/#   /' | head -20
fi

ign_direct=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$tmp/direct.sig")
ign_live=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$tmp/live.sig")
blk_live=$(sed -n 's/^SigBlk:[[:space:]]*//p' "$tmp/live.sig")
# SIGUSR1 is signal 10: bit 9 of the mask.
if [ "$ign_live" = "$ign_direct" ] && [ $((0x$ign_live >> 9 & 1)) -eq 1 ] \
   && [ $((0x$ign_live >> 12 & 1)) -eq 0 ] && [ $((0x$blk_live)) -eq 0 ]; then
  tap_ok "the command's signals: SIGUSR1 ignored as given, SIGPIPE not, none blocked (SigIgn $ign_live)"
else
  tap_not_ok "the command's signals: SigIgn $ign_live (directly $ign_direct), SigBlk $blk_live"
fi

if [ "$direct_status" -eq 3 ] && grep -q "sh exited with status 3" "$tmp/live.err"; then
  tap_ok "the command's exit status is seen: $(grep 'exited with status' "$tmp/live.err")"
else
  tap_not_ok "the command's exit status is seen (directly $direct_status)"
  sed 's/^/#   /' "$tmp/live.err" | head
fi

# With the debuginfod client on (a server that refuses at once): its
# variables are not the command's.
DEBUGINFOD_URLS=http://127.0.0.1:9/ sh "$tmp/self.sh" "$tmp/direct-d"
DEBUGINFOD_URLS=http://127.0.0.1:9/ "$EU_STACKTRACE" -v -f folded -o "$tmp/live-d.folded" \
  -- sh "$tmp/self.sh" "$tmp/live-d" 2> "$tmp/live-d.err"
if grep -q "debuginfod: http://127.0.0.1:9/" "$tmp/live-d.err" \
   && cmp -s "$tmp/direct-d.env" "$tmp/live-d.env"; then
  tap_ok "with debuginfod on, the command's environment is still the user's"
else
  tap_not_ok "with debuginfod on, the command's environment is still the user's"
  diff "$tmp/direct-d.env" "$tmp/live-d.env" | sed 's/^/#   /' | head -20
  sed 's/^/#   /' "$tmp/live-d.err" | head
fi

# A command that ends at once: sampling began at its exec, so the record
# has its exec and the maps of the program and of ld.so.
if "$EU_STACKTRACE" -f folded -o /dev/null --record "$tmp/true.data" -- /bin/true \
     2> "$tmp/true.err"; then
  run_perf script -i "$tmp/true.data" --show-task-events --show-mmap-events -F comm,tid,event \
    > "$tmp/true.txt" 2> /dev/null
  if grep -q "PERF_RECORD_COMM exec: true:" "$tmp/true.txt" \
     && grep -q "PERF_RECORD_MMAP2.*/true\$" "$tmp/true.txt" \
     && grep -q "PERF_RECORD_MMAP2.*/ld-linux" "$tmp/true.txt"; then
    tap_ok "a command that ends at once: its exec, its program's and ld.so's maps recorded"
  else
    tap_not_ok "a command that ends at once: its exec, its program's and ld.so's maps recorded"
    sed 's/^/#   /' "$tmp/true.txt" | head -20
  fi
else
  tap_not_ok "eu-stacktrace -- /bin/true"; sed 's/^/#   /' "$tmp/true.err" | head
fi

# A --record file that cannot be written: the command does not run.
rm -f "$tmp/ran"
if "$EU_STACKTRACE" -f folded -o /dev/null --record "$tmp/no/such/dir/x.data" \
     -- sh -c ": > '$tmp/ran'" 2> "$tmp/rec.err"; then
  tap_not_ok "an unwritable --record fails"
elif [ -e "$tmp/ran" ]; then
  tap_not_ok "an unwritable --record fails before the command runs: it ran"
else
  tap_ok "an unwritable --record fails before the command runs: $(head -1 "$tmp/rec.err")"
fi
tap_done
