import Camera
import KioskCore
import LibcameraFakes
import Testing

@testable import LibcameraCamera

/// The capture stream over the fake shim: what the camera session gets of a libcamera camera (buffers with the
/// sensor's timestamps and sequence numbers, failed frames kept from it, an unplug as `.unplugged`, NV12 as one
/// run of bytes), through the adapter's real table calls and mappings.
@Suite struct LibcameraCaptureStreamTests {
  static let webcam = LibcameraCameraInfo(
    id: "\\_SB_.PCI0-1:1.0-1d6b:0102", model: "Kiosk Webcam", location: "external",
    formats: [
      LibcameraFormatInfo(name: "MJPEG", fourcc: "MJPG", sizeRange: false, sizes: [Size(width: 640, height: 360)]),
      LibcameraFormatInfo(name: "YUYV", fourcc: "YUYV", sizeRange: false, sizes: [Size(width: 8, height: 2)]),
    ], scalerCrop: false, autofocus: false)
  static let sensor = LibcameraCameraInfo(
    id: "/base/soc/i2c0mux/i2c@1/imx219@10", model: "imx219", location: "back",
    formats: [
      LibcameraFormatInfo(
        name: "NV12", fourcc: "NV12", sizeRange: true, sizes: [Size(width: 2, height: 2), Size(width: 3280, height: 2464)])
    ], scalerCrop: true, autofocus: false)

  struct NoFrame: Error {}

  /// True when no frame is waiting; one that is goes back.
  func nothingWaiting(_ stream: LibcameraCaptureStream) throws -> Bool {
    guard let buffer = try stream.dequeue() else { return true }
    try stream.requeue(buffer)
    return false
  }

  /// The fake with `camera` listed, a manager on it, and the capture stream `configured` opened at `size`.
  func open(
    _ camera: FakeLibcameraCamera, format: PixelFormat, size: Size, in fake: FakeLibcamera
  ) throws -> (LibcameraCaptureStream, LibcameraManager) {
    fake.cameras.append(camera)
    let manager = try fake.installed { try LibcameraManager(fake.library) }
    let choice = try LibcameraStreamChoice.choose(camera.info, preferring: format, size: size).get()
    return (try LibcameraCaptureStream(manager, camera: camera.info, choice: choice, frameRate: 25), manager)
  }

  @Test func framesFlowWithTheSensorsTimestampsAndSequenceNumbers() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.webcam)
    let (stream, manager) = try open(camera, format: .yuyv, size: Size(width: 8, height: 2), in: fake)
    #expect(stream.path == Self.webcam.id && stream.card == "Kiosk Webcam")
    #expect(stream.format == StreamFormat(format: .yuyv, width: 8, height: 2, bytesPerLine: 16, imageSize: 32, range: .limited))
    #expect(stream.descriptor.rawValue == camera.eventfd)
    try stream.start()
    #expect(camera.started && camera.frameRate == 25)
    #expect(camera.queued == [0, 1, 2, 3], "every buffer queued at start")
    #expect(try nothingWaiting(stream), "nothing completed yet: nil, not an error")

    let picture = (0..<32).map { UInt8($0) }
    camera.complete(sequence: 41, timestampNanoseconds: 7_000_000_123, planes: [picture])
    camera.complete(sequence: 42, timestampNanoseconds: 7_040_000_456, planes: [picture.reversed()])
    guard let first = try stream.dequeue() else { throw NoFrame() }
    #expect(first.info == FrameInfo(sequence: 41, timestamp: Instant(nanoseconds: 7_000_000_123)))
    #expect(first.bytesUsed == 32 && !first.damaged)
    #expect(stream.withBytes(of: first) { Array($0) } == picture)
    try stream.requeue(first)
    guard let second = try stream.dequeue() else { throw NoFrame() }
    #expect(second.info == FrameInfo(sequence: 42, timestamp: Instant(nanoseconds: 7_040_000_456)))
    #expect(stream.withBytes(of: second) { Array($0) } == picture.reversed())
    try stream.requeue(second)
    #expect(camera.queued == [2, 3, 0, 1], "each buffer given back after its frame")
    let (exposure, gain) = stream.exposureAndGain()
    #expect(exposure == nil && gain == nil, "uvcvideo reports neither")
    withExtendedLifetime(manager) {}
  }

  @Test func aFailedFrameIsGivenBackAndSkipped() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.webcam)
    let (stream, manager) = try open(camera, format: .yuyv, size: Size(width: 8, height: 2), in: fake)
    try stream.start()
    let good = [UInt8](repeating: 9, count: 32)
    let failed = camera.complete(sequence: 0, timestampNanoseconds: 0, planes: [[]], status: .error)
    #expect(try nothingWaiting(stream), "a failed frame alone: nothing to lend")
    #expect(stream.failedFrames == 1)
    #expect(camera.queued.last == failed, "the failed frame's buffer went straight back")
    camera.complete(sequence: 5, timestampNanoseconds: 1_000, planes: [[]], status: .cancelled)
    camera.complete(sequence: 6, timestampNanoseconds: 2_000, planes: [good])
    guard let next = try stream.dequeue() else { throw NoFrame() }
    #expect(next.info.sequence == 6 && stream.failedFrames == 2)
    #expect(stream.withBytes(of: next) { Array($0) } == good)
    try stream.requeue(next)
    withExtendedLifetime(manager) {}
  }

  @Test func anUnplugBecomesUnpluggedAfterTheFramesThatCameBeforeIt() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.webcam)
    let (stream, manager) = try open(camera, format: .yuyv, size: Size(width: 8, height: 2), in: fake)
    try stream.start()
    camera.complete(sequence: 1, timestampNanoseconds: 10, planes: [[UInt8](repeating: 1, count: 32)])
    fake.unplug(camera)
    guard let last = try stream.dequeue() else { throw NoFrame() }
    #expect(last.info.sequence == 1)
    try stream.requeue(last)
    do {
      _ = try stream.dequeue()
      Issue.record("a camera that went away dequeued")
    } catch {
      guard case .unplugged(let reason) = error else { throw error }
      #expect(reason == "libcamera: \(Self.webcam.id): camera removed")
    }
    withExtendedLifetime(manager) {}
  }

  /// 4x3 NV12: luma rows of `stride` bytes, then two chroma rows at the same stride.
  func nv12(_ camera: FakeLibcameraCamera, in fake: FakeLibcamera) throws -> (
    stream: LibcameraCaptureStream, manager: LibcameraManager, luma: [UInt8], chroma: [UInt8]
  ) {
    let (stream, manager) = try open(camera, format: .nv12, size: Size(width: 4, height: 3), in: fake)
    let stride = 4 + camera.rowPadding
    #expect(stream.format.format == .nv12 && stream.format.bytesPerLine == stride)
    let luma = (0..<(stride * 3)).map { UInt8($0) }
    let chroma = (0..<(stride * 2)).map { UInt8(200 + $0) }
    return (stream, manager, luma, chroma)
  }

  @Test(arguments: [(apart: false, padding: 0), (apart: true, padding: 0), (apart: true, padding: 4), (apart: false, padding: 4)])
  func nv12PlanesArriveAsOneRunOfLumaThenChroma(apart: Bool, padding: Int) throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.sensor)
    camera.chromaApart = apart
    camera.rowPadding = padding
    let (stream, manager, luma, chroma) = try nv12(camera, in: fake)
    // Chroma straight after the luma is lent in place; in a dmabuf of its own it is copied behind the luma.
    #expect(stream.gathered.allSatisfy { ($0 != nil) == apart })
    try stream.start()
    camera.complete(sequence: 3, timestampNanoseconds: 99, planes: [luma, chroma])
    guard let buffer = try stream.dequeue() else { throw NoFrame() }
    #expect(buffer.bytesUsed == luma.count + chroma.count)
    #expect(stream.withBytes(of: buffer) { Array($0) } == luma + chroma)
    try stream.requeue(buffer)
    withExtendedLifetime(manager) {}
  }

  @Test func nv12WithShortChromaIsLentShortSoTheFrameCheckRefusesIt() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.sensor)
    camera.chromaApart = true
    let (stream, manager, luma, chroma) = try nv12(camera, in: fake)
    try stream.start()
    camera.complete(sequence: 1, timestampNanoseconds: 1, planes: [luma, Array(chroma.prefix(3))])
    guard let buffer = try stream.dequeue() else { throw NoFrame() }
    #expect(buffer.bytesUsed == luma.count + 3)
    #expect(stream.withBytes(of: buffer) { $0.count } == luma.count + 3)
    try stream.requeue(buffer)
    withExtendedLifetime(manager) {}
  }

  @Test func theRequestsMetadataGivesExposureAndGain() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.sensor)
    let (stream, manager, luma, chroma) = try nv12(camera, in: fake)
    try stream.start()
    camera.complete(sequence: 1, timestampNanoseconds: 1, planes: [luma, chroma], exposureMicroseconds: 33_349, analogueGain: 2.5)
    guard let buffer = try stream.dequeue() else { throw NoFrame() }
    try stream.requeue(buffer)
    let (exposure, gain) = stream.exposureAndGain()
    #expect(exposure == 333 && gain == 250)
    withExtendedLifetime(manager) {}
  }

  @Test func aFullRangeColourSpaceIsSaid() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.sensor)
    camera.grantFullRange = true
    let (stream, manager, _, _) = try nv12(camera, in: fake)
    #expect(stream.format.range == .full)
    withExtendedLifetime(manager) {}
  }

  @Test func aGrantedFormatTheFramePathsCannotReadIsRefused() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(Self.sensor)
    camera.grantFourcc = "YU12"
    do {
      _ = try nv12(camera, in: fake)
      Issue.record("a three-plane YUV420 stream opened")
    } catch let error as CameraError {
      guard case .unsupported(let reason) = error else { throw error }
      #expect(reason == "libcamera: \(Self.sensor.id): asked for NV12, granted YU12, which kioskcam does not read")
    }
    #expect(!camera.isOpen, "the camera is let go again")
  }
}
