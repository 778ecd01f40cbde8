import Camera
import Capture
import Foundation
import KioskCore
import LinuxIO
import TestPeers
import Testing

@testable import CameraRoll
@testable import KioskService

/// A camera's ring as a test fills it: one YUYV frame of grey ramps, the facts a still's EXIF wants.
final class FakeFrames: FrameSource {
  static let frame = FrameInfo(sequence: 41, timestamp: Instant(nanoseconds: 2_000_000_000))
  let width = 64
  let height = 48
  var ring: [FrameInfo] = [frame]

  init(streaming: Bool = false) {
    if streaming {
      streamFormat = StreamFormat(
        format: .yuyv, width: width, height: height, bytesPerLine: width * 2, imageSize: width * height * 2,
        range: .limited)
    }
  }
  /// Nil: no camera streams.
  var streamFormat: StreamFormat?
  var zoom: Zoom { Zoom() }

  func bytes(of frame: FrameInfo) -> [UInt8]? {
    guard ring.contains(frame) else { return nil }
    // YUYV: luma ramps across, chroma neutral.
    return (0..<height).flatMap { _ in (0..<width).flatMap { x in [UInt8(16 + x * 3), 128] } }
  }
  func captured(_ frame: FrameInfo) -> CapturedFrame? {
    bytes(of: frame).map { bytes in
      let still = StillFrame(
        format: .yuyv, width: width, height: height, bytesPerLine: width * 2, range: .limited, bytes: bytes)
      return CapturedFrame(frame: frame, still: still, crop: nil, zoomFactor: 100)
    }
  }
  func stillFacts() -> (card: String, controls: (exposure100Microseconds: Int?, gain: Int?))? {
    ("Fake camera", (exposure100Microseconds: 333, gain: 7))
  }
  func neighbours(of instant: Instant) -> (before: FrameInfo?, after: FrameInfo?) { (nil, ring.first) }
}

/// What the loop heard from the drivers' workers, through their mailbox (or what a driver posted itself).
final class Heard {
  var events: [ServiceEvent] = []
  var storageFailed: Bool { !cardFailures.isEmpty }
  /// The card's failures reported, with the write each was heard in.
  var cardFailures: [(StorageFault, RollWrite)] {
    events.compactMap { if case .storageFailed(let fault, let write, _) = $0 { (fault, write) } else { nil } }
  }
}

/// Runs `loop` until `done()` holds, checked every 5 ms; 30 s without it is an error, so a wait that never
/// ends fails its test rather than stalling it or letting it go on to check nothing.
func run(_ loop: EventLoop, until done: @escaping () -> Bool) throws {
  let deadline = try LoopTimer(loop: loop) { [loop] in loop.stop() }
  try deadline.arm(after: 30_000_000_000)
  let check = try LoopTimer(loop: loop) { [loop] in if done() { loop.stop() } }
  try check.arm(after: 1_000_000, interval: 5_000_000)
  try loop.run()
  guard done() else { throw ScriptedTimeout() }
}

struct ScriptedTimeout: Error, CustomStringConvertible {
  var description: String { "what the test waited for did not happen within 30 s" }
}

/// A driver under test with a real roll: a folder of its own, the loop, the workers' mailbox on it and what
/// came through it (`heard`), and what the driver posted on the loop's own path (`posted`).
struct DriverBench {
  let root: String
  let loop: EventLoop
  let results: Mailbox<ServiceEvent>
  let heard = Heard()
  let posted = Heard()

  init(_ name: String) throws {
    root = NSTemporaryDirectory() + "kioskcam-\(name)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    loop = try EventLoop()
    results = try Mailbox()
    try results.attach(to: loop) { [heard] in heard.events.append($0) }
  }

  /// Runs the loop until `done` says so about what the mailbox brought.
  func hear(until done: @escaping ([ServiceEvent]) -> Bool) throws {
    try run(loop) { [heard] in done(heard.events) }
  }

  func post(_ event: ServiceEvent) { posted.events.append(event) }

  /// The roll on a tmpfs of its own, remounted read-only once the roll is open on it: a card gone read-only
  /// under the service, as ext4 leaves one after a write error. Root only; unmounted after `body`.
  func withReadOnlyRoll(_ body: (CameraRoll) throws -> Void) throws {
    try #require(try peer(["/bin/mount", "-t", "tmpfs", "-o", "size=4m", "kioskcam-bench", root]).status == 0)
    defer { _ = try? peer(["/bin/umount", root]) }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    try #require(try peer(["/bin/mount", "-o", "remount,ro", root]).status == 0)
    try body(roll)
  }

  func removeFolder() { try? FileManager.default.removeItem(atPath: root) }
}
