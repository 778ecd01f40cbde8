#if canImport(Glibc)
  import Glibc
#endif
import Camera
import Capture
import Dispatch
import Foundation
import KioskCore
import LinuxIO
import TestPeers
import Testing

@testable import CameraRoll
@testable import KioskService

/// The still writer with a scripted ring and a real roll in a folder: what a press saves, how it says so on
/// the loop, and what a roll that cannot be written turns into. The encoders are the real ones; the file is
/// judged by jpeginfo.
@Suite struct StillWriterTests {
  let bench: DriverBench
  let frames = FakeFrames()
  let writer = DispatchQueue(label: "still writer test")
  var root: String { bench.root }
  var heard: Heard { bench.heard }
  var posted: Heard { bench.posted }

  init() throws { bench = try DriverBench("stills") }

  func writer(_ roll: CameraRoll?, photoCheck: Duration = .zero) -> StillWriter {
    var config = Config()
    config.capture.photoCheck = photoCheck
    return StillWriter(
      config: config, source: frames, roll: roll, writer: writer, results: bench.results,
      photoCover: { (width: 32, height: 24) }, post: bench.post)
  }

  func hear(until done: @escaping ([ServiceEvent]) -> Bool) throws { try bench.hear(until: done) }

  static func saved(_ events: [ServiceEvent]) -> RollItem? {
    for case .stillSaved(let item, _, _) in events { return item }
    return nil
  }
  static func failed(_ events: [ServiceEvent]) -> String? {
    for case .stillFailed(let reason) in events { return reason }
    return nil
  }

  @Test func aPressSavesTheRingsFrameAsAWholeJPEGWithItsRecordAndItsCheck() throws {
    defer { bench.removeFolder() }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let stills = writer(roll, photoCheck: .seconds(2))
    let pressed = Instant(nanoseconds: 1_990_000_000)
    stills.save(FakeFrames.frame, pressedAt: pressed)
    try hear { Self.saved($0) != nil || Self.failed($0) != nil }
    let item = try #require(Self.saved(heard.events), "\(heard.events)")
    #expect(item.relativePath == "DCIM/100KIOSK/IMG_0001.JPG")
    // The photo check's picture, decoded from the file on the roll, comes before the save's news.
    let decoded = heard.events.firstIndex { if case .stillDecoded(name: item.relativePath, _) = $0 { true } else { false } }
    #expect(decoded != nil && decoded! < heard.events.count - 1, "\(heard.events)")

    let path = "\(root)/\(item.relativePath)"
    let (status, verdict, _) = try peer(["/usr/bin/jpeginfo", "-c", path])
    let words = verdict.split(whereSeparator: \.isWhitespace).dropFirst().joined(separator: " ")
    #expect(status == 0 && words.hasPrefix("64 x 48 24bit") && words.hasSuffix("OK"), "\(verdict)")

    let listed = CameraRoll.list(root: root)
    #expect(listed.map(\.file) == [item.relativePath])
    let record = try #require(listed.first?.record)
    #expect(record.bytes == listed.first?.bytes)
    #expect(record.frameSequence == 41)
    #expect(record.shutterLagMilliseconds == 10)
    #expect(record.exposure100Microseconds == 333 && record.gain == 7)
    #expect(posted.events.isEmpty, "nothing posted on the loop's own path: \(posted.events)")
  }

  @Test func aFrameGoneFromTheRingFailsAtOnceAndWritesNothing() throws {
    defer { bench.removeFolder() }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    frames.ring = []
    writer(roll).save(FakeFrames.frame, pressedAt: Instant(nanoseconds: 1_990_000_000))
    guard case .stillFailed(let reason) = posted.events.first, posted.events.count == 1 else {
      Issue.record("one stillFailed, posted on the loop: \(posted.events)")
      return
    }
    #expect(reason.contains("no longer in the ring"))
    writer.sync {}
    #expect(CameraRoll.list(root: root).isEmpty)
  }

  @Test func aRetakeTakesThePhotoOffTheRollAndListsItAgain() throws {
    defer { bench.removeFolder() }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let stills = writer(roll)
    stills.save(FakeFrames.frame, pressedAt: Instant(nanoseconds: 1_990_000_000))
    try hear { Self.saved($0) != nil }
    let item = try #require(Self.saved(heard.events))
    stills.discard(item.relativePath)
    try hear { events in events.contains { if case .rollListed = $0 { true } else { false } } }
    for case .rollListed(let entries) in heard.events {
      #expect(entries.isEmpty, "\(entries)")
    }
    #expect(!FileManager.default.fileExists(atPath: "\(root)/\(item.relativePath)"))
    // Its number is not used again.
    stills.save(FakeFrames.frame, pressedAt: Instant(nanoseconds: 1_990_000_000))
    heard.events = []
    try hear { Self.saved($0) != nil }
    #expect(Self.saved(heard.events)?.relativePath == "DCIM/100KIOSK/IMG_0002.JPG")
  }

  /// A card remounted read-only under the roll (what ext4 does after a write error): the press fails, and
  /// the storage is reported failed, which keeps it "not available" until it is mounted again.
  @Test(.enabled(if: getuid() == 0, "mounts a tmpfs: run as root"))
  func aRollThatCannotBeWrittenFailsThePressAndTheStorage() throws {
    defer { bench.removeFolder() }
    try bench.withReadOnlyRoll { roll in
      writer(roll).save(FakeFrames.frame, pressedAt: Instant(nanoseconds: 1_990_000_000))
      try hear { Self.failed($0) != nil && heard.storageFailed }
    }
    #expect(Self.failed(heard.events)?.contains("Read-only file system") == true, "\(heard.events)")
    #expect(Self.saved(heard.events) == nil)
    #expect(heard.cardFailures.map(\.0) == [.readOnly] && heard.cardFailures.map(\.1) == [.still], "\(heard.cardFailures)")
  }

  /// A retake on a card gone read-only since the photo was published: the photo stays (it cannot go), and
  /// the card's failure is reported as a save's is, not only logged.
  @Test(.enabled(if: getuid() == 0, "mounts a tmpfs: run as root"))
  func aRetakeTheCardRefusesIsReportedAsTheCardsFailure() throws {
    defer { bench.removeFolder() }
    try #require(try peer(["/bin/mount", "-t", "tmpfs", "-o", "size=4m", "kioskcam-bench", root]).status == 0)
    defer { _ = try? peer(["/bin/umount", root]) }
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let stills = writer(roll)
    stills.save(FakeFrames.frame, pressedAt: Instant(nanoseconds: 1_990_000_000))
    try hear { Self.saved($0) != nil }
    let item = try #require(Self.saved(heard.events))
    try #require(try peer(["/bin/mount", "-o", "remount,ro", root]).status == 0)
    stills.discard(item.relativePath)
    try hear { _ in heard.storageFailed }
    #expect(heard.cardFailures.map(\.0) == [.readOnly] && heard.cardFailures.map(\.1) == [.retake], "\(heard.cardFailures)")
    #expect(FileManager.default.fileExists(atPath: "\(root)/\(item.relativePath)"))
  }
}
