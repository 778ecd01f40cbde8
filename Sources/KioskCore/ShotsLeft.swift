/// "Shots left" on the overlay: the free space above the reserve divided by the mean size of the stills the
/// roll holds. Unknown (nil) until both are known: a guess from nothing would be a number nobody can trust.
public struct ShotsLeft: Sendable, Equatable {
  public private(set) var stills = 0
  public private(set) var bytes = 0
  /// Free bytes above the roll's reserve, from the last storage check.
  public var spareBytes: UInt64?

  public init() {}

  /// A published still of `size` bytes joins the mean.
  public mutating func add(stillOf size: Int) {
    stills += 1
    bytes += size
  }

  /// Capped so that a nearly empty card with tiny test pictures does not overflow the overlay's corner.
  public var count: Int? {
    guard let spareBytes, stills > 0 else { return nil }
    return Int(min(spareBytes / UInt64(max(1, bytes / stills)), 999_999))
  }
}
