/// One TIFF field type, with the code TIFF 6.0 gives it.
enum TIFFType: UInt16 {
  case byte = 1, ascii = 2, short = 3, long = 4, rational = 5, undefined = 7

  var size: Int {
    switch self {
    case .byte, .ascii, .undefined: 1
    case .short: 2
    case .long: 4
    case .rational: 8
    }
  }
}

/// One entry of an image file directory, its value already in big-endian bytes.
struct TIFFEntry {
  let tag: UInt16
  let type: TIFFType
  let count: Int
  let value: [UInt8]

  static func ascii(_ tag: UInt16, _ text: String) -> TIFFEntry {
    // TIFF ASCII counts the terminating NUL; a NUL inside would end the string early for every reader.
    let bytes = Array(text.utf8.filter { $0 != 0 }) + [0]
    return TIFFEntry(tag: tag, type: .ascii, count: bytes.count, value: bytes)
  }
  static func short(_ tag: UInt16, _ value: UInt16) -> TIFFEntry {
    TIFFEntry(tag: tag, type: .short, count: 1, value: bigEndian(value))
  }
  static func long(_ tag: UInt16, _ value: UInt32) -> TIFFEntry {
    TIFFEntry(tag: tag, type: .long, count: 1, value: bigEndian(value))
  }
  static func rational(_ tag: UInt16, _ numerator: UInt32, _ denominator: UInt32) -> TIFFEntry {
    TIFFEntry(tag: tag, type: .rational, count: 1, value: bigEndian(numerator) + bigEndian(denominator))
  }
  static func undefined(_ tag: UInt16, _ bytes: [UInt8]) -> TIFFEntry {
    TIFFEntry(tag: tag, type: .undefined, count: bytes.count, value: bytes)
  }
}

/// A directory being laid out: entries, where it starts, and the data that does not fit in an entry.
struct TIFFDirectory {
  var entries: [TIFFEntry]

  /// Bytes of the directory itself: count, 12 a entry, the next-directory offset.
  var tableSize: Int { 2 + 12 * entries.count + 4 }
  /// Bytes of values too long to sit inside their entry, each padded to an even length.
  var overflowSize: Int { entries.reduce(0) { $0 + ($1.value.count > 4 ? padded($1.value.count) : 0) } }
  var totalSize: Int { tableSize + overflowSize }

  /// Writes the directory at `offset` (from the TIFF header) into `out`, which must already end there.
  func write(into out: inout [UInt8], at offset: Int, next: Int) {
    precondition(out.count == offset, "a directory is written where the output ends")
    // Readers binary-search tags: TIFF requires ascending order, and exiftool -validate checks it.
    let sorted = entries.sorted { $0.tag < $1.tag }
    var overflow: [UInt8] = []
    let overflowStart = offset + tableSize
    out += bigEndian(UInt16(sorted.count))
    for entry in sorted {
      out += bigEndian(entry.tag) + bigEndian(entry.type.rawValue) + bigEndian(UInt32(entry.count))
      if entry.value.count <= 4 {
        out += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
      } else {
        out += bigEndian(UInt32(overflowStart + overflow.count))
        overflow += entry.value
        // Word alignment: TIFF asks for values at even offsets.
        if entry.value.count % 2 == 1 { overflow.append(0) }
      }
    }
    out += bigEndian(UInt32(next))
    out += overflow
  }
}

func padded(_ count: Int) -> Int { count + count % 2 }

func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
func bigEndian(_ value: UInt32) -> [UInt8] {
  [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
}
