import KioskCore
import MediaFiles

/// Why a frame the camera delivered cannot become a still or a movie frame.
public enum FrameProblem: Sendable, CustomStringConvertible {
  case flaggedError, short, truncated
  public var description: String {
    switch self {
    case .flaggedError: "the driver flagged it as damaged"
    case .short: "fewer bytes than its size needs"
    case .truncated: "MJPEG without SOI or EOI"
    }
  }
}

public enum FrameCheck {
  /// Why a frame cannot become a still, or nil. Only the frame's ends are looked at for MJPEG: the writer
  /// parses the rest, and a frame that fails there is a failed save, not a silent one.
  public static func problem(
    with bytes: UnsafeRawBufferPointer, flagged: Bool, format: PixelFormat, bytesPerLine: Int, height: Int
  ) -> FrameProblem? {
    if flagged { return .flaggedError }
    switch format {
    case .yuyv:
      return bytes.count < bytesPerLine * height ? .short : nil
    case .nv12:
      return bytes.count < bytesPerLine * (height + (height + 1) / 2) ? .short : nil
    case .mjpeg:
      let end = JPEGStructure.endBeforePadding(bytes)
      let complete = end >= 4 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9
      return complete ? nil : .truncated
    }
  }
}

/// Frames the camera delivered that could not be saved, by why; counted, logged the first time, summed at stop.
public struct FrameCounts: Sendable {
  public var delivered = 0
  /// V4L2_BUF_FLAG_ERROR set by the driver.
  public var flaggedError = 0
  /// Fewer bytes than the format's geometry needs.
  public var short = 0
  /// MJPEG without SOI at the start or EOI at the end.
  public var truncated = 0
  /// Frames the driver's sequence numbers say were never delivered.
  public var missing = 0
  public var lastSequence: UInt32?

  public init() {}

  public var bad: Int { flaggedError + short + truncated }

  public mutating func count(_ problem: FrameProblem) {
    switch problem {
    case .flaggedError: flaggedError += 1
    case .short: short += 1
    case .truncated: truncated += 1
    }
  }

  /// Counts the frames a jump in the driver's sequence numbers skipped; the gap, or zero.
  public mutating func arrived(sequence: UInt32) -> Int {
    delivered += 1
    defer { lastSequence = sequence }
    guard let last = lastSequence, sequence > last &+ 1 else { return 0 }
    let gap = Int(sequence - last - 1)
    missing += gap
    return gap
  }

  public var summary: String {
    "frames delivered \(delivered), error-flagged \(flaggedError), short \(short), truncated MJPEG \(truncated), missing by sequence \(missing)"
  }
}
