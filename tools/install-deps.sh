#!/bin/sh
# Installs everything eu-stacktrace needs to build and test, on Debian 12
# (run as root).  The one list of packages: README, .ci/run and people use it.
set -eu
packages="
  build-essential autoconf automake pkg-config
  libdw-dev libelf-dev libdebuginfod-dev libcap-dev libseccomp-dev libjson-c-dev
  libcmocka-dev libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libsysprof-4-dev
  linux-perf elfutils python3 groff-base debuginfod time shellcheck
  libc6-dbg libiberty-dev g++ rustc
  systemd libcap2-bin strace
  podman runc uidmap catatonit flatpak ostree dbus-daemon psmisc
  chromium fonts-dejavu-core golang-go nodejs
  clang libclang-rt-14-dev lld binutils
  gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf gcc-powerpc64le-linux-gnu
  gcc-s390x-linux-gnu gcc-riscv64-linux-gnu gcc-i686-linux-gnu
  libc6-dev-arm64-cross libc6-dev-armhf-cross libc6-dev-ppc64el-cross
  libc6-dev-s390x-cross libc6-dev-riscv64-cross libc6-dev-i386-cross
  qemu-user-static gdb-multiarch libzstd-dev liblzma-dev
  sysprof xvfb xdotool xclip imagemagick python3-gi gir1.2-atspi-2.0
"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: the cross compilers' C libraries (libc6-dev-*-cross)
# are only recommended by gcc-*-linux-gnu, so they are listed above (without
# them tests/arch cannot link: "cannot find Scrt1.o").
# shellcheck disable=SC2086  # one package a word
apt-get install -y -qq --no-install-recommends $packages >/dev/null
# shellcheck disable=SC2086  # one package a word
echo "install-deps: installed:" $packages
# The corpus's programs (make check-long), each only when missing: a
# rustup cargo or nodesource's node is kept.
sh "$(dirname "$0")/../tests/corpus/install.sh"
