#if canImport(Glibc)
  import Glibc
#endif
import Buttons
import Camera
import CameraRoll
import Dispatch
import Display
import FontFile
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Scaling

/// Results that come back to the loop from the still writer.
enum WorkerResult: Sendable {
  case saved(RollItem, FrameInfo, pressedAt: Instant)
  case failed(String)
  /// The saved still read back from its file and decoded for the review screen (posted before `saved`).
  case reviewPicture(String, XRGBImage)
  case movieSaved(MovieSummary)
  case movieFailed(String)
  /// A roll item read and decoded for review mode, or why it could not be.
  case viewed(ViewedItem)
  case viewFailed(path: String, reason: String)
  /// A delete on the writer finished (or failed): list the roll again.
  case rollChanged(deleted: String)
  /// The roll's items as the writer listed them.
  case rollListed([RollEntry])
}

/// Frames the camera delivered that could not be saved, by why; counted, logged the first time, summed at stop.
struct FrameCounts {
  var delivered = 0
  /// V4L2_BUF_FLAG_ERROR set by the driver.
  var flaggedError = 0
  /// Fewer bytes than the format's geometry needs.
  var short = 0
  /// MJPEG without SOI at the start or EOI at the end.
  var truncated = 0
  /// Frames the driver's sequence numbers say were never delivered.
  var missing = 0
  var lastSequence: UInt32?

  var bad: Int { flaggedError + short + truncated }

  var summary: String {
    "frames delivered \(delivered), error-flagged \(flaggedError), short \(short), truncated MJPEG \(truncated), missing by sequence \(missing)"
  }
}

/// The service: one event loop around the devices, carrying out what the pure `Kiosk` decides.
public final class KioskService {
  private let config: Config
  private let loop: EventLoop
  private var kiosk: Kiosk
  private var camera: CameraStream?
  private var display: KMSDisplay?
  private var scaler: LibYUVPreview?
  /// Nil when the font could not be read: messages are then plain colour, and the log says why once.
  private var overlay: Overlay?
  /// The ready lamp's state as the kiosk decides it, lamp wired or not: the overlay's ready cue.
  private var readyLit = false
  /// Free bytes above the reserve and the mean size of a still, for "shots left"; nil until known.
  private var spareBytes: UInt64?
  private var stillSizes = (count: 0, bytes: 0)
  /// The last still as decoded from its file, with the scaler that fits it: shown while its review lasts.
  private var review: (name: String, picture: XRGBImage, scaler: LibYUVPreview)?
  /// MJPEG frames decode to a size that only changes with the camera's format: the scaler is kept for it.
  private var decodedScaler: LibYUVPreview?
  /// The MJPEG preview's decoder, with its planes reused frame after frame (made at the first MJPEG frame).
  private var planeDecoder: JPEGPlaneDecoder?
  /// The shutter and mode lines, each requested on its own so that a missing optional one leaves the others.
  private var buttons: [ButtonLines]
  /// The optional roles (cancel, camera, zoom) and the ready and tally lamps, best effort.
  private var extras: ButtonLines?
  /// The optional roles and lamps went away with their chip at run time: they are requested again.
  private var extrasLost = false
  /// The flash lamp: a capability of its own (`flash`), requested on its own line.
  private var flashLamp: ButtonLines?
  /// Checks every 2 s that the GPIO chip behind the lines is still there, and asks again for what is missing.
  private var buttonTimer: LoopTimer?
  private let roll: CameraRoll?
  private let results: Mailbox<WorkerResult>
  private let writer = DispatchQueue(label: "kioskcam.still-writer")
  private var ring = FrameRing(capacity: Kiosk.recentFrameCount)
  private var signals: SignalWatcher?
  private var retryTimer: LoopTimer?
  /// Device nodes appearing in /dev: a camera that comes back is tried at once, not at the next retry.
  private var deviceWatch: DirectoryWatch?
  /// When a capture node appeared while the camera was lost: the log says how long the return took.
  private var nodeAppeared: (name: String, at: Instant)?
  private var kioskTimer: LoopTimer?
  private var storageTimer: LoopTimer?
  /// Looks at the display's connector every second: an unplugged cable does not make page flips fail.
  private var connectorTimer: LoopTimer?
  /// What the last look without a display found, so that only a change to connected opens it.
  private var connectorWasConnected = false
  private var counts = FrameCounts()
  private var control: ControlServer?
  private var cameraPath: String
  private var capabilities: CapabilityMonitor
  /// A message that found a flip pending: it is drawn when that flip completes, never dropped like a preview frame.
  private var messageWaiting = false
  private var statistics = Statistics()
  /// sd_notify: READY, the watchdog while frames arrive, STOPPING (see `Supervision` for the rule).
  private var supervisor: Supervisor?
  /// The movie being recorded, between the kiosk's startMovie and stopMovie.
  private var recorder: MovieRecorder?
  /// The zoom the zoom buttons and `kioskcam zoom` step: the camera's zoom control first, then the digital crop.
  private var zoom: Zoom
  /// Review mode: items are read and decoded here, off the loop.
  private let viewer = DispatchQueue(label: "kioskcam.viewer")
  /// The item review mode shows (decoded), and the one being read for it.
  private var viewed: ViewedItem?
  private var loading: String?
  /// The movie playing in review mode: its frames are shown from a timer at their own times.
  private var playback: Playback?
  private var playbackTimer: LoopTimer?
  /// The listing the kiosk last got, so an unchanged roll is not sent again every few seconds.
  private var listed: [RollEntry]?
  /// Items being deleted on the writer: a listing taken meanwhile must not bring them back.
  private var deleting: Set<String> = []

  /// A movie playing: its file, its index, and when its first frame was shown (CLOCK_MONOTONIC).
  final class Playback {
    let path: String
    let index: MovieIndex
    let file: OwnedFD
    let start: Int64
    var shown = -1
    init(path: String, index: MovieIndex, file: consuming OwnedFD, start: Int64) {
      self.path = path
      self.index = index
      self.file = file
      self.start = start
    }
  }

  /// Counters for `kioskcam status`, since the service started.
  struct Statistics {
    var previewFramesShown = 0
    var stillsSaved = 0
    var saveFailures = 0
    var moviesSaved = 0
    var lastShutterLag: Duration?
    /// MJPEG frames the preview could not decode (saved stills are judged on their own).
    var previewDecodeFailures = 0
  }

  /// Probes and opens what the configuration wants; a missing required capability stops it here, one line each.
  public init(config: Config) throws(ServiceError) {
    self.config = config
    zoom = Zoom(maximum: config.capture.zoomMaximum, step: config.capture.zoomStep)
    do {
      loop = try EventLoop()
      results = try Mailbox()
    } catch {
      throw .io(error.description)
    }

    let gate = CapabilityGate(config)
    var probed: [ProbeResult] = []
    func wanted(_ capability: Capability) -> Bool { gate.role(of: capability) != .unused }

    if wanted(.movieCamera) { probed.append(CapabilityProbe.movieCamera(config)) }
    var opened: CameraStream?
    var cameraInfo: CameraInfo?
    cameraPath = config.camera.device
    if wanted(.stillCamera) {
      var (result, found) = CapabilityProbe.stillCamera(config)
      cameraInfo = found
      if let found {
        cameraPath = found.path
        do {
          opened = try Self.openCamera(found.path, config.camera)
        } catch {
          result = .fail(.stillCamera, "\(error)")
        }
      }
      probed.append(result)
    }

    var lines: [ButtonLines] = []
    for (role, capability) in [(ButtonRole.shutter, Capability.shutterButton), (.mode, .modeButton)]
    where wanted(capability) {
      let (result, requested) = CapabilityProbe.button(role, config)
      probed.append(result)
      if let requested { lines.append(requested) }
    }

    var flashLamp: ButtonLines?
    if wanted(.flash) {
      let (result, lamp) = CapabilityProbe.flash(config)
      probed.append(result)
      flashLamp = lamp
    }
    if wanted(.zoom) { probed.append(CapabilityProbe.zoom(config, camera: cameraInfo)) }

    var publishedRoll: CameraRoll?
    if wanted(.cameraRoll) {
      var result = CapabilityProbe.cameraRoll(config)
      if result.passed {
        do {
          publishedRoll = try CameraRoll(root: config.roll.path, suffix: config.roll.folderSuffix)
        } catch {
          result = .fail(.cameraRoll, "\(error)")
        }
      }
      probed.append(result)
    }

    var output: KMSDisplay?
    if wanted(.display) {
      if config.display.device == "none" {
        probed.append(.fail(.display, "[display] device = none"))
      } else {
        do {
          let card = try KMSDisplay(device: config.display.device)
          output = card
          probed.append(CapabilityProbe.opened(.success(card)))
        } catch {
          probed.append(CapabilityProbe.opened(.failure(error)))
        }
      }
    }

    var painter: TextPainter?
    if output != nil {
      do {
        painter = TextPainter(font: try FontFile.load(config.display.font))
      } catch {
        log("overlay off: \(error)")
      }
    }
    let overlay = output.flatMap { card in painter.map { Overlay(painter: $0, width: card.width, height: card.height) } }
    if let output, let overlay {
      _ = try? output.present { overlay.drawMessage(["Starting..."], background: Overlay.messageBackground, on: $0) }
    }

    capabilities = CapabilityMonitor(gate: gate, results: probed)
    let verdict = capabilities.verdict
    guard verdict.canRun else {
      if let output { Self.showUntilExit(output, overlay, Self.missingWords(verdict.fatal), for: config.display.missingMessage) }
      throw .unavailable(verdict.fatal)
    }
    // Without its lamp a flash still would wait its lead for a light that never comes: taken at the press.
    kiosk = Kiosk(
      settings: KioskSettings(
        gestures: config.buttons.timing, countdown: config.capture.countdown, review: config.capture.review,
        movieMaximum: config.movie.maximumDuration,
        flashLead: flashLamp == nil ? nil : config.outputs.flashLead,
        flashForMovies: config.outputs.flashForMovies, cameras: max(1, config.camera.cycle.count),
        browseIdle: config.review.idle, allowDelete: config.review.allowDelete))
    camera = opened
    buttons = lines
    self.flashLamp = flashLamp
    roll = publishedRoll
    if let publishedRoll { Self.recoverMovies(publishedRoll) }
    display = output
    self.overlay = overlay
    extras = Self.requestExtras(config)
    // Each optional capability that is missing is said once, here; the feature stays off.
    for missing in verdict.disabled { log("\(missing.capability) off (optional): \(missing.evidence)") }
    // A part wired in the configuration but left out of both lists would be ignored without a word.
    let wired: [(Capability, Bool)] = [
      (.flash, config.outputs.flash != nil),
      (.zoom, config.buttons.zoomIn != nil || config.buttons.zoomOut != nil),
    ]
    for (capability, isWired) in wired where isWired && gate.role(of: capability) == .unused {
      log("\(capability) is wired but in neither [capabilities] list: \(capability.feature) is off")
    }
    if let publishedRoll {
      for item in CameraRoll.list(root: publishedRoll.root) where item.file.uppercased().hasSuffix(".JPG") {
        stillSizes.count += 1
        stillSizes.bytes += item.bytes
      }
    }
    let types = verdict.mediaTypes.map(\.rawValue).joined(separator: ", ")
    log("media types: \(types.isEmpty ? "none" : types)")
    if let output {
      log("display \(output.path) \(output.connectorName) \(output.width)x\(output.height)")
      let planes = output.probePlanes(sourceWidth: config.camera.size.width, sourceHeight: config.camera.size.height)
      // Scanning the camera's format out on a plane is not built yet: a plane that would do says so.
      let use = planes.decision == "plane" ? "; the preview still converts on the CPU (no plane path yet)" : ""
      log("display plane: \(planes.decision): \(planes.evidence)\(use)")
    }
  }

  /// The reasons stay in the log and on standard error; the screen shows that something is wrong for as long
  /// as configured, so a person at the kiosk is not left with a frozen picture.
  private static func showUntilExit(_ display: KMSDisplay, _ overlay: Overlay?, _ words: [String], for duration: Duration) {
    guard duration > .zero else { return }
    // "Starting..." may still be flipping in: wait for it, or the refusal would leave it on screen.
    display.waitForFlip(milliseconds: 1000)
    _ = try? display.present { target in
      Overlay.drawMessage(words, background: Overlay.fatalBackground, with: overlay, on: target)
    }
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
  }

  /// Plain words for the required capabilities that are missing (the reasons themselves are in the log).
  static func missingWords(_ fatal: [String]) -> [String] {
    var words: [String] = []
    for line in fatal {
      let name = line.prefix { $0 != " " }
      let phrase =
        switch name {
        case "still-camera", "movie-camera": "Camera not available"
        case "camera-roll": "Storage not available"
        case "shutter-button": "Shutter button not available"
        case "mode-button": "Mode button not available"
        case "flash": "Flash not available"
        case "zoom": "Zoom not available"
        default: "\(name) not available"
        }
      if !words.contains(phrase) { words.append(phrase) }
    }
    return words
  }

  /// The optional buttons and the ready and tally lamps: not capabilities of their own, so a missing one is
  /// logged and off.
  private static func requestExtras(_ config: Config) -> ButtonLines? {
    do {
      return try requestLines(config)
    } catch {
      let names = (extraRoles(config).map(\.0.rawValue) + extraLamps(config).map(\.0.rawValue)).joined(separator: ", ")
      log("\(names) off: \(error)")
      return nil
    }
  }

  private static func extraRoles(_ config: Config) -> [(ButtonRole, LineReference)] {
    config.buttons.lines.filter { $0.0 != .shutter && $0.0 != .mode }
  }
  private static func extraLamps(_ config: Config) -> [(Output, LineReference)] {
    config.outputs.lines.filter { $0.0 != .flash }
  }

  /// Nil when none are configured.
  private static func requestLines(_ config: Config) throws(ButtonError) -> ButtonLines? {
    let (roles, outputs) = (extraRoles(config), extraLamps(config))
    guard !roles.isEmpty || !outputs.isEmpty else { return nil }
    return try ButtonLines(
      chip: config.buttons.chip, lines: roles,
      wiring: ButtonWiring(activeLow: config.buttons.activeLow, bias: config.buttons.bias),
      outputs: outputs, outputsActiveLow: config.outputs.activeLow)
  }

  /// Runs until SIGINT or SIGTERM.
  public func run() throws(ServiceError) {
    do {
      signals = try SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM]) { [loop] signal in
        log("signal \(signal): stopping")
        loop.stop()
      }
      try results.attach(to: loop) { [unowned self] result in received(result) }
      for lines in allLines { try attach(lines) }
      buttonTimer = try LoopTimer(loop: loop) { [unowned self] in
        checkButtons()
        try? buttonTimer?.arm(after: 2_000_000_000)
      }
      try buttonTimer?.arm(after: 2_000_000_000)
      if let display {
        try loop.watch(display.descriptor) { [unowned self] _ in flipDone() }
      }
      retryTimer = try LoopTimer(loop: loop) { [unowned self] in retryCamera() }
      deviceWatch = try DirectoryWatch(loop: loop, directories: ["/dev", "/dev/v4l/by-id", "/dev/dri"]) {
        [unowned self] in
        deviceNodeAppeared(directory: $0, name: $1)
      }
      // Space freed over SSH shows up on screen without a press; a press also checks first. A recording
      // fills the disk at up to a few MB a second, so while one runs the reserve is checked every second:
      // it must stop there with room left to finish the file, not at ENOSPC.
      storageTimer = try LoopTimer(loop: loop) { [unowned self] in
        checkStorage()
        // Items copied in or deleted over SSH reach review mode too; not while recording, when review cannot
        // be on screen and this timer runs every second.
        if recorder == nil { listRoll() }
        if display == nil { retryDisplay() }
        try? storageTimer?.arm(after: recorder == nil ? 5_000_000_000 : 1_000_000_000)
      }
      try storageTimer?.arm(after: 5_000_000_000)
      connectorTimer = try LoopTimer(loop: loop) { [unowned self] in
        checkConnector()
        try? connectorTimer?.arm(after: 1_000_000_000)
      }
      try connectorTimer?.arm(after: 1_000_000_000)
      kioskTimer = try LoopTimer(loop: loop) { [unowned self] in handle(.tick(now())) }
      playbackTimer = try LoopTimer(loop: loop) { [unowned self] in playbackTick() }
      control = try ControlServer(path: config.control.socket, group: config.control.group, loop: loop) {
        [unowned self] request in answer(request)
      }
      try startCamera()
      if camera == nil, capabilities.gate.role(of: .stillCamera) == .optional {
        // Optional and missing at start: the same screen and retries as a camera lost later, logged once above.
        handle(.cameraLost(reason: "not found at start", at: now()))
        try? retryTimer?.arm(after: 2_000_000_000)
      }
      log("buttons: \(allLines.flatMap(\.descriptions).joined(separator: "; "))")
      let lamps = [extras, flashLamp].compactMap { $0 }.flatMap(\.lampDescriptions)
      if !lamps.isEmpty { log("lamps: \(lamps.joined(separator: "; "))") }
      if let roll {
        log("roll \(roll.root), next \(roll.next.map { "\($0.folderName(suffix: roll.suffix))/\($0.fileName(.still))" } ?? "none")")
      }
      log("control socket \(config.control.socket)")
      listRoll(atOnce: true)
      handle(.available(availableModes(), at: now()))
      checkStorage()
      supervisor = try Supervisor(loop: loop, cameraStreaming: camera != nil)
      log("ready")
      try loop.run()
    } catch {
      throw .io(error.description)
    }
    supervisor?.stopping()
    if let recorder {
      // Stopped by a signal while recording: the movie is finished and published before the service goes.
      self.recorder = nil
      Self.logMovie(recorder.stopAndWait())
    }
    camera?.stop()
    writer.sync {}
    log(counts.summary)
    // The memory budget is a target of the preview's design (two dumb buffers, a four-frame ring): say it.
    var usage = rusage()
    if getrusage(RUSAGE_SELF.rawValue, &usage) == 0 { log("peak resident memory: \(usage.ru_maxrss / 1024) MiB") }
  }

  private func now() -> Instant { Instant(nanoseconds: monotonicNanoseconds()) }

  private var allLines: [ButtonLines] { buttons + (extras.map { [$0] } ?? []) }

  private func attach(_ lines: ButtonLines) throws(SystemCallError) {
    try lines.attach(to: loop) { [unowned self] edge in handle(.edge(edge.role, edge.edge, at: edge.time)) }
  }

  // MARK: Buttons that come and go

  /// GPIO chips come and go too (an expander on USB or I2C, a driver unbound): lines whose chip is gone are
  /// let go, and what the configuration wants and the service lacks is requested again. The shutter and mode
  /// buttons and the flash are capabilities, reported lost and back like the camera; a lost required one is
  /// shown ("Off: shutter button") and retried, never a reason to stop: the control socket still works.
  private func checkButtons() {
    for lines in buttons where lines.chipGone {
      letGo(lines)
      buttons.removeAll { $0 === lines }
      for role in lines.roles {
        capabilityChanged(.fail(role == .shutter ? .shutterButton : .modeButton, "\(role.rawValue) button: its GPIO chip is gone"))
      }
    }
    if let lines = extras, lines.chipGone {
      letGo(lines)
      extras = nil
      extrasLost = true
      log("\((lines.roles.map(\.rawValue) + ["lamps"]).joined(separator: ", ")) off: their GPIO chip is gone")
    }
    if let lamp = flashLamp, lamp.chipGone {
      flashLamp = nil
      capabilityChanged(.fail(.flash, "flash lamp: its GPIO chip is gone"))
    }
    requestMissingButtons()
  }

  private func letGo(_ lines: ButtonLines) {
    lines.detach(from: loop)
    handle(.buttonsLost(lines.roles, at: now()))
  }

  private func requestMissingButtons() {
    let held = Set(buttons.flatMap(\.roles))
    for (role, capability) in [(ButtonRole.shutter, Capability.shutterButton), (.mode, .modeButton)]
    where capabilities.gate.role(of: capability) != .unused && !held.contains(role) {
      let (result, requested) = CapabilityProbe.button(role, config)
      if let requested {
        do {
          try attach(requested)
        } catch {
          log("\(role.rawValue) button: \(error)")
          continue
        }
        buttons.append(requested)
      }
      capabilityChanged(result)
    }
    // Only a lamp lost at run time: the kiosk's stills wait for the flash (its lead) only when it was there at
    // start, so one that turns up later would never be lit.
    if flashLamp == nil, kiosk.settings.flashLead != nil {
      let (result, lamp) = CapabilityProbe.flash(config)
      flashLamp = lamp
      capabilityChanged(result)
    }
    if extrasLost, let lines = try? Self.requestLines(config) {
      do {
        try attach(lines)
      } catch {
        log("optional buttons: \(error)")
        return
      }
      extras = lines
      extrasLost = false
      // The lamps come back in the state the kiosk last asked for.
      lines.set(.ready, readyLit)
      lines.set(.tally, recorder != nil)
      log("buttons back: \((lines.descriptions + lines.lampDescriptions).joined(separator: "; "))")
    }
  }

  /// The modes the gate's media types allow; review needs a screen and a roll (the kiosk also wants
  /// something in it).
  private func availableModes() -> Set<KioskMode> {
    var modes: Set<KioskMode> = []
    if capabilities.verdict.mediaTypes.contains(.stills) { modes.insert(.still) }
    if capabilities.verdict.mediaTypes.contains(.movies), roll != nil { modes.insert(.movie) }
    if display != nil, roll != nil { modes.insert(.review) }
    return modes
  }

  /// Lists the roll on the writer (a folder on slow or network storage never stalls the loop), behind any
  /// save or delete already queued there; at start, at once, so review is offered from the first press.
  private func listRoll(atOnce: Bool = false) {
    guard let roll else { return }
    if atOnce { return rollListed(RollViewer.entries(root: roll.root)) }
    let results = results
    writer.async { results.post(.rollListed(RollViewer.entries(root: roll.root))) }
  }

  /// Tells the kiosk what the roll holds now, when that changed.
  private func rollListed(_ found: [RollEntry]) {
    let entries = found.filter { !deleting.contains($0.path) }.sorted { ($0.number, $0.path) < ($1.number, $1.path) }
    guard entries != listed else { return }
    listed = entries
    handle(.roll(entries, at: now()))
  }

  /// Every event goes through here: the kiosk decides, the service carries it out, the timer follows.
  private func handle(_ event: Event) {
    // Edges the kernel already has come first, in their own order, so the clock never overtakes them.
    if case .edge = event {} else { for lines in allLines { lines.drainPending() } }
    // A press checks the storage first, so that it is refused before the disk fills, not after.
    if case .edge(.shutter, .pressed, let time) = event { checkStorage(atPress: time) }
    perform(kiosk.handle(event))
    if let deadline = kiosk.nextDeadline {
      try? kioskTimer?.arm(after: max(1, deadline.nanoseconds - monotonicNanoseconds()))
    } else {
      kioskTimer?.disarm()
    }
  }

  private static func openCamera(_ path: String, _ settings: Config.Camera) throws(CameraError) -> CameraStream {
    return try CameraStream(path: path, format: settings.format, size: settings.size, frameRate: settings.frameRate)
  }

  private func startCamera() throws(SystemCallError) {
    guard let camera else { return }
    do {
      try camera.start()
    } catch {
      cameraLost("\(error)")
      return
    }
    let format = camera.format
    log("camera \(camera.path) \(format.format.fourcc) \(format.width)x\(format.height) streaming")
    useZoomControl(of: camera)
    counts.lastSequence = nil
    fitPreview()
    // POLLPRI and errors arrive too: a disconnect shows up as POLLERR|POLLHUP on the capture node.
    try loop.watch(camera.descriptor, for: [.readable, .priority]) { [unowned self] readiness in
      cameraReady(readiness)
    }
  }

  // MARK: Preview geometry and digital zoom

  /// The preview's scaler for the camera's format, the display, its turn and mirror, and the zoom's crop.
  private func fitPreview() {
    guard let display, let camera else { return }
    let format = camera.format
    decodedScaler = nil
    let orientation = PreviewOrientation(rotation: config.display.rotation, mirror: config.display.mirror)
    let crop = zoom.crop(width: format.width, height: format.height)
    // A quarter turn fits the picture's height across the panel.
    let (fitWidth, fitHeight) = orientation.swapsAxes ? (crop.height, crop.width) : (crop.width, crop.height)
    // MJPEG frames are decoded at a DCT scale first: their crop is applied to the decoded picture (below).
    let cropped = format.format == .mjpeg ? nil : PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
    scaler = LibYUVPreview(
      sourceWidth: format.width, sourceHeight: format.height, crop: cropped,
      target: .aspectFit(sourceWidth: fitWidth, sourceHeight: fitHeight, into: display.width, display.height),
      orientation: orientation)
  }

  /// The zoom's crop of a decoded MJPEG picture, which is smaller than the frame by its DCT scale.
  private func decodedCrop(width: Int, height: Int) -> PixelRect? {
    guard zoom.factor > 100 else { return nil }
    let crop = zoom.crop(width: width, height: height)
    return PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
  }

  /// The crop a still or a movie frame is cut to at the current digital zoom; nil at 1.0x.
  private func stillZoomCrop(_ format: StreamFormat) -> PixelRect? {
    guard zoom.factor > 100 else { return nil }
    let crop = zoom.crop(width: format.width, height: format.height)
    return PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
  }

  /// A camera just opened: its own zoom control, if it has one, comes before the digital zoom, and is set to
  /// the zoom's step (a camera back from an unplug has forgotten it).
  private func useZoomControl(of camera: CameraStream) {
    zoom.useControl(camera.zoomControl)
    log("zoom method: \(zoom.method)")
    if let value = zoom.controlValue { setCameraZoom(value, on: camera) }
  }

  /// Sets the camera's zoom control; one that fails is given up for this camera (digital zoom only, from 1.0x)
  /// rather than leaving the zoom's steps and the lens disagreeing.
  private func setCameraZoom(_ value: Int, on camera: CameraStream) {
    do {
      try camera.setZoom(value)
    } catch {
      log("camera zoom control failed: \(error); digital zoom only")
      zoom.useControl(nil)
      fitPreview()
    }
  }

  private func cameraReady(_ readiness: Readiness) {
    guard let camera else { return }
    if readiness.contains(.error) || readiness.contains(.hangUp) {
      cameraLost("\(camera.path): the device reported an error (\(readiness))")
      return
    }
    // One buffer per readiness: the loop is level-triggered and calls again while more are ready, and
    // libv4l2 prints a line to stderr for every DQBUF that finds none.
    guard readiness.contains(.readable) else { return }
    let frame: FrameInfo
    do {
      guard let buffer = try camera.dequeue() else { return }
      counts.delivered += 1
      if let last = counts.lastSequence, buffer.info.sequence > last &+ 1 {
        let gap = Int(buffer.info.sequence - last - 1)
        if counts.missing == 0 { log("camera skipped frames (sequence \(last) to \(buffer.info.sequence)); counting") }
        counts.missing += gap
      }
      counts.lastSequence = buffer.info.sequence
      let problem = camera.withBytes(of: buffer) { bytes in Self.problem(with: bytes, buffer.damaged, camera.format) }
      if let problem {
        switch problem {
        case .flaggedError: counts.flaggedError += 1
        case .short: counts.short += 1
        case .truncated: counts.truncated += 1
        }
        if counts.bad == 1 { log("bad frame \(buffer.info.sequence): \(problem), not kept; counting") }
        try camera.requeue(buffer)
        return
      }
      camera.withBytes(of: buffer) { bytes in ring.append(buffer.info, bytes) }
      frame = buffer.info
      try camera.requeue(buffer)
      // The movie is from the press to the stop: a frame taken before the press but dequeued after it, or
      // after the maximum duration before the timer says so, is not part of it.
      var withinMovie = true
      if case .recording(let since, let until) = kiosk.screen, frame.timestamp < since || frame.timestamp > until {
        withinMovie = false
      }
      if let recorder, withinMovie, let entry = ring.frame(frame) {
        let format = camera.format
        // The ring's copy is shared, not copied again: the recorder holds it until it is encoded.
        recorder.submit(
          StillFrame(
            format: format.format, width: format.width, height: format.height, bytesPerLine: format.bytesPerLine,
            range: format.range, bytes: entry.bytes),
          timestamp: frame.timestamp.nanoseconds, sequence: frame.sequence, crop: stillZoomCrop(format))
        if let failure = recorder.writeFailure {
          // The kiosk stops the recording at once: the file is kept up to its last whole fragment.
          handle(.movieFailed(reason: "write failed: \(failure)", at: now()))
        }
      }
    } catch {
      cameraLost("\(error)")
      return
    }
    handle(.frame(frame))
    showPreview(frame)
    supervisor?.frameArrived(
      previewShown: statistics.previewFramesShown > 0, previewExpected: scaler != nil && showsPreview(kiosk.screen))
  }

  enum FrameProblem: CustomStringConvertible {
    case flaggedError, short, truncated
    var description: String {
      switch self {
      case .flaggedError: "the driver flagged it as damaged"
      case .short: "fewer bytes than its size needs"
      case .truncated: "MJPEG without SOI or EOI"
      }
    }
  }

  /// Why a frame cannot become a still, or nil. Only the frame's ends are looked at for MJPEG: the writer
  /// parses the rest, and a frame that fails there is a failed save, not a silent one.
  static func problem(with bytes: UnsafeRawBufferPointer, _ flagged: Bool, _ format: StreamFormat) -> FrameProblem? {
    if flagged { return .flaggedError }
    switch format.format {
    case .yuyv:
      return bytes.count < format.bytesPerLine * format.height ? .short : nil
    case .nv12:
      return bytes.count < format.bytesPerLine * (format.height + (format.height + 1) / 2) ? .short : nil
    case .mjpeg:
      var end = bytes.count
      while end > 4, bytes[end - 1] == 0 { end -= 1 }
      let complete = end >= 4 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9
      return complete ? nil : .truncated
    }
  }

  /// Shows the freshest frame; while the last flip is still pending this frame is dropped from the preview only.
  private func showPreview(_ frame: FrameInfo) {
    guard let display, let scaler, let camera, showsPreview(kiosk.screen), let entry = ring.frame(frame) else { return }
    let stride = camera.format.bytesPerLine
    if case .reviewingPhoto(let name) = kiosk.screen, let review, review.name == name {
      // The photo as saved, not the live picture: people check what they got.
      present(review.picture, with: review.scaler, on: display)
      return
    }
    if camera.format.format == .mjpeg {
      // Decoding is most of an MJPEG frame's cost: a frame the display cannot take yet is not decoded at all.
      guard !display.flipPending else { return }
      let picture: YCbCrPlaneView
      do {
        let (shownWidth, shownHeight) =
          scaler.orientation.swapsAxes
          ? (scaler.target.height, scaler.target.width) : (scaler.target.width, scaler.target.height)
        let (coverWidth, coverHeight) = zoom.decodeCover(shownWidth: shownWidth, shownHeight: shownHeight)
        if planeDecoder == nil { planeDecoder = try JPEGPlaneDecoder() }
        let decoder = planeDecoder!
        picture = try entry.bytes.withUnsafeBytes { try decoder.decode($0, covering: coverWidth, coverHeight) }
      } catch {
        if statistics.previewDecodeFailures == 0 { log("preview: MJPEG frame \(frame.sequence) not decoded: \(error)") }
        statistics.previewDecodeFailures += 1
        return
      }
      if decodedScaler?.sourceWidth != picture.width || decodedScaler?.sourceHeight != picture.height {
        decodedScaler = LibYUVPreview(
          sourceWidth: picture.width, sourceHeight: picture.height,
          crop: decodedCrop(width: picture.width, height: picture.height), target: scaler.target,
          orientation: scaler.orientation)
      }
      let fitted = decodedScaler!
      do {
        try display.present { target in
          fitted.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
          fitted.drawPlanes(picture, into: target.pixels, destinationStride: target.stride)
          overlay?.drawLive(overlayContent, on: target)
        }
      } catch {
        displayFailed(error)
      }
      return
    }
    do {
      try display.present { target in
        scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
        entry.bytes.withUnsafeBytes { source in
          if camera.format.format == .nv12 {
            scaler.drawNV12(source, stride: stride, into: target.pixels, destinationStride: target.stride)
          } else {
            scaler.drawYUYV(source, stride: stride, into: target.pixels, destinationStride: target.stride)
          }
        }
        overlay?.drawLive(overlayContent, on: target)
      }
    } catch {
      displayFailed(error)
    }
  }

  /// A decoded picture (the review, an MJPEG frame) fitted like the preview, with the overlay on top.
  private func present(_ picture: XRGBImage, with scaler: LibYUVPreview, on display: KMSDisplay) {
    do {
      try display.present { target in
        scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
        picture.pixels.withUnsafeBytes { source in
          scaler.drawXRGB(source, stride: picture.stride, into: target.pixels, destinationStride: target.stride)
        }
        overlay?.drawLive(overlayContent, on: target)
      }
    } catch {
      displayFailed(error)
    }
  }

  /// Required capabilities lost at run time that no screen of their own tells about (the cameras and the roll
  /// have "Camera not available" and "Storage not available"): the buttons and the flash join "Off:".
  private var lostWithoutAScreen: [Capability] {
    capabilities.verdict.missingRequired.filter { [.shutterButton, .modeButton, .flash, .zoom].contains($0) }
  }

  private var overlayContent: OverlayContent {
    var shots: Int?
    if let spareBytes, stillSizes.count > 0 {
      shots = Int(min(spareBytes / UInt64(max(1, stillSizes.bytes / stillSizes.count)), 999_999))
    }
    return OverlayContent(
      mode: kiosk.mode, screen: kiosk.screen, ready: readyLit, shotsLeft: shots, now: now(), dropped: recorder?.dropped ?? 0,
      off: capabilities.verdict.disabled.map(\.capability) + lostWithoutAScreen, zoom: zoom.isZoomed ? zoom.label : nil)
  }

  /// Adds a published still's size to the mean that "shots left" divides the free space by.
  private func countStillSize(_ relativePath: String) {
    guard let roll, relativePath.uppercased().hasSuffix(".JPG") else { return }
    var info = stat()
    guard stat("\(roll.root)/\(relativePath)", &info) == 0 else { return }
    stillSizes.count += 1
    stillSizes.bytes += Int(info.st_size)
  }

  /// Screens that are the live picture (their words and digits arrive with the overlay).
  private func showsPreview(_ screen: Screen) -> Bool {
    switch screen {
    case .live, .countdown, .recording, .reviewingPhoto: true
    case .browsing, .message: false
    }
  }

  private func cameraLost(_ reason: String) {
    guard let lost = camera else { return }
    loop.unwatch(lost.descriptor)
    camera = nil
    ring.removeAll()
    noCamera(reason)
  }

  /// Tells the kiosk, the supervisor and the gate that there is no camera, and retries.
  private func noCamera(_ reason: String) {
    handle(.cameraLost(reason: reason, at: now()))
    supervisor?.cameraUnavailable(reason)
    capabilityChanged(.fail(.stillCamera, reason))
    if capabilities.gate.role(of: .movieCamera) != .unused { capabilityChanged(.fail(.movieCamera, reason)) }
    // Every old descriptor must be closed before the device can be opened again (vivid, uvcvideo).
    try? retryTimer?.arm(after: 2_000_000_000)
  }

  /// The `camera` button: closes this stream and opens the next configured camera; one that cannot be opened
  /// is skipped (logged), and if none can, the one before is opened again.
  private func nextCamera() {
    let cycle = config.camera.cycle
    guard let current = cycle.firstIndex(of: cameraPath) ?? cycle.indices.first else { return }
    if let camera { loop.unwatch(camera.descriptor) }
    // The old stream's buffers and descriptor go before the next opens: two vivid instances would
    // coexist, but a USB camera pair on one hub often cannot stream at once.
    camera = nil
    ring.removeAll()
    for step in 1...cycle.count {
      let path = cycle[(current + step) % cycle.count]
      do {
        camera = try Self.openCamera(path, config.camera)
        cameraPath = path
        log("camera switched to \(path)")
        try startCamera()
        return
      } catch {
        camera = nil
        log("camera \(path) skipped: \(error)")
      }
    }
    noCamera("no configured camera opens")
  }

  /// A present that failed: logged, and a display that went away (ENODEV: unplugged, driver unbound) is let
  /// go, so that the service goes on capturing without it and takes it back when it returns.
  private func displayFailed(_ error: DisplayError) {
    guard error.isGone else {
      log("display: \(error)")
      return
    }
    letGoOfDisplay("\(error)")
  }

  /// The display is gone (card removed, or its connector unplugged): the card is closed, which also gives up
  /// DRM master, and the service goes on capturing; `retryDisplay` opens it afresh, with whatever mode the
  /// display that comes back prefers.
  private func letGoOfDisplay(_ reason: String) {
    guard let lost = display else { return }
    loop.unwatch(lost.descriptor)
    display = nil
    scaler = nil
    decodedScaler = nil
    review = nil
    log("display lost: \(reason); capturing without it")
    capabilityChanged(.fail(.display, reason))
  }

  /// Connector hot-plug by its status rather than by uevents: a status read without probing is one cheap
  /// ioctl, works for drivers that send no hot-plug uevent (bochs-drm on the virtual board), and needs no
  /// netlink socket, which the unit's `RestrictAddressFamilies=AF_UNIX` keeps out.
  /// Without a display, only a connector that became connected is opened at once (opening probes, which on
  /// real hardware reads EDID); one that stays connected but cannot be opened is left to the 5 s retry.
  private func checkConnector() {
    if let display {
      if !display.connectorConnected { letGoOfDisplay("\(display.path): \(display.connectorName) disconnected") }
      return
    }
    guard capabilities.gate.role(of: .display) != .unused else { return }
    let connected = DisplayProbe.connectedWithoutProbing(config.display.device)
    defer { connectorWasConnected = connected }
    if connected, !connectorWasConnected { retryDisplay() }
  }

  /// Opens the configured display again, if the configuration wants one and it is not there.
  private func retryDisplay() {
    // `device = none` makes the display unused (not fitted), so the gate's role says it all.
    guard display == nil, capabilities.gate.role(of: .display) != .unused else { return }
    guard let card = try? KMSDisplay(device: config.display.device) else { return }
    do {
      try loop.watch(card.descriptor) { [unowned self] _ in flipDone() }
    } catch {
      return
    }
    display = card
    // The display that comes back may be another one, with another mode: the overlay is laid out for its size.
    if let painter = overlay?.painter {
      overlay = Overlay(painter: painter, width: card.width, height: card.height)
    } else if let font = try? FontFile.load(config.display.font) {
      overlay = Overlay(painter: TextPainter(font: font), width: card.width, height: card.height)
    }
    fitPreview()
    capabilityChanged(CapabilityProbe.opened(.success(card)))
    show(kiosk.screen)
  }

  private func deviceNodeAppeared(directory: String, name: String) {
    if directory == "/dev/dri", name.hasPrefix("card") {
      retryDisplay()
      return
    }
    if directory == "/dev", name.hasPrefix("gpiochip") {
      // A moment for the chip to name its lines and for udev to give the node to the gpio group.
      try? buttonTimer?.arm(after: 200_000_000)
      return
    }
    guard camera == nil, directory != "/dev" || name.hasPrefix("video") else { return }
    let path = "\(directory)/\(name)"
    // Created and gone again (a camera that bounced on its connector) is not worth a try.
    guard FileStatus.exists(path) else { return }
    if nodeAppeared == nil {
      nodeAppeared = (path, now())
      log("\(path) appeared: trying the camera")
    }
    // A moment for the driver to finish registering and for udev to set the node's owner and mode; the 2 s
    // retry stays as the fallback.
    try? retryTimer?.arm(after: 100_000_000)
  }

  /// Re-probes the camera; `auto` looks again at every capture device, since a camera may come back as another node.
  private func retryCamera() {
    var found = cameraPath
    if config.camera.device == "auto" {
      let (result, camera) = CapabilityProbe.stillCamera(config)
      guard let info = camera else {
        if nodeAppeared != nil { log("camera not back yet: \(result.evidence)") }
        try? retryTimer?.arm(after: 2_000_000_000)
        return
      }
      found = info.path
    }
    do {
      camera = try Self.openCamera(found, config.camera)
      cameraPath = found
      try startCamera()
      guard camera != nil else { return }
      capabilityChanged(.pass(.stillCamera, "\(found): streaming again"))
      if capabilities.gate.role(of: .movieCamera) != .unused {
        capabilityChanged(CapabilityProbe.movieCamera(config, measure: false))
      }
      if let appeared = nodeAppeared {
        log("camera streaming \((now() - appeared.at).nanosecondsClamped / 1_000_000) ms after \(appeared.name) appeared")
      }
      nodeAppeared = nil
      handle(.cameraBack(at: now()))
    } catch {
      camera = nil
      if nodeAppeared != nil { log("camera not back yet: \(error)") }
      try? retryTimer?.arm(after: 2_000_000_000)
    }
  }

  private func capabilityChanged(_ result: ProbeResult) {
    for change in capabilities.update(result) { log(change.description) }
    handle(.available(availableModes(), at: now()))
  }

  private func perform(_ actions: [Action]) {
    for action in actions {
      switch action {
      case .saveStill(let frame, let pressedAt):
        saveStill(frame, pressedAt: pressedAt)
      case .discardStill(let name):
        do {
          try roll?.discard(name)
        } catch {
          log("retake: \(error)")
        }
        listRoll()
      case .deleteItem(let name):
        guard let roll else { break }
        if viewed?.path == name { viewed = nil }
        deleting.insert(name)
        let results = results
        writer.async {
          do {
            try roll.delete(name)
          } catch {
            log("delete \(name): \(error)")
          }
          results.post(.rollChanged(deleted: name))
        }
      case .startMovie(let time):
        startMovie(at: time)
      case .stopMovie(let time):
        stopMovie(at: time)
      case .nextCamera:
        nextCamera()
      case .show(let screen):
        show(screen)
      case .light(let output, let on):
        if output == .ready { readyLit = on }
        if output == .flash, let flashLamp {
          flashLamp.set(.flash, on)
          // When the lamp lit, on the frames' clock: the still's log line says how long after it the frame was.
          log("flash \(on ? "lit" : "dark") at \(now())")
        } else {
          extras?.set(output, on)
        }
      case .log(let message):
        log(message)
      case .zoom(let change):
        guard capabilities.verdict.usable.contains(.zoom) else {
          log("zoom \(change.rawValue) refused: zoom is off")
          continue
        }
        let control = zoom.controlValue
        if zoom.apply(change) {
          log("zoom \(zoom.label)" + (zoom.controlValue.map { " (camera control \($0))" } ?? ""))
          if let camera, let value = zoom.controlValue, value != control { setCameraZoom(value, on: camera) }
          fitPreview()
        }
      }
    }
  }

  private func saveStill(_ frame: FrameInfo, pressedAt: Instant) {
    guard let camera, let roll, let entry = ring.frame(frame) else {
      handle(.saveFailed(reason: "frame \(frame.sequence) no longer in the ring", at: now()))
      return
    }
    // The two frames around the press, from the driver's own timestamps: the log shows the choice was the nearer.
    let (before, after) = ring.neighbours(of: pressedAt)
    func offset(_ frame: FrameInfo?) -> String {
      frame.map { "\($0.sequence) at \(milliseconds($0.timestamp - pressedAt)) ms" } ?? "none"
    }
    log("press at \(pressedAt): frame before \(offset(before)), frame after \(offset(after)); saving \(frame.sequence)")
    let format = camera.format
    let still = StillFrame(
      format: format.format, width: format.width, height: format.height, bytesPerLine: format.bytesPerLine,
      range: format.range, bytes: entry.bytes)
    let controls = camera.exposureAndGain()
    let captured = WallClock.dateTime(atMonotonic: frame.timestamp)
    let uniqueID = WallClock.uniqueID()
    let orientation = ExifOrientation(mountingRotation: config.camera.rotation) ?? .normal
    let model = camera.card
    let quality = config.capture.jpegQuality
    let lag = milliseconds(frame.timestamp - pressedAt)
    let results = results
    let zoomCrop = stillZoomCrop(format)
    let digitalZoom = zoom.factor
    // Where the review picture must cover on the panel (as the source is oriented); nil: no review to show.
    let reviewCover: (Int, Int)? = scaler.flatMap { scaler in
      config.capture.review > .zero
        ? (scaler.orientation.swapsAxes
          ? (scaler.target.height, scaler.target.width) : (scaler.target.width, scaler.target.height)) : nil
    }
    writer.async {
      do {
        let encoded = try StillPipeline.encode(still, quality: quality, crop: zoomCrop)
        let metadata = ExifMetadata(
          make: "kioskcam", model: model, software: "kioskcam", captured: captured, orientation: orientation,
          pixelWidth: encoded.width, pixelHeight: encoded.height, uniqueID: uniqueID,
          exposure100Microseconds: controls.exposure100Microseconds, digitalZoomHundredths: digitalZoom)
        let file = try StillPipeline.withExif(encoded, metadata)
        let item = try roll.publish(file, kind: .still)
        let record = ItemRecord(
          mediaType: MediaKind.still.rawValue, file: item.relativePath, bytes: file.count, width: encoded.width,
          height: encoded.height, captured: captured.isoText, shutterLagMilliseconds: lag,
          sourceFormat: still.format.fourcc, crop: zoomCrop.map { "\($0.width)x\($0.height)+\($0.x)+\($0.y)" },
          frameSequence: frame.sequence,
          exposure100Microseconds: controls.exposure100Microseconds, gain: controls.gain, uniqueID: uniqueID)
        do {
          try roll.append(record)
        } catch {
          // The picture is whole and published; only its record is missing, and `roll list` still shows it.
          log("record of \(item.relativePath) not written: \(error)")
        }
        if let (width, height) = reviewCover {
          // Read back from the roll, so the review shows the file people will pull, not our memory of it.
          do {
            let saved = try OwnedFD(opening: "\(roll.root)/\(item.relativePath)", flags: O_RDONLY).readToEnd()
            let picture = try saved.withUnsafeBytes { try JPEGDecoder.decodeXRGB($0, covering: width, height) }
            results.post(.reviewPicture(item.relativePath, picture))
          } catch {
            log("review of \(item.relativePath): \(error)")
          }
        }
        results.post(.saved(item, frame, pressedAt: pressedAt))
      } catch {
        results.post(.failed("\(error)"))
      }
    }
  }

  private func startMovie(at time: Instant) {
    guard let camera, let roll else {
      handle(.movieFailed(reason: "no camera or no roll", at: now()))
      return
    }
    let format = camera.format
    do {
      let recorder = try MovieRecorder(
        roll: roll, width: format.width, height: format.height, frameRate: config.camera.frameRate,
        preset: config.movie.quality, sourceFormat: format.format.fourcc, passthrough: format.format == .mjpeg,
        tag: WallClock.uniqueID())
      self.recorder = recorder
      // The start on CLOCK_MONOTONIC, the clock of the frames: how much a crash lost can be told from the log.
      log(
        "movie recording \(format.format.fourcc) \(format.width)x\(format.height) as \(recorder.width)x\(recorder.height), "
          + "quality \(config.movie.quality.rawValue), from \(time)")
      try? storageTimer?.arm(after: 1_000_000_000)
    } catch {
      handle(.movieFailed(reason: "\(error)", at: now()))
    }
  }

  private func stopMovie(at time: Instant) {
    guard let recorder else { return }
    self.recorder = nil
    let results = results
    recorder.stop(at: time.nanoseconds) { result in
      switch result {
      case .success(let summary):
        Self.logMovie(result)
        results.post(.movieSaved(summary))
      case .failure(let error):
        results.post(.movieFailed("\(error)"))
      }
    }
  }

  /// Publishes what crashes left of recordings, before anything new is numbered.
  private static func recoverMovies(_ roll: CameraRoll) {
    for result in MovieRecorder.recoverInterrupted(roll) {
      switch result {
      case .success(let summary):
        logMovie(.success(summary), roll: roll)
      case .failure(let error):
        log("interrupted recording not recovered: \(error)")
      }
    }
  }

  /// Logs a published movie and appends its record (on the writer's thread: the record is fsynced).
  private static func logMovie(_ result: Result<MovieSummary, RollError>, roll: CameraRoll? = nil) {
    guard case .success(let movie) = result else {
      if case .failure(let error) = result { log("movie not saved: \(error)") }
      return
    }
    let seconds = (movie.seconds * 1000).rounded() / 1000
    log(
      "movie \(movie.item.relativePath) \(movie.recovered ? "recovered, " : "")frames \(movie.frames), dropped \(movie.dropped), \(seconds) s"
        + (movie.writeError.map { ", write failed: \($0) (kept up to the last fragment)" } ?? ""))
    let roll = roll ?? movie.roll
    var record = ItemRecord(
      mediaType: MediaKind.movie.rawValue, file: movie.item.relativePath, bytes: movie.bytes, width: movie.width,
      height: movie.height, captured: movie.captured, shutterLagMilliseconds: 0, sourceFormat: movie.sourceFormat,
      crop: nil, frameSequence: movie.firstSequence, exposure100Microseconds: nil, gain: nil,
      uniqueID: movie.uniqueID)
    record.frames = movie.frames
    record.droppedFrames = movie.dropped
    record.durationSeconds = seconds
    record.recovered = movie.recovered
    do {
      try roll.append(record)
    } catch {
      log("record of \(movie.item.relativePath) not written: \(error)")
    }
  }

  private func received(_ result: WorkerResult) {
    switch result {
    case .movieSaved(let movie):
      statistics.moviesSaved += 1
      handle(.movieSaved(name: movie.item.relativePath, at: now()))
      listRoll()
    case .movieFailed(let reason):
      statistics.saveFailures += 1
      handle(.movieFailed(reason: reason, at: now()))
    case .saved(let item, let frame, let pressedAt):
      let lag = frame.timestamp - pressedAt
      statistics.stillsSaved += 1
      statistics.lastShutterLag = lag
      countStillSize(item.relativePath)
      log("still \(item.relativePath) frame \(frame.sequence) shutter lag \(milliseconds(lag)) ms")
      handle(.stillSaved(name: item.relativePath, at: now()))
      listRoll()
    case .reviewPicture(let name, let picture):
      guard let scaler else { return }
      // The display's turn applies (it is how the panel is mounted), after the turn that stands the photo
      // upright (its Exif orientation, from the camera's mounting); the mirror does not: the file is not mirrored.
      let upright = (ExifOrientation(mountingRotation: config.camera.rotation) ?? .normal).uprightRotation
      let orientation = PreviewOrientation(rotation: (scaler.orientation.rotation + upright) % 360, mirror: false)
      review = (
        name,
        picture,
        LibYUVPreview(
          sourceWidth: picture.width, sourceHeight: picture.height, target: scaler.target, orientation: orientation)
      )
      return
    case .failed(let reason):
      statistics.saveFailures += 1
      handle(.saveFailed(reason: reason, at: now()))
    case .viewed(let item):
      guard item.full else {
        // The thumbnail, unless the photo itself is already on screen.
        guard case .browsing(let view) = kiosk.screen, view.item.path == item.path, viewed?.path != item.path else {
          return
        }
        viewed = item
        browse(view)
        return
      }
      if loading == item.path { loading = nil }
      let picture = item.fitted
      log(
        "review \(item.path): \(picture.sourceWidth)x\(picture.sourceHeight) decoded at 1/\(picture.picture.denominator)"
          + " to \(picture.picture.width)x\(picture.picture.height), shown at \(picture.scaler.target)")
      guard case .browsing(let view) = kiosk.screen, view.item.path == item.path else { return }
      viewed = item
      browse(view)
      return
    case .viewFailed(let path, let reason):
      if loading == path { loading = nil }
      log("review: \(path) not shown: \(reason)")
      return
    case .rollChanged(let deleted):
      deleting.remove(deleted)
      listRoll()
      return
    case .rollListed(let entries):
      rollListed(entries)
      return
    }
    checkStorage()
  }

  /// Tells the kiosk whether the roll is below its free-space reserve; the kiosk acts only on a change.
  ///
  /// These events carry a clock, and the kiosk decides button gestures by it. A check made for a press is
  /// told the press's own time: the press is not the kiosk's yet, and the edges queued behind it must not be
  /// overtaken (a clock 100 ms past a bounce's release, read late on a busy machine, decided a release while
  /// the next press edge waited, and one press became two photos). Any other check first hands the kiosk the
  /// edges the kernel already has, as `handle` does.
  private func checkStorage(atPress press: Instant? = nil) {
    guard let roll else { return }
    if press == nil { for lines in allLines { lines.drainPending() } }
    let time = press ?? now()
    // Is the storage still there at all (a card pulled, an unmount, a remount read-only)? Then free space,
    // from the same look at it.
    let facts = CapabilityProbe.rollFacts(config)
    let place = RollStorageCheck.evaluate(facts, roll: config.roll, spaceCounts: false)
    perform(kiosk.handle(.rollStorage(available: place.passed, detail: place.evidence, at: time)))
    guard place.passed else { return }
    guard let available = facts.availableBytes else {
      perform(kiosk.handle(.storage(full: true, detail: "\(roll.root): cannot read the free space", at: time)))
      return
    }
    spareBytes = available > config.roll.reserveBytes ? available - config.roll.reserveBytes : 0
    let detail = "\(available / 1_048_576) MiB free on \(roll.root), reserve \(config.roll.reserveMegabytes) MiB"
    perform(kiosk.handle(.storage(full: available < config.roll.reserveBytes, detail: detail, at: time)))
  }

  private func flipDone() {
    guard let display else { return }
    let before = display.flipsCompleted
    display.handleEvents()
    statistics.previewFramesShown += display.flipsCompleted - before
    if messageWaiting, !display.flipPending {
      messageWaiting = false
      if !showsPreview(kiosk.screen) { drawMessage() }
    }
    // A movie frame that found a flip pending is shown now rather than a frame period late.
    if let playback, playback.shown < 0 { playbackTick() }
  }

  private func show(_ screen: Screen) {
    log("screen: \(describe(screen))")
    if case .browsing(let view) = screen {
      browse(view)
      return
    }
    stopPlayback()
    viewed = nil
    guard display != nil else { return }
    if showsPreview(screen) {
      messageWaiting = false
    } else {
      drawMessage()
    }
  }

  private func drawMessage() {
    guard let display else { return }
    if case .browsing = kiosk.screen { return drawBrowsing() }
    let words: [String] =
      switch kiosk.screen {
      case .message(let text): [text]
      default: []
      }
    do {
      let drawn = try display.present { target in
        Overlay.drawMessage(words, background: Overlay.messageBackground, with: overlay, on: target)
      }
      if !drawn { messageWaiting = true }
    } catch {
      displayFailed(error)
    }
  }

  // MARK: Review mode

  /// Shows the item the kiosk selected: read and decoded on the viewer queue the first time, drawn from
  /// memory after that (a new position, the delete question); a movie plays from the playback timer.
  private func browse(_ view: BrowseView) {
    if let playback, !view.playing || playback.path != view.item.path { stopPlayback() }
    guard let display, let roll else { return }
    guard viewed?.path == view.item.path else {
      guard loading != view.item.path else { return }
      loading = view.item.path
      let (entry, results, width, height) = (view.item, results, display.width, display.height)
      let orientation = PreviewOrientation(rotation: config.display.rotation, mirror: false)
      viewer.async {
        do {
          let item = try RollViewer.load(
            entry, root: roll.root, screenWidth: width, screenHeight: height, orientation: orientation
          ) { results.post(.viewed($0)) }
          results.post(.viewed(item))
        } catch {
          results.post(.viewFailed(path: entry.path, reason: "\(error)"))
        }
      }
      return
    }
    if view.playing, playback == nil, let movie = viewed?.movie {
      do {
        let file = try OwnedFD(opening: "\(roll.root)/\(view.item.path)", flags: O_RDONLY | O_CLOEXEC)
        playback = Playback(path: view.item.path, index: movie, file: file, start: monotonicNanoseconds())
        log("playing \(view.item.path): \(movie.samples.count) frames, \(milliseconds(.nanoseconds(movie.duration))) ms")
        playbackTick()
      } catch {
        log("review: \(view.item.path) not played: \(error)")
        handle(.playbackEnded(at: now()))
      }
      return
    }
    if playback == nil { drawBrowsing() }
  }

  private func drawBrowsing() {
    guard let display, case .browsing(let view) = kiosk.screen, let viewed, viewed.path == view.item.path,
      playback == nil
    else { return }
    draw(viewed, view, frame: nil, on: display)
  }

  /// The item's picture (or a movie frame) fitted to the screen, with its words on top; true when drawn.
  @discardableResult
  private func draw(_ item: ViewedItem, _ view: BrowseView, frame: (FittedPicture, elapsed: Int64)?, on display: KMSDisplay) -> Bool {
    let name = String(item.path.split(separator: "/").last ?? "")
    var title = name
    if let movie = item.movie {
      title += frame.map { " \(RollViewer.length($0.elapsed)) / " } ?? " "
      title += RollViewer.length(movie.duration)
    }
    do {
      let drawn = try display.present { target in
        (frame?.0 ?? item.fitted).draw(into: target.pixels, width: target.width, height: target.height, stride: target.stride)
        overlay?.drawBrowse(view, title: title, date: item.date, on: target)
      }
      if !drawn, frame == nil { messageWaiting = true }
      return drawn
    } catch {
      displayFailed(error)
      return false
    }
  }

  /// Shows the movie's frame for this moment (skipping any the loop was too late for: always the one
  /// that is due now), then sleeps on the timer until the next one is due.
  private func playbackTick() {
    guard let playback, let display, let item = viewed, item.path == playback.path,
      case .browsing(let view) = kiosk.screen
    else { return }
    let samples = playback.index.samples
    let elapsed = monotonicNanoseconds() - playback.start
    guard elapsed < playback.index.duration else {
      stopPlayback()
      handle(.playbackEnded(at: now()))
      return
    }
    var due = playback.shown < 0 ? 0 : playback.shown
    while due + 1 < samples.count, samples[due + 1].time <= elapsed { due += 1 }
    if due != playback.shown || playback.shown < 0 {
      do {
        let jpeg = try playback.file.read(at: samples[due].offset, count: samples[due].size)
        let fitted = try jpeg.withUnsafeBytes { (bytes) throws(JPEGError) in
          try FittedPicture.decode(
            bytes, screenWidth: display.width, screenHeight: display.height,
            orientation: PreviewOrientation(rotation: config.display.rotation, mirror: false))
        }
        if draw(item, view, frame: (fitted, elapsed), on: display) { playback.shown = due }
      } catch {
        log("review: frame \(due) of \(playback.path): \(error)")
        playback.shown = due
      }
    }
    let next = due + 1 < samples.count ? samples[due + 1].time : playback.index.duration
    try? playbackTimer?.arm(after: max(1, next - (monotonicNanoseconds() - playback.start)))
  }

  private func stopPlayback() {
    guard playback != nil else { return }
    playback = nil
    playbackTimer?.disarm()
  }

  // MARK: Control socket

  private func answer(_ request: Result<ControlRequest, ControlRequestError>) -> String {
    switch request {
    case .failure(let error):
      return "error: \(error)"
    case .success(.status(let json)):
      return json ? status.json : status.text
    case .success(let request):
      let refusedBefore = kiosk.refusedPresses
      handle(.remote(request, at: now()))
      if case .mode(let wanted) = request, kiosk.mode != wanted {
        return "error: mode \(wanted.rawValue) is not available (available: \(offeredModes))"
      }
      if case .shutter = request, kiosk.refusedPresses > refusedBefore {
        return "error: shutter refused (see the log)"
      }
      return "ok"
    }
  }

  private var offeredModes: String {
    let modes = KioskMode.allCases.filter { kiosk.available.contains($0) }.map(\.rawValue)
    return modes.isEmpty ? "none" : modes.joined(separator: ", ")
  }

  private var status: ServiceStatus {
    ServiceStatus(
      mode: kiosk.mode.rawValue, screen: describe(kiosk.screen),
      availableModes: KioskMode.allCases.filter { kiosk.available.contains($0) }.map(\.rawValue),
      camera: camera?.path, cameraAvailable: kiosk.cameraAvailable, display: display?.path,
      framesReceived: counts.delivered, framesDamaged: counts.bad, framesMissing: counts.missing,
      previewFramesShown: statistics.previewFramesShown, previewDecodeFailures: statistics.previewDecodeFailures,
      stillsSaved: statistics.stillsSaved, moviesSaved: statistics.moviesSaved, recording: recorder != nil,
      saveFailures: statistics.saveFailures, refusedPresses: kiosk.refusedPresses,
      lastShutterLagMilliseconds: statistics.lastShutterLag.map(milliseconds),
      capabilities: capabilities.results.values.sorted { $0.capability < $1.capability }.map {
        .init(
          name: $0.capability.rawValue, role: capabilities.gate.role(of: $0.capability).rawValue, available: $0.passed,
          evidence: $0.evidence)
      },
      mediaTypes: capabilities.verdict.mediaTypes.map(\.rawValue), zoom: zoom.label, zoomMethod: zoom.method)
  }
}

/// A screen in the words the log and `status` use.
func describe(_ screen: Screen) -> String {
  switch screen {
  case .live(let mode): "live \(mode.rawValue)"
  case .countdown(let seconds): "countdown \(seconds)"
  case .reviewingPhoto(let name): "review \(name)"
  case .recording: "recording"
  case .browsing(let view):
    "browsing \(view.item.path) \(view.positionText)" + (view.playing ? " playing" : "")
      + (view.confirmingDelete ? " delete?" : "")
  case .message(let text): text
  }
}

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.nanosecondsClamped / 1000) / 1000
}
