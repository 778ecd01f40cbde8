/// The hardware buttons by what they mean to the kiosk.
public enum ButtonRole: String, Sendable, CaseIterable {
  case shutter, mode
}

public enum ButtonEdge: Sendable, Equatable {
  /// The button went down (the line became active).
  case pressed
  case released
}

/// What the screen should say, in plain words.
public enum Screen: Sendable, Equatable {
  case live
  case message(String)
}

/// Everything that can happen to the kiosk, each with its time when time matters.
public enum Event: Sendable, Equatable {
  case button(ButtonRole, ButtonEdge, at: Instant)
  /// A frame arrived from the camera and is in the recent-frames ring.
  case frame(FrameInfo)
  case stillSaved(name: String)
  case saveFailed(reason: String)
  case cameraLost(reason: String)
  case cameraBack
  /// Free space on the roll went below the configured reserve (`full`), or came back above it.
  case storage(full: Bool, detail: String)
}

/// What the kiosk asks the devices to do.
public enum Action: Sendable, Equatable {
  /// Encode and publish the ring's frame with this sequence number as a still.
  case saveStill(FrameInfo, pressedAt: Instant)
  case show(Screen)
  case log(String)
}

/// The kiosk's behaviour, pure: an event in, actions out. Time comes with the events.
public struct Kiosk: Sendable {
  public private(set) var screen = Screen.live
  /// A shutter press waiting for the frame nearest to it.
  private var pendingPress: Instant?
  /// The frames the service's ring holds copies of, oldest first.
  private var recentFrames: [FrameInfo] = []
  private var lastAccepted: [ButtonRole: Instant] = [:]
  private var savesInFlight = 0
  private var cameraAvailable = true
  private var storageFull = false
  private let debounce: Duration
  /// Stills that may wait for the writer; a press beyond this is refused, and says so.
  public static let maximumSavesInFlight = 4
  /// Frames the service keeps copies of, and so the frames a press can still be matched with.
  public static let recentFrameCount = 4

  public init(debounce: Duration) { self.debounce = debounce }

  public mutating func handle(_ event: Event) -> [Action] {
    switch event {
    case .button(let role, .pressed, let time):
      // A bounce is an edge that follows the last accepted one too closely; it never takes a second photo.
      if let last = lastAccepted[role], time - last < debounce { return [] }
      lastAccepted[role] = time
      return pressed(role, at: time)
    case .button:
      return []
    case .frame(let frame):
      recentFrames.append(frame)
      if recentFrames.count > Self.recentFrameCount { recentFrames.removeFirst() }
      guard let press = pendingPress, frame.timestamp >= press else { return [] }
      pendingPress = nil
      return [save(nearest: press)]
    case .stillSaved:
      savesInFlight -= 1
      return []
    case .saveFailed(let reason):
      savesInFlight -= 1
      screen = .message("Save failed")
      return [.show(screen), .log("save failed: \(reason)")]
    case .cameraLost(let reason):
      pendingPress = nil
      recentFrames.removeAll()
      cameraAvailable = false
      screen = .message("Camera not available")
      return [.show(screen), .log("camera lost: \(reason)")]
    case .cameraBack:
      cameraAvailable = true
      screen = storageFull ? .message("Storage full") : .live
      return [.show(screen)]
    case .storage(let full, let detail):
      guard full != storageFull else { return [] }
      storageFull = full
      if full {
        // The camera's own trouble is the more urgent message; storage full shows once it is back.
        guard cameraAvailable else { return [.log("storage full: \(detail)")] }
        screen = .message("Storage full")
        return [.show(screen), .log("storage full: \(detail)")]
      }
      guard screen == .message("Storage full") else { return [.log("storage available: \(detail)")] }
      screen = .live
      return [.show(screen), .log("storage available: \(detail)")]
    }
  }

  private mutating func pressed(_ role: ButtonRole, at time: Instant) -> [Action] {
    guard role == .shutter else { return [] }
    guard cameraAvailable else { return [.log("shutter refused: camera not available")] }
    // Refused before the disk fills, so the last pictures and the counter always have room.
    guard !storageFull else { return [.log("shutter refused: storage full")] }
    guard pendingPress == nil, savesInFlight < Self.maximumSavesInFlight else {
      return [.log("shutter refused: \(savesInFlight) stills still being saved")]
    }
    var actions: [Action] = []
    // A failed save is on screen until the next press, which is the user trying again.
    if screen != .live {
      screen = .live
      actions.append(.show(.live))
    }
    // The edge may reach the loop after frames taken later than it (the loop was busy, the kernel queued
    // the event): then the moment is already among the recent frames, and waiting would only take a later one.
    if let newest = recentFrames.last, newest.timestamp >= time {
      actions.append(save(nearest: time))
    } else {
      pendingPress = time
    }
    return actions
  }

  /// Zero shutter lag: the recent frame taken nearest the press, before or after it (a tie goes to the later).
  private mutating func save(nearest press: Instant) -> Action {
    var chosen = recentFrames[recentFrames.count - 1]
    for frame in recentFrames.reversed() where distance(frame, press) < distance(chosen, press) { chosen = frame }
    savesInFlight += 1
    return .saveStill(chosen, pressedAt: press)
  }

  private func distance(_ frame: FrameInfo, _ press: Instant) -> Int64 {
    abs((frame.timestamp - press).nanosecondsClamped)
  }
}
