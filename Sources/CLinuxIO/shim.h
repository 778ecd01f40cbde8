#ifndef KIOSKCAM_CLINUXIO_SHIM_H
#define KIOSKCAM_CLINUXIO_SHIM_H
// Swift's Glibc module leaves out Linux's own descriptor APIs; this pulls them in for LinuxIO alone.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/inotify.h>

#ifndef KIOSKCAM_CLINUXIO_RENAME
#define KIOSKCAM_CLINUXIO_RENAME
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/fs.h>
// renameat2 is declared by glibc only under _GNU_SOURCE, which Swift's Glibc module is not built with.
static inline int CLinuxIO_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
                                     unsigned int flags) {
  return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
}
static inline unsigned int CLinuxIO_RENAME_NOREPLACE(void) { return RENAME_NOREPLACE; }
// gettid(2) is glibc 2.30+ and _GNU_SOURCE only too.
static inline int CLinuxIO_gettid(void) { return (int)syscall(SYS_gettid); }
// The CPUs this process may run on (sched_getaffinity and CPU_COUNT are _GNU_SOURCE too); 0 if unknown.
static inline int CLinuxIO_allowedCPUs(void) {
  unsigned long long mask[16] = {0};
  long bytes = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
  if (bytes <= 0) return 0;
  int count = 0;
  for (long i = 0; i < bytes / (long)sizeof mask[0]; i++) count += __builtin_popcountll(mask[i]);
  return count;
}
#endif

#ifndef KIOSKCAM_CLINUXIO_THREAD_NAME
#define KIOSKCAM_CLINUXIO_THREAD_NAME
#include <sys/prctl.h>
// prctl is variadic, which Swift does not call: the calling thread's name (16 bytes with its NUL).
static inline int CLinuxIO_setThreadName(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
// No transparent huge pages for this process (inherited by its children): see ProcessMemory.swift.
static inline int CLinuxIO_disableTransparentHugePages(void) { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); }
#endif

#ifndef KIOSKCAM_CLINUXIO_MALLOC
#define KIOSKCAM_CLINUXIO_MALLOC
#include <malloc.h>
static inline int CLinuxIO_mallocArenas(int count) { return mallopt(M_ARENA_MAX, count); }
static inline int CLinuxIO_mallocMmapThreshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
#endif

#endif
