/// A camera's frame rate as its buffers' timestamps show it, not as its driver advertises it: the
/// `movie-camera` probe streams for a moment and judges what came.
public struct MeasuredRate: Sendable, Equatable {
  /// Frames per second between the first frame and the last.
  public let framesPerSecond: Double
  /// The time the frames span.
  public let span: Duration
  public let frames: Int

  /// Short of this share of the wanted rate, a camera is not a movie camera at that rate: it would drop or
  /// stretch a tenth of every second.
  public static let tolerance = 0.9

  /// nil when fewer than three frames came: too few to tell a rate from a start-up stutter. The first frame
  /// is left out (drivers often hold it while the stream starts), and gaps count: a frame the driver dropped is
  /// a frame the movie does not get.
  public init?(timestamps: [Instant]) {
    let steady = timestamps.dropFirst()
    guard steady.count >= 2, let first = steady.first, let last = steady.last, last > first else { return nil }
    span = last - first
    frames = steady.count
    framesPerSecond = Double(steady.count - 1) / (Double(span.nanosecondsClamped) / 1e9)
  }

  public func suffices(for wanted: Int) -> Bool { framesPerSecond >= Double(wanted) * Self.tolerance }
}
