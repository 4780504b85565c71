/* Fuzz target: the namespace helper's message decoders
 * (src/ns-helper/protocol.c).
 *
 * st_nsh_decode_request parses what any local user may send the privileged
 * helper; st_nsh_decode_reply what the core (src/core/resolve/ns-client.c) takes
 * from whatever listens on the helper's socket.  Each input is one message
 * given to both, with its exact length and no NUL after it, as
 * st_nsh_recv leaves it in the receive buffer.
 *
 * Beyond "no crash", a message either decoder accepts must survive a round
 * trip: encoded again and decoded, it gives the same request or reply.  A
 * difference (a field the encoder drops or the decoder misreads) aborts.
 *
 * Corpus: tests/fuzz/corpus/nsh-protocol/ (requests and replies as
 * tests/ns-helper/ exchanges them, and the malformed shapes of
 * tests/ns-helper/fuzz.py).  */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "basic/why.h"
#include "ns-helper/protocol.h"

static void
check_request (const struct st_nsh_request *req)
{
  char buf[ST_NSH_MAX_MESSAGE + 1];
  struct st_why why;
  int len = st_nsh_encode_request (req, buf, sizeof buf);
  if (len < 0)
    return;   /* a valid request too large for a message: refused on send */
  struct st_nsh_request again;
  int r = st_nsh_decode_request (buf, (size_t) len, &again, &why);
  if (r != 0 || again.id != req->id || again.op != req->op || again.pid != req->pid
      || again.has_start_time != req->has_start_time || again.start_time != req->start_time
      || strcmp (again.path, req->path) != 0 || again.has_range != req->has_range
      || again.start != req->start || again.end != req->end || again.has_ino != req->has_ino
      || again.ino != req->ino || again.build_id_size != req->build_id_size
      || memcmp (again.build_id, req->build_id, req->build_id_size) != 0
      || strcmp (again.debuglink, req->debuglink) != 0 || again.ways != req->ways
      || again.ns_fd != req->ns_fd || strcmp (again.syscall, req->syscall) != 0)
    {
      fprintf (stderr, "request round trip differs (%d: %s): %.*s\n", r, r ? why.text : "",
               len, buf);
      abort ();
    }
}

/* The encoder turns bytes that are not UTF-8 into '?' (new_utf8_string):
   such a path cannot come back the same.  */
static bool
is_ascii (const char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s >= 0x80)
      return false;
  return true;
}

static void
check_reply (const struct st_nsh_reply *reply)
{
  char buf[ST_NSH_MAX_MESSAGE + 1];
  struct st_why why;
  int len = st_nsh_encode_reply (reply, buf, sizeof buf);
  if (len < 0)
    return;
  struct st_nsh_reply again;
  int r = st_nsh_decode_reply (buf, (size_t) len, &again, &why);
  if (r != 0 || again.id != reply->id || again.ok != reply->ok
      || (reply->ok && (again.way != reply->way || (is_ascii (reply->path) && strcmp (again.path, reply->path) != 0)
                        || again.build_id_size != reply->build_id_size
                        || memcmp (again.build_id, reply->build_id, reply->build_id_size) != 0))
      || (!reply->ok && again.error != reply->error))
    {
      fprintf (stderr, "reply round trip differs (%d: %s): %.*s\n", r, r ? why.text : "", len, buf);
      abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  /* The decoders take (buffer, length): no NUL is promised after it.  */
  const char *buf = (const char *) data;
  struct st_why why;

  struct st_nsh_request req;
  int r = st_nsh_decode_request (buf, size, &req, &why);
  if (fuzz_verbose && r != 0)
    fprintf (stderr, "request: %d %s\n", r, why.text);
  if (r == 0)
    check_request (&req);

  struct st_nsh_reply reply;
  r = st_nsh_decode_reply (buf, size, &reply, &why);
  if (fuzz_verbose && r != 0)
    fprintf (stderr, "reply: %d %s\n", r, why.text);
  if (r == 0)
    check_reply (&reply);
  return 0;
}
