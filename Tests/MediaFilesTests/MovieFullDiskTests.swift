#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import KioskCore
import LinuxIO
import TestPeers
import Testing

@testable import CameraRoll
@testable import Capture

/// A movie stopped by a full disk (ENOSPC mid-recording) is published, cut back to its last whole fragment,
/// and with its record, even when the disk is still full when the record is written: the roll keeps a reserve
/// for records. On a real, small file system (tmpfs), so the ENOSPC is the kernel's; mounting it needs root.
@Suite(.enabled(if: getuid() == 0, "mounts a small tmpfs: run as root"))
struct MovieFullDiskTests {
  /// Writes zeros into `path` until the file system says ENOSPC; the bytes written.
  static func fill(_ path: String) -> Int {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    defer { close(fd) }
    let block = [UInt8](repeating: 0, count: 4096)
    var written = 0
    while true {
      let count = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if count <= 0 { break }
      written += count
    }
    return written
  }

  @Test func aMovieStoppedByAFullDiskIsPublishedWithItsRecord() throws {
    let root = NSTemporaryDirectory() + "kioskcam-full-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    let mount = try peer(["/bin/mount", "-t", "tmpfs", "-o", "size=3m", "kioskcam-full", root])
    try #require(mount.status == 0, "mount: \(mount.stderr)")
    defer {
      _ = try? peer(["/bin/umount", root])
      try? FileManager.default.removeItem(atPath: root)
    }
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    // Room for the header and a few fragments of 640x360 frames, then ENOSPC in the middle of one.
    let room = 600 * 1024
    let filler = "\(root)/filler"
    let available = try FileSystemSpace(path: root).availableBytes
    try Data(count: Int(available) - room).write(to: URL(fileURLWithPath: filler))
    let recorder = try MovieRecorder(
      roll: roll, width: 640, height: 360, frameRate: 25, preset: .high, sourceFormat: "YUYV", passthrough: false,
      tag: "fulldisk")
    let frame = SyntheticFrames.yuyv(width: 640, height: 360)
    var index = 0
    while recorder.writeFailure == nil, index < 2000 {
      while recorder.pending >= recorder.queueBound { usleep(1000) }
      recorder.submit(frame, timestamp: Int64(index) * 40_000_000, sequence: UInt32(index))
      index += 1
    }
    try #require(recorder.writeFailure?.contains("No space left on device") == true, "\(recorder.writeFailure ?? "no failure")")
    let result = recorder.stopAndWait()
    let summary = try result.get()
    // Whatever the cut-back freed, the disk is full again when the record is due (another writer, the filler
    // still growing): only the reserve can take it.
    _ = Self.fill(filler)
    MovieSummary.report(result)

    let records = CameraRoll.readRecords(root: root)
    let record = try #require(records[summary.item.relativePath], "the movie's record: \(records.keys)")
    #expect(record.frames == summary.frames && summary.frames > 0)
    #expect(record.bytes == summary.bytes)
    let lines = try String(contentsOfFile: "\(root)/.kioskcam-items.jsonl", encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 1, "one whole line, nothing torn: \(lines)")
    let path = "\(root)/\(summary.item.relativePath)"
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == summary.bytes)
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
      "stream=nb_read_frames", "-of", "csv=p=0", path,
    ])
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(record.frames ?? -1)", "\(probe.stderr)")
    let decode = try peer(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")
    #expect(roll.interruptedRecordings().isEmpty, "nothing left hidden")

    // Room again: the reserve is made whole by the next record.
    try FileManager.default.removeItem(atPath: filler)
    try roll.append(record)
    let reserve = try FileManager.default.attributesOfItem(atPath: "\(root)/\(CameraRoll.recordReserveFile)")
    #expect(reserve[.size] as? Int == CameraRoll.recordReserveBytes)
  }
}
