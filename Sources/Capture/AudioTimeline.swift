/// Lines a microphone's frames up with the pictures, on the clock they share (CLOCK_MONOTONIC): pure, frames
/// and their capture times in, the frames to encode out.
///
/// The sound's time in the file is its sample count (each AAC frame lasts 1024 samples), so nothing a clock
/// does can make it drift on its own (rpicam-apps #882). The microphone's own clock may still run a little
/// faster or slower than the camera's, and a period may be lost (an overrun): each period's timestamp is
/// compared with where the count has got to, and past `tolerance` the count is put right, with silence for
/// frames that never came or by dropping frames the count is already past. Within it, the count rules, so
/// a jittery timestamp never moves the sound (picamera2 #902: time only goes forward here).
struct AudioTimeline: Sendable {
  let rate: Int
  let channels: Int
  /// How far the count may be from the timestamps before it is put right: a frame interval of the
  /// camera's would be visible, half of one is not.
  static let tolerance: Int64 = 20_000_000
  /// The most sound kept while the pictures' start is not known yet.
  static let earlyLimit: Int64 = 5_000_000_000

  /// CLOCK_MONOTONIC nanoseconds of the first frame to encode; nil until the first picture is written.
  private(set) var origin: Int64?
  /// Frames handed on so far, silence included: the count that is the sound's time.
  private(set) var handed: Int64 = 0
  /// Frames of silence put in, and frames dropped, to follow the timestamps.
  private(set) var silenceFrames: Int64 = 0
  private(set) var droppedFrames: Int64 = 0
  /// Periods that came before the origin was known, oldest first.
  private var early: [(samples: [Int16], time: Int64)] = []

  init(rate: Int, channels: Int) {
    self.rate = rate
    self.channels = channels
  }

  /// The origin, once: frames from before it are dropped, a gap after it is silence.
  mutating func start(at origin: Int64) -> [Int16] {
    guard self.origin == nil else { return [] }
    self.origin = origin
    let waiting = early
    early = []
    return waiting.flatMap { take($0.samples, time: $0.time) }
  }

  /// One period (interleaved, its first frame captured at `time`); what to encode next.
  mutating func take(_ samples: [Int16], time: Int64) -> [Int16] {
    guard let origin else {
      early.append((samples, time))
      while let first = early.first, time - first.time > Self.earlyLimit { early.removeFirst() }
      return []
    }
    let frames = samples.count / channels
    let expected = origin + nanoseconds(handed)
    let offset = time - expected
    // At the very start the first frame is placed exactly; after it, only a drift past the tolerance moves it.
    let allowed = handed == 0 ? nanoseconds(1) : Self.tolerance
    var out: [Int16] = []
    var from = 0
    if offset > allowed {
      let silence = Int(framesIn(offset))
      out = [Int16](repeating: 0, count: silence * channels)
      silenceFrames += Int64(silence)
    } else if offset < -allowed {
      from = min(frames, Int(framesIn(-offset)))
      droppedFrames += Int64(from)
    }
    out += samples[(from * channels)..<(frames * channels)]
    handed += Int64(out.count / channels)
    return out
  }

  private func nanoseconds(_ frames: Int64) -> Int64 {
    frames / Int64(rate) * 1_000_000_000 + frames % Int64(rate) * 1_000_000_000 / Int64(rate)
  }

  private func framesIn(_ nanoseconds: Int64) -> Int64 {
    (nanoseconds * Int64(rate) + 500_000_000) / 1_000_000_000
  }
}
