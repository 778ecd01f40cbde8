/// A write the card failed, and the mount table's count when the kiosk heard of it.
public struct CardFailure: Sendable, Equatable {
  public let fault: StorageFault
  public let write: RollWrite
  public let detail: String
  public let mounts: Int

  public init(fault: StorageFault, write: RollWrite, detail: String, mounts: Int) {
    (self.fault, self.write, self.detail, self.mounts) = (fault, write, detail, mounts)
  }

  var text: String { "the card failed a \(write.rawValue) write (\(fault.rawValue): \(detail)); take it out and put it back" }
}

/// The roll's storage: free space against the reserve, the check's word on whether it is there, and writes
/// the card failed. Every write path (still, movie, record, retake, delete, recovery) reports a failure here
/// the same way, and the kiosk alone decides what follows: "Storage not available" until the card is back.
extension Kiosk {
  mutating func storageSpace(full: Bool, detail: String, at time: Instant) -> [Action] {
    guard full != storageFull else { return [] }
    storageFull = full
    var actions: [Action] = [.log(full ? "storage full: \(detail)" : "storage available: \(detail)")]
    // A recording stops at the reserve, while there is still room to finish it into a playable file.
    if full, case .recording = activity {
      activity = .idle
      actions += [.stopMovie(at: time), .log("movie stopped: storage full")]
    }
    return actions
  }

  /// A check of the storage. A card that failed a write is not the roll again while it is the same mount:
  /// ext4 refuses every write after its first failed one, and vfat's cache no longer matches the card. It is
  /// back once it has been seen gone, or once anything was mounted or unmounted since the failure (a card
  /// mounted anew looks like the old one in every other way, even to its mount ID; the cost of an unrelated
  /// mount is one more press that fails).
  mutating func rollChecked(present: Bool, mounts: Int, detail: String, at time: Instant) -> [Action] {
    var actions: [Action] = []
    if let failure = cardFailure, !present || mounts != failure.mounts {
      cardFailure = nil
      actions.append(.log(present ? "the failed card was mounted again" : "the failed card is gone"))
    }
    rollPresent = present
    return actions + availabilityChanged(detail: detail, at: time)
  }

  mutating func cardFailed(_ failure: CardFailure, at time: Instant) -> [Action] {
    // The first failure is the one to tell: the writes queued behind it fail for the same reason.
    guard cardFailure == nil else { return [.log("also failed on the card: \(failure.write.rawValue) (\(failure.detail))")] }
    cardFailure = failure
    return availabilityChanged(detail: failure.text, at: time)
  }

  private mutating func availabilityChanged(detail: String, at time: Instant) -> [Action] {
    let available = rollPresent && cardFailure == nil
    guard available != rollAvailable else { return [] }
    rollAvailable = available
    // The check's own time: how soon a pulled card was seen can be told from the log.
    var actions: [Action] = [.log(available ? "storage back: \(detail) (at \(time))" : "storage lost: \(detail) (at \(time))")]
    // Nothing more can be written: what the recorder has written is finished while it still can be.
    if !available, case .recording = activity {
      activity = .idle
      actions += [.stopMovie(at: time), .log("movie stopped: storage lost")]
    }
    // What the loss left on it is the roll's again, under numbers that follow the ones already used.
    if available { actions.append(.recoverRoll) }
    return actions
  }
}
