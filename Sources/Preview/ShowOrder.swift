/// Which drawn picture goes on screen: the newest, never one handed over before a picture already queued,
/// never one drawn for a screen since changed, and one at a time (KMS flips one buffer per vblank). Pictures
/// that lose are handed back to be given back, and counted. Pure: the loop owns it and does the flips.
public struct ShowOrder<Canvas> {
  /// What the preview shows now; pictures tagged with another generation are stale.
  public private(set) var generation = 0
  /// The order of the newest picture queued for a flip.
  public private(set) var queued = -1
  /// Drawn while a flip was pending, waiting for it to complete.
  public private(set) var ready: (tag: PreviewTag, canvas: Canvas)?
  /// Pictures handed over and never shown.
  public private(set) var skipped = 0

  public init() {}

  /// What the preview shows changed (stream, display, zoom, screen): what is ready is stale, and returned.
  public mutating func change() -> Canvas? {
    generation += 1
    defer { ready = nil }
    return ready.map { skip($0.canvas) }
  }

  /// A worker's drawn picture; returns what lost (this picture or the one it replaced), to be given back.
  public mutating func drawn(_ tag: PreviewTag, _ canvas: Canvas, showing: Bool = true) -> Canvas? {
    guard showing, tag.generation == generation, tag.order > queued, tag.order > (ready?.tag.order ?? -1) else {
      return skip(canvas)
    }
    defer { ready = (tag, canvas) }
    return ready.map { skip($0.canvas) }
  }

  /// The picture to flip now, if one is ready and no flip is pending; it counts as queued from here.
  public mutating func next(flipPending: Bool) -> (tag: PreviewTag, canvas: Canvas)? {
    guard !flipPending, let ready else { return nil }
    self.ready = nil
    queued = ready.tag.order
    return ready
  }

  /// A picture handed over that never came to be drawn (replaced while waiting, no canvas, a flip refused).
  public mutating func lost() { skipped += 1 }

  private mutating func skip(_ canvas: Canvas) -> Canvas {
    skipped += 1
    return canvas
  }
}
