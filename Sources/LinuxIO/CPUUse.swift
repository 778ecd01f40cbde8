#if canImport(Glibc)
  import Glibc
#endif
import CLinuxIO

/// The CPU this process uses and the CPU it may use, as the kernel counts them: what a movie's pace weighs
/// against the viewfinder (KioskCore's `RecordingPace`) and what the service sizes its threads by, beside the
/// process's own CPU clock (`processCPUNanoseconds`, ThreadClock.swift). Each call reads a few procfs or
/// cgroupfs files (no disk), so the loop may ask once a second.
public enum CPUUse {
  /// CPU time of the process's live threads whose name starts with `prefix`, from /proc/self/task/*/stat
  /// (to the clock tick). A thread takes its creator's name, so threads a library starts from a named thread
  /// (x264's, from the movie's writer) count with it.
  public static func threadsNanoseconds(named prefix: String) -> Int64 {
    let tick = Int64(max(1, sysconf(Int32(_SC_CLK_TCK))))
    var ticks: Int64 = 0
    for task in DirectoryListing.names(in: "/proc/self/task") {
      guard let stat = smallFile("/proc/self/task/\(task)/stat"), let used = threadTicks(stat: stat, named: prefix) else {
        continue
      }
      ticks += used
    }
    return ticks * (1_000_000_000 / tick)
  }

  /// The cores this process may use: the CPUs its affinity allows, and no more than the cgroup v2 `cpu.max`
  /// quota of its group or of any group above it allows.
  public static func cores() -> Double {
    let affinity = Int(CLinuxIO_allowedCPUs())
    var cores = Double(max(1, affinity > 0 ? affinity : sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    guard let membership = smallFile("/proc/self/cgroup"), var group = unifiedGroup(membership) else { return cores }
    while true {
      let directory = group == "/" ? "/sys/fs/cgroup" : "/sys/fs/cgroup\(group)"
      if let limit = smallFile("\(directory)/cpu.max").flatMap(quota(cpuMax:)) { cores = min(cores, limit) }
      guard group != "/" else { return cores }
      let parent = group.split(separator: "/").dropLast().joined(separator: "/")
      group = "/" + parent
    }
  }

  /// The threads worth running at once on `cores()`: the one answer to "how many cores" wherever the service
  /// sizes its threads (the preview's workers, the movie's encoders, x264's threads), so that under a quota
  /// they are sized for the cores the quota leaves, not for the machine's.
  public static func threads() -> Int { threads(cores: cores()) }

  /// `cores` rounded up, and at least one: half of each of two cores is one thread's worth, 1.08 cores two.
  public static func threads(cores: Double) -> Int { max(1, Int(cores.rounded(.up))) }

  /// `utime + stime` of one line of /proc/PID/task/TID/stat, if the thread's name (field 2, in parentheses,
  /// which may hold spaces and parentheses itself) starts with `prefix`.
  public static func threadTicks(stat: String, named prefix: String) -> Int64? {
    guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
    guard stat[stat.index(after: open)..<close].hasPrefix(prefix) else { return nil }
    // After the name: state (field 3) ... utime (14) and stime (15).
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
    return user + system
  }

  /// Cores a `cpu.max` line allows ("54000 100000" is 0.54); nil for "max", no quota.
  public static func quota(cpuMax: String) -> Double? {
    let words = cpuMax.split(whereSeparator: { $0 == " " || $0 == "\n" })
    guard words.count == 2, let quota = Double(words[0]), let period = Double(words[1]), period > 0 else { return nil }
    return quota / period
  }

  /// The cgroup v2 group in /proc/self/cgroup ("0::/system.slice/kioskcam.service"); nil on a v1-only system.
  public static func unifiedGroup(_ membership: String) -> String? {
    for line in membership.split(separator: "\n") where line.hasPrefix("0::") {
      let group = String(line.dropFirst(3))
      return group.hasPrefix("/") ? group : nil
    }
    return nil
  }

  /// A procfs or cgroupfs file of a line or two, read with one buffer on the stack.
  private static func smallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> String? in
      let count = read(fd, buffer.baseAddress, buffer.count)
      guard count > 0 else { return nil }
      return String(decoding: buffer[0..<count], as: UTF8.self)
    }
  }
}
