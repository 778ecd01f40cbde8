/// Converts camera frames to XRGB8888 and scales them into a rectangle of a display buffer in one pass.
///
/// Nearest-neighbour, with the column map computed once per geometry rather than per frame.
public struct PreviewScaler: Sendable {
  public let sourceWidth: Int
  public let sourceHeight: Int
  public let target: PixelRect
  private let sourceColumns: [Int]
  private let sourceRows: [Int]

  public init(sourceWidth: Int, sourceHeight: Int, target: PixelRect) {
    self.sourceWidth = sourceWidth
    self.sourceHeight = sourceHeight
    self.target = target
    // Sample each destination pixel's centre.
    sourceColumns = (0..<target.width).map { min(sourceWidth - 1, ($0 * 2 + 1) * sourceWidth / (target.width * 2)) }
    sourceRows = (0..<target.height).map { min(sourceHeight - 1, ($0 * 2 + 1) * sourceHeight / (target.height * 2)) }
  }

  /// Draws a packed YUYV frame (`stride` bytes a row) into `destination`, an XRGB8888 buffer of
  /// `destinationStride` bytes a row; only the target rectangle is written.
  public func drawYUYV(
    _ source: UnsafeRawBufferPointer, stride: Int,
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(source.count >= stride * sourceHeight, "YUYV frame shorter than its geometry")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    let src = source.bindMemory(to: UInt8.self)
    for (row, sourceRow) in sourceRows.enumerated() {
      let line = sourceRow * stride
      let out = (destination.baseAddress! + (target.y + row) * destinationStride + target.x * 4)
        .assumingMemoryBound(to: UInt32.self)
      for (column, sourceColumn) in sourceColumns.enumerated() {
        // A YUYV macropixel is Y0 Cb Y1 Cr for two pixels: the chroma pair starts at the even pixel.
        let pair = line + (sourceColumn & ~1) * 2
        let luma = src[line + sourceColumn * 2]
        out[column] = rgb(y: luma, cb: src[pair + 1], cr: src[pair + 3])
      }
    }
  }

  /// Draws an NV12 frame (Y plane of `stride` bytes a row, then the interleaved CbCr plane at half height).
  public func drawNV12(
    _ source: UnsafeRawBufferPointer, stride: Int,
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(source.count >= stride * (sourceHeight + (sourceHeight + 1) / 2), "NV12 frame shorter than its geometry")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    let src = source.bindMemory(to: UInt8.self)
    let chromaStart = stride * sourceHeight
    for (row, sourceRow) in sourceRows.enumerated() {
      let line = sourceRow * stride
      let chromaLine = chromaStart + (sourceRow / 2) * stride
      let out = (destination.baseAddress! + (target.y + row) * destinationStride + target.x * 4)
        .assumingMemoryBound(to: UInt32.self)
      for (column, sourceColumn) in sourceColumns.enumerated() {
        let pair = chromaLine + (sourceColumn & ~1)
        out[column] = rgb(y: src[line + sourceColumn], cb: src[pair], cr: src[pair + 1])
      }
    }
  }

  /// Paints everything outside the target rectangle black: the letterbox bars.
  public func clearBorders(
    _ destination: UnsafeMutableRawBufferPointer, width: Int, height: Int, destinationStride: Int
  ) {
    for row in 0..<height {
      let line = (destination.baseAddress! + row * destinationStride).assumingMemoryBound(to: UInt32.self)
      if row < target.y || row >= target.y + target.height {
        line.update(repeating: 0, count: width)
      } else {
        line.update(repeating: 0, count: target.x)
        let right = target.x + target.width
        (line + right).update(repeating: 0, count: width - right)
      }
    }
  }
}
