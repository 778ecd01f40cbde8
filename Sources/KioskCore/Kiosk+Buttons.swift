// The kiosk's buttons and control requests: gestures to shutter, cancel, mode, camera and zoom, and review
// mode's stepping through the roll.
extension Kiosk {
  mutating func gesture(_ gesture: Gesture) -> [Action] {
    // One line per accepted press: what a technician needs to tell a ghost press from a real one.
    if case .down(let role, let time) = gesture {
      return [.log("button \(role.rawValue) down at \(time)")] + acted(on: gesture)
    }
    // A long press that changes nothing on screen (mode held in still mode) must still be told from a lost click.
    if case .longPress(let role, let time) = gesture {
      return [.log("button \(role.rawValue) long press at \(time)")] + acted(on: gesture)
    }
    return acted(on: gesture)
  }

  mutating func acted(on gesture: Gesture) -> [Action] {
    if mode == .review, let actions = reviewing(gesture) { return actions }
    switch gesture {
    case .down(.shutter, let time):
      return shutter(at: time)
    case .down(.cancel, let time):
      return cancel(at: time)
    case .shortPress(.mode, let time):
      return switchMode(to: nextMode(after: mode), at: time)
    case .longPress(.mode, let time):
      // Home: whatever the kiosk was doing, a long press on mode is back to taking photos.
      return switchMode(to: .still, at: time)
    case .down(.camera, _):
      return nextCamera()
    case .down(.zoomIn, _):
      return [.zoom(.zoomIn)]
    case .down(.zoomOut, _):
      return [.zoom(.zoomOut)]
    case .down(let role, _) where role != .mode:
      if case .checkingPhoto = activity { activity = .idle }  // any other button: "use photo"
      return []
    default:
      return []
    }
  }

  /// Review mode's buttons: shutter short = older, shutter long = newer, cancel short = play or stop a movie,
  /// cancel long = delete (when allowed; shutter confirms, anything else keeps it). Nil: not review's business
  /// (the mode button).
  mutating func reviewing(_ gesture: Gesture) -> [Action]? {
    switch gesture {
    case .down(let role, let time), .up(let role, let time):
      guard role != .mode else { return nil }
      reviewState.lastInput = max(reviewState.lastInput, time)
      return []
    case .shortPress(.mode, _), .longPress(.mode, _), .chord:
      return nil
    default:
      break
    }
    if case .longPress(_, let time) = gesture { reviewState.lastInput = max(reviewState.lastInput, time) }
    guard let current = review.current else { return [] }
    if reviewState.confirmingDelete {
      reviewState.confirmingDelete = false
      guard case .shortPress(.shutter, _) = gesture else { return [.log("delete of \(current.path) cancelled")] }
      guard rollAvailable else { return [.log("delete of \(current.path) refused: storage not available")] }
      review.remove(current.path)
      var actions: [Action] = [.deleteItem(current.path), .log("deleted \(current.path)")]
      if review.isEmpty { actions += leaveReview(at: now) }
      return actions
    }
    switch gesture {
    case .shortPress(.shutter, _):
      reviewState.playing = false
      review.older()
    case .longPress(.shutter, _):
      reviewState.playing = false
      review.newer()
    case .shortPress(.cancel, _):
      guard current.kind == .movie else { return [] }
      reviewState.playing.toggle()
    case .longPress(.cancel, _):
      guard settings.allowDelete else { return [.log("delete from the kiosk is off ([review] allow-delete)")] }
      guard rollAvailable else { return [.log("delete refused: storage not available")] }
      reviewState.playing = false
      reviewState.confirmingDelete = true
    default:
      break
    }
    return []
  }

  /// Back to the live picture: the idle timeout, or nothing left to show.
  mutating func leaveReview(at time: Instant) -> [Action] {
    guard let home = [KioskMode.still, .movie].first(where: { available.contains($0) }) else {
      reviewState.lastInput = time  // nowhere to go: wait another idle period rather than tick at once
      return []
    }
    return switchMode(to: home, at: time)
  }

  var reviewIdleDeadline: Instant? {
    guard mode == .review, !reviewState.playing else { return nil }
    return reviewState.lastInput + settings.reviewIdle
  }

  mutating func shutter(at time: Instant) -> [Action] {
    if let reason = shutterRefusal { return refuse(reason) }
    switch (mode, activity) {
    case (_, .checkingPhoto):
      activity = .idle  // "use photo", and this press is not also a new photo
      return []
    case (.still, .countingDown):
      activity = .idle
      return [.log("countdown cancelled")]
    case (.review, .idle):
      // Only the control socket gets here (the shutter button steps through the roll): a still taken while
      // someone reviews joins the list, and the screen stays on the item being looked at.
      return capture(pressedAt: time)
    case (.still, .idle):
      message = nil
      if settings.countdown > .zero {
        activity = .countingDown(until: time + settings.countdown)
        return []
      }
      return capture(pressedAt: time)
    case (.movie, .idle):
      activity = .recording(since: time, until: time + settings.movieMaximum)
      return [.startMovie(at: time)]
    case (.movie, .recording):
      activity = .idle
      return [.stopMovie(at: time)]
    case (.review, _), (_, _):
      return []
    }
  }

  /// Why a shutter press now would be refused, or nil: decided before anything changes, so that the control
  /// socket's reply and the log say the same.
  var shutterRefusal: String? {
    switch (mode, activity) {
    case (.review, .idle):
      if !cameraAvailable { return "camera not available" }
      if storageFull { return "storage full" }
      if !offered.contains(.still) { return "stills are not available (no camera roll)" }
      if savesInFlight >= Self.maximumSavesInFlight { return "\(savesInFlight) stills still being saved" }
    case (.still, .idle):
      if !cameraAvailable { return "camera not available" }
      if !rollAvailable { return "storage not available" }
      if storageFull { return "storage full" }
      if !available.contains(.still) { return "stills are not available (no camera roll)" }
      if savesInFlight >= Self.maximumSavesInFlight { return "\(savesInFlight) stills still being saved" }
    case (.still, .capturing):
      return "the previous press is still waiting for its frame"
    case (.movie, .idle):
      if !cameraAvailable { return "camera not available" }
      if !rollAvailable { return "storage not available" }
      if storageFull { return "storage full" }
    default:
      break
    }
    return nil
  }

  /// A control request: what a button would do, and the answer the client prints.
  mutating func remote(_ request: ControlRequest, client: Int, at time: Instant) -> [Action] {
    switch request {
    case .shutter:
      let refusal = shutterRefusal
      return shutter(at: time) + [.reply(to: client, refusal.map(ControlReply.refused) ?? .ok)]
    case .mode(let wanted):
      let actions = switchMode(to: wanted, at: time)
      let reply = mode == wanted ? ControlReply.ok : .modeUnavailable(wanted, available: KioskMode.allCases.filter(available.contains))
      return actions + [.reply(to: client, reply)]
    case .zoom(let change):
      return [.zoom(change), .reply(to: client, .ok)]
    case .status(let json):
      return [.reply(to: client, .status(json: json))]
    }
  }

  mutating func cancel(at time: Instant) -> [Action] {
    switch activity {
    case .countingDown:
      activity = .idle
      return [.log("countdown cancelled")]
    case .checkingPhoto(let name, _):
      activity = .idle
      return [.discardStill(name), .log("retake: \(name) removed")]
    case .recording:
      // Cancel stops and keeps: a recording is never thrown away by a button.
      activity = .idle
      return [.stopMovie(at: time)]
    case .idle, .capturing:
      return []
    }
  }

  mutating func switchMode(to wanted: KioskMode, at time: Instant) -> [Action] {
    guard available.contains(wanted) else { return [.log("mode \(wanted.rawValue) not available")] }
    guard wanted != mode else { return [] }
    var actions: [Action] = []
    if case .recording = activity { actions.append(.stopMovie(at: time)) }
    activity = .idle
    mode = wanted
    if wanted == .review {
      review.selectNewest()
      reviewState = (playing: false, confirmingDelete: false, lastInput: time)
    }
    return actions + [.log("mode \(wanted.rawValue)")]
  }

  /// The next mode in still, movie, review order that is available now.
  func nextMode(after current: KioskMode) -> KioskMode {
    let order = KioskMode.allCases
    let start = order.firstIndex(of: current)!
    for step in 1...order.count {
      let candidate = order[(start + step) % order.count]
      if available.contains(candidate) { return candidate }
    }
    return current
  }

  /// A switch closes one stream and opens another: only between pictures, never under one being taken.
  mutating func nextCamera() -> [Action] {
    guard settings.cameras > 1 else { return [.log("camera button: only one camera is configured")] }
    guard mode != .review else { return [] }
    switch activity {
    case .idle:
      return [.nextCamera]
    case .checkingPhoto:
      activity = .idle  // like any other button: "use photo"; the switch waits for the next press
      return []
    case .recording:
      return [.log("camera button: stop the movie first")]
    case .countingDown, .capturing:
      return [.log("camera button: a still is being taken")]
    }
  }

  mutating func refuse(_ reason: String) -> [Action] {
    refusedPresses += 1
    return [.log("shutter refused: \(reason)")]
  }
}
