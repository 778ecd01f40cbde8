#if canImport(Glibc)
  import Glibc
#endif

/// CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): what the loop itself spends on a frame,
/// whatever else the process's other threads and the machine are doing.
public func threadCPUNanoseconds() -> Int64 { cpuClockNanoseconds(CLOCK_THREAD_CPUTIME_ID) }

/// CPU time all the process's threads have used so far (CLOCK_PROCESS_CPUTIME_ID).
public func processCPUNanoseconds() -> Int64 { cpuClockNanoseconds(CLOCK_PROCESS_CPUTIME_ID) }

private func cpuClockNanoseconds(_ clock: clockid_t) -> Int64 {
  var now = timespec()
  clock_gettime(clock, &now)
  return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
