/// How a movie is encoded: the picture, its nominal rate, and what the preset asks.
public struct H264Settings: Sendable, Equatable {
  public var width: Int
  public var height: Int
  public var frameRate: Int
  public var bitRate: Int
  /// Frames between keyframes at most, two seconds' worth: a backstop, since the recorder asks for a keyframe
  /// each second of the frames' own time (a count of frames stretches when frames are dropped).
  public var keyInterval: Int
  /// Encoder threads: the cores the loop does not need.
  public var threads: Int
  /// x264's speed preset.
  public var preset: H264Preset

  /// Of `threads` (LinuxIO's `CPUUse.threads()`), those the loop does not need: all but one, and one on a
  /// single core.
  public static func threadsBesideTheLoop(threads: Int) -> Int { max(1, threads - 1) }

  public init(width: Int, height: Int, frameRate: Int, bitRate: Int, threads: Int, preset: H264Preset = .superfast) {
    self.width = width
    self.height = height
    self.frameRate = max(1, frameRate)
    self.bitRate = bitRate
    keyInterval = max(1, 2 * frameRate)
    self.threads = max(1, threads)
    self.preset = preset
  }
}

/// x264's speed presets that keep High or Main profile, slowest (best for the bits) first. `ultrafast` alone
/// would drop CABAC and with it Main profile ("Constrained Baseline"); CABAC is put back.
public enum H264Preset: String, Sendable, CaseIterable {
  case veryfast, superfast
  case ultrafast = "ultrafast+cabac"

  var x264Preset: String { self == .ultrafast ? "ultrafast" : rawValue }
  var x264Parameters: String? { self == .ultrafast ? "cabac=1" : nil }
}

/// One compressed picture as the encoder hands it out: Annex B (start codes), with the capture time of the
/// frame it came from.
public struct H264Packet: Sendable {
  public let bytes: [UInt8]
  public let timestamp: Int64
  public let keyframe: Bool

  public init(bytes: [UInt8], timestamp: Int64, keyframe: Bool) {
    self.bytes = bytes
    self.timestamp = timestamp
    self.keyframe = keyframe
  }
}
