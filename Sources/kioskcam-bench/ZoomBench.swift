import CameraRoll
import Dispatch
import Foundation
import Imaging
import KioskCore
import Capture
import Synchronization

/// `kioskcam-bench zoom`: what the digital zoom costs an MJPEG camera. A still at 2.0x is decoded, cut, scaled
/// back and compressed again where an unzoomed one keeps the camera's JPEG; beside ffmpeg doing the same
/// (decode, crop, bilinear scale, MJPEG encode) to the same frame. Then a movie, passthrough and zoomed.
func zoomBench() throws {
  print("zoom: MJPEG (4:2:2, quality \(quality)) at 2.0x, medians in ms of CPU time; movies in frames per second (wall)")
  print("size        still 1.0x  still 2.0x  ffmpeg 2.0x | ours/ffmpeg | movie 1.0x  movie 2.0x")
  for (width, height) in [(1280, 720), (1920, 1080)] {
    let jpeg = try StillPipeline.encode(syntheticFrame(.yuyv, width: width, height: height), quality: quality).jpeg
    let frame = StillFrame(format: .mjpeg, width: width, height: height, bytesPerLine: 0, range: .full, bytes: jpeg)
    var zoom = Zoom(maximum: 400, step: 100)
    _ = zoom.apply(.zoomIn)
    let cut = zoom.crop(width: width, height: height)
    let crop = PixelRect(x: cut.x, y: cut.y, width: cut.width, height: cut.height)
    // Unzoomed, the still pipeline still decodes the frame once, for the thumbnail.
    let plain = try median(9) { _ = try StillPipeline.encode(frame, quality: quality) }
    let zoomed = try median(9) { _ = try StillPipeline.encode(frame, quality: quality, crop: crop) }
    var ffmpegTime: Double?
    if let ffmpeg = which("ffmpeg") {
      let input = "\(workDirectory)/zoom-\(width).jpg"
      try Data(jpeg).write(to: URL(fileURLWithPath: input))
      // image2's loop, not -stream_loop: the mjpeg demuxer repeats the timestamps and the encoder stops at once.
      func ffmpegRun(_ frames: Int) throws {
        try run([
          ffmpeg, "-v", "error", "-y", "-loop", "1", "-framerate", "25", "-i", input, "-frames:v", "\(frames)", "-vf",
          "crop=\(crop.width):\(crop.height):\(crop.x):\(crop.y),scale=\(width):\(height):flags=bilinear", "-c:v",
          "mjpeg", "-q:v", "2", "-f", "null", "-",
        ])
      }
      let one = try median(5, clock: childrenCPU) { try ffmpegRun(1) }
      let lots = try median(5, clock: childrenCPU) { try ffmpegRun(30) }
      ffmpegTime = max(0, (lots - one) / 29)
    }
    func movie(_ crop: PixelRect?) throws -> Double {
      let frames = 60
      let rollPath = "\(workDirectory)/zoom-roll-\(width)-\(crop == nil ? 1 : 2)"
      try FileManager.default.createDirectory(atPath: rollPath, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: rollPath) }
      let recorder = try MovieRecorder(
        roll: try CameraRoll(root: rollPath, suffix: "BENCH"), width: width, height: height, frameRate: 25,
        preset: .high, sourceFormat: "MJPG", passthrough: true, tag: "zoom")
      let start = now()
      for index in 0..<frames {
        while recorder.pending >= recorder.queueBound { usleep(200) }
        recorder.submit(frame, timestamp: Int64(index) * 40_000_000, sequence: UInt32(index), crop: crop)
      }
      guard (try? recorder.stopAndWait().get())?.frames == frames else { throw BenchFailure.lostFrames }
      return Double(frames) / (Double(now() - start) / 1e9)
    }
    let label = "\(width)x\(height)".padding(toLength: 11, withPad: " ", startingAt: 0)
    let ratio = ffmpegTime.map { $0 > 0 ? format(zoomed / $0) : "-" } ?? "-"
    // The movies run after the still figures are taken: the recorder's encoders run on every core.
    print(
      "\(label) \(format(plain).leftPadded(10)) \(format(zoomed).leftPadded(11)) \((ffmpegTime.map(format) ?? "-").leftPadded(12)) | \(ratio.leftPadded(11)) | \(format(try movie(nil)).leftPadded(10)) \(format(try movie(crop)).leftPadded(11))")
  }
  print("ffmpeg: one process for 30 copies of the frame (CPU time of all its threads), per-frame slope, -q:v 2")
  print("(not IJG quality: closest).")
  print("Ratios below 1 mean ours is faster. A zoomed MJPEG movie pays a decode and an encode for every frame.")
}
