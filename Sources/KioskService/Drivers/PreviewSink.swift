import Camera
import Capture
import Display
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Preview

/// What the screen shows: the live picture from the camera's ring under the overlay, full-screen messages,
/// and the photo just taken (its check: use photo or retake); review mode's screens are the roll player's,
/// to which it hands them.
///
/// The live picture is drawn off the loop: each frame is handed to the preview's workers (the newest waiting
/// replaces an older one), which decode, scale and draw the overlay into a display buffer; the loop only
/// flips what comes back, in order, newest first. The ring, stills and movies keep the camera's own bytes.
final class PreviewSink: ScreenDriver {
  private let config: Config
  private let display: DisplaySession
  private let source: any FrameSource
  private let player: RollPlayer
  /// What the overlay says, read on the loop when a frame is handed over.
  private let overlayContent: () -> OverlayContent
  private let pipeline: PreviewPipeline
  private let loopCPU: LoopCPU
  private var screen = Screen.live(.still)
  /// The live picture's geometry for the camera's format, the display, its turn and mirror, and the zoom's crop.
  private var fit: PreviewFit?
  /// The last still as decoded from its file, with the geometry that fits it: shown while its check lasts.
  private var checkedPhoto: (name: String, picture: XRGBImage, fit: PreviewFit)?
  /// Which drawn picture is flipped: the newest, in order, for the screen as it is now.
  private var order = ShowOrder<DisplayBuffer>()
  private var handedOver = 0
  /// Pictures handed to the workers and not yet back.
  private var inFlight = 0
  /// The newest frame not handed over yet: the display could not show more pictures than are on their way.
  private var held: PreviewJob?
  /// The camera's timestamp of the frame in the pending flip, for its latency once it is on screen.
  private var pendingFrame: Int64?
  /// A message that found no buffer free: drawn when one is, never dropped like a preview frame.
  private var messageWaiting = false
  /// MJPEG frames the preview could not decode (saved stills are judged on their own).
  private(set) var decodeFailures = 0
  /// Frames handed over that were never shown: replaced while waiting, drawn after a newer one, or with no buffer free.
  var skipped: Int { order.skipped }
  /// From a frame's V4L2 timestamp to the vblank of the flip that put it on screen.
  private(set) var latency = LatencyWindow()

  init(
    config: Config, display: DisplaySession, source: any FrameSource, player: RollPlayer, workers: Int,
    decoder: FrameDecoderChoice = .turboJPEG, results: Mailbox<ServiceEvent>, loopCPU: LoopCPU,
    overlayContent: @escaping () -> OverlayContent
  ) {
    self.loopCPU = loopCPU
    self.config = config
    self.display = display
    self.source = source
    self.player = player
    self.overlayContent = overlayContent
    pipeline = PreviewPipeline(workers: workers, decoder: decoder) { results.post(.previewDrawn($0)) }
  }

  deinit { pipeline.stop() }

  /// The preview's workers for this configuration on the cores this process may use.
  static func workers(for config: Config) -> Int {
    config.display.previewWorkers(cores: ProcessInfo.processInfo.activeProcessorCount)
  }

  /// One buffer on screen, one queued, one drawn and waiting for the queued flip, and one per worker drawing.
  static func displayBuffers(for config: Config) -> Int { workers(for: config) + 3 }

  var workers: Int { pipeline.workers }
  var framesShown: Int { display.flipsShown }
  var expectsFrames: Bool { fit != nil && showsPreview }

  /// Screens that are the live picture (their words and digits arrive with the overlay).
  private var showsPreview: Bool {
    switch screen {
    case .live, .countdown, .recording, .checkingPhoto: true
    case .reviewing, .message: false
    }
  }

  func show(_ screen: Screen) {
    let before = shownPicture
    self.screen = screen
    // The overlay's words change with a countdown or a recording's clock; only another picture is a change.
    if shownPicture != before { changed() }
    guard case .reviewing(let view) = screen else {
      player.leave()
      guard display.card != nil else { return }
      if showsPreview { messageWaiting = false } else { drawMessage() }
      return
    }
    player.review(view)
  }

  /// What the live screens draw: the camera's frames, or the photo under check (nil: no live picture).
  private var shownPicture: String?? {
    guard showsPreview else { return nil }
    if case .checkingPhoto(let name) = screen { return .some(name) }
    return .some(nil)
  }

  func streamChanged() { refit() }

  func displayChanged() {
    guard display.card != nil else {
      changed()
      fit = nil
      checkedPhoto = nil
      return
    }
    refit()
    show(screen)
  }

  func flipDone() { loopCPU.carry(completeFlip) }

  private func completeFlip() {
    if let frame = pendingFrame, let (_, vblank) = display.card?.lastFlip {
      latency.add(vblank - frame)
    }
    pendingFrame = nil
    flipReady()
    handOver()
    if messageWaiting, !display.flipPending { drawMessage() }
  }

  /// What an earlier hand-over left is for another screen, zoom or display now.
  private func changed() {
    order.change()?.giveBack()
    if held != nil { order.lost() }
    held = nil
  }

  private func refit() {
    changed()
    guard let card = display.card, let format = source.streamFormat else {
      fit = nil
      return
    }
    let orientation = PreviewOrientation(rotation: config.display.rotation, mirror: config.display.mirror)
    let crop = source.zoom.crop(width: format.width, height: format.height)
    // A quarter turn fits the picture's height across the panel.
    let (fitWidth, fitHeight) = orientation.turned(crop.width, crop.height)
    // MJPEG frames are decoded at a DCT scale first: their crop is applied to the decoded picture.
    let cropped = format.format == .mjpeg ? nil : PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
    fit = PreviewFit(
      sourceWidth: format.width, sourceHeight: format.height, crop: cropped,
      target: .aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: card.width, card.height),
      orientation: orientation)
  }

  /// The photo as saved, for its check: fitted like the preview, upright by its Exif orientation.
  func keepPhotoCheck(name: String, picture: XRGBImage) {
    guard let fit else { return }
    // The display's turn applies (it is how the panel is mounted), after the turn that stands the photo
    // upright (its Exif orientation, from the camera's mounting); the mirror does not: the file is not mirrored.
    let upright = (ExifOrientation(mountingRotation: config.camera.rotation) ?? .normal).uprightRotation
    let orientation = PreviewOrientation(rotation: (fit.orientation.rotation + upright) % 360, mirror: false)
    checkedPhoto = (
      name, picture,
      PreviewFit(sourceWidth: picture.width, sourceHeight: picture.height, crop: nil, target: fit.target, orientation: orientation)
    )
  }

  /// Where a picture must cover on the panel (as the source is oriented): what a photo check decodes to.
  var photoCover: (width: Int, height: Int)? {
    fit.map { $0.orientation.turned($0.target.width, $0.target.height) }
  }

  /// Hands the freshest frame to the workers, or the photo under check while that lasts.
  func showFrame(_ frame: FrameInfo) {
    guard let fit, let format = source.streamFormat, showsPreview, display.card != nil,
      let bytes = source.bytes(of: frame)
    else { return }
    let picture: PreviewJob.Picture
    var fitted = fit
    if case .checkingPhoto(let name) = screen, let checkedPhoto, checkedPhoto.name == name {
      // The photo as saved, not the live picture: people check what they got.
      picture = .photo(checkedPhoto.picture)
      fitted = checkedPhoto.fit
    } else {
      switch format.format {
      case .mjpeg: picture = .mjpeg(bytes, zoom: source.zoom)
      case .nv12: picture = .nv12(bytes, stride: format.bytesPerLine)
      case .yuyv: picture = .yuyv(bytes, stride: format.bytesPerLine)
      }
    }
    let (overlay, content) = (display.overlay, overlayContent())
    handedOver += 1
    let tag = PreviewTag(order: handedOver, generation: order.generation, frameNanoseconds: frame.timestamp.nanoseconds)
    let job = PreviewJob(tag: tag, picture: picture, fit: fitted) { overlay?.drawLive(content, on: $0) }
    if held != nil { order.lost() }
    held = job
    handOver()
  }

  /// No more pictures are drawn than the display can take: while a flip is pending, one on its way (the next
  /// to show); while the display waits for a picture, one per worker (decoding in parallel). A frame that may
  /// not go yet is held, and a newer one replaces it; so a slow display costs no decoding it cannot show.
  private func handOver() {
    guard let job = held, let card = display.card else { return }
    // While a movie records, one picture at a time, as when the loop drew them: its encoders come first.
    let recording = if case .recording = screen { true } else { false }
    let allowed = display.flipPending || recording ? 1 : pipeline.workers
    guard inFlight + (order.ready == nil ? 0 : 1) < allowed else { return }
    held = nil
    inFlight += 1
    let buffers = card.buffers
    if pipeline.submit(job, lend: { buffers.lend() }) != nil {
      inFlight -= 1
      order.lost()
    }
  }

  /// A worker's picture: flipped at once, kept for the pending flip, or dropped when something newer won.
  func drawn(_ outcome: PreviewPipeline.Outcome) { loopCPU.carry { take(outcome) } }

  private func take(_ outcome: PreviewPipeline.Outcome) {
    inFlight -= 1
    defer { handOver() }
    switch outcome {
    case .failed(let tag, let reason):
      if decodeFailures == 0 { log("preview: MJPEG frame \(tag.order) not decoded: \(reason)") }
      decodeFailures += 1
    case .noCanvas:
      order.lost()
    case .drawn(let tag, let canvas):
      guard let buffer = canvas as? DisplayBuffer, display.card?.buffers.owns(buffer) == true else {
        canvas.giveBack()
        order.lost()
        break
      }
      order.drawn(tag, buffer, showing: showsPreview)?.giveBack()
      flipReady()
    }
    if messageWaiting, !display.flipPending { drawMessage() }
  }

  private func flipReady() {
    guard let next = order.next(flipPending: display.flipPending) else { return }
    guard display.flip(next.canvas) else {
      next.canvas.giveBack()
      order.lost()
      return
    }
    pendingFrame = next.tag.frameNanoseconds
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
    messageWaiting = !drawn
  }
}

extension DisplayBuffer: PreviewCanvas {}
