/// One assignment of systemd's sd_notify protocol (`sd_notify(3)`): the datagram is these lines joined by "\n".
public enum NotifyMessage: Equatable, Sendable {
  /// `READY=1`: start-up is finished; `systemctl start` returns and `Type=notify` units count as started.
  case ready
  /// `STOPPING=1`: the service is shutting down of its own accord (a clean stop, not a crash).
  case stopping
  /// `WATCHDOG=1`: the service is alive; with `WatchdogSec=` set, a missing one within the interval kills it.
  case watchdog
  /// `STATUS=...`: one line that `systemctl status` shows.
  case status(String)

  public var line: String {
    switch self {
    case .ready: "READY=1"
    case .stopping: "STOPPING=1"
    case .watchdog: "WATCHDOG=1"
    // A newline would start a new assignment that systemd would then parse: flatten it.
    case .status(let text): "STATUS=" + String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
  }

  /// The datagram for several assignments sent together (systemd reads them as one state change).
  public static func datagram(_ messages: [NotifyMessage]) -> String {
    messages.map(\.line).joined(separator: "\n")
  }
}

/// How often to pet the supervisor's watchdog, from `$WATCHDOG_USEC` and `$WATCHDOG_PID` (as
/// `sd_watchdog_enabled(3)` reads them): nil when there is no watchdog for this process.
/// Petting at half the interval, as systemd recommends, leaves a whole half for a late loop turn.
public func watchdogPetInterval(usec: String?, pid: String?, ownPID: Int) -> Duration? {
  guard let usec, let microseconds = Int64(usec), microseconds > 0 else { return nil }
  // WATCHDOG_PID names the process the watchdog is meant for; a child that inherited the variable is not it.
  if let pid, !pid.isEmpty, Int(pid) != ownPID { return nil }
  return .microseconds(microseconds / 2)
}

/// When the service tells its supervisor that it is ready and alive. Pure: the service feeds it what happened.
///
/// The rule (the watchdog restarts what is stuck, never what is merely missing):
/// - READY once the first frame is on the display; headless, or when a message screen such as "Storage full"
///   hides the preview, once the first good frame arrives. A camera that is
///   absent at start or lost before its first frame is also READY: "Camera not available" is a screen
///   state the kiosk shows and retries by itself, and a start timeout would turn it into a restart loop.
/// - WATCHDOG at each pet tick only if a good frame arrived since the last tick, or the camera is known to
///   be lost (the loop is alive and retrying it). A camera that is open and streaming but delivers nothing,
///   a stall, gets no pet, so the supervisor restarts the service after its watchdog interval.
public struct Supervision: Sendable {
  public private(set) var isReady = false
  private var framesSinceTick = 0
  private var cameraLost = false
  private var stallReported = false

  public init() {}

  /// A good frame arrived; `previewShown` once any frame has reached the display, `previewExpected` when
  /// this frame should have (a display, a format it can preview, and a live screen).
  public mutating func frameArrived(previewShown: Bool, previewExpected: Bool) -> [NotifyMessage] {
    framesSinceTick += 1
    let recovered = cameraLost || stallReported
    cameraLost = false
    stallReported = false
    if !isReady, previewShown || !previewExpected {
      isReady = true
      return [.ready, .status(previewExpected ? "streaming, preview on the display" : "streaming")]
    }
    return recovered && isReady ? [.status("streaming")] : []
  }

  /// The loop runs with no camera: lost while running, or absent at start.
  public mutating func cameraUnavailable(_ reason: String) -> [NotifyMessage] {
    cameraLost = true
    let status = NotifyMessage.status("Camera not available: \(reason)")
    if isReady { return [status] }
    isReady = true
    return [.ready, status]
  }

  /// The pet timer fired.
  public mutating func watchdogTick() -> [NotifyMessage] {
    if framesSinceTick > 0 || cameraLost {
      framesSinceTick = 0
      return [.watchdog]
    }
    if stallReported { return [] }
    stallReported = true
    return [.status("camera stalled: no frame since the last watchdog period, watchdog not petted")]
  }

  public func stopping() -> [NotifyMessage] { [.stopping, .status("stopping")] }
}
