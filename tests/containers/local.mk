EXTRA_DIST += tests/containers/README
