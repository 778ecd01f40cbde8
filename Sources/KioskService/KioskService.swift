#if canImport(Glibc)
  import Glibc
#endif
import Buttons
import Camera
import CameraRoll
import Dispatch
import Display
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO

/// Results that come back to the loop from the still writer.
enum WorkerResult: Sendable {
  case saved(RollItem, FrameInfo, pressedAt: Instant)
  case failed(String)
}

/// The service: one event loop around the devices, carrying out what the pure `Kiosk` decides.
public final class KioskService {
  private let config: Config
  private let loop: EventLoop
  private var kiosk: Kiosk
  private var camera: CameraStream?
  private var display: KMSDisplay?
  private var scaler: PreviewScaler?
  private let buttons: ButtonLines
  private let roll: CameraRoll
  private let results: Mailbox<WorkerResult>
  private let writer = DispatchQueue(label: "kioskcam.still-writer")
  private var ring = FrameRing(capacity: Kiosk.recentFrameCount)
  private var signals: SignalWatcher?
  private var retryTimer: LoopTimer?
  private var kioskTimer: LoopTimer?
  private var control: ControlServer?
  private var cameraPath: String
  private var statistics = Statistics()

  /// Counters for `kioskcam status`, since the service started.
  struct Statistics {
    var framesReceived = 0
    var framesDamaged = 0
    var previewFramesShown = 0
    var stillsSaved = 0
    var saveFailures = 0
    var lastShutterLag: Duration?
  }

  /// Opens every device the configuration names; what is required and missing stops it here, with reasons.
  public init(config: Config) throws(ServiceError) {
    self.config = config
    kiosk = Kiosk(
      settings: KioskSettings(
        gestures: config.buttons.timing, countdown: config.capture.countdown, review: config.capture.review,
        movieMaximum: config.movie.maximumDuration))
    do {
      loop = try EventLoop()
      results = try Mailbox()
    } catch {
      throw .io(error.description)
    }

    var missing: [String] = []
    cameraPath = config.camera.device
    if cameraPath == "auto" {
      if let first = CameraProbe.list().first(where: \.streaming) {
        cameraPath = first.path
      } else {
        missing.append("camera: no V4L2 capture device that can stream (probed /dev/video*)")
      }
    }
    var opened: CameraStream?
    if missing.isEmpty {
      do {
        opened = try Self.openCamera(cameraPath, config.camera)
      } catch {
        missing.append("camera: \(error)")
      }
    }

    var requested: ButtonLines?
    if config.buttons.shutter == nil {
      missing.append("shutter button: [buttons] shutter is none")
    } else {
      do {
        requested = try ButtonLines(
          chip: config.buttons.chip, lines: config.buttons.lines,
          wiring: ButtonWiring(activeLow: config.buttons.activeLow, bias: config.buttons.bias),
          outputs: config.outputs.lines, outputsActiveLow: config.outputs.activeLow)
      } catch {
        missing.append("buttons: \(error)")
      }
    }

    var publishedRoll: CameraRoll?
    do {
      publishedRoll = try CameraRoll(root: config.roll.path, suffix: config.roll.folderSuffix)
    } catch {
      missing.append("camera roll: \(error)")
    }

    guard missing.isEmpty, let requested, let publishedRoll else { throw .unavailable(missing) }
    camera = opened
    buttons = requested
    roll = publishedRoll

    if config.display.device != "none" {
      do {
        let output = try KMSDisplay(device: config.display.device)
        display = output
        log("display \(output.path) \(output.connectorName) \(output.width)x\(output.height)")
      } catch {
        // Without a display the kiosk still takes pictures: the preview is off, and the log says why, once.
        log("display off: \(error)")
      }
    }
  }

  /// Runs until SIGINT or SIGTERM.
  public func run() throws(ServiceError) {
    do {
      signals = try SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM]) { [loop] signal in
        log("signal \(signal): stopping")
        loop.stop()
      }
      try results.attach(to: loop) { [unowned self] result in received(result) }
      try buttons.attach(to: loop) { [unowned self] edge in handle(.edge(edge.role, edge.edge, at: edge.time)) }
      if let display {
        try loop.watch(display.descriptor) { [unowned self, unowned display] _ in
          let before = display.flipsCompleted
          display.handleEvents()
          statistics.previewFramesShown += display.flipsCompleted - before
        }
      }
      retryTimer = try LoopTimer(loop: loop) { [unowned self] in retryCamera() }
      kioskTimer = try LoopTimer(loop: loop) { [unowned self] in handle(.tick(now())) }
      control = try ControlServer(path: config.control.socket, group: config.control.group, loop: loop) {
        [unowned self] request in answer(request)
      }
      try startCamera()
      log("buttons: \(buttons.descriptions.joined(separator: "; "))")
      log("roll \(roll.root), next \(roll.next.map { "\($0.folderName(suffix: roll.suffix))/\($0.fileName(.still))" } ?? "none")")
      log("control socket \(config.control.socket)")
      // Movies and review mode come with their recorder and browser; until then only stills are offered.
      handle(.available([.still], at: now()))
      log("ready")
      try loop.run()
    } catch {
      throw .io(error.description)
    }
    camera?.stop()
    writer.sync {}
  }

  private func now() -> Instant { Instant(nanoseconds: monotonicNanoseconds()) }

  /// Every event goes through here: the kiosk decides, the service carries it out, the timer follows.
  private func handle(_ event: Event) {
    // Edges the kernel already has come first, in their own order, so the clock never overtakes them.
    if case .edge = event {} else { buttons.drainPending() }
    perform(kiosk.handle(event))
    if let deadline = kiosk.nextDeadline {
      try? kioskTimer?.arm(after: max(1, deadline.nanoseconds - monotonicNanoseconds()))
    } else {
      kioskTimer?.disarm()
    }
  }

  private static func openCamera(_ path: String, _ settings: Config.Camera) throws(CameraError) -> CameraStream {
    guard settings.format == .yuyv else {
      throw .unsupported("format \(settings.format.fourcc) is not handled yet; use yuyv")
    }
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
    if let display {
      scaler = PreviewScaler(
        sourceWidth: format.width, sourceHeight: format.height,
        target: .aspectFit(sourceWidth: format.width, sourceHeight: format.height, into: display.width, display.height))
    }
    // POLLPRI and errors arrive too: a disconnect shows up as POLLERR|POLLHUP on the capture node.
    try loop.watch(camera.descriptor, for: [.readable, .priority]) { [unowned self] readiness in
      cameraReady(readiness)
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
      statistics.framesReceived += 1
      if buffer.damaged || buffer.bytesUsed < camera.format.bytesPerLine * camera.format.height {
        statistics.framesDamaged += 1
        try camera.requeue(buffer)
        return
      }
      camera.withBytes(of: buffer) { bytes in ring.append(buffer.info, bytes) }
      frame = buffer.info
      try camera.requeue(buffer)
    } catch {
      cameraLost("\(error)")
      return
    }
    handle(.frame(frame))
    showPreview(frame)
  }

  /// Shows the freshest frame; while the last flip is still pending this frame is dropped from the preview only.
  private func showPreview(_ frame: FrameInfo) {
    guard let display, let scaler, let camera, showsPreview(kiosk.screen), let entry = ring.frame(frame) else { return }
    let stride = camera.format.bytesPerLine
    do {
      try display.present { target in
        scaler.clearBorders(target.pixels, width: target.width, height: target.height, destinationStride: target.stride)
        entry.bytes.withUnsafeBytes { source in
          scaler.drawYUYV(source, stride: stride, into: target.pixels, destinationStride: target.stride)
        }
      }
    } catch {
      log("display: \(error)")
    }
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
    handle(.cameraLost(reason: reason, at: now()))
    // Every old descriptor must be closed before the device can be opened again (vivid, uvcvideo).
    try? retryTimer?.arm(after: 2_000_000_000)
  }

  private func retryCamera() {
    do {
      camera = try Self.openCamera(cameraPath, config.camera)
      try startCamera()
      handle(.cameraBack(at: now()))
    } catch {
      camera = nil
      try? retryTimer?.arm(after: 2_000_000_000)
    }
  }

  private func perform(_ actions: [Action]) {
    for action in actions {
      switch action {
      case .saveStill(let frame, let pressedAt):
        saveStill(frame, pressedAt: pressedAt)
      case .discardStill(let name):
        do {
          try roll.discard(name)
        } catch {
          log("retake: \(error)")
        }
      case .startMovie, .stopMovie:
        // Movie mode is not offered until the recorder exists, so the kiosk never asks; say so if it does.
        log("movies are not recorded yet")
      case .show(let screen):
        show(screen)
      case .light(let output, let on):
        buttons.set(output, on)
      case .log(let message):
        log(message)
      }
    }
  }

  private func saveStill(_ frame: FrameInfo, pressedAt: Instant) {
    guard let camera, let entry = ring.frame(frame) else {
      handle(.saveFailed(reason: "frame \(frame.sequence) no longer in the ring", at: now()))
      return
    }
    let format = camera.format
    let quality = config.capture.jpegQuality
    let roll = roll
    let results = results
    writer.async {
      do {
        let planes = entry.bytes.withUnsafeBytes { bytes in
          PlanarYUV422(
            yuyv: bytes, width: format.width, height: format.height, stride: format.bytesPerLine, range: format.range)
        }
        let jpeg = try JPEGEncoder.encode(planes, quality: quality)
        let item = try roll.publish(jpeg, kind: .still)
        results.post(.saved(item, frame, pressedAt: pressedAt))
      } catch {
        results.post(.failed("\(error)"))
      }
    }
  }

  private func received(_ result: WorkerResult) {
    switch result {
    case .saved(let item, let frame, let pressedAt):
      let lag = frame.timestamp - pressedAt
      statistics.stillsSaved += 1
      statistics.lastShutterLag = lag
      log("still \(item.relativePath) frame \(frame.sequence) shutter lag \(milliseconds(lag)) ms")
      handle(.stillSaved(name: item.relativePath, at: now()))
    case .failed(let reason):
      statistics.saveFailures += 1
      handle(.saveFailed(reason: reason, at: now()))
    }
  }

  private func show(_ screen: Screen) {
    log("screen: \(describe(screen))")
    guard let display, !showsPreview(screen) else { return }
    // Words on screen arrive with the overlay; until then a message or the browser is a dark grey screen.
    _ = try? display.present { target in
      for row in 0..<target.height {
        (target.pixels.baseAddress! + row * target.stride).assumingMemoryBound(to: UInt32.self)
          .update(repeating: 0x0030_3030, count: target.width)
      }
    }
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
        return "error: mode \(wanted.rawValue) is not available (available: \(availableModes))"
      }
      if case .shutter = request, kiosk.refusedPresses > refusedBefore {
        return "error: shutter refused (see the log)"
      }
      return "ok"
    }
  }

  private var availableModes: String {
    KioskMode.allCases.filter { kiosk.available.contains($0) }.map(\.rawValue).joined(separator: ", ")
  }

  private var status: ServiceStatus {
    ServiceStatus(
      mode: kiosk.mode.rawValue, screen: describe(kiosk.screen),
      availableModes: KioskMode.allCases.filter { kiosk.available.contains($0) }.map(\.rawValue),
      camera: camera?.path, cameraAvailable: kiosk.cameraAvailable, display: display?.path,
      framesReceived: statistics.framesReceived, framesDamaged: statistics.framesDamaged,
      previewFramesShown: statistics.previewFramesShown, stillsSaved: statistics.stillsSaved,
      saveFailures: statistics.saveFailures, refusedPresses: kiosk.refusedPresses,
      lastShutterLagMilliseconds: statistics.lastShutterLag.map(milliseconds))
  }
}

/// A screen in the words the log and `status` use.
func describe(_ screen: Screen) -> String {
  switch screen {
  case .live(let mode): "live \(mode.rawValue)"
  case .countdown(let seconds): "countdown \(seconds)"
  case .reviewingPhoto(let name): "review \(name)"
  case .recording: "recording"
  case .browsing: "browsing"
  case .message(let text): text
  }
}

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.nanosecondsClamped / 1000) / 1000
}
