/// Full-range (JPEG) YCbCr planes in memory someone else owns: a decoded MJPEG frame handed from the
/// decoder to the scaler without a copy. Valid only until its owner decodes the next frame.
public struct YCbCrPlaneView {
  public let width: Int
  public let height: Int
  public let chromaWidth: Int
  public let chromaHeight: Int
  public let luma: UnsafePointer<UInt8>
  public let cb: UnsafePointer<UInt8>
  public let cr: UnsafePointer<UInt8>
  public let lumaStride: Int
  public let chromaStride: Int

  public init(
    width: Int, height: Int, chromaWidth: Int, chromaHeight: Int, luma: UnsafePointer<UInt8>, cb: UnsafePointer<UInt8>,
    cr: UnsafePointer<UInt8>, lumaStride: Int, chromaStride: Int
  ) {
    precondition(lumaStride >= width && chromaStride >= chromaWidth, "plane strides shorter than their rows")
    self.width = width
    self.height = height
    self.chromaWidth = chromaWidth
    self.chromaHeight = chromaHeight
    self.luma = luma
    self.cb = cb
    self.cr = cr
    self.lumaStride = lumaStride
    self.chromaStride = chromaStride
  }
}
