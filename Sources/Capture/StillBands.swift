import Dispatch
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Scaling

/// A still compressed on more than one core: the frame cut into horizontal bands on MCU rows, each band split
/// into planes and compressed on a core of its own, the bands joined at restart markers (`JPEGBands`). The
/// picture decodes to exactly the pixels one compression of the whole frame gives (same blocks, same tables),
/// and review mode cuts it back at its markers to decode it on as many cores.
extension StillPipeline {
  /// How a `width` x `height` frame is cut into at most `bands` bands: the rows of each band but the last (a
  /// multiple of `mcuHeight`), and the count; nil when one band would do. A restart interval counts at most
  /// 65535 MCUs, so a picture too large for `bands` is cut into more.
  static func bandRows(width: Int, height: Int, mcuHeight: Int, bands: Int) -> (rows: Int, count: Int)? {
    let mcuRows = (height + mcuHeight - 1) / mcuHeight
    let mcusPerRow = (width + 15) / 16
    var wanted = min(bands, mcuRows)
    while wanted > 1 {
      let rowsPerBand = (mcuRows + wanted - 1) / wanted
      if rowsPerBand * mcusPerRow <= 0xFFFF {
        let rows = rowsPerBand * mcuHeight
        return (rows, (height + rows - 1) / rows)
      }
      wanted += 1
    }
    return nil
  }

  /// A YUYV or NV12 frame's planes and JPEG, made in `bands` bands at once; nil for MJPEG (kept as the camera
  /// made it) or when the frame is too small to cut.
  static func encodeInBands(_ frame: StillFrame, quality: Int, bands: Int) throws(StillError) -> Encoded? {
    let (width, height) = (frame.width, frame.height)
    let chromaWidth = (width + 1) / 2
    let chromaHeight: Int
    switch frame.format {
    case .yuyv:
      guard frame.bytes.count >= frame.bytesPerLine * height else { throw StillError(description: "short YUYV frame") }
      chromaHeight = height
    case .nv12:
      guard frame.bytes.count >= frame.bytesPerLine * (height + (height + 1) / 2) else {
        throw StillError(description: "short NV12 frame")
      }
      chromaHeight = (height + 1) / 2
    case .mjpeg:
      return nil
    }
    let mcuHeight = JPEGEncoder.mcuHeight(height: height, chromaHeight: chromaHeight)
    guard let (rowsPerBand, count) = bandRows(width: width, height: height, mcuHeight: mcuHeight, bands: bands) else {
      return nil
    }
    var luma = [UInt8](repeating: 0, count: width * height)
    var cb = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var cr = cb
    let parts = ParallelSlots<Result<[UInt8], JPEGError>>(count: count)
    luma.withUnsafeMutableBufferPointer { y in
      cb.withUnsafeMutableBufferPointer { u in
        cr.withUnsafeMutableBufferPointer { v in
          let planes = PackedPlanes.Destination(luma: y.baseAddress!, cb: u.baseAddress!, cr: v.baseAddress!)
          DispatchQueue.concurrentPerform(iterations: count) { index in
            let rows = index * rowsPerBand..<min(height, (index + 1) * rowsPerBand)
            let chromaRows = frame.format == .yuyv ? rows : rows.lowerBound / 2..<(rows.upperBound + 1) / 2
            frame.bytes.withUnsafeBytes { source in
              if frame.format == .yuyv {
                PackedPlanes.yuyv(source, width: width, stride: frame.bytesPerLine, rows: rows, range: frame.range, into: planes)
              } else {
                PackedPlanes.nv12(
                  source, width: width, height: height, stride: frame.bytesPerLine, rows: rows, range: frame.range,
                  into: planes)
              }
            }
            let band = YCbCrPlaneView(
              width: width, height: rows.count, chromaWidth: chromaWidth, chromaHeight: chromaRows.count,
              luma: planes.luma + rows.lowerBound * width, cb: planes.cb + chromaRows.lowerBound * chromaWidth,
              cr: planes.cr + chromaRows.lowerBound * chromaWidth, lumaStride: width, chromaStride: chromaWidth)
            parts[index] = Result { () throws(JPEGError) in try JPEGEncoder.encode(band, quality: quality) }
          }
        }
      }
    }
    var jpegs: [[UInt8]] = []
    for part in parts.values {
      switch part {
      case .success(let jpeg): jpegs.append(jpeg)
      case .failure(let error): throw StillError(description: "\(error)")
      case nil: throw StillError(description: "a band of the still was not compressed")
      }
    }
    let joined: [UInt8]
    do {
      joined = try JPEGBands.join(jpegs)
    } catch {
      throw StillError(description: "\(error)")
    }
    let planes: any YCbCrPlanes =
      frame.format == .yuyv
      ? PlanarYUV422(width: width, height: height, luma: luma, cb: cb, cr: cr)
      : PlanarYCbCr(
        width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight, luma: luma, cb: cb, cr: cr)
    return Encoded(jpeg: joined, planes: planes, width: width, height: height)
  }
}
