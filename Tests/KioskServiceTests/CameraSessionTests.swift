#if canImport(Glibc)
  import Glibc
#endif
import Camera
import Foundation
import KioskCore
import LinuxIO
import Testing

@testable import KioskService

/// A capture stream as a test scripts it: frames queued by hand, every buffer counted out and back, a pipe's
/// read end for the loop to watch.
final class FakeStream: CaptureStream {
  let path: String
  let card = "Fake camera"
  let format = StreamFormat(format: .yuyv, width: 8, height: 2, bytesPerLine: 16, imageSize: 32, range: .limited)
  var zoomControl: CameraZoomRange?
  let descriptor: FileDescriptor
  private let writeEnd: CInt
  private(set) var started = false
  private(set) var stopped = false
  private(set) var lent = 0
  private(set) var zoomSet: [Int] = []
  var zoomFails = false
  var dequeueFails = false
  /// Frames the driver has filled, oldest first: a sequence number, its bytes, the driver's error flag.
  var filled: [(sequence: UInt32, bytes: [UInt8], damaged: Bool)] = []
  private var buffers: [Int: [UInt8]] = [:]

  init(_ path: String) {
    self.path = path
    var ends: [CInt] = [-1, -1]
    _ = pipe(&ends)
    descriptor = FileDescriptor(rawValue: ends[0])
    writeEnd = ends[1]
  }
  deinit {
    close(descriptor.rawValue)
    close(writeEnd)
  }

  /// A whole frame of 8x2 YUYV, or a short one.
  func fill(_ sequence: UInt32, short: Bool = false, damaged: Bool = false) {
    filled.append((sequence, [UInt8](repeating: UInt8(sequence), count: short ? 20 : 32), damaged))
  }
  static func time(_ sequence: UInt32) -> Instant { Instant(nanoseconds: Int64(sequence) * 100_000_000) }

  func start() throws(CameraError) { started = true }
  func dequeue() throws(CameraError) -> DequeuedBuffer? {
    if dequeueFails { throw .unplugged("\(path): VIDIOC_DQBUF: No such device") }
    guard !filled.isEmpty else { return nil }
    let next = filled.removeFirst()
    lent += 1
    let index = Int(next.sequence) % 4
    buffers[index] = next.bytes
    return DequeuedBuffer(
      index: index, bytesUsed: next.bytes.count,
      info: FrameInfo(sequence: next.sequence, timestamp: Self.time(next.sequence)), damaged: next.damaged)
  }
  func withBytes<Result>(of buffer: borrowing DequeuedBuffer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    buffers[buffer.index, default: []].withUnsafeBytes(body)
  }
  func requeue(_ buffer: consuming DequeuedBuffer) throws(CameraError) { lent -= 1 }
  func exposureAndGain() -> (exposure100Microseconds: Int?, gain: Int?) { (100, 2) }
  func setZoom(_ value: Int) throws(CameraError) {
    if zoomFails { throw .io(SystemCallError("VIDIOC_S_CTRL", .io)) }
    zoomSet.append(value)
  }
  func stop() { stopped = true }
}

/// Cameras a test plugs in and pulls: a path opens while a stream is queued for it.
final class FakeCameras: CaptureSource {
  var plugged: [String: FakeStream] = [:]
  private(set) var opened: [String] = []
  func open(_ path: String, _ settings: Config.Camera) throws(CameraError) -> any CaptureStream {
    opened.append(path)
    guard let stream = plugged[path] else { throw .absent("\(path): No such file or directory") }
    return stream
  }
  func find(_ config: Config) -> (result: ProbeResult, path: String?) {
    guard let path = plugged.keys.sorted().first else { return (.fail(.stillCamera, "no capture device"), nil) }
    return (.pass(.stillCamera, path), path)
  }
  func movieCamera(_ config: Config) -> ProbeResult { .pass(.movieCamera, "fake") }
}

/// The camera session's wiring without V4L2: frames into the ring and to the kiosk, bad ones counted and not
/// kept, a camera lost and tried again with backoff (at once when a node appears), the camera button's cycle,
/// the camera's own zoom control. The board's vivid and webcam tests prove the V4L2 side.
@Suite struct CameraSessionTests {
  let loop: EventLoop
  let cameras = FakeCameras()
  let first = FakeStream("/dev/video0")
  let posted = Heard()

  init() throws {
    loop = try EventLoop()
  }

  func session(movieCamera: Bool = true, edit: (inout Config) -> Void = { _ in }) throws -> CameraSession {
    var config = Config()
    config.camera.device = "/dev/video0"
    edit(&config)
    cameras.plugged[first.path] = first
    let session = try CameraSession(
      config: config, opened: first, path: first.path, movieCameraWanted: movieCamera, loopCPU: LoopCPU(),
      source: cameras, loop: loop, post: { [posted] in posted.events.append($0) })
    try session.start(optionalAndMissing: false)
    return session
  }

  var frames: [FrameInfo] { posted.events.compactMap { if case .cameraFrame(let f) = $0 { f } else { nil } } }
  var kiosk: [Event] { posted.events.compactMap { if case .kiosk(let e) = $0 { e } else { nil } } }
  var verdicts: [ProbeResult] { posted.events.compactMap { if case .capability(let r) = $0 { r } else { nil } } }
  var streamChanges: Int { posted.events.filter { if case .streamChanged = $0 { true } else { false } }.count }

  @Test func goodFramesGoIntoTheRingAndToTheKioskAndBadOnesAreCountedNotKept() throws {
    let session = try session()
    #expect(first.started && streamChanges == 1)
    first.fill(1)
    first.fill(2, short: true)
    first.fill(3, damaged: true)
    first.fill(5)
    for _ in 0..<5 { _ = session.ready(.readable) }
    #expect(frames.map(\.sequence) == [1, 5])
    #expect(first.lent == 0, "every buffer goes back to the driver")
    #expect(session.counts.short == 1 && session.counts.flaggedError == 1 && session.counts.missing == 1)
    let still = try #require(session.captured(FrameInfo(sequence: 5, timestamp: FakeStream.time(5))))
    #expect(still.still.bytes == [UInt8](repeating: 5, count: 32) && still.still.width == 8)
    #expect(session.captured(FrameInfo(sequence: 2, timestamp: FakeStream.time(2))) == nil, "a short frame is not kept")
    #expect(session.neighbours(of: FakeStream.time(3)).before?.sequence == 1)
  }

  @Test func aCameraThatGoesIsLostAndTriedAgainWithBackoffUntilItIsBack() throws {
    let session = try session()
    first.fill(1)
    _ = session.ready(.readable)
    cameras.plugged = [:]
    posted.events = []
    _ = session.ready([.readable, .error, .hangUp])
    #expect(!session.isStreaming)
    guard case .cameraLost = kiosk.first else {
      Issue.record("the kiosk hears of the loss: \(posted.events)")
      return
    }
    #expect(posted.events.contains { if case .cameraUnavailable = $0 { true } else { false } })
    #expect(verdicts.map(\.capability) == [.stillCamera, .movieCamera] && verdicts.allSatisfy { !$0.passed })
    #expect(session.captured(FrameInfo(sequence: 1, timestamp: FakeStream.time(1))) == nil, "the ring goes with it")
    // 2 s, then 4, 8, and never more than 10 s between tries while it stays away.
    var waits = [session.retryArmed]
    for _ in 0..<4 {
      session.retry()
      waits.append(session.retryArmed)
    }
    #expect(waits == [.seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
    #expect(cameras.opened == Array(repeating: "/dev/video0", count: 4))
    // Plugged back: the next try opens it, streams, and says so to the gate and the kiosk.
    let back = FakeStream("/dev/video0")
    cameras.plugged[back.path] = back
    posted.events = []
    session.retry()
    #expect(session.isStreaming && back.started)
    #expect(verdicts.map(\.capability) == [.stillCamera, .movieCamera] && verdicts.allSatisfy(\.passed))
    #expect(kiosk.count == 1)
    if case .cameraBack = kiosk.first {} else { Issue.record("the kiosk hears it is back: \(kiosk)") }
    back.fill(7)
    _ = session.ready(.readable)
    #expect(frames.map(\.sequence) == [7])
    // Lost again: the backoff starts from the beginning.
    back.dequeueFails = true
    _ = session.ready(.readable)
    #expect(!session.isStreaming && session.retryArmed == .seconds(2))
  }

  @Test func aCaptureNodeAppearingTriesAtOnceUnlessItIsAlreadyGone() throws {
    let session = try session(movieCamera: false)
    _ = session.ready(.error)
    #expect(verdicts.map(\.capability) == [.stillCamera], "no movie camera wanted, none reported")
    let folder = NSTemporaryDirectory() + "kioskcam-nodes-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    session.nodeAppeared(directory: folder, name: "usb-Fake_Camera-video-index0")
    #expect(session.retryArmed == .seconds(2), "gone again before we looked: the backoff stands")
    _ = FileManager.default.createFile(atPath: "\(folder)/usb-Fake_Camera-video-index0", contents: nil)
    session.nodeAppeared(directory: folder, name: "usb-Fake_Camera-video-index0")
    #expect(session.retryArmed == Intervals.cameraNodeSettle)
  }

  @Test func theCameraButtonSkipsACameraThatDoesNotOpenAndComesBackRound() throws {
    let session = try session { $0.camera.cycle = ["/dev/video0", "/dev/video1", "/dev/video2"] }
    let third = FakeStream("/dev/video2")
    cameras.plugged[third.path] = third
    session.nextCamera()
    #expect(cameras.opened == ["/dev/video1", "/dev/video2"])
    #expect(session.path == "/dev/video2" && third.started && streamChanges == 2)
    // From the last, round to the first.
    session.nextCamera()
    #expect(session.path == "/dev/video0" && session.isStreaming)
    // None opens: the camera is unavailable and tried again.
    cameras.plugged = [:]
    posted.events = []
    session.nextCamera()
    #expect(!session.isStreaming && session.retryArmed == .seconds(2))
    if case .cameraLost(let reason, _) = kiosk.first {
      #expect(reason == "no configured camera opens")
    } else {
      Issue.record("the kiosk hears of it: \(kiosk)")
    }
  }

  @Test func theCamerasOwnZoomControlComesFirstAndOneThatFailsIsGivenUp() throws {
    first.zoomControl = CameraZoomRange(minimum: 100, maximum: 300, step: 10)
    let session = try session { $0.capture.zoomMaximum = 400 }
    session.zoom(.zoomIn)
    #expect(first.zoomSet.count == 2, "set at open, then stepped: \(first.zoomSet)")
    #expect(first.zoomSet.last.map { $0 > 100 } == true)
    first.zoomFails = true
    let changes = streamChanges
    session.zoom(.zoomIn)
    #expect(session.zoom.controlValue == nil, "digital zoom only from here")
    #expect(streamChanges == changes + 2, "the step and the fall-back both refit the preview")
  }

  /// A libcamera camera that crops on its sensor (ScalerCrop) is set to the whole digital factor as far as its
  /// range goes: the frames it sends are already zoomed, so a still is cut only by what lies beyond the range,
  /// and its EXIF factor is the whole one.
  @Test func aSensorCropTakesTheDigitalZoomAndFramesAreCutOnlyBeyondIt() throws {
    first.zoomControl = CameraZoomRange(minimum: 100, maximum: 200, step: 1, kind: .sensorCrop)
    let session = try session { $0.capture.zoomMaximum = 400 }
    #expect(first.zoomSet == [100], "the widest crop, asked for at open")
    session.zoom(.zoomIn)
    session.zoom(.zoomIn)
    #expect(first.zoomSet == [100, 150, 200])
    first.fill(1)
    _ = session.ready(.readable)
    let sensorOnly = try #require(session.captured(FrameInfo(sequence: 1, timestamp: FakeStream.time(1))))
    #expect(sensorOnly.crop == nil && sensorOnly.zoomFactor == 200)
    session.zoom(.zoomIn)
    #expect(first.zoomSet.last == 200, "the sensor crop stays at its largest")
    let beyond = try #require(session.captured(FrameInfo(sequence: 1, timestamp: FakeStream.time(1))))
    #expect(beyond.zoomFactor == 250 && beyond.crop?.width == 6, "8 pixels cut by the 1.25x left: 6")
  }
}
