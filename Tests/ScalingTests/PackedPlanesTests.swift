import Imaging
import Testing

@testable import Scaling

/// libyuv's split and the paired range tables against the pure reference, byte for byte: every byte value
/// in every position (random frames), odd widths (half a macropixel), padded strides, both ranges.
@Suite struct PackedPlanesTests {
  static func random(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 6364136223846793005 &+ 1442695040888963407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
  }

  @Test(arguments: [(640, 360, 1280), (641, 361, 1288), (1920, 1080, 3840), (33, 7, 80)], [YCbCrRange.limited, .full])
  func yuyvSplitsAsTheReferenceDoes(size: (Int, Int, Int), range: YCbCrRange) {
    let (width, height, stride) = size
    let frame = Self.random(stride * height, seed: UInt64(width * 31 + height))
    let (fast, reference) = frame.withUnsafeBytes {
      (
        PackedPlanes.yuyv($0, width: width, height: height, stride: stride, range: range),
        PlanarYUV422(yuyv: $0, width: width, height: height, stride: stride, range: range)
      )
    }
    #expect(fast.luma == reference.luma)
    #expect(fast.cb == reference.cb)
    #expect(fast.cr == reference.cr)
  }

  @Test(arguments: [(640, 360, 640), (641, 361, 704), (1920, 1080, 1920), (33, 7, 64)], [YCbCrRange.limited, .full])
  func nv12SplitsAsTheReferenceDoes(size: (Int, Int, Int), range: YCbCrRange) {
    let (width, height, stride) = size
    let frame = Self.random(stride * (height + (height + 1) / 2), seed: UInt64(width * 17 + height))
    let (fast, reference) = frame.withUnsafeBytes {
      (
        PackedPlanes.nv12($0, width: width, height: height, stride: stride, range: range),
        PlanarYCbCr(nv12: $0, width: width, height: height, stride: stride, range: range)
      )
    }
    #expect(fast == reference)
  }

  /// The stretch itself, every value: black 16 to 0, white 235 to 255, chroma 16 and 240 to the ends, and
  /// what is outside the range clamped.
  @Test func theRangeStretchIsExactForEveryValue() {
    var luma = (0...255).map { UInt8($0) } + [7]
    var chroma = luma
    luma.withUnsafeMutableBufferPointer { RangeExpansion.expandLuma($0) }
    chroma.withUnsafeMutableBufferPointer { RangeExpansion.expandChroma($0) }
    for value in 0...255 {
      let expectedLuma = min(255, max(0, Int((Double(value - 16) * 255 / 219).rounded())))
      #expect(Int(luma[value]) == expectedLuma, "luma \(value)")
      let expectedChroma = min(255, max(0, 128 + Int((Double(value - 128) * 255 / 224).rounded())))
      #expect(Int(chroma[value]) == expectedChroma, "chroma \(value)")
    }
    #expect(luma[256] == 0 && chroma[256] == 0, "the odd last sample goes through the single table")
  }
}
