# The bundled demo program and the README's first command (make demo).
noinst_PROGRAMS = demo/eu-stacktrace-demo
demo_eu_stacktrace_demo_SOURCES = demo/demo.c
demo_eu_stacktrace_demo_CFLAGS = -O2 -g -fomit-frame-pointer
EXTRA_DIST += demo/run-demo.sh

.PHONY: demo
demo: eu-stacktrace demo/eu-stacktrace-demo
	PERF='$(PERF)' $(SHELL) $(srcdir)/demo/run-demo.sh $(builddir)
