// Frames and time: the still's frame chosen, the movie's frames, countdowns and timeouts.
extension Kiosk {
  mutating func frameArrived(_ frame: FrameInfo) -> [Action] {
    recentFrames.append(frame)
    if recentFrames.count > Self.recentFrameCount { recentFrames.removeFirst() }
    switch activity {
    case .capturing(let press):
      return capture(pressedAt: press)
    case .recording(let since, let until) where frame.timestamp >= since && frame.timestamp <= until:
      // The movie is from the press to the stop: a frame taken before the press but dequeued after it, or
      // after the maximum duration before the tick says so, is not part of it.
      return [.recordFrame(frame)]
    default:
      return []
    }
  }

  /// Zero shutter lag: the frame taken nearest the press, which may be one from before it. Decided once a
  /// frame from after the press has arrived, since only then is the nearest one known. With a flash lamp, the
  /// first frame taken once the lamp has been lit for its lead: one from before would have no flash in it.
  mutating func capture(pressedAt press: Instant) -> [Action] {
    if let lead = settings.flashLead {
      guard let lit = recentFrames.first(where: { $0.timestamp >= press + lead }) else {
        activity = .capturing(pressedAt: press)
        return []
      }
      activity = .idle
      savesInFlight += 1
      return [.saveStill(lit, pressedAt: press)]
    }
    guard let latest = recentFrames.last, latest.timestamp >= press else {
      activity = .capturing(pressedAt: press)
      return []
    }
    activity = .idle
    let distance = { (frame: FrameInfo) in abs((frame.timestamp - press).nanosecondsClamped) }
    // Newest first, so that a tie goes to the later frame: it shows what the press was for.
    let chosen = recentFrames.reversed().min { distance($0) < distance($1) }!
    savesInFlight += 1
    return [.saveStill(chosen, pressedAt: press)]
  }

  mutating func timeout(_ now: Instant) -> [Action] {
    var actions: [Action] = []
    if let until = message?.until, now >= until { message = nil }
    switch activity {
    case .countingDown(let until) where now >= until:
      activity = .idle
      actions += shutterAfterCountdown(at: until)
    case .checkingPhoto(_, let until) where now >= until:
      activity = .idle  // the timeout means "use photo"
    case .recording(_, let until) where now >= until:
      activity = .idle
      actions += [.stopMovie(at: until), .log("movie stopped at the maximum duration")]
    default:
      break
    }
    if let idle = reviewIdleDeadline, now >= idle {
      actions += [.log("review idle for \(settings.reviewIdle): back to the live picture")] + leaveReview(at: idle)
    }
    return actions
  }

  mutating func shutterAfterCountdown(at time: Instant) -> [Action] {
    guard cameraAvailable else { return refuse("camera not available") }
    return capture(pressedAt: time)
  }

  static func secondsLeft(until: Instant, now: Instant) -> Int {
    let remaining = (until - now).nanosecondsClamped
    return Int(max(1, (remaining + 999_999_999) / 1_000_000_000))
  }
}
