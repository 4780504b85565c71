EXTRA_DIST += tests/containers/README
# Real podman containers, as root (.ci/run); issue 6.
TESTS += tests/containers/podman-rootful.sh tests/containers/podman-rootless.sh
EXTRA_DIST += \
	tests/containers/podman-rootful.sh \
	tests/containers/podman-rootless.sh \
	tests/containers/check-frames.py \
	tests/containers/ctr-lib.sh \
	tests/containers/ctrwork.c \
	tests/containers/ctrprog.c
# Real flatpak (system-wide, --user, .removed/), as root (.ci/run); issue 6.
TESTS += tests/containers/flatpak.sh
EXTRA_DIST += tests/containers/flatpak.sh
# Root's profiler against what a user planted (issue 11), as root (.ci/run).
TESTS += tests/containers/hostile.sh
EXTRA_DIST += tests/containers/hostile.sh
# JIT maps of a process in a rootless container (issue 13), as root (.ci/run).
TESTS += tests/containers/podman-jit.sh
EXTRA_DIST += tests/containers/podman-jit.sh
