import Imaging
import Synchronization

/// Canvases in ordinary memory, lent like a display's buffers: what the bench and the tests draw into
/// where the service draws into dumb buffers.
public final class MemoryCanvases: Sendable {
  public final class Canvas: PreviewCanvas, @unchecked Sendable {
    public let target: DrawTarget
    let index: Int
    let owner: MemoryCanvases
    init(index: Int, target: DrawTarget, owner: MemoryCanvases) {
      self.index = index
      self.target = target
      self.owner = owner
    }
    public func giveBack() { owner.free.withLock { $0.append(index) } }
  }

  private final class Storage: @unchecked Sendable {
    let memory: UnsafeMutableRawBufferPointer
    init(count: Int) {
      memory = .allocate(byteCount: count, alignment: 64)
      memory.initializeMemory(as: UInt8.self, repeating: 0)
    }
    deinit { memory.deallocate() }
  }

  public let width: Int
  public let height: Int
  private let storage: [Storage]
  private let free: Mutex<[Int]>

  public init(count: Int, width: Int, height: Int) {
    self.width = width
    self.height = height
    storage = (0..<count).map { _ in Storage(count: width * height * 4) }
    free = Mutex(Array(0..<count))
  }

  /// Any thread; nil when every canvas is lent.
  public func lend() -> Canvas? {
    guard let index = free.withLock({ $0.popLast() }) else { return nil }
    let target = DrawTarget(pixels: storage[index].memory, width: width, height: height, stride: width * 4)
    return Canvas(index: index, target: target, owner: self)
  }

  public var freeCount: Int { free.withLock { $0.count } }
}
