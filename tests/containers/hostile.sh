#!/bin/bash
# Root's profiler never hangs on, bloats on, or is misled by what a user
# planted (issue 11).  Two test users this test creates: an attacker (A)
# and a victim (V).  Every path that the core or the container code opens
# gets a FIFO, a unix socket, a character device and a /proc file
# (/proc/kmsg, whose read blocks): the mapped file, the debuglink (beside
# the file, in .debug/, under /usr/lib/debug), the .build-id path,
# /run/.containerenv and /.flatpak-info (planted by A inside its own
# unshare -Urm namespace, as finding 3 did), storage JSON, the podman
# pidfile, bwrapinfo.json.  Each run samples the planted process, gets ONE
# SIGINT (kill -INT, never timeout -s INT) and must end within 2 s, write
# every sample, and list the refused file in --stats.  Then: 3 x 64 MB of
# hostile storage JSON keep root's peak RSS under 64 MB; A's bwrapinfo.json
# or pidfile naming V's process does not label it.  Paths that only root
# can plant on (a device, a bind of /proc/kmsg, /usr/lib/debug) are planted
# by the test itself: the point is that the code refuses them whoever put
# them there.  Run as root (.ci/run).
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}"
. "$TOP_SRCDIR/tests/tap.sh"
# shellcheck source=tests/containers/ctr-lib.sh
. "$TOP_SRCDIR/tests/containers/ctr-lib.sh"
A=eust-ha-$$
V=eust-hv-$$
W=$(mktemp -d /var/tmp/eust-hostile.XXXXXX)
chmod 755 "$W"
UID_A='' UID_V=''
MOUNTS=()
PLANTED=()
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
  for f in "${PLANTED[@]}"; do rm -rf "$f"; done
  for u in "$A" "$V"; do
    id "$u" >/dev/null 2>&1 || continue
    for p in $(pgrep -u "$u"); do kill -9 "$p" 2>/dev/null; done
  done
  sleep 0.2
  for u in "$A" "$V"; do id "$u" >/dev/null 2>&1 && drop_user "$u"; done
  [ -n "$UID_A" ] && rm -rf "/run/user/$UID_A"
  [ -n "$UID_V" ] && rm -rf "/run/user/$UID_V"
  rm -rf "$W"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  tap_skip_all "needs root and unshare"
fi

for u in "$A" "$V"; do
  retry_locked useradd -m -s /bin/sh "$u" || tap_bail "useradd $u: $retry_err"
done
UID_A=$(id -u "$A"); UID_V=$(id -u "$V")
HA=/home/$A
install -d -o "$A" -g "$A" -m 700 "/run/user/$UID_A"
install -d -o "$V" -g "$V" -m 700 "/run/user/$UID_V"
as() { local u=$1; shift; (cd / && runuser -u "$u" -- env -i HOME="/home/$u" PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"); }
# launch USER NAME CMD...: starts CMD as USER in the background and prints
# the pid of the new process named NAME (after its exec), once it spins in
# its main loop: it has used 50 ms of CPU, past its dynamic linking (the
# test then replaces the library it maps).  Bounded polls of a minute.
launch() {
  local u=$1 name=$2 before p i; shift 2
  before=" $(pgrep -d ' ' -u "$u" -x "$name") "
  ( as "$u" "$@" < /dev/null > "$W/launch.err" 2>&1 & )
  for _ in $(seq 1200); do
    for p in $(pgrep -u "$u" -x "$name"); do
      case $before in
        *" $p "*) ;;
        *)
          i=0
          while [ "$(cpu_ms "$p")" -lt 50 ] 2>/dev/null && [ $i -lt 1200 ]; do
            sleep 0.05; i=$((i + 1))
          done
          echo "$p"; return ;;
      esac
    done
    sleep 0.05
  done
  echo "#   $name did not start: $(cat "$W/launch.err")" >&2
}

# The planted program: a stripped library whose .gnu_debuglink names
# libhl.debug (which will be whatever is planted), and a static spinner for
# the namespaced processes.
cat > "$W/hl.c" <<'EOF'
volatile unsigned long sink;
__attribute__((noinline)) void hl_leaf (void) { for (int i = 0; i < 1000; i++) sink += i; }
__attribute__((noinline)) void hl_mid (void) { hl_leaf (); }
void hl_work (void) { for (;;) hl_mid (); }
EOF
echo 'void hl_work (void); int main (void) { hl_work (); return 0; }' > "$W/prog.c"
echo 'volatile unsigned long s; int main (void) { for (;;) s++; }' > "$W/spin.c"
install -d -o "$A" -g "$A" "$HA/hl" "$HA/hl/.debug"
# shellcheck disable=SC2015  # the last command runs when any step before it fails, as meant
cc -O1 -g -shared -fPIC -o "$W/libhl.so" "$W/hl.c" \
  && objcopy --only-keep-debug "$W/libhl.so" "$W/libhl.debug" && strip --strip-all "$W/libhl.so" \
  && objcopy --add-gnu-debuglink="$W/libhl.debug" "$W/libhl.so" \
  && cc -O1 -o "$W/prog" "$W/prog.c" -L"$W" -lhl -Wl,-rpath,"$HA/hl" \
  && cc -O1 -static -o "$W/spin" "$W/spin.c" \
  || tap_bail "cannot build the test programs"
install -o "$A" -g "$A" -m 755 "$W/libhl.so" "$W/prog" "$W/spin" "$HA/hl/"
BID=$(readelf -n "$W/libhl.so" | sed -n 's/.*Build ID: //p')
BIDPATH=/usr/lib/debug/.build-id/${BID:0:2}/${BID:2}.debug

# --- running and judging --------------------------------------------------
TABLE=()
attack_result() { # STATUS ATTACK EVIDENCE: a TAP line and a row of the table
  tap_result "$1" "$2: $3"
  if [ "$1" = 0 ]; then TABLE+=("$2 | refused/held | $3"); else TABLE+=("$2 | FAILED | $3"); fi
}

# plant TYPE PATH OWNER: a FIFO, a unix socket, a character device or a
# bind of /proc/kmsg at PATH.
plant() {
  local type=$1 path=$2 owner=$3
  umount -l "$path" 2>/dev/null
  rm -rf "$path"
  mkdir -p "$(dirname "$path")"
  case $type in
    fifo) mkfifo "$path" ;;
    socket) # bound by its name in its directory: a socket's path has at most 107 bytes
      (cd "$(dirname "$path")" && python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$(basename "$path")") ;;
    chardev) mknod "$path" c 1 5 ;;   # /dev/zero
    kmsg) : > "$path"; mount --bind /proc/kmsg "$path" && MOUNTS+=("$path") ;;
  esac
  chown -h "$owner" "$path" 2>/dev/null
  PLANTED+=("$path")
}
unplant() { umount -l "$1" 2>/dev/null; rm -rf "$1"; }

# sample NAME PIDSPEC [ARGS...]: eu-stacktrace on the planted process(es),
# ended by one SIGINT once the planted process ($pid with PIDSPEC all) has
# used 300 ms of CPU since it started (not after a wall time: a loaded
# machine gives both less CPU, and the run would have no sample yet).
# Sets ENDED (seconds after the signal, or "hung"), CPU (its CPU seconds
# after the signal), SAMPLES, LINES.
#
# Hung is not a wall time: what it still has to do after the signal (unwind
# and write the samples it read; with -a, of every process on the machine,
# new binaries among them) takes longer on a loaded machine, where it waits
# for a CPU.  A run hangs when it sleeps (state S or D: blocked on a FIFO, a
# socket, /proc/kmsg) without using any CPU for 2 s on end, or has not ended
# 120 s after the signal.  How much it did after the signal is its CPU time.
sample() {
  local name=$1 pids=$2; shift 2
  local sel=(-p "$pids") ref=$pids
  [ "$pids" = all ] && sel=(-a) ref=$pid
  local e t0 t1 st state ticks ticks0 still start now i=0
  start=$(cpu_ms "$ref")
  "$EU_STACKTRACE" "${sel[@]}" --ns-helper none -f json -o "$W/$name.jsonl" --stats "$@" \
    > "$W/$name.out" 2> "$W/$name.err" &
  e=$!
  while now=$(cpu_ms "$ref") && [ -n "$now" ] && [ -n "$start" ] && [ $((now - start)) -lt 300 ] \
        && [ $i -lt 2400 ] && kill -0 "$e" 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
  done
  ticks0=$(cpu_ticks "$e")
  t0=$(date +%s.%N)
  kill -INT "$e"
  ENDED=hung CPU="?"
  ticks=$ticks0 still=$t0
  while :; do
    t1=$(date +%s.%N)
    st=$(cat "/proc/$e/stat" 2>/dev/null)
    # A zombie has ended: its CPU time is final.
    state=$(echo "$st" | awk '{ print $3 }')
    if [ -z "$st" ] || [ "$state" = Z ]; then
      ENDED=$(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")
      [ -n "$st" ] && ticks=$(echo "$st" | awk '{ print $14 + $15 }')
      break
    fi
    case $state in
      S | D) [ "$(echo "$st" | awk '{ print $14 + $15 }')" != "$ticks" ] && still=$t1 ;;
      *) still=$t1 ;;
    esac
    ticks=$(echo "$st" | awk '{ print $14 + $15 }')
    awk "BEGIN { exit !($t1 - $still > 2 || $t1 - $t0 > 120) }" && break
    sleep 0.05
  done
  if [ "$ENDED" = hung ]; then
    echo "#   still running $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s after SIGINT, asleep for 2 s without using the CPU: $(cat /proc/$e/wchan 2>/dev/null)"
    kill -9 "$e" 2>/dev/null
  fi
  wait "$e" 2>/dev/null
  [ -n "$ticks0" ] && CPU=$(awk "BEGIN { printf \"%.2f\", ($ticks - $ticks0) / $(getconf CLK_TCK) }")
  SAMPLES=$(sed -n 's/^samples read: *//p' "$W/$name.err")
  LINES=$(wc -l < "$W/$name.jsonl" 2>/dev/null || echo 0)
}
# cpu_ticks PID: its user and system time, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

# judge ATTACK NAME FILE: the run ended after the signal without hanging
# and with at most 2 s of CPU time, wrote every sample, and --stats lists
# FILE as refused.
judge() {
  local attack=$1 name=$2 file=$3 r=0
  [ "$ENDED" != hung ] && [ "$CPU" != "?" ] && awk "BEGIN { exit !($CPU <= 2) }" || r=1
  [ -n "$SAMPLES" ] && [ "$SAMPLES" -gt 0 ] && [ "$SAMPLES" = "$LINES" ] || r=1
  sed -n '/^refused untrusted files:/,$p' "$W/$name.err" | grep -qF "  $file" || r=1
  [ $r = 0 ] || sed 's/^/#   /' "$W/$name.err" | grep -v "^#   *[0-9a-f]*:" | tail -12
  attack_result $r "$attack" "ended $ENDED s after SIGINT ($CPU s of CPU), $SAMPLES samples, $LINES written, refused in --stats"
}

TYPES="fifo socket chardev kmsg"

# --- 1. the mapped file ----------------------------------------------------
# A's process maps ~/hl/libhl.so; then the path becomes something else.
for t in $TYPES; do
  pid=$(launch "$A" prog "$HA/hl/prog")
  # Unlinked, the maps say "PATH (deleted)" and PATH is tried (a rename
  # would show the new name).
  rm -f "$HA/hl/libhl.so"
  plant "$t" "$HA/hl/libhl.so" "$A"
  sample "map-$t" "$pid"
  judge "mapped file is a $t" "map-$t" "$HA/hl/libhl.so"
  kill -9 "$pid"; unplant "$HA/hl/libhl.so"; install -o "$A" -m 755 "$W/libhl.so" "$HA/hl/"
done

# --- 2. debuglink and .build-id paths (finding 2) -------------------------
for where in "$HA/hl/libhl.debug" "$HA/hl/.debug/libhl.debug" "/usr/lib/debug$HA/hl/libhl.debug" \
             "$BIDPATH"; do
  case $where in
    "$BIDPATH") what=".build-id path" ;;
    /usr/lib/debug/*) what="/usr/lib/debug/DIR/debuglink" ;;
    */.debug/*) what="DIR/.debug/debuglink" ;;
    *) what="debuglink beside the library" ;;
  esac
  for t in $TYPES; do
    plant "$t" "$where" "$A"
    pid=$(launch "$A" prog "$HA/hl/prog")
    sample "dbg-$t" "$pid"
    judge "$what is a $t" "dbg-$t" "$where"
    kill -9 "$pid"; unplant "$where"
  done
done
rm -rf "/usr/lib/debug$HA" "$BIDPATH"
rmdir /usr/lib/debug/home "$(dirname "$BIDPATH")" 2>/dev/null

# --- 3. /run/.containerenv and /.flatpak-info (finding 3) -----------------
# A plants it in its own namespace (unshare -Urm: a tmpfs root, /usr bound
# in), then spins there.  A can bind /proc/kmsg and /dev/zero, make FIFOs
# and sockets: no privilege on the host.
nsplant() { # TYPE PATH-IN-ROOT: prints the pid of A's spinner
  local r=$W/ns-$1
  install -d -o "$A" -g "$A" "$r"
  # shellcheck disable=SC2016  # expanded by the inner shell
  launch "$A" spin unshare -Urm sh -c '
    r=$1 type=$2 path=$3
    mount -t tmpfs none "$r" && mkdir -p "$r/usr" "$r/run" "$r/w" "$r/dev" || exit 1
    ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"; ln -s usr/bin "$r/bin"
    mount --rbind /usr "$r/usr"; cp "$4" "$r/w/spin"
    case $type in
      fifo) mkfifo "$r/$path" ;;
      socket) python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$r/$path" ;;
      chardev) : > "$r/$path"; mount --bind /dev/zero "$r/$path" ;;
      kmsg) : > "$r/$path"; mount --bind /proc/kmsg "$r/$path" ;;
    esac
    exec chroot "$r" /w/spin' sh "$r" "$1" "$2" "$HA/hl/spin"
}
for path in run/.containerenv .flatpak-info; do
  for t in $TYPES; do
    pid=$(nsplant "$t" "$path")
    if [ "$path$t" = run/.containerenvkmsg ]; then
      sample "ns-$t" all -F 99   # finding 3 as reported: root's -a (few samples: the machine is shared)
    else
      sample "ns-$t" "$pid"
    fi
    judge "/$path is a $t (in A's namespace)" "ns-$t" "/proc/$pid/root/$path"
    kill -9 "$pid" 2>/dev/null; sleep 0.2
  done
done

# --- 4. storage JSON, pidfile, bwrapinfo.json -----------------------------
S=$HA/.local/share/containers/storage
as "$A" mkdir -p "$S/overlay-containers" "$S/overlay-layers" "$S/overlay-images" "$S/vfs-layers"
ID=$(printf 'e%.0s' $(seq 64))
write_storage() { # the container ID, a valid small storage
  as "$A" sh -c "echo '[{\"id\":\"$ID\",\"names\":[\"evilpod\"],\"layer\":\"\"}]' > $S/overlay-containers/containers.json
                 echo '[]' > $S/overlay-layers/layers.json"
}
nsspin() { launch "$A" spin unshare -Urm "$HA/hl/spin"; }

write_storage
for f in overlay-containers/containers.json overlay-layers/layers.json; do
  for t in $TYPES; do
    plant "$t" "$S/$f" "$A"
    pid=$(nsspin)
    sample "st-$t" "$pid"
    judge "storage $(basename "$f") is a $t" "st-$t" "$S/$f"
    kill -9 "$pid"; unplant "$S/$f"; write_storage
  done
done

PIDFILE=/run/user/$UID_A/containers/overlay-containers/$ID/userdata/pidfile
as "$A" mkdir -p "$(dirname "$PIDFILE")"
for t in $TYPES; do
  plant "$t" "$PIDFILE" "$A"
  pid=$(nsspin)
  sample "pf-$t" "$pid"
  judge "podman pidfile is a $t" "pf-$t" "$PIDFILE"
  kill -9 "$pid"; unplant "$PIDFILE"
done

BW=/run/user/$UID_A/.flatpak/inst1/bwrapinfo.json
as "$A" mkdir -p "$(dirname "$BW")"
for t in $TYPES; do
  plant "$t" "$BW" "$A"
  pid=$(nsspin)
  sample "bw-$t" "$pid"
  judge "bwrapinfo.json is a $t" "bw-$t" "$BW"
  kill -9 "$pid"; unplant "$BW"
done
rm -rf "/run/user/$UID_A/.flatpak" "/run/user/$UID_A/containers"

# --- 5. oversized and deeply nested storage JSON (finding 4) --------------
# 3 x 64 MB [1,1,...], 6 MB of them in a file under the size cap (too many
# values), 100k-deep nesting; three namespaced processes of A, each of
# which makes the podman detection read A's storage.
big() { python3 -c 'import sys; n=int(sys.argv[2]); open(sys.argv[1],"w").write("[" + "1,"*(n//2-1) + "1]")' "$1" "$2"; }
big "$S/overlay-containers/containers.json" $((64 << 20))
big "$S/overlay-layers/layers.json" $((64 << 20))
big "$S/overlay-images/images.json" $((64 << 20))
big "$S/overlay-containers/volatile-containers.json" $((6 << 20))
python3 -c 'import sys; open(sys.argv[1],"w").write("["*100000 + "]"*100000)' "$S/vfs-layers/layers.json"
chown -R "$A": "$HA/.local"
p1=$(nsspin); p2=$(nsspin); p3=$(nsspin)
/usr/bin/time -v -o "$W/rss.time" "$EU_STACKTRACE" -p "$p1,$p2,$p3" --ns-helper none -f json \
  -o "$W/rss.jsonl" --stats 2> "$W/rss.err" &
tpid=$!
# Its child, once time(1) has made it, then 300 ms of p1's CPU (the
# storage is read at each process's first sample).
epid="" start=$(cpu_ms "$p1") i=0
while [ -z "$epid" ] && [ $i -lt 1200 ]; do epid=$(pgrep -P "$tpid"); [ -n "$epid" ] || sleep 0.05; i=$((i + 1)); done
i=0
while now=$(cpu_ms "$p1") && [ $((now - start)) -lt 300 ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
[ -n "$epid" ] && kill -INT "$epid"; wait "$tpid"
kill -9 "$p1" "$p2" "$p3"
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/rss.time")
wall=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$W/rss.time")
meta=$(grep "^container storage metadata:" "$W/rss.err")
echo "# root's peak RSS with 3 x 64 MB hostile storage files: ${rss} kB; run ${wall}; $meta"
r=0; [ -n "$rss" ] && [ "$rss" -lt 65536 ] || r=1
for f in overlay-containers/containers.json overlay-layers/layers.json overlay-images/images.json \
         overlay-containers/volatile-containers.json vfs-layers/layers.json; do
  grep -qF "  $S/$f (user $A (uid $UID_A))" "$W/rss.err" || { echo "#   $f not refused"; r=1; }
done
[ $r = 0 ] || tail -20 "$W/rss.err" | sed 's/^/#   /'
attack_result $r "3 x 64 MB + 6 MB [1,1,...] + 100k-deep JSON in A's storage" "peak RSS ${rss} kB < 65536 kB; $meta; each refused, naming A"
grep -c "refusing untrusted file $S" "$W/rss.err" | { read -r c; [ "$c" = 5 ]; }
attack_result $? "refusals said once for 3 namespaced pids" "$(grep -c "refusing untrusted file $S" "$W/rss.err") warnings for 5 files"
rm -rf "$S"

# --- 6. another user's label (finding 5) ----------------------------------
# A writes an instance directory, then a podman container, naming V's
# process; A's own process, named the same way, is labelled (the plant is
# well formed), V's is not.
vspin() { launch "$V" spin unshare -Urm "$HA/hl/spin"; }
spoof_flatpak() { # PID
  local ino; ino=$(stat -L -c %i "/proc/$1/ns/mnt")
  local app=$HA/.local/share/flatpak/app/org.evil.Spoof/x86_64/master/abc/files
  as "$A" mkdir -p "/run/user/$UID_A/.flatpak/evil" "$app"
  as "$A" sh -c "echo '{\"child-pid\": $1, \"mnt-namespace\": $ino}' > /run/user/$UID_A/.flatpak/evil/bwrapinfo.json
    printf '[Application]\nname=org.evil.Spoof\n[Instance]\napp-path=$app\n' > /run/user/$UID_A/.flatpak/evil/info"
}
chmod 755 "$HA" "$HA/hl"
vp=$(vspin); ap=$(nsspin)
spoof_flatpak "$ap"
sample "fp-own" "$ap" -f folded -v
grep -q "org.evil.Spoof" "$W/fp-own.jsonl" "$W/fp-own.err"; own=$?
spoof_flatpak "$vp"
sample "fp-spoof" "$vp" -f folded -v
r=0; [ $own = 0 ] || { echo "#   control: A's own process not labelled (plant not well formed)"; r=1; }
! grep -q "org.evil.Spoof" "$W/fp-spoof.jsonl" "$W/fp-spoof.err" || r=1
[ $r = 0 ] || tail -12 "$W/fp-spoof.err" | sed 's/^/#   /'
attack_result $r "A's bwrapinfo.json names V's process as org.evil.Spoof" "A's own process labelled (control), V's not (A's runtime directory ignored for V)"
rm -rf "/run/user/$UID_A/.flatpak"

as "$A" mkdir -p "$S/overlay-containers" "$S/overlay-layers" "$(dirname "$PIDFILE")"
write_storage
as "$A" sh -c "echo $ap > $PIDFILE"
sample "pod-own" "$ap" -f folded -v
grep -q "podman:evilpod" "$W/pod-own.jsonl" "$W/pod-own.err"; own=$?
as "$A" sh -c "echo $vp > $PIDFILE"
sample "pod-spoof" "$vp" -f folded -v
r=0; [ $own = 0 ] || { echo "#   control: A's own process not labelled (plant not well formed)"; r=1; }
! grep -q "evilpod" "$W/pod-spoof.jsonl" "$W/pod-spoof.err" || r=1
[ $r = 0 ] || tail -12 "$W/pod-spoof.err" | sed 's/^/#   /'
attack_result $r "A's podman storage and pidfile name V's process as evilpod" "A's own process labelled (control), V's not"
kill -9 "$vp" "$ap"

echo "# attack | result | evidence"
for row in "${TABLE[@]}"; do echo "# $row"; done
tap_plan "$tap_n"
tap_done
