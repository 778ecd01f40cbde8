import Imaging
import JPEGCodec
import LinuxIO
import Scaling

/// What one worker draws with: its own MJPEG decoder (planes reused frame after frame) and its own libyuv
/// scalers (their scratch too). Not thread-safe: one per worker.
final class PreviewRenderer {
  private let choice: FrameDecoderChoice
  private var decoder: (any FrameDecoder)?
  /// A few geometries at most are in use at once (the live frame, the decoded frame, a photo); kept across frames.
  private var scalers: [PreviewFit: LibYUVPreview] = [:]

  init(decoder choice: FrameDecoderChoice = .turboJPEG) { self.choice = choice }

  /// What is ready to be drawn: for MJPEG, the decoded planes (valid until this renderer decodes again).
  enum Prepared {
    case packed(PreviewJob, LibYUVPreview)
    case planes(YCbCrPlaneView, PreviewJob, LibYUVPreview)
    /// Nothing to scale: the overlay covers the screen.
    case overlayOnly(PreviewJob)
  }

  /// The costly part, done before a display buffer is taken: decoding.
  func prepare(_ job: PreviewJob) throws -> Prepared {
    if case .blank = job.picture { return .overlayOnly(job) }
    guard case .mjpeg(let bytes, let zoom) = job.picture else { return .packed(job, scaler(for: job.fit)) }
    let fit = job.fit
    let (shownWidth, shownHeight) = fit.orientation.turned(fit.target.width, fit.target.height)
    let (coverWidth, coverHeight) = zoom.decodeCover(shownWidth: shownWidth, shownHeight: shownHeight)
    let decoder: any FrameDecoder
    if let kept = self.decoder {
      decoder = kept
    } else {
      decoder = try Self.open(choice)
      self.decoder = decoder
    }
    let picture = try bytes.withUnsafeBytes { try decoder.decode($0, covering: coverWidth, coverHeight) }
    let decodedFit = PreviewFit(
      sourceWidth: picture.width, sourceHeight: picture.height,
      crop: zoom.pixelCrop(width: picture.width, height: picture.height), target: fit.target,
      orientation: fit.orientation)
    return .planes(picture, job, scaler(for: decodedFit))
  }

  /// Letterbox bars, the picture, then the overlay on top.
  func draw(_ prepared: Prepared, into target: DrawTarget) {
    switch prepared {
    case .overlayOnly(let job):
      job.overlay(target)
    case .planes(let picture, let job, let scaler):
      scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
      scaler.drawPlanes(picture, into: target.pixels, destinationStride: target.stride)
      job.overlay(target)
    case .packed(let job, let scaler):
      scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
      switch job.picture {
      case .yuyv(let bytes, let stride):
        bytes.withUnsafeBytes { scaler.drawYUYV($0, stride: stride, into: target.pixels, destinationStride: target.stride) }
      case .nv12(let bytes, let stride):
        bytes.withUnsafeBytes { scaler.drawNV12($0, stride: stride, into: target.pixels, destinationStride: target.stride) }
      case .photo(let photo):
        photo.pixels.withUnsafeBytes {
          scaler.drawXRGB($0, stride: photo.stride, into: target.pixels, destinationStride: target.stride)
        }
      case .mjpeg, .blank:
        preconditionFailure("MJPEG is drawn from its planes, a blank picture by its overlay alone")
      }
      job.overlay(target)
    }
  }

  /// The chosen decoder; a V4L2 one that does not open (the node gone, no context free) leaves this worker
  /// on TurboJPEG, said once: the preview goes on either way.
  private static func open(_ choice: FrameDecoderChoice) throws -> any FrameDecoder {
    do {
      return try choice.make()
    } catch where choice != .turboJPEG {
      log("preview decoder \(choice) did not open, TurboJPEG instead: \(error)")
      return try FrameDecoderChoice.turboJPEG.make()
    }
  }

  private func scaler(for fit: PreviewFit) -> LibYUVPreview {
    if let kept = scalers[fit] { return kept }
    if scalers.count >= 4 { scalers.removeAll() }
    let made = LibYUVPreview(
      sourceWidth: fit.sourceWidth, sourceHeight: fit.sourceHeight, crop: fit.crop, target: fit.target,
      orientation: fit.orientation)
    scalers[fit] = made
    return made
  }
}
