import CYUV
import Imaging

/// A camera's packed frame split into the full-range planes a still is compressed from: libyuv's SIMD
/// de-interleave (YUY2ToI422, SplitUVPlane), then the range stretched two samples a lookup. The pure
/// initialisers in Imaging (`PlanarYUV422(yuyv:)`, `PlanarYCbCr(nv12:)`) are the reference the tests hold
/// these to, byte for byte.
public enum PackedPlanes {
  public static func yuyv(
    _ source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, range: YCbCrRange
  ) -> PlanarYUV422 {
    precondition(source.count >= stride * height, "YUYV frame shorter than its geometry")
    let chromaWidth = (width + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * height)
    var cr = cb
    luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          _ = YUY2ToI422(
            source.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(stride), y.baseAddress, Int32(width),
            u.baseAddress, Int32(chromaWidth), v.baseAddress, Int32(chromaWidth), Int32(width), Int32(height))
          if range == .limited { expand(y, u, v) }
        }
      }
    }
    return PlanarYUV422(width: width, height: height, luma: luma, cb: cb, cr: cr)
  }

  public static func nv12(
    _ source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, range: YCbCrRange
  ) -> PlanarYCbCr {
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    precondition(source.count >= stride * (height + chromaHeight), "NV12 frame shorter than its geometry")
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var cr = cb
    let base = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
    luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          CopyPlane(base, Int32(stride), y.baseAddress, Int32(width), Int32(width), Int32(height))
          SplitUVPlane(
            base + stride * height, Int32(stride), u.baseAddress, Int32(chromaWidth), v.baseAddress, Int32(chromaWidth),
            Int32(chromaWidth), Int32(chromaHeight))
          if range == .limited { expand(y, u, v) }
        }
      }
    }
    return PlanarYCbCr(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb, cr: cr)
  }

  private static func expand(
    _ y: UnsafeMutableBufferPointer<UInt8>, _ u: UnsafeMutableBufferPointer<UInt8>, _ v: UnsafeMutableBufferPointer<UInt8>
  ) {
    RangeExpansion.expandLuma(y)
    RangeExpansion.expandChroma(u)
    RangeExpansion.expandChroma(v)
  }
}
