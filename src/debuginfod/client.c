/* The debuginfod client: one libdebuginfod client for the run, under a
 * lock, with a table of every answer (see debuginfod.h).  */
#include "config.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "basic/build-id.h"
#include "basic/cleanup.h"
#include "basic/elf-begin.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/why.h"
#include "debuginfod/debuginfod.h"
#include "debuginfod/env.h"
#include "debuginfod/lib.h"

/* libdebuginfod's functions, once the client started (lib.h).  */
static const struct st_debuginfod_lib *lib;

enum kind { KIND_DEBUGINFO, KIND_EXECUTABLE };
static const char *const kind_names[] = { "debuginfo", "executable" };

/* Why a file was not fetched: the summary counts these.  */
enum failure {
  FAIL_NOT_FOUND,        /* the servers answered 404 */
  FAIL_NO_ANSWER,        /* nothing within the timeout */
  FAIL_REFUSED,
  FAIL_UNREACHABLE,
  FAIL_RESET,
  FAIL_CANCELLED_BUDGET, /* the budget ran out while it waited */
  FAIL_CANCELLED_STOP,   /* the run was stopped at once while it waited */
  FAIL_OTHER,
  FAIL_SKIPPED_DOWN,     /* not asked: the servers failed earlier */
  FAIL_SKIPPED_BUDGET,   /* not asked: the budget was spent */
  FAIL_N
};

static const char *const failure_names[FAIL_N] = {
  [FAIL_NOT_FOUND] = "not found on the server (404)",
  [FAIL_NO_ANSWER] = "no answer within the timeout",
  [FAIL_REFUSED] = "connection refused",
  [FAIL_UNREACHABLE] = "server unreachable",
  [FAIL_RESET] = "connection reset",
  [FAIL_CANCELLED_BUDGET] = "cancelled: the budget ran out",
  [FAIL_CANCELLED_STOP] = "cancelled: the run was stopped at once",
  [FAIL_OTHER] = "other error",
  [FAIL_SKIPPED_DOWN] = "not asked: the server failed earlier",
  [FAIL_SKIPPED_BUDGET] = "not asked: the budget was spent",
};

/* The servers are not asked again after these: each would cost another
   timeout, and a dead server must not multiply the run time.  */
static bool
server_failed (enum failure f)
{
  return f == FAIL_NO_ANSWER || f == FAIL_REFUSED || f == FAIL_UNREACHABLE || f == FAIL_RESET;
}

/* One answer, kept for the run: a build-id is asked for once.  */
struct entry {
  char *path;              /* the file in libdebuginfod's cache, or NULL */
  struct st_why why;       /* why there is none */
};

struct failure_count {
  unsigned n;
  char example[200];       /* the first file it happened to */
};

struct st_debuginfod {
  struct st_debuginfod_options opts;
  char *urls;
  pthread_mutex_t lock;    /* everything below, and the client */
  debuginfod_client *client;    /* NULL until the first request */
  struct st_hashmap *entries;   /* kind + build-id -> entry */
  double spent;            /* seconds spent in requests */
  enum failure down;       /* why the servers are not asked, or FAIL_N */
  bool warned_budget;
  /* The request in progress, for the progress function.  */
  struct {
    enum kind kind;
    const char *module;
    double start, shown;
    bool showing;
    enum failure cancelled;     /* FAIL_N: not cancelled */
  } q;
  /* The summary.  */
  unsigned requests, debuginfo_fetched, cfi_modules, no_debug_frame, symtabs, executables;
  struct failure_count failures[FAIL_N];
};

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What a file has that a debuginfo file could give: CFI (.eh_frame or
   .debug_frame with contents; without section headers, PT_GNU_EH_FRAME)
   and a symbol table.  */
static void
elf_contents (Elf *elf, bool *cfi, bool *symtab)
{
  *cfi = *symtab = false;
  size_t shstrndx;
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF)
    return;
  if (elf_getshdrstrndx (elf, &shstrndx) == 0)
    for (Elf_Scn *scn = elf_nextscn (elf, NULL); scn != NULL; scn = elf_nextscn (elf, scn))
      {
        GElf_Shdr shdr;
        if (gelf_getshdr (scn, &shdr) == NULL)
          continue;
        if (shdr.sh_type == SHT_SYMTAB)
          *symtab = true;
        if (shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0)
          continue;
        const char *name = elf_strptr (elf, shstrndx, shdr.sh_name);
        if (name != NULL && (strcmp (name, ".eh_frame") == 0 || strcmp (name, ".debug_frame") == 0))
          *cfi = true;
      }
  size_t phnum;
  if (!*cfi && elf_getphdrnum (elf, &phnum) == 0)
    for (size_t i = 0; i < phnum; i++)
      {
        GElf_Phdr ph;
        if (gelf_getphdr (elf, i, &ph) != NULL && ph.p_type == PT_GNU_EH_FRAME && ph.p_filesz > 0)
          *cfi = true;
      }
}

unsigned
st_debuginfod_debuginfo_wanted (const struct st_debuginfod *d, Elf *elf)
{
  bool cfi, symtab;
  elf_contents (elf, &cfi, &symtab);
  unsigned want = (cfi ? 0 : ST_DEBUGINFOD_WANT_CFI) | (symtab ? 0 : ST_DEBUGINFOD_WANT_SYMTAB);
  if (cfi && !d->opts.symbols)
    return 0;
  return want;
}

/* The servers, for messages: URLS as given.  */
static const char *
servers (const struct st_debuginfod *d)
{
  return d->urls;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash != NULL && slash[1] != '\0' ? slash + 1 : path;
}

static void
progress_clear (struct st_debuginfod *d)
{
  if (d->q.showing)
    fputs ("\r\033[K", stderr);
  d->q.showing = false;
}

/* The run must end at once (a third signal): no request may hold it.  */
static bool
stopping (const struct st_debuginfod *d)
{
  return d->opts.stop_now != NULL && *d->opts.stop_now;
}

/* Called by libdebuginfod about once a second while it waits, and as data
   arrives.  A non-zero return cancels the request.  */
static int
progress (debuginfod_client *client, long a, long b)
{
  struct st_debuginfod *d = lib->get_user_data (client);
  double t = now (), elapsed = t - d->q.start;
  /* The URL is known once the first bytes of the file came.  Before that,
     libcurl's own timeout (DEBUGINFOD_TIMEOUT) covers a server that
     accepted the connection; this covers one that never did.  */
  const char *url = lib->get_url (client);
  if (url == NULL && elapsed > d->opts.timeout + 1.0)
    {
      d->q.cancelled = FAIL_NO_ANSWER;
      return 1;
    }
  if (d->spent + elapsed > d->opts.budget)
    {
      d->q.cancelled = FAIL_CANCELLED_BUDGET;
      return 1;
    }
  if (stopping (d))
    {
      d->q.cancelled = FAIL_CANCELLED_STOP;
      return 1;
    }
  if (d->opts.progress && t - d->q.shown >= 0.2)
    {
      d->q.shown = t;
      d->q.showing = true;
      /* The module's name is the process's to choose: escaped.  */
      const char *module = base_name (d->q.module);
      fprintf (stderr, "\r\033[Kdebuginfod: %s of ", kind_names[d->q.kind]);
      st_log_write_escaped (stderr, module, strlen (module));
      if (url == NULL)
        fprintf (stderr, ": waiting for %s (%.0f s)", servers (d), elapsed);
      else
        {
          const char *end = strstr (url, "/buildid/");
          int len = end != NULL ? (int) (end - url) : (int) strlen (url);
          if (b > 0)
            fprintf (stderr, ": %.1f of %.1f MB from %.*s", a / 1e6, b / 1e6, len, url);
          else
            fprintf (stderr, ": %.1f MB from %.*s", a / 1e6, len, url);
        }
      fflush (stderr);
    }
  return 0;
}

/* libdebuginfod's cache folder, found as libdebuginfod 0.188 finds it.  */
static void
cache_folder (char *out, size_t size)
{
  const char *path = getenv (DEBUGINFOD_CACHE_PATH_ENV_VAR);
  if (path != NULL && path[0] != '\0')
    {
      snprintf (out, size, "%s", path);
      return;
    }
  const char *home = getenv ("HOME");
  if (home == NULL)
    home = "/";
  struct stat st;
  snprintf (out, size, "%s/.debuginfod_client_cache", home);
  if (stat (out, &st) == 0)
    return;
  const char *xdg = getenv ("XDG_CACHE_HOME");
  if (xdg != NULL && xdg[0] != '\0')
    snprintf (out, size, "%s/debuginfod_client", xdg);
  else
    snprintf (out, size, "%s/.cache/debuginfod_client", home);
}

/* libdebuginfod 0.188 records a cancelled request in its cache as a 404,
   an empty file that it then believes for ten minutes: take it back.  A
   request is cancelled only after it went to the network, so the empty
   file is this request's.  */
static void
forget_cancelled (const char *hex, enum kind kind)
{
  char folder[PATH_MAX], dir[PATH_MAX + 64], file[PATH_MAX + 128];
  cache_folder (folder, sizeof folder);
  snprintf (dir, sizeof dir, "%s/%s", folder, hex);
  snprintf (file, sizeof file, "%s/%s", dir, kind_names[kind]);
  struct stat st;
  if (lstat (file, &st) == 0 && S_ISREG (st.st_mode) && st.st_size == 0 && unlink (file) == 0)
    st_debug ("debuginfod: removed the false 404 that the cancelled request left in %s", file);
  rmdir (dir);   /* when empty */
}

static enum failure
failure_of (int err)
{
  switch (err)
    {
    case ENOENT: return FAIL_NOT_FOUND;
    case ETIME: return FAIL_NO_ANSWER;
    case ECONNREFUSED: return FAIL_REFUSED;
    case EHOSTUNREACH:
    case ENETUNREACH: return FAIL_UNREACHABLE;
    case ECONNRESET: return FAIL_RESET;
    default: return FAIL_OTHER;
    }
}

static void
count_failure (struct st_debuginfod *d, enum failure f, enum kind kind, const char *module,
               const char *detail)
{
  struct failure_count *c = &d->failures[f];
  if (c->n++ == 0)
    snprintf (c->example, sizeof c->example, "%s of %s%s%s", kind_names[kind], module,
              detail ? ": " : "", detail ? detail : "");
}

static void
warn_budget_spent (struct st_debuginfod *d)
{
  if (d->warned_budget)
    return;
  d->warned_budget = true;
  st_warning ("debuginfod: the %u s budget (--debuginfod-budget) is spent: no more "
              "requests this run", d->opts.budget);
}

/* Says why, in E and in the counts.  */
static void
fail (struct st_debuginfod *d, struct entry *e, enum failure f, int err, enum kind kind,
      const char *module)
{
  count_failure (d, f, kind, module, f == FAIL_OTHER ? strerror (err) : NULL);
  if (f == FAIL_NO_ANSWER)
    st_why_set (&e->why, ETIMEDOUT, "no answer within %u s from %s", d->opts.timeout,
                servers (d));
  else if (f == FAIL_REFUSED || f == FAIL_UNREACHABLE || f == FAIL_RESET)
    st_why_set (&e->why, err > 0 ? err : ENOENT, "%s: %s", servers (d), failure_names[f]);
  else if (f == FAIL_SKIPPED_DOWN)
    st_why_set (&e->why, EHOSTUNREACH, "not asked: %s failed earlier (%s)", servers (d),
                failure_names[d->down]);
  else if (f == FAIL_OTHER)
    st_why_set (&e->why, err > 0 ? err : ENOENT, "%s", strerror (err));
  else
    st_why_set (&e->why, err > 0 ? err : ENOENT, "%s", failure_names[f]);
}

/* Counts what a fetched file gives.  */
static void
count_fetched (struct st_debuginfod *d, enum kind kind, int fd, unsigned want)
{
  if (kind == KIND_EXECUTABLE)
    {
      d->executables++;
      return;
    }
  d->debuginfo_fetched++;
  Elf *elf = NULL;
  (void) st_elf_begin_untrusted (fd, &elf, NULL);
  bool cfi, symtab;
  elf_contents (elf, &cfi, &symtab);
  st_elf_end_untrusted (elf);
  if (want & ST_DEBUGINFOD_WANT_CFI)
    {
      if (cfi)
        d->cfi_modules++;
      else
        d->no_debug_frame++;
    }
  if ((want & ST_DEBUGINFOD_WANT_SYMTAB) && symtab)
    d->symtabs++;
}

/* libdebuginfod is opened, and its client made, at the first request, not
   when the run starts: it loads 28 libraries (libcurl, GnuTLS, Kerberos,
   LDAP) and runs their constructors, about 5 ms of CPU that the start of
   every run with DEBUGINFOD_URLS set would wait for, though most runs ask
   for nothing or ask late.  Called with the lock held: one client per run,
   so the lock also makes the load happen once.  Loading from an unwinding
   thread is safe: dlopen is, and libdwfl opens the same library from
   those threads on its own.  */
static int
client_start_locked (struct st_debuginfod *d)
{
  int r = st_debuginfod_lib_load (&lib);
  if (r < 0)
    return r;
  /* debuginfod_begin fails only when an allocation does.  */
  d->client = lib->begin ();
  if (d->client == NULL)
    return -ENOMEM;
  lib->set_user_data (d->client, d);
  lib->set_progressfn (d->client, progress);
  return 0;
}

/* Asks the servers, once, and fills E.  Called with the lock held.  */
static void
request_locked (struct st_debuginfod *d, enum kind kind, const uint8_t *id, size_t n,
                const char *module, unsigned want, struct entry *e)
{
  if (d->down != FAIL_N)
    {
      fail (d, e, FAIL_SKIPPED_DOWN, 0, kind, module);
      return;
    }
  if (d->client == NULL)
    {
      int r = client_start_locked (d);
      if (r < 0)
        {
          /* Said once (lib.c); nothing more is asked.  */
          fail (d, e, FAIL_OTHER, -r, kind, module);
          d->down = FAIL_OTHER;
          return;
        }
    }
  if (d->spent >= d->opts.budget)
    {
      fail (d, e, FAIL_SKIPPED_BUDGET, 0, kind, module);
      warn_budget_spent (d);
      return;
    }
  if (stopping (d))
    {
      fail (d, e, FAIL_CANCELLED_STOP, 0, kind, module);
      return;
    }
  char hex[2 * ST_BUILD_ID_MAX + 1];
  st_build_id_to_hex (id, n, hex);
  d->q.kind = kind;
  d->q.module = module;
  d->q.start = now ();
  d->q.shown = d->q.start;   /* a quick answer shows nothing */
  d->q.cancelled = FAIL_N;
  d->requests++;

  st_debuginfod_env_begin_request (d->urls, d->opts.timeout);
  char *path = NULL;
  int fd = kind == KIND_DEBUGINFO ? lib->find_debuginfo (d->client, id, (int) n, &path)
                                  : lib->find_executable (d->client, id, (int) n, &path);
  if (fd < 0 && d->q.cancelled != FAIL_N)
    forget_cancelled (hex, kind);
  st_debuginfod_env_end_request ();

  double elapsed = now () - d->q.start;
  d->spent += elapsed;
  progress_clear (d);
  if (fd >= 0)
    {
      count_fetched (d, kind, fd, want);
      close (fd);   /* callers get their own, close-on-exec */
      e->path = path;
      st_info ("debuginfod: %s of %s (build-id %s): fetched in %.2f s: %s", kind_names[kind],
               module, hex, elapsed, path ? path : "?");
      if (path == NULL)
        st_why_set (&e->why, ENOMEM, "out of memory");
    }
  else
    {
      free (path);
      enum failure f = d->q.cancelled != FAIL_N ? d->q.cancelled : failure_of (-fd);
      fail (d, e, f, -fd, kind, module);
      st_info ("debuginfod: %s of %s (build-id %s): %s (%.2f s)", kind_names[kind], module, hex,
               e->why.text, elapsed);
      if (server_failed (f))
        {
          d->down = f;
          st_warning ("debuginfod: %s: %s: no more requests to it this run", servers (d),
                      e->why.text);
        }
    }
  if (d->spent >= d->opts.budget)
    warn_budget_spent (d);
}

static void
entry_free (void *p)
{
  struct entry *e = p;
  if (e != NULL)
    free (e->path);
  free (e);
}

static int
find (struct st_debuginfod *d, enum kind kind, const uint8_t *id, size_t n, const char *module,
      unsigned want, char **path, struct st_why *why)
{
  if (n == 0 || n > ST_BUILD_ID_MAX)
    return st_why_set (why, EINVAL, "no build-id to ask for");
  uint8_t key[1 + ST_BUILD_ID_MAX];
  key[0] = (uint8_t) kind;
  memcpy (key + 1, id, n);
  int fd;
  pthread_mutex_lock (&d->lock);
  struct entry *e = st_hashmap_get (d->entries, key, n + 1);
  if (e == NULL)
    {
      e = calloc (1, sizeof *e);
      if (e != NULL)
        request_locked (d, kind, id, n, module, want, e);
      if (e == NULL || st_hashmap_put (d->entries, key, n + 1, e) < 0)
        {
          entry_free (e);
          pthread_mutex_unlock (&d->lock);
          return st_why_set (why, ENOMEM, "out of memory");
        }
    }
  if (e->path != NULL)
    {
      fd = open (e->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
      if (fd < 0)
        fd = st_why_set (why, errno, "the fetched file is gone from the debuginfod cache");
      else if (path != NULL)
        *path = strdup (e->path);
    }
  else
    fd = st_why_set (why, ENOENT, "%s", e->why.text);
  pthread_mutex_unlock (&d->lock);
  return fd;
}

int
st_debuginfod_find_debuginfo (struct st_debuginfod *d, const uint8_t *build_id,
                              size_t build_id_size, const char *module, unsigned want,
                              char **path, struct st_why *why)
{
  return find (d, KIND_DEBUGINFO, build_id, build_id_size, module, want, path, why);
}

int
st_debuginfod_find_executable (struct st_debuginfod *d, const uint8_t *build_id,
                               size_t build_id_size, const char *module, struct st_why *why)
{
  return find (d, KIND_EXECUTABLE, build_id, build_id_size, module, 0, NULL, why);
}

ST_DEFINE_CLEANUP (debuginfod_freep, struct st_debuginfod, st_debuginfod_free)

int
st_debuginfod_new (const struct st_debuginfod_options *opts, struct st_debuginfod **out)
{
  _cleanup_ (debuginfod_freep) struct st_debuginfod *d = calloc (1, sizeof *d);
  if (d == NULL)
    return -ENOMEM;
  d->opts = *opts;
  d->urls = strdup (opts->urls);
  d->opts.urls = d->urls;
  d->entries = st_hashmap_new (entry_free);
  d->down = FAIL_N;
  pthread_mutex_init (&d->lock, NULL);
  st_debuginfod_env_prepare ();
  if (d->urls == NULL || d->entries == NULL)
    return -ENOMEM;
  /* The library: at the first request (client_start_locked).  */
  *out = ST_TAKE_PTR (d);
  return 0;
}

void
st_debuginfod_free (struct st_debuginfod *d)
{
  if (d == NULL)
    return;
  if (d->client != NULL)
    lib->end (d->client);
  st_hashmap_free (d->entries);
  pthread_mutex_destroy (&d->lock);
  free (d->urls);
  free (d);
}

void
st_debuginfod_print_summary (struct st_debuginfod *d, FILE *out)
{
  pthread_mutex_lock (&d->lock);
  fprintf (out, "debuginfod: %s (timeout %u s, budget %u s)\n", servers (d), d->opts.timeout,
           d->opts.budget);
  fprintf (out, "  %-30s %u (%.2f s)\n", "requests", d->requests, d->spent);
  fprintf (out, "  %-30s %u\n", "modules with CFI from it", d->cfi_modules);
  if (d->no_debug_frame > 0)
    fprintf (out, "  %-30s %u\n", "debuginfo without CFI", d->no_debug_frame);
  fprintf (out, "  %-30s %u\n", "symbol tables from it", d->symtabs);
  fprintf (out, "  %-30s %u\n", "executables fetched", d->executables);
  unsigned failed = 0;
  for (int i = 0; i < FAIL_N; i++)
    failed += d->failures[i].n;
  if (failed > 0)
    {
      fprintf (out, "  %-30s %u\n", "not fetched, by why", failed);
      for (int i = 0; i < FAIL_N; i++)
        if (d->failures[i].n > 0)
          {
            if (i == FAIL_NO_ANSWER)
              fprintf (out, "    %s (%u s): %u (first: %s)\n", failure_names[i], d->opts.timeout,
                       d->failures[i].n, d->failures[i].example);
            else
              fprintf (out, "    %s: %u (first: %s)\n", failure_names[i], d->failures[i].n,
                       d->failures[i].example);
          }
    }
  if (d->failures[FAIL_SKIPPED_BUDGET].n > 0 || d->failures[FAIL_CANCELLED_BUDGET].n > 0)
    fprintf (out, "  the %u s budget (--debuginfod-budget) was spent: later requests were "
             "skipped\n", d->opts.budget);
  pthread_mutex_unlock (&d->lock);
}
