import Camera
import KioskCore
import LibcameraCamera
import LibcameraFakes
import LinuxIO
import Testing

@testable import KioskService

/// The libcamera capture source and the camera session on it, over the fake shim: a camera opened by its id, one
/// missing, one camera manager for every listing, frames into the ring, an unplug lost and a replug back.
@Suite struct LibcameraCaptureSourceTests {
  static let webcam = LibcameraCameraInfo(
    id: "\\_SB_.PCI0-1:1.0-1d6b:0102", model: "Kiosk Webcam", location: "external",
    formats: [
      LibcameraFormatInfo(name: "MJPEG", fourcc: "MJPG", sizeRange: false, sizes: [Size(width: 640, height: 360), Size(width: 1280, height: 720)]),
      LibcameraFormatInfo(name: "YUYV", fourcc: "YUYV", sizeRange: false, sizes: [Size(width: 640, height: 360)]),
    ], scalerCrop: false, autofocus: false)
  static let sensor = LibcameraCameraInfo(
    id: "/base/soc/i2c0mux/i2c@1/imx219@10", model: "imx219", location: "back",
    formats: [
      LibcameraFormatInfo(name: "YUV420", fourcc: "YU12", sizeRange: true, sizes: [Size(width: 2, height: 2), Size(width: 3280, height: 2464)]),
      LibcameraFormatInfo(name: "NV12", fourcc: "NV12", sizeRange: true, sizes: [Size(width: 2, height: 2), Size(width: 3280, height: 2464)]),
    ], scalerCrop: true, autofocus: false)

  let fake = FakeLibcamera()

  func config(_ device: String = "auto", format: PixelFormat = .yuyv, size: Size = Size(width: 640, height: 360)) -> Config {
    var config = Config()
    config.camera.backend = .libcamera
    config.camera.device = device
    config.camera.format = format
    config.camera.size = size
    config.movie.size = size
    return config
  }

  @Test func aCameraIsOpenedByItsIdInAFormatItOffersAtTheSize() throws {
    fake.cameras = [FakeLibcameraCamera(Self.sensor), FakeLibcameraCamera(Self.webcam)]
    let source = LibcameraCaptureSource(library: .success(fake.library))
    try fake.installed {
      // The board's webcam: YUYV at 640x360 as configured; MJPEG where YUYV is not offered at the size.
      let yuyv = try source.open(Self.webcam.id, config().camera)
      #expect(yuyv.path == Self.webcam.id && yuyv.card == "Kiosk Webcam")
      #expect(yuyv.format.format == .yuyv && yuyv.format.width == 640 && yuyv.format.height == 360)
      yuyv.stop()
      let large = config(format: .yuyv, size: Size(width: 1280, height: 720)).camera
      _ = consume yuyv
      let mjpeg = try source.open(Self.webcam.id, large)
      #expect(mjpeg.format.format == .mjpeg && mjpeg.format.width == 1280)
      _ = consume mjpeg
      // The sensor: NV12, not the YUV420 it lists first.
      let sensor = try source.open(Self.sensor.id, config(format: .yuyv, size: Size(width: 1920, height: 1080)).camera)
      #expect(sensor.format.format == .nv12 && sensor.card == "imx219")
    }
  }

  @Test func aMissingIdIsAbsentWithWhatLibcameraHas() throws {
    fake.cameras = [FakeLibcameraCamera(Self.webcam)]
    let source = LibcameraCaptureSource(library: .success(fake.library))
    fake.installed {
      do throws(CameraError) {
        _ = try source.open("/base/soc/i2c0mux/i2c@0/imx708@1a", config().camera)
        Issue.record("a camera libcamera does not list opened")
      } catch {
        guard case .absent(let reason) = error else {
          Issue.record("absent, not \(error)")
          return
        }
        #expect(reason == "libcamera \(FakeLibcamera.version): no camera /base/soc/i2c0mux/i2c@0/imx708@1a: has \(Self.webcam.id)")
      }
    }
  }

  @Test func aSourceWithoutLibcameraSaysWhy() throws {
    let source = LibcameraCaptureSource(library: .failure(LibcameraUnavailable("libkioskcam-libcamera.so not found")))
    #expect(throws: CameraError.self) { try source.open(Self.webcam.id, config().camera) }
    let (result, path) = source.find(config())
    #expect(!result.passed && path == nil)
    #expect(result.evidence == "libcamera: libkioskcam-libcamera.so not found")
  }

  @Test func everyListingAndOpenGoesThroughOneCameraManager() throws {
    fake.cameras = [FakeLibcameraCamera(Self.webcam)]
    let source = LibcameraCaptureSource(library: .success(fake.library))
    try fake.installed {
      #expect(source.report().cameras.map(\.id) == [Self.webcam.id])
      let (found, path) = source.find(config())
      #expect(found.passed && path == Self.webcam.id)
      let stream = try source.open(Self.webcam.id, config().camera)
      #expect(source.movieCamera(config()).passed)
      #expect(source.report().problem == nil, "a second manager would be refused: \(source.report().problem ?? "")")
      _ = consume stream
    }
    #expect(fake.managersMade == 1 && fake.managerExists)
  }

  // MARK: The camera session on it

  func session(_ source: LibcameraCaptureSource, opened: any CaptureStream, config: Config, posted: Heard) throws
    -> CameraSession
  {
    let session = try CameraSession(
      config: config, opened: opened, path: opened.path, movieCameraWanted: true, loopCPU: LoopCPU(), source: source,
      loop: try EventLoop(), post: { [posted] in posted.events.append($0) })
    try session.start(optionalAndMissing: false)
    return session
  }

  @Test func theSessionStreamsALibcameraCameraLosesItAtAnUnplugAndTakesItBack() throws {
    let camera = FakeLibcameraCamera(Self.webcam)
    fake.cameras = [camera]
    let source = LibcameraCaptureSource(library: .success(fake.library))
    let posted = Heard()
    try fake.installed {
      let session = try session(source, opened: try source.open(Self.webcam.id, config().camera), config: config(), posted: posted)
      #expect(camera.started && camera.frameRate == 30)
      let picture = [UInt8](repeating: 0x80, count: 640 * 360 * 2)
      camera.complete(sequence: 10, timestampNanoseconds: 3_000_000_000, planes: [picture])
      #expect(session.ready(.readable))
      let frame = FrameInfo(sequence: 10, timestamp: Instant(nanoseconds: 3_000_000_000))
      #expect(posted.events.contains { if case .cameraFrame(let f) = $0 { f == frame } else { false } })
      #expect(session.captured(frame)?.still.bytes == picture)
      #expect(session.stillFacts()?.card == "Kiosk Webcam")

      fake.unplug(camera)
      posted.events = []
      #expect(!session.ready(.readable))
      #expect(!session.isStreaming && !camera.isOpen, "the camera is let go")
      #expect(posted.events.contains { if case .kiosk(.cameraLost) = $0 { true } else { false } })
      session.retry()
      #expect(!session.isStreaming, "not listed: not back")

      let back = FakeLibcameraCamera(Self.webcam)
      fake.cameras = [back]
      posted.events = []
      session.retry()
      #expect(session.isStreaming && back.started)
      #expect(posted.events.contains { if case .kiosk(.cameraBack) = $0 { true } else { false } })
      let verdicts = posted.events.compactMap { if case .capability(let r) = $0 { r } else { nil } }
      #expect(verdicts.map(\.capability) == [.stillCamera, .movieCamera] && verdicts.allSatisfy(\.passed))
    }
    #expect(fake.managersMade == 1)
  }

  @Test func nv12FromTwoPlanesIsKeptAsTheFramePathsReadIt() throws {
    let camera = FakeLibcameraCamera(Self.sensor)
    camera.chromaApart = true
    fake.cameras = [camera]
    let source = LibcameraCaptureSource(library: .success(fake.library))
    let posted = Heard()
    let size = Size(width: 64, height: 48)
    try fake.installed {
      let opened = try source.open(Self.sensor.id, config(format: .nv12, size: size).camera)
      let session = try session(source, opened: opened, config: config(format: .nv12, size: size), posted: posted)
      let luma = (0..<(64 * 48)).map { UInt8(truncatingIfNeeded: $0) }
      let chroma = (0..<(64 * 24)).map { UInt8(truncatingIfNeeded: $0 * 7) }
      camera.complete(sequence: 1, timestampNanoseconds: 5, planes: [luma, chroma])
      #expect(session.ready(.readable), "the frame check passes it: not short")
      let kept = try #require(session.captured(FrameInfo(sequence: 1, timestamp: Instant(nanoseconds: 5))))
      #expect(kept.still.format == .nv12 && kept.still.bytesPerLine == 64 && kept.still.height == 48)
      #expect(kept.still.bytes == luma + chroma)
      #expect(session.counts.bad == 0)
    }
  }
}
