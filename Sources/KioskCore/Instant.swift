/// A point on CLOCK_MONOTONIC, the clock of V4L2 buffer timestamps and GPIO event timestamps.
///
/// The core has no clock of its own: every instant arrives with an event.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
  public var nanoseconds: Int64
  public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }
  public init(seconds: Int64, nanoseconds: Int64) { self.nanoseconds = seconds * 1_000_000_000 + nanoseconds }

  public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
  public static func + (lhs: Instant, rhs: Duration) -> Instant {
    Instant(nanoseconds: lhs.nanoseconds + rhs.nanosecondsClamped)
  }
  public static func - (lhs: Instant, rhs: Instant) -> Duration { .nanoseconds(lhs.nanoseconds - rhs.nanoseconds) }

  public var description: String {
    let micros = (abs(nanoseconds) % 1_000_000_000) / 1000
    let digits = String(micros)
    return "\(nanoseconds / 1_000_000_000).\(String(repeating: "0", count: 6 - digits.count))\(digits)"
  }
}

extension Duration {
  /// The duration in whole nanoseconds, saturating rather than trapping at the ends of Int64.
  public var nanosecondsClamped: Int64 {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return seconds < 0 ? .min : .max }
    return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
  }
}
