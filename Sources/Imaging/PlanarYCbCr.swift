/// Three separate planes of full-range YCbCr, whatever the chroma subsampling: what JPEG stores.
public protocol YCbCrPlanes: Sendable {
  var width: Int { get }
  var height: Int { get }
  var chromaWidth: Int { get }
  var chromaHeight: Int { get }
  var luma: [UInt8] { get }
  var cb: [UInt8] { get }
  var cr: [UInt8] { get }
}

extension PlanarYUV422: YCbCrPlanes {
  public var chromaHeight: Int { height }
}

/// Planes with any chroma geometry: 4:2:0 from NV12 and from thumbnails, or what a JPEG decodes to.
public struct PlanarYCbCr: YCbCrPlanes, Equatable {
  public let width: Int
  public let height: Int
  public let chromaWidth: Int
  public let chromaHeight: Int
  public var luma: [UInt8]
  public var cb: [UInt8]
  public var cr: [UInt8]

  public init(width: Int, height: Int, chromaWidth: Int, chromaHeight: Int, luma: [UInt8], cb: [UInt8], cr: [UInt8]) {
    precondition(luma.count >= width * height && cb.count >= chromaWidth * chromaHeight && cr.count >= cb.count)
    self.width = width
    self.height = height
    self.chromaWidth = chromaWidth
    self.chromaHeight = chromaHeight
    self.luma = luma
    self.cb = cb
    self.cr = cr
  }

  /// Splits an NV12 frame (a Y plane of `stride` bytes a row, then interleaved CbCr rows at half height with
  /// the same stride) into full-range 4:2:0 planes.
  public init(nv12 source: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, range: YCbCrRange) {
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    precondition(source.count >= stride * (height + chromaHeight), "NV12 frame shorter than its geometry")
    let lumaMap = range == .limited ? YCbCrRange.expandLuma : YCbCrRange.identity
    let chromaMap = range == .limited ? YCbCrRange.expandChroma : YCbCrRange.identity
    let src = source.bindMemory(to: UInt8.self)
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var cr = cb
    // Table lookups through raw pointers: Array subscripts in these loops cost a third of the still's time.
    lumaMap.withUnsafeBufferPointer { lumaTable in
      luma.withUnsafeMutableBufferPointer { y in
        for row in 0..<height {
          let line = src.baseAddress! + row * stride
          let out = y.baseAddress! + row * width
          for column in 0..<width { out[column] = lumaTable[Int(line[column])] }
        }
      }
    }
    let chromaStart = stride * height
    chromaMap.withUnsafeBufferPointer { chromaTable in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          for row in 0..<chromaHeight {
            let line = src.baseAddress! + chromaStart + row * stride
            let uRow = u.baseAddress! + row * chromaWidth
            let vRow = v.baseAddress! + row * chromaWidth
            for column in 0..<chromaWidth {
              uRow[column] = chromaTable[Int(line[column * 2])]
              vRow[column] = chromaTable[Int(line[column * 2 + 1])]
            }
          }
        }
      }
    }
    self.init(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb, cr: cr)
  }
}

extension YCbCrPlanes {
  /// A `width` x `height` 4:2:0 picture of this one, fitted inside with black bars (DCF thumbnails are
  /// 160x120 whatever the picture's shape), each pixel the average of samples spread over the area it covers.
  public func thumbnail(width: Int, height: Int) -> PlanarYCbCr {
    let chromaWidth = (width + 1) / 2
    let chromaHeight = (height + 1) / 2
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
    var cr = cb
    let fit = PixelRect.aspectFit(sourceWidth: self.width, sourceHeight: self.height, into: width, height)
    averageInto(&luma, stride: width, rect: fit, from: self.luma, self.width, self.height)
    // The chroma rectangle is the luma one halved; odd edges round outwards so no grey fringe shows.
    let chromaFit = PixelRect(x: fit.x / 2, y: fit.y / 2, width: (fit.x + fit.width + 1) / 2 - fit.x / 2,
      height: (fit.y + fit.height + 1) / 2 - fit.y / 2)
    averageInto(&cb, stride: chromaWidth, rect: chromaFit, from: self.cb, self.chromaWidth, self.chromaHeight)
    averageInto(&cr, stride: chromaWidth, rect: chromaFit, from: self.cr, self.chromaWidth, self.chromaHeight)
    return PlanarYCbCr(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb, cr: cr)
  }
}

/// Box-filters (sparsely) a whole `sourceWidth` x `sourceHeight` plane into `rect` of `destination`.
private func averageInto(
  _ destination: inout [UInt8], stride: Int, rect: PixelRect, from source: [UInt8], _ sourceWidth: Int,
  _ sourceHeight: Int
) {
  guard rect.width > 0, rect.height > 0 else { return }
  source.withUnsafeBufferPointer { src in
    destination.withUnsafeMutableBufferPointer { out in
      for row in 0..<rect.height {
        let top = row * sourceHeight / rect.height
        let bottom = max(top + 1, (row + 1) * sourceHeight / rect.height)
        for column in 0..<rect.width {
          let left = column * sourceWidth / rect.width
          let right = max(left + 1, (column + 1) * sourceWidth / rect.width)
          // At most 4x4 samples spread over the box: a thumbnail needs no more, and a full box over a
          // 1080p frame was most of the EXIF stage's time.
          let rowStep = max(1, (bottom - top) / 4)
          let columnStep = max(1, (right - left) / 4)
          var sum = 0
          var count = 0
          for y in Swift.stride(from: top, to: bottom, by: rowStep) {
            let line = y * sourceWidth
            for x in Swift.stride(from: left, to: right, by: columnStep) {
              sum += Int(src[line + x])
              count += 1
            }
          }
          out[(rect.y + row) * stride + rect.x + column] = UInt8((sum + count / 2) / count)
        }
      }
    }
  }
}

extension YCbCrPlanes {
  /// Half the size each way, every sample the average of the 2x2 it replaces (an odd last row or column
  /// counts twice): the movie presets' downscale. Chroma keeps its subsampling, so a 4:2:2 frame stays 4:2:2.
  public func halved() -> PlanarYCbCr {
    let width = (self.width + 1) / 2
    let height = (self.height + 1) / 2
    let chromaWidth = self.chromaWidth == self.width ? width : (width + 1) / 2
    let chromaHeight = self.chromaHeight == self.height ? height : (height + 1) / 2
    return PlanarYCbCr(
      width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight,
      luma: halve(luma, self.width, self.height, into: width, height),
      cb: halve(cb, self.chromaWidth, self.chromaHeight, into: chromaWidth, chromaHeight),
      cr: halve(cr, self.chromaWidth, self.chromaHeight, into: chromaWidth, chromaHeight))
  }
}

private func halve(_ plane: [UInt8], _ width: Int, _ height: Int, into outWidth: Int, _ outHeight: Int) -> [UInt8] {
  var out = [UInt8](repeating: 0, count: outWidth * outHeight)
  guard width > 0, height > 0 else { return out }
  plane.withUnsafeBufferPointer { src in
    out.withUnsafeMutableBufferPointer { dst in
      for row in 0..<outHeight {
        let top = src.baseAddress! + min(row * 2, height - 1) * width
        let bottom = src.baseAddress! + min(row * 2 + 1, height - 1) * width
        let line = dst.baseAddress! + row * outWidth
        for column in 0..<outWidth {
          let left = min(column * 2, width - 1)
          let right = min(column * 2 + 1, width - 1)
          let sum = Int(top[left]) + Int(top[right]) + Int(bottom[left]) + Int(bottom[right])
          line[column] = UInt8((sum + 2) / 4)
        }
      }
    }
  }
  return out
}
