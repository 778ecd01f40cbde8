import CYUV
import Imaging

/// A camera frame converted into an encoder's 4:2:0 limited-range picture, in place, through libyuv's SIMD:
/// YUYV and NV12 are limited range already and only re-laid; decoded JPEG planes (full range, any chroma
/// subsampling) have their chroma resampled to 4:2:0 and their range squeezed.
public enum EncoderPlanes {
  /// A YUYV frame `width` x `height` (the target's size), `stride` bytes a row.
  public static func yuyv(_ source: UnsafeRawBufferPointer, stride: Int, range: YCbCrRange, into target: I420Target) {
    precondition(source.count >= stride * target.height, "YUYV frame shorter than its geometry")
    _ = YUY2ToI420(
      source.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(stride), target.luma, Int32(target.lumaStride),
      target.cb, Int32(target.chromaStride), target.cr, Int32(target.chromaStride), Int32(target.width),
      Int32(target.height))
    if range == .full { target.compressRange() }
  }

  /// An NV12 frame of the target's size.
  public static func nv12(_ source: UnsafeRawBufferPointer, stride: Int, range: YCbCrRange, into target: I420Target) {
    precondition(source.count >= stride * (target.height + target.chromaHeight), "NV12 frame shorter than its geometry")
    let base = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
    _ = NV12ToI420(
      base, Int32(stride), base + stride * target.height, Int32(stride), target.luma, Int32(target.lumaStride),
      target.cb, Int32(target.chromaStride), target.cr, Int32(target.chromaStride), Int32(target.width),
      Int32(target.height))
    if range == .full { target.compressRange() }
  }

  /// Planes as a JPEG decodes to (full range), of any size and chroma subsampling: each plane box-filtered to
  /// the target's size and 4:2:0 (a preset's smaller movie, an odd size made even), luma copied when it fits.
  public static func planes(_ planes: any YCbCrPlanes, range: YCbCrRange, into target: I420Target) {
    planes.luma.withUnsafeBufferPointer { y in
      if planes.width == target.width, planes.height == target.height {
        CopyPlane(y.baseAddress, Int32(planes.width), target.luma, Int32(target.lumaStride), Int32(target.width), Int32(target.height))
      } else {
        ScalePlane(
          y.baseAddress, Int32(planes.width), Int32(planes.width), Int32(planes.height), target.luma,
          Int32(target.lumaStride), Int32(target.width), Int32(target.height), kFilterBox)
      }
    }
    for (source, destination) in [(planes.cb, target.cb), (planes.cr, target.cr)] {
      source.withUnsafeBufferPointer { (chroma) -> Void in
        ScalePlane(
          chroma.baseAddress, Int32(planes.chromaWidth), Int32(planes.chromaWidth), Int32(planes.chromaHeight), destination,
          Int32(target.chromaStride), Int32(target.chromaWidth), Int32(target.chromaHeight), kFilterBox)
      }
    }
    if range == .full { target.compressRange() }
  }
}
