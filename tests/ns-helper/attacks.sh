#!/bin/sh
# Requests that must fail, against a process whose root was written by an
# attacker: symlinks to host files (absolute, through `..', through /proc
# magic links), `..' in the path, files that are no regular file or no ELF
# file, a wrong build-id, another user's process asked for by a helper
# without privileges, and a pid that another process took over.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }

# A host ELF file that the container does not have, at an absolute path;
# /proc/$$/root (this shell's root: the host's) is where magic links lead.
host_elf=$EU_STACKTRACE
cat > "$tmp/evil.setup" <<EOF
mkdir -p "\$root/usr/lib" "\$root/proc" "\$root/etc"
ln -s /etc/shadow "\$root/usr/lib/libshadow.so"
ln -s "$host_elf" "\$root/usr/lib/libhost.so"
ln -s ../../../../../../../../../etc/shadow "\$root/app/lib/libdotdot.so"
ln -s "../../../../../../../../..$host_elf" "\$root/app/lib/libdotdot-elf.so"
mount -t proc proc "\$root/proc"
ln -s /proc/$$/root/etc/shadow "\$root/app/lib/libmagic.so"
ln -s "/proc/$$/root$host_elf" "\$root/app/lib/libmagic-elf.so"
mkfifo "\$root/app/lib/fifo.so"
mknod "\$root/app/lib/null.so" c 1 3
mkdir "\$root/app/lib/dir.so"
echo "not an ELF file" > "\$root/app/lib/text.so"
echo "the container's own, not ELF" > "\$root/etc/hosts"
EOF
start_ns root evil "$tmp/evil.setup" sleep 120 || exit 1
evil=$pid

# What the pid-reuse test starts: a process in a root of its own, with a
# stripped program (same build-id, other bytes) at the same path.
objcopy --strip-all "$nsh_build/nsprog" "$stage/nsprog.stripped"
chmod a+r "$stage/nsprog.stripped"
echo "cp \"$stage/nsprog.stripped\" \"\$root/app/bin/nsprog\"" > "$tmp/other.setup"
mkdir -p "$tmp/reuse-a" "$tmp/reuse-b"

"$PYTHON3" "$nsh_src/attacks.py" "$evil" "$helper" "$stage" "$host_elf" "$test_uid" "$test_gid" \
  "$nsh_src/ns-run.sh" "$tmp" $$ > "$tmp/attacks.tap"
tap_relay < "$tmp/attacks.tap"
plan_and_done
