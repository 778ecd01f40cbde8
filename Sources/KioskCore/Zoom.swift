/// What a zoom button or `kioskcam zoom` asks for.
public enum ZoomChange: String, Sendable, Equatable, CaseIterable {
  case zoomIn = "in"
  case zoomOut = "out"
  case reset
}

/// Digital zoom: a factor in hundredths (100 = 1.0x, no zoom), stepped between 1.0x and the configured
/// maximum, and the centred crop of a frame it shows. Whole hundredths keep the steps exact (no 1.0x that
/// is 0.9999x after four steps of 0.25).
public struct Zoom: Sendable, Equatable {
  public let maximum: Int
  public let step: Int
  public private(set) var factor = 100

  public init(maximum: Int = 400, step: Int = 50) {
    precondition(maximum >= 100 && step > 0, "zoom from 1.0x up, in steps above 0")
    self.maximum = maximum
    self.step = step
  }

  /// Applies a change; false when it changes nothing (already at 1.0x or at the maximum).
  public mutating func apply(_ change: ZoomChange) -> Bool {
    let before = factor
    switch change {
    case .zoomIn: factor = min(maximum, factor + step)
    case .zoomOut: factor = max(100, factor - step)
    case .reset: factor = 100
    }
    return factor != before
  }

  /// "2.5x": how the overlay and the log say it.
  public var label: String { Self.label(factor) }
  public var maximumLabel: String { Self.label(maximum) }

  private static func label(_ factor: Int) -> String {
    let tenths = (factor + 5) / 10
    return "\(tenths / 10).\(tenths % 10)x"
  }

  /// The centred part of a `width` x `height` frame shown at this factor: 1/factor of each side, on even
  /// coordinates and sizes (4:2:x chroma pairs start at even pixels), never empty.
  public func crop(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
    guard factor > 100 else { return (0, 0, width, height) }
    let croppedWidth = max(2, (width * 100 / factor) & ~1)
    let croppedHeight = max(2, (height * 100 / factor) & ~1)
    return (((width - croppedWidth) / 2) & ~1, ((height - croppedHeight) / 2) & ~1, croppedWidth, croppedHeight)
  }
}
