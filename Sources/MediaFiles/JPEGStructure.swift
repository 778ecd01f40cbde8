/// Why bytes are not a JPEG that can be published as they are.
public enum JPEGStructureError: Error, Sendable, Equatable, CustomStringConvertible {
  case missingStartOfImage
  case missingEndOfImage
  /// A segment's length runs past the end, or a byte that should start a marker does not.
  case malformed(at: Int)
  case noFrameHeader
  case noScan

  public var description: String {
    switch self {
    case .missingStartOfImage: "no SOI marker at the start"
    case .missingEndOfImage: "no EOI marker at the end (truncated frame)"
    case .malformed(let offset): "malformed marker segment at byte \(offset)"
    case .noFrameHeader: "no SOF frame header before the scan"
    case .noScan: "no SOS scan"
    }
  }
}

/// The parts of a JPEG's header that the still writer needs, and the surgery it does on it.
///
/// Only the marker segments before the first scan are read; the entropy-coded data is kept byte for byte,
/// which is how a camera's MJPEG frame is saved without re-encoding.
public struct JPEGStructure: Sendable {
  public struct Segment: Sendable, Equatable {
    public let marker: UInt8
    /// Where the marker's 0xFF is, and where the segment ends (exclusive).
    public let range: Range<Int>
  }

  /// Where a camera's JPEG ends once the zeros after EOI are left off: UVC cameras hand over whole buffers,
  /// padded past the picture. Never below the two bytes of SOI.
  public static func endBeforePadding<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Int
  where Bytes.Index == Int {
    var end = bytes.endIndex
    while end > bytes.startIndex + 2, bytes[end - 1] == 0 { end -= 1 }
    return end - bytes.startIndex
  }

  public let segments: [Segment]
  /// Where the SOS segment starts: from here to the end is copied unchanged.
  public let scanStart: Int
  public let width: Int
  public let height: Int
  /// End of the meaningful bytes: just after EOI (drivers may pad a buffer after it).
  public let end: Int

  public init(_ bytes: [UInt8]) throws(JPEGStructureError) {
    guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw .missingStartOfImage }
    let last = Self.endBeforePadding(bytes)
    guard last >= 4, bytes[last - 2] == 0xFF, bytes[last - 1] == 0xD9 else { throw .missingEndOfImage }
    end = last

    var segments: [Segment] = []
    var size: (Int, Int)?
    var at = 2
    while true {
      guard at + 1 < last, bytes[at] == 0xFF else { throw .malformed(at: at) }
      var markerAt = at + 1
      // Any number of 0xFF fill bytes may precede a marker.
      while markerAt < last, bytes[markerAt] == 0xFF { markerAt += 1 }
      guard markerAt < last else { throw .malformed(at: at) }
      let marker = bytes[markerAt]
      if marker == 0xD9 { throw .noScan }
      if (0xD0...0xD7).contains(marker) || marker == 0x01 || marker == 0xD8 { throw .malformed(at: at) }
      guard markerAt + 2 < last else { throw .malformed(at: at) }
      let length = Int(bytes[markerAt + 1]) << 8 | Int(bytes[markerAt + 2])
      let segmentEnd = markerAt + 1 + length
      guard length >= 2, segmentEnd <= last else { throw .malformed(at: at) }
      if marker == 0xDA {
        scanStart = at
        break
      }
      // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC): P, height, width.
      if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
        guard length >= 8 else { throw .malformed(at: at) }
        size = (Int(bytes[markerAt + 6]) << 8 | Int(bytes[markerAt + 7]), Int(bytes[markerAt + 4]) << 8 | Int(bytes[markerAt + 5]))
      }
      segments.append(Segment(marker: marker, range: at..<segmentEnd))
      at = segmentEnd
    }
    guard let size, size.0 > 0, size.1 > 0 else { throw .noFrameHeader }
    self.segments = segments
    width = size.0
    height = size.1
  }

  /// True when the header defines its own Huffman tables. Many UVC cameras leave them out of MJPEG
  /// frames and rely on the standard ones (the AVI1/MJPEG convention), which a still file must carry.
  public var hasHuffmanTables: Bool { segments.contains { $0.marker == 0xC4 } }

  /// The file to publish: SOI, then `app1` (Exif must come first, DCF 2.0), then every segment of the
  /// original except JFIF APP0 and any earlier Exif APP1, standard Huffman tables if it had none, and the
  /// scan unchanged up to EOI.
  public func replacingMetadata(of bytes: [UInt8], with app1: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [0xFF, 0xD8]
    out.reserveCapacity(end + app1.count + StandardHuffmanTables.segment.count)
    out += app1
    for segment in segments {
      let body = bytes[segment.range]
      // Exif and JFIF both claim to be the first segment; DCF files carry Exif only.
      if segment.marker == 0xE0, isIdentified(body, "JFIF") { continue }
      if segment.marker == 0xE1, isIdentified(body, "Exif") { continue }
      out += body
    }
    if !hasHuffmanTables { out += StandardHuffmanTables.segment }
    out += bytes[scanStart..<end]
    return out
  }

  private func isIdentified(_ segment: ArraySlice<UInt8>, _ name: String) -> Bool {
    let start = segment.startIndex + 4
    let id = Array(name.utf8) + [0]
    return segment.count >= 4 + id.count && Array(segment[start..<start + id.count]) == id
  }
}

/// The Huffman tables of ITU T.81 Annex K.3, which MJPEG frames without DHT imply.
public enum StandardHuffmanTables {
  struct Table {
    /// Class (0 DC, 1 AC) in the high nibble, destination id in the low nibble.
    let classAndID: UInt8
    let counts: [UInt8]
    let symbols: [UInt8]
  }

  static let tables: [Table] = [
    Table(classAndID: 0x00, counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], symbols: Array(0...11)),
    Table(classAndID: 0x10, counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D], symbols: [
      0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
      0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0,
      0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28,
      0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
      0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
      0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
      0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
      0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5,
      0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2,
      0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
      0xF9, 0xFA,
    ]),
    Table(classAndID: 0x01, counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], symbols: Array(0...11)),
    Table(classAndID: 0x11, counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77], symbols: [
      0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
      0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0,
      0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16, 0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17, 0x18, 0x19, 0x1A, 0x26,
      0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
      0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
      0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
      0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5,
      0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3,
      0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA,
      0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
      0xF9, 0xFA,
    ]),
  ]

  /// One DHT segment holding all four tables.
  public static let segment: [UInt8] = {
    let body = tables.flatMap { [$0.classAndID] + $0.counts + $0.symbols }
    return [0xFF, 0xC4] + bigEndian(UInt16(body.count + 2)) + body
  }()
}
