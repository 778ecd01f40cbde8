import CYUV
import Imaging

/// A camera's packed frame split into the full-range planes a still is compressed from: libyuv's SIMD
/// de-interleave (YUY2ToI422, SplitUVPlane), then the range stretched two samples a lookup. The pure
/// initialisers in Imaging (`PlanarYUV422(yuyv:)`, `PlanarYCbCr(nv12:)`) are the reference the tests hold
/// these to, byte for byte.
public enum PackedPlanes {
  /// Where a frame's planes go: `width` luma samples a row, (`width` + 1) / 2 chroma samples a row.
  public struct Destination: @unchecked Sendable {
    public let luma: UnsafeMutablePointer<UInt8>
    public let cb: UnsafeMutablePointer<UInt8>
    public let cr: UnsafeMutablePointer<UInt8>

    public init(luma: UnsafeMutablePointer<UInt8>, cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>) {
      self.luma = luma
      self.cb = cb
      self.cr = cr
    }
  }

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
          yuyv(
            source, width: width, stride: stride, rows: 0..<height, range: range,
            into: Destination(luma: y.baseAddress!, cb: u.baseAddress!, cr: v.baseAddress!))
        }
      }
    }
    return PlanarYUV422(width: width, height: height, luma: luma, cb: cb, cr: cr)
  }

  /// Rows `rows` of a YUYV frame into the same rows of a whole frame's planes: a band of a still, split on the
  /// core that compresses it.
  public static func yuyv(
    _ source: UnsafeRawBufferPointer, width: Int, stride: Int, rows: Range<Int>, range: YCbCrRange,
    into planes: Destination
  ) {
    precondition(source.count >= stride * rows.upperBound, "YUYV frame shorter than its geometry")
    let chromaWidth = (width + 1) / 2
    let (y, u, v) = (planes.luma + rows.lowerBound * width, planes.cb + rows.lowerBound * chromaWidth, planes.cr + rows.lowerBound * chromaWidth)
    _ = YUY2ToI422(
      source.baseAddress!.assumingMemoryBound(to: UInt8.self) + rows.lowerBound * stride, Int32(stride), y, Int32(width),
      u, Int32(chromaWidth), v, Int32(chromaWidth), Int32(width), Int32(rows.count))
    if range == .limited { expand(y, width * rows.count, u, v, chromaWidth * rows.count) }
  }

  public static func nv12(
    _ source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, range: YCbCrRange
  ) -> PlanarYCbCr {
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var cr = cb
    luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          nv12(
            source, width: width, height: height, stride: stride, rows: 0..<height, range: range,
            into: Destination(luma: y.baseAddress!, cb: u.baseAddress!, cr: v.baseAddress!))
        }
      }
    }
    return PlanarYCbCr(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb, cr: cr)
  }

  /// Rows `rows` (starting on an even row) of a `height`-row NV12 frame into the same rows of its planes.
  public static func nv12(
    _ source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, rows: Range<Int>, range: YCbCrRange,
    into planes: Destination
  ) {
    precondition(rows.lowerBound % 2 == 0 && rows.upperBound <= height, "NV12 rows must start on a chroma row")
    let chromaWidth = (width + 1) / 2
    let chromaRows = rows.lowerBound / 2..<(rows.upperBound + 1) / 2
    precondition(source.count >= stride * (height + (height + 1) / 2), "NV12 frame shorter than its geometry")
    let base = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
    let y = planes.luma + rows.lowerBound * width
    let (u, v) = (planes.cb + chromaRows.lowerBound * chromaWidth, planes.cr + chromaRows.lowerBound * chromaWidth)
    CopyPlane(base + rows.lowerBound * stride, Int32(stride), y, Int32(width), Int32(width), Int32(rows.count))
    SplitUVPlane(
      base + stride * (height + chromaRows.lowerBound), Int32(stride), u, Int32(chromaWidth), v, Int32(chromaWidth),
      Int32(chromaWidth), Int32(chromaRows.count))
    if range == .limited { expand(y, width * rows.count, u, v, chromaWidth * chromaRows.count) }
  }

  private static func expand(
    _ y: UnsafeMutablePointer<UInt8>, _ lumaCount: Int, _ u: UnsafeMutablePointer<UInt8>,
    _ v: UnsafeMutablePointer<UInt8>, _ chromaCount: Int
  ) {
    RangeExpansion.expandLuma(UnsafeMutableBufferPointer(start: y, count: lumaCount))
    RangeExpansion.expandChroma(UnsafeMutableBufferPointer(start: u, count: chromaCount))
    RangeExpansion.expandChroma(UnsafeMutableBufferPointer(start: v, count: chromaCount))
  }
}
