/// How the preview is turned on the panel: degrees clockwise, for a display mounted in portrait or upside
/// down, and whether it is mirrored left to right (photo booths: people expect a mirror; the saved file never is).
public struct PreviewOrientation: Hashable, Sendable {
  public var rotation: Int
  public var mirror: Bool
  public init(rotation: Int = 0, mirror: Bool = false) {
    precondition([0, 90, 180, 270].contains(rotation), "rotation is 0, 90, 180 or 270")
    self.rotation = rotation
    self.mirror = mirror
  }
  /// Whether the source's width runs down the display (a quarter turn).
  public var swapsAxes: Bool { rotation == 90 || rotation == 270 }
  /// A pair along the source's axes as it lies on the panel (a quarter turn swaps them); the same swap takes
  /// a pair on the panel back to the source's axes.
  public func turned<Value>(_ first: Value, _ second: Value) -> (Value, Value) {
    swapsAxes ? (second, first) : (first, second)
  }
}

/// Converts camera frames to XRGB8888 and scales them into a rectangle of a display buffer in one pass,
/// turned and mirrored as configured.
///
/// Nearest-neighbour. Every source position is a row part plus a column part (the luma byte at
/// `sy * stride + sx * 2` for YUYV, say), and with a quarter turn a display row picks a source column, so the
/// maps hold, for each display row and column, which source axis and coordinate it samples; the byte offsets
/// follow per frame from the stride, in `width + height` steps, never per pixel.
public struct PreviewScaler: Sendable {
  public let sourceWidth: Int
  public let sourceHeight: Int
  /// The part of the source shown, in source pixels: all of it, or a centred crop for the digital zoom.
  public let crop: PixelRect
  public let target: PixelRect
  public let orientation: PreviewOrientation
  /// For each target column and row: the source coordinate it samples, along the source axis named by
  /// `orientation.swapsAxes` (columns sample source y when the picture is turned a quarter).
  private let columnSamples: [Int]
  private let rowSamples: [Int]

  public init(
    sourceWidth: Int, sourceHeight: Int, crop: PixelRect? = nil, target: PixelRect,
    orientation: PreviewOrientation = .init()
  ) {
    self.sourceWidth = sourceWidth
    self.sourceHeight = sourceHeight
    let crop = crop ?? PixelRect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
    precondition(
      crop.x >= 0 && crop.y >= 0 && crop.x + crop.width <= sourceWidth && crop.y + crop.height <= sourceHeight,
      "crop outside the source")
    self.crop = crop
    self.target = target
    self.orientation = orientation
    // Sample each destination pixel's centre.
    func samples(_ count: Int, over span: (start: Int, length: Int), reversed: Bool) -> [Int] {
      (0..<count).map { index in
        let position = reversed ? count - 1 - index : index
        return span.start + min(span.length - 1, (position * 2 + 1) * span.length / (count * 2))
      }
    }
    let (columnsAlong, rowsAlong) = orientation.turned((crop.x, crop.width), (crop.y, crop.height))
    // Clockwise: 90 puts the source's bottom row at the display's left, 180 reverses both, 270 the source's
    // last column at the top. A mirror then reverses the display's columns.
    let reverseColumns = (orientation.rotation == 90 || orientation.rotation == 180) != orientation.mirror
    let reverseRows = orientation.rotation == 180 || orientation.rotation == 270
    columnSamples = samples(target.width, over: columnsAlong, reversed: reverseColumns)
    rowSamples = samples(target.height, over: rowsAlong, reversed: reverseRows)
  }

  /// Walks the target rectangle. The closures give the x part and the y part of the luma and chroma byte
  /// offsets of a source coordinate; a quarter turn swaps which part a display row and column supply.
  private func draw(
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int,
    lumaX: (Int) -> Int, chromaX: (Int) -> Int, lumaY: (Int) -> Int, chromaY: (Int) -> Int,
    pixel: (_ luma: Int, _ chroma: Int) -> UInt32
  ) {
    let swaps = orientation.swapsAxes
    withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * target.width) { columns in
      for (index, sample) in columnSamples.enumerated() {
        columns[2 * index] = swaps ? lumaY(sample) : lumaX(sample)
        columns[2 * index + 1] = swaps ? chromaY(sample) : chromaX(sample)
      }
      for (row, sample) in rowSamples.enumerated() {
        let lumaRow = swaps ? lumaX(sample) : lumaY(sample)
        let chromaRow = swaps ? chromaX(sample) : chromaY(sample)
        let out = (destination.baseAddress! + (target.y + row) * destinationStride + target.x * 4)
          .assumingMemoryBound(to: UInt32.self)
        for column in 0..<target.width {
          out[column] = pixel(lumaRow + columns[2 * column], chromaRow + columns[2 * column + 1])
        }
      }
    }
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
    // A YUYV macropixel is Y0 Cb Y1 Cr for two pixels: the chroma pair starts at the even pixel.
    draw(
      into: destination, destinationStride: destinationStride,
      lumaX: { $0 * 2 }, chromaX: { ($0 & ~1) * 2 }, lumaY: { $0 * stride }, chromaY: { $0 * stride }
    ) { luma, pair in
      rgb(y: src[luma], cb: src[pair + 1], cr: src[pair + 3])
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
    draw(
      into: destination, destinationStride: destinationStride,
      lumaX: { $0 }, chromaX: { $0 & ~1 }, lumaY: { $0 * stride }, chromaY: { chromaStart + ($0 / 2) * stride }
    ) { luma, pair in
      rgb(y: src[luma], cb: src[pair], cr: src[pair + 1])
    }
  }

  /// Draws an XRGB8888 picture (a decoded JPEG: the photo under review, an MJPEG frame), `stride` bytes a row.
  public func drawXRGB(
    _ source: UnsafeRawBufferPointer, stride: Int,
    into destination: UnsafeMutableRawBufferPointer, destinationStride: Int
  ) {
    precondition(source.count >= stride * sourceHeight, "XRGB picture shorter than its geometry")
    precondition(destination.count >= destinationStride * (target.y + target.height), "destination too small")
    draw(
      into: destination, destinationStride: destinationStride,
      lumaX: { $0 * 4 }, chromaX: { _ in 0 }, lumaY: { $0 * stride }, chromaY: { _ in 0 }
    ) { offset, _ in
      source.load(fromByteOffset: offset, as: UInt32.self) & 0x00FF_FFFF
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
