import CTurboJPEG
import Imaging

/// The MJPEG preview's decoder: one TurboJPEG handle and one set of planes, reused frame after frame, so a
/// frame costs no allocation. A frame is decoded at the DCT scale that still covers the target into its own
/// YCbCr planes: no upsampling or colour conversion inside libjpeg (libyuv does both, fused with the scale,
/// straight into the display buffer). Not thread-safe: one decoder per thread.
public final class JPEGPlaneDecoder {
  private let handle: TurboHandle
  private var storage: UnsafeMutablePointer<UInt8>?
  private var capacity = 0
  /// The IDCT scale of the last frame (1, 2, 4 or 8): what a zoom crop of the frame is divided by.
  public private(set) var denominator = 1

  public init() throws(JPEGError) {
    handle = try TurboHandle(compressing: false)
  }

  deinit { storage?.deallocate() }

  /// Decodes `jpeg` at the largest DCT scale that still covers `targetWidth` x `targetHeight`. The planes
  /// stay valid until the next call. Grey and 4:1:1 frames are refused (no camera sends them as MJPEG).
  public func decode(
    _ jpeg: UnsafeRawBufferPointer, covering targetWidth: Int, _ targetHeight: Int
  ) throws(JPEGError) -> YCbCrPlaneView {
    let base = jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self)
    let (width, height, subsampling) = try handle.header(base, count: jpeg.count)
    guard [TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_440].map({ Int32($0.rawValue) }).contains(subsampling) else {
      throw JPEGError(call: "decodePlanes", message: "unsupported chroma subsampling \(subsampling)")
    }
    let denominator = DCTScale.denominator(
      width: Int(width), height: Int(height), targetWidth: targetWidth, targetHeight: targetHeight)
    // TurboJPEG picks the scaling factor from the requested size and rounds scaled sizes up.
    let scaledWidth = (Int(width) + denominator - 1) / denominator
    let scaledHeight = (Int(height) + denominator - 1) / denominator
    let chromaWidth = Int(tjPlaneWidth(1, Int32(scaledWidth), subsampling))
    let chromaHeight = Int(tjPlaneHeight(1, Int32(scaledHeight), subsampling))
    let lumaCount = scaledWidth * scaledHeight
    let chromaCount = chromaWidth * chromaHeight
    if lumaCount + 2 * chromaCount > capacity {
      storage?.deallocate()
      capacity = lumaCount + 2 * chromaCount
      storage = .allocate(capacity: capacity)
    }
    let y = storage!
    let (u, v) = (y + lumaCount, y + lumaCount + chromaCount)
    // Tuples, not arrays: the per-frame path allocates nothing.
    var planes: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?) = (y, u, v)
    var strides: (Int32, Int32, Int32) = (Int32(scaledWidth), Int32(chromaWidth), Int32(chromaWidth))
    // The whole tuple is bound, not `&tuple.0`: an optimised build may pass a copy of the first element only.
    let status = withUnsafeMutablePointer(to: &planes) { tuple in
      tuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { planes in
        withUnsafeMutablePointer(to: &strides) { tuple in
          tuple.withMemoryRebound(to: Int32.self, capacity: 3) { strides in
            tjDecompressToYUVPlanes(
              handle.raw, base, UInt(jpeg.count), planes, Int32(scaledWidth), strides, Int32(scaledHeight), 0)
          }
        }
      }
    }
    guard status == 0 else { throw handle.error("tjDecompressToYUVPlanes") }
    self.denominator = denominator
    return YCbCrPlaneView(
      width: scaledWidth, height: scaledHeight, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: y, cb: u,
      cr: v, lumaStride: scaledWidth, chromaStride: chromaWidth)
  }
}
