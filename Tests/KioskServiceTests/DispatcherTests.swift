import KioskCore
import Testing

@testable import CameraRoll
@testable import KioskService

/// The queue: one event at a time, a driver's posts after the actions of the event being handled.
@Suite struct DispatcherOrderTests {
  @Test func anEventPostedWhileActionsAreCarriedOutIsHandledAfterThem() {
    let rig = Rig()
    rig.stills.failAtOnce = "frame 2 no longer in the ring"
    _ = rig.frame(1, at: 1000)
    rig.click(.shutter, at: 1100)
    // The press waits for a frame from after it; this frame's actions save it, then light the ready lamp
    // again. The writer's failure, posted from inside the save, comes after both.
    _ = rig.frame(2, at: 1200)
    let journal = rig.journal
    let save = journal.index(of: "stills save 2")
    let ready = journal.lines.lastIndex(of: "light ready on")
    let failed = journal.index(of: "stills failed")
    let message = journal.index(of: "show Save failed")
    #expect(save != nil && ready != nil && failed != nil && message != nil, "\(journal.lines)")
    if let save, let ready, let failed, let message {
      #expect(save < ready, "\(journal.lines)")
      #expect(ready < failed, "the posted failure waits for the rest of the frame's actions: \(journal.lines)")
      #expect(failed < message, "\(journal.lines)")
    }
    #expect(rig.screenShown == .message("Save failed"))
  }

  @Test func eventsPostedByDriversAreHandledInTheOrderPosted() {
    let rig = Rig()
    // Two posts from inside one action: both wait, and the first posted is handled first.
    rig.storage.full = true
    rig.post(.stillFailed("first"))
    rig.dispatcher.checkStorage()
    // "Save failed" holds the screen for its time; the full storage the second post found shows after it.
    rig.post(.kiosk(.tick(rig.ms(60_000))))
    let failed = rig.journal.index(of: "show Save failed")
    let full = rig.journal.index(of: "show Storage full")
    #expect(failed != nil && full != nil, "\(rig.journal.lines)")
    if let failed, let full { #expect(failed < full) }
  }

  @Test func aPressChecksTheStorageAtItsOwnTimeBeforeThePress() {
    let rig = Rig()
    rig.storage.full = true
    _ = rig.frame(1, at: 1000)
    rig.clock = rig.ms(1500)
    rig.post(.kiosk(.edge(.shutter, .pressed, at: rig.ms(1010))))
    #expect(rig.storage.checks.last == .some(rig.ms(1010)), "the press's time, not the clock's")
    #expect(rig.dispatcher.kiosk.refusedPresses == 0, "not decided yet: the press settles after its debounce")
    rig.post(.kiosk(.tick(rig.ms(1050))))
    #expect(rig.dispatcher.kiosk.refusedPresses == 1, "full before the press was taken: refused, not saved")
    #expect(rig.stills.saves.isEmpty)
  }

  @Test func aPressHandedOverBeforeAFrameChecksTheStorageToo() {
    let rig = Rig()
    _ = rig.frame(1, at: 1000)
    // The press is read with the edges the kernel already has, ahead of the next frame, not by the loop.
    rig.storage.full = true
    rig.panel.pending = [.edge(.shutter, .pressed, at: rig.ms(1010))]
    _ = rig.frame(2, at: 1100)
    #expect(rig.storage.checks.contains(.some(rig.ms(1010))), "checked at the press's own time")
    rig.post(.kiosk(.tick(rig.ms(1100))))
    _ = rig.frame(3, at: 1200)
    #expect(rig.dispatcher.kiosk.refusedPresses == 1, "refused before the disk filled, not saved into it")
    #expect(rig.stills.saves.isEmpty)
  }

  @Test func aTimedStorageCheckGoesThroughTheQueueAfterTheEdgesTheKernelAlreadyHas() {
    let rig = Rig()
    _ = rig.frame(1, at: 990)
    // A press the kernel has timestamped but the loop has not read when the storage timer fires: the timed
    // check's events are queued like any other, so the press is handed over first, with its own check.
    rig.panel.pending = [.edge(.shutter, .pressed, at: rig.ms(1000))]
    rig.clock = rig.ms(1200)
    rig.dispatcher.checkStorage()
    #expect(rig.storage.checks == [nil, .some(rig.ms(1000))], "the timer's check, then the press's own at its time")
    #expect(rig.panel.pending.isEmpty)
    _ = rig.frame(2, at: 1210)
    #expect(rig.stills.saves.map(\.0.sequence) == [1], "the frame nearest the press, 10 ms before it")
  }


}
