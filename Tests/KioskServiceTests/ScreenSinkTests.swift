import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import Preview
import Testing

@testable import Capture
@testable import KioskService

/// A display in memory, flipped by the test: what the screen sink drew, and which picture is on screen.
final class MemoryScanout: Scanout {
  let canvases: MemoryCanvases
  let width: Int
  let height: Int
  var present = true
  private(set) var flipPending = false
  private(set) var flipsShown = 0
  private(set) var onScreen: (any PreviewCanvas)?
  private var queued: (any PreviewCanvas)?

  init(width: Int, height: Int, buffers: Int) {
    self.width = width
    self.height = height
    canvases = MemoryCanvases(count: buffers, width: width, height: height)
  }

  var size: (width: Int, height: Int)? { present ? (width, height) : nil }
  var overlay: Overlay? { nil }
  var lastVblank: Int64? { nil }
  var lender: (@Sendable () -> (any PreviewCanvas)?)? {
    let canvases = canvases
    return present ? { @Sendable () -> (any PreviewCanvas)? in canvases.lend() } : nil
  }

  func flip(_ canvas: any PreviewCanvas) -> Bool {
    guard !flipPending, canvas is MemoryCanvases.Canvas else { return false }
    queued = canvas
    flipPending = true
    return true
  }

  /// The vblank: the queued picture goes on screen, and the one it replaces is free again.
  func completeFlip() -> Bool {
    guard let queued else { return false }
    onScreen?.giveBack()
    onScreen = queued
    self.queued = nil
    flipPending = false
    flipsShown += 1
    return true
  }

  /// The pixel on screen at (x, y), as XRGB.
  func pixel(_ x: Int, _ y: Int) -> UInt32? {
    guard let target = onScreen?.target else { return nil }
    return target.pixels.load(fromByteOffset: y * target.stride + x * 4, as: UInt32.self) & 0x00FF_FFFF
  }
}

/// The one owner of the screen, with the real workers drawing into memory: the live picture, a message and
/// review's picture each reach the display through it, and a message that found no buffer is not lost.
@Suite struct ScreenSinkTests {
  let bench: DriverBench
  let frames = FakeFrames(streaming: true)
  let scanout: MemoryScanout
  let sink: ScreenSink
  /// The workers' results handed to the sink so far.
  let fed = Counter()

  final class Counter { var value = 0 }

  init() throws {
    bench = try DriverBench("screen")
    scanout = MemoryScanout(width: frames.width, height: frames.height, buffers: 5)
    sink = ScreenSink(
      config: Config(), scanout: scanout, source: frames, workers: 2, results: bench.results, loopCPU: LoopCPU(),
      overlayContent: { OverlayContent(mode: .still, screen: .live(.still), ready: true, shotsLeft: nil, now: Instant(nanoseconds: 0)) })
    sink.streamChanged()
  }

  /// Runs the loop as the service does: the workers' pictures go to the sink, and each flip completes at the
  /// next vblank (unless `flipping` is false: the vblank is late); until `done` says so.
  func settle(flipping: Bool = true, until done: @escaping () -> Bool) throws {
    let (scanout, sink, fed) = (scanout, sink, fed)
    try bench.hear { events in
      for event in events.dropFirst(fed.value) {
        if case .previewDrawn(let outcome) = event { sink.drawn(outcome) }
      }
      fed.value = events.count
      if flipping, scanout.completeFlip() { sink.flipDone() }
      return done()
    }
  }

  static let grey: UInt32 = Overlay.messageBackground
  static let red: UInt32 = 0x00FF_0000

  func isMessage() -> Bool {
    [(0, 0), (frames.width / 2, frames.height / 2), (frames.width - 1, frames.height - 1)].allSatisfy {
      scanout.pixel($0.0, $0.1) == Self.grey
    }
  }

  /// The fake camera's ramp: grey, darker on the left than on the right.
  func isCameraPicture() -> Bool {
    guard let left = scanout.pixel(2, frames.height / 2), let right = scanout.pixel(frames.width - 3, frames.height / 2)
    else { return false }
    let grey = { (pixel: UInt32) in pixel & 0xFF == (pixel >> 8) & 0xFF && pixel & 0xFF == (pixel >> 16) & 0xFF }
    return grey(left) && grey(right) && left & 0xFF + 60 < right & 0xFF
  }

  func isReviewPicture() -> Bool { scanout.pixel(frames.width / 2, frames.height / 2) == Self.red }

  static func redPicture(into width: Int, _ height: Int) -> FittedPicture {
    let (sourceWidth, sourceHeight) = (16, 12)
    let pixels = (0..<sourceWidth * sourceHeight).flatMap { _ -> [UInt8] in [0, 0, 255, 0] }
    let picture = XRGBImage(width: sourceWidth, height: sourceHeight, denominator: 1, pixels: pixels)
    let orientation = PreviewOrientation(rotation: 0, mirror: false)
    let target = PixelRect.aspectFit(sourceWidth: sourceWidth, sourceHeight: sourceHeight, into: width, height)
    return FittedPicture(
      picture: picture,
      scaler: PreviewScaler(sourceWidth: sourceWidth, sourceHeight: sourceHeight, target: target, orientation: orientation),
      sourceWidth: sourceWidth, sourceHeight: sourceHeight)
  }

  static let view = ReviewView(item: RollEntry(path: "DCIM/100KIOSK/IMG_0001.JPG")!, position: 1, count: 1)

  @Test func theLivePictureAMessageAndReviewAllReachTheDisplayThroughTheOneOwner() throws {
    defer { bench.removeFolder() }
    sink.show(.live(.still))
    sink.showFrame(FakeFrames.frame)
    try settle { isCameraPicture() }
    let shownLive = scanout.flipsShown

    sink.show(.message("Storage full"))
    try settle { isMessage() }
    // A camera frame on a message screen is not drawn over the message.
    sink.showFrame(FakeFrames.frame)
    try settle { fed.value >= bench.heard.events.count && !scanout.flipPending }
    #expect(isMessage())

    sink.show(.reviewing(Self.view))
    sink.showReview(Self.redPicture(into: frames.width, frames.height), of: Self.view, title: "IMG_0001.JPG", date: "")
    try settle { isReviewPicture() }
    // Review's picture for an item no longer on screen is not shown.
    let other = ReviewView(item: RollEntry(path: "DCIM/100KIOSK/IMG_0002.JPG")!, position: 2, count: 2)
    sink.show(.live(.still))
    sink.showReview(Self.redPicture(into: frames.width, frames.height), of: other, title: "IMG_0002.JPG", date: "")
    sink.showFrame(FakeFrames.frame)
    try settle { isCameraPicture() }
    #expect(scanout.flipsShown > shownLive + 1, "every screen was flipped: \(scanout.flipsShown)")
    #expect(sink.decodeFailures == 0)
  }

  @Test func aMessageThatFindsNoBufferFreeIsDrawnOnceAFlipFreesOne() throws {
    defer { bench.removeFolder() }
    sink.show(.live(.still))
    sink.showFrame(FakeFrames.frame)
    try settle { isCameraPicture() }
    // A second frame drawn and queued; its vblank has not come yet.
    sink.showFrame(FakeFrames.frame)
    try settle(flipping: false) { scanout.flipPending }
    // Every other buffer is taken, as while the workers draw in all of them.
    var taken: [any PreviewCanvas] = []
    while let canvas = scanout.canvases.lend() { taken.append(canvas) }
    let skipped = sink.skipped
    sink.show(.message("Save failed"))
    try settle(flipping: false) { sink.skipped > skipped }
    #expect(!isMessage())
    for canvas in taken { canvas.giveBack() }
    // The vblank: the queued frame goes on screen, and the message, handed over again, follows it.
    try settle { isMessage() }
  }
}
