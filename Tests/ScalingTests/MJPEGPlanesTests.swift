import Imaging
import JPEGCodec
import Testing

@testable import Scaling

/// The MJPEG preview's path (TurboJPEG to YCbCr planes at a DCT scale, libyuv scales, turns and converts)
/// against a reference decode: TurboJPEG's own upsampling and colour conversion to RGB at the same scale,
/// fitted by the pure PreviewScaler with the same crop and orientation.
@Suite struct MJPEGPlanesTests {
  typealias Screen = LibYUVPreviewTests.Screen

  enum Sampling: String, CaseIterable { case s422, s420, s444 }

  /// Full-range planes: luma rises left to right, Cb down the picture, Cr across it the other way; slow
  /// enough that nearest sampling, upsampling and the two conversions differ by a few levels at most.
  static func jpeg(_ sampling: Sampling, width: Int, height: Int) throws -> [UInt8] {
    let chromaWidth = sampling == .s444 ? width : (width + 1) / 2
    let chromaHeight = sampling == .s420 ? (height + 1) / 2 : height
    var luma = [UInt8](repeating: 0, count: width * height)
    for y in 0..<height { for x in 0..<width { luma[y * width + x] = UInt8(16 + x * 200 / width) } }
    var cb = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var cr = cb
    for y in 0..<chromaHeight {
      for x in 0..<chromaWidth {
        cb[y * chromaWidth + x] = UInt8(60 + y * 120 / chromaHeight)
        cr[y * chromaWidth + x] = UInt8(200 - x * 120 / chromaWidth)
      }
    }
    let planes = PlanarYCbCr(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb, cr: cr)
    return try JPEGEncoder.encode(planes, quality: 95)
  }

  /// Draws `jpeg` both ways; `decoder` is reused across calls like the service's.
  static func draw(
    _ jpeg: [UInt8], with decoder: JPEGPlaneDecoder, screen: (Int, Int), crop: ((Int, Int) -> PixelRect)? = nil,
    orientation: PreviewOrientation = .init()
  ) throws -> (fast: Screen, reference: Screen, target: PixelRect, decoded: (Int, Int)) {
    let header = try JPEGDecoder.header(jpeg)
    let (fitWidth, fitHeight) = orientation.swapsAxes ? (header.height, header.width) : (header.width, header.height)
    let target = PixelRect.aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: screen.0, screen.1)
    let (coverWidth, coverHeight) = orientation.swapsAxes ? (target.height, target.width) : (target.width, target.height)
    var fastScreen = Screen(width: screen.0, height: screen.1)
    var referenceScreen = Screen(width: screen.0, height: screen.1)
    let stride = fastScreen.stride
    let view = try jpeg.withUnsafeBytes { try decoder.decode($0, covering: coverWidth, coverHeight) }
    let fast = LibYUVPreview(
      sourceWidth: view.width, sourceHeight: view.height, crop: crop?(view.width, view.height), target: target,
      orientation: orientation)
    fastScreen.pixels.withUnsafeMutableBytes { out in
      fast.clearBorders(out, width: screen.0, height: screen.1, destinationStride: stride)
      fast.drawPlanes(view, into: out, destinationStride: stride)
    }
    let picture = try jpeg.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: coverWidth, coverHeight) }
    #expect((picture.width, picture.height) == (view.width, view.height), "same DCT scale both ways")
    let reference = PreviewScaler(
      sourceWidth: picture.width, sourceHeight: picture.height, crop: fast.crop, target: target, orientation: orientation)
    referenceScreen.pixels.withUnsafeMutableBytes { out in
      reference.clearBorders(out, width: screen.0, height: screen.1, destinationStride: stride)
      picture.pixels.withUnsafeBytes { reference.drawXRGB($0, stride: picture.stride, into: out, destinationStride: stride) }
    }
    return (fastScreen, referenceScreen, target, (view.width, view.height))
  }

  @Test(arguments: Sampling.allCases, [(320, 180, 480, 300), (320, 180, 320, 200), (640, 360, 150, 100), (320, 240, 200, 100)])
  func matchesAReferenceDecode(sampling: Sampling, sizes: (Int, Int, Int, Int)) throws {
    let decoder = try JPEGPlaneDecoder()
    let jpeg = try Self.jpeg(sampling, width: sizes.0, height: sizes.1)
    let (fast, reference, target, _) = try Self.draw(jpeg, with: decoder, screen: (sizes.2, sizes.3))
    let worst = LibYUVPreviewTests.compare(fast, reference, target: target)
    #expect(worst <= 12, "\(sampling) \(sizes): worst channel difference \(worst)")
  }

  @Test(arguments: [0, 90, 180, 270])
  func turnedMirroredAndZoomedLikeTheReference(rotation: Int) throws {
    let decoder = try JPEGPlaneDecoder()
    let jpeg = try Self.jpeg(.s422, width: 640, height: 360)
    for mirror in [false, true] {
      for zoomed in [false, true] {
        let orientation = PreviewOrientation(rotation: rotation, mirror: mirror)
        let crop: ((Int, Int) -> PixelRect)? =
          zoomed ? { PixelRect(x: $0 / 4 + 1, y: $1 / 4 + 1, width: $0 / 2, height: $1 / 2) } : nil
        let (fast, reference, target, _) = try Self.draw(
          jpeg, with: decoder, screen: (400, 250), crop: crop, orientation: orientation)
        let worst = LibYUVPreviewTests.compare(fast, reference, target: target)
        #expect(worst <= 12, "rotation \(rotation) mirror \(mirror) zoomed \(zoomed): worst channel difference \(worst)")
      }
    }
  }

  /// The DCT scale: 1920x1080 into 640x400 decodes at 1/2 (960x540 still covers 640x360), into 1280x800 at 1/1;
  /// one decoder goes from the small geometry to the large one and back.
  @Test func decodesAtTheDCTScaleAndReusesItsPlanes() throws {
    let decoder = try JPEGPlaneDecoder()
    let jpeg = try Self.jpeg(.s422, width: 1920, height: 1080)
    for (screen, decoded, denominator) in [((640, 400), (960, 540), 2), ((1280, 800), (1920, 1080), 1), ((200, 120), (240, 135), 8)] {
      let (fast, reference, target, size) = try Self.draw(jpeg, with: decoder, screen: screen)
      #expect(size == decoded && decoder.denominator == denominator, "\(screen)")
      #expect(LibYUVPreviewTests.compare(fast, reference, target: target) <= 12, "\(screen)")
    }
  }

  /// Full range, as JPEG is: white luma 235 stays 235 (a limited-range conversion would make it 255).
  @Test func fullRangeLikeJPEG() throws {
    let (width, height) = (64, 32)
    let planes = PlanarYCbCr(
      width: width, height: height, chromaWidth: width / 2, chromaHeight: height,
      luma: [UInt8](repeating: 235, count: width * height), cb: [UInt8](repeating: 128, count: width * height / 2),
      cr: [UInt8](repeating: 128, count: width * height / 2))
    let jpeg = try JPEGEncoder.encode(planes, quality: 95)
    let (fast, _, target, _) = try Self.draw(jpeg, with: try JPEGPlaneDecoder(), screen: (64, 32))
    let pixel = fast.rgb(target.x + 10, target.y + 10)
    #expect(abs(pixel.0 - 235) <= 2 && abs(pixel.1 - 235) <= 2 && abs(pixel.2 - 235) <= 2, "\(pixel)")
  }

  @Test func aTruncatedFrameIsAnError() throws {
    let decoder = try JPEGPlaneDecoder()
    let jpeg = try Self.jpeg(.s422, width: 320, height: 180)
    #expect(throws: JPEGError.self) { try Array(jpeg.prefix(9)).withUnsafeBytes { _ = try decoder.decode($0, covering: 320, 180) } }
    // The decoder is still usable after a bad frame.
    _ = try jpeg.withUnsafeBytes { try decoder.decode($0, covering: 320, 180) }
  }
}
