import Foundation
import Imaging
import JPEGCodec
import KioskCore
import MediaFiles
import TestPeers
import Testing

@testable import Capture

/// Stills compressed in bands on several cores and joined at restart markers, and photos cut back at their
/// markers to decode on several cores: the pixels must be the whole picture's, and tools nobody here wrote must
/// read the files without a word.
@Suite struct BandedStillsTests {
  /// A textured camera frame (noise over gradients, limited range), so that every block codes differently.
  /// Written through the buffer's pointer, and compared below with memcmp: make pi-test runs these tests as
  /// a debug build under qemu-aarch64, where the array's checked writes and its generic == took this suite
  /// 298 s (83 s this way).
  static func texturedFrame(_ format: PixelFormat, width: Int, height: Int) -> StillFrame {
    var seed: UInt32 = 2024
    func noise(_ span: Int) -> Int {
      seed = seed &* 1_664_525 &+ 1_013_904_223
      return Int(seed >> 24) % span
    }
    func luma(_ x: Int, _ y: Int) -> UInt8 { UInt8(16 + (x * 3 + y * 5 + noise(60)) % 220) }
    func chroma(_ value: Int) -> UInt8 { UInt8(16 + (value + noise(30)) % 225) }
    switch format {
    case .nv12:
      var bytes = [UInt8](repeating: 0, count: width * height + width * ((height + 1) / 2))
      bytes.withUnsafeMutableBufferPointer { (out: inout UnsafeMutableBufferPointer<UInt8>) -> Void in
        for y in 0..<height { for x in 0..<width { out[y * width + x] = luma(x, y) } }
        for at in width * height..<out.count { out[at] = chroma(at % width * 2) }
      }
      return StillFrame(format: .nv12, width: width, height: height, bytesPerLine: width, range: .limited, bytes: bytes)
    default:
      var bytes = [UInt8](repeating: 0, count: width * height * 2)
      bytes.withUnsafeMutableBufferPointer { (out: inout UnsafeMutableBufferPointer<UInt8>) -> Void in
        for y in 0..<height {
          for x in 0..<width {
            out[(y * width + x) * 2] = luma(x, y)
            out[(y * width + x) * 2 + 1] = chroma(x + y)
          }
        }
      }
      return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: width * 2, range: .limited, bytes: bytes)
    }
  }

  static func markers(_ jpeg: [UInt8], _ marker: UInt8) -> Int {
    jpeg.withUnsafeBufferPointer { bytes in
      var count = 0
      for at in bytes.indices.dropLast() where bytes[at] == 0xFF && bytes[at + 1] == marker { count += 1 }
      return count
    }
  }

  /// Byte for byte, by memcmp: Array's == is generic, and unoptimised in a debug build.
  static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.count == b.count && a.withUnsafeBytes { left in b.withUnsafeBytes { memcmp(left.baseAddress!, $0.baseAddress!, a.count) == 0 } }
  }

  static func write(_ bytes: [UInt8], _ name: String) throws -> String {
    let path = NSTemporaryDirectory() + "kioskcam-bands-\(UUID().uuidString)-\(name)"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test(arguments: [
    (PixelFormat.yuyv, 640, 362, 2), (.yuyv, 1280, 720, 2), (.yuyv, 1280, 720, 3), (.nv12, 640, 360, 2),
    (.nv12, 1920, 1080, 3), (.nv12, 642, 486, 4), (.nv12, 642, 485, 2),
  ])
  func bandsDecodeToTheWholePicturesPixels(format: PixelFormat, width: Int, height: Int, bands: Int) throws {
    let frame = Self.texturedFrame(format, width: width, height: height)
    let whole = try StillPipeline.encode(frame, quality: 90)
    let banded = try StillPipeline.encode(frame, quality: 90, bands: bands)
    #expect(Self.same(banded.planes.luma, whole.planes.luma) && Self.same(banded.planes.cb, whole.planes.cb))
    #expect(Self.same(banded.planes.cr, whole.planes.cr))
    #expect(!Self.same(banded.jpeg, whole.jpeg))
    #expect(Self.markers(banded.jpeg, 0xDD) == 1, "one restart interval")
    let restarts = (0xD0...0xD7).map { Self.markers(banded.jpeg, UInt8($0)) }.reduce(0, +)
    #expect(restarts == bands - 1, "a restart marker between bands, \(restarts) for \(bands) bands")
    let decodedWhole = try JPEGDecoder.decodeRGB(whole.jpeg)
    let decodedBands = try JPEGDecoder.decodeRGB(banded.jpeg)
    #expect(decodedBands.width == width && decodedBands.height == height)
    #expect(Self.same(decodedBands.pixels, decodedWhole.pixels), "the joined bands decode to the whole picture's pixels")
  }

  @Test(arguments: [PixelFormat.yuyv, .nv12])
  func toolsNobodyHereWroteReadABandedStillWithoutAWord(format: PixelFormat) throws {
    let frame = Self.texturedFrame(format, width: 1280, height: 720)
    let banded = try StillPipeline.encode(frame, quality: 90, bands: 2)
    var metadata = StillFilesTests.metadata
    (metadata.pixelWidth, metadata.pixelHeight) = (1280, 720)
    let path = try Self.write(try StillPipeline.withExif(banded, metadata), "still.jpg")
    let wholePath = try Self.write(try StillPipeline.encode(frame, quality: 90).jpeg, "whole.jpg")
    defer { for file in [path, wholePath, path + ".ppm", wholePath + ".ppm"] { try? FileManager.default.removeItem(atPath: file) } }

    let info = try peer(["/usr/bin/jpeginfo", "-c", path])
    #expect(info.status == 0 && info.stdout.contains("1280 x  720") && info.stdout.split(whereSeparator: \.isWhitespace).last == "OK", "\(info.stdout)")
    let exif = try peer(["/usr/bin/exiftool", "-validate", "-warning", "-a", "-s", path])
    #expect(exif.stdout == "Validate                        : OK\n", "exiftool: \(exif.stdout) \(exif.stderr)")
    for (file, out) in [(path, path + ".ppm"), (wholePath, wholePath + ".ppm")] {
      let djpeg = try peer(["/usr/bin/djpeg", "-pnm", "-outfile", out, file])
      #expect(djpeg.status == 0 && djpeg.stderr.isEmpty, "djpeg: \(djpeg.stderr)")
    }
    let decoded = try Data(contentsOf: URL(fileURLWithPath: path + ".ppm"))
    let decodedWhole = try Data(contentsOf: URL(fileURLWithPath: wholePath + ".ppm"))
    #expect(decoded == decodedWhole, "djpeg: bands and whole differ")
    let ffmpeg = try peer(["/usr/bin/ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
    #expect(ffmpeg.status == 0 && ffmpeg.stderr.isEmpty, "ffmpeg: \(ffmpeg.stderr)")
  }

  /// The rows of a picture decoded in bands that may differ from the whole's: none for 4:2:2 (chroma is
  /// upsampled along rows only), the row each side of a cut for 4:2:0 (libjpeg's smooth upsampling reads the
  /// chroma row across it).
  static func differingRows(_ a: XRGBImage, _ b: XRGBImage) -> [Int] {
    guard a.width == b.width, a.height == b.height else { return Array(0..<a.height) }
    return a.pixels.withUnsafeBytes { left in
      b.pixels.withUnsafeBytes { right in
        (0..<a.height).filter { memcmp(left.baseAddress! + $0 * a.stride, right.baseAddress! + $0 * b.stride, a.stride) != 0 }
      }
    }
  }

  @Test(arguments: [(1280, 720, 1), (640, 360, 2), (320, 180, 4)])
  func aBandedStillDecodesInBandsToTheWholePicture(cover: Int, coverHeight: Int, denominator: Int) throws {
    let frame = Self.texturedFrame(.yuyv, width: 1280, height: 720)
    let jpeg = try StillPipeline.encode(frame, quality: 90, bands: 2).jpeg
    let bands = try #require(JPEGBands.split(jpeg, into: 2))
    #expect(bands.map(\.firstRow) == [0, 360] && bands.map(\.rows) == [360, 360])
    let whole = try jpeg.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: cover, coverHeight) }
    let parallel = try PictureDecode.xrgb(jpeg, covering: cover, coverHeight, threads: 2)
    #expect(whole.denominator == denominator && parallel.denominator == denominator)
    #expect(parallel.width == whole.width && parallel.height == whole.height)
    #expect(Self.differingRows(parallel, whole) == [], "4:2:2 decodes the same in bands")
  }

  @Test func a420StillDecodedInBandsDiffersFromTheWholeOnlyBesideTheCut() throws {
    let frame = Self.texturedFrame(.nv12, width: 1280, height: 720)
    let jpeg = try StillPipeline.encode(frame, quality: 90, bands: 2).jpeg
    let whole = try jpeg.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: 1280, 720) }
    let parallel = try PictureDecode.xrgb(jpeg, covering: 1280, 720, threads: 2)
    let cut = try #require(JPEGBands.split(jpeg, into: 2))[1].firstRow
    #expect(cut == 368)
    let differing = Self.differingRows(parallel, whole)
    #expect(!differing.isEmpty && differing.allSatisfy { [cut - 1, cut].contains($0) }, "\(differing)")
  }

  /// cjpeg writes a restart marker every MCU row with `-restart 1`: a camera's file cut that way is cut into
  /// bands of many intervals, their markers numbered again from RST0.
  @Test func aPeersFileWithARestartEveryRowDecodesInBands() throws {
    let frame = Self.texturedFrame(.yuyv, width: 640, height: 480)
    let planes = try StillPipeline.planes(of: frame)
    let ppm = Array("P6\n640 480\n255\n".utf8) + (try JPEGDecoder.decodeRGB(try JPEGEncoder.encode(planes, quality: 95)).pixels)
    let input = try Self.write(ppm, "frame.ppm")
    defer { try? FileManager.default.removeItem(atPath: input) }
    let rowsFile = input + ".rows.jpg"
    #expect(try peer(["/usr/bin/cjpeg", "-quality", "90", "-sample", "2x1", "-restart", "1", "-outfile", rowsFile, input]).status == 0)
    let blocksFile = input + ".blocks.jpg"
    #expect(try peer(["/usr/bin/cjpeg", "-quality", "90", "-sample", "2x1", "-restart", "7B", "-outfile", blocksFile, input]).status == 0)
    let plainFile = input + ".plain.jpg"
    #expect(try peer(["/usr/bin/cjpeg", "-quality", "90", "-sample", "2x1", "-outfile", plainFile, input]).status == 0)
    defer { for file in [rowsFile, blocksFile, plainFile] { try? FileManager.default.removeItem(atPath: file) } }

    let rows = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rowsFile)))
    let bands = try #require(JPEGBands.split(rows, into: 2))
    #expect(bands.map(\.firstRow) == [0, 240] && bands.map(\.rows) == [240, 240])
    let whole = try rows.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: 640, 480) }
    let parallel = try PictureDecode.xrgb(rows, covering: 640, 480, threads: 2)
    #expect(Self.differingRows(parallel, whole) == [])
    #expect(JPEGBands.split(rows, into: 3)?.map(\.firstRow) == [0, 160, 320])

    #expect(JPEGBands.split([UInt8](try Data(contentsOf: URL(fileURLWithPath: blocksFile))), into: 2) == nil,
      "restarts every 7 MCUs do not start on rows")
    #expect(JPEGBands.split([UInt8](try Data(contentsOf: URL(fileURLWithPath: plainFile))), into: 2) == nil, "no restarts")
  }

  @Test func aFileWhoseMarkersAreNotWhereItsHeaderSaysIsDecodedWhole() throws {
    let frame = Self.texturedFrame(.yuyv, width: 640, height: 480)
    var jpeg = try StillPipeline.encode(frame, quality: 90, bands: 2).jpeg
    #expect(JPEGBands.split(jpeg, into: 2) != nil)
    let marker = try #require(zip(jpeg.indices, jpeg.dropFirst()).first { jpeg[$0.0] == 0xFF && $0.1 == 0xD0 }?.0)
    jpeg[marker + 1] = 0xD3
    #expect(JPEGBands.split(jpeg, into: 2) == nil, "RST3 where RST0 belongs")
    jpeg.removeSubrange(marker..<marker + 2)
    #expect(JPEGBands.split(jpeg, into: 2) == nil, "a marker missing")
  }

  @Test func bandsOfAnotherPictureAreNotJoined() throws {
    let frame = Self.texturedFrame(.yuyv, width: 640, height: 480)
    let planes = try StillPipeline.planes(of: frame)
    let top = try JPEGEncoder.encode(planes, quality: 90)
    let other = try JPEGEncoder.encode(planes, quality: 80)
    let narrow = try JPEGEncoder.encode(try StillPipeline.planes(of: Self.texturedFrame(.yuyv, width: 320, height: 480)), quality: 90)
    #expect(throws: JPEGBandError.mismatched(band: 1, "other tables")) { try JPEGBands.join([top, other]) }
    #expect(throws: JPEGBandError.mismatched(band: 1, "another width or sampling")) { try JPEGBands.join([top, narrow]) }
    let short = try JPEGEncoder.encode(try StillPipeline.planes(of: Self.texturedFrame(.yuyv, width: 640, height: 100)), quality: 90)
    #expect(throws: JPEGBandError.self) { try JPEGBands.join([short, top]) }
  }

  @Test func aPictureTooLargeForOneRestartIntervalABandIsCutIntoMore() {
    #expect(StillPipeline.bandRows(width: 4000, height: 3000, mcuHeight: 8, bands: 2)! == (1504, 2))
    // 512 MCUs a row: two or three bands would hold more than 65535 MCUs each.
    #expect(StillPipeline.bandRows(width: 8192, height: 6144, mcuHeight: 16, bands: 2)! == (1536, 4))
    #expect(StillPipeline.bandRows(width: 640, height: 8, mcuHeight: 8, bands: 2) == nil, "one MCU row")
    #expect(StillPipeline.bandRows(width: 640, height: 480, mcuHeight: 16, bands: 1) == nil)
  }
}
