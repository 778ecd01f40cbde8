import Testing

@testable import Imaging

@Suite struct PreviewScalerTests {
  @Test(arguments: [
    // (source, screen, expected rectangle)
    ((640, 360), (1280, 800), PixelRect(x: 0, y: 40, width: 1280, height: 720)),
    ((640, 480), (1280, 800), PixelRect(x: 107, y: 0, width: 1066, height: 800)),
    ((1280, 800), (1280, 800), PixelRect(x: 0, y: 0, width: 1280, height: 800)),
    ((1920, 1080), (800, 1280), PixelRect(x: 0, y: 415, width: 800, height: 450)),
  ])
  func aspectFitLetterboxesOrPillarboxes(source: (Int, Int), screen: (Int, Int), expected: PixelRect) {
    #expect(PixelRect.aspectFit(sourceWidth: source.0, sourceHeight: source.1, into: screen.0, screen.1) == expected)
  }

  @Test func colourBarsSurviveConversionAndScaling() {
    let bars = ColourBars(width: 320, height: 180)
    let screen = (width: 1280, height: 800, stride: 1280 * 4 + 64)
    var pixels = [UInt8](repeating: 0xAB, count: screen.stride * screen.height)
    let target = PixelRect.aspectFit(sourceWidth: 320, sourceHeight: 180, into: screen.width, screen.height)
    let scaler = PreviewScaler(sourceWidth: 320, sourceHeight: 180, target: target)
    pixels.withUnsafeMutableBytes { out in
      scaler.clearBorders(out, width: screen.width, height: screen.height, destinationStride: screen.stride)
      bars.bytes.withUnsafeBytes { source in
        scaler.drawYUYV(source, stride: bars.stride, into: out, destinationStride: screen.stride)
      }
    }
    func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
      let at = y * screen.stride + x * 4
      return (Int(pixels[at + 2]), Int(pixels[at + 1]), Int(pixels[at]))  // XRGB8888 little-endian: B G R X
    }
    for bar in 0..<8 {
      let sample = pixel(ColourBars.centre(of: bar, width: screen.width), 400)
      #expect(near(sample, ColourBars.rgb[bar], tolerance: 3), "bar \(bar): \(sample)")
    }
    #expect(pixel(640, 10) == (0, 0, 0), "letterbox bar above")
    #expect(pixel(640, 790) == (0, 0, 0), "letterbox bar below")
    #expect(pixels[screen.width * 4 + 10] == 0xAB, "row padding beyond the width is left alone")
  }

  @Test func oddSourceColumnsTakeChromaFromTheirPair() {
    // Two pixels sharing one chroma pair: different lumas, one colour.
    let frame: [UInt8] = [16, 128, 235, 128]
    var out = [UInt32](repeating: 0, count: 2)
    let scaler = PreviewScaler(sourceWidth: 2, sourceHeight: 1, target: PixelRect(x: 0, y: 0, width: 2, height: 1))
    frame.withUnsafeBytes { source in
      out.withUnsafeMutableBytes { scaler.drawYUYV(source, stride: 4, into: $0, destinationStride: 8) }
    }
    #expect(out == [0x00_0000, 0xFF_FFFF])
  }
}
