import Testing

@testable import KioskCore

/// The kiosk's decision on a card that failed a write: whichever write it was (a still, a movie, its record,
/// a retake, a delete, a recovery), "Storage not available" until the card has been seen gone or mounted
/// anew; a check that finds the same mount there changes nothing.
extension KioskTests {
  func failed(_ write: RollWrite, mounts: Int = 3, at time: Int64) -> Event {
    .storageFailed(.inputOutput, during: write, detail: "fsync: Input/output error", mounts: mounts, at: ms(time))
  }

  func checked(present: Bool = true, mounts: Int, at time: Int64) -> Event {
    .rollStorage(available: present, mounts: mounts, detail: "/roll: writable", at: ms(time))
  }

  @Test(arguments: [RollWrite.still, .movie, .record, .delete, .retake, .recovery])
  func aWriteTheCardFailsMakesItUnavailableUntilItIsMountedAgain(write: RollWrite) {
    var kiosk = kiosk()
    _ = kiosk.handle(checked(mounts: 3, at: 0))
    let failure = kiosk.handle(failed(write, at: 500))
    #expect(failure.contains(.show(.message("Storage not available"))), "\(failure)")
    #expect(failure.contains(.light(.ready, false)))
    #expect(failure.contains { if case .log(let line) = $0 { line.contains("a \(write.rawValue) write") } else { false } })
    #expect(kiosk.cardFailure?.write == write)
    // The same mount, still there and writable by the check's lights: ext4 read-only, vfat's cache stale.
    #expect(kiosk.handle(checked(mounts: 3, at: 1000)).isEmpty, "a check of the same mount changes nothing")
    #expect(!kiosk.rollAvailable)
    _ = click(&kiosk, .shutter, at: 2000)
    #expect(saves(kiosk.handle(.frame(frame(1, at: 2010)))).isEmpty)
    #expect(kiosk.refusedPresses == 1)
    // Taken out and put back: a new mount.
    let back = kiosk.handle(checked(mounts: 5, at: 3000))
    #expect(back.contains(.show(.live(.still))))
    #expect(back.contains(.recoverRoll), "what the failure left is published")
    #expect(kiosk.cardFailure == nil && kiosk.rollAvailable)
    _ = click(&kiosk, .shutter, at: 4000)
    #expect(saves(kiosk.handle(.frame(frame(2, at: 4010)))).count == 1)
  }

  @Test func aFailedCardSeenGoneIsTheRollWhenItIsBackEvenOnTheSameCount() {
    var kiosk = kiosk()
    _ = kiosk.handle(failed(.delete, mounts: 0, at: 100))
    let gone = kiosk.handle(checked(present: false, mounts: 0, at: 200))
    #expect(!gone.contains { if case .show = $0 { true } else { false } }, "not available already: \(gone)")
    #expect(kiosk.cardFailure == nil, "the card that failed is gone")
    let back = kiosk.handle(checked(mounts: 0, at: 300))
    #expect(back.contains(.recoverRoll) && kiosk.rollAvailable)
  }

  /// The first failure is the one said; the writes queued behind it fail for the same reason and do not
  /// move the mount it failed on.
  @Test func laterFailuresOnTheSameCardAreOnlyLogged() {
    var kiosk = kiosk()
    let first = kiosk.handle(failed(.still, mounts: 1, at: 100))
    #expect(first.contains(.show(.message("Storage not available"))))
    let second = kiosk.handle(failed(.record, mounts: 2, at: 200))
    #expect(second == [.log("also failed on the card: record (fsync: Input/output error)")])
    #expect(kiosk.cardFailure?.write == .still && kiosk.cardFailure?.mounts == 1)
    #expect(kiosk.handle(checked(mounts: 2, at: 300)).contains(.recoverRoll), "mounted anew since the first")
  }

  @Test func aCardThatFailsWhileRecordingStopsTheMovie() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    #expect(click(&kiosk, .shutter, at: 1000).contains(.startMovie(at: ms(1000))))
    let failure = kiosk.handle(failed(.record, at: 1500))
    #expect(failure.contains(.stopMovie(at: ms(1500))), "what was written is finished while it can be")
    #expect(failure.contains(.light(.tally, false)))
  }
}

extension ReviewModeTests {
  /// A delete the card fails, in review: the screen says why, and no delete is asked of it again until it is
  /// back (each would fail the same way).
  @Test func aDeleteTheCardFailsShowsStorageNotAvailableAndRefusesTheNext() {
    var kiosk = kiosk(allowDelete: true)
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .cancel, at: 2000, hold: 1200)
    #expect(click(&kiosk, .shutter, at: 4000).contains(.deleteItem(entry(3).path)))
    _ = kiosk.handle(.storageFailed(.inputOutput, during: .delete, detail: "fsync: Input/output error", mounts: 1, at: ms(4500)))
    #expect(kiosk.screen == .message("Storage not available"))
    #expect(click(&kiosk, .cancel, at: 5000, hold: 1200).contains(.log("delete refused: storage not available")))
    _ = kiosk.handle(.rollStorage(available: true, mounts: 2, detail: "/roll: writable", at: ms(7000)))
    #expect(kiosk.mode == .review && reviewing(kiosk)?.item == entry(2, .movie), "\(kiosk.screen)")
    _ = click(&kiosk, .cancel, at: 8000, hold: 1200)
    #expect(reviewing(kiosk)?.confirmingDelete == true, "asked again once the card is back")
  }
}
