EXTRA_DIST += src/container/README
src_core_libcore_a_SOURCES += \
	src/container/bounded-json.c \
	src/container/container.c src/container/container.h \
	src/container/label.h \
	src/container/flatpak.c src/container/flatpak-parse.h \
	src/container/flatpak-install.c src/container/flatpak-install.h \
	src/container/podman.c src/container/podman-storage.h
