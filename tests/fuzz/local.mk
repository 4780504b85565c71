# Fuzz targets: one per parser of untrusted input (see tests/fuzz/README).
#
# make check builds each target without libFuzzer, with ASan and UBSan
# like tests/eu-stacktrace-asan, as tests/fuzz/fuzz-NAME-replay, and
# tests/fuzz/replay-corpus.sh replays tests/fuzz/corpus/NAME/ through it:
# the seeds and every input that once crashed or hung a parser.
# tests/fuzz/run-fuzzer.sh NAME SECONDS builds the real libFuzzer binary
# with clang and runs it; copy what it finds into tests/fuzz/corpus/NAME/
# and list it below.
FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz-replay.c
FUZZ_SOURCE_COMMON = $(FUZZ_COMMON) tests/fuzz/fuzz-source.c tests/fuzz/fuzz-source.h
FUZZ_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(JSON_C_CFLAGS) $(ASAN_FLAGS_C)
FUZZ_LDADD = src/core/libcore-asan.a $(core_libs)

check_PROGRAMS += \
	tests/fuzz/fuzz-perf-source-replay \
	tests/fuzz/fuzz-perf-dir-replay \
	tests/fuzz/fuzz-sysprof-source-replay \
	tests/fuzz/fuzz-nsh-protocol-replay \
	tests/fuzz/fuzz-podman-storage-replay \
	tests/fuzz/fuzz-podman-ids-replay \
	tests/fuzz/fuzz-flatpak-replay \
	tests/fuzz/fuzz-proc-maps-replay \
	tests/fuzz/fuzz-jit-map-replay \
	tests/fuzz/fuzz-gopclntab-replay \
	tests/fuzz/fuzz-arm-exidx-replay \
	tests/fuzz/fuzz-elf-header-replay

# perf.data files and pipes, through the whole tool.
tests_fuzz_fuzz_perf_source_replay_SOURCES = tests/fuzz/fuzz-perf-source.c $(FUZZ_SOURCE_COMMON)
tests_fuzz_fuzz_perf_source_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_perf_source_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_perf_source_replay_LDADD = $(FUZZ_LDADD)

# perf.data directories (perf record --threads), through the whole tool.
tests_fuzz_fuzz_perf_dir_replay_SOURCES = tests/fuzz/fuzz-perf-dir.c $(FUZZ_SOURCE_COMMON)
tests_fuzz_fuzz_perf_dir_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_perf_dir_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_perf_dir_replay_LDADD = $(FUZZ_LDADD)

# Sysprof captures, through the whole tool.
tests_fuzz_fuzz_sysprof_source_replay_SOURCES = tests/fuzz/fuzz-sysprof-source.c \
	$(FUZZ_SOURCE_COMMON)
tests_fuzz_fuzz_sysprof_source_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_sysprof_source_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_sysprof_source_replay_LDADD = $(FUZZ_LDADD)

# The namespace helper's request and reply decoders.
tests_fuzz_fuzz_nsh_protocol_replay_SOURCES = tests/fuzz/fuzz-nsh-protocol.c $(FUZZ_COMMON)
tests_fuzz_fuzz_nsh_protocol_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_nsh_protocol_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_nsh_protocol_replay_LDADD = $(FUZZ_LDADD)

# podman's containers.json, layers.json, images.json.
tests_fuzz_fuzz_podman_storage_replay_SOURCES = tests/fuzz/fuzz-podman-storage.c $(FUZZ_COMMON)
tests_fuzz_fuzz_podman_storage_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_podman_storage_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_podman_storage_replay_LDADD = $(FUZZ_LDADD)

# A process's podman container id: its cgroup, /run/.containerenv.
tests_fuzz_fuzz_podman_ids_replay_SOURCES = tests/fuzz/fuzz-podman-ids.c $(FUZZ_COMMON)
tests_fuzz_fuzz_podman_ids_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_podman_ids_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_podman_ids_replay_LDADD = $(FUZZ_LDADD)

# flatpak's .flatpak-info, bwrapinfo.json and cgroup app id.
tests_fuzz_fuzz_flatpak_replay_SOURCES = tests/fuzz/fuzz-flatpak.c $(FUZZ_COMMON)
tests_fuzz_fuzz_flatpak_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_flatpak_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_flatpak_replay_LDADD = $(FUZZ_LDADD)

# /proc/PID/maps lines.
tests_fuzz_fuzz_proc_maps_replay_SOURCES = tests/fuzz/fuzz-proc-maps.c $(FUZZ_COMMON)
tests_fuzz_fuzz_proc_maps_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_proc_maps_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_proc_maps_replay_LDADD = $(FUZZ_LDADD)

# JIT symbol maps: perf's text maps and jitdump files.
tests_fuzz_fuzz_jit_map_replay_SOURCES = tests/fuzz/fuzz-jit-map.c $(FUZZ_COMMON)
tests_fuzz_fuzz_jit_map_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_jit_map_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_jit_map_replay_LDADD = $(FUZZ_LDADD)

# Go's function table, .gopclntab.
tests_fuzz_fuzz_gopclntab_replay_SOURCES = tests/fuzz/fuzz-gopclntab.c $(FUZZ_COMMON)
tests_fuzz_fuzz_gopclntab_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_gopclntab_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_gopclntab_replay_LDADD = $(FUZZ_LDADD)

# 32-bit ARM unwind tables, .ARM.exidx and .ARM.extab, in an ELF file.
tests_fuzz_fuzz_arm_exidx_replay_SOURCES = tests/fuzz/fuzz-arm-exidx.c $(FUZZ_COMMON)
tests_fuzz_fuzz_arm_exidx_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_arm_exidx_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_arm_exidx_replay_LDADD = $(FUZZ_LDADD)

# The ELF header's counts, checked before libelf reads a user's file.
tests_fuzz_fuzz_elf_header_replay_SOURCES = tests/fuzz/fuzz-elf-header.c $(FUZZ_COMMON)
tests_fuzz_fuzz_elf_header_replay_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_fuzz_elf_header_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_elf_header_replay_LDADD = $(FUZZ_LDADD)

# Every file of every corpus (replay-corpus.sh checks that none is missing,
# or `make dist' would drop it).
FUZZ_CORPUS = \
	tests/fuzz/corpus/elf-header/seed-armhf-thumb-unwind-tables.so \
	tests/fuzz/corpus/elf-header/seed-x86_64-small.so \
	tests/fuzz/corpus/elf-header/synth-elf32-pn-xnum-67585 \
	tests/fuzz/corpus/elf-header/synth-elf32be-sections-4097 \
	tests/fuzz/corpus/elf-header/synth-elf64-pn-xnum-20000000 \
	tests/fuzz/corpus/elf-header/synth-elf64-sections-extended-20000000 \
	tests/fuzz/corpus/elf-header/synth-elf64be-phdrs-1170 \
	tests/fuzz/corpus/arm-exidx/seed-armhf-arm-mode-unwind-tables.so \
	tests/fuzz/corpus/arm-exidx/seed-armhf-thumb-unwind-tables.so \
	tests/fuzz/corpus/flatpak/seed-bwrapinfo.json \
	tests/fuzz/corpus/flatpak/seed-cgroup-v1-flatpak-no-scope \
	tests/fuzz/corpus/flatpak/seed-flatpak-info \
	tests/fuzz/corpus/flatpak/synth-cgroup-hybrid-escaped-app-scope \
	tests/fuzz/corpus/flatpak/synth-cgroup-v2-app-scope \
	tests/fuzz/corpus/gopclntab/seed-go119-gowork.gopclntab \
	tests/fuzz/corpus/gopclntab/synth-go116-three-functions.gopclntab \
	tests/fuzz/corpus/jit-map/crash-jitdump-header-past-end.dump \
	tests/fuzz/corpus/perf-dir/seed-threads-zstd.dir \
	tests/fuzz/corpus/perf-dir/seed-threads.dir \
	tests/fuzz/corpus/jit-map/seed-node20-perf-basic-prof.map \
	tests/fuzz/corpus/jit-map/seed-node20-perf-prof.dump \
	tests/fuzz/corpus/nsh-protocol/reply-01.json \
	tests/fuzz/corpus/nsh-protocol/reply-03.json \
	tests/fuzz/corpus/nsh-protocol/reply-05.json \
	tests/fuzz/corpus/nsh-protocol/reply-07.json \
	tests/fuzz/corpus/nsh-protocol/reply-09.json \
	tests/fuzz/corpus/nsh-protocol/reply-11.json \
	tests/fuzz/corpus/nsh-protocol/reply-13.json \
	tests/fuzz/corpus/nsh-protocol/reply-15.json \
	tests/fuzz/corpus/nsh-protocol/reply-17.json \
	tests/fuzz/corpus/nsh-protocol/reply-19.json \
	tests/fuzz/corpus/nsh-protocol/reply-21.json \
	tests/fuzz/corpus/nsh-protocol/reply-23.json \
	tests/fuzz/corpus/nsh-protocol/reply-25.json \
	tests/fuzz/corpus/nsh-protocol/reply-27.json \
	tests/fuzz/corpus/nsh-protocol/reply-29.json \
	tests/fuzz/corpus/nsh-protocol/reply-31.json \
	tests/fuzz/corpus/nsh-protocol/reply-33.json \
	tests/fuzz/corpus/nsh-protocol/reply-35.json \
	tests/fuzz/corpus/nsh-protocol/reply-37.json \
	tests/fuzz/corpus/nsh-protocol/reply-39.json \
	tests/fuzz/corpus/nsh-protocol/reply-41.json \
	tests/fuzz/corpus/nsh-protocol/reply-43.json \
	tests/fuzz/corpus/nsh-protocol/request-00.json \
	tests/fuzz/corpus/nsh-protocol/request-02.json \
	tests/fuzz/corpus/nsh-protocol/request-04.json \
	tests/fuzz/corpus/nsh-protocol/request-06.json \
	tests/fuzz/corpus/nsh-protocol/request-08.json \
	tests/fuzz/corpus/nsh-protocol/request-10.json \
	tests/fuzz/corpus/nsh-protocol/request-12.json \
	tests/fuzz/corpus/nsh-protocol/request-14.json \
	tests/fuzz/corpus/nsh-protocol/request-16.json \
	tests/fuzz/corpus/nsh-protocol/request-18.json \
	tests/fuzz/corpus/nsh-protocol/request-20.json \
	tests/fuzz/corpus/nsh-protocol/request-22.json \
	tests/fuzz/corpus/nsh-protocol/request-24.json \
	tests/fuzz/corpus/nsh-protocol/request-26.json \
	tests/fuzz/corpus/nsh-protocol/request-28.json \
	tests/fuzz/corpus/nsh-protocol/request-30.json \
	tests/fuzz/corpus/nsh-protocol/request-32.json \
	tests/fuzz/corpus/nsh-protocol/request-34.json \
	tests/fuzz/corpus/nsh-protocol/request-36.json \
	tests/fuzz/corpus/nsh-protocol/request-38.json \
	tests/fuzz/corpus/nsh-protocol/request-40.json \
	tests/fuzz/corpus/nsh-protocol/request-42.json \
	tests/fuzz/corpus/perf-source/crash-feature-table-offset-overflow.data \
	tests/fuzz/corpus/perf-source/crash-folded-no-samples.data \
	tests/fuzz/corpus/perf-source/crash-swapped-pipe-queued-copies-leak.data \
	tests/fuzz/corpus/perf-source/seed-file-cpu-time.data \
	tests/fuzz/corpus/perf-source/seed-file-demo.data \
	tests/fuzz/corpus/perf-source/seed-file-forkexec.data \
	tests/fuzz/corpus/perf-source/seed-file-threads.data \
	tests/fuzz/corpus/perf-source/seed-file-two-events.data \
	tests/fuzz/corpus/perf-source/seed-pipe-buildid-mmap.data \
	tests/fuzz/corpus/perf-source/seed-pipe-demo.data \
	tests/fuzz/corpus/perf-source/synth-file-demo-bigendian.data \
	tests/fuzz/corpus/perf-source/synth-file-two-events-bigendian.data \
	tests/fuzz/corpus/perf-source/synth-pipe-demo-bigendian.data \
	tests/fuzz/corpus/perf-source/synth-s390x-bigendian.data \
	tests/fuzz/corpus/podman-ids/crash-cgroup-short-libpod-name \
	tests/fuzz/corpus/podman-ids/seed-cgroup-podman-rootful \
	tests/fuzz/corpus/podman-ids/seed-cgroup-podman-rootless \
	tests/fuzz/corpus/podman-ids/seed-cgroup-podman-toolbox \
	tests/fuzz/corpus/podman-ids/seed-containerenv-toolbox \
	tests/fuzz/corpus/podman-storage/seed-mixed-volatile-storage \
	tests/fuzz/corpus/podman-storage/seed-rootful-vfs-containers.json \
	tests/fuzz/corpus/podman-storage/seed-rootful-vfs-images.json \
	tests/fuzz/corpus/podman-storage/seed-rootful-vfs-layers.json \
	tests/fuzz/corpus/podman-storage/seed-rootful-vfs-storage \
	tests/fuzz/corpus/podman-storage/seed-rootless-overlay-containers.json \
	tests/fuzz/corpus/podman-storage/seed-rootless-overlay-images.json \
	tests/fuzz/corpus/podman-storage/seed-rootless-overlay-layers.json \
	tests/fuzz/corpus/podman-storage/seed-rootless-overlay-storage \
	tests/fuzz/corpus/proc-maps/seed-flatpak-app \
	tests/fuzz/corpus/proc-maps/seed-host-bash \
	tests/fuzz/corpus/proc-maps/seed-host-python-odd-names \
	tests/fuzz/corpus/proc-maps/seed-podman-rootful-vfs \
	tests/fuzz/corpus/proc-maps/seed-podman-rootless-dynamic \
	tests/fuzz/corpus/proc-maps/seed-podman-rootless-static \
	tests/fuzz/corpus/proc-maps/seed-podman-toolbox-keep-id \
	tests/fuzz/corpus/sysprof-source/seed-corrupt-cut-frame.capture \
	tests/fuzz/corpus/sysprof-source/seed-corrupt-n-regs.capture \
	tests/fuzz/corpus/sysprof-source/seed-corrupt-past-end.capture \
	tests/fuzz/corpus/sysprof-source/seed-corrupt-short-len.capture \
	tests/fuzz/corpus/sysprof-source/seed-corrupt-stack-size.capture \
	tests/fuzz/corpus/sysprof-source/seed-corrupt-unaligned-len.capture \
	tests/fuzz/corpus/sysprof-source/seed-live-stream.capture \
	tests/fuzz/corpus/sysprof-source/seed-live-unwound.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-file-cpu-time.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-file-demo.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-file-forkexec.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-file-threads.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-file-two-events.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-pipe-buildid-mmap.capture \
	tests/fuzz/corpus/sysprof-source/seed-stream-pipe-demo.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-file-cpu-time.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-file-demo.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-file-forkexec.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-file-threads.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-file-two-events.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-pipe-buildid-mmap.capture \
	tests/fuzz/corpus/sysprof-source/seed-unwound-pipe-demo.capture \
	tests/fuzz/corpus/sysprof-source/synth-aarch64-stack-user.capture

TESTS += tests/fuzz/replay-corpus.sh
EXTRA_DIST += \
	tests/fuzz/README \
	tests/fuzz/replay-corpus.sh \
	tests/fuzz/run-fuzzer.sh \
	tests/fuzz/pack-perf-dir.py \
	$(FUZZ_CORPUS)

# tests/fuzz/run-fuzzer.sh asks the build tree how the core is made, so that
# its clang build of the libFuzzer target follows src/core/local.mk.
fuzz-core-vars: $(nodist_src_core_libcore_a_SOURCES)
	@echo "sources: $(src_core_libcore_a_SOURCES)"
	@echo "built_sources: $(nodist_src_core_libcore_a_SOURCES)"
	@echo "cflags: $(src_core_libcore_a_CFLAGS)"
	@echo "libs: $(core_libs)"
.PHONY: fuzz-core-vars
