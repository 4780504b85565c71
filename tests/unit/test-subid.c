/* basic/subid.c: a subordinate uid folded back to the user whose range
 * holds it, as /etc/subuid and /etc/passwd say (given here as texts).  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "basic/subid.h"

static const char passwd[] =
  "root:x:0:0:root:/root:/bin/bash\n"
  "alice:x:1000:1000::/home/alice:/bin/sh\n"
  "bob:x:1001:1001::/home/bob:/bin/sh\n"
  "broken:x:notanumber:1:::\n";

static const char subuid[] =
  "alice:100000:65536\n"
  "# a comment is a line without a range\n"
  "#bob:100000:65536\n"
  "everyone:0:2\n"
  "1001:165536:65536\n"
  "carol:231072:65536\n"
  "broken:296608:65536\n"
  "bad:x:1\n"
  "huge:4294967290:100\n"
  "last:400000:10";   /* no newline at the end */

static enum st_subid_kind
owner_of (uid_t uid, uid_t *owner)
{
  return st_subid_owner_in (subuid, passwd, uid, owner);
}

static void
test_ranges_fold_to_their_user (void **state)
{
  (void) state;
  uid_t owner;
  assert_int_equal (owner_of (100000, &owner), ST_SUBID_USER);
  assert_int_equal (owner, 1000);
  assert_int_equal (owner_of (165535, &owner), ST_SUBID_USER);
  assert_int_equal (owner, 1000);
  /* A range named by uid.  */
  assert_int_equal (owner_of (165536, &owner), ST_SUBID_USER);
  assert_int_equal (owner, 1001);
  assert_int_equal (owner_of (231071, &owner), ST_SUBID_USER);
  assert_int_equal (owner, 1001);
}

static void
test_unknown_users_are_their_range (void **state)
{
  (void) state;
  uid_t owner;
  /* carol is not in /etc/passwd; broken's uid is no number.  */
  assert_int_equal (owner_of (231072 + 5, &owner), ST_SUBID_RANGE);
  assert_int_equal (owner, 231072);
  assert_int_equal (owner_of (296608 + 65535, &owner), ST_SUBID_RANGE);
  assert_int_equal (owner, 296608);
  assert_int_equal (owner_of (400009, &owner), ST_SUBID_RANGE);
  assert_int_equal (owner, 400000);
}

static void
test_outside_every_range (void **state)
{
  (void) state;
  uid_t owner;
  assert_int_equal (owner_of (1000, &owner), ST_SUBID_NONE);
  assert_int_equal (owner, 1000);
  assert_int_equal (owner_of (99999, &owner), ST_SUBID_NONE);
  assert_int_equal (owner_of (400010, &owner), ST_SUBID_NONE);
  assert_int_equal (owner, 400010);
  /* A range past the uids does not wrap around.  */
  assert_int_equal (owner_of (3, &owner), ST_SUBID_NONE);
  assert_int_equal (st_subid_owner_in ("", passwd, 100000, &owner), ST_SUBID_NONE);
  /* A range over a user's own uid (everyone:0:2 holds 0) leaves it
     theirs; a uid no user has is the range's.  */
  assert_int_equal (owner_of (0, &owner), ST_SUBID_NONE);
  assert_int_equal (owner, 0);
  assert_int_equal (owner_of (1, &owner), ST_SUBID_RANGE);
  assert_int_equal (owner, 0);
  assert_int_equal (st_subid_owner_in ("alice:100000:65536\n", "", 100000, &owner),
                    ST_SUBID_RANGE);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_ranges_fold_to_their_user),
    cmocka_unit_test (test_unknown_users_are_their_range),
    cmocka_unit_test (test_outside_every_range),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
