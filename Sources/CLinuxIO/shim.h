#ifndef KIOSKCAM_CLINUXIO_SHIM_H
#define KIOSKCAM_CLINUXIO_SHIM_H
// Swift's Glibc module leaves out Linux's own descriptor APIs; this pulls them in for LinuxIO alone.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/statvfs.h>
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
#endif

#endif
