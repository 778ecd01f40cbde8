/// Three separate planes of 4:2:2 YCbCr: what TurboJPEG compresses without an RGB detour.
public struct PlanarYUV422: Sendable {
  public let width: Int
  public let height: Int
  public var luma: [UInt8]
  public var cb: [UInt8]
  public var cr: [UInt8]
  public var chromaWidth: Int { (width + 1) / 2 }

  /// Planes already split (libyuv's YUY2ToI422 in the Scaling adapter) and in full range.
  public init(width: Int, height: Int, luma: [UInt8], cb: [UInt8], cr: [UInt8]) {
    precondition(luma.count >= width * height && cb.count >= (width + 1) / 2 * height && cr.count >= cb.count)
    self.width = width
    self.height = height
    self.luma = luma
    self.cb = cb
    self.cr = cr
  }

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
    // Table lookups through raw pointers: Array subscripts in this loop cost a third of the still's time.
    lumaMap.withUnsafeBufferPointer { lumaTable in
      chromaMap.withUnsafeBufferPointer { chromaTable in
        luma.withUnsafeMutableBufferPointer { y in
          cb.withUnsafeMutableBufferPointer { u in
            cr.withUnsafeMutableBufferPointer { v in
              let pairs = width / 2
              for row in 0..<height {
                let line = src.baseAddress! + row * stride
                let yRow = y.baseAddress! + row * width
                let uRow = u.baseAddress! + row * chromaWidth
                let vRow = v.baseAddress! + row * chromaWidth
                for pair in 0..<pairs {
                  let at = line + pair * 4
                  yRow[pair * 2] = lumaTable[Int(at[0])]
                  yRow[pair * 2 + 1] = lumaTable[Int(at[2])]
                  uRow[pair] = chromaTable[Int(at[1])]
                  vRow[pair] = chromaTable[Int(at[3])]
                }
                if width % 2 == 1 {
                  // An odd width ends in half a macropixel: its Y0 and its chroma, no Y1.
                  let at = line + pairs * 4
                  yRow[pairs * 2] = lumaTable[Int(at[0])]
                  uRow[pairs] = chromaTable[Int(at[1])]
                  vRow[pairs] = chromaTable[Int(at[3])]
                }
              }
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
  /// Full range to limited, rounded to nearest: 0 -> 16, 255 -> 235; chroma 0 -> 16, 128 -> 128, 255 -> 240.
  public static let compressLuma: [UInt8] = (0...255).map { (value: Int) -> UInt8 in
    let scaled: Int = value * 219 * 2 + 255
    return UInt8(16 + scaled / (255 * 2))
  }
  public static let compressChroma: [UInt8] = (0...255).map { (value: Int) -> UInt8 in
    let scaled: Int = (value - 128) * 224 * 2
    let rounded: Int = scaled + (scaled >= 0 ? 255 : -255)
    return UInt8(128 + rounded / (255 * 2))
  }
}
