import Testing

@testable import MediaFiles

/// The byte layout of the EXIF segment, read back by a small TIFF reader written for the test.
@Suite struct ExifLayoutTests {
  static let time = ExifDateTime(
    year: 2026, month: 11, day: 9, hour: 8, minute: 5, second: 3, millisecond: 42, utcOffsetMinutes: -90)
  static let metadata = ExifMetadata(
    make: "kioskcam", model: "vivid", software: "kioskcam", captured: time, orientation: .rotateClockwise,
    pixelWidth: 640, pixelHeight: 360, uniqueID: "0123456789abcdef0123456789abcdef", exposure100Microseconds: 333)

  @Test func datesAreInExifAndISOForms() {
    #expect(Self.time.exifText == "2026:11:09 08:05:03")
    #expect(Self.time.offsetText == "-01:30")
    #expect(Self.time.isoText == "2026-11-09T08:05:03.042-01:30")
  }

  @Test(arguments: [(0, ExifOrientation.normal), (90, .rotateAnticlockwise), (180, .upsideDown), (270, .rotateClockwise)])
  func mountingGivesOrientation(degrees: Int, expected: ExifOrientation) {
    #expect(ExifOrientation(mountingRotation: degrees) == expected)
  }

  @Test func theSegmentIsAPP1WithItsLengthAndExifHeader() throws {
    let thumbnail: [UInt8] = [0xFF, 0xD8, 1, 2, 3, 0xFF, 0xD9]
    let segment = try ExifWriter.app1Segment(Self.metadata, thumbnail: thumbnail)
    #expect(segment[0] == 0xFF && segment[1] == 0xE1)
    #expect(Int(segment[2]) << 8 | Int(segment[3]) == segment.count - 2)
    #expect(Array(segment[4..<10]) == Array("Exif".utf8) + [0, 0])
    #expect(Array(segment[10..<18]) == [0x4D, 0x4D, 0, 42, 0, 0, 0, 8])
  }

  @Test func directoriesHoldTheTagsInOrderAndPointersLandOnTheirData() throws {
    let thumbnail: [UInt8] = [0xFF, 0xD8, 9, 8, 7, 0xFF, 0xD9]
    let tiff = ExifWriter.tiffStructure(Self.metadata, thumbnail: thumbnail)
    let reader = TIFFReader(tiff)
    let ifd0 = try reader.directory(at: 8)
    #expect(ifd0.tags == ifd0.tags.sorted(), "ascending tags")
    #expect(reader.string(ifd0[0x010F]) == "kioskcam")
    #expect(reader.string(ifd0[0x0110]) == "vivid")
    #expect(reader.number(ifd0[0x0112]) == 6)
    #expect(reader.string(ifd0[0x0132]) == "2026:11:09 08:05:03")
    #expect(reader.number(ifd0[0x0213]) == 1)

    let exif = try reader.directory(at: try #require(reader.number(ifd0[0x8769])))
    #expect(exif.tags == exif.tags.sorted())
    #expect(reader.bytes(exif[0x9000]) == Array("0232".utf8))
    #expect(reader.string(exif[0x9003]) == "2026:11:09 08:05:03")
    #expect(reader.string(exif[0x9011]) == "-01:30")
    #expect(reader.string(exif[0x9291]) == "042")
    #expect(reader.number(exif[0xA002]) == 640)
    #expect(reader.number(exif[0xA003]) == 360)
    #expect(reader.string(exif[0xA420]) == "0123456789abcdef0123456789abcdef")
    #expect(reader.rational(exif[0x829A]).map { $0.0 * 10_000 / $0.1 } == 333, "exposure in seconds")
    #expect(exif.next == 0)

    let ifd1 = try reader.directory(at: ifd0.next)
    #expect(reader.number(ifd1[0x0103]) == 6)
    let offset = try #require(reader.number(ifd1[0x0201]))
    let length = try #require(reader.number(ifd1[0x0202]))
    #expect(Array(tiff[offset..<offset + length]) == thumbnail)
    #expect(offset + length == tiff.count)
  }

  @Test func withoutAThumbnailThereIsNoIFD1AndNoExposureWhenUnknown() throws {
    var metadata = Self.metadata
    metadata.exposure100Microseconds = nil
    let tiff = ExifWriter.tiffStructure(metadata, thumbnail: nil)
    let reader = TIFFReader(tiff)
    let ifd0 = try reader.directory(at: 8)
    #expect(ifd0.next == 0)
    let exif = try reader.directory(at: try #require(reader.number(ifd0[0x8769])))
    #expect(exif[0x829A] == nil)
  }

  /// DigitalZoomRatio (0xA404) in lowest terms when zoomed, 0/1 ("not used", Exif 2.32) at 1.0x, and absent
  /// when the writer was told nothing about zoom.
  @Test(arguments: [(250, [5, 2]), (200, [2, 1]), (125, [5, 4]), (400, [4, 1]), (100, [0, 1])])
  func digitalZoomRatioIsARationalInLowestTerms(hundredths: Int, expected: [Int]) throws {
    var metadata = Self.metadata
    metadata.digitalZoomHundredths = hundredths
    let reader = TIFFReader(ExifWriter.tiffStructure(metadata, thumbnail: nil))
    let exif = try reader.directory(at: try #require(reader.number(try reader.directory(at: 8)[0x8769])))
    let ratio = try #require(reader.rational(exif[0xA404]))
    #expect([ratio.0, ratio.1] == expected)
    #expect(exif.tags == exif.tags.sorted())

    let plain = TIFFReader(ExifWriter.tiffStructure(Self.metadata, thumbnail: nil))
    let plainExif = try plain.directory(at: try #require(plain.number(try plain.directory(at: 8)[0x8769])))
    #expect(plainExif[0xA404] == nil)
  }

  @Test func everyOutOfLineValueStartsAtAnEvenOffset() throws {
    let tiff = ExifWriter.tiffStructure(Self.metadata, thumbnail: [0xFF, 0xD8, 0xFF, 0xD9])
    let reader = TIFFReader(tiff)
    let ifd0 = try reader.directory(at: 8)
    let exif = try reader.directory(at: try #require(reader.number(ifd0[0x8769])))
    for entry in Array(ifd0.entries.values) + Array(exif.entries.values) where entry.size > 4 {
      #expect(entry.valueOffset % 2 == 0, "tag \(entry.tag)")
    }
  }

  @Test func aThumbnailTooLargeForOneSegmentIsAnError() {
    #expect(throws: ExifError.self) {
      try ExifWriter.app1Segment(Self.metadata, thumbnail: [UInt8](repeating: 0, count: 70_000))
    }
  }
}

/// Just enough of a big-endian TIFF reader to check what the writer wrote.
struct TIFFReader {
  struct Entry {
    let tag: UInt16
    let type: Int
    let count: Int
    let valueOffset: Int
    var size: Int { count * [0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8][type] }
  }
  struct Directory {
    var entries: [UInt16: Entry]
    var tags: [UInt16]
    var next: Int
    subscript(tag: UInt16) -> Entry? { entries[tag] }
  }
  struct Malformed: Error {}

  let bytes: [UInt8]
  init(_ bytes: [UInt8]) { self.bytes = bytes }

  func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
  func u32(_ at: Int) -> Int { u16(at) << 16 | u16(at + 2) }

  func directory(at offset: Int) throws -> Directory {
    guard offset + 2 <= bytes.count else { throw Malformed() }
    let count = u16(offset)
    var entries: [UInt16: Entry] = [:]
    var tags: [UInt16] = []
    for index in 0..<count {
      let at = offset + 2 + index * 12
      guard at + 12 <= bytes.count else { throw Malformed() }
      var entry = Entry(tag: UInt16(u16(at)), type: u16(at + 2), count: u32(at + 4), valueOffset: at + 8)
      if entry.size > 4 { entry = Entry(tag: entry.tag, type: entry.type, count: entry.count, valueOffset: u32(at + 8)) }
      guard entry.valueOffset + entry.size <= bytes.count else { throw Malformed() }
      entries[entry.tag] = entry
      tags.append(entry.tag)
    }
    return Directory(entries: entries, tags: tags, next: u32(offset + 2 + count * 12))
  }

  func bytes(_ entry: Entry?) -> [UInt8]? {
    entry.map { Array(bytes[$0.valueOffset..<$0.valueOffset + $0.size]) }
  }
  func string(_ entry: Entry?) -> String? {
    guard let raw = bytes(entry), raw.last == 0 else { return nil }
    return String(decoding: raw.dropLast(), as: UTF8.self)
  }
  func number(_ entry: Entry?) -> Int? {
    guard let entry, entry.count == 1 else { return nil }
    switch entry.type {
    case 3: return u16(entry.valueOffset)
    case 4: return u32(entry.valueOffset)
    default: return nil
    }
  }
  func rational(_ entry: Entry?) -> (Int, Int)? {
    guard let entry, entry.type == 5 else { return nil }
    return (u32(entry.valueOffset), u32(entry.valueOffset + 4))
  }
}
