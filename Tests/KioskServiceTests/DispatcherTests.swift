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

  @Test func aTimedStorageCheckComesAfterTheEdgesTheKernelAlreadyHas() {
    let rig = Rig()
    _ = rig.frame(1, at: 1000)
    // A press and its release already timestamped by the kernel but not read by the loop when the timer
    // fires and finds the disk full: the press came first, so it is taken.
    rig.panel.pending = [.edge(.shutter, .pressed, at: rig.ms(1010)), .edge(.shutter, .released, at: rig.ms(1100))]
    rig.storage.full = true
    rig.clock = rig.ms(1200)
    rig.dispatcher.checkStorage()
    rig.post(.kiosk(.tick(rig.ms(1200))))
    _ = rig.frame(2, at: 1210)
    #expect(rig.dispatcher.kiosk.storageFull)
    #expect(rig.stills.saves.map(\.0.sequence) == [1], "\(rig.journal.lines)")
    #expect(rig.dispatcher.kiosk.refusedPresses == 0)
  }
}
