import Testing

@testable import KioskCore

/// Scripted event sequences with a manual clock: every instant is written into the script.
@Suite struct KioskTests {
  func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }
  func frame(_ sequence: UInt32, at milliseconds: Int64) -> FrameInfo {
    FrameInfo(sequence: sequence, timestamp: ms(milliseconds))
  }

  @Test func aPressSavesTheFrameNearestToIt() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    #expect(kiosk.handle(.frame(frame(1, at: 1000))) == [])
    #expect(kiosk.handle(.button(.shutter, .pressed, at: ms(1010))) == [])
    // Frame 2 comes 190 ms after the press, frame 1 came 10 ms before it: frame 1 is the moment.
    #expect(kiosk.handle(.frame(frame(2, at: 1200))) == [.saveStill(frame(1, at: 1000), pressedAt: ms(1010))])
  }

  @Test func aPressJustBeforeAFrameSavesThatFrame() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(1190)))
    #expect(kiosk.handle(.frame(frame(2, at: 1200))) == [.saveStill(frame(2, at: 1200), pressedAt: ms(1190))])
    #expect(kiosk.handle(.frame(frame(3, at: 1400))) == [], "one press, one still")
  }

  @Test func aPressThatReachesTheLoopAfterLaterFramesIsMatchedAtOnce() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = kiosk.handle(.frame(frame(2, at: 1040)))
    _ = kiosk.handle(.frame(frame(3, at: 1080)))
    // Pressed at 1045 but delivered after frame 3: frame 2 (5 ms before) is the moment, not frame 4.
    #expect(kiosk.handle(.button(.shutter, .pressed, at: ms(1045))) == [.saveStill(frame(2, at: 1040), pressedAt: ms(1045))])
    #expect(kiosk.handle(.frame(frame(4, at: 1120))) == [], "one press, one still")
  }

  @Test(arguments: [(1005, 1), (1035, 2), (1060, 3), (1075, 3)])
  func aLatePressTakesTheNearestOfTheRecentFrames(pressedAt: Int64, expected: UInt32) {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    for (sequence, time) in [(1, 1000), (2, 1040), (3, 1080)] { _ = kiosk.handle(.frame(frame(UInt32(sequence), at: Int64(time)))) }
    let actions = kiosk.handle(.button(.shutter, .pressed, at: ms(pressedAt)))
    guard case .saveStill(let chosen, _) = actions.first else {
      Issue.record("no still for a press at \(pressedAt): \(actions)")
      return
    }
    #expect(chosen.sequence == expected)
  }

  @Test func aTieBetweenTwoFramesGoesToTheLater() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(1020)))
    #expect(kiosk.handle(.frame(frame(2, at: 1040))) == [.saveStill(frame(2, at: 1040), pressedAt: ms(1020))])
  }

  @Test func aBounceNeverTakesASecondPhoto() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.frame(frame(1, at: 1000)))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(1001)))
    _ = kiosk.handle(.button(.shutter, .released, at: ms(1003)))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(1005)))
    #expect(kiosk.handle(.frame(frame(2, at: 1033))).count == 1)
    #expect(kiosk.handle(.frame(frame(3, at: 1066))) == [])
  }

  @Test func twoRealPressesTakeTwoPhotos() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(1000)))
    #expect(kiosk.handle(.frame(frame(1, at: 1020))).count == 1)
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(1500)))
    #expect(kiosk.handle(.frame(frame(2, at: 1520))) == [.saveStill(frame(2, at: 1520), pressedAt: ms(1500))])
  }

  @Test func pressesBeyondTheWriterQueueAreRefusedVisiblyInTheLog() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    var saves = 0
    for index in 0..<(Kiosk.maximumSavesInFlight + 2) {
      let time = Int64(index) * 1000
      let actions = kiosk.handle(.button(.shutter, .pressed, at: ms(time)))
      saves += kiosk.handle(.frame(frame(UInt32(index), at: time + 10))).count
      if index >= Kiosk.maximumSavesInFlight {
        #expect(actions.count == 1)
        guard case .log(let text) = actions.first else {
          Issue.record("refusal not reported")
          continue
        }
        #expect(text.contains("refused"))
      }
    }
    #expect(saves == Kiosk.maximumSavesInFlight)
    _ = kiosk.handle(.stillSaved(name: "IMG_0001.JPG"))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(100_000)))
    #expect(kiosk.handle(.frame(frame(99, at: 100_010))).count == 1, "a finished save frees a place")
  }

  @Test func aLostCameraIsAScreenStateAndRefusesTheShutter() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    let actions = kiosk.handle(.cameraLost(reason: "ENODEV"))
    #expect(actions.first == .show(.message("Camera not available")))
    #expect(kiosk.screen == .message("Camera not available"))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(10)))
    #expect(kiosk.handle(.frame(frame(1, at: 20))) == [])
    #expect(kiosk.handle(.cameraBack) == [.show(.live)])
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(100)))
    #expect(kiosk.handle(.frame(frame(2, at: 110))).count == 1)
  }

  @Test func aFailedSaveIsShownUntilTheNextPress() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(0)))
    _ = kiosk.handle(.frame(frame(1, at: 5)))
    #expect(kiosk.handle(.saveFailed(reason: "ENOSPC")).first == .show(.message("Save failed")))
    #expect(kiosk.handle(.button(.shutter, .pressed, at: ms(1000))) == [.show(.live)])
    #expect(kiosk.handle(.frame(frame(2, at: 1001))).count == 1)
  }
}

@Suite struct KioskStorageTests {
  func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

  @Test func belowTheReserveTheShutterIsRefusedWithStorageFull() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    let actions = kiosk.handle(.storage(full: true, detail: "10 MiB free"))
    #expect(actions.first == .show(.message("Storage full")))
    #expect(actions.contains(.log("storage full: 10 MiB free")))
    #expect(kiosk.handle(.storage(full: true, detail: "9 MiB free")) == [], "said once per change")
    #expect(kiosk.handle(.button(.shutter, .pressed, at: ms(0))) == [.log("shutter refused: storage full")])
    #expect(kiosk.handle(.frame(FrameInfo(sequence: 1, timestamp: ms(5)))) == [], "no save")
  }

  @Test func whenSpaceIsFreedTheNextPressWorks() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.storage(full: true, detail: ""))
    #expect(kiosk.handle(.storage(full: false, detail: "freed")).first == .show(.live))
    #expect(kiosk.screen == .live)
    _ = kiosk.handle(.button(.shutter, .pressed, at: ms(100)))
    #expect(kiosk.handle(.frame(FrameInfo(sequence: 2, timestamp: ms(110)))).count == 1)
  }

  @Test func aLostCameraOutranksStorageFullOnScreen() {
    var kiosk = Kiosk(debounce: .milliseconds(30))
    _ = kiosk.handle(.cameraLost(reason: "ENODEV"))
    _ = kiosk.handle(.storage(full: true, detail: ""))
    #expect(kiosk.screen == .message("Camera not available"))
    #expect(kiosk.handle(.cameraBack) == [.show(.message("Storage full"))])
  }
}
