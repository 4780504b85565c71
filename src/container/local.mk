EXTRA_DIST += src/container/README
