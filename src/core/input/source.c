#include "config.h"

#include <stddef.h>

#include "core/input/source.h"

static const struct st_source_ops *const sources[] = {
  &st_source_perf,
  &st_source_sysprof,
};

const struct st_source_ops *
st_source_detect (const uint8_t *magic, size_t len)
{
  for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
    if (sources[i]->probe (magic, len))
      return sources[i];
  return NULL;
}

const char *
st_source_names (void)
{
  return "a perf.data file or pipe, or a Sysprof capture";
}
