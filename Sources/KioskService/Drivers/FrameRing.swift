import KioskCore

/// Copies of the most recent frames, so that a still is taken from the moment of the press, not after it.
///
/// Copies, not the driver's buffers: holding a driver buffer would starve the stream.
struct FrameRing {
  struct Entry {
    let info: FrameInfo
    let bytes: [UInt8]
  }
  private var entries: [Entry] = []
  let capacity: Int

  init(capacity: Int) { self.capacity = capacity }

  mutating func append(_ info: FrameInfo, _ bytes: UnsafeRawBufferPointer) {
    // Reuse the storage of the oldest entry rather than allocating per frame.
    var storage = entries.count == capacity ? entries.removeFirst().bytes : []
    storage.removeAll(keepingCapacity: true)
    storage.append(contentsOf: bytes)
    entries.append(Entry(info: info, bytes: storage))
  }

  func frame(_ info: FrameInfo) -> Entry? { entries.last { $0.info == info } }

  /// The last frame taken before `instant` and the first taken at or after it, as far as the ring reaches.
  func neighbours(of instant: Instant) -> (before: FrameInfo?, after: FrameInfo?) {
    (entries.last { $0.info.timestamp < instant }?.info, entries.first { $0.info.timestamp >= instant }?.info)
  }

  mutating func removeAll() { entries.removeAll() }
}
