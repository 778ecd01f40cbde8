import Display
import FontFile
import Imaging
import KioskCore
import LinuxIO

/// The display: the card opened at start, let go when it goes away (ENODEV, or its connector unplugged) so
/// that the service captures without it, and taken back when it returns, with the overlay laid out for
/// whatever mode the display that comes back prefers. What goes on it is the screen sink's alone: it lends
/// the buffers and flips them through `Scanout`.
final class DisplaySession: DisplayDriver {
  private let config: Config
  private let loop: EventLoop
  private let post: (ServiceEvent) -> Void
  private let wanted: Bool
  /// How many buffers a display is opened with: enough for the preview's workers to draw off the loop.
  let buffers: Int
  private(set) var card: KMSDisplay?
  /// Nil when the font could not be read: messages are then plain colour, and the log says why once.
  private(set) var overlay: Overlay?
  /// Flips completed on every card this session held: the preview's "frames shown".
  private(set) var flipsShown = 0
  private var connectorTimer: LoopTimer?
  private var retryTimer: LoopTimer?
  /// What the last look without a display found, so that only a change to connected opens it.
  private var connectorWasConnected = false

  init(
    config: Config, card: KMSDisplay?, overlay: Overlay?, wanted: Bool, buffers: Int, loop: EventLoop,
    post: @escaping (ServiceEvent) -> Void
  ) {
    self.buffers = buffers
    self.config = config
    self.card = card
    self.overlay = overlay
    self.wanted = wanted
    self.loop = loop
    self.post = post
  }

  func start() throws(SystemCallError) {
    if let card { try watch(card) }
    connectorTimer = try LoopTimer(loop: loop) { [unowned self] in
      checkConnector()
      try? connectorTimer?.arm(after: Intervals.connectorCheck.timerNanoseconds)
    }
    try connectorTimer?.arm(after: Intervals.connectorCheck.timerNanoseconds)
    retryTimer = try LoopTimer(loop: loop) { [unowned self] in
      retry()
      try? retryTimer?.arm(after: Intervals.displayRetry.timerNanoseconds)
    }
    try retryTimer?.arm(after: Intervals.displayRetry.timerNanoseconds)
  }

  private func watch(_ card: KMSDisplay) throws(SystemCallError) {
    try loop.watch(card.descriptor) { [unowned self] _ in flipped() }
  }

  private func flipped() {
    guard let card else { return }
    let before = card.flipsCompleted
    card.handleEvents()
    flipsShown += card.flipsCompleted - before
    post(.flipDone)
  }

  /// Queues a flip to a buffer drawn off the loop; false when it was not queued (a flip pending, a buffer of
  /// a display since let go, or the display failed: logged, and a display that went away is let go); the
  /// buffer is then still lent. The screen sink is the only caller (`Scanout`).
  func flip(_ buffer: DisplayBuffer) -> Bool {
    onCard { card throws(DisplayError) in card.buffers.owns(buffer) ? try card.flip(buffer) : false }
  }

  private func onCard(_ body: (KMSDisplay) throws(DisplayError) -> Bool) -> Bool {
    guard let card else { return false }
    do {
      return try body(card)
    } catch {
      guard error.isGone else {
        log("display: \(error)")
        return false
      }
      letGo("\(error)")
      return false
    }
  }

  var flipPending: Bool { card?.flipPending ?? false }

  /// The card is closed, which also gives up DRM master, and the service goes on capturing.
  private func letGo(_ reason: String) {
    guard let lost = card else { return }
    loop.unwatch(lost.descriptor)
    card = nil
    log("display lost: \(reason); capturing without it")
    post(.displayChanged)
    post(.capability(.fail(.display, reason)))
  }

  /// Connector hot-plug by its status rather than by uevents: a status read without probing is one cheap
  /// ioctl, works for drivers that send no hot-plug uevent (bochs-drm on the virtual board), and needs no
  /// netlink socket, which the unit's `RestrictAddressFamilies=AF_UNIX` keeps out.
  /// Without a display, only a connector that became connected is opened at once (opening probes, which on
  /// real hardware reads EDID); one that stays connected but cannot be opened is left to the 5 s retry.
  private func checkConnector() {
    if let card {
      if !card.connectorConnected { letGo("\(card.path): \(card.connectorName) disconnected") }
      return
    }
    guard wanted else { return }
    let connected = DisplayProbe.connectedWithoutProbing(config.display.device)
    defer { connectorWasConnected = connected }
    if connected, !connectorWasConnected { retry() }
  }

  func nodeAppeared(name: String) { retry() }

  /// Opens the configured display again, if the configuration wants one and it is not there.
  private func retry() {
    // `device = none` makes the display unused (not fitted), so `wanted` says it all.
    guard card == nil, wanted else { return }
    guard let opened = try? KMSDisplay(device: config.display.device, buffers: buffers) else { return }
    do {
      try watch(opened)
    } catch {
      return
    }
    card = opened
    // The display that comes back may be another one, with another mode: the overlay is laid out for its size.
    if let painter = overlay?.painter {
      overlay = Overlay(painter: painter, width: opened.width, height: opened.height)
    } else if let font = try? FontFile.load(config.display.font) {
      overlay = Overlay(painter: TextPainter(font: font), width: opened.width, height: opened.height)
    }
    post(.displayChanged)
    post(.capability(CapabilityProbe.opened(.success(opened))))
  }
}
