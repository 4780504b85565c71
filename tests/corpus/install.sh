#!/bin/sh
# The corpus's own programs, installed when missing (Debian 12, as root;
# idempotent): xz, sqlite3, git, node, Lua's library (the lld-linked
# interpreter is built from it), ImageMagick, and a Rust toolchain for the
# cargo workload (Debian's cargo when no other is on PATH).  clang, lld and gold
# come from tools/install-deps.sh.
set -eu
missing=""
command -v xz >/dev/null || missing="$missing xz-utils"
command -v sqlite3 >/dev/null || missing="$missing sqlite3"
command -v git >/dev/null || missing="$missing git"
[ -x /usr/bin/node ] || missing="$missing nodejs"
[ -x /usr/bin/python3 ] || missing="$missing python3"
[ -f /usr/lib/x86_64-linux-gnu/liblua5.4.a ] || missing="$missing liblua5.4-dev"
[ -x /usr/bin/convert-im6.q16 ] || missing="$missing imagemagick"
command -v cargo >/dev/null || missing="$missing cargo"
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
echo "corpus install: ${missing:-nothing missing}"
