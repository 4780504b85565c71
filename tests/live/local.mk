# Live sampling of real programs (perf_event_open; root in CI).
TESTS += tests/live/live.sh
EXTRA_DIST += tests/live/live.sh tests/live/check-chains.py
# Interrupted runs (SIGINT, SIGTERM, two, three, process group, timeout) in
# every mode and format, with the sanitizer build: well-formed outputs, no
# profiled command left running.  Needs tests/sysprof/sysprof-check.
TESTS += tests/live/interrupt.sh
# 999 Hz with 8 KiB stacks on every CPU: no sample lost, all written.
TESTS += tests/live/no-lost.sh
EXTRA_DIST += tests/live/no-lost.sh
# What the command of -- CMD is given (environment, descriptors, signals,
# exit status) against the command run directly; sampled from its exec.
TESTS += tests/live/child.sh
EXTRA_DIST += tests/live/child.sh
# A program replaced at its path during a run (renamed over, copied over in
# place) is symbolized from its own file, not from the cached one.
TESTS += tests/live/replaced.sh
EXTRA_DIST += tests/live/replaced.sh
# Binaries no process runs any more are let go (400 distinct ones run as
# nobody): the profiler's descriptors and memory stay flat.
TESTS += tests/live/distinct-binaries.sh
EXTRA_DIST += tests/live/distinct-binaries.sh
# perf record beside a live eu-stacktrace -a: perf's mapping records are
# not touched by ours (no build-id request, which the kernel leaks).
TESTS += tests/live/beside-perf.sh
EXTRA_DIST += tests/live/beside-perf.sh
# A user's processes naming 4 x 32 MiB of JIT code in their perf maps, under
# root's -p: the profiler stays small and says so once (jit-budget.h).
TESTS += tests/live/jit-budget.sh
EXTRA_DIST += tests/live/jit-budget.sh
# A user's processes with 30,000 executable mappings each, under root's
# -p: the profiler keeps up (each mapping offered to a Dwfl once, the
# overlap check a binary search: module-spans.h).
TESTS += tests/live/many-mappings.sh
EXTRA_DIST += tests/live/many-mappings.sh
# A user's process mapping an ELF file whose header counts 20 million
# sections or program headers, under root's -p: not read (elf-begin.h).
TESTS += tests/live/crafted-elf.sh
EXTRA_DIST += tests/live/crafted-elf.sh
EXTRA_DIST += tests/live/interrupt.sh tests/live/check-outputs.py
# The whole machine under a fork storm: memory bounded by the processes
# alive, lost samples reported as a share.  A minute: in `make check-long'.
LONG_TESTS += tests/live/fork-storm.sh
# Names a user makes by the million (renames, mmaps under ever new paths)
# under -a: the profiler stays small.  -a: in `make check-long'.
LONG_TESTS += tests/live/user-names.sh
EXTRA_DIST += tests/live/user-names.sh tests/live/live-lib.sh
EXTRA_DIST += tests/live/fork-storm.sh
# interrupt.sh at the issue's size: 5 s of -a, then 212 interrupted runs.
LONG_TESTS += tests/live/interrupt-long.sh
EXTRA_DIST += tests/live/interrupt-long.sh
