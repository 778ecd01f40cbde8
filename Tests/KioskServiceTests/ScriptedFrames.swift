import Camera
import Capture
import Foundation
import KioskCore
import LinuxIO

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

/// What the loop heard from the drivers' workers, through their mailbox.
final class Heard { var events: [ServiceEvent] = [] }

/// Runs `loop` until `done()` holds, checked every 5 ms (30 s at most: a hang fails the test, never stalls it).
func run(_ loop: EventLoop, until done: @escaping () -> Bool) throws {
  let deadline = try LoopTimer(loop: loop) { [loop] in loop.stop() }
  try deadline.arm(after: 30_000_000_000)
  let check = try LoopTimer(loop: loop) { [loop] in if done() { loop.stop() } }
  try check.arm(after: 1_000_000, interval: 5_000_000)
  try loop.run()
}

/// Runs `loop` until `done` says so about what `heard` holds.
func listen(_ loop: EventLoop, _ heard: Heard, until done: @escaping ([ServiceEvent]) -> Bool) throws {
  try run(loop) { done(heard.events) }
}
