import CameraRoll
import Dispatch
import Foundation
import Imaging
import KioskCore
import Capture
import Synchronization
import TestPeers
import Testing

/// The movie presets through the recorder the service uses, read back by ffprobe and ffmpeg: size, picture
/// and bytes.
struct MoviePresetTests {
  /// Records `frames` synthetic 1920x1080 YUYV frames 40 ms apart; the finished file's path and size.
  static func record(
    _ preset: MovieQuality, frames: Int = 6, crop: PixelRect? = nil
  ) throws -> (path: String, bytes: Int, root: String) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-preset-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recorder = try MovieRecorder(
      roll: roll, width: 1920, height: 1080, frameRate: 25, preset: preset, sourceFormat: "YUYV", passthrough: false,
      tag: "preset")
    let frame = SyntheticFrames.yuyv(width: 1920, height: 1080)
    for index in 0..<frames {
      while recorder.pending >= recorder.queueBound { usleep(1000) }
      recorder.submit(frame, timestamp: Int64(index) * 40_000_000, sequence: UInt32(index), crop: crop)
    }
    let summary = try recorder.stopAndWait().get()
    #expect(summary.frames == frames)
    return ("\(root)/\(summary.item.relativePath)", summary.bytes, root)
  }

  /// The movie's first frame as ffmpeg decodes it, in grey, one byte a pixel.
  static func firstFrameGrey(_ movie: (path: String, bytes: Int, root: String)) throws -> [UInt8] {
    let grey = movie.root + "/first.gray"
    let extract = try peer([
      "/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", movie.path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt",
      "gray", grey,
    ])
    #expect(extract.status == 0 && extract.stderr.isEmpty, "ffmpeg: \(extract.stderr)")
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: grey)))
  }

  @Test(arguments: [
    (MovieQuality.high, 1920, 1080), (MovieQuality.medium, 960, 540), (MovieQuality.low, 480, 270),
  ])
  func aPresetRecordsAtItsSizeAndFFmpegReadsIt(preset: MovieQuality, width: Int, height: Int) throws {
    let movie = try Self.record(preset)
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
      "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", movie.path,
    ])
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,\(width),\(height),6", "\(probe.stderr)")
    // The first frame in grey: the synthetic picture is bright on the left half and dark on the right, and
    // a downscale must keep it so (limited-range 200 and 40 expand to about 215 and 28).
    let pixels = try Self.firstFrameGrey(movie)
    try #require(pixels.count == width * height)
    let row = height / 2 * width
    #expect(abs(Int(pixels[row + width / 4]) - 215) <= 6, "left \(pixels[row + width / 4])")
    #expect(abs(Int(pixels[row + width * 3 / 4]) - 28) <= 6, "right \(pixels[row + width * 3 / 4])")
  }

  /// A zoom's crop reaches the movie: the bright left half alone, scaled back to the frame's size, is bright
  /// from edge to edge (unzoomed, the right half is dark).
  @Test func aZoomedRecordingIsTheCropScaledBack() throws {
    let movie = try Self.record(.medium, crop: PixelRect(x: 0, y: 0, width: 960, height: 1080))
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let pixels = try Self.firstFrameGrey(movie)
    try #require(pixels.count == 960 * 540)
    let row = 270 * 960
    for x in [40, 480, 920] { #expect(abs(Int(pixels[row + x]) - 215) <= 6, "x \(x): \(pixels[row + x])") }
  }

  @Test func lowerPresetsMakeSmallerFiles() throws {
    let sizes = try [MovieQuality.high, .medium, .low].map { preset in
      let movie = try Self.record(preset)
      try? FileManager.default.removeItem(atPath: movie.root)
      return movie.bytes
    }
    #expect(sizes[0] > sizes[1] && sizes[1] > sizes[2], "high, medium, low: \(sizes) bytes")
  }
}
