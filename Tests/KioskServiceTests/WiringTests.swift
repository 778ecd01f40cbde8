import KioskCore
import Testing

@testable import CameraRoll
@testable import KioskService

/// End to end through the real `Kiosk`: an event in, the actions reach the drivers, the drivers' events back.
@Suite struct WiringTests {
  @Test func aStillIsTheNearestFrameAndSavedOrFailed() {
    let rig = Rig()
    let first = rig.frame(1, at: 1000)
    rig.click(.shutter, at: 1010)
    _ = rig.frame(2, at: 1200)
    #expect(rig.stills.saves.map(\.0) == [first], "the frame 10 ms before the press, not the one 190 ms after")
    rig.post(.stillSaved(.still(1), first, pressedAt: rig.ms(1010)))
    #expect(rig.journal.contains("stills saved DCIM/100KIOSK/IMG_0001.JPG"))
    #expect(rig.journal.contains("storage counts DCIM/100KIOSK/IMG_0001.JPG"), "shots left learns its size")
    #expect(rig.journal.contains("player relist"), "review sees the new photo")
    #expect(rig.screenShown == .live(.still))

    rig.click(.shutter, at: 2000)
    _ = rig.frame(3, at: 2010)
    #expect(rig.stills.saves.count == 2)
    rig.post(.stillFailed("ENOSPC"))
    #expect(rig.screenShown == .message("Save failed"))
    #expect(rig.journal.contains("stills failed"))
  }

  @Test func aMovieGetsTheFramesBetweenItsStartAndStop() {
    let rig = Rig()
    rig.post(.kiosk(.remote(.mode(.movie), client: 3, at: rig.ms(100))))
    #expect(rig.control.replies[3] == "ok")
    _ = rig.frame(1, at: 990)
    rig.click(.shutter, at: 1000)
    #expect(rig.movie.isRecording)
    #expect(rig.journal.contains("panel recording true"), "the tally and the storage poll follow the recording")
    let inside = [rig.frame(2, at: 1200), rig.frame(3, at: 1400)]
    rig.click(.shutter, at: 2000)
    _ = rig.frame(4, at: 2200)
    #expect(!rig.movie.isRecording)
    #expect(rig.movie.recorded == inside, "the frame from before the press and the one after the stop are not in it")
  }

  @Test func aMovieThatCannotWriteStopsAndSaysSo() {
    let rig = Rig()
    rig.post(.kiosk(.remote(.mode(.movie), at: rig.ms(100))))
    rig.click(.shutter, at: 1000)
    #expect(rig.movie.isRecording)
    rig.post(.kiosk(.movieFailed(reason: "write failed: EIO", at: rig.ms(1500))))
    #expect(!rig.movie.isRecording, "stopped at once, kept up to its last fragment")
    #expect(rig.screenShown == .message("Save failed"))
  }

  @Test func aMovieStopsWhenTheStorageFills() {
    let rig = Rig()
    rig.post(.kiosk(.remote(.mode(.movie), at: rig.ms(100))))
    rig.click(.shutter, at: 1000)
    #expect(rig.movie.isRecording)
    rig.storage.full = true
    rig.clock = rig.ms(2000)
    rig.dispatcher.checkStorage()
    #expect(!rig.movie.isRecording)
    #expect(rig.screenShown == .message("Storage full"))
  }

  /// A card pulled mid-recording and put back: the recording stops at the loss, and at the return the movie
  /// driver publishes what the loss left, after the stop it was told of.
  @Test func aPulledCardStopsTheMovieAndItsReturnRecoversWhatWasLeft() {
    let rig = Rig()
    rig.post(.kiosk(.remote(.mode(.movie), at: rig.ms(100))))
    rig.click(.shutter, at: 1000)
    rig.storage.present = false
    rig.clock = rig.ms(2000)
    rig.dispatcher.checkStorage()
    #expect(!rig.movie.isRecording)
    #expect(rig.screenShown == .message("Storage not available"))
    #expect(rig.journal.index(of: "movie storage returned") == nil)
    rig.storage.present = true
    rig.clock = rig.ms(3000)
    rig.dispatcher.checkStorage()
    let stop = rig.journal.index(of: "movie stop")
    let returned = rig.journal.index(of: "movie storage returned")
    #expect(stop != nil && returned != nil && stop! < returned!, "\(rig.journal.lines)")
    rig.dispatcher.checkStorage()
    #expect(rig.journal.lines.filter { $0 == "movie storage returned" }.count == 1, "once a return")
  }

  /// A record the card failed to append (the still itself published): the dispatcher hands the kiosk the
  /// failure with the mount table's count, the screen says "Storage not available" while the same mount is
  /// checked, and the card mounted anew is the roll again, what the failure left published.
  @Test func aRecordTheCardFailsIsStorageNotAvailableUntilItIsMountedAgain() {
    let rig = Rig()
    rig.storage.mounts = 2
    rig.post(.storageFailed(.inputOutput, .record, "fsync: Input/output error"))
    #expect(rig.screenShown == .message("Storage not available"))
    rig.clock = rig.ms(1000)
    rig.dispatcher.checkStorage()
    #expect(rig.screenShown == .message("Storage not available"), "the same mount, still the failed card")
    rig.click(.shutter, at: 1500)
    _ = rig.frame(1, at: 1510)
    #expect(rig.stills.saves.isEmpty, "the press refused")
    rig.storage.mounts = 3
    rig.clock = rig.ms(3000)
    rig.dispatcher.checkStorage()
    #expect(rig.screenShown == .live(.still))
    #expect(rig.journal.contains("movie storage returned"), "what the failure left is published")
  }

  /// A microphone pulled while a movie records (what the movie driver posts when its capture ends with the
  /// device gone): the movie goes on, "Off: sound" is on the overlay, and a later movie that opens it again
  /// takes it off.
  @Test func aMicrophoneLostWhileRecordingLeavesTheMovieRecordingAndIsOffOnScreen() {
    let rig = Rig(optional: [.movieCamera, .display, .shutterButton, .modeButton, .zoom, .microphone])
    rig.post(.kiosk(.remote(.mode(.movie), at: rig.ms(100))))
    rig.click(.shutter, at: 1000)
    let before = rig.frame(1, at: 1100)
    rig.post(.capability(.fail(.microphone, "plughw:CARD=Loopback,DEV=0: snd_pcm_readi: No such device")))
    #expect(rig.dispatcher.capabilities.verdict.offOnScreen == [.microphone], "Off: sound")
    #expect(rig.movie.isRecording, "the movie goes on without sound")
    let after = rig.frame(2, at: 1200)
    rig.click(.shutter, at: 2000)
    #expect(!rig.movie.isRecording)
    #expect(rig.movie.recorded == [before, after], "no frame lost to the microphone")
    #expect(rig.dispatcher.availableModes.contains(.movie))
    rig.post(.capability(.pass(.microphone, "plughw:CARD=Loopback,DEV=0 (Loopback): S16_LE, 48000 Hz, mono")))
    #expect(rig.dispatcher.capabilities.verdict.offOnScreen.isEmpty)
  }

  @Test func aCameraLostAndBack() {
    let rig = Rig()
    rig.post(.kiosk(.cameraLost(reason: "unplugged", at: rig.ms(100))))
    rig.post(.capability(.fail(.stillCamera, "unplugged")))
    #expect(rig.screenShown == .message("Camera not available"))
    #expect(!rig.dispatcher.availableModes.contains(.still))
    rig.click(.shutter, at: 500)
    #expect(rig.dispatcher.kiosk.refusedPresses == 1)
    rig.post(.capability(.pass(.stillCamera, "streaming again")))
    rig.post(.kiosk(.cameraBack(at: rig.ms(1000))))
    #expect(rig.screenShown == .live(.still))
    #expect(rig.dispatcher.availableModes.contains(.still))
  }

  @Test func aDisplayLostAndBackTakesReviewAwayAndGivesItBack() {
    let rig = Rig()
    rig.post(.kiosk(.roll([RollEntry(path: "DCIM/100KIOSK/IMG_0001.JPG")!], at: rig.ms(10))))
    #expect(rig.dispatcher.kiosk.available.contains(.review))
    rig.post(.displayChanged)
    rig.post(.capability(.fail(.display, "unplugged")))
    #expect(rig.journal.contains("screen display changed"))
    #expect(!rig.dispatcher.kiosk.available.contains(.review), "nothing to review on")
    rig.post(.capability(.pass(.display, "back")))
    #expect(rig.dispatcher.kiosk.available.contains(.review))
  }

  @Test func buttonsLostAndBack() {
    let rig = Rig(required: [.stillCamera, .cameraRoll, .shutterButton], optional: [.display])
    // Lost 2 ms into a press, before the press has settled: it is forgotten, not finished.
    rig.post(.kiosk(.edge(.shutter, .pressed, at: rig.ms(100))))
    rig.post(.kiosk(.buttonsLost([.shutter], at: rig.ms(102))))
    rig.post(.capability(.fail(.shutterButton, "its GPIO chip is gone")))
    #expect(rig.dispatcher.capabilities.verdict.offOnScreen == [.shutterButton], "Off: shutter button")
    _ = rig.frame(1, at: 200)
    rig.post(.kiosk(.tick(rig.ms(1000))))
    #expect(rig.stills.saves.isEmpty)
    rig.post(.capability(.pass(.shutterButton, "requested")))
    #expect(rig.dispatcher.capabilities.verdict.offOnScreen.isEmpty)
    rig.click(.shutter, at: 2000)
    _ = rig.frame(2, at: 2010)
    #expect(rig.stills.saves.count == 1)
  }

  @Test func aSocketShutterIsAnsweredWithTheKiosksWord() {
    let rig = Rig()
    _ = rig.frame(1, at: 1000)
    rig.post(.kiosk(.remote(.shutter, client: 5, at: rig.ms(1010))))
    #expect(rig.control.replies[5] == "ok")
    _ = rig.frame(2, at: 1200)
    #expect(rig.stills.saves.count == 1)
    rig.storage.full = true
    rig.dispatcher.checkStorage()
    rig.post(.kiosk(.remote(.shutter, client: 6, at: rig.ms(2000))))
    #expect(rig.control.replies[6] == "error: shutter refused: storage full")
    rig.post(.kiosk(.remote(.mode(.movie), client: 7, at: rig.ms(2100))))
    #expect(rig.control.replies[7] == "ok")
    rig.post(.kiosk(.remote(.status(json: false), client: 8, at: rig.ms(2200))))
    #expect(rig.control.replies[8] == "status", "status is the service's report")
  }

  @Test func aModeThatIsNotAvailableIsRefusedWithTheOnesThatAre() {
    let rig = Rig(missing: [.movieCamera])
    rig.post(.kiosk(.remote(.mode(.movie), client: 4, at: rig.ms(100))))
    #expect(rig.control.replies[4] == "error: mode movie is not available (available: still)")
  }

  @Test func reviewStepsThroughTheRollWithTheButtons() {
    let rig = Rig()
    let entries = [1, 2, 3].map { RollEntry(path: "DCIM/100KIOSK/IMG_000\($0).JPG")! }
    rig.player.listed(entries)
    rig.post(.kiosk(.remote(.mode(.review), client: 1, at: rig.ms(100))))
    #expect(rig.control.replies[1] == "ok")
    guard case .reviewing(let newest) = rig.screenShown else {
      Issue.record("not reviewing: \(rig.screenShown)")
      return
    }
    #expect(newest.item.path == "DCIM/100KIOSK/IMG_0003.JPG")
    #expect(rig.screen.shown.last == rig.screenShown, "the screen driver was told")
    rig.click(.shutter, at: 1000)
    guard case .reviewing(let older) = rig.screenShown else {
      Issue.record("not reviewing: \(rig.screenShown)")
      return
    }
    #expect(older.item.path == "DCIM/100KIOSK/IMG_0002.JPG")
    // Delete: a long press on cancel asks, the shutter confirms; the player carries it out.
    rig.click(.cancel, at: 2000, hold: 900)
    rig.click(.shutter, at: 4000)
    #expect(rig.journal.contains("player delete DCIM/100KIOSK/IMG_0002.JPG"), "\(rig.journal.lines)")
  }

  @Test func zoomIsCarriedOutOnlyWhileTheGateSaysZoomIsOn() {
    let on = Rig()
    on.post(.kiosk(.remote(.zoom(.zoomIn), client: 2, at: on.ms(100))))
    #expect(on.journal.contains("camera zoom in"))
    let off = Rig(missing: [.zoom])
    off.post(.kiosk(.remote(.zoom(.zoomIn), client: 2, at: off.ms(100))))
    #expect(!off.journal.contains("camera zoom in"))
  }
}
