import Foundation
import Capture
import MediaFiles
import TestPeers
import Testing

/// The thumbnail review mode shows first is the one exiftool extracts, from our big-endian Exif and from a
/// little-endian one that exiftool itself wrote.
@Suite struct ExifThumbnailTests {
  func exiftoolThumbnail(_ path: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/exiftool")
    process.arguments = ["-b", "-ThumbnailImage", path]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return [UInt8](data)
  }

  @Test func ourStillsThumbnailIsWhereExiftoolFindsIt() throws {
    let (path, bytes) = try StillFilesTests().still("YUYV")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let range = try #require(ExifThumbnail.range(in: bytes))
    let expected = try exiftoolThumbnail(path)
    #expect(expected.count > 100)
    #expect(Array(bytes[range]) == expected)
  }

  /// The Orientation tag as exiftool writes it, in both byte orders, and its absence.
  @Test(arguments: [("Little-endian", 6, 90), ("Big-endian", 8, 270), ("Big-endian", 3, 180)])
  func theOrientationExiftoolWroteIsRead(order: String, tag: Int, upright: Int) throws {
    let directory = NSTemporaryDirectory() + "kioskcam-orient-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = "\(directory)/photo.jpg"
    let made = try peer([
      "/usr/bin/ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=64x48", "-frames:v", "1", path,
    ])
    try #require(made.status == 0, "\(made.stderr)")
    #expect(ExifThumbnail.orientation(in: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == nil)
    let written = try peer([
      "/usr/bin/exiftool", "-q", "-overwrite_original", "-ExifByteOrder=\(order)", "-Orientation#=\(tag)", path,
    ])
    try #require(written.status == 0, "\(written.stderr)")
    let orientation = ExifThumbnail.orientation(in: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    #expect(orientation?.rawValue == UInt16(tag))
    #expect(orientation?.uprightRotation == upright)
  }

  @Test func ourStillsOrientationIsReadAndEachMountingIsUndone() throws {
    let (path, bytes) = try StillFilesTests().still("YUYV")
    defer { try? FileManager.default.removeItem(atPath: path) }
    #expect(ExifThumbnail.orientation(in: bytes) == .normal)
    for degrees in [0, 90, 180, 270] {
      let mounting = try #require(ExifOrientation(mountingRotation: degrees))
      // A camera turned clockwise by d is stood upright by turning its pixels back: 360 - d.
      #expect(mounting.uprightRotation == (360 - degrees) % 360)
    }
  }

  @Test func aLittleEndianThumbnailWrittenByExiftool() throws {
    let directory = NSTemporaryDirectory() + "kioskcam-thumb-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for (name, colour, size) in [("photo", "red", "320x240"), ("thumb", "blue", "160x120")] {
      let made = try peer([
        "/usr/bin/ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=\(colour):s=\(size)", "-frames:v", "1",
        "\(directory)/\(name).jpg",
      ])
      try #require(made.status == 0, "\(made.stderr)")
    }
    let written = try peer([
      "/usr/bin/exiftool", "-q", "-overwrite_original", "-ExifByteOrder=Little-endian", "-Make=test",
      "-ThumbnailImage<=\(directory)/thumb.jpg", "\(directory)/photo.jpg",
    ])
    try #require(written.status == 0, "\(written.stderr)")
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(directory)/photo.jpg")))
    let thumb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(directory)/thumb.jpg")))
    let range = try #require(ExifThumbnail.range(in: bytes))
    #expect(Array(bytes[range]) == thumb)
  }

  @Test func noExifNoThumbnailAndDamageIsNil() throws {
    let (path, bytes) = try StillFilesTests().still("NV12")
    try? FileManager.default.removeItem(atPath: path)
    #expect(ExifThumbnail.range(in: [0xFF, 0xD8, 0xFF, 0xDA, 0, 2]) == nil)
    #expect(ExifThumbnail.range(in: Array(bytes.prefix(40))) == nil, "a cut segment")
    var wrongOrder = bytes
    #expect(ExifThumbnail.range(in: bytes) != nil)
    // "MM" becomes "XX": not TIFF.
    let exif = try #require((0..<200).first { bytes[$0] == 0x4D && bytes[$0 + 1] == 0x4D && bytes[$0 + 2] == 0 && bytes[$0 + 3] == 42 })
    wrongOrder[exif] = 0x58
    wrongOrder[exif + 1] = 0x58
    #expect(ExifThumbnail.range(in: wrongOrder) == nil)
  }
}
