import Dispatch
import Imaging
import JPEGCodec
import KioskCore
import Scaling
import Synchronization
import Testing
import V4L2Codec

@testable import Preview

/// The pipeline draws on its workers exactly what the loop used to draw itself: the same libyuv calls on
/// the same bytes into the canvas it was lent, with the overlay on top; a frame that cannot be decoded is
/// reported as such, and a frame with no canvas free is reported, never drawn somewhere else.
@Suite struct PreviewPipelineTests {
  static let screen = (width: 320, height: 200)

  /// Collects what the workers report, for the test's own thread to wait on.
  final class Reports: Sendable {
    let outcomes = Mutex<[PreviewPipeline.Outcome]>([])
    let arrived = DispatchSemaphore(value: 0)
    func add(_ outcome: PreviewPipeline.Outcome) {
      outcomes.withLock { $0.append(outcome) }
      arrived.signal()
    }
    func next() -> PreviewPipeline.Outcome? {
      guard arrived.wait(timeout: .now() + 60) == .success else { return nil }
      return outcomes.withLock { $0.removeFirst() }
    }
  }

  static func yuyv(width: Int, height: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: width * height * 2)
    for y in 0..<height {
      for x in 0..<width {
        bytes[(y * width + x) * 2] = UInt8(16 + (x * 219) / width)
        bytes[(y * width + x) * 2 + 1] = UInt8(x % 2 == 0 ? 64 + y % 128 : 192 - y % 128)
      }
    }
    return bytes
  }

  static func jpeg(width: Int, height: Int) throws -> [UInt8] {
    let chromaWidth = (width + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * height)
    var cr = cb
    for y in 0..<height {
      for x in 0..<width { luma[y * width + x] = UInt8((x * 255) / width) }
      for x in 0..<chromaWidth {
        cb[y * chromaWidth + x] = UInt8(40 + (y * 170) / height)
        cr[y * chromaWidth + x] = UInt8(220 - (x * 170) / chromaWidth)
      }
    }
    let planes = PlanarYCbCr(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: height, luma: luma, cb: cb, cr: cr)
    return try JPEGEncoder.encode(planes, quality: 90)
  }

  static func fit(_ width: Int, _ height: Int, crop: PixelRect? = nil) -> PreviewFit {
    let shown = crop.map { ($0.width, $0.height) } ?? (width, height)
    return PreviewFit(
      sourceWidth: width, sourceHeight: height, crop: crop,
      target: .aspectFit(sourceWidth: shown.0, sourceHeight: shown.1, into: screen.width, screen.height),
      orientation: PreviewOrientation())
  }

  /// An overlay that marks the top-left pixel, so the test sees it was drawn last, on the canvas.
  static let mark: @Sendable (DrawTarget) -> Void = { target in
    target.pixels.storeBytes(of: 0x00AB_CDEF, toByteOffset: 0, as: UInt32.self)
  }

  static func drawnPixels(_ job: PreviewJob, decoder: FrameDecoderChoice = .turboJPEG) throws -> [UInt8] {
    let canvases = MemoryCanvases(count: 1, width: screen.width, height: screen.height)
    let reports = Reports()
    let pipeline = PreviewPipeline(workers: 2, decoder: decoder) { reports.add($0) }
    defer { pipeline.stop() }
    #expect(pipeline.submit(job, lend: { canvases.lend() }) == nil)
    guard case .drawn(let tag, let canvas) = try #require(reports.next()) else {
      Issue.record("not drawn")
      return []
    }
    #expect(tag == job.tag)
    defer { canvas.giveBack() }
    return [UInt8](UnsafeRawBufferPointer(canvas.target.pixels))
  }

  static func expected(_ draw: (UnsafeMutableRawBufferPointer, Int) -> Void) -> [UInt8] {
    var pixels = [UInt8](repeating: 0, count: screen.width * screen.height * 4)
    pixels.withUnsafeMutableBytes { draw($0, screen.width * 4) }
    pixels.withUnsafeMutableBytes { Self.mark(DrawTarget(pixels: $0, width: screen.width, height: screen.height, stride: screen.width * 4)) }
    return pixels
  }

  @Test func aYUYVFrameIsDrawnAsTheLoopDrewIt() throws {
    let (width, height) = (640, 360)
    let frame = Self.yuyv(width: width, height: height)
    let crop = PixelRect(x: 160, y: 90, width: 320, height: 180)
    let fit = Self.fit(width, height, crop: crop)
    let job = PreviewJob(tag: .init(order: 1, generation: 0, frameNanoseconds: 5), picture: .yuyv(frame, stride: width * 2), fit: fit, overlay: Self.mark)
    let scaler = LibYUVPreview(sourceWidth: width, sourceHeight: height, crop: crop, target: fit.target)
    let want = Self.expected { out, stride in
      scaler.clearBorders(out, width: Self.screen.width, height: Self.screen.height, destinationStride: stride)
      frame.withUnsafeBytes { scaler.drawYUYV($0, stride: width * 2, into: out, destinationStride: stride) }
    }
    let got = try Self.drawnPixels(job)
    #expect(got == want)
    #expect(got.prefix(4) == [0xEF, 0xCD, 0xAB, 0x00], "the overlay is drawn on top")
  }

  @Test func anMJPEGFrameIsDecodedAtItsScaleAndZoomedAsTheLoopDidIt() throws {
    let (width, height) = (1280, 720)
    let jpeg = try Self.jpeg(width: width, height: height)
    var zoom = Zoom(maximum: 400, step: 100)
    _ = zoom.apply(.zoomIn)
    let fit = Self.fit(width, height)
    let job = PreviewJob(tag: .init(order: 7, generation: 2, frameNanoseconds: 5), picture: .mjpeg(jpeg, zoom: zoom), fit: fit, overlay: Self.mark)
    // What the screen sink did on the loop: decode covering the shown size times the zoom, crop the decoded picture.
    let cover = zoom.decodeCover(shownWidth: fit.target.width, shownHeight: fit.target.height)
    let decoder = try JPEGPlaneDecoder()
    let planes = try jpeg.withUnsafeBytes { try decoder.decode($0, covering: cover.width, cover.height) }
    #expect(planes.width < width, "decoded at a DCT scale, not full size")
    let scaler = LibYUVPreview(
      sourceWidth: planes.width, sourceHeight: planes.height,
      crop: zoom.pixelCrop(width: planes.width, height: planes.height), target: fit.target)
    let want = Self.expected { out, stride in
      scaler.clearBorders(out, width: Self.screen.width, height: Self.screen.height, destinationStride: stride)
      scaler.drawPlanes(planes, into: out, destinationStride: stride)
    }
    #expect(try Self.drawnPixels(job) == want)
  }

  /// A V4L2 decoder chosen at start that will not open on a worker (its node gone): the worker draws with
  /// TurboJPEG instead, the same picture, and the preview goes on.
  @Test func aV4L2DecoderThatDoesNotOpenLeavesTheWorkerOnTurboJPEG() throws {
    let (width, height) = (640, 360)
    let jpeg = try Self.jpeg(width: width, height: height)
    let zoom = Zoom(maximum: 100, step: 100)
    let job = PreviewJob(
      tag: .init(order: 3, generation: 0, frameNanoseconds: 5), picture: .mjpeg(jpeg, zoom: zoom), fit: Self.fit(width, height),
      overlay: Self.mark)
    let gone = FrameDecoderChoice.v4l2(path: "/nonexistent/video10", coded: .mjpeg)
    #expect(throws: (any Error).self) { _ = try gone.make() }
    let got = try Self.drawnPixels(job, decoder: gone)
    let byTurboJPEG = try Self.drawnPixels(job)
    #expect(got == byTurboJPEG, "drawn as TurboJPEG draws it")
    #expect(got.contains { $0 != 0 }, "a picture, not a blank canvas")
  }

  @Test func aBrokenFrameIsReportedNotDrawn() throws {
    let canvases = MemoryCanvases(count: 1, width: Self.screen.width, height: Self.screen.height)
    let reports = Reports()
    let pipeline = PreviewPipeline(workers: 1) { reports.add($0) }
    defer { pipeline.stop() }
    let job = PreviewJob(
      tag: .init(order: 1, generation: 0, frameNanoseconds: 1), picture: .mjpeg([0xFF, 0xD8, 0xFF, 0xD9], zoom: Zoom(maximum: 400, step: 100)),
      fit: Self.fit(640, 360), overlay: Self.mark)
    _ = pipeline.submit(job, lend: { canvases.lend() })
    guard case .failed(let tag, _) = try #require(reports.next()) else {
      Issue.record("a broken frame was not reported as failed")
      return
    }
    #expect(tag.order == 1)
    #expect(canvases.freeCount == 1, "no canvas taken for a frame that failed to decode")
  }

  @Test func withEveryCanvasLentAFrameIsReportedUndrawn() throws {
    let canvases = MemoryCanvases(count: 1, width: Self.screen.width, height: Self.screen.height)
    let held = try #require(canvases.lend())
    let reports = Reports()
    let pipeline = PreviewPipeline(workers: 1) { reports.add($0) }
    defer { pipeline.stop() }
    let frame = Self.yuyv(width: 64, height: 36)
    _ = pipeline.submit(
      PreviewJob(tag: .init(order: 3, generation: 0, frameNanoseconds: 1), picture: .yuyv(frame, stride: 128), fit: Self.fit(64, 36), overlay: Self.mark),
      lend: { canvases.lend() })
    guard case .noCanvas(let tag) = try #require(reports.next()) else {
      Issue.record("drawn without a canvas free")
      return
    }
    #expect(tag.order == 3)
    held.giveBack()
  }
}
