/* An unwound, symbolized sample: what every output sink receives.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/unwind/dwfl-unwind.h"

struct st_frame {
  uint64_t pc;              /* raw: the exact pc, or a return address */
  bool activation;          /* pc is exact; else symbolized at pc - 1 */
  bool inlined;             /* an inlined call inside the next frame */
  const char *module;       /* file path, or NULL when no mapping covers pc */
  const char *build_id;     /* hex, or NULL */
  bool has_elf_address;
  uint64_t elf_address;     /* pc in the file's own addresses (pc - bias) */
  const char *symbol;       /* NULL: unknown; demangled (demangle.h) */
  const char *raw_symbol;   /* the symbol's name in the file (mangled), or NULL */
  uint64_t offset;          /* from the symbol's start to the lookup pc */
};

/* The container a sample's process ran in (NULL in a chain: the host).  */
struct st_container_label {
  const char *kind;         /* "podman", "flatpak" */
  const char *name;         /* container name or app id */
  const char *id;           /* container id or flatpak instance */
  const char *root_frame;   /* "[podman:NAME]": folded stacks' root */
};

struct st_callchain {
  const struct st_sample *sample;
  const char *comm;
  const struct st_container_label *container;  /* NULL: the host */
  const struct st_frame *frames;  /* innermost first */
  size_t n_frames;
  enum st_stop_reason stop;
  const char *stop_detail;
  /* Set when the sink's format op already ran (in an unwinding thread). */
  const char *formatted;
  size_t formatted_len;
};
