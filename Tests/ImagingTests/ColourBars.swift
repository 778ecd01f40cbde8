/// A synthetic YUYV frame of eight vertical bars, the same 75% bars vivid draws, with their expected RGB.
struct ColourBars {
  /// BT.601 limited-range YCbCr of 75% white, yellow, cyan, green, magenta, red, blue, black.
  static let ycbcr: [(UInt8, UInt8, UInt8)] = [
    (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
    (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128),
  ]
  static let rgb: [(Int, Int, Int)] = [
    (191, 191, 191), (191, 191, 0), (0, 191, 191), (0, 191, 0),
    (191, 0, 191), (191, 0, 0), (0, 0, 191), (0, 0, 0),
  ]

  let width: Int
  let height: Int
  var stride: Int { width * 2 }
  var bytes: [UInt8]

  init(width: Int, height: Int) {
    self.width = width
    self.height = height
    var bytes = [UInt8](repeating: 0, count: width * 2 * height)
    for row in 0..<height {
      for pair in 0..<(width / 2) {
        let bar = Self.ycbcr[pair * 2 * 8 / width]
        let at = row * width * 2 + pair * 4
        bytes[at] = bar.0
        bytes[at + 1] = bar.1
        bytes[at + 2] = bar.0
        bytes[at + 3] = bar.2
      }
    }
    self.bytes = bytes
  }

  /// The x of the middle of bar `index` in an image `width` wide.
  static func centre(of index: Int, width: Int) -> Int { (index * 2 + 1) * width / 16 }
}

func near(_ a: (Int, Int, Int), _ b: (Int, Int, Int), tolerance: Int) -> Bool {
  abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
}
