import Imaging

/// A display's dumb buffers as they are lent for drawing, from any thread: the preview's workers draw off
/// the loop into buffers that are neither on screen nor queued. Unchecked Sendable: the buffers never change
/// after the display is opened, and where each one is lives in the pool's lock.
public final class DisplayBuffers: @unchecked Sendable {
  let pool: ScanoutPool
  private let buffers: [DumbBuffer]
  private let width: Int
  private let height: Int

  init(_ buffers: [DumbBuffer], width: Int, height: Int) {
    self.buffers = buffers
    self.width = width
    self.height = height
    pool = ScanoutPool(count: buffers.count)
  }

  public var count: Int { buffers.count }

  /// A buffer that is neither on screen nor queued nor lent; nil when none is.
  public func lend() -> DisplayBuffer? {
    pool.lend().map { DisplayBuffer(index: $0, buffer: buffers[$0], pool: pool, width: width, height: height) }
  }

  /// Whether `lent` is one of these buffers (not one of a display since let go).
  public func owns(_ lent: DisplayBuffer) -> Bool { lent.pool === pool }
}

/// A display buffer lent for drawing: flipped to the screen by its display, or given back. It keeps its memory
/// mapped while it is lent, even if the display is let go meanwhile (a worker may still be drawing into it).
public final class DisplayBuffer: @unchecked Sendable {
  public let index: Int
  public let target: DrawTarget
  let buffer: DumbBuffer
  let pool: ScanoutPool

  init(index: Int, buffer: DumbBuffer, pool: ScanoutPool, width: Int, height: Int) {
    self.index = index
    self.buffer = buffer
    self.pool = pool
    target = DrawTarget(pixels: buffer.pixels, width: width, height: height, stride: buffer.stride)
  }

  /// To the display it was lent by, even one since let go.
  public func giveBack() { pool.giveBack(index) }
}
