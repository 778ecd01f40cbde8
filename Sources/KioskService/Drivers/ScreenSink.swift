import Capture
import FoundationEssentials
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Preview

/// The one owner of the screen. Every picture goes on it through here: the live picture from the camera's
/// ring under the overlay, the photo under check, full-screen messages, and review's items and movie
/// frames, which the roll player hands over. Nothing else draws on the display or flips it.
///
/// Pictures are drawn off the loop: each is handed to the workers (the newest waiting replaces an older one),
/// which decode, scale and draw the overlay into a buffer the display lends; the loop only flips what comes
/// back, in order, newest first. A screen that is not live (a message, a review item) stands on its last
/// picture: one lost for want of a buffer is handed over again, never dropped like a camera frame.
final class ScreenSink: ScreenDriver, ReviewScreen {
  private let config: Config
  private let scanout: any Scanout
  private let source: any FrameSource
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
  private var order = ShowOrder<any PreviewCanvas>()
  private var handedOver = 0
  /// Pictures handed to the workers and not yet back.
  private var inFlight = 0
  /// The newest picture not handed over yet: the display could not show more pictures than are on their way.
  private var held: PreviewJob?
  /// The camera's timestamp of the frame in the pending flip, for its latency once it is on screen.
  private var pendingFrame: Int64?
  /// The picture a screen that is not live stands on, until a flip of it (or of a newer one) is queued.
  private var standing: PreviewJob?
  /// The standing picture was lost on its way (no buffer free, a flip refused): handed over again when the
  /// display can take it.
  private var standingLost = false
  /// MJPEG frames the preview could not decode (saved stills are judged on their own).
  private(set) var decodeFailures = 0
  /// Pictures handed over that were never shown: replaced while waiting, drawn after a newer one, or with no
  /// buffer free.
  var skipped: Int { order.skipped }
  /// From a frame's V4L2 timestamp to the vblank of the flip that put it on screen.
  private(set) var latency = LatencyWindow()

  init(
    config: Config, scanout: any Scanout, source: any FrameSource, workers: Int,
    decoder: FrameDecoderChoice = .turboJPEG, results: Mailbox<ServiceEvent>, loopCPU: LoopCPU,
    overlayContent: @escaping () -> OverlayContent
  ) {
    self.loopCPU = loopCPU
    self.config = config
    self.scanout = scanout
    self.source = source
    self.overlayContent = overlayContent
    pipeline = PreviewPipeline(workers: workers, decoder: decoder) { results.post(.previewDrawn($0)) }
  }

  deinit { pipeline.stop() }

  /// The workers for this configuration on the cores this process may use.
  static func workers(for config: Config) -> Int {
    config.display.previewWorkers(cores: CPUUse.threads())
  }

  /// One buffer on screen, one queued, one drawn and waiting for the queued flip, and one per worker drawing.
  static func displayBuffers(for config: Config) -> Int { workers(for: config) + 3 }

  var workers: Int { pipeline.workers }
  var framesShown: Int { scanout.flipsShown }
  var expectsFrames: Bool { fit != nil && showsCamera }
  var size: (width: Int, height: Int)? { scanout.size }

  /// Screens whose picture comes with the camera's frames (their words and digits arrive with the overlay).
  private var showsCamera: Bool { shown.isCamera }

  /// What a screen shows, as far as its picture goes: another one makes what is on its way stale.
  private enum Shown: Equatable {
    case camera
    case photo(String)
    case message(String)
    case review(String)

    var isCamera: Bool {
      switch self {
      case .camera, .photo: true
      case .message, .review: false
      }
    }
  }

  private var shown: Shown {
    switch screen {
    case .live, .countdown, .recording: .camera
    case .checkingPhoto(let name): .photo(name)
    case .message(let text): .message(text)
    case .reviewing(let view): .review(view.item.path)
    }
  }

  func show(_ screen: Screen) {
    let before = shown
    self.screen = screen
    // The overlay's words change with a countdown or a recording's clock; only another picture is a change.
    guard shown != before else { return }
    changed()
    drawMessage()
  }

  func streamChanged() { refit() }

  func displayChanged() {
    refit()
    guard scanout.size != nil else {
      checkedPhoto = nil
      return
    }
    drawMessage()
  }

  func flipDone() { loopCPU.carry(completeFlip) }

  private func completeFlip() {
    if let frame = pendingFrame, let vblank = scanout.lastVblank { latency.add(vblank - frame) }
    pendingFrame = nil
    flipReady()
    handOver()
    standAgain()
  }

  /// What an earlier hand-over left is for another screen, zoom or display now.
  private func changed() {
    order.change()?.giveBack()
    if held != nil { order.lost() }
    held = nil
    standing = nil
    standingLost = false
  }

  private func refit() {
    changed()
    guard let size = scanout.size, let format = source.streamFormat else {
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
      target: .aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: size.width, size.height),
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

  // MARK: Pictures handed over

  /// Hands the freshest frame to the workers, or the photo under check while that lasts.
  func showFrame(_ frame: FrameInfo) {
    guard let fit, let format = source.streamFormat, showsCamera, scanout.size != nil,
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
    let (overlay, content) = (scanout.overlay, overlayContent())
    hold(PreviewJob(tag: nextTag(frame.timestamp.nanoseconds), picture: picture, fit: fitted) {
      overlay?.drawLive(content, on: $0)
    })
  }

  /// Review's picture for the item on screen (a still, a thumbnail, a movie's frame), with its words.
  func showReview(_ picture: FittedPicture, of view: ReviewView, title: String, date: String) {
    guard case .reviewing(let current) = screen, current.item.path == view.item.path, let size = scanout.size else {
      return
    }
    let target = picture.scaler.target
    // Decoded for a display since replaced by a smaller one: the roll player decodes it again for this one.
    guard target.x >= 0, target.y >= 0, target.x + target.width <= size.width, target.y + target.height <= size.height
    else { return }
    let fit = PreviewFit(
      sourceWidth: picture.picture.width, sourceHeight: picture.picture.height, crop: nil, target: target,
      orientation: picture.scaler.orientation)
    let overlay = scanout.overlay
    stand(PreviewJob(tag: nextTag(nil), picture: .photo(picture.picture), fit: fit) {
      overlay?.drawReview(view, title: title, date: date, on: $0)
    })
  }

  /// A message screen's words on their background (plain colour without a font).
  private func drawMessage() {
    guard case .message(let text) = screen, let size = scanout.size else { return }
    let whole = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
    let fit = PreviewFit(
      sourceWidth: size.width, sourceHeight: size.height, crop: nil, target: whole,
      orientation: PreviewOrientation(rotation: 0, mirror: false))
    let overlay = scanout.overlay
    stand(PreviewJob(tag: nextTag(nil), picture: .blank, fit: fit) {
      Overlay.drawMessage([text], background: Overlay.messageBackground, with: overlay, on: $0)
    })
  }

  private func nextTag(_ frameNanoseconds: Int64?) -> PreviewTag {
    handedOver += 1
    return PreviewTag(order: handedOver, generation: order.generation, frameNanoseconds: frameNanoseconds)
  }

  private func stand(_ job: PreviewJob) {
    standing = job
    standingLost = false
    hold(job)
  }

  /// The standing picture, lost on its way, handed over again once no flip is pending (a buffer is free).
  private func standAgain() {
    guard standingLost, let job = standing, !scanout.flipPending else { return }
    stand(PreviewJob(tag: nextTag(nil), picture: job.picture, fit: job.fit, overlay: job.overlay))
  }

  private func hold(_ job: PreviewJob) {
    if held != nil { order.lost() }
    held = job
    handOver()
  }

  /// No more pictures are drawn than the display can take: while a flip is pending, one on its way (the next
  /// to show); while the display waits for a picture, one per worker (decoding in parallel). A picture that
  /// may not go yet is held, and a newer one replaces it; so a slow display costs no decoding it cannot show.
  private func handOver() {
    guard let job = held, let lend = scanout.lender else { return }
    // While a movie records, one picture at a time: the viewfinder's workers share the cores with its encoders.
    let recording = if case .recording = screen { true } else { false }
    let allowed = scanout.flipPending || recording ? 1 : pipeline.workers
    guard inFlight + (order.ready == nil ? 0 : 1) < allowed else { return }
    held = nil
    inFlight += 1
    if let replaced = pipeline.submit(job, lend: lend) {
      inFlight -= 1
      lost(replaced)
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
    case .noCanvas(let tag):
      lost(tag)
      // Its own loss waits for a flip to free a buffer; anything else coming back has freed one.
      return
    case .drawn(let tag, let canvas):
      order.drawn(tag, canvas)?.giveBack()
      flipReady()
    }
    standAgain()
  }

  /// A picture handed over that will never be shown; the standing one is handed over again.
  private func lost(_ tag: PreviewTag) {
    order.lost()
    if tag.order == standing?.tag.order { standingLost = true }
  }

  private func flipReady() {
    guard let next = order.next(flipPending: scanout.flipPending) else { return }
    guard scanout.flip(next.canvas) else {
      next.canvas.giveBack()
      lost(next.tag)
      return
    }
    pendingFrame = next.tag.frameNanoseconds
    if let standing, next.tag.order >= standing.tag.order { self.standing = nil }
  }
}
