#if canImport(Glibc)
  import Glibc
#endif
import LinuxIO
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import Capture
import MediaFiles

/// Review mode's "next": a roll photo (ours: Exif with its 160x120 thumbnail) read from its file, decoded at the
/// DCT scale that fits the screen and scaled into a 1280x800 display buffer; and the thumbnail review mode
/// shows first. Beside ffmpeg decoding the same file and scaling it to the same box (per-frame slope of one
/// process looping the file), in the same run.
@MainActor func reviewBench() throws {
  let (screenWidth, screenHeight) = (1280, 800)
  print("")
  let threads = Config().display.previewWorkers(cores: CPUUse.threads())
  print("review: roll photo (quality \(quality), 4:2:2, saved as the service saves it: in \(threads) bands) to a \(screenWidth)x\(screenHeight) screen,")
  print("ms per picture, medians")
  print("photo      bytes   scale | thumbnail   cpu   wall | 1 core | ffmpeg | ffmpeg/wall ffmpeg/cpu ffmpeg/thumbnail")
  for (width, height) in [(1920, 1080), (4000, 3000)] {
    let encoded = try StillPipeline.encode(syntheticFrame(.yuyv, width: width, height: height), quality: quality, bands: threads)
    var withSize = metadata
    withSize.pixelWidth = width
    withSize.pixelHeight = height
    let file = try StillPipeline.withExif(encoded, withSize)
    let path = "\(workDirectory)/review-\(width).jpg"
    try Data(file).write(to: URL(fileURLWithPath: path))
    let stride = screenWidth * 4
    var screen = [UInt8](repeating: 0, count: stride * screenHeight)
    var denominator = 0
    // From the file each time, as review mode reads it (from the page cache after the first run).
    func read() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
    func full(threads: Int) throws {
      let bytes = try read()
      let fitted = try FittedPicture.decode(
        bytes, screenWidth: screenWidth, screenHeight: screenHeight, orientation: .init(), threads: threads)
      denominator = fitted.picture.denominator
      let fitter = fitted.libyuvScaler(reusing: nil)
      screen.withUnsafeMutableBytes { fitted.draw(into: $0, width: screenWidth, height: screenHeight, stride: stride, with: fitter) }
    }
    func thumbnail() throws {
      let bytes = try read()
      guard let range = ExifThumbnail.range(in: bytes) else { throw BenchFailure.noThumbnail }
      let header = try JPEGDecoder.header(bytes)
      let fitted = try bytes[range].withUnsafeBytes { jpeg in
        try FittedPicture.thumbnail(
          jpeg, of: header.width, header.height, screenWidth: screenWidth, screenHeight: screenHeight, orientation: .init())
      }
      let fitter = fitted.libyuvScaler(reusing: nil)
      screen.withUnsafeMutableBytes { fitted.draw(into: $0, width: screenWidth, height: screenHeight, stride: stride, with: fitter) }
    }
    let runs = width > 2000 ? 9 : 15
    let ours = try median(runs, clock: { UInt64(processCPUNanoseconds()) }) { try full(threads: threads) }
    let wall = try median(runs, clock: now) { try full(threads: threads) }
    let oneCore = try median(runs, clock: now) { try full(threads: 1) }
    let first = try median(runs) { try thumbnail() }
    var ffmpegTime: Double?
    if let ffmpeg = which("ffmpeg") {
      func ffmpegRun(_ frames: Int) throws {
        try run([
          ffmpeg, "-v", "error", "-loop", "1", "-i", path, "-frames:v", "\(frames)", "-vf",
          "scale=\(screenWidth):\(screenHeight):force_original_aspect_ratio=decrease:flags=neighbor", "-pix_fmt", "bgr0",
          "-f", "null", "-",
        ])
      }
      let many = width > 2000 ? 10 : 30
      let one = try median(5, clock: childrenCPU) { try ffmpegRun(1) }
      let lots = try median(5, clock: childrenCPU) { try ffmpegRun(many) }
      ffmpegTime = max(0, (lots - one) / Double(many - 1))
    }
    let label = "\(width)x\(height)".padding(toLength: 10, withPad: " ", startingAt: 0)
    let bytes = "\(file.count / 1024)k".leftPadded(6)
    let peer = ffmpegTime.map(format)?.leftPadded(6) ?? "     -"
    let ratios = [wall, ours, first].map { time in ffmpegTime.map { format($0 / time) } ?? "-" }
    print(
      "\(label) \(bytes)   1/\(denominator)   | \(format(first).leftPadded(9)) \(format(ours).leftPadded(5)) \(format(wall).leftPadded(6)) | \(format(oneCore).leftPadded(6)) | \(peer) | \(ratios[0].leftPadded(11)) \(ratios[1].leftPadded(10)) \(ratios[2].leftPadded(16))")
  }
  print("cpu and wall: read the file, TurboJPEG at the largest DCT scale that still covers the fitted box, on \(threads)")
  print("cores (the photo cut back into its bands at their restart markers), libyuv nearest-neighbour into the box,")
  print("letterbox cleared; cpu is all threads' CPU time. 1 core: the same, decoded whole on one (wall). thumbnail:")
  print("the Exif thumbnail review mode shows while that runs (CPU). ffmpeg: the same file looped in one process,")
  print("decoded and scaled to the same box (neighbor), per-frame slope of its CPU time (one thread). Ratios above 1")
  print("mean ours is faster; ffmpeg/wall is how much sooner the photo is on screen.")
}
