import Testing

@testable import KioskCore

/// What the service used to work out for itself and the core now decides: the movie's frames, control
/// replies, the modes a verdict allows, shots left, how long a retry waits.
@Suite struct ServiceDecisionTests {
  static let timing = GestureTiming(debounce: .milliseconds(30), minimumPulse: .milliseconds(5), hold: .milliseconds(800))
  func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }
  func frame(_ sequence: UInt32, at time: Int64) -> FrameInfo { FrameInfo(sequence: sequence, timestamp: ms(time)) }
  func recorded(_ actions: [Action]) -> [FrameInfo] {
    actions.compactMap { if case .recordFrame(let frame) = $0 { frame } else { nil } }
  }
  func replies(_ actions: [Action]) -> [ControlReply] {
    actions.compactMap { if case .reply(_, let reply) = $0 { reply } else { nil } }
  }

  func movieKiosk(maximum: Duration = .seconds(10)) -> Kiosk {
    var kiosk = Kiosk(settings: KioskSettings(gestures: Self.timing, movieMaximum: maximum))
    _ = kiosk.handle(.available([.still, .movie], at: ms(0)))
    _ = kiosk.handle(.remote(.mode(.movie), at: ms(1)))
    return kiosk
  }

  @Test func aMovieIsTheFramesTakenBetweenItsStartAndItsStop() {
    var kiosk = movieKiosk()
    #expect(recorded(kiosk.handle(.frame(frame(1, at: 900)))).isEmpty, "not recording yet")
    _ = kiosk.handle(.remote(.shutter, at: ms(1000)))
    // Dequeued after the start but taken before it: not the movie's.
    #expect(recorded(kiosk.handle(.frame(frame(2, at: 990)))).isEmpty)
    #expect(recorded(kiosk.handle(.frame(frame(3, at: 1000)))) == [frame(3, at: 1000)])
    #expect(recorded(kiosk.handle(.frame(frame(4, at: 1100)))) == [frame(4, at: 1100)])
    _ = kiosk.handle(.remote(.shutter, at: ms(1150)))
    #expect(recorded(kiosk.handle(.frame(frame(5, at: 1200)))).isEmpty, "stopped")
  }

  @Test func aFrameTakenAfterTheMaximumIsNotTheMoviesEvenBeforeTheTick() {
    var kiosk = movieKiosk(maximum: .seconds(1))
    _ = kiosk.handle(.remote(.shutter, at: ms(1000)))
    #expect(recorded(kiosk.handle(.frame(frame(1, at: 2000)))) == [frame(1, at: 2000)], "at the maximum: in")
    #expect(recorded(kiosk.handle(.frame(frame(2, at: 2001)))).isEmpty, "past it: out, though no tick came yet")
  }

  @Test func aSocketShutterIsAnsweredAndARefusalSaysWhy() {
    var kiosk = Kiosk(settings: KioskSettings(gestures: Self.timing))
    _ = kiosk.handle(.available([.still], at: ms(0)))
    _ = kiosk.handle(.frame(frame(1, at: 100)))
    let taken = kiosk.handle(.remote(.shutter, client: 4, at: ms(110)))
    #expect(taken.contains(.reply(to: 4, .ok)))
    _ = kiosk.handle(.frame(frame(2, at: 200)))
    _ = kiosk.handle(.storage(full: true, detail: "1 MiB free", at: ms(300)))
    let refused = kiosk.handle(.remote(.shutter, client: 5, at: ms(400)))
    #expect(refused.contains(.reply(to: 5, .refused("storage full"))))
    #expect(refused.contains(.log("shutter refused: storage full")), "the log and the reply say the same")
    #expect(kiosk.refusedPresses == 1)
    #expect(ControlReply.refused("storage full").line == "error: shutter refused: storage full")
  }

  @Test func aModeRequestIsAnsweredWithTheModesThereAre() {
    var kiosk = Kiosk(settings: KioskSettings(gestures: Self.timing))
    _ = kiosk.handle(.available([.still], at: ms(0)))
    let refused = replies(kiosk.handle(.remote(.mode(.movie), client: 2, at: ms(10))))
    #expect(refused == [.modeUnavailable(.movie, available: [.still])])
    #expect(refused.first?.line == "error: mode movie is not available (available: still)")
    #expect(replies(kiosk.handle(.remote(.mode(.still), client: 2, at: ms(20)))) == [.ok], "already there is fine")
    #expect(replies(kiosk.handle(.remote(.status(json: true), client: 3, at: ms(30)))) == [.status(json: true)])
    #expect(ControlReply.status(json: true).line == nil, "the service writes the status")
  }

  @Test func theModesFollowTheVerdict() {
    let gate = CapabilityGate(required: [.stillCamera, .cameraRoll], optional: [.movieCamera, .display])
    let all: [ProbeResult] = [.pass(.stillCamera, ""), .pass(.cameraRoll, ""), .pass(.movieCamera, ""), .pass(.display, "")]
    #expect(gate.evaluate(all).kioskModes(rollOpen: true) == [.still, .movie, .review])
    #expect(gate.evaluate(all).kioskModes(rollOpen: false) == [.still], "no roll opened: nothing to record into or review")
    var noDisplay = all
    noDisplay[3] = .fail(.display, "unplugged")
    #expect(gate.evaluate(noDisplay).kioskModes(rollOpen: true) == [.still, .movie])
    var noMovies = all
    noMovies[2] = .fail(.movieCamera, "12 fps measured")
    #expect(gate.evaluate(noMovies).kioskModes(rollOpen: true) == [.still, .review])
  }

  @Test func offOnScreenIsTheMissingOptionalsAndTheRequiredOnesWithoutAScreen() {
    let gate = CapabilityGate(required: [.stillCamera, .cameraRoll, .shutterButton], optional: [.zoom, .display])
    let verdict = gate.evaluate([
      .pass(.stillCamera, ""), .pass(.cameraRoll, ""), .fail(.shutterButton, "chip gone"), .fail(.zoom, "1.0"),
      .pass(.display, ""),
    ])
    #expect(Set(verdict.offOnScreen) == [.zoom, .shutterButton])
    let cameraGone = gate.evaluate([.fail(.stillCamera, "gone"), .pass(.cameraRoll, ""), .pass(.shutterButton, "")])
    #expect(!cameraGone.offOnScreen.contains(.stillCamera), "the camera has a screen of its own")
  }

  @Test func shotsLeftIsTheSpareRoomOverTheMeanStill() {
    var shots = ShotsLeft()
    #expect(shots.count == nil, "nothing known yet")
    shots.spareBytes = 10_000_000
    #expect(shots.count == nil, "no still to take the size of")
    shots.add(stillOf: 1_000_000)
    shots.add(stillOf: 3_000_000)
    #expect(shots.count == 5)
    shots.spareBytes = 0
    #expect(shots.count == 0)
    shots.spareBytes = .max
    #expect(shots.count == 999_999, "capped for the overlay's corner")
  }

  @Test func aRetryBacksOffToItsMaximumAndStartsOverOnceItWorked() {
    var backoff = Intervals.cameraRetry
    #expect([backoff.take(), backoff.take(), backoff.take(), backoff.take(), backoff.take()]
      == [.seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
    backoff.reset()
    #expect(backoff.take() == .seconds(2))
    #expect(Duration.zero.timerNanoseconds == 1, "a zero wait would disarm the timer")
  }
}
