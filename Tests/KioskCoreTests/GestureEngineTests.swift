import Testing

@testable import KioskCore

/// Edge traces replayed with their timestamps; the expected gestures are written out in full.
@Suite struct GestureEngineTests {
  static let timing = GestureTiming(debounce: .milliseconds(30), minimumPulse: .milliseconds(5), hold: .milliseconds(800))

  func ms(_ value: Double) -> Instant { Instant(nanoseconds: Int64(value * 1_000_000)) }

  /// Replays `(milliseconds, role, edge)` and then ticks well past every deadline.
  func replay(_ trace: [(Double, ButtonRole, ButtonEdge)], endingAt end: Double? = nil) -> [Gesture] {
    var engine = GestureEngine(timing: Self.timing)
    var gestures: [Gesture] = []
    // Tick as the loop would: at each deadline the engine asks for, between the edges and after them.
    func tick(until time: Instant) {
      while let deadline = engine.nextDeadline, deadline <= time { gestures += engine.tick(deadline) }
    }
    for (time, role, edge) in trace {
      tick(until: ms(time))
      gestures += engine.edge(role, edge, at: ms(time))
    }
    let stop = ms(end ?? (trace.last?.0 ?? 0) + 2000)
    tick(until: stop)
    gestures += engine.tick(stop)
    return gestures
  }

  @Test func aCleanPressIsDownShortPressUp() {
    let gestures = replay([(0, .shutter, .pressed), (100, .shutter, .released)])
    #expect(gestures == [.down(.shutter, at: ms(0)), .shortPress(.shutter, at: ms(0)), .up(.shutter, at: ms(100))])
  }

  /// A shutter held when its chip went away: no long press by the clock, no short press at a made-up release,
  /// and the line starts clean when the chip is back.
  @Test func aForgottenLineFinishesNothing() {
    var engine = GestureEngine(timing: Self.timing)
    #expect(engine.edge(.shutter, .pressed, at: ms(0)) == [])
    #expect(engine.tick(ms(10)) == [.down(.shutter, at: ms(0))])
    engine.forget(.shutter)
    #expect(engine.nextDeadline == nil)
    #expect(engine.tick(ms(5000)) == [])
    #expect(engine.held == [])
    #expect(engine.edge(.shutter, .pressed, at: ms(6000)) == [])
    #expect(engine.edge(.shutter, .released, at: ms(6100)) == [.down(.shutter, at: ms(6000))])
    #expect(engine.tick(ms(6200)) == [.shortPress(.shutter, at: ms(6000)), .up(.shutter, at: ms(6100))])
  }

  @Test func aBounceBurstOfTwentyEdgesIsOnePress() {
    var trace: [(Double, ButtonRole, ButtonEdge)] = []
    for index in 0..<20 { trace.append((Double(index) * 0.5, .shutter, index.isMultiple(of: 2) ? .pressed : .released)) }
    trace.append((10, .shutter, .pressed))
    for index in 0..<20 { trace.append((200 + Double(index) * 1.2, .shutter, index.isMultiple(of: 2) ? .released : .pressed)) }
    trace.append((225, .shutter, .released))
    let gestures = replay(trace)
    #expect(gestures == [.down(.shutter, at: ms(0)), .shortPress(.shutter, at: ms(0)), .up(.shutter, at: ms(200))])
  }

  @Test(arguments: [0.1, 1, 4.9])
  func aGlitchShorterThanTheMinimumPulseIsNothing(width: Double) {
    #expect(replay([(0, .shutter, .pressed), (width, .shutter, .released)]) == [])
  }

  @Test func aPulseJustLongEnoughIsAPress() {
    let gestures = replay([(0, .shutter, .pressed), (5, .shutter, .released)])
    #expect(gestures.first == .down(.shutter, at: ms(0)))
    #expect(gestures.contains(.shortPress(.shutter, at: ms(0))))
  }

  @Test func aHoldJustBelowTheThresholdIsShort() {
    let gestures = replay([(0, .mode, .pressed), (799, .mode, .released)])
    #expect(gestures == [.down(.mode, at: ms(0)), .shortPress(.mode, at: ms(0)), .up(.mode, at: ms(799))])
  }

  @Test func aHoldPastTheThresholdIsLongWhileStillHeld() {
    var engine = GestureEngine(timing: Self.timing)
    #expect(engine.edge(.mode, .pressed, at: ms(0)) == [])
    #expect(engine.nextDeadline == ms(5))
    #expect(engine.tick(ms(5)) == [.down(.mode, at: ms(0))])
    #expect(engine.nextDeadline == ms(800))
    #expect(engine.tick(ms(799)) == [])
    #expect(engine.tick(ms(800)) == [.longPress(.mode, at: ms(800))])
    #expect(engine.nextDeadline == nil, "held, nothing more to decide")
    #expect(engine.edge(.mode, .released, at: ms(1500)) == [])
    #expect(engine.tick(ms(1530)) == [.up(.mode, at: ms(1500))], "no short press after a long one")
  }

  @Test func bounceWhileHeldDoesNotEndTheHold() {
    let gestures = replay([
      (0, .mode, .pressed), (400, .mode, .released), (410, .mode, .pressed), (900, .mode, .released),
    ])
    #expect(gestures == [.down(.mode, at: ms(0)), .longPress(.mode, at: ms(800)), .up(.mode, at: ms(900))])
  }

  @Test func twoButtonsHeldTogetherAreAChordAndNothingElse() {
    let gestures = replay([
      (0, .shutter, .pressed), (60, .mode, .pressed), (300, .mode, .released), (320, .shutter, .released),
    ])
    #expect(
      gestures == [
        .down(.shutter, at: ms(0)), .down(.mode, at: ms(60)), .chord(.shutter, .mode, at: ms(60)),
        .up(.mode, at: ms(300)), .up(.shutter, at: ms(320)),
      ])
  }

  @Test func aChordIsReportedOnceAndTheNextPressIsNormal() {
    let gestures = replay([
      (0, .shutter, .pressed), (10, .mode, .pressed), (1000, .mode, .released), (1010, .shutter, .released),
      (2000, .shutter, .pressed), (2100, .shutter, .released),
    ])
    #expect(gestures.filter { if case .chord = $0 { true } else { false } }.count == 1)
    #expect(!gestures.contains(.longPress(.shutter, at: ms(800))), "a chord's buttons make no long press")
    #expect(gestures.suffix(3) == [.down(.shutter, at: ms(2000)), .shortPress(.shutter, at: ms(2000)), .up(.shutter, at: ms(2100))])
  }

  @Test func aRepeatedLevelIsNoEdge() {
    let gestures = replay([(0, .shutter, .pressed), (1, .shutter, .pressed), (50, .shutter, .released)])
    #expect(gestures == [.down(.shutter, at: ms(0)), .shortPress(.shutter, at: ms(0)), .up(.shutter, at: ms(50))])
  }

  /// Ten presses, each with a random bounce burst on both edges inside the debounce window, and random
  /// glitches between them: exactly ten presses come out. Seeded, so a failure replays.
  @Test(arguments: [1 as UInt64, 2, 3, 42, 2026])
  func tenBouncyPressesAreTenPresses(seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    var trace: [(Double, ButtonRole, ButtonEdge)] = []
    var starts: [Double] = []
    var time = 0.0
    for _ in 0..<10 {
      starts.append(time)
      trace += burst(at: time, ending: .pressed, random: &random)
      let releaseAt = time + 40 + Double(random.next() % 600)
      trace += burst(at: releaseAt, ending: .released, random: &random)
      // A glitch well after the release settled.
      let glitchAt = releaseAt + 100 + Double(random.next() % 100)
      trace += [(glitchAt, .shutter, .pressed), (glitchAt + 0.1 + Double(random.next() % 40) / 10, .shutter, .released)]
      time = glitchAt + 200
    }
    let gestures = replay(trace)
    let downs = gestures.compactMap { gesture -> Instant? in
      if case .down(_, let at) = gesture { return at }
      return nil
    }
    #expect(downs == starts.map { ms($0) })
    #expect(gestures.filter { if case .shortPress = $0 { true } else { false } }.count == 10)
    #expect(gestures.filter { if case .up = $0 { true } else { false } }.count == 10)
  }

  /// The loop may tick late (a busy moment) or only at edges: decisions come out the same and in time order.
  @Test(arguments: [7 as UInt64, 8, 9])
  func decisionsDoNotDependOnHowOftenTheLoopTicks(seed: UInt64) {
    var random = SeededGenerator(seed: seed)
    var trace: [(Double, ButtonRole, ButtonEdge)] = []
    var time = 0.0
    var levels: [ButtonRole: Bool] = [:]
    for _ in 0..<300 {
      time += Double(random.next() % 400) / 10
      let role: ButtonRole = random.next() % 3 == 0 ? .mode : .shutter
      let active = !(levels[role] ?? false)
      levels[role] = active
      trace.append((time, role, active ? .pressed : .released))
    }
    var lazy = GestureEngine(timing: Self.timing)
    var lazyGestures: [Gesture] = []
    for (time, role, edge) in trace { lazyGestures += lazy.edge(role, edge, at: ms(time)) }
    lazyGestures += lazy.tick(ms(time + 2000))
    #expect(lazyGestures == replay(trace))
    #expect(!lazyGestures.isEmpty)
  }

  /// Up to 20 alternating edges within 20 ms, always ending at `level`.
  private func burst(at start: Double, ending level: ButtonEdge, random: inout SeededGenerator) -> [(Double, ButtonRole, ButtonEdge)] {
    let count = Int(random.next() % 10) * 2 + 1  // odd, so the burst ends where it began
    let other: ButtonEdge = level == .pressed ? .released : .pressed
    return (0..<count).map { index in
      (start + Double(index) * 20 / Double(count), .shutter, index.isMultiple(of: 2) ? level : other)
    }
  }
}
