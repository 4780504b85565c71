/* The jobs the opener sends the resolver, the setns broker and its pooled
 * workers (broker.h): a header, then the paths, each ending in a NUL; one
 * reply with an errno a path and the descriptors of the paths opened.
 * Private to broker.c (the processes) and broker-job.c (the opener).  */
#pragma once

#include <stdint.h>

#include "ns-helper/broker.h"
#include "ns-helper/protocol.h"

#define JOB_MAGIC 0x4e534232u     /* "NSB2" */
#define MAX_JOB (sizeof (struct job_header) + ST_BROKER_MAX_PATHS * ST_NSH_PATH_MAX)

enum job_debug {
  JOB_OPEN,
  JOB_TRY_HERE,             /* test builds: a forbidden call in the process */
  JOB_TRY_WORKER,           /* ... in a worker */
  JOB_SPAWN,                /* a pooled worker for a namespace (pool.h) */
};

struct job_header {
  uint32_t magic;
  uint32_t n_paths;
  uint32_t with_userns;
  uint32_t debug;           /* enum job_debug */
  /* The resolver: the pin (pin.h) whose root the job's descriptor is, or
     with no descriptor the root it kept from the last job that sent one
     with this id (0: none, use the one sent).  */
  uint64_t root_id;
};

struct job_reply {
  uint32_t magic;
  int32_t errs[ST_BROKER_MAX_PATHS];
  uint32_t gone;            /* a pooled worker: this was its last reply */
};

