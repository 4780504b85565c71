# Unit tests (cmocka, reporting TAP through CMOCKA_MESSAGE_OUTPUT=TAP).
UNIT_TESTS = \
	tests/unit/test-hashmap \
	tests/unit/test-log \
	tests/unit/test-bsearch \
	tests/unit/test-ordered-queue \
	tests/unit/test-regs \
	tests/unit/test-arm-exidx \
	tests/unit/test-source-perf \
	tests/unit/test-symbols \
	tests/unit/test-elf-build-id \
	tests/unit/test-elf-begin \
	tests/unit/test-debug-file \
	tests/unit/test-subid \
	tests/unit/test-untrusted \
	tests/unit/test-session \
	tests/unit/test-procfs \
	tests/unit/test-load-bias \
	tests/unit/test-process \
	tests/unit/test-module-spans \
	tests/unit/test-resolver \
	tests/unit/test-ns-client \
	tests/unit/test-container \
	tests/unit/test-jit-map \
	tests/unit/test-inflate-bounds \
	tests/unit/test-input \
	tests/unit/test-sink-json \
	tests/unit/test-sigbus-guard

check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)

unit_cflags = $(AM_CFLAGS) -I$(top_srcdir)/tests $(CMOCKA_CFLAGS) $(LIBDW_CFLAGS) $(JSON_C_CFLAGS)
unit_ldadd = src/core/libcore.a $(CMOCKA_LIBS) $(core_libs)

tests_unit_test_hashmap_CFLAGS = $(unit_cflags)
tests_unit_test_hashmap_LDADD = $(unit_ldadd)
# Messages with a user's control characters in them (escaped).
tests_unit_test_log_CFLAGS = $(unit_cflags)
tests_unit_test_log_LDADD = $(unit_ldadd)
tests_unit_test_bsearch_CFLAGS = $(unit_cflags)
tests_unit_test_bsearch_LDADD = $(unit_ldadd)
tests_unit_test_ordered_queue_CFLAGS = $(unit_cflags)
tests_unit_test_ordered_queue_LDADD = $(unit_ldadd)
tests_unit_test_regs_CFLAGS = $(unit_cflags)
tests_unit_test_regs_LDADD = $(unit_ldadd)
# The .ARM.exidx decoder on Debian's armhf libc, against binutils' readelf -u.
tests_unit_test_arm_exidx_CFLAGS = $(unit_cflags)
tests_unit_test_arm_exidx_LDADD = $(unit_ldadd)
# The namespace helper's client against the helper of this build (root).
tests_unit_test_ns_client_CFLAGS = $(unit_cflags)
tests_unit_test_ns_client_LDADD = $(unit_ldadd)
tests_unit_test_input_CFLAGS = $(unit_cflags)
# -f json against json-c's bytes for the same object.
tests_unit_test_sink_json_CFLAGS = $(unit_cflags)
tests_unit_test_sink_json_LDADD = $(unit_ldadd)
tests_unit_test_input_LDADD = $(unit_ldadd)
tests_unit_test_sigbus_guard_CFLAGS = $(unit_cflags)
tests_unit_test_sigbus_guard_LDADD = $(unit_ldadd)
tests_unit_test_source_perf_CFLAGS = $(unit_cflags)
tests_unit_test_source_perf_LDADD = $(unit_ldadd)
tests_unit_test_symbols_CFLAGS = $(unit_cflags)
tests_unit_test_symbols_LDADD = $(unit_ldadd)
tests_unit_test_elf_build_id_CFLAGS = $(unit_cflags)
tests_unit_test_elf_build_id_LDADD = src/ns-helper/libnshelper.a $(unit_ldadd)
tests_unit_test_untrusted_CFLAGS = $(unit_cflags)
tests_unit_test_untrusted_LDADD = $(unit_ldadd)
# The session on a real sample of the test itself, unwound with libdwfl.
tests_unit_test_session_CFLAGS = $(unit_cflags)
tests_unit_test_session_LDADD = $(unit_ldadd)
tests_unit_test_procfs_CFLAGS = $(unit_cflags)
tests_unit_test_procfs_LDADD = $(unit_ldadd)
tests_unit_test_load_bias_CFLAGS = $(unit_cflags)
tests_unit_test_load_bias_LDADD = $(unit_ldadd)
tests_unit_test_process_CFLAGS = $(unit_cflags)
tests_unit_test_process_LDADD = $(unit_ldadd)
tests_unit_test_inflate_bounds_CFLAGS = $(unit_cflags)
tests_unit_test_inflate_bounds_LDADD = $(unit_ldadd)
tests_unit_test_elf_begin_CFLAGS = $(unit_cflags)
tests_unit_test_elf_begin_LDADD = $(unit_ldadd)
tests_unit_test_debug_file_CFLAGS = $(unit_cflags)
tests_unit_test_debug_file_LDADD = $(unit_ldadd)
tests_unit_test_subid_CFLAGS = $(unit_cflags)
tests_unit_test_subid_LDADD = $(unit_ldadd)
tests_unit_test_module_spans_CFLAGS = $(unit_cflags)
tests_unit_test_module_spans_LDADD = $(unit_ldadd)
tests_unit_test_resolver_CFLAGS = $(unit_cflags)
tests_unit_test_resolver_LDADD = $(unit_ldadd)
tests_unit_test_container_CFLAGS = $(unit_cflags)
tests_unit_test_container_LDADD = $(unit_ldadd)
tests_unit_test_jit_map_CFLAGS = $(unit_cflags)
tests_unit_test_jit_map_LDADD = $(unit_ldadd)
EXTRA_DIST += tests/unit/test-bytes.h tests/unit/test-rewriter.h
