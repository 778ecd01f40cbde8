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

  deinit { tjDestroy(raw) }
}

/// Stills: JPEG from planar YCbCr, straight, with no RGB in between.
public enum JPEGEncoder {
  /// Compresses 4:2:2 planes at `quality` (1-100) into a baseline JFIF JPEG.
  public static func encode(_ image: PlanarYUV422, quality: Int) throws(JPEGError) -> [UInt8] {
    let handle = try TurboHandle(compressing: true)
    var jpeg: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    let status = image.luma.withUnsafeBufferPointer { y in
      image.cb.withUnsafeBufferPointer { u in
        image.cr.withUnsafeBufferPointer { v in
          var planes: [UnsafePointer<UInt8>?] = [y.baseAddress, u.baseAddress, v.baseAddress]
          var strides: [Int32] = [Int32(image.width), Int32(image.chromaWidth), Int32(image.chromaWidth)]
          return tjCompressFromYUVPlanes(
            handle.raw, &planes, Int32(image.width), &strides, Int32(image.height), Int32(TJSAMP_422.rawValue),
            &jpeg, &size, Int32(quality), 0)
        }
      }
    }
    defer { tjFree(jpeg) }
    guard status == 0, let jpeg else { throw handle.error("tjCompressFromYUVPlanes") }
    return Array(UnsafeBufferPointer(start: jpeg, count: Int(size)))
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
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = 0
    var colorspace: Int32 = 0
    let header = tjDecompressHeader3(handle.raw, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace)
    guard header == 0, width > 0, height > 0 else { throw handle.error("tjDecompressHeader3") }
    var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
    let status = pixels.withUnsafeMutableBufferPointer { out in
      tjDecompress2(
        handle.raw, jpeg, UInt(jpeg.count), out.baseAddress, width, width * 3, height, Int32(TJPF_RGB.rawValue), 0)
    }
    guard status == 0 else { throw handle.error("tjDecompress2") }
    return RGBImage(width: Int(width), height: Int(height), pixels: pixels)
  }
}
