import Foundation
import Imaging
import JPEGCodec
import Capture
import MediaFiles
import TestPeers
import Testing

/// Whole still files, from synthetic camera frames through the service's pipeline, checked by tools nobody
/// here wrote: exiftool (-validate), jpeginfo and djpeg.
@Suite struct StillFilesTests {
  static let metadata = ExifMetadata(
    make: "kioskcam", model: "vivid", software: "kioskcam",
    captured: ExifDateTime(year: 2026, month: 1, day: 2, hour: 3, minute: 4, second: 5, millisecond: 6, utcOffsetMinutes: 60),
    orientation: .normal, pixelWidth: 0, pixelHeight: 0, uniqueID: "00112233445566778899aabbccddeeff")

  static func frame(_ kind: String) throws -> StillFrame {
    switch kind {
    case "YUYV": SyntheticFrames.yuyv(width: 640, height: 360, padding: 64)
    case "NV12": SyntheticFrames.nv12(width: 640, height: 360, padding: 32)
    default: try SyntheticFrames.mjpeg(width: 640, height: 360)
    }
  }

  func still(_ kind: String) throws -> (path: String, bytes: [UInt8]) {
    let encoded = try StillPipeline.encode(try Self.frame(kind), quality: 90)
    var metadata = Self.metadata
    metadata.pixelWidth = encoded.width
    metadata.pixelHeight = encoded.height
    let bytes = try StillPipeline.withExif(encoded, metadata)
    let path = NSTemporaryDirectory() + "kioskcam-still-\(kind)-\(UUID().uuidString).JPG"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return (path, bytes)
  }

  @Test(arguments: ["YUYV", "NV12", "MJPG"])
  func exiftoolValidatesWithoutAWarning(kind: String) throws {
    let (path, _) = try still(kind)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = try peer(["/usr/bin/exiftool", "-validate", "-warning", "-a", "-s", path])
    #expect(result.status == 0)
    #expect(result.stdout == "Validate                        : OK\n", "exiftool: \(result.stdout) \(result.stderr)")
    #expect(result.stderr.isEmpty)
  }

  @Test(arguments: ["YUYV", "NV12", "MJPG"])
  func exiftoolReadsTheTagsWeWrote(kind: String) throws {
    let (path, _) = try still(kind)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let tags = [
      "Make", "Model", "Software", "DateTimeOriginal", "SubSecTimeOriginal", "OffsetTimeOriginal", "Orientation#",
      "ExifImageWidth", "ExifImageHeight", "ImageUniqueID", "ExifVersion", "ThumbnailLength",
    ]
    let result = try peer(["/usr/bin/exiftool", "-s", "-s", "-n"] + tags.map { "-\($0)" } + [path])
    let values = Dictionary(
      uniqueKeysWithValues: result.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (line[..<colon].trimmingCharacters(in: .whitespaces), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
      })
    #expect(values["Make"] == "kioskcam")
    #expect(values["Model"] == "vivid")
    #expect(values["DateTimeOriginal"] == "2026:01:02 03:04:05")
    #expect(values["SubSecTimeOriginal"] == "006")
    #expect(values["OffsetTimeOriginal"] == "+01:00")
    #expect(values["Orientation"] == "1")
    #expect(values["ExifImageWidth"] == "640" && values["ExifImageHeight"] == "360")
    #expect(values["ImageUniqueID"] == "00112233445566778899aabbccddeeff")
    #expect(values["ExifVersion"] == "0232")
    #expect(Int(values["ThumbnailLength"] ?? "0") ?? 0 > 0, "\(values)")
  }

  @Test(arguments: ["YUYV", "NV12", "MJPG"])
  func jpeginfoAndDjpegReadTheFileAndItsThumbnail(kind: String) throws {
    let (path, _) = try still(kind)
    let thumbnailPath = path + ".thumb.jpg"
    let decodedPath = path + ".ppm"
    defer { for file in [path, thumbnailPath, decodedPath] { try? FileManager.default.removeItem(atPath: file) } }
    let info = try peer(["/usr/bin/jpeginfo", "-c", path])
    #expect(info.status == 0 && info.stdout.contains("640 x  360") && verdict(info.stdout) == "OK", "\(info.stdout)")

    let djpeg = try peer(["/usr/bin/djpeg", "-pnm", "-outfile", decodedPath, path])
    #expect(djpeg.status == 0, "\(djpeg.stderr)")
    let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: decodedPath)))
    // Limited-range luma 200 and 40 expand to full-range raw values near 214 and 28 (grey-ish, chroma ramps).
    let header = pixels.count - 640 * 360 * 3
    func luma(_ x: Int, _ y: Int) -> Int {
      let at = header + (y * 640 + x) * 3
      return (Int(pixels[at]) * 299 + Int(pixels[at + 1]) * 587 + Int(pixels[at + 2]) * 114) / 1000
    }
    #expect(abs(luma(100, 180) - 214) <= 12, "bright half: \(luma(100, 180))")
    #expect(abs(luma(540, 180) - 28) <= 12, "dark half: \(luma(540, 180))")

    let extract = try peer(["/usr/bin/exiftool", "-b", "-ThumbnailImage", "-w", "%d%f.%e.thumb.jpg", path])
    #expect(extract.status == 0, "\(extract.stderr)")
    let thumbInfo = try peer(["/usr/bin/jpeginfo", "-c", thumbnailPath])
    #expect(thumbInfo.stdout.contains("160 x  120") && verdict(thumbInfo.stdout) == "OK", "\(thumbInfo.stdout)")
  }

  @Test func anMJPEGFrameKeepsItsScanUnchanged() throws {
    let frame = try Self.frame("MJPG")
    let (path, bytes) = try still("MJPG")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let source = try JPEGStructure(frame.bytes)
    let saved = try JPEGStructure(bytes)
    #expect(Array(bytes[saved.scanStart...]) == Array(frame.bytes[source.scanStart..<source.end]))
  }

  /// jpeginfo 1.6 ends a good file's line with "OK", a bad one's with "ERROR" or "WARNING".
  func verdict(_ line: String) -> String? { line.split(whereSeparator: \.isWhitespace).last.map(String.init) }
}
