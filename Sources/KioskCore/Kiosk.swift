/// How the kiosk behaves; from the configuration.
public struct KioskSettings: Sendable, Equatable {
  public var gestures: GestureTiming
  /// Seconds counted down before a still; zero takes it at the press.
  public var countdown: Duration
  /// How long a photo just taken stays on screen for its check, "use photo / retake"; zero skips it.
  public var photoCheck: Duration
  /// A movie stops by itself after this long (videoMaximumDuration).
  public var movieMaximum: Duration
  /// How long a transient message ("Save failed") stays before the live picture returns.
  public var messageTime: Duration
  /// A flash lamp is fitted: lit this long before the still's frame (nil = none, zero shutter lag).
  public var flashLead: Duration?
  /// The flash lamp is also lit while a movie records.
  public var flashForMovies: Bool
  /// How many cameras the `camera` button cycles through; with one, the button does nothing.
  public var cameras: Int
  /// Review mode with no button pressed (and no movie playing) for this long goes back to the live picture.
  public var browseIdle: Duration
  /// Whether review mode may delete (long press on cancel, then shutter to confirm).
  public var allowDelete: Bool

  public init(
    gestures: GestureTiming, countdown: Duration = .zero, photoCheck: Duration = .zero,
    movieMaximum: Duration = .seconds(600), messageTime: Duration = .seconds(3), flashLead: Duration? = nil,
    flashForMovies: Bool = false, cameras: Int = 1, browseIdle: Duration = .seconds(60), allowDelete: Bool = false
  ) {
    self.cameras = cameras
    self.flashLead = flashLead
    self.flashForMovies = flashForMovies
    self.gestures = gestures
    self.countdown = countdown
    self.photoCheck = photoCheck
    self.movieMaximum = movieMaximum
    self.messageTime = messageTime
    self.browseIdle = browseIdle
    self.allowDelete = allowDelete
  }
}

/// The kiosk's behaviour, pure: an event in, actions out, and the next instant it wants a tick.
///
/// Busy rule: a still press is taken at once (its frame is the one nearest the press) while fewer than
/// `maximumSavesInFlight` stills wait for the writer; a press beyond that is refused, logged and counted,
/// never queued silently and never doubled.
public struct Kiosk: Sendable {
  enum Activity: Sendable, Equatable {
    case idle
    case countingDown(until: Instant)
    /// A shutter press waiting for the frame nearest to it.
    case capturing(pressedAt: Instant)
    case checkingPhoto(String, until: Instant)
    case recording(since: Instant, until: Instant)
  }

  public static let maximumSavesInFlight = 4

  public let settings: KioskSettings
  public private(set) var mode = KioskMode.still
  /// What the service can offer; review also needs something in the roll to show.
  private var offered: Set<KioskMode> = [.still]
  public var available: Set<KioskMode> {
    browser.isEmpty ? offered.subtracting([.review]) : offered
  }
  /// The roll, newest first, and the item review mode shows.
  public private(set) var browser = RollBrowser()
  /// Review mode's state: a movie playing, a delete being confirmed, and the last press (for the idle timeout).
  private var browse = (playing: false, confirmingDelete: false, lastInput: Instant(nanoseconds: 0))
  public private(set) var screen = Screen.live(.still)
  public private(set) var cameraAvailable = true
  /// Free space is below the reserve: stills and movies are refused before the disk fills, so the last
  /// pictures and the counter always have room.
  public private(set) var storageFull = false
  /// The roll's storage is there (mounted, writable); without it nothing can be saved, and the screen says so.
  public private(set) var rollAvailable = true
  public private(set) var refusedPresses = 0
  private(set) var activity = Activity.idle
  private var gestures: GestureEngine
  /// The frames the service keeps copies of, oldest first: a press decided late (bounce filtering takes
  /// a few milliseconds) may be nearest a frame that has already arrived.
  private var recentFrames: [FrameInfo] = []
  /// How many frames the service's ring keeps; the kiosk chooses only among those.
  public static let recentFrameCount = 4
  private var savesInFlight = 0
  /// A transient message and when it goes.
  private var message: (text: String, until: Instant)?
  private var lights: [Output: Bool] = [:]
  /// The latest instant the kiosk has seen, for countdown digits.
  private var now = Instant(nanoseconds: 0)

  public init(settings: KioskSettings) {
    self.settings = settings
    gestures = GestureEngine(timing: settings.gestures)
  }

  /// When the kiosk next needs a `.tick`, if nothing else happens first.
  public var nextDeadline: Instant? {
    var deadlines = [gestures.nextDeadline, message?.until].compactMap { $0 }
    switch activity {
    case .countingDown(let until):
      // Tick at each whole second left, so the digits on screen change.
      let left = Self.secondsLeft(until: until, now: now)
      deadlines.append(until + .seconds(-(left - 1)))
    case .checkingPhoto(_, let until), .recording(_, let until):
      deadlines.append(until)
    case .idle, .capturing:
      break
    }
    if let idle = browseIdleDeadline { deadlines.append(idle) }
    return deadlines.min()
  }

  public mutating func handle(_ event: Event) -> [Action] {
    now = max(now, event.time)
    // Any event carries the clock: a button that settled since the last one is decided first, so a press
    // is never late for the frame that follows it.
    var actions: [Action] = []
    if case .edge = event {} else { actions = gestures.tick(event.time).flatMap { gesture($0) } }
    switch event {
    case .edge(let role, let edge, let time):
      actions += gestures.edge(role, edge, at: time).flatMap { gesture($0) }
    case .remote(let request, let client, let time):
      actions += remote(request, client: client, at: time)
    case .tick(let now):
      actions += timeout(now)
    case .frame(let frame):
      actions += frameArrived(frame)
    case .stillSaved(let name, let time):
      savesInFlight -= 1
      if settings.photoCheck > .zero, activity == .idle, mode == .still {
        activity = .checkingPhoto(name, until: time + settings.photoCheck)
      }
    case .saveFailed(let reason, let time):
      savesInFlight -= 1
      actions += [.log("save failed: \(reason)")]
      message = ("Save failed", time + settings.messageTime)
    case .movieSaved(let name, _):
      actions += [.log("movie \(name) saved")]
    case .movieFailed(let reason, let time):
      actions += [.log("movie failed: \(reason)")]
      message = ("Save failed", time + settings.messageTime)
      // A recorder that could not start or could not write leaves nothing recording: the tally must not lie,
      // and what it wrote up to the failure is finished and published now, not at a press that may never come.
      if isRecording {
        activity = .idle
        actions.append(.stopMovie(at: time))
      }
    case .available(let modes, let time):
      offered = modes
      if !available.contains(mode), available.contains(.still) { actions += switchMode(to: .still, at: time) }
    case .roll(let entries, let time):
      browser.update(entries)
      if mode == .review, browser.isEmpty { actions += [.log("review: the roll is empty")] + leaveReview(at: time) }
    case .buttonsLost(let roles, _):
      for role in roles { gestures.forget(role) }
    case .playbackEnded:
      browse.playing = false
      browse.lastInput = max(browse.lastInput, event.time)
    case .cameraLost(let reason, let time):
      cameraAvailable = false
      recentFrames.removeAll()
      actions += [.log("camera lost: \(reason)")]
      if case .recording = activity { actions.append(.stopMovie(at: time)) }
      if case .capturing = activity { actions.append(.log("press dropped: the camera went away")) }
      activity = .idle
    case .cameraBack:
      cameraAvailable = true
      actions += [.log("camera back")]
    case .storage(let full, let detail, let time):
      if full != storageFull {
        storageFull = full
        actions += [.log(full ? "storage full: \(detail)" : "storage available: \(detail)")]
        // A recording stops at the reserve, while there is still room to finish it into a playable file.
        if full, case .recording = activity {
          activity = .idle
          actions += [.stopMovie(at: time), .log("movie stopped: storage full")]
        }
      }
    case .rollStorage(let present, let detail, let time):
      if present != rollAvailable {
        rollAvailable = present
        actions += [.log(present ? "storage back: \(detail)" : "storage lost: \(detail)")]
        // Nothing more can be written: what the recorder has written is finished while it still can be.
        if !present, case .recording = activity {
          activity = .idle
          actions += [.stopMovie(at: time), .log("movie stopped: storage lost")]
        }
      }
    }
    return actions + refresh()
  }

  // MARK: Buttons

  private mutating func gesture(_ gesture: Gesture) -> [Action] {
    // One line per accepted press: what a technician needs to tell a ghost press from a real one.
    if case .down(let role, let time) = gesture {
      return [.log("button \(role.rawValue) down at \(time)")] + acted(on: gesture)
    }
    return acted(on: gesture)
  }

  private mutating func acted(on gesture: Gesture) -> [Action] {
    if mode == .review, let actions = browsing(gesture) { return actions }
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
  private mutating func browsing(_ gesture: Gesture) -> [Action]? {
    switch gesture {
    case .down(let role, let time), .up(let role, let time):
      guard role != .mode else { return nil }
      browse.lastInput = max(browse.lastInput, time)
      return []
    case .shortPress(.mode, _), .longPress(.mode, _), .chord:
      return nil
    default:
      break
    }
    if case .longPress(_, let time) = gesture { browse.lastInput = max(browse.lastInput, time) }
    guard let current = browser.current else { return [] }
    if browse.confirmingDelete {
      browse.confirmingDelete = false
      guard case .shortPress(.shutter, _) = gesture else { return [.log("delete of \(current.path) cancelled")] }
      browser.remove(current.path)
      var actions: [Action] = [.deleteItem(current.path), .log("deleted \(current.path)")]
      if browser.isEmpty { actions += leaveReview(at: now) }
      return actions
    }
    switch gesture {
    case .shortPress(.shutter, _):
      browse.playing = false
      browser.older()
    case .longPress(.shutter, _):
      browse.playing = false
      browser.newer()
    case .shortPress(.cancel, _):
      guard current.kind == .movie else { return [] }
      browse.playing.toggle()
    case .longPress(.cancel, _):
      guard settings.allowDelete else { return [.log("delete from the kiosk is off ([review] allow-delete)")] }
      browse.playing = false
      browse.confirmingDelete = true
    default:
      break
    }
    return []
  }

  /// Back to the live picture: the idle timeout, or nothing left to show.
  private mutating func leaveReview(at time: Instant) -> [Action] {
    guard let home = [KioskMode.still, .movie].first(where: { available.contains($0) }) else {
      browse.lastInput = time  // nowhere to go: wait another idle period rather than tick at once
      return []
    }
    return switchMode(to: home, at: time)
  }

  private var browseIdleDeadline: Instant? {
    guard mode == .review, !browse.playing else { return nil }
    return browse.lastInput + settings.browseIdle
  }

  private mutating func shutter(at time: Instant) -> [Action] {
    if let reason = shutterRefusal { return refuse(reason) }
    switch (mode, activity) {
    case (_, .checkingPhoto):
      activity = .idle  // "use photo", and this press is not also a new photo
      return []
    case (.still, .countingDown):
      activity = .idle
      return [.log("countdown cancelled")]
    case (.review, .idle):
      // Only the control socket gets here (the shutter button browses): a still taken while someone reviews
      // joins the list, and the screen stays on the item being looked at.
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
  private var shutterRefusal: String? {
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
  private mutating func remote(_ request: ControlRequest, client: Int, at time: Instant) -> [Action] {
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

  private mutating func cancel(at time: Instant) -> [Action] {
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

  private mutating func switchMode(to wanted: KioskMode, at time: Instant) -> [Action] {
    guard available.contains(wanted) else { return [.log("mode \(wanted.rawValue) not available")] }
    guard wanted != mode else { return [] }
    var actions: [Action] = []
    if case .recording = activity { actions.append(.stopMovie(at: time)) }
    activity = .idle
    mode = wanted
    if wanted == .review {
      browser.selectNewest()
      browse = (playing: false, confirmingDelete: false, lastInput: time)
    }
    return actions + [.log("mode \(wanted.rawValue)")]
  }

  /// The next mode in still, movie, review order that is available now.
  private func nextMode(after current: KioskMode) -> KioskMode {
    let order = KioskMode.allCases
    let start = order.firstIndex(of: current)!
    for step in 1...order.count {
      let candidate = order[(start + step) % order.count]
      if available.contains(candidate) { return candidate }
    }
    return current
  }

  /// A switch closes one stream and opens another: only between pictures, never under one being taken.
  private mutating func nextCamera() -> [Action] {
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

  private mutating func refuse(_ reason: String) -> [Action] {
    refusedPresses += 1
    return [.log("shutter refused: \(reason)")]
  }

  // MARK: Frames and time

  private mutating func frameArrived(_ frame: FrameInfo) -> [Action] {
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
  private mutating func capture(pressedAt press: Instant) -> [Action] {
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

  private mutating func timeout(_ now: Instant) -> [Action] {
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
    if let idle = browseIdleDeadline, now >= idle {
      actions += [.log("review idle for \(settings.browseIdle): back to the live picture")] + leaveReview(at: idle)
    }
    return actions
  }

  private mutating func shutterAfterCountdown(at time: Instant) -> [Action] {
    guard cameraAvailable else { return refuse("camera not available") }
    return capture(pressedAt: time)
  }

  static func secondsLeft(until: Instant, now: Instant) -> Int {
    let remaining = (until - now).nanosecondsClamped
    return Int(max(1, (remaining + 999_999_999) / 1_000_000_000))
  }

  // MARK: What the screen and lamps show

  private var isRecording: Bool {
    if case .recording = activity { true } else { false }
  }

  /// Derives the screen and the lamps from the state, and says what changed.
  private mutating func refresh() -> [Action] {
    let newScreen: Screen
    if !cameraAvailable, mode != .review {
      newScreen = .message("Camera not available")
    } else if !rollAvailable {
      newScreen = .message("Storage not available")
    } else if storageFull, mode != .review, !isRecording {
      newScreen = .message("Storage full")
    } else if let message {
      newScreen = .message(message.text)
    } else {
      switch activity {
      case .countingDown(let until):
        newScreen = .countdown(secondsLeft: Self.secondsLeft(until: until, now: now))
      case .checkingPhoto(let name, _): newScreen = .checkingPhoto(name)
      case .recording(let since, let until): newScreen = .recording(since: since, until: until)
      case .idle, .capturing:
        if mode == .review, let item = browser.current {
          newScreen = .browsing(
            BrowseView(
              item: item, position: browser.position, count: browser.items.count, playing: browse.playing,
              confirmingDelete: browse.confirmingDelete))
        } else {
          newScreen = .live(mode)
        }
      }
    }
    var actions: [Action] = []
    if newScreen != screen {
      screen = newScreen
      actions.append(.show(newScreen))
    }
    var capturing = false
    if case .capturing = activity { capturing = true }
    let wanted: [Output: Bool] = [
      .flash: settings.flashLead != nil && (capturing || (isRecording && settings.flashForMovies)),
      .tally: isRecording,
      .ready: cameraAvailable && rollAvailable && !storageFull && available.contains(mode) && mode != .review && activity == .idle
        && savesInFlight < Self.maximumSavesInFlight,
    ]
    for output in Output.allCases where lights[output] != wanted[output] {
      lights[output] = wanted[output]
      actions.append(.light(output, wanted[output]!))
    }
    return actions
  }
}
