import CYUV
import Imaging

/// The preview as the service draws it: libyuv's SIMD conversion, scaling and rotation, in the geometry of
/// the pure `PreviewScaler`, which stays the reference the tests hold this to (`make bench` shows why: the
/// pure scaler was 4-9x slower than libyuv, and the rule is that libyuv stays until ours beats it).
///
/// YUYV and NV12 are cropped by pointer, scaled while still packed (2 or 1.5 bytes a pixel, not 4: libyuv
/// has no YUYV scaler, so YUYV pairs are scaled as if they were ARGB pixels), and converted to XRGB8888
/// last, straight into the display's buffer; a turned or mirrored preview goes through I420 planes and
/// I420Rotate at the target's size first.
public final class LibYUVPreview {
  public let sourceWidth: Int
  public let sourceHeight: Int
  /// The part of the source shown (digital zoom), even-aligned so the chroma of its first pixel is its own.
  public let crop: PixelRect
  public let target: PixelRect
  public let orientation: PreviewOrientation
  /// Nearest neighbour by default, like the reference: on this machine libyuv's bilinear NV12 scaler cost
  /// 2-4x more (`make bench`), and the preview's target is within 3x of one memcpy of the frame.
  public let filter: PreviewFilter
  /// The scaled picture before turning (its size is the pre-turn target's), and the turned one.
  private let scaled: I420Planes
  private let turned: I420Planes
  private var scaledXRGB: [UInt8] = []
  /// YUYV or NV12 scaled to the target's size, still packed; or a decoded MJPEG frame converted before it is enlarged.
  private let packedScratch = Scratch()

  public init(
    sourceWidth: Int, sourceHeight: Int, crop: PixelRect? = nil, target: PixelRect,
    orientation: PreviewOrientation = .init(), filter: PreviewFilter = .nearest
  ) {
    self.sourceWidth = sourceWidth
    self.sourceHeight = sourceHeight
    self.crop = crop?.evenAligned ?? PixelRect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
    self.target = target
    self.orientation = orientation
    self.filter = filter
    let (width, height) = orientation.turned(target.width, target.height)
    scaled = I420Planes(width: width, height: height)
    turned = I420Planes(width: target.width, height: target.height)
  }

  /// The reference with the same geometry: letterbox bars, and what the tests compare against.
  public var reference: PreviewScaler {
    PreviewScaler(sourceWidth: sourceWidth, sourceHeight: sourceHeight, crop: crop, target: target, orientation: orientation)
  }

  private var straight: Bool { orientation.rotation == 0 && !orientation.mirror }

  /// Draws a packed YUYV frame (`stride` bytes a row) into the target rectangle of an XRGB8888 buffer.
  public func drawYUYV(
    _ source: UnsafeRawBufferPointer, stride: Int,
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(source.count >= stride * sourceHeight, "YUYV frame shorter than its geometry")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    var packed = source.baseAddress!.assumingMemoryBound(to: UInt8.self) + crop.y * stride + crop.x * 2
    var packedStride = stride
    let (width, height) = (scaled.width, scaled.height)
    if crop.width != width || crop.height != height {
      // libyuv has no YUYV scaler, but a macropixel (Y0 Cb Y1 Cr) is four bytes like an ARGB pixel: scaling
      // pairs of pixels keeps each pair's chroma its own, and the picture stays packed at the target's size.
      let pairs = (width + 1) / 2
      let scratch = packedScratch.bytes(pairs * 4 * height)
      _ = ARGBScale(packed, Int32(stride), Int32(crop.width / 2), Int32(crop.height), scratch, Int32(pairs * 4),
        Int32(pairs), Int32(height), filter.libyuv)
      packed = UnsafePointer(scratch)
      packedStride = pairs * 4
    }
    if straight {
      _ = YUY2ToARGB(packed, Int32(packedStride), out(destination, destinationStride), Int32(destinationStride),
        Int32(target.width), Int32(target.height))
      return
    }
    let p = scaled
    _ = YUY2ToI420(packed, Int32(packedStride), p.y, p.strideY, p.u, p.strideC, p.v, p.strideC, Int32(width), Int32(height))
    turnAndConvert(p, into: destination, destinationStride: destinationStride)
  }

  /// Draws an NV12 frame (Y plane of `stride` bytes a row, then the interleaved CbCr plane at half height).
  public func drawNV12(
    _ source: UnsafeRawBufferPointer, stride: Int,
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(source.count >= stride * (sourceHeight + (sourceHeight + 1) / 2), "NV12 frame shorter than its geometry")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    let base = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
    var luma = base + crop.y * stride + crop.x
    var chroma = base + stride * sourceHeight + (crop.y / 2) * stride + crop.x
    var (lumaStride, chromaStride) = (stride, stride)
    let (width, height) = (scaled.width, scaled.height)
    if crop.width != width || crop.height != height {
      let chromaWidth = 2 * ((width + 1) / 2)
      let count = width * height + chromaWidth * ((height + 1) / 2)
      let y = packedScratch.bytes(count)
      _ = NV12Scale(luma, Int32(stride), chroma, Int32(stride), Int32(crop.width), Int32(crop.height), y,
        Int32(width), y + width * height, Int32(chromaWidth), Int32(width), Int32(height), filter.libyuv)
      luma = UnsafePointer(y)
      chroma = UnsafePointer(y + width * height)
      (lumaStride, chromaStride) = (width, chromaWidth)
    }
    if straight {
      _ = NV12ToARGB(luma, Int32(lumaStride), chroma, Int32(chromaStride), out(destination, destinationStride),
        Int32(destinationStride), Int32(target.width), Int32(target.height))
      return
    }
    let (mode, flip) = Self.turn(orientation)
    let d = turned
    _ = NV12ToI420Rotate(luma, Int32(lumaStride), chroma, Int32(chromaStride), d.y, d.strideY, d.u, d.strideC, d.v,
      d.strideC, Int32(width), Int32(flip ? -height : height), mode)
    convert(d, into: destination, destinationStride: destinationStride)
  }

  /// Draws a decoded MJPEG frame from its own full-range YCbCr planes (4:2:2, 4:2:0, 4:4:4 or 4:4:0): the
  /// planes are scaled (and turned) at the target's size, and converted to XRGB8888 last, straight into
  /// the display's buffer; at the target's size and unturned it is one conversion, and an unturned picture
  /// that is enlarged is converted first and scaled as XRGB.
  public func drawPlanes(
    _ picture: YCbCrPlaneView, into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(picture.width == sourceWidth && picture.height == sourceHeight, "planes of another size")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    // Halved chroma axes: the crop is even-aligned, so its chroma starts and ends on whole samples.
    let xShift = picture.chromaWidth < picture.width ? 1 : 0
    let yShift = picture.chromaHeight < picture.height ? 1 : 0
    let (lumaStride, chromaStride) = (picture.lumaStride, picture.chromaStride)
    let luma = picture.luma + crop.y * lumaStride + crop.x
    let chromaOffset = (crop.y >> yShift) * chromaStride + (crop.x >> xShift)
    let (cb, cr) = (picture.cb + chromaOffset, picture.cr + chromaOffset)
    let chromaWidth = (crop.width + xShift) >> xShift
    let chromaHeight = (crop.height + yShift) >> yShift
    let (width, height) = (scaled.width, scaled.height)
    if straight, xShift == 1 || yShift == 0 {
      let convert =
        switch (xShift, yShift) {
        case (1, 1): J420ToARGB
        case (1, 0): J422ToARGB
        default: J444ToARGB
        }
      if crop.width == width, crop.height == height {
        _ = convert(luma, Int32(lumaStride), cb, Int32(chromaStride), cr, Int32(chromaStride),
          out(destination, destinationStride), Int32(destinationStride), Int32(width), Int32(height))
        return
      }
      if crop.width * crop.height < width * height {
        // Enlarging: converting the fewer source pixels and scaling XRGB costs less than scaling three planes
        // up and converting them all (1.0 vs 1.6 ms for 1280x720 to 1920x1080 here).
        let stride = crop.width * 4
        let converted = packedScratch.bytes(stride * crop.height)
        _ = convert(luma, Int32(lumaStride), cb, Int32(chromaStride), cr, Int32(chromaStride), converted,
          Int32(stride), Int32(crop.width), Int32(crop.height))
        _ = ARGBScale(converted, Int32(stride), Int32(crop.width), Int32(crop.height), out(destination, destinationStride),
          Int32(destinationStride), Int32(width), Int32(height), filter.libyuv)
        return
      }
    }
    let p = scaled
    ScalePlane(luma, Int32(lumaStride), Int32(crop.width), Int32(crop.height), p.y, p.strideY, Int32(width),
      Int32(height), filter.libyuv)
    ScalePlane(cb, Int32(chromaStride), Int32(chromaWidth), Int32(chromaHeight), p.u, p.strideC,
      Int32((width + 1) / 2), Int32((height + 1) / 2), filter.libyuv)
    ScalePlane(cr, Int32(chromaStride), Int32(chromaWidth), Int32(chromaHeight), p.v, p.strideC,
      Int32((width + 1) / 2), Int32((height + 1) / 2), filter.libyuv)
    turnAndConvert(p, into: destination, destinationStride: destinationStride, fullRange: true)
  }

  /// Draws an XRGB8888 picture (a decoded JPEG: the photo under review, an MJPEG frame), `stride` bytes a row.
  public func drawXRGB(
    _ source: UnsafeRawBufferPointer, stride: Int,
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(source.count >= stride * sourceHeight, "XRGB picture shorter than its geometry")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    let start = source.baseAddress!.assumingMemoryBound(to: UInt8.self) + crop.y * stride + crop.x * 4
    let destinationStart = out(destination, destinationStride)
    if straight {
      _ = ARGBScale(start, Int32(stride), Int32(crop.width), Int32(crop.height), destinationStart,
        Int32(destinationStride), Int32(target.width), Int32(target.height), filter.libyuv)
      return
    }
    let (width, height) = (scaled.width, scaled.height)
    if scaledXRGB.count != width * height * 4 { scaledXRGB = [UInt8](repeating: 0, count: width * height * 4) }
    let (mode, flip) = Self.turn(orientation)
    scaledXRGB.withUnsafeMutableBufferPointer { buffer in
      _ = ARGBScale(start, Int32(stride), Int32(crop.width), Int32(crop.height), buffer.baseAddress,
        Int32(width * 4), Int32(width), Int32(height), filter.libyuv)
      _ = ARGBRotate(buffer.baseAddress, Int32(width * 4), destinationStart, Int32(destinationStride),
        Int32(width), Int32(flip ? -height : height), mode)
    }
  }

  /// Paints everything outside the target rectangle black: the letterbox bars.
  public func clearBorders(
    _ destination: UnsafeMutableRawBufferPointer, width: Int, height: Int, destinationStride: Int
  ) {
    reference.clearBorders(destination, width: width, height: height, destinationStride: destinationStride)
  }

  private func out(_ destination: UnsafeMutableRawBufferPointer, _ stride: Int) -> UnsafeMutablePointer<UInt8> {
    (destination.baseAddress! + target.y * stride + target.x * 4).assumingMemoryBound(to: UInt8.self)
  }

  private func turnAndConvert(
    _ picture: I420Planes, into destination: UnsafeMutableRawBufferPointer, destinationStride: Int,
    fullRange: Bool = false
  ) {
    var p = picture
    if !straight {
      let (mode, flip) = Self.turn(orientation)
      let d = turned
      _ = I420Rotate(p.y, p.strideY, p.u, p.strideC, p.v, p.strideC, d.y, d.strideY, d.u, d.strideC, d.v, d.strideC,
        Int32(p.width), Int32(flip ? -p.height : p.height), mode)
      p = d
    }
    convert(p, into: destination, destinationStride: destinationStride, fullRange: fullRange)
  }

  private func convert(
    _ p: I420Planes, into destination: UnsafeMutableRawBufferPointer, destinationStride: Int, fullRange: Bool = false
  ) {
    // Cameras' raw YCbCr is limited range (V4L2's default, as in the reference); JPEG's is full range.
    _ = (fullRange ? J420ToARGB : I420ToARGB)(p.y, p.strideY, p.u, p.strideC, p.v, p.strideC, out(destination, destinationStride),
      Int32(destinationStride), Int32(target.width), Int32(target.height))
  }

  /// libyuv turns clockwise and has no mirror-while-turning; a mirror after a turn by r is the source read
  /// upside down (a negative height) and turned by 180 - r, since H·R(r) = R(180)·V·R(r) = R(180 - r)·V.
  static func turn(_ orientation: PreviewOrientation) -> (RotationMode, flip: Bool) {
    let degrees = orientation.mirror ? (540 - orientation.rotation) % 360 : orientation.rotation
    let mode: RotationMode =
      switch degrees {
      case 90: kRotate90
      case 180: kRotate180
      case 270: kRotate270
      default: kRotate0
      }
    return (mode, orientation.mirror)
  }
}

/// How libyuv resamples: nearest neighbour like the reference, or bilinear (smoother, dearer for NV12).
public enum PreviewFilter: Sendable {
  case nearest, bilinear
  var libyuv: FilterMode { self == .nearest ? kFilterNone : kFilterBilinear }
}

/// Three planes of an I420 picture in one allocation, reused frame after frame.
private final class I420Planes {
  let width: Int
  let height: Int
  let y: UnsafeMutablePointer<UInt8>
  let u: UnsafeMutablePointer<UInt8>
  let v: UnsafeMutablePointer<UInt8>
  var strideY: Int32 { Int32(width) }
  var strideC: Int32 { Int32((width + 1) / 2) }

  init(width: Int, height: Int) {
    self.width = width
    self.height = height
    let lumaCount = width * height
    let chromaCount = ((width + 1) / 2) * ((height + 1) / 2)
    y = .allocate(capacity: lumaCount + 2 * chromaCount)
    u = y + lumaCount
    v = u + chromaCount
  }
  deinit { y.deallocate() }
}

/// Bytes reused frame after frame, grown when a geometry needs more.
private final class Scratch {
  private var pointer: UnsafeMutablePointer<UInt8>?
  private var capacity = 0
  func bytes(_ count: Int) -> UnsafeMutablePointer<UInt8> {
    if count > capacity {
      pointer?.deallocate()
      pointer = .allocate(capacity: count)
      capacity = count
    }
    return pointer!
  }
  deinit { pointer?.deallocate() }
}

extension PixelRect {
  /// Rounded in to even coordinates and sizes: 4:2:x chroma pairs start at even pixels.
  fileprivate var evenAligned: PixelRect {
    PixelRect(x: x & ~1, y: y & ~1, width: max(2, width & ~1), height: max(2, height & ~1))
  }
}
