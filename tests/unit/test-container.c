/* Container detection on what real podman and flatpak wrote (the files
 * tests/fuzz/corpus/ keeps, captured from real containers): a podman
 * process's id from its cgroup and /run/.containerenv, a flatpak app's id
 * from its cgroup scope and its sandbox's bwrapinfo.json and .flatpak-info;
 * then podman's storage (real containers.json, layers.json and images.json)
 * over a layer tree made in a temporary directory: the container found by
 * name, its layers in order, its files opened from the right layer, and
 * nothing opened through a symlink or `..' out of a layer.  This process,
 * on the host, is in no container.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "container/container.h"
#include "container/flatpak-parse.h"
#include "container/podman-storage.h"

#define FZ_A_ID "7976f402afe561e6188235a3eb76f6bca9bc66ae50a983a5bbcd294d43ba9017"
#define FZ_A_LAYER "9ebdd40ed1a5e04e306d9afc5339ac44b3a4870cd3a21a3f84ed2547ed0597ca"
#define BASE_LAYER "2c027e4e494375726c3f90924a047527a5da5d98e5920926c0836e3382cbc7a3"

/* A file of tests/fuzz/corpus/, whole, as a string (free it).  */
static char *
corpus (const char *name)
{
  const char *top = getenv ("TOP_SRCDIR");
  char path[4096];
  snprintf (path, sizeof path, "%s/tests/fuzz/corpus/%s", top ? top : ".", name);
  FILE *f = fopen (path, "r");
  if (f == NULL)
    fail_msg ("cannot open %s: %s (TOP_SRCDIR is the top of the source tree)", path,
              strerror (errno));
  char *text = calloc (1, 1 << 20);
  assert_non_null (text);
  size_t n = fread (text, 1, (1 << 20) - 1, f);
  text[n] = '\0';
  fclose (f);
  return text;
}

static void
test_podman_ids_from_real_files (void **state)
{
  char id[65];
  char *text = corpus ("podman-ids/seed-cgroup-podman-rootful");
  assert_true (st_podman_id_from_cgroup_text (text, id));
  assert_string_equal (id, FZ_A_ID);
  free (text);

  text = corpus ("podman-ids/seed-containerenv-toolbox");
  assert_true (st_podman_id_from_containerenv_text (text, id));
  assert_string_equal (id, "f8459dca8c21da6304ba8c896481a47f89ad6d1b6acafa00574f4da41215c122");
  free (text);

  /* A host process's cgroup, and a libpod- name too short for an id.  */
  text = corpus ("podman-ids/seed-cgroup-podman-rootless");
  assert_false (st_podman_id_from_cgroup_text (text, id));
  free (text);
  text = corpus ("podman-ids/crash-cgroup-short-libpod-name");
  assert_false (st_podman_id_from_cgroup_text (text, id));
  free (text);
  assert_false (st_podman_id_from_cgroup_text ("0::/libpod-conmon-" FZ_A_ID "\n", id));
}

static void
test_flatpak_from_real_files (void **state)
{
  char app[256];
  char *text = corpus ("flatpak/synth-cgroup-v2-app-scope");
  assert_true (st_flatpak_app_from_cgroup_text (text, app, sizeof app));
  assert_string_equal (app, "org.gnome.Calculator");
  free (text);
  text = corpus ("flatpak/synth-cgroup-hybrid-escaped-app-scope");
  assert_true (st_flatpak_app_from_cgroup_text (text, app, sizeof app));
  assert_string_equal (app, "org.example.My-App");   /* \x2d unescaped */
  free (text);
  text = corpus ("flatpak/seed-cgroup-v1-flatpak-no-scope");
  assert_false (st_flatpak_app_from_cgroup_text (text, app, sizeof app));
  free (text);

  long long mnt = 0, child = 0;
  text = corpus ("flatpak/seed-bwrapinfo.json");
  st_flatpak_parse_bwrapinfo (text, &mnt, &child);
  assert_int_equal (mnt, 4026532177LL);
  assert_int_equal (child, 21783);
  free (text);
  st_flatpak_parse_bwrapinfo ("{\"child-pid\": \"21783\"}", &mnt, &child);
  assert_int_equal (mnt, -1);
  assert_int_equal (child, -1);

  /* .flatpak-info names the app; a cgroup naming another app wins.  */
  text = corpus ("flatpak/seed-flatpak-info");
  struct st_container *c = st_flatpak_from_info_text (text, NULL, "org.fuzzseed.Pause");
  assert_non_null (c);
  assert_int_equal (c->kind, ST_CONTAINER_FLATPAK);
  assert_string_equal (c->name, "org.fuzzseed.Pause");
  assert_string_equal (c->label.kind, "flatpak");
  print_message ("flatpak: %s, %zu host directories\n", c->root_frame, c->n_dirs);
  st_container_free (c);
  assert_null (st_flatpak_from_info_text (text, NULL, "org.other.App"));
  free (text);
}

static char graph[] = "/tmp/eu-stacktrace-test-container.XXXXXX";

static void
put (const char *rel, const char *content)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", graph, rel);
  for (char *s = strchr (path + strlen (graph) + 1, '/'); s != NULL; s = strchr (s + 1, '/'))
    {
      *s = '\0';
      mkdir (path, 0755);
      *s = '/';
    }
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (content, f);
  fclose (f);
}

static char *
read_fd (int fd)
{
  static char buf[256];
  ssize_t n = read (fd, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static void
test_podman_storage_layers (void **state)
{
  assert_non_null (mkdtemp (graph));
  put ("vfs/dir/" BASE_LAYER "/usr/lib/libc.so.6", "base libc");
  put ("vfs/dir/" BASE_LAYER "/usr/bin/prog", "base prog");
  put ("vfs/dir/" FZ_A_LAYER "/usr/bin/prog", "upper prog");
  /* A planted symlink: inside the container it names its own /etc/passwd,
     which no layer has; never the host's.  */
  char link[4096];
  snprintf (link, sizeof link, "%s/vfs/dir/" FZ_A_LAYER "/usr/bin/escape", graph);
  assert_int_equal (symlink ("/etc/passwd", link), 0);

  const char *texts[ST_PODMAN_STORAGE_N] = { NULL };
  char *containers = corpus ("podman-storage/seed-rootful-vfs-containers.json");
  char *layers = corpus ("podman-storage/seed-rootful-vfs-layers.json");
  char *images = corpus ("podman-storage/seed-rootful-vfs-images.json");
  texts[ST_PODMAN_CONTAINERS] = containers;
  texts[ST_PODMAN_LAYERS] = layers;
  texts[ST_PODMAN_IMAGES] = images;
  int gfd = open (graph, O_PATH | O_DIRECTORY);
  assert_true (gfd >= 0);
  struct st_container **cache = NULL;
  size_t n = 0;
  assert_int_equal (st_podman_storage_collect (gfd, "vfs", texts, &cache, &n), 0);
  print_message ("%zu containers and images in the storage\n", n);
  const struct st_container *a = NULL;
  for (size_t i = 0; i < n; i++)
    if (cache[i]->name != NULL && strcmp (cache[i]->name, "fz-a") == 0)
      a = cache[i];
  assert_non_null (a);
  assert_int_equal (a->kind, ST_CONTAINER_PODMAN);
  assert_string_equal (a->id, FZ_A_ID);
  assert_string_equal (a->root_frame, "[podman:fz-a]");
  assert_int_equal (a->n_dirs, 2);   /* its own layer, then the image's */
  assert_true (a->dirs[0].upper);
  assert_false (a->dirs[1].upper);

  struct st_why why = { 0 };
  size_t next = 0;
  bool upper = false;
  int fd = st_container_open (a, "/usr/bin/prog", &next, &upper, &why);
  assert_true (fd >= 0);
  assert_true (upper);
  assert_string_equal (read_fd (fd), "upper prog");
  close (fd);
  /* Not the mapped file: the next try finds the image's copy.  */
  fd = st_container_open (a, "/usr/bin/prog", &next, &upper, &why);
  assert_true (fd >= 0);
  assert_false (upper);
  assert_string_equal (read_fd (fd), "base prog");
  close (fd);
  next = 0;
  fd = st_container_open (a, "/usr/lib/libc.so.6", &next, &upper, &why);
  assert_true (fd >= 0);
  assert_string_equal (read_fd (fd), "base libc");
  close (fd);

  next = 0;
  assert_true (st_container_open (a, "/usr/bin/escape", &next, &upper, &why) < 0);
  next = 0;
  assert_true (st_container_open (a, "/../../../../../../etc/passwd", &next, &upper, &why) < 0);
  print_message ("refused: %s\n", why.text);

  for (size_t i = 0; i < n; i++)
    st_container_free (cache[i]);
  free (cache);
  close (gfd);
  free (containers);
  free (layers);
  free (images);
  char cmd[4200];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", graph);
  assert_int_equal (system (cmd), 0);
}

static void
test_this_process_is_on_the_host (void **state)
{
  assert_int_equal (st_containers_parse_kinds ("auto"), ST_CONTAINER_ALL);
  assert_int_equal (st_containers_parse_kinds ("none"), 0);
  assert_int_equal (st_containers_parse_kinds ("podman"), ST_CONTAINER_PODMAN);
  assert_int_equal (st_containers_parse_kinds ("flatpak"), ST_CONTAINER_FLATPAK);
  assert_int_equal (st_containers_parse_kinds ("docker"), -1);
  struct st_containers *cs = NULL;
  assert_int_equal (st_containers_new (ST_CONTAINER_ALL, &cs), 0);
  assert_non_null (cs);
  assert_null (st_containers_of (cs, getpid ()));
  st_containers_free (cs);
}

/* Processes of one mount namespace, cgroup, user and root share the first
   one's answer: the container metadata is read once, not per process.  */
static void
test_one_detection_per_namespace (void **state)
{
  struct st_containers *cs = NULL;
  assert_int_equal (st_containers_new (ST_CONTAINER_ALL, &cs), 0);
  pid_t kids[4];
  int go[2];
  assert_int_equal (pipe (go), 0);
  for (size_t i = 0; i < 4; i++)
    {
      kids[i] = fork ();
      assert_true (kids[i] >= 0);
      if (kids[i] == 0)
        {
          /* Alive until the parent closes the pipe.  */
          char c;
          close (go[1]);
          _exit (read (go[0], &c, 1) < 0);
        }
    }
  close (go[0]);
  size_t detected, reused;
  assert_null (st_containers_of (cs, getpid ()));
  st_containers_counts (cs, &detected, &reused);
  /* 0 when this machine shows us pid 1's namespace and it is ours.  */
  size_t first = detected;
  assert_true (first <= 1);
  for (size_t i = 0; i < 4; i++)
    assert_null (st_containers_of (cs, kids[i]));
  /* Asked again: the answer per process, nothing more read.  */
  assert_null (st_containers_of (cs, kids[0]));
  st_containers_counts (cs, &detected, &reused);
  assert_int_equal (detected, first);
  assert_int_equal (reused, first ? 4 : 0);
  close (go[1]);
  for (size_t i = 0; i < 4; i++)
    assert_int_equal (waitpid (kids[i], NULL, 0), kids[i]);
  st_containers_free (cs);
}

/* In a mount namespace of its own that no container's metadata names, a
   process is detected alone each time: "none" there may be a container
   that podman has not yet written down.  Needs CAP_SYS_ADMIN (unshare).  */
static void
test_other_namespace_none_is_not_kept (void **state)
{
  int ready[2], go[2];
  assert_int_equal (pipe (ready), 0);
  assert_int_equal (pipe (go), 0);
  pid_t kid = fork ();
  assert_true (kid >= 0);
  if (kid == 0)
    {
      close (ready[0]);
      close (go[1]);
      char ok = unshare (CLONE_NEWNS) == 0 ? 'y' : 'n';
      pid_t grandkid = ok == 'y' ? fork () : -1;
      if (grandkid == 0)
        {
          char c;
          _exit (read (go[0], &c, 1) < 0);
        }
      char msg[1 + sizeof grandkid] = { ok };
      memcpy (msg + 1, &grandkid, sizeof grandkid);
      if (write (ready[1], msg, sizeof msg) != (ssize_t) sizeof msg)
        _exit (1);
      char c;
      ssize_t n = read (go[0], &c, 1);
      if (grandkid > 0)
        waitpid (grandkid, NULL, 0);
      _exit (n < 0);
    }
  close (ready[1]);
  close (go[0]);
  char msg[1 + sizeof (pid_t)];
  assert_int_equal (read (ready[0], msg, sizeof msg), (ssize_t) sizeof msg);
  pid_t grandkid;
  memcpy (&grandkid, msg + 1, sizeof grandkid);
  if (msg[0] != 'y')
    {
      close (go[1]);
      waitpid (kid, NULL, 0);
      skip ();
    }
  struct st_containers *cs = NULL;
  assert_int_equal (st_containers_new (ST_CONTAINER_ALL, &cs), 0);
  assert_null (st_containers_of (cs, kid));
  assert_null (st_containers_of (cs, grandkid));
  size_t detected, reused;
  st_containers_counts (cs, &detected, &reused);
  assert_int_equal (detected, 2);
  assert_int_equal (reused, 0);
  st_containers_free (cs);
  close (go[1]);
  assert_int_equal (waitpid (kid, NULL, 0), kid);
}


static void
write_owned (const char *path, const char *text, uid_t uid)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  assert_int_equal (fclose (f), 0);
  assert_int_equal (chown (path, uid, uid), 0);
}

/* A flatpak instance directory describes the descendants of its bwrap
   child only (flatpak.c, instance_holds): its user writes it, and may
   name any pid as that child.  A process of the same mount namespace,
   cgroup, users and root that does not descend from the child (one that
   podman exec'd into a rootful container whose processes run as that
   user's uid, whose init the user named; nsenter; flatpak enter) is
   detected as before, not given the instance's answer because a
   descendant was seen first.  Needs root (a runtime deployment in
   /var/lib/flatpak, setns).  */
static void
test_instance_answer_needs_descent (void **state)
{
  (void) state;
  const uid_t uid = 4242;   /* a user with no session on this machine */
  if (geteuid () != 0 || access ("/var/lib/flatpak", W_OK) != 0)
    skip ();
  char rt[128], path[512], inst[256], text[1024];
  snprintf (rt, sizeof rt, "/var/lib/flatpak/runtime/org.stacktrace.TestRt%d", (int) getpid ());
  const char *const sub[] = { "", "/x86_64", "/x86_64/master", "/x86_64/master/0123abcd",
                              "/x86_64/master/0123abcd/files" };
  /* A machine where flatpak never installed anything has no runtime/.  */
  bool made_runtime = mkdir ("/var/lib/flatpak/runtime", 0755) == 0;
  for (size_t i = 0; i < 5; i++)
    {
      snprintf (path, sizeof path, "%s%s", rt, sub[i]);
      assert_int_equal (mkdir (path, 0755), 0);
    }
  char xdg[] = "/tmp/st-xdg-XXXXXX";
  assert_non_null (mkdtemp (xdg));
  snprintf (inst, sizeof inst, "%s/.flatpak", xdg);
  assert_int_equal (mkdir (inst, 0700), 0);
  snprintf (inst, sizeof inst, "%s/.flatpak/1234567890", xdg);
  assert_int_equal (mkdir (inst, 0700), 0);
  const char *const owned[] = { xdg, "/.flatpak", "/.flatpak/1234567890" };
  for (size_t i = 0; i < 3; i++)
    {
      snprintf (path, sizeof path, "%s%s", i ? xdg : "", owned[i]);
      assert_int_equal (chown (path, uid, uid), 0);
    }

  int ready[2], go[2];
  assert_int_equal (pipe (ready), 0);
  assert_int_equal (pipe (go), 0);
  /* C: the "bwrap child", in a mount namespace of its own; A: its child,
     as UID.  */
  pid_t c = fork ();
  assert_true (c >= 0);
  if (c == 0)
    {
      close (ready[0]);
      close (go[1]);
      char msg[1 + sizeof (pid_t)] = { unshare (CLONE_NEWNS) == 0 ? 'y' : 'n' };
      pid_t a = -1;
      int a_ready[2];
      if (pipe (a_ready) != 0)
        _exit (1);
      if (msg[0] == 'y' && (a = fork ()) == 0)
        {
          char ch = setresuid (uid, uid, uid) == 0 ? 'y' : 'n';
          _exit (write (a_ready[1], &ch, 1) != 1 || ch != 'y' || read (go[0], &ch, 1) < 0);
        }
      close (a_ready[1]);
      /* A has its uid before anyone looks at it.  */
      char ch = 'n';
      if (a > 0 && (read (a_ready[0], &ch, 1) != 1 || ch != 'y'))
        msg[0] = 'n';
      memcpy (msg + 1, &a, sizeof a);
      if (write (ready[1], msg, sizeof msg) != (ssize_t) sizeof msg || read (go[0], &ch, 1) < 0)
        _exit (1);
      if (a > 0)
        waitpid (a, NULL, 0);
      _exit (0);
    }
  char msg[1 + sizeof (pid_t)];
  assert_int_equal (read (ready[0], msg, sizeof msg), (ssize_t) sizeof msg);
  pid_t a;
  memcpy (&a, msg + 1, sizeof a);
  /* B: enters C's mount namespace from outside, as UID.  */
  pid_t b = msg[0] == 'y' ? fork () : -1;
  if (b == 0)
    {
      close (ready[0]);
      close (go[1]);
      snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) c);
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      char ok = fd >= 0 && setns (fd, CLONE_NEWNS) == 0 && setresuid (uid, uid, uid) == 0 ? 'y' : 'n';
      char ch;
      _exit (write (ready[1], &ok, 1) != 1 || read (go[0], &ch, 1) < 0);
    }
  char ok = 'n';
  if (b > 0)
    assert_int_equal (read (ready[0], &ok, 1), 1);

  struct stat ns;
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) c);
  assert_int_equal (stat (path, &ns), 0);
  snprintf (text, sizeof text, "{\"child-pid\": %d, \"mnt-namespace\": %llu}", (int) c,
            (unsigned long long) ns.st_ino);
  snprintf (path, sizeof path, "%s/bwrapinfo.json", inst);
  write_owned (path, text, uid);
  snprintf (text, sizeof text,
            "[Application]\nname=org.stacktrace.Planted\n\n[Instance]\nruntime-path=%s/x86_64/"
            "master/0123abcd/files\n", rt);
  snprintf (path, sizeof path, "%s/info", inst);
  write_owned (path, text, uid);

  const char *old_xdg = getenv ("XDG_RUNTIME_DIR");
  char *saved = old_xdg ? strdup (old_xdg) : NULL;
  setenv ("XDG_RUNTIME_DIR", xdg, 1);
  struct st_containers *cs = NULL;
  const struct st_container *ca = NULL, *cb = NULL, *alone = NULL;
  if (ok == 'y' && st_containers_new (ST_CONTAINER_FLATPAK, &cs) == 0)
    {
      /* B seen alone, as each process was detected before the cache.  */
      alone = st_containers_of (cs, b);
      st_containers_forget (cs, b);
      ca = st_containers_of (cs, a);
      cb = st_containers_of (cs, b);
    }
  if (saved)
    setenv ("XDG_RUNTIME_DIR", saved, 1);
  else
    unsetenv ("XDG_RUNTIME_DIR");
  free (saved);

  close (go[1]);
  if (b > 0)
    waitpid (b, NULL, 0);
  waitpid (c, NULL, 0);
  const char *const planted[] = { "bwrapinfo.json", "info" };
  for (size_t i = 0; i < 2; i++)
    {
      snprintf (path, sizeof path, "%s/%s", inst, planted[i]);
      unlink (path);
    }
  rmdir (inst);
  snprintf (path, sizeof path, "%s/.flatpak", xdg);
  rmdir (path);
  rmdir (xdg);
  for (size_t i = 5; i-- > 0;)
    {
      snprintf (path, sizeof path, "%s%s", rt, sub[i]);
      rmdir (path);
    }
  if (made_runtime)
    rmdir ("/var/lib/flatpak/runtime");
  if (ok != 'y')
    skip ();
  /* A descends from the instance's child: the instance describes it.  */
  assert_non_null (ca);
  assert_string_equal (ca->name, "org.stacktrace.Planted");
  /* B does not: no instance holds it, no /.flatpak-info, no cgroup.  */
  assert_null (alone);
  assert_null (cb);
  st_containers_free (cs);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_podman_ids_from_real_files),
    cmocka_unit_test (test_flatpak_from_real_files),
    cmocka_unit_test (test_podman_storage_layers),
    cmocka_unit_test (test_this_process_is_on_the_host),
    cmocka_unit_test (test_one_detection_per_namespace),
    cmocka_unit_test (test_other_namespace_none_is_not_kept),
    cmocka_unit_test (test_instance_answer_needs_descent),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
