/* See lib.h.  */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "basic/log.h"
#include "debuginfod/lib.h"

#define LIBDEBUGINFOD_SONAME "libdebuginfod.so.1"

int
st_debuginfod_lib_load (const struct st_debuginfod_lib **out)
{
  static struct st_debuginfod_lib lib;
  *out = lib.begin != NULL ? &lib : NULL;
  if (lib.begin != NULL)
    return 0;
  void *h = dlopen (LIBDEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      st_error ("cannot load %s for debuginfod: %s", LIBDEBUGINFOD_SONAME, dlerror ());
      return -ENOENT;
    }
  struct { void **fn; const char *name; } syms[] = {
    { (void **) &lib.end, "debuginfod_end" },
    { (void **) &lib.get_user_data, "debuginfod_get_user_data" },
    { (void **) &lib.set_user_data, "debuginfod_set_user_data" },
    { (void **) &lib.get_url, "debuginfod_get_url" },
    { (void **) &lib.set_progressfn, "debuginfod_set_progressfn" },
    { (void **) &lib.find_debuginfo, "debuginfod_find_debuginfo" },
    { (void **) &lib.find_executable, "debuginfod_find_executable" },
    { (void **) &lib.begin, "debuginfod_begin" },   /* last: it says "loaded" */
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
    if ((*syms[i].fn = dlsym (h, syms[i].name)) == NULL)
      {
        st_error ("%s has no %s", LIBDEBUGINFOD_SONAME, syms[i].name);
        lib.begin = NULL;
        dlclose (h);
        return -ENOENT;
      }
  *out = &lib;
  return 0;
}
