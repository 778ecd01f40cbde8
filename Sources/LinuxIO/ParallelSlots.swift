/// One slot per job of a parallel loop (`DispatchQueue.concurrentPerform`) for its result: each job writes its
/// own slot only, and the slots are read once the loop has returned.
public final class ParallelSlots<Value>: @unchecked Sendable {
  private let slots: UnsafeMutableBufferPointer<Value?>

  public init(count: Int) {
    slots = .allocate(capacity: count)
    slots.initialize(repeating: nil)
  }

  deinit { slots.deinitialize().deallocate() }

  public subscript(index: Int) -> Value? {
    get { slots[index] }
    set { slots[index] = newValue }
  }

  public var values: [Value?] { Array(slots) }
}
