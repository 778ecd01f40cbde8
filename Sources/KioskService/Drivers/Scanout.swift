import Display
import Preview

/// What the screen sink draws into and flips: buffers it lends to the workers, and one flip at a time. The
/// display session is the service's; the tests' keeps its canvases in memory. Only the screen sink calls it.
protocol Scanout: AnyObject {
  /// The panel's size; nil while there is no display.
  var size: (width: Int, height: Int)? { get }
  /// The font laid out for this panel; nil without a display or a font.
  var overlay: Overlay? { get }
  var flipPending: Bool { get }
  /// Flips completed on every display held: the frames shown.
  var flipsShown: Int { get }
  /// When the last completed flip went on screen (its vblank, CLOCK_MONOTONIC nanoseconds).
  var lastVblank: Int64? { get }
  /// Lends a free buffer, from any thread (a worker's, once its picture is decoded); nil while there is no
  /// display.
  var lender: (@Sendable () -> (any PreviewCanvas)?)? { get }
  /// Queues a flip to a canvas it lent; false when it was not queued (a flip pending, a canvas of a display
  /// since let go, or the display failed): the canvas is then still lent, to be given back.
  func flip(_ canvas: any PreviewCanvas) -> Bool
}

extension DisplaySession: Scanout {
  var size: (width: Int, height: Int)? { card.map { ($0.width, $0.height) } }
  var lastVblank: Int64? { card?.lastFlip?.nanoseconds }

  var lender: (@Sendable () -> (any PreviewCanvas)?)? {
    guard let buffers = card?.buffers else { return nil }
    return { buffers.lend() }
  }

  func flip(_ canvas: any PreviewCanvas) -> Bool {
    guard let buffer = canvas as? DisplayBuffer else { return false }
    return flip(buffer)
  }
}

extension DisplayBuffer: PreviewCanvas {}
