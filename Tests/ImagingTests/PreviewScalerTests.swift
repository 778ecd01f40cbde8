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

  /// A 4x2 grey ramp (neutral chroma, so each pixel's colour is its own luma), drawn 1:1 turned and mirrored:
  /// each display pixel must come from the source pixel the orientation names.
  @Test(arguments: [(0, false), (90, false), (180, false), (270, false), (0, true), (90, true)])
  func rotationAndMirrorPickTheRightSourcePixel(rotation: Int, mirror: Bool) {
    let (width, height) = (4, 2)
    func luma(_ x: Int, _ y: Int) -> UInt8 { UInt8(16 + 25 * (y * width + x)) }
    var frame: [UInt8] = []
    for y in 0..<height { for x in 0..<width { frame += [luma(x, y), 128] } }
    let orientation = PreviewOrientation(rotation: rotation, mirror: mirror)
    let (outWidth, outHeight) = orientation.swapsAxes ? (height, width) : (width, height)
    let scaler = PreviewScaler(
      sourceWidth: width, sourceHeight: height, target: PixelRect(x: 0, y: 0, width: outWidth, height: outHeight),
      orientation: orientation)
    var out = [UInt32](repeating: 0, count: outWidth * outHeight)
    frame.withUnsafeBytes { source in
      out.withUnsafeMutableBytes { scaler.drawYUYV(source, stride: width * 2, into: $0, destinationStride: outWidth * 4) }
    }
    for row in 0..<outHeight {
      for displayColumn in 0..<outWidth {
        // Undo the mirror on the display, then the clockwise turn.
        let column = mirror ? outWidth - 1 - displayColumn : displayColumn
        let (x, y) =
          switch rotation {
          case 90: (row, height - 1 - column)
          case 180: (width - 1 - column, height - 1 - row)
          case 270: (width - 1 - row, column)
          default: (column, row)
          }
        #expect(out[row * outWidth + displayColumn] == rgb(y: luma(x, y), cb: 128, cr: 128), "(\(displayColumn), \(row))")
      }
    }
  }
}
