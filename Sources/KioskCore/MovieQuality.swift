/// The movie presets (the image picker's `videoQuality`): how large the recorded frames are and how hard they
/// are compressed. Frames larger than the preset's bound are halved until they fit, so a preset never
/// upscales and never changes the picture's shape; a camera's own Motion-JPEG frames are kept as they are.
public enum MovieQuality: String, Sendable, CaseIterable {
  /// The camera's frames at their own size.
  case high
  /// At most 1280x720: half the bytes of 1080p or more, for long recordings.
  case medium
  /// At most 480x360: small files to share.
  case low

  public var jpegQuality: Int {
    switch self {
    case .high: 90
    case .medium: 80
    case .low: 65
    }
  }

  /// The largest frame recorded; nil = no bound.
  public var bound: Size? {
    switch self {
    case .high: nil
    case .medium: Size(width: 1280, height: 720)
    case .low: Size(width: 480, height: 360)
    }
  }

  /// How many times a `width` x `height` frame is halved to fit the bound; never so often that it vanishes.
  public func halvings(width: Int, height: Int) -> Int {
    guard let bound else { return 0 }
    var (w, h, count) = (width, height, 0)
    while w > bound.width || h > bound.height, w >= 32, h >= 32 {
      (w, h, count) = ((w + 1) / 2, (h + 1) / 2, count + 1)
    }
    return count
  }
}
