import LinuxIO
import Testing

@testable import V4L2Codec

/// The raw picture's place in a codec buffer: what the board's vicodec test relies on without saying so.
@Suite struct RawLayoutTests {
  /// A 6x3 picture whose every byte says where it came from.
  static func picture(_ layout: RawLayout) -> [UInt8] { (0..<layout.tightSize).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) } }

  @Test func fourCCsReadAsV4L2SpellsThem() {
    #expect(FourCC("YU12") == .yu12)
    #expect(FourCC("FWHT") == .fwht)
    #expect(FourCC("H264")?.description == "H264")
    // 'Y' 'U' '1' '2', little-endian as v4l2_fourcc() packs it.
    #expect(FourCC.yu12.code == 0x3231_5559)
    #expect(FourCC("YU1") == nil)
  }

  @Test func yu12PlanesFollowTheLumaAtHalfTheStrideWithPaddingRowsBelow() throws {
    // 6x3 in a buffer of stride 8 and 4 rows (the codec's block rows).
    let layout = try #require(RawLayout(format: .yu12, width: 6, height: 3, stride: 8, bufferHeight: 4, sizeImage: 48))
    #expect(layout.planes.map(\.offset) == [0, 32, 40])
    #expect(layout.planes.map(\.stride) == [8, 4, 4])
    #expect(layout.planes.map(\.rowBytes) == [6, 3, 3])
    #expect(layout.planes.map(\.rows) == [3, 2, 2])
    #expect(layout.planes.map(\.bufferRows) == [4, 2, 2])
    #expect(layout.tightSize == 18 + 6 + 6)
    #expect(layout.bufferSize == 48)
  }

  @Test func packedPicturesUnpackToThemselvesAndPaddingRepeatsTheLastRow() throws {
    let layout = try #require(RawLayout(format: .yu12, width: 6, height: 3, stride: 8, bufferHeight: 4, sizeImage: 48))
    let tight = Self.picture(layout)
    var buffer = [UInt8](repeating: 0xEE, count: layout.bufferSize)
    let packed = tight.withUnsafeBytes { source in buffer.withUnsafeMutableBytes { layout.pack(source, into: $0) } }
    #expect(packed)
    // Luma row 1 at offset 8, the padding row 3 a copy of row 2, the stride's tail untouched.
    #expect(Array(buffer[8..<14]) == Array(tight[6..<12]))
    #expect(Array(buffer[24..<30]) == Array(tight[12..<18]))
    #expect(Array(buffer[14..<16]) == [0xEE, 0xEE])
    // Cr's first row sits after Cb's two rows of stride 4.
    #expect(Array(buffer[40..<43]) == Array(tight[24..<27]))
    #expect(buffer.withUnsafeBytes { layout.unpack($0) } == tight)
  }

  @Test func nv12KeepsItsInterleavedChromaAtTheLumaStride() throws {
    let layout = try #require(RawLayout(format: .nv12, width: 6, height: 4, stride: 8, bufferHeight: 4, sizeImage: 48))
    #expect(layout.planes.map(\.offset) == [0, 32])
    #expect(layout.planes.map(\.rowBytes) == [6, 6])
    #expect(layout.planes.map(\.rows) == [4, 2])
    let tight = Self.picture(layout)
    var buffer = [UInt8](repeating: 0, count: layout.bufferSize)
    _ = tight.withUnsafeBytes { source in buffer.withUnsafeMutableBytes { layout.pack(source, into: $0) } }
    #expect(buffer.withUnsafeBytes { layout.unpack($0) } == tight)
  }

  @Test func buffersOrPicturesTooSmallAreRefused() throws {
    let layout = try #require(RawLayout(format: .yu12, width: 6, height: 3, stride: 8, bufferHeight: 4, sizeImage: 48))
    var small = [UInt8](repeating: 0, count: layout.bufferSize - 1)
    let tight = Self.picture(layout)
    #expect(!tight.withUnsafeBytes { source in small.withUnsafeMutableBytes { layout.pack(source, into: $0) } })
    var buffer = [UInt8](repeating: 0, count: layout.bufferSize)
    #expect(!tight.dropLast().withUnsafeBytes { source in buffer.withUnsafeMutableBytes { layout.pack(source, into: $0) } })
    #expect(RawLayout(format: .yu12, width: 6, height: 5, stride: 8, bufferHeight: 4, sizeImage: 48) == nil)
    #expect(RawLayout(format: .fwht, width: 6, height: 4, stride: 8, bufferHeight: 4, sizeImage: 48) == nil)
  }
}

/// The recorder's pictures (three planes, each with a stride of its own, as an `H264Picture` has them) into a
/// codec's buffer: byte for byte what the tight picture gives, for YU12 and NV12, padding rows and stride
/// tails included.
@Suite struct RawLayoutPlanesTests {
  @Test(arguments: ["YU12", "NV12"])
  func planesWithTheirOwnStridesPackAsTheTightPictureDoes(format: String) throws {
    let fourCC = try #require(FourCC(format))
    let (width, height) = (6, 3)
    let layout = try #require(RawLayout(format: fourCC, width: width, height: height, stride: 8, bufferHeight: 4, sizeImage: 64))
    // Strides wider than the picture, every byte telling its plane, row and column; the strides' tails hold
    // what must never be copied.
    let (lumaStride, chromaStride) = (9, 5)
    func plane(_ tag: UInt8, stride: Int, columns: Int, rows: Int) -> [UInt8] {
      (0..<(stride * rows)).map { index -> UInt8 in
        let (row, column) = index.quotientAndRemainder(dividingBy: stride)
        return column < columns ? tag &+ UInt8(row * 16 + column) : 0xAB
      }
    }
    let luma = plane(0x10, stride: lumaStride, columns: width, rows: height)
    let cb = plane(0x80, stride: chromaStride, columns: 3, rows: 2)
    let cr = plane(0xC0, stride: chromaStride, columns: 3, rows: 2)
    // The tight picture, by hand: the luma rows, then Cb's rows and Cr's (YU12) or each row's pairs (NV12).
    var tight: [UInt8] = []
    for row in 0..<height { tight += luma[(row * lumaStride)..<(row * lumaStride + width)] }
    if fourCC == .yu12 {
      for chroma in [cb, cr] { for row in 0..<2 { tight += chroma[(row * chromaStride)..<(row * chromaStride + 3)] } }
    } else {
      for row in 0..<2 { for column in 0..<3 { tight += [cb[row * chromaStride + column], cr[row * chromaStride + column]] } }
    }
    #expect(tight.count == layout.tightSize)
    var fromTight = [UInt8](repeating: 0xEE, count: layout.bufferSize)
    var fromPlanes = fromTight
    #expect(tight.withUnsafeBytes { source in fromTight.withUnsafeMutableBytes { layout.pack(source, into: $0) } })
    let packed = luma.withUnsafeBytes { y in
      cb.withUnsafeBytes { u in
        cr.withUnsafeBytes { v in
          fromPlanes.withUnsafeMutableBytes {
            layout.pack(
              luma: y.baseAddress!, lumaStride: lumaStride, cb: u.baseAddress!, cr: v.baseAddress!, chromaStride: chromaStride,
              into: $0)
          }
        }
      }
    }
    #expect(packed)
    #expect(fromPlanes == fromTight)
    #expect(!fromPlanes.contains(0xAB), "nothing of a stride's tail")
  }
}
