# shellcheck shell=sh
# Shared by tests/arch/*.sh and bench/bench-arch.sh; POSIX sh, sourced.
#
# arch_record ARCH DIR: cross-compiles the workload (archwork.c, archlib.c)
# for ARCH into DIR, runs it under qemu-user with its gdb stub, lets
# gdb-multiarch stop it at every breakpoint and two instructions after each
# (harvest.py), and writes DIR/perf.data from the stops (arch-check.py).
# DIR/stops.jsonl keeps gdb's backtrace of each stop, the oracle.
# ARCH_CFLAGS: more compiler flags for the workload (after -O2 -g).
#
# Per architecture: the cross triplet, qemu's name, perf's HEADER_ARCH
# string, the sample ABI (32 or 64), the index of the pc among perf's
# registers, and gdb's names of perf's registers in perf numbering
# (kernel uapi asm/perf_regs.h; "-" for one not copied).

: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${EU_STACKTRACE:=$TOP_BUILDDIR/eu-stacktrace}"
: "${PYTHON3:=python3}"
ARCH_DIR="$TOP_SRCDIR/tests/arch"
: "${ARCHES:=x86_64 i386 aarch64 arm ppc64le s390x riscv64}"
unset DEBUGINFOD_URLS

arch_params ()
{
  case "$1" in
    x86_64) triplet=x86_64-linux-gnu qemu=x86_64 header=x86_64 abi=64 pc=8
            regs="rax,rbx,rcx,rdx,rsi,rdi,rbp,rsp,rip,eflags,cs,ss,ds,es,fs,gs,r8,r9,r10,r11,r12,r13,r14,r15" ;;
    i386) triplet=i686-linux-gnu qemu=i386 header=i686 abi=32 pc=8
          regs="eax,ebx,ecx,edx,esi,edi,ebp,esp,eip,eflags,cs,ss,ds,es,fs,gs" ;;
    aarch64) triplet=aarch64-linux-gnu qemu=aarch64 header=aarch64 abi=64 pc=32
             regs="$(seq -s, -f 'x%g' 0 30),sp,pc" ;;
    arm) triplet=arm-linux-gnueabihf qemu=arm header=armv7l abi=32 pc=15
         regs="$(seq -s, -f 'r%g' 0 12),sp,lr,pc" ;;
    ppc64le) triplet=powerpc64le-linux-gnu qemu=ppc64le header=ppc64le abi=64 pc=32
             regs="$(seq -s, -f 'r%g' 0 31),pc,msr,-,ctr,lr,xer" ;;
    s390x) triplet=s390x-linux-gnu qemu=s390x header=s390x abi=64 pc=33
           regs="$(seq -s, -f 'r%g' 0 15),-,-,-,-,-,-,-,-,-,-,-,-,-,-,-,-,pswm,pswa" ;;
    riscv64) triplet=riscv64-linux-gnu qemu=riscv64 header=riscv64 abi=64 pc=0
             regs="pc,ra,sp,gp,tp,t0,t1,t2,fp,s1,$(seq -s, -f 'a%g' 0 7),$(seq -s, -f 's%g' 2 11),t3,t4,t5,t6" ;;
    *) return 1 ;;
  esac
  # The cross libraries: the recording machine's tree.  x86_64 is this
  # machine's own.
  if [ "$1" = x86_64 ]; then sysroot=/; else sysroot=/usr/$triplet; fi
  cc=$triplet-gcc
}

# A TCP port nobody listens on, and the wait for qemu's stub to listen on
# it (polled in /proc/net/tcp: the stub listens before the guest runs).
arch_free_port ()
{
  "$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

arch_wait_listen ()
{
  hex=$(printf ':%04X ' "$1")
  n=0
  while ! grep -q "${hex}[0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
    n=$((n + 1))
    if [ $n -gt 3000 ] || ! kill -0 "$2" 2>/dev/null; then
      return 1
    fi
    sleep 0.01
  done
}

# arch_record ARCH DIR
arch_record ()
{
  arch_params "$1" || return 1
  d=$2
  mkdir -p "$d" || return 1
  # shellcheck disable=SC2015  # the message is written when either compilation fails, as meant
  # shellcheck disable=SC2016  # $ORIGIN is for the dynamic linker, not the shell
  # shellcheck disable=SC2086  # ARCH_CFLAGS: several flags, split on purpose
  $cc -O2 -g ${ARCH_CFLAGS:-} -fPIC -shared -o "$d/libarchlib.so" "$ARCH_DIR/archlib.c" >"$d/cc.log" 2>&1 &&
    $cc -O2 -g ${ARCH_CFLAGS:-} -o "$d/archwork" "$ARCH_DIR/archwork.c" -L"$d" -larchlib \
      -Wl,-rpath,'$ORIGIN' >>"$d/cc.log" 2>&1 || { echo "$cc failed" >"$d/why"; return 1; }
  # The port was free when asked for, and may be taken before qemu binds it
  # (qemu then ends at once): another port, up to five times.
  tries=0
  while :; do
    port=$(arch_free_port) || return 1
    ARCHWORK_MAPS="$d/maps.txt" "qemu-$qemu-static" -L "$sysroot" -g "$port" "$d/archwork" \
      >"$d/qemu.log" 2>&1 &
    qpid=$!
    if arch_wait_listen "$port" "$qpid" && kill -0 "$qpid" 2>/dev/null; then
      break
    fi
    kill "$qpid" 2>/dev/null
    wait "$qpid"
    tries=$((tries + 1))
    if [ $tries -ge 5 ]; then
      echo "qemu-$qemu-static never listened, last on port $port: $(tail -n 2 "$d/qemu.log" | tr '\n' ' ')" >"$d/why"
      return 1
    fi
  done
  HARVEST_OUT="$d/stops.jsonl" HARVEST_MAPS="$d/maps.txt" HARVEST_REGS="$regs" \
    gdb-multiarch -batch -nx -ex "set sysroot $sysroot" -ex "set solib-search-path $d" \
    -ex "file $d/archwork" -ex "target remote 127.0.0.1:$port" -x "$ARCH_DIR/harvest.py" \
    >"$d/gdb.log" 2>&1
  gstatus=$?
  wait "$qpid"
  qstatus=$?
  if [ $gstatus -ne 0 ] || [ $qstatus -ne 0 ] || [ ! -s "$d/stops.jsonl" ]; then
    echo "gdb exit $gstatus, qemu exit $qstatus: $(tail -n 3 "$d/gdb.log" | tr '\n' ' ')" >"$d/why"
    return 1
  fi
  "$PYTHON3" "$ARCH_DIR/arch-check.py" write --stops "$d/stops.jsonl" --maps "$d/maps.txt" \
    --sysroot "$sysroot" --arch "$header" --abi "$abi" --pc-index "$pc" \
    --out "$d/perf.data" 2>"$d/why"
}
