/// Three separate planes of 4:2:2 YCbCr: what TurboJPEG compresses without an RGB detour.
public struct PlanarYUV422: Sendable {
  public let width: Int
  public let height: Int
  public var luma: [UInt8]
  public var cb: [UInt8]
  public var cr: [UInt8]
  public var chromaWidth: Int { (width + 1) / 2 }

  /// Splits a packed YUYV frame (`stride` bytes a row) into full-range planes, as JPEG (JFIF) defines them.
  ///
  /// Cameras send limited range (Y 16-235, Cb/Cr 16-240) unless they say otherwise; passed to the encoder
  /// as they are, black would decode as grey 16 and white as 235.
  public init(yuyv source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, range: YCbCrRange) {
    precondition(source.count >= stride * height, "YUYV frame shorter than its geometry")
    self.width = width
    self.height = height
    let chromaWidth = (width + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * height)
    var cr = [UInt8](repeating: 0, count: chromaWidth * height)
    let src = source.bindMemory(to: UInt8.self)
    let lumaMap = range == .limited ? YCbCrRange.expandLuma : YCbCrRange.identity
    let chromaMap = range == .limited ? YCbCrRange.expandChroma : YCbCrRange.identity
    luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          for row in 0..<height {
            let line = row * stride
            for pair in 0..<chromaWidth {
              let at = line + pair * 4
              y[row * width + pair * 2] = lumaMap[Int(src[at])]
              if pair * 2 + 1 < width { y[row * width + pair * 2 + 1] = lumaMap[Int(src[at + 2])] }
              u[row * chromaWidth + pair] = chromaMap[Int(src[at + 1])]
              v[row * chromaWidth + pair] = chromaMap[Int(src[at + 3])]
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

/// The quantization of a YCbCr signal (V4L2_QUANTIZATION_LIM_RANGE or _FULL_RANGE).
public enum YCbCrRange: Sendable {
  case limited, full

  static let identity: [UInt8] = (0...255).map { UInt8($0) }
  static let expandLuma: [UInt8] = (0...255).map { value in
    UInt8(clamping: ((value - 16) * 255 * 2 + 219) / (219 * 2))
  }
  static let expandChroma: [UInt8] = (0...255).map { value in
    let scaled = (value - 128) * 255 * 2
    return UInt8(clamping: 128 + (scaled + (scaled >= 0 ? 224 : -224)) / (224 * 2))
  }
}
