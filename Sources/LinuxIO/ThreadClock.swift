#if canImport(Glibc)
  import Glibc
#endif

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): what the loop itself spends on a frame,
/// whatever else the process's other threads and the machine are doing.
public func threadCPUNanoseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
  return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
