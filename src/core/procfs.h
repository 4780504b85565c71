/* Small facts about a live process, read from /proc.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The start time of the process that has PID now (field 22 of
   /proc/PID/stat, clock ticks since boot): it tells a reused pid from the
   process that had it.  False when there is no such process.  */
bool st_proc_start_time (pid_t pid, uint64_t *ticks);
