import CameraRoll
import Dispatch
import Foundation
import KioskCore
import LinuxIO
import Synchronization
import Testing

@testable import Capture

/// The loop hands frames to the recorder and reads its counters while the writer is stuck in an fsync, as
/// it is on a stalling SD card: the hand-over never waits for the writer's I/O.
struct MovieHandOverTests {
  /// The recording's real file, with an fsync that blocks once armed until the test releases it.
  final class StallingFile: RecordingOutput {
    let inner: RecordingFile
    private let armed = Mutex(false)
    private let stalledNow = Mutex(false)
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    init(_ inner: RecordingFile) { self.inner = inner }

    func arm() { armed.withLock { $0 = true } }
    var isStalled: Bool { stalledNow.withLock { $0 } }

    func append(_ bytes: [UInt8]) throws(SystemCallError) { try inner.append(bytes) }
    func write(_ bytes: [UInt8], at offset: UInt64) throws(SystemCallError) { try inner.write(bytes, at: offset) }
    func truncate(to length: UInt64) throws(SystemCallError) { try inner.truncate(to: length) }
    func size() throws(SystemCallError) -> UInt64 { try inner.size() }
    func sync() throws(SystemCallError) {
      let stall = armed.withLock { armed in
        defer { armed = false }
        return armed
      }
      if stall {
        stalledNow.withLock { $0 = true }
        entered.signal()
        release.wait()
        stalledNow.withLock { $0 = false }
      }
      try inner.sync()
    }
  }

  @Test func submittingAndCountingDoNotWaitForAStalledFsync() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-handover-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recording = try roll.createRecording(tag: "handover")
    let file = StallingFile(recording)
    let recorder = try MovieRecorder(
      roll: roll, recording: recording, output: file, width: 64, height: 48, frameRate: 10, preset: .high,
      sourceFormat: "YUYV", passthrough: false, tag: "handover")
    file.arm()
    let frame = SyntheticFrames.yuyv(width: 64, height: 48)
    // What the loop does every frame, on a thread of its own (as the loop is: not one of Dispatch's workers,
    // which the encoders and the writer need) so that a wait would be seen, not hang the test:
    // frames 100 ms apart until the first full fragment's fsync stalls the writer, then two more and the
    // counters the overlay reads.
    let done = DispatchSemaphore(value: 0)
    let seen = Mutex<(submitted: Int, duringStall: Bool, dropped: Int, failure: String?)>((0, false, 0, nil))
    Thread.detachNewThread {
      var index = 0
      // Each frame written before the next (the queue never fills, however slowly the encoders get a
      // thread while other tests run), until one completes a fragment and the writer stalls in its fsync.
      while !file.isStalled, index < 50 {
        recorder.submit(frame, timestamp: Int64(index) * 100_000_000, sequence: UInt32(index))
        index += 1
        let deadline = DispatchTime.now() + .seconds(60)
        while recorder.pending > 0, !file.isStalled, DispatchTime.now() < deadline { usleep(1000) }
      }
      let stalled = file.isStalled
      for _ in 0..<2 {
        recorder.submit(frame, timestamp: Int64(index) * 100_000_000, sequence: UInt32(index))
        index += 1
      }
      let counts = (index, stalled && file.isStalled, recorder.dropped, recorder.writeFailure)
      seen.withLock { $0 = counts }
      done.signal()
    }
    #expect(file.entered.wait(timeout: .now() + .seconds(60)) == .success, "no fragment was ever synced")
    let handedOver = done.wait(timeout: .now() + .seconds(30)) == .success
    #expect(handedOver, "the hand-over waited for the writer's fsync")
    let counts = seen.withLock { $0 }
    #expect(counts.duringStall, "the frames were handed over while the writer was inside the fsync")
    #expect(counts.dropped == 0)
    #expect(counts.failure == nil)

    file.release.signal()
    if !handedOver { _ = done.wait(timeout: .now() + .seconds(30)) }
    let summary = try recorder.stopAndWait().get()
    #expect(summary.frames == seen.withLock { $0.submitted }, "every frame handed over is in the movie")
    #expect(summary.dropped == 0)
  }
}
