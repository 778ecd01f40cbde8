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

/// A recording on a file system with a largest file (FAT's 4 GiB) asks to be stopped while there is still room
/// below it to finish, and the movie it then finishes is whole and under the limit. The limit here is a small
/// one given to the recorder; on the board's vfat card it is the file system's own (StorageDeviceTests).
struct MovieLargestFileTests {
  @Test func aRecordingAsksToStopBelowTheLargestFileAndFinishesUnderIt() throws {
    let root = NSTemporaryDirectory() + "kioskcam-largest-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recording = try roll.createRecording(tag: "largest")
    let largest: UInt64 = 2 << 20
    let recorder = try MovieRecorder(
      roll: roll, recording: recording, output: recording, width: 640, height: 360, frameRate: 25, preset: .high,
      sourceFormat: "YUYV", passthrough: false, tag: "largest", largestFile: largest)
    let frame = SyntheticFrames.yuyv(width: 640, height: 360)
    var index = 0
    // What the loop does: a frame at a time, and a look at the recorder's word after each.
    while !recorder.reachedLargestFile, recorder.writeFailure == nil, index < 2000 {
      while recorder.pending >= recorder.queueBound { usleep(1000) }
      recorder.submit(frame, timestamp: Int64(index) * 40_000_000, sequence: UInt32(index))
      index += 1
    }
    #expect(recorder.reachedLargestFile, "after \(index) frames")
    #expect(recorder.writeFailure == nil)
    // Two more frames come while the kiosk's stop is on its way.
    for extra in 0..<2 {
      recorder.submit(frame, timestamp: Int64(index + extra) * 40_000_000, sequence: UInt32(index + extra))
    }
    let summary = try recorder.stopAndWait().get()
    let path = "\(root)/\(summary.item.relativePath)"
    let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    // Asked at three quarters of the limit (a limit this small keeps a quarter of itself as room).
    #expect(size <= Int(largest), "\(size) bytes against the largest file's \(largest)")
    #expect(size >= Int(largest) * 3 / 4, "it stopped at \(size) bytes, short of where it should have asked")
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
      "stream=nb_read_frames", "-of", "csv=p=0", path,
    ])
    #expect(probe.status == 0 && probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(summary.frames)")
  }

  @Test func aFileSystemWithoutALimitAMovieCanReachHasNone() throws {
    // The tests' own file system (ext4 or tmpfs here; FAT is the board's vfat card).
    #expect(try FileSystemSpace(path: NSTemporaryDirectory()).largestFile == nil)
  }
}
