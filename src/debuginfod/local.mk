EXTRA_DIST += src/debuginfod/README
