import Camera
import Capture
import Display
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Scaling

/// What the screen shows: the live picture from the camera's ring under the overlay, full-screen messages,
/// and the photo just taken (its check: use photo or retake); review mode's screens are the roll player's, to which it hands them.
final class PreviewSink: ScreenDriver {
  private let config: Config
  private let display: DisplaySession
  private let source: any FrameSource
  private let browsing: RollPlayer
  /// What the overlay says, read when a frame is drawn.
  private let overlayContent: () -> OverlayContent
  private var screen = Screen.live(.still)
  /// The preview's scaler for the camera's format, the display, its turn and mirror, and the zoom's crop.
  private var scaler: LibYUVPreview?
  /// MJPEG frames decode to a size that only changes with the camera's format: the scaler is kept for it.
  private var decodedScaler: LibYUVPreview?
  /// The MJPEG preview's decoder, with its planes reused frame after frame (made at the first MJPEG frame).
  private var planeDecoder: JPEGPlaneDecoder?
  /// The last still as decoded from its file, with the scaler that fits it: shown while its check lasts.
  private var checkedPhoto: (name: String, picture: XRGBImage, scaler: LibYUVPreview)?
  /// A message that found a flip pending: it is drawn when that flip completes, never dropped like a preview frame.
  private var messageWaiting = false
  /// MJPEG frames the preview could not decode (saved stills are judged on their own).
  private(set) var decodeFailures = 0

  init(
    config: Config, display: DisplaySession, source: any FrameSource, browsing: RollPlayer,
    overlayContent: @escaping () -> OverlayContent
  ) {
    self.config = config
    self.display = display
    self.source = source
    self.browsing = browsing
    self.overlayContent = overlayContent
  }

  var framesShown: Int { display.flipsShown }
  var expectsFrames: Bool { scaler != nil && showsPreview }

  /// Screens that are the live picture (their words and digits arrive with the overlay).
  private var showsPreview: Bool {
    switch screen {
    case .live, .countdown, .recording, .checkingPhoto: true
    case .browsing, .message: false
    }
  }

  func show(_ screen: Screen) {
    self.screen = screen
    guard case .browsing(let view) = screen else {
      browsing.leave()
      guard display.card != nil else { return }
      if showsPreview { messageWaiting = false } else { drawMessage() }
      return
    }
    browsing.browse(view)
  }

  func streamChanged() { fit() }

  func displayChanged() {
    guard display.card != nil else {
      scaler = nil
      decodedScaler = nil
      checkedPhoto = nil
      return
    }
    fit()
    show(screen)
  }

  func flipDone() {
    guard messageWaiting, !display.flipPending else { return }
    messageWaiting = false
    if !showsPreview { drawMessage() }
  }

  private func fit() {
    decodedScaler = nil
    guard let card = display.card, let format = source.streamFormat else { return }
    let orientation = PreviewOrientation(rotation: config.display.rotation, mirror: config.display.mirror)
    let crop = source.zoom.crop(width: format.width, height: format.height)
    // A quarter turn fits the picture's height across the panel.
    let (fitWidth, fitHeight) = orientation.turned(crop.width, crop.height)
    // MJPEG frames are decoded at a DCT scale first: their crop is applied to the decoded picture (below).
    let cropped = format.format == .mjpeg ? nil : PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
    scaler = LibYUVPreview(
      sourceWidth: format.width, sourceHeight: format.height, crop: cropped,
      target: .aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: card.width, card.height),
      orientation: orientation)
  }

  /// The photo as saved, for its check: fitted like the preview, upright by its Exif orientation.
  func keepPhotoCheck(name: String, picture: XRGBImage) {
    guard let scaler else { return }
    // The display's turn applies (it is how the panel is mounted), after the turn that stands the photo
    // upright (its Exif orientation, from the camera's mounting); the mirror does not: the file is not mirrored.
    let upright = (ExifOrientation(mountingRotation: config.camera.rotation) ?? .normal).uprightRotation
    let orientation = PreviewOrientation(rotation: (scaler.orientation.rotation + upright) % 360, mirror: false)
    checkedPhoto = (
      name, picture,
      LibYUVPreview(sourceWidth: picture.width, sourceHeight: picture.height, target: scaler.target, orientation: orientation)
    )
  }

  /// Where a picture must cover on the panel (as the source is oriented): what a photo check decodes to.
  var photoCover: (width: Int, height: Int)? {
    scaler.map { $0.orientation.turned($0.target.width, $0.target.height) }
  }

  /// Shows the freshest frame; while the last flip is still pending this frame is dropped from the preview only.
  func showFrame(_ frame: FrameInfo) {
    guard let scaler, let format = source.streamFormat, showsPreview, let bytes = source.bytes(of: frame) else { return }
    if case .checkingPhoto(let name) = screen, let checkedPhoto, checkedPhoto.name == name {
      // The photo as saved, not the live picture: people check what they got.
      return present(checkedPhoto.picture, with: checkedPhoto.scaler)
    }
    if format.format == .mjpeg { return showMJPEG(bytes, frame, scaler) }
    display.present { target in
      scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
      bytes.withUnsafeBytes { source in
        if format.format == .nv12 {
          scaler.drawNV12(source, stride: format.bytesPerLine, into: target.pixels, destinationStride: target.stride)
        } else {
          scaler.drawYUYV(source, stride: format.bytesPerLine, into: target.pixels, destinationStride: target.stride)
        }
      }
      display.overlay?.drawLive(overlayContent(), on: target)
    }
  }

  private func showMJPEG(_ bytes: [UInt8], _ frame: FrameInfo, _ scaler: LibYUVPreview) {
    // Decoding is most of an MJPEG frame's cost: a frame the display cannot take yet is not decoded at all.
    guard !display.flipPending else { return }
    let picture: YCbCrPlaneView
    do {
      let (shownWidth, shownHeight) = scaler.orientation.turned(scaler.target.width, scaler.target.height)
      let (coverWidth, coverHeight) = source.zoom.decodeCover(shownWidth: shownWidth, shownHeight: shownHeight)
      let decoder = try planeDecoder ?? JPEGPlaneDecoder()
      planeDecoder = decoder
      picture = try bytes.withUnsafeBytes { try decoder.decode($0, covering: coverWidth, coverHeight) }
    } catch {
      if decodeFailures == 0 { log("preview: MJPEG frame \(frame.sequence) not decoded: \(error)") }
      decodeFailures += 1
      return
    }
    if decodedScaler?.sourceWidth != picture.width || decodedScaler?.sourceHeight != picture.height {
      decodedScaler = LibYUVPreview(
        sourceWidth: picture.width, sourceHeight: picture.height,
        crop: source.zoom.pixelCrop(width: picture.width, height: picture.height), target: scaler.target,
        orientation: scaler.orientation)
    }
    guard let fitted = decodedScaler else { return }
    display.present { target in
      fitted.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
      fitted.drawPlanes(picture, into: target.pixels, destinationStride: target.stride)
      display.overlay?.drawLive(overlayContent(), on: target)
    }
  }

  /// A decoded picture fitted like the preview, with the overlay on top.
  private func present(_ picture: XRGBImage, with scaler: LibYUVPreview) {
    display.present { target in
      scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
      picture.pixels.withUnsafeBytes { source in
        scaler.drawXRGB(source, stride: picture.stride, into: target.pixels, destinationStride: target.stride)
      }
      display.overlay?.drawLive(overlayContent(), on: target)
    }
  }

  private func drawMessage() {
    guard display.card != nil else { return }
    let words: [String] =
      switch screen {
      case .message(let text): [text]
      default: []
      }
    let overlay = display.overlay
    let drawn = display.present { target in
      Overlay.drawMessage(words, background: Overlay.messageBackground, with: overlay, on: target)
    }
    if !drawn { messageWaiting = true }
  }
}
