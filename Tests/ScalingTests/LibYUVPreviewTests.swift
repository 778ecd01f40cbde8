import Imaging
import Testing

@testable import Scaling

/// libyuv's preview against the pure reference scaler: same rectangle, same orientation, same crop.
@Suite struct LibYUVPreviewTests {
  enum Format: CaseIterable { case yuyv, nv12 }

  /// A frame whose luma rises left to right and whose chroma changes top to bottom, slowly enough that
  /// nearest and bilinear sampling, and libyuv's and our fixed point, differ by a few levels at most.
  static func gradient(_ format: Format, width: Int, height: Int) -> (bytes: [UInt8], stride: Int) {
    func y(_ x: Int) -> UInt8 { UInt8(16 + x * 200 / width) }
    func cb(_ row: Int) -> UInt8 { UInt8(60 + row * 120 / height) }
    func cr(_ row: Int) -> UInt8 { UInt8(180 - row * 100 / height) }
    switch format {
    case .yuyv:
      var bytes = [UInt8](repeating: 0, count: width * 2 * height)
      for row in 0..<height {
        for pair in 0..<(width / 2) {
          let at = row * width * 2 + pair * 4
          bytes[at] = y(pair * 2)
          bytes[at + 1] = cb(row)
          bytes[at + 2] = y(pair * 2 + 1)
          bytes[at + 3] = cr(row)
        }
      }
      return (bytes, width * 2)
    case .nv12:
      var bytes = [UInt8](repeating: 0, count: width * height * 3 / 2)
      for row in 0..<height { for x in 0..<width { bytes[row * width + x] = y(x) } }
      for row in 0..<(height / 2) {
        for pair in 0..<(width / 2) {
          bytes[width * height + row * width + pair * 2] = cb(row * 2)
          bytes[width * height + row * width + pair * 2 + 1] = cr(row * 2)
        }
      }
      return (bytes, width)
    }
  }

  struct Screen {
    let width: Int
    let height: Int
    var stride: Int { width * 4 + 32 }
    var pixels: [UInt8]
    init(width: Int, height: Int) {
      self.width = width
      self.height = height
      pixels = [UInt8](repeating: 0xAB, count: (width * 4 + 32) * height)
    }
    func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
      let at = y * stride + x * 4
      return (Int(pixels[at + 2]), Int(pixels[at + 1]), Int(pixels[at]))
    }
  }

  /// Draws `frame` on two screens, by libyuv and by the reference.
  static func draw(
    _ format: Format, _ frame: (bytes: [UInt8], stride: Int), width: Int, height: Int, crop: PixelRect? = nil,
    screen: (Int, Int), orientation: PreviewOrientation, filter: PreviewFilter
  ) -> (fast: Screen, reference: Screen, target: PixelRect) {
    let fitSource = crop.map { ($0.width, $0.height) } ?? (width, height)
    let (fitWidth, fitHeight) = orientation.swapsAxes ? (fitSource.1, fitSource.0) : fitSource
    let target = PixelRect.aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: screen.0, screen.1)
    let fast = LibYUVPreview(
      sourceWidth: width, sourceHeight: height, crop: crop, target: target, orientation: orientation, filter: filter)
    let reference = fast.reference
    var fastScreen = Screen(width: screen.0, height: screen.1)
    var referenceScreen = Screen(width: screen.0, height: screen.1)
    let stride = fastScreen.stride
    frame.bytes.withUnsafeBytes { source in
      fastScreen.pixels.withUnsafeMutableBytes { out in
        fast.clearBorders(out, width: screen.0, height: screen.1, destinationStride: stride)
        switch format {
        case .yuyv: fast.drawYUYV(source, stride: frame.stride, into: out, destinationStride: stride)
        case .nv12: fast.drawNV12(source, stride: frame.stride, into: out, destinationStride: stride)
        }
      }
      referenceScreen.pixels.withUnsafeMutableBytes { out in
        reference.clearBorders(out, width: screen.0, height: screen.1, destinationStride: stride)
        switch format {
        case .yuyv: reference.drawYUYV(source, stride: frame.stride, into: out, destinationStride: stride)
        case .nv12: reference.drawNV12(source, stride: frame.stride, into: out, destinationStride: stride)
        }
      }
    }
    return (fastScreen, referenceScreen, target)
  }

  /// The largest difference of any channel of any pixel, and the screen outside `target` (which the caller
  /// works out for itself) exactly black.
  static func compare(_ fast: Screen, _ reference: Screen, target: PixelRect) -> Int {
    var worst = 0
    for y in 0..<fast.height {
      for x in 0..<fast.width {
        let (a, b) = (fast.rgb(x, y), reference.rgb(x, y))
        let inside = x >= target.x && x < target.x + target.width && y >= target.y && y < target.y + target.height
        if !inside {
          #expect(a == (0, 0, 0), "bar pixel \(x),\(y) is \(a)")
          if a != (0, 0, 0) { return 255 }
        }
        worst = max(worst, abs(a.0 - b.0), abs(a.1 - b.1), abs(a.2 - b.2))
      }
      // The padding beyond the width is the buffer's, never written.
      #expect(fast.pixels[y * fast.stride + fast.width * 4] == 0xAB)
    }
    return worst
  }

  @Test(arguments: Format.allCases, [0, 90, 180, 270])
  func matchesTheReferenceTurnedAndMirrored(format: Format, rotation: Int) {
    for mirror in [false, true] {
      for filter in [PreviewFilter.nearest, .bilinear] {
        let frame = Self.gradient(format, width: 320, height: 180)
        let orientation = PreviewOrientation(rotation: rotation, mirror: mirror)
        let (fast, reference, target) = Self.draw(
          format, frame, width: 320, height: 180, screen: (480, 300), orientation: orientation, filter: filter)
        // Worked by hand, not by the geometry under test: 320x180 fills 480 wide as 480x270, 15 rows above and
        // below; turned a quarter, 180x320 fills 300 high as 168.75 (168) x 300, 156 columns either side.
        let expected =
          orientation.swapsAxes
          ? PixelRect(x: 156, y: 0, width: 168, height: 300) : PixelRect(x: 0, y: 15, width: 480, height: 270)
        #expect(target == expected)
        let worst = Self.compare(fast, reference, target: expected)
        #expect(worst <= 12, "\(format) \(rotation) mirror \(mirror) \(filter): worst channel difference \(worst)")
      }
    }
  }

  @Test(arguments: Format.allCases)
  func sameSizeIsOneConversion(format: Format) {
    let frame = Self.gradient(format, width: 64, height: 36)
    let (fast, reference, target) = Self.draw(
      format, frame, width: 64, height: 36, screen: (64, 48), orientation: .init(), filter: .bilinear)
    #expect(target == PixelRect(x: 0, y: 6, width: 64, height: 36))
    #expect(Self.compare(fast, reference, target: target) <= 3)
  }

  @Test(arguments: Format.allCases)
  func aZoomCropShowsTheCentre(format: Format) {
    let frame = Self.gradient(format, width: 320, height: 180)
    let crop = PixelRect(x: 80, y: 46, width: 160, height: 90)
    for rotation in [0, 90] {
      let (fast, reference, target) = Self.draw(
        format, frame, width: 320, height: 180, crop: crop, screen: (400, 250),
        orientation: .init(rotation: rotation), filter: .bilinear)
      // By hand: 160x90 fills 400 wide as 400x225 (12 rows above); turned, 90x160 fills 250 high as 140.6 (140)
      // x 250, 130 columns to the left.
      let fitted =
        rotation == 0 ? PixelRect(x: 0, y: 12, width: 400, height: 225) : PixelRect(x: 130, y: 0, width: 140, height: 250)
      #expect(target == fitted, "rotation \(rotation)")
      #expect(Self.compare(fast, reference, target: fitted) <= 12, "rotation \(rotation)")
      // The luma ramp across the crop: its first column is source x 80, not 0.
      let left = rotation == 0 ? fast.rgb(target.x + 1, target.y + target.height / 2) : fast.rgb(target.x + target.width / 2, target.y + 1)
      let expected = (16 + 80 * 200 / 320 - 16) * 298 / 256
      #expect(abs(left.0 - expected) <= 8, "first shown column is the crop's, got \(left)")
    }
  }

  /// 8x4 pixels of distinct greys drawn 1:1: every display pixel comes from exactly the source pixel the
  /// orientation names (greys 7 levels apart, conversions within 2).
  @Test(arguments: [0, 90, 180, 270], [false, true])
  func turnsAndMirrorsPickExactPixels(rotation: Int, mirror: Bool) {
    let (width, height) = (8, 4)
    var frame: [UInt8] = []
    for y in 0..<height { for x in 0..<width { frame += [UInt8(16 + 7 * (y * width + x)), 128] } }
    let orientation = PreviewOrientation(rotation: rotation, mirror: mirror)
    let (fast, reference, target) = Self.draw(
      .yuyv, (frame, width * 2), width: width, height: height,
      screen: orientation.swapsAxes ? (height, width) : (width, height), orientation: orientation, filter: .nearest)
    #expect(target == PixelRect(x: 0, y: 0, width: fast.width, height: fast.height))
    #expect(Self.compare(fast, reference, target: target) <= 2)
  }

  /// vivid's bars, 1280x720 into 1280x800: in order, with black bars above and below.
  @Test func coloursBarsInOrderWithBlackBars() {
    let ycbcr: [(UInt8, UInt8, UInt8)] = [
      (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
      (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128),
    ]
    let rgb = [(191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0), (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0)]
    let (width, height) = (640, 360)
    var bytes = [UInt8](repeating: 0, count: width * 2 * height)
    for row in 0..<height {
      for pair in 0..<(width / 2) {
        let bar = ycbcr[pair * 16 / width]
        bytes.replaceSubrange((row * width * 2 + pair * 4)..<(row * width * 2 + pair * 4 + 4), with: [bar.0, bar.1, bar.0, bar.2])
      }
    }
    let (fast, _, target) = Self.draw(
      .yuyv, (bytes, width * 2), width: width, height: height, screen: (1280, 800), orientation: .init(),
      filter: .bilinear)
    #expect(target == PixelRect(x: 0, y: 40, width: 1280, height: 720))
    for bar in 0..<8 {
      let sample = fast.rgb((bar * 2 + 1) * 1280 / 16, 400)
      let want = rgb[bar]
      #expect(abs(sample.0 - want.0) <= 8 && abs(sample.1 - want.1) <= 8 && abs(sample.2 - want.2) <= 8, "bar \(bar): \(sample)")
    }
    #expect(fast.rgb(640, 39) == (0, 0, 0))
    #expect(fast.rgb(640, 760) == (0, 0, 0))
    #expect(fast.rgb(640, 40) != (0, 0, 0))
  }
}
