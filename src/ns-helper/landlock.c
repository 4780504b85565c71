#include "config.h"

#include <errno.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns-helper/landlock.h"

/* Older uapi headers lack the later rights; the kernel's numbers are
   stable.  */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* The kernel's struct landlock_ruleset_attr, as of ABI 4 (net).  A kernel
   of an older ABI is given the ABI 1 size.  */
struct ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
};

int
st_landlock_abi (void)
{
  long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0)
    return errno == ENOSYS || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
  return (int) abi;
}

int
st_landlock_forbid_writes (void)
{
  int abi = st_landlock_abi ();
  if (abi < 0)
    return abi;
  struct ruleset_attr attr = {
    .handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR
                         | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR
                         | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG
                         | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO
                         | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM,
  };
  size_t size = sizeof attr.handled_access_fs;
  /* Each right the kernel knows, and no other: it refuses unknown bits.  */
  if (abi >= 2)
    attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 4)
    {
      attr.handled_access_net = (1ULL << 0) | (1ULL << 1);   /* BIND_TCP, CONNECT_TCP */
      size = sizeof attr;
    }
  if (abi >= 5)
    attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  int fd = (int) syscall (SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0)
    return -errno;
  /* No rule: everything handled is refused, everywhere.  */
  int r = (int) syscall (SYS_landlock_restrict_self, fd, 0);
  int e = errno;
  close (fd);
  return r == 0 ? abi : -e;
}
