import CameraRoll
import Capture
import Foundation
import KioskCore
import MediaFiles
import Testing
import TestPeers

/// The start-up recovery (`RollRecovery`, which `kioskcam run` and `kioskcam roll recover` both call) on a roll
/// as a power cut leaves it, judged by the file system and by ffmpeg.
@Suite struct RollRecoveryTests {
  /// A half-written still, a recording cut mid-fragment and a recording with no complete fragment: afterwards
  /// no hidden name is left, the cut recording is a published movie ffmpeg decodes without a word and whose
  /// record says recovered, and the empty one is gone; a second run finds nothing to do.
  @Test func aPowerCutRollIsPutRightAndASecondRunDoesNothing() throws {
    let root = NSTemporaryDirectory() + "kioskcam-recover-\(UUID().uuidString)"
    let folder = "\(root)/DCIM/100TESTS"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    var writer = MovieWriter(width: MovieFilesTests.width, height: MovieFilesTests.height, fragmentLimit: 500_000_000)
    var file = writer.start()
    for frame in try MovieFilesTests.frames(40) {
      if let piece = writer.append(frame.jpeg, timestamp: frame.timestamp) { file += piece }
    }
    // Cut inside the last fragment, as a power cut does: the complete fragments before it are the movie.
    try Data(file.dropLast(100)).write(to: URL(fileURLWithPath: "\(folder)/\(CameraRoll.recordingPrefix)cut.MOV"))
    try Data(file.prefix(40)).write(to: URL(fileURLWithPath: "\(folder)/\(CameraRoll.recordingPrefix)empty.MOV"))
    try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: "\(folder)/.tmp-1234.JPG"))

    let roll = try CameraRoll(root: root, suffix: "TESTS")
    #expect(roll.sweptAtOpen == ["DCIM/100TESTS/.tmp-1234.JPG"])
    let results = RollRecovery.run(roll)
    let movies = results.compactMap { try? $0.get() }
    #expect(results.count == 2 && movies.count == 1, "\(results)")
    let empty = results.contains {
      if case .failure(.nothingToRecover(let name)) = $0 { name == "100TESTS/\(CameraRoll.recordingPrefix)empty.MOV" } else { false }
    }
    #expect(empty, "the recording with no complete fragment is said to be removed: \(results)")
    let movie = try #require(movies.first)

    let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(left == [String(movie.item.relativePath.split(separator: "/").last!)], "only the movie: \(left)")
    let decode = try peer(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", "\(root)/\(movie.item.relativePath)", "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")
    #expect(movie.frames > 0 && movie.frames < 40, "cut short: \(movie.frames)")
    let record = try #require(CameraRoll.readRecords(root: root)[movie.item.relativePath])
    #expect(record.recovered == true && record.frames == movie.frames, "\(record)")

    let again = try CameraRoll(root: root, suffix: "TESTS")
    #expect(again.sweptAtOpen.isEmpty)
    #expect(RollRecovery.run(again).isEmpty)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == left)
  }
}
