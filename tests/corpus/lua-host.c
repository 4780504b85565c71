/* The corpus's Lua interpreter: Debian ships no Lua source package, but
   liblua5.4-dev's static library holds the whole interpreter (the VM, the
   garbage collector, the standard libraries), so this host linked with
   clang -fuse-ld=lld is a real Lua whose code lld placed (lua.c's own
   main does the same: a state, the libraries, `arg', the script).  */
#include <stdio.h>
#include <lua5.4/lauxlib.h>
#include <lua5.4/lua.h>
#include <lua5.4/lualib.h>

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s SCRIPT [ARG...]\n", argv[0]);
      return 2;
    }
  lua_State *L = luaL_newstate ();
  if (L == NULL)
    return 1;
  luaL_openlibs (L);
  /* arg[0] is the script, arg[1] its first argument, as lua.c sets it.  */
  lua_createtable (L, argc, 0);
  for (int i = 0; i < argc; i++)
    {
      lua_pushstring (L, argv[i]);
      lua_rawseti (L, -2, i - 1);
    }
  lua_setglobal (L, "arg");
  if (luaL_dofile (L, argv[1]) != LUA_OK)
    {
      fprintf (stderr, "%s: %s\n", argv[0], lua_tostring (L, -1));
      lua_close (L);
      return 1;
    }
  lua_close (L);
  return 0;
}
