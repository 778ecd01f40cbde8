import Capture
import KioskCore
import LinuxIO
import Preview

/// The one way into the core. Events queue up and are handled one at a time, in the order they were posted;
/// each goes to the kiosk (a probe first to the gate), and every action the kiosk returns goes to exactly
/// one driver. A driver never calls the core: what it has to say it posts, and that is handled after all the
/// actions of the event being handled, whoever posted it.
final class Dispatcher {
  private(set) var kiosk: Kiosk
  private(set) var capabilities: CapabilityMonitor
  /// The roll was opened at start; movies and review need it besides their capabilities.
  let rollOpen: Bool
  private var queue: [ServiceEvent] = []
  private var draining = false
  /// Set once, right after the drivers are made (they are made with `post`).
  var drivers: Drivers!
  private let clock: () -> Instant
  /// When the kiosk next wants a tick (nil: never); the service arms its timer.
  private let deadlineChanged: (Instant?) -> Void
  /// `kioskcam status`, which only the service can put together.
  var statusReport: (_ json: Bool) -> String = { _ in "" }

  init(
    kiosk: Kiosk, capabilities: CapabilityMonitor, rollOpen: Bool, clock: @escaping () -> Instant,
    deadlineChanged: @escaping (Instant?) -> Void
  ) {
    self.kiosk = kiosk
    self.capabilities = capabilities
    self.rollOpen = rollOpen
    self.clock = clock
    self.deadlineChanged = deadlineChanged
  }

  var availableModes: Set<KioskMode> { capabilities.verdict.kioskModes(rollOpen: rollOpen) }

  /// Queues `event`; handles the queue unless it is already being handled further up this stack.
  func post(_ event: ServiceEvent) {
    queue.append(event)
    guard !draining else { return }
    draining = true
    defer { draining = false }
    var next = 0
    while next < queue.count {
      let event = queue[next]
      next += 1
      handle(event)
    }
    queue.removeAll(keepingCapacity: true)
  }

  private func handle(_ event: ServiceEvent) {
    switch event {
    case .kiosk(let kioskEvent):
      if case .edge = kioskEvent { handleEdge(kioskEvent) } else { handleAfterEdges(kioskEvent) }
    case .capability(let result):
      for change in capabilities.update(result) { log(change.description) }
      handleAfterEdges(.available(availableModes, at: clock()))
    case .cameraFrame(let frame):
      drivers.movie.paceFrame(frame, previewShown: drivers.screen.framesShown, previewLive: drivers.screen.expectsFrames)
      handleAfterEdges(.frame(frame))
      drivers.screen.showFrame(frame)
      drivers.supervisor.frameArrived(
        previewShown: drivers.screen.framesShown > 0, previewExpected: drivers.screen.expectsFrames)
    case .streamChanged:
      drivers.screen.streamChanged()
    case .cameraUnavailable(let reason):
      drivers.supervisor.cameraUnavailable(reason)
    case .displayChanged:
      drivers.screen.displayChanged()
      drivers.player.displayChanged()
    case .flipDone:
      drivers.screen.flipDone()
    case .previewDrawn(let outcome):
      drivers.screen.drawn(outcome)
    case .nodeAppeared(let directory, let name):
      if directory == "/dev/dri", name.hasPrefix("card") {
        drivers.display.nodeAppeared(name: name)
      } else if directory == "/dev", name.hasPrefix("gpiochip") {
        drivers.panel.nodeAppeared(name: name)
      } else {
        drivers.camera.nodeAppeared(directory: directory, name: name)
      }
    case .stillSaved(let item, let frame, let pressedAt):
      drivers.stills.saved(item, frame, pressedAt: pressedAt)
      drivers.storage.stillPublished(item.relativePath)
      handleAfterEdges(.stillSaved(name: item.relativePath, at: clock()))
      drivers.player.relist()
      checkStorage()
    case .stillFailed(let reason):
      drivers.stills.failed()
      handleAfterEdges(.saveFailed(reason: reason, at: clock()))
      checkStorage()
    case .stillDecoded(let name, let picture):
      drivers.screen.keepPhotoCheck(name: name, picture: picture)
    case .movieSaved(let movie):
      drivers.movie.saved(movie)
      handleAfterEdges(.movieSaved(name: movie.item.relativePath, at: clock()))
      drivers.player.relist()
      checkStorage()
    case .movieFailed(let reason):
      drivers.movie.failed()
      handleAfterEdges(.movieFailed(reason: reason, at: clock()))
      checkStorage()
    case .rollRecovered:
      drivers.player.relist()
      checkStorage()
    case .storageFailed(let fault, let write, let detail):
      handleAfterEdges(.storageFailed(fault, during: write, detail: detail, mounts: drivers.storage.mounts, at: clock()))
    case .viewed(let item):
      drivers.player.viewed(item)
    case .viewFailed(let path, let reason):
      drivers.player.viewFailed(path: path, reason: reason)
    case .playbackFrame(let frame):
      drivers.player.playbackFrame(frame)
    case .rollListed(let entries):
      drivers.player.listed(entries)
    case .rollChanged(let deleted):
      drivers.player.deleted(deleted)
    }
  }

  /// Any event but an edge carries the clock: the edges the kernel already has come first, in their own
  /// order, so that the clock never overtakes them.
  private func handleAfterEdges(_ event: Event) {
    for edge in drivers.panel.readPending() { handleEdge(edge) }
    process(event)
  }

  /// An edge, whether the loop read it or it was handed over before another event. A press checks the
  /// storage first, at the press's own time, so that it is refused before the disk fills, not after; and
  /// the edges queued behind the press are not overtaken by the check's clock.
  private func handleEdge(_ edge: Event) {
    if case .edge(.shutter, .pressed, let time) = edge {
      for storageEvent in drivers.storage.check(at: time) { process(storageEvent) }
    }
    process(edge)
  }

  /// The storage check a timer or a save asks for: its events join the queue.
  func checkStorage() {
    for event in drivers.storage.check(at: nil) { post(.kiosk(event)) }
  }

  /// The kiosk decides, the drivers carry it out, the timer follows.
  private func process(_ event: Event) {
    perform(kiosk.handle(event))
    deadlineChanged(kiosk.nextDeadline)
  }

  private func perform(_ actions: [Action]) {
    for action in actions {
      switch action {
      case .saveStill(let frame, let pressedAt): drivers.stills.save(frame, pressedAt: pressedAt)
      case .discardStill(let name): drivers.stills.discard(name)
      case .deleteItem(let name): drivers.player.delete(name)
      case .startMovie(let time):
        drivers.movie.start(at: time)
        recordingChanged()
      case .recordFrame(let frame): drivers.movie.record(frame)
      case .stopMovie(let time):
        drivers.movie.stop(at: time)
        recordingChanged()
      case .recoverRoll: drivers.movie.storageReturned()
      case .nextCamera: drivers.camera.nextCamera()
      case .show(let screen):
        log("screen: \(describe(screen))")
        drivers.screen.show(screen)
        drivers.player.show(screen)
      case .light(let output, let on): drivers.panel.light(output, on)
      case .log(let message): log(message)
      case .zoom(let change):
        guard capabilities.isUsable(.zoom) else {
          log("zoom \(change.rawValue) refused: zoom is off")
          continue
        }
        drivers.camera.zoom(change)
      case .reply(let client, .status(let json)):
        drivers.control.reply(to: client, statusReport(json))
      case .reply(let client, let reply):
        drivers.control.reply(to: client, reply.line ?? "")
      }
    }
  }

  private func recordingChanged() {
    let recording = drivers.movie.isRecording
    drivers.storage.recordingChanged(recording)
    drivers.panel.recordingChanged(recording)
  }
}

/// A screen in the words the log and `status` use.
func describe(_ screen: Screen) -> String {
  switch screen {
  case .live(let mode): "live \(mode.rawValue)"
  case .countdown(let seconds): "countdown \(seconds)"
  case .checkingPhoto(let name): "review \(name)"
  case .recording: "recording"
  case .reviewing(let view):
    "reviewing \(view.item.path) \(view.positionText)" + (view.playing ? " playing" : "")
      + (view.confirmingDelete ? " delete?" : "")
  case .message(let text): text
  }
}

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.nanosecondsClamped / 1000) / 1000
}
