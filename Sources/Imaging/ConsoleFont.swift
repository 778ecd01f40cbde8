/// A PC Screen Font, version 2 (the Linux console's format, `*.psf` after gunzip): fixed-size bitmaps, one
/// bit a pixel, rows padded to whole bytes, with an optional Unicode table that maps characters to glyphs.
///
/// Pure: bytes in. Reading and decompressing the file is an adapter's job (see `FontFile`).
public struct ConsoleFont: Sendable {
  public let glyphWidth: Int
  public let glyphHeight: Int
  public let glyphCount: Int
  private let bytesPerRow: Int
  private let bytesPerGlyph: Int
  private let bitmaps: [UInt8]
  private let glyphOfScalar: [UInt32: Int]

  public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
    case notPSF2
    case truncated
    case badHeader(String)
    public var description: String {
      switch self {
      case .notPSF2: "not a PSF2 font (no 72 b5 4a 86 magic)"
      case .truncated: "PSF2 font shorter than its header says"
      case .badHeader(let why): "PSF2 header: \(why)"
      }
    }
  }

  /// Parses an uncompressed PSF2 file.
  public init(psf2 bytes: [UInt8]) throws(ParseError) {
    func word(_ offset: Int) -> Int {
      Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }
    guard bytes.count >= 32 else { throw .truncated }
    guard bytes[0] == 0x72, bytes[1] == 0xB5, bytes[2] == 0x4A, bytes[3] == 0x86 else { throw .notPSF2 }
    let headerSize = word(8)
    let flags = word(12)
    let count = word(16)
    let charSize = word(20)
    let height = word(24)
    let width = word(28)
    guard width > 0, height > 0, count > 0, headerSize >= 32 else { throw .badHeader("zero size or count") }
    let rowBytes = (width + 7) / 8
    guard charSize == rowBytes * height else { throw .badHeader("charsize \(charSize) is not \(rowBytes) x \(height)") }
    let glyphsEnd = headerSize + count * charSize
    guard bytes.count >= glyphsEnd else { throw .truncated }
    glyphWidth = width
    glyphHeight = height
    glyphCount = count
    bytesPerRow = rowBytes
    bytesPerGlyph = charSize
    bitmaps = Array(bytes[headerSize..<glyphsEnd])

    var table: [UInt32: Int] = [:]
    if flags & 1 != 0 {
      // PSF2_HAS_UNICODE_TABLE: per glyph, UTF-8 characters, then 0xFE-started sequences (combining forms,
      // which a single-scalar lookup skips), then 0xFF.
      var offset = glyphsEnd
      var glyph = 0
      var inSequence = false
      while offset < bytes.count, glyph < count {
        let byte = bytes[offset]
        if byte == 0xFF {
          glyph += 1
          inSequence = false
          offset += 1
          continue
        }
        if byte == 0xFE {
          inSequence = true
          offset += 1
          continue
        }
        let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
        guard offset + length <= bytes.count else { break }
        var scalar = UInt32(length == 1 ? byte : byte & (0xFF >> (length + 1)))
        for next in bytes[(offset + 1)..<(offset + length)] { scalar = scalar << 6 | UInt32(next & 0x3F) }
        if !inSequence, table[scalar] == nil { table[scalar] = glyph }
        offset += length
      }
    } else {
      for code in 0..<count { table[UInt32(code)] = code }
    }
    glyphOfScalar = table
  }

  /// The glyph for a character: through the Unicode table, else `?`, else glyph 0.
  public func glyph(for scalar: Unicode.Scalar) -> Int {
    glyphOfScalar[scalar.value] ?? glyphOfScalar[0x3F] ?? 0
  }

  /// Whether pixel (x, y) of glyph `glyph` is set, straight from the bitmap (most significant bit first).
  public func isSet(glyph: Int, x: Int, y: Int) -> Bool {
    let byte = bitmaps[glyph * bytesPerGlyph + y * bytesPerRow + x / 8]
    return byte & (0x80 >> UInt8(x % 8)) != 0
  }
}

/// Text in a console font, scaled by whole pixels, drawn onto an XRGB8888 image.
public struct TextPainter: Sendable {
  public let font: ConsoleFont
  public init(font: ConsoleFont) { self.font = font }

  /// The size `text` covers at `scale` (one line).
  public func size(of text: String, scale: Int) -> (width: Int, height: Int) {
    (text.unicodeScalars.count * font.glyphWidth * scale, font.glyphHeight * scale)
  }

  /// The largest whole scale, at most `limit`, at which `text` fits `width` pixels; at least 1.
  public func scale(fitting text: String, width: Int, limit: Int) -> Int {
    let natural = max(1, text.unicodeScalars.count * font.glyphWidth)
    return max(1, min(limit, width / natural))
  }

  /// Draws `text` with its top-left corner at (x, y): set pixels in `colour`, the rest of each glyph cell in
  /// `background` (nil leaves the picture under it). Clipped to the image.
  public func draw(
    _ text: String, x: Int, y: Int, scale: Int, colour: UInt32, background: UInt32? = nil,
    into destination: UnsafeMutableRawBufferPointer, width: Int, height: Int, stride: Int
  ) {
    var cellX = x
    for scalar in text.unicodeScalars {
      let glyph = font.glyph(for: scalar)
      for glyphRow in 0..<font.glyphHeight {
        for repeatRow in 0..<scale {
          let row = y + glyphRow * scale + repeatRow
          guard row >= 0, row < height else { continue }
          let line = (destination.baseAddress! + row * stride).assumingMemoryBound(to: UInt32.self)
          for glyphColumn in 0..<font.glyphWidth {
            let set = font.isSet(glyph: glyph, x: glyphColumn, y: glyphRow)
            guard let value = set ? colour : background else { continue }
            let start = cellX + glyphColumn * scale
            let (left, right) = (max(0, start), min(width, start + scale))
            if left < right { (line + left).update(repeating: value, count: right - left) }
          }
        }
      }
      cellX += font.glyphWidth * scale
    }
  }
}

/// Filled shapes for the overlay, clipped to the image.
public enum OverlayShapes {
  public static func fill(
    _ rect: PixelRect, colour: UInt32, into destination: UnsafeMutableRawBufferPointer, width: Int, height: Int,
    stride: Int
  ) {
    let left = max(0, rect.x)
    let right = min(width, rect.x + rect.width)
    guard left < right else { return }
    for row in max(0, rect.y)..<max(max(0, rect.y), min(height, rect.y + rect.height)) {
      ((destination.baseAddress! + row * stride).assumingMemoryBound(to: UInt32.self) + left)
        .update(repeating: colour, count: right - left)
    }
  }

  /// A filled disc of `radius` around (centreX, centreY): the recording dot and the ready cue.
  public static func disc(
    centreX: Int, centreY: Int, radius: Int, colour: UInt32, into destination: UnsafeMutableRawBufferPointer,
    width: Int, height: Int, stride: Int
  ) {
    for dy in -radius...radius {
      let row = centreY + dy
      guard row >= 0, row < height else { continue }
      var half = 0
      while (half + 1) * (half + 1) + dy * dy <= radius * radius { half += 1 }
      let left = max(0, centreX - half)
      let right = min(width, centreX + half + 1)
      guard left < right else { continue }
      ((destination.baseAddress! + row * stride).assumingMemoryBound(to: UInt32.self) + left)
        .update(repeating: colour, count: right - left)
    }
  }
}
