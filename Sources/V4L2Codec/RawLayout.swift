import LinuxIO

/// Where the planes of a raw 4:2:0 picture sit in one codec buffer, as the driver laid them out: its line
/// stride (which may be wider than the picture), and its rows, which may be more than the picture's (codecs
/// work in blocks: 1080 lines are coded as 1088, and the visible rectangle is a selection), with the chroma
/// planes after the luma.
public struct RawLayout: Sendable, Equatable {
  public struct Plane: Sendable, Equatable {
    public let offset: Int
    public let stride: Int
    /// Bytes of picture in each row (the rest of the stride is padding).
    public let rowBytes: Int
    /// Rows of picture, and rows of buffer (the rest are padding below the picture).
    public let rows: Int
    public let bufferRows: Int
  }

  public let format: FourCC
  public let width: Int
  public let height: Int
  public let sizeImage: Int
  public let planes: [Plane]

  /// The contiguous formats a single buffer plane holds whole: YU12 (Y, then Cb, then Cr) and NV12 (Y, then
  /// Cb and Cr interleaved). nil for anything else.
  init?(format: FourCC, width: Int, height: Int, stride: Int, bufferHeight: Int, sizeImage: Int) {
    guard bufferHeight >= height, stride >= width else { return nil }
    let chromaRows = (height + 1) / 2
    let chromaBufferRows = (bufferHeight + 1) / 2
    let lumaSize = stride * bufferHeight
    switch format {
    case .yu12:
      let chromaStride = stride / 2
      let chromaBytes = (width + 1) / 2
      let chromaSize = chromaStride * chromaBufferRows
      planes = [
        Plane(offset: 0, stride: stride, rowBytes: width, rows: height, bufferRows: bufferHeight),
        Plane(offset: lumaSize, stride: chromaStride, rowBytes: chromaBytes, rows: chromaRows, bufferRows: chromaBufferRows),
        Plane(
          offset: lumaSize + chromaSize, stride: chromaStride, rowBytes: chromaBytes, rows: chromaRows,
          bufferRows: chromaBufferRows),
      ]
    case .nv12:
      planes = [
        Plane(offset: 0, stride: stride, rowBytes: width, rows: height, bufferRows: bufferHeight),
        Plane(
          offset: lumaSize, stride: stride, rowBytes: (width + 1) / 2 * 2, rows: chromaRows, bufferRows: chromaBufferRows),
      ]
    default:
      return nil
    }
    self.format = format
    self.width = width
    self.height = height
    self.sizeImage = sizeImage
  }

  /// Bytes of the picture with no padding: the planes one after another, each row `rowBytes` long.
  public var tightSize: Int { planes.reduce(0) { $0 + $1.rowBytes * $1.rows } }

  /// Bytes a buffer of this layout must hold.
  public var bufferSize: Int { planes.last.map { $0.offset + $0.stride * $0.bufferRows } ?? 0 }

  /// Copies a tightly packed picture into a buffer of this layout (fails if either is too small). Rows below
  /// the picture repeat its last row, so the blocks that straddle the edge code as cheaply as a flat edge
  /// (and the same input always gives the same buffer).
  public func pack(_ tight: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
    guard tight.count >= tightSize, buffer.count >= bufferSize else { return false }
    var source = 0
    for plane in planes {
      for row in 0..<plane.bufferRows {
        let target = buffer.baseAddress! + plane.offset + row * plane.stride
        let from = source + min(row, plane.rows - 1) * plane.rowBytes
        target.copyMemory(from: tight.baseAddress! + from, byteCount: plane.rowBytes)
      }
      source += plane.rows * plane.rowBytes
    }
    return true
  }

  /// The picture in a buffer of this layout, tightly packed.
  public func unpack(_ buffer: UnsafeRawBufferPointer) -> [UInt8]? {
    guard buffer.count >= (planes.last.map { $0.offset + $0.stride * ($0.rows - 1) + $0.rowBytes } ?? 0) else {
      return nil
    }
    var tight = [UInt8](repeating: 0, count: tightSize)
    tight.withUnsafeMutableBytes { target in
      var offset = 0
      for plane in planes {
        for row in 0..<plane.rows {
          (target.baseAddress! + offset).copyMemory(
            from: buffer.baseAddress! + plane.offset + row * plane.stride, byteCount: plane.rowBytes)
          offset += plane.rowBytes
        }
      }
    }
    return tight
  }
}
