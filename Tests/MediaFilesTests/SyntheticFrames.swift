import Imaging
import JPEGCodec
import KioskCore
import Capture

/// Camera-like frames made here: limited-range YCbCr, a bright left half and a dark right half with a
/// horizontal chroma ramp, so that geometry, range and colour all show after a round trip.
enum SyntheticFrames {
  static func lumaAt(_ x: Int, _ y: Int, _ width: Int) -> UInt8 { x < width / 2 ? 200 : 40 }
  static func cbAt(_ x: Int, _ width: Int) -> UInt8 { UInt8(16 + x * 224 / width) }
  static func crAt(_ y: Int, _ height: Int) -> UInt8 { UInt8(16 + y * 224 / height) }

  static func yuyv(width: Int, height: Int, padding: Int = 0) -> StillFrame {
    let stride = width * 2 + padding
    var bytes = [UInt8](repeating: 0, count: stride * height)
    for y in 0..<height {
      for pair in 0..<(width / 2) {
        let at = y * stride + pair * 4
        bytes[at] = lumaAt(pair * 2, y, width)
        bytes[at + 1] = cbAt(pair * 2, width)
        bytes[at + 2] = lumaAt(pair * 2 + 1, y, width)
        bytes[at + 3] = crAt(y, height)
      }
    }
    return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: stride, range: .limited, bytes: bytes)
  }

  static func nv12(width: Int, height: Int, padding: Int = 0) -> StillFrame {
    let stride = width + padding
    var bytes = [UInt8](repeating: 0, count: stride * (height + (height + 1) / 2))
    for y in 0..<height {
      for x in 0..<width { bytes[y * stride + x] = lumaAt(x, y, width) }
    }
    for row in 0..<((height + 1) / 2) {
      for pair in 0..<(width / 2) {
        let at = stride * height + row * stride + pair * 2
        bytes[at] = cbAt(pair * 2, width)
        bytes[at + 1] = crAt(row * 2, height)
      }
    }
    return StillFrame(format: .nv12, width: width, height: height, bytesPerLine: stride, range: .limited, bytes: bytes)
  }

  /// What a UVC camera sends: a baseline JPEG without JFIF and without Huffman tables, padded with zeros.
  static func mjpeg(width: Int, height: Int, stripTables: Bool = true, padding: Int = 100) throws -> StillFrame {
    let planes = try StillPipeline.planes(of: yuyv(width: width, height: height))
    var jpeg = try JPEGEncoder.encode(planes, quality: 80)
    if stripTables { jpeg = removingSegments(jpeg, markers: [0xE0, 0xC4]) }
    jpeg += [UInt8](repeating: 0, count: padding)
    return StillFrame(format: .mjpeg, width: width, height: height, bytesPerLine: 0, range: .full, bytes: jpeg)
  }

  /// `jpeg` without the header segments whose marker is in `markers`.
  static func removingSegments(_ jpeg: [UInt8], markers: Set<UInt8>) -> [UInt8] {
    var out: [UInt8] = [0xFF, 0xD8]
    var at = 2
    while jpeg[at + 1] != 0xDA {
      let end = at + 2 + (Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3]))
      if !markers.contains(jpeg[at + 1]) { out += jpeg[at..<end] }
      at = end
    }
    return out + jpeg[at...]
  }

  /// The Huffman tables in `jpeg`'s DHT segments, keyed by class and id.
  static func huffmanTables(_ jpeg: [UInt8]) -> [UInt8: [UInt8]] {
    var tables: [UInt8: [UInt8]] = [:]
    var at = 2
    while jpeg[at + 1] != 0xDA {
      let end = at + 2 + (Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3]))
      if jpeg[at + 1] == 0xC4 {
        var table = at + 4
        while table < end {
          let counts = jpeg[(table + 1)..<(table + 17)]
          let total = counts.reduce(0) { $0 + Int($1) }
          tables[jpeg[table]] = Array(jpeg[(table + 1)..<(table + 17 + total)])
          table += 17 + total
        }
      }
      at = end
    }
    return tables
  }
}
