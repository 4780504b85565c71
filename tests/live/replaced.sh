#!/bin/sh
# Files are cached for the whole run and shared by every process that maps
# them (the opened ELF, its symbol table, its debug file): a program
# replaced at the same path must still be symbolized from its own file.
# One live run starts three processes of one path: version A, then B put
# there by rename (a new inode), then A again copied over B in place (the
# same path, device and inode, other bytes and build-id).  Each process
# says which version it is; every function name of the program in its
# samples must be that version's (alpha_* or beta_*), and each must have
# some.
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-replaced.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tap_plan 4

cat > "$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
#define CAT(a, b) a##b
#define NAME(v, f) CAT (v, f)
volatile unsigned long sink;
__attribute__ ((noinline)) void
NAME (VERSION, _leaf) (unsigned long n)
{
  for (unsigned long i = 0; i < n; i++)
    sink += i * i;
}
/* A fixed amount of work: a few hundred samples at 999 Hz on any load.  */
__attribute__ ((noinline)) void
NAME (VERSION, _work) (void)
{
  for (int k = 0; k < 3000; k++)
    NAME (VERSION, _leaf) (100000);
}
int
main (int argc, char **argv)
{
  FILE *f = fopen (argv[1], "a");
  fprintf (f, "%d %s\n", (int) getpid (), VERSION_NAME);
  fclose (f);
  NAME (VERSION, _work) ();
  return 0;
}
EOF
cc=${CC:-cc}
if "$cc" -O1 -g -DVERSION=alpha -DVERSION_NAME='"alpha"' -o "$tmp/prog-a" "$tmp/prog.c" \
   && "$cc" -O1 -g -DVERSION=beta -DVERSION_NAME='"beta"' -o "$tmp/prog-b" "$tmp/prog.c"; then
  tap_ok "two versions of one program built"
else
  tap_bail "cannot build the test program with $cc"
fi

# The same path each time: run A, rename B over it, run, copy A over it in
# place (cp keeps the inode), run.
cat > "$tmp/run.sh" <<EOF
set -e
cp "$tmp/prog-a" "$tmp/prog"
"$tmp/prog" "$tmp/pids"
cp "$tmp/prog-b" "$tmp/prog.new"
mv -f "$tmp/prog.new" "$tmp/prog"
"$tmp/prog" "$tmp/pids"
ino=\$(stat -c %i "$tmp/prog")
cp "$tmp/prog-a" "$tmp/prog"
[ "\$(stat -c %i "$tmp/prog")" = "\$ino" ] || echo "cp changed the inode" >&2
"$tmp/prog" "$tmp/pids"
EOF
if "$EU_STACKTRACE" -F 999 -f json -o "$tmp/out.json" -- sh "$tmp/run.sh" > /dev/null \
     2> "$tmp/err"; then
  tap_ok "eu-stacktrace -- three runs of one path"
else
  tap_not_ok "eu-stacktrace -- three runs of one path: $(head -3 "$tmp/err")"
fi
sed 's/^/# /' "$tmp/err" | head -5

# pid -> version said, and the program's function names in each pid's
# samples.
check=$("${PYTHON3:-python3}" - "$tmp/pids" "$tmp/out.json" <<'EOF'
import json, sys
said = dict(line.split() for line in open(sys.argv[1]))
seen = {pid: {} for pid in said}
for line in open(sys.argv[2]):
    s = json.loads(line)
    pid = str(s.get("pid"))
    if pid not in seen:
        continue
    for f in s.get("frames", []):
        name = f.get("symbol") or ""
        if name.startswith(("alpha_", "beta_")):
            seen[pid][name] = seen[pid].get(name, 0) + 1
bad = []
for pid, version in said.items():
    names = seen[pid]
    wrong = [n for n in names if not n.startswith(version + "_")]
    print("# pid %s (%s): %s" % (pid, version, ", ".join("%s %d" % kv for kv in sorted(names.items())) or "none"))
    if wrong or not names:
        bad.append(pid)
print("ok" if len(said) == 3 and not bad else "bad " + " ".join(bad))
EOF
)
echo "$check" | grep '^#'
if [ "$(echo "$check" | tail -1)" = ok ]; then
  tap_ok "each process symbolized from its own file (A, B by rename, A in place)"
else
  tap_not_ok "each process symbolized from its own file: $(echo "$check" | tail -1)"
fi
# The in-place copy kept the inode: only the build-id tells the files apart.
if grep -q "cp changed the inode" "$tmp/err"; then
  tap_not_ok "the third run's file has the second's inode"
else
  tap_ok "the third run's file has the second's inode"
fi
tap_done
