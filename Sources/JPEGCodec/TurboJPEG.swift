import CTurboJPEG
import Imaging

/// A TurboJPEG failure, with the library's own words.
public struct JPEGError: Error, Sendable, CustomStringConvertible {
  public let call: String
  public let message: String
  public var description: String { "\(call): \(message)" }
}

/// One TurboJPEG handle; each encode or decode makes its own, so the codec can run on any worker thread.
struct TurboHandle: ~Copyable {
  let raw: tjhandle

  init(compressing: Bool) throws(JPEGError) {
    guard let handle = compressing ? tjInitCompress() : tjInitDecompress() else {
      throw JPEGError(call: compressing ? "tjInitCompress" : "tjInitDecompress", message: "out of memory")
    }
    raw = handle
  }

  func error(_ call: String) -> JPEGError {
    JPEGError(call: call, message: tjGetErrorStr2(raw).map { String(cString: $0) } ?? "unknown error")
  }

  /// The picture's size and chroma subsampling, from its header; an empty or broken picture is an error.
  func header(_ jpeg: UnsafePointer<UInt8>?, count: Int) throws(JPEGError) -> (width: Int32, height: Int32, subsampling: Int32) {
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = 0
    var colorspace: Int32 = 0
    guard tjDecompressHeader3(raw, jpeg, UInt(count), &width, &height, &subsampling, &colorspace) == 0,
      width > 0, height > 0
    else { throw error("tjDecompressHeader3") }
    return (width, height, subsampling)
  }

  deinit { tjDestroy(raw) }
}

/// Stills: JPEG from planar YCbCr, straight, with no RGB in between.
public enum JPEGEncoder {
  /// Compresses full-range planes at `quality` (1-100) into a baseline JFIF JPEG. The chroma geometry
  /// picks the sampling: half width is 4:2:2, half width and height 4:2:0, full size 4:4:4.
  public static func encode(_ image: some YCbCrPlanes, quality: Int) throws(JPEGError) -> [UInt8] {
    // The throw is carried out of the buffers' closures as a Result: Swift 6.0's withUnsafeBufferPointer
    // rethrows untyped errors, which a typed throws cannot pass on.
    let encoded: Result<[UInt8], JPEGError> = image.luma.withUnsafeBufferPointer { y in
      image.cb.withUnsafeBufferPointer { u in
        image.cr.withUnsafeBufferPointer { v in
          do throws(JPEGError) {
            return .success(
              try encode(
                YCbCrPlaneView(
                  width: image.width, height: image.height, chromaWidth: image.chromaWidth,
                  chromaHeight: image.chromaHeight, luma: y.baseAddress!, cb: u.baseAddress!, cr: v.baseAddress!,
                  lumaStride: image.width, chromaStride: image.chromaWidth),
                quality: quality))
          } catch {
            return .failure(error)
          }
        }
      }
    }
    return try encoded.get()
  }

  /// Compresses the planes `view` sees (a whole picture, or the rows of one band of it) the same way.
  public static func encode(_ view: YCbCrPlaneView, quality: Int) throws(JPEGError) -> [UInt8] {
    guard let subsampling = subsampling(view.width, view.height, view.chromaWidth, view.chromaHeight) else {
      throw JPEGError(call: "encode", message: "no JPEG sampling has chroma \(view.chromaWidth)x\(view.chromaHeight) for \(view.width)x\(view.height)")
    }
    // TurboJPEG reads luma to the next whole chroma sample (an even width, and for 4:2:0 an even height): an odd
    // size is given its last column or row again rather than let it read past the plane.
    let paddedWidth = Int(tjPlaneWidth(0, Int32(view.width), Int32(subsampling.rawValue)))
    let paddedHeight = Int(tjPlaneHeight(0, Int32(view.height), Int32(subsampling.rawValue)))
    var padded: [UInt8] = []
    if paddedWidth > view.width || paddedHeight > view.height {
      padded = [UInt8](repeating: 0, count: paddedWidth * paddedHeight)
      for row in 0..<paddedHeight {
        let from = view.luma + min(row, view.height - 1) * view.lumaStride
        for column in 0..<paddedWidth { padded[row * paddedWidth + column] = from[min(column, view.width - 1)] }
      }
    }
    let handle = try TurboHandle(compressing: true)
    var jpeg: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    let status = padded.withUnsafeBufferPointer { padded in
      var planes: [UnsafePointer<UInt8>?] = [padded.isEmpty ? view.luma : padded.baseAddress, view.cb, view.cr]
      var strides: [Int32] = [
        Int32(padded.isEmpty ? view.lumaStride : paddedWidth), Int32(view.chromaStride), Int32(view.chromaStride),
      ]
      return tjCompressFromYUVPlanes(
        handle.raw, &planes, Int32(view.width), &strides, Int32(view.height), Int32(subsampling.rawValue), &jpeg, &size,
        Int32(quality), 0)
    }
    defer { tjFree(jpeg) }
    guard status == 0, let jpeg else { throw handle.error("tjCompressFromYUVPlanes") }
    return Array(UnsafeBufferPointer(start: jpeg, count: Int(size)))
  }

  /// The rows of one MCU of a picture with this chroma height (16 for 4:2:0, 8 otherwise): bands of a
  /// picture compressed apart are cut on multiples of it, so that their blocks are the whole picture's.
  public static func mcuHeight(height: Int, chromaHeight: Int) -> Int {
    chromaHeight == height ? 8 : 16
  }

  static func subsampling(_ width: Int, _ height: Int, _ chromaWidth: Int, _ chromaHeight: Int) -> TJSAMP? {
    let half = (width + 1) / 2
    let halfHeight = (height + 1) / 2
    switch (chromaWidth, chromaHeight) {
    case (width, height): return TJSAMP_444
    case (half, height): return TJSAMP_422
    case (half, halfHeight): return TJSAMP_420
    default: return nil
    }
  }
}

/// A decoded picture in packed RGB, 3 bytes a pixel.
public struct RGBImage: Sendable {
  public let width: Int
  public let height: Int
  public var pixels: [UInt8]

  public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
    let at = (y * width + x) * 3
    return (pixels[at], pixels[at + 1], pixels[at + 2])
  }
}

public enum JPEGDecoder {
  /// Decodes a whole JPEG at full size into RGB.
  public static func decodeRGB(_ jpeg: [UInt8]) throws(JPEGError) -> RGBImage {
    let handle = try TurboHandle(compressing: false)
    let (width, height, _) = try handle.header(jpeg, count: jpeg.count)
    var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
    let status = pixels.withUnsafeMutableBufferPointer { out in
      tjDecompress2(
        handle.raw, jpeg, UInt(jpeg.count), out.baseAddress, width, width * 3, height, Int32(TJPF_RGB.rawValue), 0)
    }
    guard status == 0 else { throw handle.error("tjDecompress2") }
    return RGBImage(width: Int(width), height: Int(height), pixels: pixels)
  }

  /// Decodes a JPEG into its own YCbCr planes at full size, without colour conversion: how a camera's
  /// MJPEG frame becomes a thumbnail. Grey and 4:1:1 JPEGs are refused (no camera sends them as MJPEG).
  public static func decodePlanes(_ jpeg: [UInt8]) throws(JPEGError) -> PlanarYCbCr {
    let handle = try TurboHandle(compressing: false)
    let (width, height, subsampling) = try handle.header(jpeg, count: jpeg.count)
    guard [TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440].map({ Int32($0.rawValue) }).contains(subsampling) else {
      throw JPEGError(call: "decodePlanes", message: "unsupported chroma subsampling \(subsampling)")
    }
    let chromaWidth = Int(tjPlaneWidth(1, width, subsampling))
    let chromaHeight = Int(tjPlaneHeight(1, height, subsampling))
    var luma = [UInt8](repeating: 0, count: Int(width) * Int(height))
    var cb = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var cr = cb
    let status = luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          var planes: [UnsafeMutablePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
          var strides: [Int32] = [width, Int32(chromaWidth), Int32(chromaWidth)]
          return tjDecompressToYUVPlanes(handle.raw, jpeg, UInt(jpeg.count), &planes, width, &strides, height, 0)
        }
      }
    }
    guard status == 0 else { throw handle.error("tjDecompressToYUVPlanes") }
    return PlanarYCbCr(
      width: Int(width), height: Int(height), chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb,
      cr: cr)
  }

  /// Decodes just the header: size and chroma subsampling (TJSAMP value).
  public static func header(_ jpeg: [UInt8]) throws(JPEGError) -> (width: Int, height: Int, subsampling: Int) {
    let (width, height, subsampling) = try TurboHandle(compressing: false).header(jpeg, count: jpeg.count)
    return (Int(width), Int(height), Int(subsampling))
  }

  public static func header(_ jpeg: UnsafeRawBufferPointer) throws(JPEGError) -> (width: Int, height: Int, subsampling: Int) {
    let base = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self)
    let (width, height, subsampling) = try TurboHandle(compressing: false).header(base, count: jpeg.count)
    return (Int(width), Int(height), Int(subsampling))
  }

  /// Decodes to XRGB8888 (TurboJPEG's BGRX: one little-endian 0x00RRGGBB word a pixel) at the largest DCT
  /// scale that still covers `targetWidth` x `targetHeight`: the review picture and the MJPEG preview, which
  /// the preview scaler then fits the rest of the way.
  public static func decodeXRGB(
    _ jpeg: UnsafeRawBufferPointer, covering targetWidth: Int, _ targetHeight: Int
  ) throws(JPEGError) -> XRGBImage {
    let handle = try TurboHandle(compressing: false)
    let base = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self)
    let (width, height, _) = try handle.header(base, count: jpeg.count)
    let denominator = DCTScale.denominator(
      width: Int(width), height: Int(height), targetWidth: targetWidth, targetHeight: targetHeight)
    let scaledWidth = (Int(width) + denominator - 1) / denominator
    let scaledHeight = (Int(height) + denominator - 1) / denominator
    var pixels = [UInt8](repeating: 0, count: scaledWidth * scaledHeight * 4)
    let status = pixels.withUnsafeMutableBufferPointer { out in
      // tjDecompress2 picks the scaling factor from the requested size.
      tjDecompress2(
        handle.raw, base, UInt(jpeg.count), out.baseAddress, Int32(scaledWidth), Int32(scaledWidth * 4),
        Int32(scaledHeight), Int32(TJPF_BGRX.rawValue), 0)
    }
    guard status == 0 else { throw handle.error("tjDecompress2") }
    return XRGBImage(width: scaledWidth, height: scaledHeight, denominator: denominator, pixels: pixels)
  }
}

/// A decoded picture in XRGB8888, `width * 4` bytes a row, decoded at 1/`denominator` of the file's size.
public struct XRGBImage: Sendable {
  public let width: Int
  public let height: Int
  public let denominator: Int
  public var pixels: [UInt8]
  public var stride: Int { width * 4 }

  public init(width: Int, height: Int, denominator: Int, pixels: [UInt8]) {
    precondition(pixels.count >= width * height * 4, "XRGB pixels shorter than the size")
    self.width = width
    self.height = height
    self.denominator = denominator
    self.pixels = pixels
  }

  /// The pixels of `rect`, as a picture of their own.
  public func cropped(to rect: PixelRect) -> XRGBImage {
    var out = [UInt8](repeating: 0, count: rect.width * rect.height * 4)
    for row in 0..<rect.height {
      let from = ((rect.y + row) * width + rect.x) * 4
      out.replaceSubrange(row * rect.width * 4..<(row + 1) * rect.width * 4, with: pixels[from..<from + rect.width * 4])
    }
    return XRGBImage(width: rect.width, height: rect.height, denominator: denominator, pixels: out)
  }
}
