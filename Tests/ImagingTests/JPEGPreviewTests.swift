import JPEGCodec
import Testing

@testable import Imaging

/// MJPEG preview and the review picture: decode at the DCT scale that still covers the target, then the
/// nearest-neighbour scaler fits the rest. vivid has no MJPEG, so the JPEGs are made here from colour bars.
@Suite struct JPEGPreviewTests {
  @Test(arguments: [
    // (file, target, denominator)
    ((1920, 1080), (1280, 720), 1),
    ((1920, 1080), (960, 540), 2),
    ((1920, 1080), (900, 500), 2),
    ((1920, 1080), (480, 270), 4),
    ((1920, 1080), (160, 90), 8),
    ((1280, 720), (1280, 720), 1),
    ((1280, 720), (450, 800), 1),
    ((640, 360), (160, 90), 4),
    ((1000, 1000), (126, 126), 4),
    ((1000, 1000), (125, 125), 8),
  ])
  func theLargestDCTScaleThatStillCovers(file: (Int, Int), target: (Int, Int), denominator: Int) {
    #expect(DCTScale.denominator(width: file.0, height: file.1, targetWidth: target.0, targetHeight: target.1) == denominator)
  }

  @Test(arguments: [(1280, 720, 1280, 800), (1920, 1080, 1280, 800), (1920, 1080, 640, 400)])
  func aJPEGFrameDecodesScaledAndFitsAsColourBars(width: Int, height: Int, screenWidth: Int, screenHeight: Int) throws {
    let bars = ColourBars(width: width, height: height)
    let planes = bars.bytes.withUnsafeBytes {
      PlanarYUV422(yuyv: $0, width: width, height: height, stride: bars.stride, range: .limited)
    }
    let jpeg = try JPEGEncoder.encode(planes, quality: 90)
    let target = PixelRect.aspectFit(sourceWidth: width, sourceHeight: height, into: screenWidth, screenHeight)
    let picture = try jpeg.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: target.width, target.height) }
    #expect(picture.width >= target.width && picture.height >= target.height)
    #expect(picture.width == (width + picture.denominator - 1) / picture.denominator)
    let scaler = PreviewScaler(sourceWidth: picture.width, sourceHeight: picture.height, target: target)
    let stride = screenWidth * 4
    var screen = [UInt8](repeating: 0xAB, count: stride * screenHeight)
    screen.withUnsafeMutableBytes { out in
      scaler.clearBorders(out, width: screenWidth, height: screenHeight, destinationStride: stride)
      picture.pixels.withUnsafeBytes { scaler.drawXRGB($0, stride: picture.stride, into: out, destinationStride: stride) }
    }
    for bar in 0..<8 {
      let x = target.x + ColourBars.centre(of: bar, width: target.width)
      let at = (target.y + target.height / 2) * stride + x * 4
      // XRGB8888 little-endian: B, G, R, X.
      let got = (Int(screen[at + 2]), Int(screen[at + 1]), Int(screen[at]))
      let want = ColourBars.rgb[bar]
      #expect(abs(got.0 - want.0) <= 8 && abs(got.1 - want.1) <= 8 && abs(got.2 - want.2) <= 8, "bar \(bar): \(got)")
    }
    #expect(screen[0..<4] == [0, 0, 0, 0], "letterbox black")
  }

  @Test func aTruncatedFrameIsAnErrorNotACrash() {
    let garbage: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDB, 0x00]
    #expect(throws: JPEGError.self) { try garbage.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: 64, 64) } }
  }
}
