/// The timing that turns raw edges into gestures; three separate settings, because each filters something else.
public struct GestureTiming: Sendable, Equatable {
  /// After the line goes inactive, how long it must stay so before the button counts as released: contact
  /// bounce on release never becomes a second press.
  public var debounce: Duration
  /// How long the line must stay active before the button counts as down: shorter pulses are glitches
  /// (interference on a long cable), never presses.
  public var minimumPulse: Duration
  /// How long a button must be held for a long press.
  public var hold: Duration

  public init(debounce: Duration, minimumPulse: Duration, hold: Duration) {
    self.debounce = debounce
    self.minimumPulse = minimumPulse
    self.hold = hold
  }
}

/// What a person did with the buttons. Every instant is a kernel edge timestamp (or derived from one).
public enum Gesture: Sendable, Equatable {
  /// The button went down; `at` is the first edge of the press, bounce and all, so a still can be taken
  /// from that moment however long the filtering took.
  case down(ButtonRole, at: Instant)
  /// Released before the hold time, and not part of a chord.
  case shortPress(ButtonRole, at: Instant)
  /// Held for the hold time; fires while still held, at press time plus hold.
  case longPress(ButtonRole, at: Instant)
  /// Two buttons down together; their own short and long presses are then not reported.
  case chord(ButtonRole, ButtonRole, at: Instant)
  case up(ButtonRole, at: Instant)
}

/// Turns GPIO edges into gestures, pure and driven only by event timestamps.
///
/// A level counts once it has been stable long enough: active for `minimumPulse`, inactive for `debounce`.
/// That settling is only ever seen at the next edge or at a tick; `nextDeadline` says when the loop should
/// tick so that no decision waits for an edge that may never come.
public struct GestureEngine: Sendable {
  struct Line: Sendable {
    /// The line's electrical state as last reported, and since when.
    var rawActive = false
    var rawSince = Instant(nanoseconds: .min)
    /// The settled state.
    var down = false
    /// The first active edge of the current press (the press's moment) and the first inactive edge of
    /// the current release.
    var pressStart: Instant?
    var releaseStart: Instant?
    var longFired = false
    var inChord = false
  }

  public let timing: GestureTiming
  private var lines: [ButtonRole: Line] = [:]
  private var chordFired = false

  public init(timing: GestureTiming) { self.timing = timing }

  /// One edge from the kernel. Edges must come in timestamp order per line, as the kernel delivers them.
  public mutating func edge(_ role: ButtonRole, _ edge: ButtonEdge, at time: Instant) -> [Gesture] {
    var gestures = settle(until: time)
    var line = lines[role] ?? Line()
    let active = edge == .pressed
    guard active != line.rawActive else { return gestures }  // a repeated level is no change
    forgetSettled(&line, now: time)
    line.rawActive = active
    line.rawSince = time
    // The first edge of a burst is the moment; later edges of the same burst only move the settling.
    if active, !line.down, line.pressStart == nil { line.pressStart = time }
    if !active, line.down, line.releaseStart == nil { line.releaseStart = time }
    lines[role] = line
    gestures += settle(until: time)
    return gestures
  }

  /// Time passes: whatever settled by `now` is decided.
  public mutating func tick(_ now: Instant) -> [Gesture] { settle(until: now) }

  /// When the next decision falls due if no edge comes first; the loop arms its timer for it.
  public var nextDeadline: Instant? {
    ButtonRole.allCases.compactMap { role in lines[role].flatMap { deadline(of: $0) } }.min()
  }

  /// The line is gone (its chip unplugged): a press in progress on it ends without a gesture. Finishing it
  /// would invent a release nobody made, and a long press decided by the clock alone.
  public mutating func forget(_ role: ButtonRole) {
    lines[role] = nil
  }

  /// Which buttons are down (settled), for status and chords.
  public var held: [ButtonRole] { ButtonRole.allCases.filter { lines[$0]?.down == true } }

  private func deadline(of line: Line) -> Instant? {
    if line.rawActive, !line.down { return line.rawSince + timing.minimumPulse }
    if !line.rawActive, line.down { return line.rawSince + timing.debounce }
    if line.down, !line.longFired, !line.inChord, let start = line.pressStart { return start + timing.hold }
    return nil
  }

  /// Decides every transition due by `now`, earliest first, so that the result does not depend on how
  /// often the loop ticks.
  private mutating func settle(until now: Instant) -> [Gesture] {
    var gestures: [Gesture] = []
    while let due = nextDeadline, due <= now {
      for role in ButtonRole.allCases {
        guard var line = lines[role], deadline(of: line) == due else { continue }
        gestures += transition(role, &line, at: due)
        lines[role] = line
      }
      gestures += chords()
    }
    return gestures
  }

  /// The one transition of `line` that falls due at `now`.
  private func transition(_ role: ButtonRole, _ line: inout Line, at now: Instant) -> [Gesture] {
    if line.rawActive, !line.down {
      let start = line.pressStart ?? line.rawSince
      line = Line(rawActive: true, rawSince: line.rawSince, down: true, pressStart: start)
      return [.down(role, at: start)]
    }
    if !line.rawActive, line.down {
      let released = line.releaseStart ?? line.rawSince
      var gestures: [Gesture] = []
      if let start = line.pressStart, !line.longFired, !line.inChord, released - start < timing.hold {
        gestures.append(.shortPress(role, at: start))
      }
      gestures.append(.up(role, at: released))
      line = Line(rawActive: false, rawSince: line.rawSince)
      return gestures
    }
    line.longFired = true
    return [.longPress(role, at: now)]
  }

  /// A burst that settled back where it started leaves no trace: a glitch before a press, bounce while held.
  private func forgetSettled(_ line: inout Line, now: Instant) {
    if !line.down, !line.rawActive, now >= line.rawSince + timing.debounce { line.pressStart = nil }
    if line.down, line.rawActive, now >= line.rawSince + timing.minimumPulse { line.releaseStart = nil }
  }

  /// Two buttons down at once make one chord, reported when the second one settles.
  private mutating func chords() -> [Gesture] {
    let down = held
    if down.count < 2 {
      if down.isEmpty { chordFired = false }
      return []
    }
    guard !chordFired else { return [] }
    chordFired = true
    for role in down { lines[role]?.inChord = true }
    let time = down.compactMap { lines[$0]?.pressStart }.max() ?? Instant(nanoseconds: 0)
    return [.chord(down[0], down[1], at: time)]
  }
}
