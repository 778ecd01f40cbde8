/// What a movie is recorded as (`[movie] codec`).
public enum MovieCodecChoice: String, Sendable, CaseIterable {
  /// H.264 where the `h264-encoder` capability passes, Motion-JPEG where it does not.
  case auto
  /// H.264 in MP4: what browsers and phones play. Without an encoder, movie mode is off.
  case h264
  /// Motion-JPEG in QuickTime: the camera's own JPEG frames kept as they are, no encoder needed.
  case mjpeg

  /// The codec a recording uses, given whether an H.264 encoder was found; nil when none can be used.
  public func resolved(encoderAvailable: Bool) -> MovieCodec? {
    switch self {
    case .auto: encoderAvailable ? .h264 : .mjpeg
    case .h264: encoderAvailable ? .h264 : nil
    case .mjpeg: .mjpeg
    }
  }
}

public enum MovieCodec: String, Sendable {
  case h264, mjpeg

  /// The file's extension, on the same DCF counter as stills.
  public var fileExtension: String { self == .h264 ? "MP4" : "MOV" }
}

extension MovieQuality {
  /// Bits per pixel of each frame H.264 is given at this preset: at 30 fps, 1920x1080 is 7.5 Mbit/s, 1280x720
  /// 3.3 and 640x360 0.83 at `high`.
  public var h264BitsPerPixel: Double {
    switch self {
    case .high: 0.12
    case .medium: 0.09
    case .low: 0.07
    }
  }

  /// The H.264 bit rate for frames of `width` x `height` at `frameRate`.
  public func h264BitRate(width: Int, height: Int, frameRate: Int) -> Int {
    Int((Double(width * height * max(1, frameRate)) * h264BitsPerPixel).rounded())
  }
}
