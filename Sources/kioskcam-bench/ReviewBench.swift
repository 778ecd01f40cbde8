#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import KioskService

/// Review mode's "next": a roll photo read from its file, decoded at the DCT scale that fits the screen and
/// scaled into a 1280x800 display buffer, against ffmpeg decoding the same file and scaling it to the same
/// box (per-frame slope of one process looping the file), and ffmpeg given the same DCT shortcut (`-lowres`).
@MainActor func reviewBench() throws {
  let (screenWidth, screenHeight) = (1280, 800)
  print("")
  print("review: roll photo (quality \(quality), 4:2:2) to a \(screenWidth)x\(screenHeight) screen, CPU ms per picture, medians")
  print("photo        scale |  ours   wall | ffmpeg  lowres | ffmpeg/ours lowres/ours")
  for (width, height) in [(1920, 1080), (4000, 3000)] {
    let jpeg = try StillPipeline.encode(syntheticFrame(.yuyv, width: width, height: height), quality: quality).jpeg
    let path = "\(workDirectory)/review-\(width).jpg"
    try Data(jpeg).write(to: URL(fileURLWithPath: path))
    let stride = screenWidth * 4
    var screen = [UInt8](repeating: 0, count: stride * screenHeight)
    var denominator = 0
    func next() throws {
      // From the file, as review mode reads it (from the page cache after the first run).
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
      let fitted = try bytes.withUnsafeBytes { jpeg in
        try FittedPicture.decode(jpeg, screenWidth: screenWidth, screenHeight: screenHeight, orientation: .init())
      }
      denominator = fitted.picture.denominator
      screen.withUnsafeMutableBytes { fitted.draw(into: $0, width: screenWidth, height: screenHeight, stride: stride) }
    }
    let runs = width > 2000 ? 9 : 15
    let ours = try median(runs) { try next() }
    let wall = try median(runs, clock: now) { try next() }
    var ffmpegTimes: [Double?] = [nil, nil]
    if let ffmpeg = which("ffmpeg") {
      // lowres 1, 2, 3 are ffmpeg's 1/2, 1/4, 1/8: the scale ours chose.
      let lowres = [1: 0, 2: 1, 4: 2, 8: 3][denominator] ?? 0
      for (column, level) in [0, lowres].enumerated() {
        func ffmpegRun(_ frames: Int) throws {
          try run([
            ffmpeg, "-v", "error", "-lowres", "\(level)", "-loop", "1", "-i", path, "-frames:v", "\(frames)", "-vf",
            "scale=\(screenWidth):\(screenHeight):force_original_aspect_ratio=decrease:flags=neighbor", "-pix_fmt", "bgr0",
            "-f", "null", "-",
          ])
        }
        let many = width > 2000 ? 10 : 30
        let one = try median(5, clock: childrenCPU) { try ffmpegRun(1) }
        let lots = try median(5, clock: childrenCPU) { try ffmpegRun(many) }
        ffmpegTimes[column] = max(0, (lots - one) / Double(many - 1))
      }
    }
    let label = "\(width)x\(height)".padding(toLength: 12, withPad: " ", startingAt: 0)
    let peers = ffmpegTimes.map { $0.map(format)?.leftPadded(6) ?? "     -" }
    let ratios = ffmpegTimes.map { time in time.map { format($0 / ours) }?.leftPadded(11) ?? "          -" }
    print("\(label) 1/\(denominator)   | \(format(ours).leftPadded(5)) \(format(wall).leftPadded(6)) | \(peers[0])  \(peers[1]) | \(ratios[0]) \(ratios[1])")
  }
  print("ours: read the file, TurboJPEG at the DCT scale that still covers the fitted box, nearest-neighbour to the")
  print("box, letterbox cleared; wall is ours in wall time. ffmpeg: the same file looped in one process, scaled to the")
  print("same box (neighbor), per-frame slope; lowres: ffmpeg also decoding at that DCT scale. Ratios above 1: ours is faster.")
}
