/// Big-endian box building for QuickTime / ISO base media files: bytes in, bytes out.
struct BoxBuilder {
  var bytes: [UInt8] = []

  mutating func u8(_ value: UInt8) { bytes.append(value) }
  mutating func u16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
  mutating func u32(_ value: UInt32) {
    bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
  }
  mutating func u64(_ value: UInt64) {
    u32(UInt32(value >> 32))
    u32(UInt32(value & 0xFFFF_FFFF))
  }
  mutating func fourCC(_ code: String) {
    let scalars = Array(code.utf8)
    precondition(scalars.count == 4, "a box type is four bytes")
    bytes += scalars
  }
  mutating func zeros(_ count: Int) { bytes += [UInt8](repeating: 0, count: count) }
  /// The unity matrix of tkhd and mvhd (16.16, 16.16, 2.30).
  mutating func unityMatrix() {
    for value: UInt32 in [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] { u32(value) }
  }

  /// A box: its size, its type, then what `content` appends.
  mutating func box(_ type: String, _ content: (inout BoxBuilder) -> Void) {
    var inner = BoxBuilder()
    content(&inner)
    u32(UInt32(8 + inner.bytes.count))
    fourCC(type)
    bytes += inner.bytes
  }

  /// A full box: version and 24 bits of flags first.
  mutating func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ content: (inout BoxBuilder) -> Void) {
    box(type) { inner in
      inner.u32(UInt32(version) << 24 | (flags & 0xFF_FFFF))
      content(&inner)
    }
  }
}

/// Big-endian reading from an array, nil past the end: how recovery parses what a crash left.
struct BoxReader {
  let bytes: [UInt8]
  var position = 0

  init(_ bytes: [UInt8], at position: Int = 0) {
    self.bytes = bytes
    self.position = position
  }

  var remaining: Int { bytes.count - position }

  mutating func u8() -> UInt8? {
    guard remaining >= 1 else { return nil }
    defer { position += 1 }
    return bytes[position]
  }
  mutating func u16() -> UInt16? {
    guard let high = u8(), let low = u8() else { return nil }
    return UInt16(high) << 8 | UInt16(low)
  }
  mutating func u32() -> UInt32? {
    guard let high = u16(), let low = u16() else { return nil }
    return UInt32(high) << 16 | UInt32(low)
  }
  mutating func u64() -> UInt64? {
    guard let high = u32(), let low = u32() else { return nil }
    return UInt64(high) << 32 | UInt64(low)
  }
  mutating func fourCC() -> String? {
    guard remaining >= 4 else { return nil }
    defer { position += 4 }
    return String(decoding: bytes[position..<position + 4], as: UTF8.self)
  }

  /// The boxes in `range` of the array, as (type, content range); stops at the first box that does not fit.
  static func children(of bytes: [UInt8], in range: Range<Int>) -> [(type: String, content: Range<Int>)] {
    var reader = BoxReader(bytes, at: range.lowerBound)
    var found: [(String, Range<Int>)] = []
    while reader.position + 8 <= range.upperBound {
      let start = reader.position
      guard let size = reader.u32(), let type = reader.fourCC(), size >= 8, start + Int(size) <= range.upperBound else {
        break
      }
      found.append((type, start + 8..<start + Int(size)))
      reader.position = start + Int(size)
    }
    return found
  }
}
