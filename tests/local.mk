include $(srcdir)/tests/unit/local.mk
include $(srcdir)/tests/workloads/local.mk
include $(srcdir)/tests/e2e/local.mk
include $(srcdir)/tests/containers/local.mk
include $(srcdir)/tests/fuzz/local.mk
include $(srcdir)/tests/live/local.mk
