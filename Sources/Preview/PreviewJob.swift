import Imaging
import JPEGCodec
import KioskCore

/// One picture for the screen, with everything a worker needs to draw it without asking the loop: the
/// camera's bytes (the ring's copy, shared, never the driver's buffer) or a decoded picture, how it is fitted
/// to the panel, and the overlay as it stood when the picture was handed over.
public struct PreviewJob: Sendable {
  public enum Picture: Sendable {
    case yuyv([UInt8], stride: Int)
    case nv12([UInt8], stride: Int)
    /// Decoded at the DCT scale that covers the panel times the digital zoom, then cropped by the zoom.
    case mjpeg([UInt8], zoom: Zoom)
    /// A decoded picture: the photo saved, during its check; an item or a movie's frame in review.
    case photo(XRGBImage)
    /// No picture: the overlay draws the whole screen (a message).
    case blank
  }

  public let tag: PreviewTag
  public let picture: Picture
  /// The geometry for the picture as it comes (for MJPEG, the frame's size; its crop applies after decoding).
  public let fit: PreviewFit
  public let overlay: @Sendable (DrawTarget) -> Void

  public init(tag: PreviewTag, picture: Picture, fit: PreviewFit, overlay: @escaping @Sendable (DrawTarget) -> Void) {
    self.tag = tag
    self.picture = picture
    self.fit = fit
    self.overlay = overlay
  }
}

/// Which picture a result is: its place in the order of hand-overs, the screen it was made for, and the
/// camera's timestamp of its frame (for the latency to the flip that shows it).
public struct PreviewTag: Sendable, Equatable {
  /// Increases with every hand-over: a result with a lower order than one already shown is never shown.
  public let order: Int
  /// Bumped by the loop whenever what the preview shows changes (stream, display, zoom, screen).
  public let generation: Int
  /// CLOCK_MONOTONIC nanoseconds; nil for a picture that is not a camera frame (a photo under check).
  public let frameNanoseconds: Int64?

  public init(order: Int, generation: Int, frameNanoseconds: Int64?) {
    self.order = order
    self.generation = generation
    self.frameNanoseconds = frameNanoseconds
  }
}

/// The scaler's geometry: source size, the part of it shown, where on the panel, turned how.
public struct PreviewFit: Hashable, Sendable {
  public let sourceWidth: Int
  public let sourceHeight: Int
  public let crop: PixelRect?
  public let target: PixelRect
  public let orientation: PreviewOrientation

  public init(sourceWidth: Int, sourceHeight: Int, crop: PixelRect?, target: PixelRect, orientation: PreviewOrientation) {
    self.sourceWidth = sourceWidth
    self.sourceHeight = sourceHeight
    self.crop = crop
    self.target = target
    self.orientation = orientation
  }
}

extension Zoom {
  /// The rectangle of a `width` x `height` picture that the digital zoom keeps; nil when nothing is cut (1.0x,
  /// or a zoom the camera's sensor crop did).
  public func pixelCrop(width: Int, height: Int) -> PixelRect? {
    guard cutsFrames else { return nil }
    let crop = crop(width: width, height: height)
    return PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
  }
}
