import Testing

@testable import KioskCore

/// Scripted event sequences with a manual clock: every instant is written into the script.
@Suite struct KioskTests {
  static let timing = GestureTiming(debounce: .milliseconds(30), minimumPulse: .milliseconds(5), hold: .milliseconds(800))

  func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }
  func frame(_ sequence: UInt32, at milliseconds: Int64) -> FrameInfo {
    FrameInfo(sequence: sequence, timestamp: ms(milliseconds))
  }

  func kiosk(countdown: Duration = .zero, photoCheck: Duration = .zero, movies: Bool = false) -> Kiosk {
    var kiosk = Kiosk(
      settings: KioskSettings(gestures: Self.timing, countdown: countdown, photoCheck: photoCheck, movieMaximum: .seconds(10)))
    if movies { _ = kiosk.handle(.available([.still, .movie, .review], at: ms(0))) }
    return kiosk
  }

  /// A clean press and release of `role` at `time`, with the ticks the loop would give.
  func click(_ kiosk: inout Kiosk, _ role: ButtonRole, at time: Int64, hold: Int64 = 100) -> [Action] {
    var actions = kiosk.handle(.edge(role, .pressed, at: ms(time)))
    actions += kiosk.handle(.tick(ms(time + 5)))
    actions += kiosk.handle(.edge(role, .released, at: ms(time + hold)))
    actions += kiosk.handle(.tick(ms(time + hold + 30)))
    return actions
  }

  func saves(_ actions: [Action]) -> [Action] {
    actions.filter { if case .saveStill = $0 { true } else { false } }
  }

  @Test func aPressSavesTheFrameNearestToIt() {
    var kiosk = kiosk()
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = click(&kiosk, .shutter, at: 1010)
    // Frame 2 comes 190 ms after the press, frame 1 came 10 ms before it: frame 1 is the moment.
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1200)))) == [.saveStill(frame(1, at: 1000), pressedAt: ms(1010))])
  }

  @Test func aPressJustBeforeAFrameSavesThatFrame() {
    var kiosk = kiosk()
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = kiosk.handle(.edge(.shutter, .pressed, at: ms(1190)))
    _ = kiosk.handle(.tick(ms(1195)))
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1200)))) == [.saveStill(frame(2, at: 1200), pressedAt: ms(1190))])
    #expect(saves(kiosk.handle(.frame(frame(3, at: 1400)))) == [], "one press, one still")
  }

  @Test func aPressDecidedAfterLaterFramesArrivedStillGetsTheNearestFrame() {
    var kiosk = kiosk()
    _ = kiosk.handle(.frame(frame(1, at: 990)))
    _ = kiosk.handle(.edge(.shutter, .pressed, at: ms(1000)))
    _ = kiosk.handle(.edge(.shutter, .released, at: ms(1001)))
    _ = kiosk.handle(.edge(.shutter, .pressed, at: ms(1003)))  // bounce: the press settles at 1008
    // A fast camera: two frames from after the press arrive before the press is decided.
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1002)))) == [])
    #expect(saves(kiosk.handle(.frame(frame(3, at: 1006)))) == [])
    #expect(saves(kiosk.handle(.tick(ms(1008)))) == [.saveStill(frame(2, at: 1002), pressedAt: ms(1000))])
    #expect(saves(kiosk.handle(.frame(frame(4, at: 1010)))) == [], "one press, one still")
  }

  @Test func aBouncyPressIsOnePhoto() {
    var kiosk = kiosk()
    var actions: [Action] = []
    for (time, edge) in [(1000, ButtonEdge.pressed), (1001, .released), (1002, .pressed), (1003, .released), (1004, .pressed)] {
      actions += kiosk.handle(.edge(.shutter, edge, at: ms(Int64(time))))
    }
    for time in stride(from: Int64(1010), through: 1300, by: 33) { actions += kiosk.handle(.frame(frame(UInt32(time), at: time))) }
    actions += kiosk.handle(.edge(.shutter, .released, at: ms(1300)))
    actions += kiosk.handle(.tick(ms(1400)))
    #expect(saves(actions).count == 1)
  }

  @Test func pressesBeyondTheWriterQueueAreRefusedAndCounted() {
    var kiosk = kiosk()
    var saved = 0
    for index in 0..<(Kiosk.maximumSavesInFlight + 2) {
      let time = Int64(index) * 1000
      _ = click(&kiosk, .shutter, at: time)
      saved += saves(kiosk.handle(.frame(frame(UInt32(index), at: time + 10)))).count
    }
    #expect(saved == Kiosk.maximumSavesInFlight)
    #expect(kiosk.refusedPresses == 2)
    _ = kiosk.handle(.stillSaved(name: "IMG_0001.JPG", at: ms(10_000)))
    _ = click(&kiosk, .shutter, at: 11_000)
    #expect(saves(kiosk.handle(.frame(frame(99, at: 11_010)))).count == 1, "a finished save frees a place")
  }

  @Test func aLostCameraIsAScreenStateAndRefusesTheShutter() {
    var kiosk = kiosk()
    let actions = kiosk.handle(.cameraLost(reason: "ENODEV", at: ms(0)))
    #expect(actions.contains(.show(.message("Camera not available"))))
    #expect(actions.contains(.light(.ready, false)))
    _ = click(&kiosk, .shutter, at: 10)
    #expect(saves(kiosk.handle(.frame(frame(1, at: 200)))) == [])
    #expect(kiosk.refusedPresses == 1)
    #expect(kiosk.handle(.cameraBack(at: ms(300))).contains(.show(.live(.still))))
    _ = click(&kiosk, .shutter, at: 1000)
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1010)))).count == 1)
  }

  @Test func aFailedSaveIsShownForAWhileThenTheLivePictureReturns() {
    var kiosk = kiosk()
    _ = click(&kiosk, .shutter, at: 0)
    _ = kiosk.handle(.frame(frame(1, at: 5)))
    #expect(kiosk.handle(.saveFailed(reason: "ENOSPC", at: ms(500))).contains(.show(.message("Save failed"))))
    #expect(kiosk.nextDeadline == ms(3500))
    #expect(kiosk.handle(.tick(ms(3500))).contains(.show(.live(.still))))
  }

  @Test func theCountdownShowsItsDigitsThenTakesThePhotoAtZero() {
    var kiosk = kiosk(countdown: .seconds(3))
    let started = click(&kiosk, .shutter, at: 0, hold: 50)
    #expect(started.contains(.show(.countdown(secondsLeft: 3))))
    #expect(kiosk.nextDeadline == ms(1000))
    #expect(kiosk.handle(.tick(ms(1000))).contains(.show(.countdown(secondsLeft: 2))))
    #expect(kiosk.handle(.tick(ms(2000))).contains(.show(.countdown(secondsLeft: 1))))
    #expect(saves(kiosk.handle(.frame(frame(1, at: 2500)))) == [], "no photo before zero")
    _ = kiosk.handle(.tick(ms(3000)))
    #expect(saves(kiosk.handle(.frame(frame(2, at: 3010)))) == [.saveStill(frame(2, at: 3010), pressedAt: ms(3000))])
  }

  @Test func cancelStopsTheCountdown() {
    var kiosk = kiosk(countdown: .seconds(3))
    _ = click(&kiosk, .shutter, at: 0, hold: 50)
    let cancelled = click(&kiosk, .cancel, at: 1200)
    #expect(cancelled.contains(.show(.live(.still))))
    _ = kiosk.handle(.tick(ms(3000)))
    #expect(saves(kiosk.handle(.frame(frame(1, at: 3010)))) == [])
  }

  @Test func reviewThenRetakeDiscardsThePhoto() {
    var kiosk = kiosk(photoCheck: .seconds(5))
    _ = click(&kiosk, .shutter, at: 0)
    _ = kiosk.handle(.frame(frame(1, at: 10)))
    #expect(kiosk.handle(.stillSaved(name: "DCIM/100KIOSK/IMG_0001.JPG", at: ms(400))).contains(
      .show(.checkingPhoto("DCIM/100KIOSK/IMG_0001.JPG"))))
    let retake = click(&kiosk, .cancel, at: 1000)
    #expect(retake.contains(.discardStill("DCIM/100KIOSK/IMG_0001.JPG")))
    #expect(retake.contains(.show(.live(.still))))
  }

  @Test func reviewTimeoutMeansUsePhoto() {
    var kiosk = kiosk(photoCheck: .seconds(5))
    _ = click(&kiosk, .shutter, at: 0)
    _ = kiosk.handle(.frame(frame(1, at: 10)))
    _ = kiosk.handle(.stillSaved(name: "IMG_0001.JPG", at: ms(400)))
    #expect(kiosk.nextDeadline == ms(5400))
    let actions = kiosk.handle(.tick(ms(5400)))
    #expect(actions.contains(.show(.live(.still))))
    #expect(!actions.contains { if case .discardStill = $0 { true } else { false } })
  }

  @Test func theShutterDuringReviewIsUsePhotoNotANewPhoto() {
    var kiosk = kiosk(photoCheck: .seconds(5))
    _ = click(&kiosk, .shutter, at: 0)
    _ = kiosk.handle(.frame(frame(1, at: 10)))
    _ = kiosk.handle(.stillSaved(name: "IMG_0001.JPG", at: ms(400)))
    _ = click(&kiosk, .shutter, at: 1000)
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1010)))) == [])
    #expect(kiosk.screen == .live(.still))
  }

  @Test func theModeButtonCyclesOnlyThroughAvailableModes() {
    var onlyStills = kiosk()
    _ = click(&onlyStills, .mode, at: 0)
    #expect(onlyStills.mode == .still)

    var all = kiosk(movies: true)
    let photo = RollEntry(path: "DCIM/100KIOSK/IMG_0001.JPG")!
    _ = all.handle(.roll([photo], at: ms(0)))
    _ = click(&all, .mode, at: 0)
    #expect(all.mode == .movie)
    _ = click(&all, .mode, at: 1000)
    #expect(all.mode == .review)
    #expect(all.screen == .reviewing(ReviewView(item: photo, position: 1, count: 1)))
    _ = click(&all, .mode, at: 2000)
    #expect(all.mode == .still)

    var noMovies = kiosk()
    _ = noMovies.handle(.available([.still, .review], at: ms(0)))
    _ = noMovies.handle(.roll([photo], at: ms(0)))
    _ = click(&noMovies, .mode, at: 0)
    #expect(noMovies.mode == .review)
  }

  @Test func aLongPressOnModeIsHome() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    #expect(kiosk.mode == .movie)
    let actions = click(&kiosk, .mode, at: 1000, hold: 1200)
    #expect(kiosk.mode == .still)
    #expect(actions.contains(.log("mode still")))
    // Held again in still mode nothing changes, and the log still tells the long press from a lost click.
    let again = click(&kiosk, .mode, at: 4000, hold: 1200)
    #expect(kiosk.mode == .still)
    #expect(again.contains { if case .log(let line) = $0 { line.hasPrefix("button mode long press at ") } else { false } }, "\(again)")
    #expect(!click(&kiosk, .mode, at: 8000).contains { if case .log(let line) = $0 { line.contains("long press") } else { false } })
  }

  @Test func moviesStartStopAndStopThemselvesAtTheMaximum() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    let start = click(&kiosk, .shutter, at: 1000)
    #expect(start.contains(.startMovie(at: ms(1000))))
    #expect(start.contains(.light(.tally, true)))
    #expect(start.contains(.show(.recording(since: ms(1000), until: ms(11_000)))))
    let stop = click(&kiosk, .shutter, at: 4000)
    #expect(stop.contains(.stopMovie(at: ms(4000))))
    #expect(stop.contains(.light(.tally, false)))

    _ = click(&kiosk, .shutter, at: 5000)
    #expect(kiosk.nextDeadline == ms(15_000))
    let automatic = kiosk.handle(.tick(ms(15_000)))
    #expect(automatic.contains(.stopMovie(at: ms(15_000))))
  }

  @Test func aRecordingStopsWhenStorageReachesTheReserve() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    _ = click(&kiosk, .shutter, at: 1000)
    let full = kiosk.handle(.storage(full: true, detail: "60 MiB free", at: ms(3000)))
    #expect(full.contains(.stopMovie(at: ms(3000))))
    #expect(full.contains(.light(.tally, false)))
    #expect(full.contains(.show(.message("Storage full"))))
    #expect(kiosk.nextDeadline == nil, "no maximum-duration stop is left pending")
    #expect(click(&kiosk, .shutter, at: 4000).contains(.log("shutter refused: storage full")))
  }

  @Test func aRecordingStopsAtTheLargestFileAndTheNextPressStartsAnother() {
    var kiosk = kiosk(movies: true)
    #expect(kiosk.handle(.movieFileFull(at: ms(500))).isEmpty, "nothing records yet")
    _ = click(&kiosk, .mode, at: 0)
    _ = click(&kiosk, .shutter, at: 1000)
    let full = kiosk.handle(.movieFileFull(at: ms(3000)))
    #expect(full.contains(.stopMovie(at: ms(3000))))
    #expect(full.contains(.light(.tally, false)))
    #expect(kiosk.nextDeadline == nil, "no maximum-duration stop is left pending")
    // The card has room: unlike a full one, the next press records again.
    #expect(click(&kiosk, .shutter, at: 4000).contains(.startMovie(at: ms(4000))))
  }

  @Test func cancelStopsAndKeepsAMovie() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    _ = click(&kiosk, .shutter, at: 1000)
    let cancelled = click(&kiosk, .cancel, at: 2000)
    #expect(cancelled.contains(.stopMovie(at: ms(2000))))
    #expect(!cancelled.contains { if case .discardStill = $0 { true } else { false } })
  }

  @Test func losingTheCameraWhileRecordingStopsTheMovie() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    _ = click(&kiosk, .shutter, at: 1000)
    let lost = kiosk.handle(.cameraLost(reason: "ENODEV", at: ms(2000)))
    #expect(lost.contains(.stopMovie(at: ms(2000))))
    #expect(lost.contains(.show(.message("Camera not available"))))
    #expect(lost.contains(.light(.tally, false)))
  }

  @Test func losingAModeWhileInItGoesBackToStills() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    _ = click(&kiosk, .shutter, at: 1000)
    let actions = kiosk.handle(.available([.still], at: ms(2000)))
    #expect(actions.contains(.stopMovie(at: ms(2000))))
    #expect(kiosk.mode == .still)
    #expect(kiosk.screen == .live(.still))
  }

  @Test func theRemoteShutterAndModeAreTheSameEventsAsTheButtons() {
    var kiosk = kiosk(movies: true)
    _ = kiosk.handle(.remote(.shutter, at: ms(100)))
    #expect(saves(kiosk.handle(.frame(frame(1, at: 110)))).count == 1)
    _ = kiosk.handle(.remote(.mode(.movie), at: ms(200)))
    #expect(kiosk.mode == .movie)
    #expect(kiosk.handle(.remote(.shutter, at: ms(300))).contains(.startMovie(at: ms(300))))
  }

  @Test func withoutStillsTheShutterIsRefused() {
    var kiosk = kiosk()
    let actions = kiosk.handle(.available([], at: ms(0)))
    #expect(actions.contains(.light(.ready, false)))
    _ = click(&kiosk, .shutter, at: 100)
    #expect(saves(kiosk.handle(.frame(frame(1, at: 110)))) == [])
    #expect(kiosk.refusedPresses == 1)
    _ = kiosk.handle(.available([.still], at: ms(500)))
    _ = click(&kiosk, .shutter, at: 1000)
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1010)))).count == 1)
  }

  @Test func theReadyLampFollowsWhetherAPictureCanBeTaken() {
    var kiosk = kiosk()
    #expect(kiosk.handle(.tick(ms(1))).contains(.light(.ready, true)))
    let pressed = kiosk.handle(.edge(.shutter, .pressed, at: ms(10))) + kiosk.handle(.tick(ms(15)))
    #expect(pressed.contains(.light(.ready, false)), "waiting for the frame")
    #expect(kiosk.handle(.frame(frame(1, at: 20))).contains(.light(.ready, true)))
  }
}

extension KioskTests {
  @Test(arguments: [(1005 as Int64, 1 as UInt32), (1035, 2), (1060, 3), (1075, 3)])
  func aLatePressTakesTheNearestOfTheRecentFrames(pressedAt: Int64, expected: UInt32) {
    var kiosk = kiosk()
    for (sequence, time) in [(1, 1000), (2, 1040), (3, 1080)] { _ = kiosk.handle(.frame(frame(UInt32(sequence), at: Int64(time)))) }
    // The edge reaches the loop after frame 3 (the loop was busy): the moment is already among the frames.
    let actions = kiosk.handle(.edge(.shutter, .pressed, at: ms(pressedAt))) + kiosk.handle(.tick(ms(1090)))
    guard case .saveStill(let chosen, _) = saves(actions).first else {
      Issue.record("no still for a press at \(pressedAt): \(actions)")
      return
    }
    #expect(chosen.sequence == expected)
  }

  @Test func aTieBetweenTwoFramesGoesToTheLater() {
    var kiosk = kiosk()
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = kiosk.handle(.edge(.shutter, .pressed, at: ms(1020)))
    _ = kiosk.handle(.tick(ms(1025)))
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1040)))) == [.saveStill(frame(2, at: 1040), pressedAt: ms(1020))])
  }

  @Test func belowTheReserveTheShutterIsRefusedWithStorageFull() {
    var kiosk = kiosk()
    let actions = kiosk.handle(.storage(full: true, detail: "10 MiB free", at: ms(0)))
    #expect(actions.contains(.show(.message("Storage full"))))
    #expect(actions.contains(.log("storage full: 10 MiB free")))
    #expect(actions.contains(.light(.ready, false)))
    #expect(kiosk.handle(.storage(full: true, detail: "9 MiB free", at: ms(1))) == [], "said once per change")
    let refused = click(&kiosk, .shutter, at: 10)
    #expect(refused.contains(.log("shutter refused: storage full")))
    #expect(saves(kiosk.handle(.frame(frame(1, at: 200)))) == [])
  }

  @Test func whenSpaceIsFreedTheNextPressWorks() {
    var kiosk = kiosk()
    _ = kiosk.handle(.storage(full: true, detail: "", at: ms(0)))
    #expect(kiosk.handle(.storage(full: false, detail: "freed", at: ms(50))).contains(.show(.live(.still))))
    _ = click(&kiosk, .shutter, at: 100)
    #expect(saves(kiosk.handle(.frame(frame(2, at: 110)))).count == 1)
  }

  @Test func aLostCameraOutranksStorageFullOnScreen() {
    var kiosk = kiosk()
    _ = kiosk.handle(.cameraLost(reason: "ENODEV", at: ms(0)))
    _ = kiosk.handle(.storage(full: true, detail: "", at: ms(1)))
    #expect(kiosk.screen == .message("Camera not available"))
    #expect(kiosk.handle(.cameraBack(at: ms(2))).contains(.show(.message("Storage full"))))
  }

  @Test func aRecorderThatFailsEndsTheRecording() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    _ = click(&kiosk, .shutter, at: 1000)
    let failed = kiosk.handle(.movieFailed(reason: "EIO", at: ms(1500)))
    #expect(failed.contains(.light(.tally, false)))
    #expect(failed.contains(.stopMovie(at: ms(1500))), "what was written is finished and published at once")
    #expect(failed.contains(.show(.message("Save failed"))))
    #expect(kiosk.nextDeadline == ms(4500), "only the message's timeout is left, not the movie's maximum")
    #expect(click(&kiosk, .shutter, at: 5000).contains(.startMovie(at: ms(5000))), "the next press starts a new one")
  }

  @Test func aLostRollRefusesStopsARecordingAndComesBack() {
    var kiosk = kiosk(movies: true)
    _ = click(&kiosk, .mode, at: 0)
    #expect(click(&kiosk, .shutter, at: 1000).contains(.startMovie(at: ms(1000))))
    let lost = kiosk.handle(.rollStorage(available: false, mounts: 0, detail: "/roll: no such directory", at: ms(2000)))
    #expect(lost.contains(.stopMovie(at: ms(2000))), "what was written is finished while it can be")
    #expect(lost.contains(.show(.message("Storage not available"))))
    #expect(lost.contains(.light(.tally, false)))
    #expect(kiosk.handle(.rollStorage(available: false, mounts: 0, detail: "again", at: ms(2100))).isEmpty, "a loss is acted on once")
    #expect(!click(&kiosk, .shutter, at: 3000).contains(.startMovie(at: ms(3000))))
    #expect(kiosk.refusedPresses == 1)
    // Storage full while lost: the screen still says what matters more.
    _ = kiosk.handle(.storage(full: true, detail: "", at: ms(3500)))
    #expect(kiosk.screen == .message("Storage not available"))
    _ = kiosk.handle(.storage(full: false, detail: "", at: ms(3600)))
    #expect(!lost.contains(.recoverRoll))
    let back = kiosk.handle(.rollStorage(available: true, mounts: 0, detail: "/roll: writable", at: ms(4000)))
    #expect(back.contains(.show(.live(.movie))))
    #expect(back.contains(.recoverRoll), "what the loss left on the card is published when it is back")
    #expect(back.contains(.log("storage back: /roll: writable (at 4.000000)")), "the check's time, in the log")
    #expect(!kiosk.handle(.rollStorage(available: true, mounts: 0, detail: "again", at: ms(4100))).contains(.recoverRoll), "once a return")
    #expect(click(&kiosk, .shutter, at: 5000).contains(.startMovie(at: ms(5000))))
  }

  /// A save that fails on a card that then goes (ext4 read-only after EIO, a card pulled): "Save failed"
  /// first, for its time, then what is wrong with the storage.
  @Test func saveFailedIsShownBeforeTheStorageThatFailedIsReportedGone() {
    var kiosk = kiosk()
    _ = click(&kiosk, .shutter, at: 100)
    _ = kiosk.handle(.frame(frame(1, at: 110)))
    #expect(kiosk.handle(.saveFailed(reason: "EIO", at: ms(500))).contains(.show(.message("Save failed"))))
    #expect(!kiosk.handle(.rollStorage(available: false, mounts: 0, detail: "read-only", at: ms(501))).contains { if case .show = $0 { true } else { false } })
    #expect(kiosk.screen == .message("Save failed"))
    #expect(kiosk.handle(.tick(ms(3500))).contains(.show(.message("Storage not available"))))
  }

  @Test func aLostRollRefusesStills() {
    var kiosk = kiosk()
    _ = kiosk.handle(.rollStorage(available: false, mounts: 0, detail: "gone", at: ms(0)))
    _ = click(&kiosk, .shutter, at: 100)
    #expect(saves(kiosk.handle(.frame(frame(1, at: 110)))).isEmpty)
    #expect(kiosk.refusedPresses == 1)
    _ = kiosk.handle(.rollStorage(available: true, mounts: 0, detail: "back", at: ms(200)))
    _ = click(&kiosk, .shutter, at: 300)
    #expect(saves(kiosk.handle(.frame(frame(2, at: 310)))).count == 1)
  }

  @Test func aFlashStillIsTheFirstFrameInTheLampsLightNotTheNearest() {
    var kiosk = Kiosk(
      settings: KioskSettings(gestures: Self.timing, flashLead: .milliseconds(150)))
    _ = kiosk.handle(.frame(frame(1, at: 990)))
    let press = kiosk.handle(.edge(.shutter, .pressed, at: ms(1000))) + kiosk.handle(.tick(ms(1005)))
    #expect(press.contains(.light(.flash, true)), "lit at the press")
    #expect(saves(kiosk.handle(.frame(frame(2, at: 1040)))).isEmpty, "nearest, but before the lamp's lead")
    #expect(saves(kiosk.handle(.frame(frame(3, at: 1080)))).isEmpty)
    _ = kiosk.handle(.edge(.shutter, .released, at: ms(1100)))
    let taken = kiosk.handle(.frame(frame(5, at: 1160)))
    #expect(saves(taken) == [.saveStill(frame(5, at: 1160), pressedAt: ms(1000))])
    #expect(taken.contains(.light(.flash, false)), "dark once the frame is taken")
  }

  @Test func theFlashIsAVideoLightOnlyWhenConfigured() {
    for forMovies in [false, true] {
      var kiosk = Kiosk(
        settings: KioskSettings(gestures: Self.timing, flashLead: .milliseconds(100), flashForMovies: forMovies))
      _ = kiosk.handle(.available([.still, .movie], at: ms(0)))
      _ = click(&kiosk, .mode, at: 0)
      let start = click(&kiosk, .shutter, at: 1000)
      #expect(start.contains(.startMovie(at: ms(1000))))
      #expect(start.contains(.light(.flash, true)) == forMovies)
      let stop = click(&kiosk, .shutter, at: 3000)
      #expect(stop.contains(.light(.flash, false)) == forMovies)
    }
  }

  @Test func withoutAFlashTheLampIsNeverLit() {
    var kiosk = kiosk()
    let actions = click(&kiosk, .shutter, at: 100) + kiosk.handle(.frame(frame(1, at: 110)))
    #expect(!actions.contains(.light(.flash, true)))
    #expect(saves(actions).count == 1)
  }

  @Test func theCameraButtonCyclesOnlyBetweenPictures() {
    var kiosk = Kiosk(settings: KioskSettings(gestures: Self.timing, movieMaximum: .seconds(10), cameras: 2))
    _ = kiosk.handle(.available([.still, .movie], at: ms(0)))
    #expect(click(&kiosk, .camera, at: 100).contains(.nextCamera))
    _ = click(&kiosk, .mode, at: 1000)
    _ = click(&kiosk, .shutter, at: 2000)
    let whileRecording = click(&kiosk, .camera, at: 3000)
    #expect(!whileRecording.contains(.nextCamera))
    #expect(whileRecording.contains(.log("camera button: stop the movie first")))
    _ = click(&kiosk, .shutter, at: 4000)
    #expect(click(&kiosk, .camera, at: 5000).contains(.nextCamera))

    var single = Kiosk(settings: KioskSettings(gestures: Self.timing))
    #expect(!click(&single, .camera, at: 100).contains(.nextCamera), "one camera: nothing to switch to")
  }
}

