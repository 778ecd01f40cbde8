/// What the appliance can do, as `[capabilities] required` and `optional` name it.
///
/// The order of the cases is the order of reports and log lines, so that they read the same every time.
public enum Capability: String, Sendable, CaseIterable, Comparable, CustomStringConvertible {
  /// A V4L2 capture device that streams a format we decode at the still size.
  case stillCamera = "still-camera"
  /// A camera that streams at the movie size and rate.
  case movieCamera = "movie-camera"
  /// A connected connector with a usable mode: the live preview and the messages.
  case display
  case shutterButton = "shutter-button"
  case modeButton = "mode-button"
  /// A writable roll folder on the expected file system with more free space than the reserve.
  case cameraRoll = "camera-roll"
  /// The `[outputs] flash` lamp's line, requested as an output. Without it a still is taken at the press.
  case flash
  /// The camera's picture can be zoomed: its format is one the service crops for preview, stills and movies.
  case zoom
  /// An H.264 encoder that opens at the movie size and rate: movies as MP4 that browsers and phones play.
  case h264Encoder = "h264-encoder"
  /// An ALSA capture device that opens at a rate and format the movie's AAC encoder takes: sound in H.264 movies.
  case microphone

  public var description: String { rawValue }

  public static func < (lhs: Capability, rhs: Capability) -> Bool {
    allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
  }

  /// What people miss when it is off, in the overlay's plain words.
  public var feature: String {
    switch self {
    case .stillCamera: "photos"
    case .movieCamera: "movies"
    case .display: "display"
    case .shutterButton: "shutter button"
    case .modeButton: "mode button"
    case .cameraRoll: "saving"
    case .flash: "flash"
    case .zoom: "zoom"
    case .h264Encoder: "H.264"
    case .microphone: "sound"
    }
  }

  /// The names for messages that list them all.
  public static var known: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// What a probe found for one capability: the verdict, and what was checked, in words for the operator.
public struct ProbeResult: Sendable, Equatable, CustomStringConvertible {
  public var capability: Capability
  public var passed: Bool
  /// What was probed and why it passed or failed: `/dev/video0 (vivid): capture, streaming, YUYV 640x360`.
  public var evidence: String

  public init(_ capability: Capability, passed: Bool, evidence: String) {
    self.capability = capability
    self.passed = passed
    self.evidence = evidence
  }

  public static func pass(_ capability: Capability, _ evidence: String) -> ProbeResult {
    ProbeResult(capability, passed: true, evidence: evidence)
  }
  public static func fail(_ capability: Capability, _ evidence: String) -> ProbeResult {
    ProbeResult(capability, passed: false, evidence: evidence)
  }

  public var description: String { "\(capability): \(passed ? "ok" : "missing"): \(evidence)" }
}
