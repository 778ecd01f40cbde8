#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import Dispatch
import KioskCore
import LinuxIO

/// The service: one event loop, the pure `Kiosk` behind the dispatcher's queue, and one driver per concern
/// carrying out what the kiosk decides.
public final class KioskService {
  private let config: Config
  private let loop: EventLoop
  /// What the start opened, until the drivers own it: an adapter kept here too would never be closed (a
  /// camera lost could not be unloaded, a display not taken back).
  private var startup: Startup?
  private let results: Mailbox<ServiceEvent>
  /// The roll's writer: stills, retakes, deletes and listings, one after another, never on the loop.
  private let writer = DispatchQueue(label: "kioskcam.still-writer")
  private var dispatcher: Dispatcher!
  private var kioskTimer: LoopTimer?
  private var signals: SignalWatcher?
  private var deviceWatch: DirectoryWatch?

  /// Probes and opens what the configuration wants; a missing required capability stops it here, one line each.
  public init(config: Config) throws(ServiceError) {
    self.config = config
    do {
      loop = try EventLoop()
      results = try Mailbox()
    } catch {
      throw .io(error.description)
    }
    startup = try Startup(config)
  }

  /// Runs until SIGINT or SIGTERM.
  public func run() throws(ServiceError) {
    let parts: Parts
    do {
      // Before any driver starts a thread (the preview's workers): threads inherit the blocked mask, and a
      // thread without it would take SIGTERM's default action and end the process without finishing a movie.
      signals = try SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM]) { [loop] signal in
        log("signal \(signal): stopping")
        loop.stop()
      }
      parts = try build()
      try start(parts)
      try loop.run()
    } catch {
      throw .io(error.description)
    }
    parts.supervisor?.stopping()
    parts.movie.finishAtExit()
    parts.camera.stop()
    writer.sync {}
    // The memory budget is a target of the preview's design (a dumb buffer per worker and three more, a
    // four-frame ring): say it.
    var usage = rusage()
    if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 { log("peak resident memory: \(usage.ru_maxrss / 1024) MiB") }
  }

  /// The real drivers, each with the loop and `post`.
  private struct Parts {
    let camera: CameraSession
    let display: DisplaySession
    let screen: ScreenSink
    let player: RollPlayer
    let panel: ButtonPanel
    let stills: StillWriter
    let movie: MovieSink
    let storage: StorageMonitor
    let control: ControlServer
    let supervisor: Supervisor?
    let roll: CameraRoll?
    let loopCPU: LoopCPU
  }

  private func build() throws(SystemCallError) -> Parts {
    guard let startup else { preconditionFailure("run() is called once") }
    self.startup = nil
    let dispatcher = try makeDispatcher(startup)
    let post = Self.poster(dispatcher)
    let gate = startup.capabilities.gate
    let loopCPU = LoopCPU()
    let camera = try CameraSession(
      config: config, opened: startup.camera, path: startup.cameraPath,
      movieCameraWanted: gate.role(of: .movieCamera) != .unused, loopCPU: loopCPU, source: startup.cameraSource,
      loop: loop, post: post)
    let display = DisplaySession(
      config: config, card: startup.display, overlay: startup.overlay, wanted: gate.role(of: .display) != .unused,
      buffers: ScreenSink.displayBuffers(for: config), loop: loop, post: post)
    let panel = ButtonPanel(
      config: config, gate: gate, buttons: startup.buttons, flashLamp: startup.flashLamp, loop: loop, post: post)
    // Without an encoder `auto` records Motion-JPEG, and `h264` has no movies at all (the gate said so).
    let codec =
      config.movie.codec.resolved(encoderAvailable: startup.capabilities.verdict.usable.contains(.h264Encoder)) ?? .mjpeg
    let movie = MovieSink(
      config: config, source: camera, roll: startup.roll, codec: codec,
      h264Encoder: startup.h264Encoder ?? .unprobed, microphone: startup.microphone, results: results, post: post)
    let storage = try StorageMonitor(config: config, roll: startup.roll, loop: loop, post: post)
    let (decoder, decoderEvidence) = CapabilityProbe.previewDecoder(config)
    log("preview decoder: \(decoderEvidence)")
    let screen = ScreenSink(
      config: config, scanout: display, source: camera, workers: ScreenSink.workers(for: config), decoder: decoder,
      results: results, loopCPU: loopCPU, overlayContent: Self.overlayContent(dispatcher, panel, storage, movie, camera))
    let player = try RollPlayer(
      config: config, screen: screen, roll: startup.roll, writer: writer, results: results, loop: loop, post: post)
    let stills = StillWriter(
      config: config, source: camera, roll: startup.roll, writer: writer, results: results,
      photoCover: Self.photoCover(screen), post: post)
    let control = try ControlServer(path: config.control.socket, group: config.control.group, loop: loop, post: post)
    let supervisor = try Supervisor(loop: loop, cameraStreaming: camera.isStreaming)
    dispatcher.drivers = Drivers(
      camera: camera, display: display, screen: screen, player: player, panel: panel, stills: stills, movie: movie,
      storage: storage, control: control, supervisor: supervisor ?? NoSupervisor())
    let parts = Parts(
      camera: camera, display: display, screen: screen, player: player, panel: panel, stills: stills, movie: movie,
      storage: storage, control: control, supervisor: supervisor, roll: startup.roll, loopCPU: loopCPU)
    dispatcher.statusReport = Self.statusReport(dispatcher, parts)
    return parts
  }

  private func makeDispatcher(_ startup: Startup) throws(SystemCallError) -> Dispatcher {
    let timer = try LoopTimer(loop: loop) { [unowned self] in self.dispatcher.post(.kiosk(.tick(now()))) }
    kioskTimer = timer
    let dispatcher = Dispatcher(
      kiosk: Kiosk(settings: startup.settings), capabilities: startup.capabilities, rollOpen: startup.roll != nil,
      clock: now, deadlineChanged: Self.armer(timer))
    self.dispatcher = dispatcher
    return dispatcher
  }

  private static func armer(_ timer: LoopTimer) -> (Instant?) -> Void {
    { [unowned timer] deadline in
      if let deadline {
        try? timer.arm(after: max(1, deadline.nanoseconds - monotonicNanoseconds()))
      } else {
        timer.disarm()
      }
    }
  }

  private static func poster(_ dispatcher: Dispatcher) -> (ServiceEvent) -> Void {
    { [unowned dispatcher] event in dispatcher.post(event) }
  }

  private static func overlayContent(
    _ dispatcher: Dispatcher, _ panel: ButtonPanel, _ storage: StorageMonitor, _ movie: MovieSink, _ camera: CameraSession
  ) -> () -> OverlayContent {
    { [unowned dispatcher, unowned panel, unowned storage, unowned movie, unowned camera] in
      OverlayContent(
        mode: dispatcher.kiosk.mode, screen: dispatcher.kiosk.screen, ready: panel.readyLit,
        shotsLeft: storage.shots.count, now: now(), dropped: movie.dropped,
        off: dispatcher.capabilities.verdict.offOnScreen, zoom: camera.zoom.isZoomed ? camera.zoom.label : nil)
    }
  }

  private static func photoCover(_ screen: ScreenSink) -> () -> (width: Int, height: Int)? {
    { [unowned screen] in screen.photoCover }
  }

  private static func statusReport(_ dispatcher: Dispatcher, _ parts: Parts) -> (Bool) -> String {
    { [unowned dispatcher] json in
      let status = ServiceStatus(dispatcher: dispatcher, parts.camera, parts.display, parts.screen, parts.stills, parts.movie, parts.loopCPU)
      return json ? status.json : status.text
    }
  }

  private func start(_ parts: Parts) throws(SystemCallError) {
    try results.attach(to: loop) { [unowned self] event in dispatcher.post(event) }
    deviceWatch = try DirectoryWatch(loop: loop, directories: ["/dev", "/dev/v4l/by-id", "/dev/dri"]) {
      [unowned self] directory, name in
      dispatcher.post(.nodeAppeared(directory: directory, name: name))
    }
    try parts.panel.start()
    try parts.display.start()
    try parts.camera.start(optionalAndMissing: dispatcher.capabilities.gate.role(of: .stillCamera) == .optional)
    if let roll = parts.roll {
      log("roll \(roll.root), next \(roll.next.map { "\($0.folderName(suffix: roll.suffix))/\($0.fileName(.still))" } ?? "none")")
    }
    log("control socket \(config.control.socket)")
    parts.player.listNow()
    dispatcher.post(.kiosk(.available(dispatcher.availableModes, at: now())))
    dispatcher.checkStorage()
    log("ready")
  }
}
