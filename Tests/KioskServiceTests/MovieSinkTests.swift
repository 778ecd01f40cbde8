#if canImport(Glibc)
  import Glibc
#endif
import Capture
import Foundation
import KioskCore
import LinuxIO
import TestPeers
import Testing

@testable import CameraRoll
@testable import KioskService

/// The movie sink between the kiosk's start and stop, over a scripted ring and a real roll in a folder:
/// Motion-JPEG through the real encoders and writer, the file judged by ffprobe.
@Suite struct MovieSinkTests {
  let bench: DriverBench
  let frames = FakeFrames(streaming: true)
  var root: String { bench.root }
  var heard: Heard { bench.heard }
  var posted: Heard { bench.posted }

  init() throws { bench = try DriverBench("movies") }

  func sink(_ roll: CameraRoll?) -> MovieSink {
    var config = Config()
    config.camera.frameRate = 10
    return MovieSink(
      config: config, source: frames, roll: roll, codec: .mjpeg, results: bench.results, post: bench.post)
  }

  /// Frame `n` of a 10 fps camera.
  func frame(_ n: UInt32) -> FrameInfo {
    FrameInfo(sequence: n, timestamp: Instant(nanoseconds: 1_000_000_000 + Int64(n) * 100_000_000))
  }

  static func saved(_ events: [ServiceEvent]) -> MovieSummary? {
    for case .movieSaved(let summary) in events { return summary }
    return nil
  }
  static func ended(_ events: [ServiceEvent]) -> Bool {
    events.contains { if case .movieSaved = $0 { true } else if case .movieFailed = $0 { true } else { false } }
  }

  /// Handed at once after the start, while the recording is still being opened: what waits goes into the
  /// movie, what the waiting queue cannot hold and what the camera lost (a gap in its sequence) is dropped,
  /// and nothing is unaccounted for.
  @Test func everyFrameOfTheMovieIsInTheFileOrCountedDropped() throws {
    defer { bench.removeFolder() }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let numbers = Array(UInt32(1)...5) + Array(UInt32(9)...14)  // 6, 7 and 8 lost by the camera
    frames.ring = numbers.map(frame)
    let movies = sink(roll)
    movies.start(at: frame(1).timestamp)
    #expect(movies.isRecording)
    for n in numbers { movies.record(frame(n)) }
    movies.stop(at: frame(15).timestamp)
    #expect(!movies.isRecording)
    try bench.hear(until: Self.ended)
    let summary = try #require(Self.saved(heard.events), "\(heard.events)")
    #expect(summary.frames + summary.dropped == 14, "\(summary.frames) frames, \(summary.dropped) dropped")
    #expect(summary.dropped >= 3, "the camera's gap is counted")
    #expect(summary.frames >= 2 && !summary.recovered && summary.writeError == nil)

    let path = "\(root)/\(summary.item.relativePath)"
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
      "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", path,
    ])
    #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr)")
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,64,48,\(summary.frames)", "\(probe.stdout)")
    let decode = try peer(["/usr/bin/ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode.stderr)")
    #expect(CameraRoll.list(root: root).map(\.file) == [summary.item.relativePath])
    let folder = (path as NSString).deletingLastPathComponent
    let hidden = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".") }
    #expect(hidden.isEmpty, "nothing half-written left beside it: \(hidden)")
    #expect(posted.events.isEmpty, "\(posted.events)")
  }

  /// SIGTERM a moment after a stop: the service goes only once the movie stopped is published and its record
  /// (appended after the publish) written.
  @Test func aMovieStoppedJustBeforeTheServiceStopsIsPublishedAndRecordedFirst() throws {
    defer { bench.removeFolder() }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    frames.ring = (1...6).map(frame)
    let movies = sink(roll)
    movies.start(at: frame(1).timestamp)
    for n in UInt32(1)...6 { movies.record(frame(n)) }
    movies.stop(at: frame(7).timestamp)
    movies.finishAtExit()
    let listed = CameraRoll.list(root: root).map(\.file)
    #expect(listed.count == 1 && listed[0].hasSuffix(".MOV"), "\(listed)")
    let records = CameraRoll.readRecords(root: root)
    #expect(listed.allSatisfy { records[$0]?.mediaType == "movie" }, "records: \(records)")
  }

  @Test func withoutACameraStreamingTheStartFailsAtOnce() throws {
    defer { bench.removeFolder() }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    frames.streamFormat = nil
    let movies = sink(roll)
    movies.start(at: frame(1).timestamp)
    #expect(!movies.isRecording)
    guard case .kiosk(.movieFailed(let reason, _)) = posted.events.first, posted.events.count == 1 else {
      Issue.record("one movieFailed for the kiosk: \(posted.events)")
      return
    }
    #expect(reason.contains("no camera"))
  }

  /// A card remounted read-only under the roll: the recording cannot be opened, and the storage is reported
  /// failed (as a still's save reports it), so the screen says "Storage not available" until it is back.
  @Test(.enabled(if: getuid() == 0, "mounts a tmpfs: run as root"))
  func aRollThatCannotBeWrittenFailsTheMovieAndTheStorage() throws {
    defer { bench.removeFolder() }
    frames.ring = [frame(1)]
    try bench.withReadOnlyRoll { roll in
      let movies = sink(roll)
      movies.start(at: frame(1).timestamp)
      movies.record(frame(1))
      try bench.hear { Self.ended($0) && heard.storageFailed }
      movies.stop(at: frame(2).timestamp)
    }
    var reason: String?
    for case .movieFailed(let r) in heard.events { reason = r }
    #expect(reason?.contains("Read-only file system") == true, "\(heard.events)")
    #expect(heard.cardFailures.first.map { [$0.0 == .readOnly, $0.1 == .movie] } == [true, true], "\(heard.cardFailures)")
  }
}
