#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import MediaFiles

/// The real clock, which only the service reads: it dates stills for EXIF and the records.
public enum WallClock {
  /// The local date and time at which CLOCK_MONOTONIC read `instant` (a frame's timestamp), with the offset
  /// from UTC in force then. Both clocks are read together now; the frame's age is carried back.
  public static func dateTime(atMonotonic instant: Instant) -> ExifDateTime {
    dateTime(unixNanoseconds: unixNanoseconds(atMonotonic: instant))
  }

  /// The real-time clock's reading when CLOCK_MONOTONIC read `instant`, in nanoseconds since 1970 UTC.
  public static func unixNanoseconds(atMonotonic instant: Instant) -> Int64 {
    var realtime = timespec()
    var monotonic = timespec()
    clock_gettime(CLOCK_REALTIME, &realtime)
    clock_gettime(CLOCK_MONOTONIC, &monotonic)
    let nowMonotonic = Int64(monotonic.tv_sec) * 1_000_000_000 + Int64(monotonic.tv_nsec)
    let nowReal = Int64(realtime.tv_sec) * 1_000_000_000 + Int64(realtime.tv_nsec)
    return nowReal - (nowMonotonic - instant.nanoseconds)
  }

  /// Seconds since 1970 UTC, now.
  public static func unixSeconds() -> Int64 {
    var realtime = timespec()
    clock_gettime(CLOCK_REALTIME, &realtime)
    return Int64(realtime.tv_sec)
  }

  /// The local date and time of a moment given on the real-time clock.
  public static func dateTime(unixNanoseconds then: Int64) -> ExifDateTime {
    var seconds = time_t(then / 1_000_000_000)
    var local = tm()
    localtime_r(&seconds, &local)
    return ExifDateTime(
      year: Int(local.tm_year) + 1900, month: Int(local.tm_mon) + 1, day: Int(local.tm_mday), hour: Int(local.tm_hour),
      minute: Int(local.tm_min), second: Int(local.tm_sec), millisecond: Int((then % 1_000_000_000) / 1_000_000),
      utcOffsetMinutes: Int(local.tm_gmtoff) / 60)
  }

  /// 32 hexadecimal digits from the system's random source: ImageUniqueID.
  public static func uniqueID() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
      let text = String(generator.next() as UInt64, radix: 16, uppercase: false)
      return String(repeating: "0", count: 16 - text.count) + text
    }.joined()
  }
}
