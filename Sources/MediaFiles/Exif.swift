/// A calendar date and time as the camera's clock showed it, with the clock's offset from UTC.
///
/// Pure data: whoever owns a clock fills it in; this module never reads one.
public struct ExifDateTime: Sendable, Equatable {
  public var year, month, day, hour, minute, second: Int
  public var millisecond: Int
  /// Minutes east of UTC (`+01:00` is 60).
  public var utcOffsetMinutes: Int

  public init(
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millisecond: Int, utcOffsetMinutes: Int
  ) {
    self.year = year
    self.month = month
    self.day = day
    self.hour = hour
    self.minute = minute
    self.second = second
    self.millisecond = millisecond
    self.utcOffsetMinutes = utcOffsetMinutes
  }

  /// `2026:11:29 14:05:09`, the only form EXIF allows.
  public var exifText: String {
    "\(digits(year, 4)):\(digits(month, 2)):\(digits(day, 2)) \(digits(hour, 2)):\(digits(minute, 2)):\(digits(second, 2))"
  }
  /// `+01:00`, Exif 2.31's OffsetTime form.
  public var offsetText: String {
    let sign = utcOffsetMinutes < 0 ? "-" : "+"
    let minutes = abs(utcOffsetMinutes)
    return "\(sign)\(digits(minutes / 60, 2)):\(digits(minutes % 60, 2))"
  }
  /// `2026-11-29T14:05:09.123+01:00` (ISO 8601), for records people and scripts read.
  public var isoText: String {
    "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(hour, 2)):\(digits(minute, 2)):\(digits(second, 2)).\(digits(millisecond, 3))\(offsetText)"
  }
}

/// How the picture must be turned to be seen upright: EXIF Orientation (TIFF tag 274).
public enum ExifOrientation: UInt16, Sendable, CaseIterable {
  case normal = 1
  case mirrored = 2
  case upsideDown = 3
  case upsideDownMirrored = 4
  case rotatedMirrored = 5
  /// Shown upright after turning 90° clockwise: a camera mounted turned 90° anticlockwise.
  case rotateClockwise = 6
  case rotatedAnticlockwiseMirrored = 7
  case rotateAnticlockwise = 8

  /// Degrees clockwise the stored pixels turn to stand upright; a mirrored orientation (never written here)
  /// counts as its turn alone.
  public var uprightRotation: Int {
    switch self {
    case .normal, .mirrored: 0
    case .rotateClockwise, .rotatedMirrored: 90
    case .upsideDown, .upsideDownMirrored: 180
    case .rotateAnticlockwise, .rotatedAnticlockwiseMirrored: 270
    }
  }

  /// The orientation for a camera mounted turned by `degrees` clockwise (0, 90, 180, 270).
  public init?(mountingRotation degrees: Int) {
    switch degrees {
    case 0: self = .normal
    case 90: self = .rotateAnticlockwise
    case 180: self = .upsideDown
    case 270: self = .rotateClockwise
    default: return nil
    }
  }
}

/// What a still's EXIF segment says about it. Optional fields are left out of the file when nil.
public struct ExifMetadata: Sendable, Equatable {
  public var make: String
  public var model: String
  public var software: String
  public var captured: ExifDateTime
  public var orientation: ExifOrientation
  public var pixelWidth: Int
  public var pixelHeight: Int
  /// 32 hexadecimal digits (a 128-bit identifier), as Exif 2.2 defines ImageUniqueID.
  public var uniqueID: String
  /// Exposure time as the camera's control reports it, in 100 µs units (V4L2_CID_EXPOSURE_ABSOLUTE).
  public var exposure100Microseconds: Int?
  /// The digital zoom the picture was cut with, in hundredths (250 = 2.5x); 100 is written as 0, which
  /// Exif 2.32 defines as "digital zoom was not used". Nil leaves DigitalZoomRatio out.
  public var digitalZoomHundredths: Int?

  public init(
    make: String, model: String, software: String, captured: ExifDateTime, orientation: ExifOrientation,
    pixelWidth: Int, pixelHeight: Int, uniqueID: String, exposure100Microseconds: Int? = nil,
    digitalZoomHundredths: Int? = nil
  ) {
    self.make = make
    self.model = model
    self.software = software
    self.captured = captured
    self.orientation = orientation
    self.pixelWidth = pixelWidth
    self.pixelHeight = pixelHeight
    self.uniqueID = uniqueID
    self.exposure100Microseconds = exposure100Microseconds
    self.digitalZoomHundredths = digitalZoomHundredths
  }
}

public enum ExifError: Error, Sendable, Equatable, CustomStringConvertible {
  /// An APP1 segment holds at most 65,533 bytes: the thumbnail is too large.
  case segmentTooLarge(Int)
  public var description: String {
    switch self {
    case .segmentTooLarge(let size): "EXIF segment of \(size) bytes exceeds JPEG's 65,535"
    }
  }
}

/// Builds the Exif APP1 segment (Exif 2.32, big-endian TIFF): IFD0, the Exif IFD, and IFD1 with a JPEG thumbnail.
public enum ExifWriter {
  static let header: [UInt8] = Array("Exif".utf8) + [0, 0]

  /// The whole segment, marker and length included, ready to follow SOI.
  public static func app1Segment(_ metadata: ExifMetadata, thumbnail: [UInt8]?) throws(ExifError) -> [UInt8] {
    let tiff = tiffStructure(metadata, thumbnail: thumbnail)
    let length = 2 + header.count + tiff.count
    guard length <= 0xFFFF else { throw .segmentTooLarge(length) }
    return [0xFF, 0xE1] + bigEndian(UInt16(length)) + header + tiff
  }

  /// The TIFF structure the segment carries, offsets counted from its first byte.
  static func tiffStructure(_ metadata: ExifMetadata, thumbnail: [UInt8]?) -> [UInt8] {
    let time = metadata.captured
    var ifd0 = TIFFDirectory(entries: [
      .ascii(0x010F, metadata.make),
      .ascii(0x0110, metadata.model),
      .short(0x0112, metadata.orientation.rawValue),
      .rational(0x011A, 72, 1),  // XResolution: DCF requires it; 72 dpi is what every camera writes
      .rational(0x011B, 72, 1),  // YResolution
      .short(0x0128, 2),  // ResolutionUnit: inches
      .ascii(0x0131, metadata.software),
      .ascii(0x0132, time.exifText),  // DateTime
      // Centred: libjpeg's chroma sampling, and the DCF default for JPEG.
      .short(0x0213, 1),  // YCbCrPositioning
      .long(0x8769, 0),  // ExifIFDPointer, patched below
    ])
    let milliseconds = digits(time.millisecond, 3)
    var exifEntries: [TIFFEntry] = [
      .undefined(0x9000, Array("0232".utf8)),  // ExifVersion
      .ascii(0x9003, time.exifText),  // DateTimeOriginal
      .ascii(0x9004, time.exifText),  // DateTimeDigitized: a sensor camera digitises as it captures
      .ascii(0x9010, time.offsetText),  // OffsetTime
      .ascii(0x9011, time.offsetText),  // OffsetTimeOriginal
      .ascii(0x9012, time.offsetText),  // OffsetTimeDigitized
      .undefined(0x9101, [1, 2, 3, 0]),  // ComponentsConfiguration: Y Cb Cr
      .ascii(0x9290, milliseconds),  // SubSecTime
      .ascii(0x9291, milliseconds),  // SubSecTimeOriginal
      .ascii(0x9292, milliseconds),  // SubSecTimeDigitized
      .undefined(0xA000, Array("0100".utf8)),  // FlashpixVersion
      .short(0xA001, 1),  // ColorSpace: sRGB
      .long(0xA002, UInt32(metadata.pixelWidth)),  // PixelXDimension
      .long(0xA003, UInt32(metadata.pixelHeight)),  // PixelYDimension
      .ascii(0xA420, metadata.uniqueID),  // ImageUniqueID
    ]
    if let exposure = metadata.exposure100Microseconds, exposure > 0 {
      exifEntries.append(.rational(0x829A, UInt32(exposure), 10_000))  // ExposureTime, seconds
    }
    if let zoom = metadata.digitalZoomHundredths {
      exifEntries.append(digitalZoomRatio(hundredths: zoom))
    }
    let exifIFD = TIFFDirectory(entries: exifEntries)

    let ifd0Offset = 8
    let exifOffset = ifd0Offset + ifd0.totalSize
    ifd0.entries[ifd0.entries.count - 1] = .long(0x8769, UInt32(exifOffset))
    let ifd1Offset = exifOffset + exifIFD.totalSize

    var out: [UInt8] = Array("MM".utf8) + bigEndian(UInt16(42)) + bigEndian(UInt32(ifd0Offset))
    ifd0.write(into: &out, at: ifd0Offset, next: thumbnail == nil ? 0 : ifd1Offset)
    exifIFD.write(into: &out, at: exifOffset, next: 0)
    if let thumbnail {
      var ifd1 = TIFFDirectory(entries: [
        .short(0x0103, 6),  // Compression: JPEG (old-style tag, as DCF thumbnails use)
        .rational(0x011A, 72, 1),
        .rational(0x011B, 72, 1),
        .short(0x0128, 2),
        .long(0x0201, 0),  // JPEGInterchangeFormat, patched below
        .long(0x0202, UInt32(thumbnail.count)),  // JPEGInterchangeFormatLength
      ])
      let thumbnailOffset = ifd1Offset + ifd1.totalSize
      ifd1.entries[4] = .long(0x0201, UInt32(thumbnailOffset))
      ifd1.write(into: &out, at: ifd1Offset, next: 0)
      out += thumbnail
    }
    return out
  }
}

/// DigitalZoomRatio (0xA404) in lowest terms, 5/2 rather than 250/100; 0/1 when not zoomed.
func digitalZoomRatio(hundredths: Int) -> TIFFEntry {
  guard hundredths > 100 else { return .rational(0xA404, 0, 1) }
  var (a, b) = (hundredths, 100)
  while b != 0 { (a, b) = (b, a % b) }
  return .rational(0xA404, UInt32(hundredths / a), UInt32(100 / a))
}

func digits(_ value: Int, _ width: Int) -> String {
  let text = String(abs(value))
  return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
}
