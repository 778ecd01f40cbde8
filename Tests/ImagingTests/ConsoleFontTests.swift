import FontFile
import Testing

@testable import Imaging

/// A two-glyph 8x2 PSF2 built byte by byte, so the parser is checked against a layout written here.
private func tinyFont(unicode: Bool) -> [UInt8] {
  func word(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
  var bytes: [UInt8] = [0x72, 0xB5, 0x4A, 0x86] + word(0) + word(32) + word(unicode ? 1 : 0)
  bytes += word(2) + word(2) + word(2) + word(8)
  bytes += [0b1000_0001, 0b0111_1110]  // glyph 0
  bytes += [0b1111_0000, 0b0000_1111]  // glyph 1
  if unicode {
    bytes += Array("?".utf8) + [0xFF]
    // Glyph 1: "é" (two UTF-8 bytes), "X", then a combining sequence that a scalar lookup must not take.
    bytes += Array("é".utf8) + Array("X".utf8) + [0xFE] + Array("Z".utf8) + [0xFF]
  }
  return bytes
}

@Suite struct ConsoleFontTests {
  @Test func parsesHeaderBitmapsAndUnicodeTable() throws {
    let font = try ConsoleFont(psf2: tinyFont(unicode: true))
    #expect(font.glyphWidth == 8 && font.glyphHeight == 2 && font.glyphCount == 2)
    #expect(font.glyph(for: "é") == 1)
    #expect(font.glyph(for: "X") == 1)
    #expect(font.glyph(for: "Z") == 0, "a sequence entry is not a single character; unknown falls back to ?")
    #expect((0..<8).map { font.isSet(glyph: 0, x: $0, y: 0) } == [true, false, false, false, false, false, false, true])
    #expect((0..<8).map { font.isSet(glyph: 1, x: $0, y: 1) } == [false, false, false, false, true, true, true, true])
  }

  @Test func withoutATableCharactersAreGlyphNumbers() throws {
    let font = try ConsoleFont(psf2: tinyFont(unicode: false))
    #expect(font.glyph(for: "\u{1}") == 1)
  }

  @Test func rejectsWhatIsNotAFont() {
    #expect(throws: ConsoleFont.ParseError.notPSF2) { try ConsoleFont(psf2: [UInt8](repeating: 0, count: 64)) }
    #expect(throws: ConsoleFont.ParseError.truncated) { try ConsoleFont(psf2: Array(tinyFont(unicode: false).prefix(33))) }
  }

  @Test func paintsScaledGlyphsClippedWithBackground() throws {
    let painter = TextPainter(font: try ConsoleFont(psf2: tinyFont(unicode: true)))
    let (width, height, stride) = (20, 6, 24 * 4)
    var pixels = [UInt8](repeating: 0, count: stride * height)
    pixels.withUnsafeMutableBytes {
      painter.draw("?X", x: 2, y: 1, scale: 2, colour: 0xFFFFFF, background: 0x111111, into: $0, width: width, height: height, stride: stride)
    }
    func value(_ x: Int, _ y: Int) -> UInt32 {
      pixels.withUnsafeBytes { $0.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
    }
    #expect(value(2, 1) == 0xFFFFFF && value(3, 2) == 0xFFFFFF, "glyph 0's first pixel, doubled")
    #expect(value(4, 1) == 0x111111 && value(0, 0) == 0)
    #expect(value(18, 3) == 0x111111, "the second glyph starts at 18: its top row's first pixel is set, bottom row's not")
    #expect(value(18, 1) == 0xFFFFFF)
    #expect(painter.size(of: "?X", scale: 3) == (48, 6))
  }
}

/// The font the kiosk ships with, read through the adapter from where Debian's console-setup-linux puts it.
@Suite(.enabled(if: (try? FontFile.load()) != nil, "console-setup-linux is not installed"))
struct TerminusFontTests {
  @Test func matchesTheFilesOwnBitmaps() throws {
    let raw = try FontFile.bytes(at: FontFile.defaultPath)
    let font = try ConsoleFont(psf2: raw)
    #expect(font.glyphWidth == 16 && font.glyphHeight == 32)
    // Read the bitmap of "A" here straight from the bytes (header size at offset 8, 2 bytes a row) and
    // compare every pixel the painter draws at scale 3 with it.
    let header = Int(raw[8]) | Int(raw[9]) << 8
    let glyph = font.glyph(for: "A")
    let painter = TextPainter(font: font)
    let (width, height, stride) = (48, 96, 48 * 4)
    var pixels = [UInt8](repeating: 0, count: stride * height)
    pixels.withUnsafeMutableBytes {
      painter.draw("A", x: 0, y: 0, scale: 3, colour: 0xFFFFFF, into: $0, width: width, height: height, stride: stride)
    }
    var setPixels = 0
    for y in 0..<height {
      for x in 0..<width {
        let byte = raw[header + glyph * 64 + (y / 3) * 2 + (x / 3) / 8]
        let expected: UInt32 = byte & (0x80 >> UInt8((x / 3) % 8)) != 0 ? 0xFFFFFF : 0
        let drawn = pixels.withUnsafeBytes { $0.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
        #expect(drawn == expected, "(\(x), \(y))")
        if expected != 0 { setPixels += 1 }
      }
    }
    #expect(setPixels > 100, "an A has ink")
  }
}
