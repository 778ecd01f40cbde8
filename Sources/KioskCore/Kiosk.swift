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
  public internal(set) var mode = KioskMode.still
  /// What the service can offer; review also needs something in the roll to show.
  var offered: Set<KioskMode> = [.still]
  public var available: Set<KioskMode> {
    review.isEmpty ? offered.subtracting([.review]) : offered
  }
  /// The roll, newest first, and the item review mode shows.
  public internal(set) var review = RollReview()
  /// Review mode's state: a movie playing, a delete being confirmed, and the last press (for the idle timeout).
  var reviewState = (playing: false, confirmingDelete: false, lastInput: Instant(nanoseconds: 0))
  public internal(set) var screen = Screen.live(.still)
  public internal(set) var cameraAvailable = true
  /// Free space is below the reserve: stills and movies are refused before the disk fills, so the last
  /// pictures and the counter always have room.
  public internal(set) var storageFull = false
  /// The roll's storage is there (mounted, writable) and has not failed a write since it was put in; without
  /// it nothing can be saved, and the screen says so (Kiosk+Storage.swift).
  public internal(set) var rollAvailable = true
  /// The storage check's last word on the roll: mounted as configured, writable, its folder there.
  var rollPresent = true
  /// A write the card failed: it is not written again until it has been seen gone or mounted anew.
  public internal(set) var cardFailure: CardFailure?
  public internal(set) var refusedPresses = 0
  var activity = Activity.idle
  var gestures: GestureEngine
  /// The frames the service keeps copies of, oldest first: a press decided late (bounce filtering takes
  /// a few milliseconds) may be nearest a frame that has already arrived.
  var recentFrames: [FrameInfo] = []
  /// How many frames the service's ring keeps; the kiosk chooses only among those.
  public static let recentFrameCount = 4
  var savesInFlight = 0
  /// A transient message and when it goes.
  var message: (text: String, until: Instant)?
  var lights: [Output: Bool] = [:]
  /// The latest instant the kiosk has seen, for countdown digits.
  var now = Instant(nanoseconds: 0)

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
    if let idle = reviewIdleDeadline { deadlines.append(idle) }
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
    case .movieFileFull(let time):
      // Stopped as at the maximum duration: the movie is whole, and the next press starts another.
      if isRecording {
        activity = .idle
        actions += [.stopMovie(at: time), .log("movie stopped at the largest file the roll's file system keeps")]
      }
    case .available(let modes, let time):
      offered = modes
      if !available.contains(mode), available.contains(.still) { actions += switchMode(to: .still, at: time) }
    case .roll(let entries, let time):
      review.update(entries)
      if mode == .review, review.isEmpty { actions += [.log("review: the roll is empty")] + leaveReview(at: time) }
    case .buttonsLost(let roles, _):
      for role in roles { gestures.forget(role) }
    case .playbackEnded:
      reviewState.playing = false
      reviewState.lastInput = max(reviewState.lastInput, event.time)
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
      actions += storageSpace(full: full, detail: detail, at: time)
    case .rollStorage(let present, let mounts, let detail, let time):
      actions += rollChecked(present: present, mounts: mounts, detail: detail, at: time)
    case .storageFailed(let fault, let write, let detail, let mounts, let time):
      actions += cardFailed(CardFailure(fault: fault, write: write, detail: detail, mounts: mounts), at: time)
    }
    return actions + refresh()
  }

  // MARK: What the screen and lamps show

  var isRecording: Bool {
    if case .recording = activity { true } else { false }
  }

  /// Derives the screen and the lamps from the state, and says what changed.
  private mutating func refresh() -> [Action] {
    let newScreen: Screen
    if !cameraAvailable, mode != .review {
      newScreen = .message("Camera not available")
    } else if let message {
      // "Save failed" first, for its time, even when the storage that failed is then gone or full: the
      // picture is lost, and the person who pressed must be told so before being told why.
      newScreen = .message(message.text)
    } else if !rollAvailable {
      newScreen = .message("Storage not available")
    } else if storageFull, mode != .review, !isRecording {
      newScreen = .message("Storage full")
    } else {
      switch activity {
      case .countingDown(let until):
        newScreen = .countdown(secondsLeft: Self.secondsLeft(until: until, now: now))
      case .checkingPhoto(let name, _): newScreen = .checkingPhoto(name)
      case .recording(let since, let until): newScreen = .recording(since: since, until: until)
      case .idle, .capturing:
        if mode == .review, let item = review.current {
          newScreen = .reviewing(
            ReviewView(
              item: item, position: review.position, count: review.items.count, playing: reviewState.playing,
              confirmingDelete: reviewState.confirmingDelete))
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
