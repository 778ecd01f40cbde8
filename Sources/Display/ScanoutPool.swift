import Synchronization

/// Where each of a display's buffers is: on screen, queued for the next vblank, lent to someone drawing
/// into it, or free. Lent and given back from any thread (the preview's workers draw off the loop); queued
/// and flipped on the loop. A buffer is only ever drawn while lent, so nothing draws into what is on screen.
final class ScanoutPool: Sendable {
  enum Place: Equatable { case free, lent, queued, onScreen }
  private let places: Mutex<[Place]>

  /// Buffer 0 is on screen from the start (the mode was set with it).
  init(count: Int) {
    precondition(count >= 2, "a flipped display needs two buffers")
    places = Mutex([.onScreen] + Array(repeating: .free, count: count - 1))
  }

  var count: Int { places.withLock { $0.count } }

  func lend() -> Int? {
    places.withLock { places in
      guard let index = places.firstIndex(of: .free) else { return nil }
      places[index] = .lent
      return index
    }
  }

  func giveBack(_ index: Int) {
    places.withLock { places in
      precondition(places[index] == .lent, "a buffer given back that was not lent")
      places[index] = .free
    }
  }

  var flipQueued: Bool { places.withLock { $0.contains(.queued) } }

  /// Lent becomes queued; false (still lent) while another flip is queued: KMS takes one at a time.
  func queue(_ index: Int) -> Bool {
    places.withLock { places in
      precondition(places[index] == .lent, "a buffer queued that was not lent")
      guard !places.contains(.queued) else { return false }
      places[index] = .queued
      return true
    }
  }

  /// The kernel refused the flip: the buffer is lent again, to be given back or tried later.
  func unqueue(_ index: Int) {
    places.withLock { places in
      if places[index] == .queued { places[index] = .lent }
    }
  }

  /// The queued buffer reached the screen; the one it replaced is free. Returns the one now on screen.
  func flipped() -> Int? {
    places.withLock { places in
      guard let queued = places.firstIndex(of: .queued) else { return nil }
      for index in places.indices where places[index] == .onScreen { places[index] = .free }
      places[queued] = .onScreen
      return queued
    }
  }
}
