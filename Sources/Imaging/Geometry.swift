/// A rectangle in pixels on a destination image.
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
  public var x: Int
  public var y: Int
  public var width: Int
  public var height: Int
  public init(x: Int, y: Int, width: Int, height: Int) {
    self.x = x
    self.y = y
    self.width = width
    self.height = height
  }
  public var description: String { "\(width)x\(height)+\(x)+\(y)" }

  /// The largest rectangle of the source's aspect ratio centred in the destination (letterbox or pillarbox).
  public static func aspectFit(sourceWidth: Int, sourceHeight: Int, into width: Int, _ height: Int) -> PixelRect {
    guard sourceWidth > 0, sourceHeight > 0, width > 0, height > 0 else {
      return PixelRect(x: 0, y: 0, width: 0, height: 0)
    }
    // Compare cross products in integers so that equal ratios fit exactly.
    if sourceWidth * height >= sourceHeight * width {
      let fitted = max(1, sourceHeight * width / sourceWidth)
      return PixelRect(x: 0, y: (height - fitted) / 2, width: width, height: fitted)
    } else {
      let fitted = max(1, sourceWidth * height / sourceHeight)
      return PixelRect(x: (width - fitted) / 2, y: 0, width: fitted, height: height)
    }
  }
}
