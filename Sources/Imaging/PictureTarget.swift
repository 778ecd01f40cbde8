/// Writable 4:2:0 planes someone else owns (an encoder's input picture): what a camera frame is converted
/// into for H.264, in place, so that the frame is copied once.
public struct I420Target {
  public let width: Int
  public let height: Int
  public let luma: UnsafeMutablePointer<UInt8>
  public let cb: UnsafeMutablePointer<UInt8>
  public let cr: UnsafeMutablePointer<UInt8>
  public let lumaStride: Int
  public let chromaStride: Int

  public var chromaWidth: Int { (width + 1) / 2 }
  public var chromaHeight: Int { (height + 1) / 2 }

  public init(
    width: Int, height: Int, luma: UnsafeMutablePointer<UInt8>, cb: UnsafeMutablePointer<UInt8>,
    cr: UnsafeMutablePointer<UInt8>, lumaStride: Int, chromaStride: Int
  ) {
    precondition(lumaStride >= width && chromaStride >= (width + 1) / 2, "plane strides shorter than their rows")
    self.width = width
    self.height = height
    self.luma = luma
    self.cb = cb
    self.cr = cr
    self.lumaStride = lumaStride
    self.chromaStride = chromaStride
  }

  /// Full range (JPEG's) squeezed to limited range (16-235, 16-240), row by row: what an H.264 stream that
  /// players read as limited must hold.
  public func compressRange() {
    for row in 0..<height {
      RangeExpansion.compressLuma(UnsafeMutableBufferPointer(start: luma + row * lumaStride, count: width))
    }
    for row in 0..<chromaHeight {
      RangeExpansion.compressChroma(UnsafeMutableBufferPointer(start: cb + row * chromaStride, count: chromaWidth))
      RangeExpansion.compressChroma(UnsafeMutableBufferPointer(start: cr + row * chromaStride, count: chromaWidth))
    }
  }
}
