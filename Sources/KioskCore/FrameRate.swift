/// A camera's frame rate as its buffers' timestamps show it, not as its driver advertises it: the
/// `movie-camera` probe streams for a moment and judges what came.
public struct MeasuredRate: Sendable, Equatable {
  /// Frame periods per second from the second frame to the end of the measurement.
  public let framesPerSecond: Double
  /// From the second frame to the end of the measurement.
  public let span: Duration
  public let frames: Int

  /// Short of this share of the wanted rate, a camera is not a movie camera at that rate: it would drop or
  /// stretch a tenth of every second.
  public static let tolerance = 0.9

  /// `end`: when the measurement stopped, on the frames' clock. The span runs to it, not to the last frame,
  /// so a camera that stalls after a burst measures as slow as it is. nil when fewer than three frames came:
  /// too few to tell a rate from a start-up stutter. The first frame is left out (drivers often hold it
  /// while the stream starts), and gaps count: a frame the driver dropped is a frame the movie does not get.
  public init?(timestamps: [Instant], end: Instant) {
    let steady = timestamps.dropFirst()
    guard steady.count >= 2, let first = steady.first, end > first else { return nil }
    span = end - first
    frames = steady.count
    framesPerSecond = Double(steady.count - 1) / (Double(span.nanosecondsClamped) / 1e9)
  }

  public func suffices(for wanted: Int) -> Bool { framesPerSecond >= Double(wanted) * Self.tolerance }
}

/// A rate as people write it: whole when it is (30), else to two places (29.97).
public func rateText(_ framesPerSecond: Double) -> String {
  let rounded = (framesPerSecond * 100).rounded() / 100
  return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
}
