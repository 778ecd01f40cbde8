/// Pixel formats the product decodes, named by their V4L2 fourcc.
public enum PixelFormat: String, Sendable, CaseIterable {
  case yuyv  // V4L2_PIX_FMT_YUYV: packed 4:2:2, Y0 U Y1 V
  case nv12  // V4L2_PIX_FMT_NV12: Y plane then interleaved CbCr at half size
  case mjpeg  // V4L2_PIX_FMT_MJPEG: one JPEG per frame

  /// The four-character code as the kernel spells it.
  public var fourcc: String {
    switch self {
    case .yuyv: "YUYV"
    case .nv12: "NV12"
    case .mjpeg: "MJPG"
    }
  }
}

/// A width and height in pixels, written `WIDTHxHEIGHT` in the configuration.
public struct Size: Hashable, Sendable, CustomStringConvertible {
  public var width: Int
  public var height: Int
  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }
  public var description: String { "\(width)x\(height)" }

  /// Parses `640x360`; nil for anything else.
  public init?(parsing text: some StringProtocol) {
    let parts = text.split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
      (1...16384).contains(width), (1...16384).contains(height)
    else { return nil }
    self.init(width: width, height: height)
  }
}

/// What the core needs to know of a captured frame: which one, and when the sensor took it.
public struct FrameInfo: Hashable, Sendable {
  /// The driver's sequence number (`v4l2_buffer.sequence`).
  public var sequence: UInt32
  /// The driver's buffer timestamp (CLOCK_MONOTONIC).
  public var timestamp: Instant
  public init(sequence: UInt32, timestamp: Instant) {
    self.sequence = sequence
    self.timestamp = timestamp
  }
}
