import CameraRoll
import Dispatch
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import Capture
import MediaFiles
import Synchronization
import TestPeers
import Testing

/// Digital zoom on MJPEG cameras: frames compressed by the real TurboJPEG as a UVC camera sends them (no
/// JFIF, no Huffman tables, zero padding), zoomed to 2.0x through the service's pipeline, and read back by
/// djpeg, exiftool, jpeginfo and ffmpeg. vivid sends no MJPEG, so this is where the MJPEG zoom is tested.
@Suite struct ZoomedFilesTests {
  static let (width, height) = (640, 360)
  /// vivid's 75% colour bars in limited-range YCbCr (white, yellow, cyan, green, magenta, red, blue, black).
  static let bars: [(y: UInt8, cb: UInt8, cr: UInt8)] = [
    (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58), (84, 184, 198), (65, 100, 212), (35, 212, 114),
    (16, 128, 128),
  ]
  /// The bar at (`x`, `y`): the eight in order across the top half, in reverse across the bottom half, so
  /// that a crop moved up or down shows as well as one moved sideways.
  static func bar(_ x: Int, _ y: Int) -> (y: UInt8, cb: UInt8, cr: UInt8) {
    bars[y < height / 2 ? x * 8 / width : 7 - x * 8 / width]
  }

  /// The centred crop of 640x360 at `hundredths`, worked by hand (not by `Zoom`, which ZoomTests holds to the
  /// same rule): 1/factor of each side, even sizes and coordinates. 2.0x: 320x180 at (160, 90); 1.5x: 426.7
  /// (426) x 240 at (107 -> 106, 60).
  static func crop(_ hundredths: Int) -> PixelRect {
    switch hundredths {
    case 200: PixelRect(x: 160, y: 90, width: 320, height: 180)
    case 150: PixelRect(x: 106, y: 60, width: 426, height: 240)
    default: fatalError("no crop worked out for \(hundredths)")
    }
  }
  static let twice = crop(200)

  static func barsYUYV() -> StillFrame {
    var bytes = [UInt8](repeating: 0, count: width * 2 * height)
    for row in 0..<height {
      for pair in 0..<(width / 2) {
        let bar = bar(pair * 2, row)
        let at = row * width * 2 + pair * 4
        (bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]) = (bar.y, bar.cb, bar.y, bar.cr)
      }
    }
    return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: width * 2, range: .limited, bytes: bytes)
  }

  static func barsNV12() -> StillFrame {
    var bytes = [UInt8](repeating: 0, count: width * height * 3 / 2)
    for row in 0..<height { for x in 0..<width { bytes[row * width + x] = bar(x, row).y } }
    for row in 0..<(height / 2) {
      for pair in 0..<(width / 2) {
        let bar = bar(pair * 2, row * 2)
        (bytes[width * height + row * width + pair * 2], bytes[width * height + row * width + pair * 2 + 1]) = (bar.cb, bar.cr)
      }
    }
    return StillFrame(format: .nv12, width: width, height: height, bytesPerLine: width, range: .limited, bytes: bytes)
  }

  /// The bars as a camera's MJPEG frame: 4:2:2 (most UVC cameras) or 4:2:0.
  static func barsMJPEG(subsampling: String) throws -> StillFrame {
    let planes = try StillPipeline.planes(of: subsampling == "4:2:0" ? barsNV12() : barsYUYV())
    let jpeg = SyntheticFrames.removingSegments(try JPEGEncoder.encode(planes, quality: 90), markers: [0xE0, 0xC4])
    return StillFrame(
      format: .mjpeg, width: width, height: height, bytesPerLine: 0, range: .full,
      bytes: jpeg + [UInt8](repeating: 0, count: 64))
  }

  /// A still file as the service writes it, with DigitalZoomRatio from `zoom` (hundredths).
  static func still(_ frame: StillFrame, crop: PixelRect?, zoom: Int, in folder: String, name: String) throws -> String {
    let encoded = try StillPipeline.encode(frame, quality: 90, crop: crop)
    var metadata = StillFilesTests.metadata
    metadata.pixelWidth = encoded.width
    metadata.pixelHeight = encoded.height
    metadata.digitalZoomHundredths = zoom
    let path = "\(folder)/\(name).JPG"
    try Data(try StillPipeline.withExif(encoded, metadata)).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// The file decoded by djpeg: packed RGB, `width` x `height`.
  static func djpeg(_ path: String) throws -> [UInt8] {
    let out = path + ".ppm"
    let result = try peer(["/usr/bin/djpeg", "-pnm", "-outfile", out, path])
    #expect(result.status == 0, "djpeg: \(result.stderr)")
    let ppm = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    return Array(ppm.suffix(width * height * 3))
  }

  static func folder() throws -> String {
    let path = NSTemporaryDirectory() + "kioskcam-zoomed-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  /// The zoomed MJPEG still is the same picture as the zoomed YUYV still of the same scene (the framing the
  /// preview and YUYV stills have), at the camera's size: every sampled pixel, bar edges included, is the
  /// unzoomed picture's pixel at the centred crop's matching place. At 1.5x the crop starts at x 106, off the
  /// 16-pixel block grid a lossless JPEG crop would move it to.
  @Test(arguments: [("4:2:2", 200), ("4:2:0", 200), ("4:2:2", 150)])
  func aZoomedMJPEGStillIsTheCentredCropAtTheCamerasSize(subsampling: String, hundredths: Int) throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let mjpeg = try Self.barsMJPEG(subsampling: subsampling)
    let crop = Self.crop(hundredths)
    let zoomedPath = try Self.still(mjpeg, crop: crop, zoom: hundredths, in: folder, name: "ZOOMED")
    let plainPath = try Self.still(mjpeg, crop: nil, zoom: 100, in: folder, name: "PLAIN")
    let yuyvPath = try Self.still(Self.barsYUYV(), crop: crop, zoom: hundredths, in: folder, name: "YUYV")

    let info = try peer(["/usr/bin/jpeginfo", "-c", zoomedPath])
    #expect(info.stdout.contains("640 x  360") && info.stdout.split(whereSeparator: \.isWhitespace).last == "OK", "\(info.stdout)")
    let zoomed = try Self.djpeg(zoomedPath)
    let plain = try Self.djpeg(plainPath)
    let yuyv = try Self.djpeg(yuyvPath)
    func rgb(_ pixels: [UInt8], _ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(pixels[(y * Self.width + x) * 3 + $0]) } }
    func close(_ a: [Int], _ b: [Int], _ tolerance: Int) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= tolerance } }
    var mismatches: [String] = []
    // 8 px either side of where each bar edge and the halves' edge land once zoomed, and between them.
    func near(_ edges: [Int], from start: Int, _ size: Int, _ full: Int) -> [Int] {
      let landed = [0] + edges.filter { $0 > start && $0 < start + size }.map { ($0 - start) * full / size } + [full]
      let sides = landed.dropFirst().dropLast().flatMap { [$0 - 8, $0 + 8] }
      let middles = zip(landed, landed.dropFirst()).map { ($0 + $1) / 2 }
      return (sides + middles).filter { $0 >= 0 && $0 < full }
    }
    let columns = near((1..<8).map { $0 * Self.width / 8 }, from: crop.x, crop.width, Self.width)
    let rows = near([Self.height / 2], from: crop.y, crop.height, Self.height)
    for y in rows {
      for x in columns {
        let source = rgb(plain, crop.x + x * crop.width / Self.width, crop.y + y * crop.height / Self.height)
        if !close(rgb(zoomed, x, y), source, 14) { mismatches.append("(\(x),\(y)): \(rgb(zoomed, x, y)) not the source's \(source)") }
        if !close(rgb(zoomed, x, y), rgb(yuyv, x, y), 14) {
          mismatches.append("(\(x),\(y)): \(rgb(zoomed, x, y)) not the YUYV still's \(rgb(yuyv, x, y))")
        }
      }
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
    // The camera's chroma sampling is kept: TJSAMP 1 is 4:2:2, 2 is 4:2:0.
    let zoomedBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: zoomedPath)))
    #expect(try JPEGDecoder.header(zoomedBytes).subsampling == (subsampling == "4:2:2" ? 1 : 2))
  }

  /// DigitalZoomRatio as exiftool reads it: 2 for a 2.0x still, 0 ("not used") for an unzoomed one; and the
  /// zoomed file validates without a warning.
  @Test func exiftoolReadsTheDigitalZoomRatio() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let mjpeg = try Self.barsMJPEG(subsampling: "4:2:2")
    let cases = [
      (try Self.still(mjpeg, crop: Self.twice, zoom: 200, in: folder, name: "TWO"), "2"),
      (try Self.still(mjpeg, crop: nil, zoom: 100, in: folder, name: "ONE"), "0"),
      (try Self.still(Self.barsYUYV(), crop: PixelRect(x: 64, y: 36, width: 512, height: 288), zoom: 125, in: folder, name: "YUYV"), "1.25"),
    ]
    for (path, expected) in cases {
      let read = try peer(["/usr/bin/exiftool", "-s", "-s", "-s", "-n", "-DigitalZoomRatio", path])
      #expect(read.stdout == "\(expected)\n", "\(path): \(read.stdout) \(read.stderr)")
      let validate = try peer(["/usr/bin/exiftool", "-validate", "-warning", "-a", "-s", path])
      #expect(validate.stdout == "Validate                        : OK\n", "\(validate.stdout)")
    }
  }

  /// An MJPEG camera's movie at 2.0x: each frame decoded, cut and compressed again at the camera's size, so
  /// ffmpeg's first frame shows bars 2-5 a quarter each; unzoomed, the same frames go in untouched (bar 1 at
  /// x 80).
  @Test func aZoomedMJPEGMovieIsTheCentredCrop() throws {
    let mjpeg = try Self.barsMJPEG(subsampling: "4:2:2")
    func record(crop: PixelRect?) throws -> (path: String, bytes: Int, root: String) {
      let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-zoom-\(UUID().uuidString)").path
      try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
      let recorder = try MovieRecorder(
        roll: try CameraRoll(root: root, suffix: "TESTS"), width: Self.width, height: Self.height, frameRate: 25,
        preset: .high, sourceFormat: "MJPG", passthrough: true, tag: "zoom")
      for index in 0..<3 {
        while recorder.pending >= recorder.queueBound { usleep(1000) }
        recorder.submit(mjpeg, timestamp: Int64(index) * 40_000_000, sequence: UInt32(index), crop: crop)
      }
      let summary = try recorder.stopAndWait().get()
      #expect(summary.frames == 3 && summary.dropped == 0)
      return ("\(root)/\(summary.item.relativePath)", summary.bytes, root)
    }
    // Full-range luma of the bars (djpeg and ffmpeg's grey both give JPEG's own Y).
    let luma = Self.bars.map { (Int($0.y) - 16) * 255 / 219 }
    let zoomed = try record(crop: Self.twice)
    let plain = try record(crop: nil)
    defer { for movie in [zoomed, plain] { try? FileManager.default.removeItem(atPath: movie.root) } }
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
      "-of", "csv=p=0", zoomed.path,
    ])
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,640,360", "\(probe.stderr)")
    let zoomedGrey = try MoviePresetTests.firstFrameGrey(zoomed)
    let plainGrey = try MoviePresetTests.firstFrameGrey(plain)
    try #require(zoomedGrey.count == Self.width * Self.height && plainGrey.count == zoomedGrey.count)
    let row = Self.height / 4 * Self.width
    for quarter in 0..<4 {
      let x = quarter * Self.width / 4 + Self.width / 8
      #expect(abs(Int(zoomedGrey[row + x]) - luma[2 + quarter]) <= 8, "quarter \(quarter): \(zoomedGrey[row + x])")
    }
    #expect(abs(Int(plainGrey[row + 80]) - luma[1]) <= 8, "unzoomed x 80: \(plainGrey[row + 80])")
  }
}
