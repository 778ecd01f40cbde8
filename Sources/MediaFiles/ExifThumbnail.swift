/// Finds the JPEG thumbnail a camera stores in IFD1 of its Exif segment (ours is 160x120): review mode shows it
/// at once, while the full picture decodes. Either TIFF byte order; nothing is copied.
public enum ExifThumbnail {
  /// Where the thumbnail's bytes are in `jpeg`, or nil when there is none (or the Exif segment is damaged).
  public static func range(in jpeg: [UInt8]) -> Range<Int>? {
    segment(in: jpeg).flatMap { thumbnail(jpeg, tiff: $0.tiff, end: $0.end) }
  }

  /// The Orientation tag of IFD0 (how to turn the stored pixels to show them upright); nil when absent.
  public static func orientation(in jpeg: [UInt8]) -> ExifOrientation? {
    guard let (tiff, end) = segment(in: jpeg), let read = TIFFReader(jpeg, tiff: tiff, end: end),
      let ifd0 = read.u32(tiff + 4), let count = read.u16(tiff + ifd0)
    else { return nil }
    for index in 0..<count {
      let entry = tiff + ifd0 + 2 + index * 12
      if read.u16(entry) == 0x0112, let value = read.u16(entry + 8) { return ExifOrientation(rawValue: UInt16(value)) }
    }
    return nil
  }

  /// Where the TIFF structure of the Exif APP1 segment starts and ends.
  private static func segment(in jpeg: [UInt8]) -> (tiff: Int, end: Int)? {
    guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
    var position = 2
    // Markers up to the first scan: the Exif segment comes before it.
    while position + 4 <= jpeg.count, jpeg[position] == 0xFF {
      let marker = jpeg[position + 1]
      if marker == 0xDA || marker == 0xD9 { return nil }
      let length = Int(jpeg[position + 2]) << 8 | Int(jpeg[position + 3])
      let end = position + 2 + length
      guard length >= 2, end <= jpeg.count else { return nil }
      let exif: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]  // "Exif\0\0"
      if marker == 0xE1, length >= 16, Array(jpeg[position + 4..<position + 10]) == exif {
        return (position + 10, end)
      }
      position = end
    }
    return nil
  }

  private static func thumbnail(_ bytes: [UInt8], tiff: Int, end: Int) -> Range<Int>? {
    guard let read = TIFFReader(bytes, tiff: tiff, end: end) else { return nil }
    let (u16, u32) = (read.u16, read.u32)
    guard u16(tiff + 2) == 42, let ifd0 = u32(tiff + 4), let count0 = u16(tiff + ifd0),
      let ifd1 = u32(tiff + ifd0 + 2 + count0 * 12), ifd1 > 0, let count1 = u16(tiff + ifd1)
    else { return nil }
    var offset: Int?
    var length: Int?
    for index in 0..<count1 {
      let entry = tiff + ifd1 + 2 + index * 12
      switch u16(entry) {
      case 0x0201: offset = u32(entry + 8)
      case 0x0202: length = u32(entry + 8)
      default: break
      }
    }
    guard let offset, let length, length > 0, tiff + offset + length <= end else { return nil }
    return tiff + offset..<tiff + offset + length
  }
}

/// Bounds-checked reads in either TIFF byte order, inside one Exif segment.
private struct TIFFReader {
  let bytes: [UInt8]
  let tiff: Int
  let end: Int
  let little: Bool

  init?(_ bytes: [UInt8], tiff: Int, end: Int) {
    guard tiff + 8 <= end else { return nil }
    switch (bytes[tiff], bytes[tiff + 1]) {
    case (0x49, 0x49): little = true
    case (0x4D, 0x4D): little = false
    default: return nil
    }
    (self.bytes, self.tiff, self.end) = (bytes, tiff, end)
  }

  func u16(_ at: Int) -> Int? {
    guard at >= tiff, at + 2 <= end else { return nil }
    return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
  }

  func u32(_ at: Int) -> Int? {
    guard let first = u16(at), let second = u16(at + 2) else { return nil }
    return little ? first | second << 16 : first << 16 | second
  }
}
