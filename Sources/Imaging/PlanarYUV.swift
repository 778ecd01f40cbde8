/// Three separate planes of 4:2:2 YCbCr: what TurboJPEG compresses without an RGB detour.
public struct PlanarYUV422: Sendable {
  public let width: Int
  public let height: Int
  public var luma: [UInt8]
  public var cb: [UInt8]
  public var cr: [UInt8]
  public var chromaWidth: Int { (width + 1) / 2 }

  /// Splits a packed YUYV frame (`stride` bytes a row) into planes.
  public init(yuyv source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) {
    precondition(source.count >= stride * height, "YUYV frame shorter than its geometry")
    self.width = width
    self.height = height
    let chromaWidth = (width + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * height)
    var cr = [UInt8](repeating: 0, count: chromaWidth * height)
    let src = source.bindMemory(to: UInt8.self)
    luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          for row in 0..<height {
            let line = row * stride
            for pair in 0..<chromaWidth {
              let at = line + pair * 4
              y[row * width + pair * 2] = src[at]
              if pair * 2 + 1 < width { y[row * width + pair * 2 + 1] = src[at + 2] }
              u[row * chromaWidth + pair] = src[at + 1]
              v[row * chromaWidth + pair] = src[at + 3]
            }
          }
        }
      }
    }
    self.luma = luma
    self.cb = cb
    self.cr = cr
  }
}
