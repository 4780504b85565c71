# The tire-kicking corpus: lld- and GNU-ld-linked C, an lld-linked Lua, a
# cargo-built Rust program, ImageMagick, node, python3, clang++, xz, sqlite3
# and git, each recorded with perf and compared with perf script.  Minutes: in `make check-long'.
LONG_TESTS += tests/corpus/corpus.sh
EXTRA_DIST += tests/corpus/corpus.sh tests/corpus/corpus.py tests/corpus/install.sh \
	tests/corpus/work.c tests/corpus/work.cc tests/corpus/work.js tests/corpus/work.py \
	tests/corpus/work.sql tests/corpus/work.lua tests/corpus/lua-host.c \
	tests/corpus/rust-work/Cargo.toml tests/corpus/rust-work/Cargo.lock \
	tests/corpus/rust-work/src/main.rs
