/// The last `capacity` samples of a duration, for its median and 99th percentile: recent enough to show what
/// the preview does now, long enough (about 17 s at 30 fps) that a percentile means something.
public struct LatencyWindow: Sendable {
  private var samples: [Int64] = []
  private var next = 0
  public let capacity: Int

  public init(capacity: Int = 512) { self.capacity = capacity }

  public var count: Int { samples.count }

  public mutating func add(_ nanoseconds: Int64) {
    if samples.count < capacity {
      samples.append(nanoseconds)
    } else {
      samples[next] = nanoseconds
      next = (next + 1) % capacity
    }
  }

  /// Nearest rank: the smallest sample at or above `fraction` of them; nil before any sample.
  public func percentile(_ fraction: Double) -> Int64? {
    guard !samples.isEmpty else { return nil }
    let sorted = samples.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count, max(1, rank)) - 1]
  }
}
