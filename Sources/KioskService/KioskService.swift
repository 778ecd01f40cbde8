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
  private let buttons: [ButtonLines]
  private let roll: CameraRoll?
  private let results: Mailbox<WorkerResult>
  private let writer = DispatchQueue(label: "kioskcam.still-writer")
  private var ring = FrameRing(capacity: 4)
  private var signals: SignalWatcher?
  private var retryTimer: LoopTimer?
  private var cameraPath: String
  private var capabilities: CapabilityMonitor
  /// A message that found a flip pending: it is drawn when that flip completes, never dropped like a preview frame.
  private var messageWaiting = false
  private var framesSeen = 0
  private var damagedFrames = 0

  /// Probes and opens what the configuration wants; a missing required capability stops it here, one line each.
  public init(config: Config) throws(ServiceError) {
    self.config = config
    kiosk = Kiosk(debounce: config.buttons.debounce)
    do {
      loop = try EventLoop()
      results = try Mailbox()
    } catch {
      throw .io(error.description)
    }

    let gate = CapabilityGate(config.capabilities)
    var probed: [ProbeResult] = []
    func wanted(_ capability: Capability) -> Bool { gate.role(of: capability) != .unused }

    if wanted(.movieCamera) { probed.append(CapabilityProbe.movieCamera(config)) }
    var opened: CameraStream?
    cameraPath = config.camera.device
    if wanted(.stillCamera) {
      var (result, found) = CapabilityProbe.stillCamera(config)
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

    capabilities = CapabilityMonitor(gate: gate, results: probed)
    let verdict = capabilities.verdict
    guard verdict.canRun else {
      if let output { Self.showUntilExit(output, for: config.display.missingMessage) }
      throw .unavailable(verdict.fatal)
    }
    camera = opened
    buttons = lines
    roll = publishedRoll
    display = output
    // Each optional capability that is missing is said once, here; the feature stays off.
    for missing in verdict.disabled { log("\(missing.capability) off (optional): \(missing.evidence)") }
    let types = verdict.mediaTypes.map(\.rawValue).joined(separator: ", ")
    log("media types: \(types.isEmpty ? "none" : types)")
    if let output { log("display \(output.path) \(output.connectorName) \(output.width)x\(output.height)") }
  }

  /// The reasons stay in the log and on standard error; the screen shows that something is wrong for as long
  /// as configured, so a person at the kiosk is not left with a frozen picture.
  private static func showUntilExit(_ display: KMSDisplay, for duration: Duration) {
    guard duration > .zero else { return }
    // Words on screen arrive with the overlay; until then a message is a dark red screen.
    _ = try? display.present { target in
      for row in 0..<target.height {
        (target.pixels.baseAddress! + row * target.stride).assumingMemoryBound(to: UInt32.self)
          .update(repeating: 0x0050_1010, count: target.width)
      }
    }
    let (seconds, attoseconds) = duration.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
  }

  /// Runs until SIGINT or SIGTERM.
  public func run() throws(ServiceError) {
    do {
      signals = try SignalWatcher(loop: loop, signals: [SIGINT, SIGTERM]) { [loop] signal in
        log("signal \(signal): stopping")
        loop.stop()
      }
      try results.attach(to: loop) { [unowned self] result in received(result) }
      for lines in buttons {
        try lines.attach(to: loop) { [unowned self] edge in
          if edge.role == .shutter, edge.edge == .pressed, !capabilities.verdict.mediaTypes.contains(.stills),
            capabilities.isUsable(.stillCamera)
          {
            log("shutter refused: no camera roll to save stills in")
            return
          }
          perform(kiosk.handle(.button(edge.role, edge.edge, at: edge.time)))
        }
      }
      if let display {
        try loop.watch(display.descriptor) { [unowned self] _ in flipDone() }
      }
      retryTimer = try LoopTimer(loop: loop) { [unowned self] in retryCamera() }
      try startCamera()
      if camera == nil, capabilities.gate.role(of: .stillCamera) == .optional {
        // Optional and missing at start: the same screen and retries as a camera lost later, logged once above.
        perform(kiosk.handle(.cameraLost(reason: "not found at start")).filter { if case .log = $0 { false } else { true } })
        try? retryTimer?.arm(after: 2_000_000_000)
      }
      log("buttons: \(buttons.flatMap(\.descriptions).joined(separator: "; "))")
      if let roll {
        log("roll \(roll.root), next \(roll.next.map { "\($0.folderName(suffix: roll.suffix))/\($0.fileName(.still))" } ?? "none")")
      }
      log("ready")
      try loop.run()
    } catch {
      throw .io(error.description)
    }
    camera?.stop()
    writer.sync {}
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
      framesSeen += 1
      if buffer.damaged || buffer.bytesUsed < camera.format.bytesPerLine * camera.format.height {
        damagedFrames += 1
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
    perform(kiosk.handle(.frame(frame)))
    showPreview(frame)
  }

  /// Shows the freshest frame; while the last flip is still pending this frame is dropped from the preview only.
  private func showPreview(_ frame: FrameInfo) {
    guard let display, let scaler, let camera, kiosk.screen == .live, let entry = ring.frame(frame) else { return }
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

  private func cameraLost(_ reason: String) {
    guard let lost = camera else { return }
    loop.unwatch(lost.descriptor)
    camera = nil
    ring.removeAll()
    perform(kiosk.handle(.cameraLost(reason: reason)))
    capabilityChanged(.fail(.stillCamera, reason))
    if capabilities.gate.role(of: .movieCamera) != .unused { capabilityChanged(.fail(.movieCamera, reason)) }
    // Every old descriptor must be closed before the device can be opened again (vivid, uvcvideo).
    try? retryTimer?.arm(after: 2_000_000_000)
  }

  /// Re-probes the camera; `auto` looks again at every capture device, since a camera may come back as another node.
  private func retryCamera() {
    var found = cameraPath
    if config.camera.device == "auto" {
      guard let info = CapabilityProbe.stillCamera(config).camera else {
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
      log("camera back")
      perform(kiosk.handle(.cameraBack))
      capabilityChanged(.pass(.stillCamera, "\(found): streaming again"))
      if capabilities.gate.role(of: .movieCamera) != .unused { capabilityChanged(CapabilityProbe.movieCamera(config)) }
    } catch {
      camera = nil
      try? retryTimer?.arm(after: 2_000_000_000)
    }
  }

  private func capabilityChanged(_ result: ProbeResult) {
    for change in capabilities.update(result) { log(change.description) }
  }

  private func perform(_ actions: [Action]) {
    for action in actions {
      switch action {
      case .saveStill(let frame, let pressedAt):
        saveStill(frame, pressedAt: pressedAt)
      case .show(let screen):
        show(screen)
      case .log(let message):
        log(message)
      }
    }
  }

  private func saveStill(_ frame: FrameInfo, pressedAt: Instant) {
    guard let camera, let roll, let entry = ring.frame(frame) else {
      perform(kiosk.handle(.saveFailed(reason: "frame \(frame.sequence) no longer in the ring")))
      return
    }
    let format = camera.format
    let quality = config.capture.jpegQuality
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
      let lag = Double((frame.timestamp - pressedAt).nanosecondsClamped) / 1_000_000
      log("still \(item.relativePath) frame \(frame.sequence) shutter lag \(lag) ms")
      perform(kiosk.handle(.stillSaved(name: item.relativePath)))
    case .failed(let reason):
      perform(kiosk.handle(.saveFailed(reason: reason)))
    }
  }

  private func flipDone() {
    guard let display else { return }
    display.handleEvents()
    if messageWaiting, !display.flipPending {
      messageWaiting = false
      if case .message = kiosk.screen { drawMessage() }
    }
  }

  private func show(_ screen: Screen) {
    guard display != nil else { return }
    switch screen {
    case .live:
      messageWaiting = false
    case .message(let text):
      log("screen: \(text)")
      drawMessage()
    }
  }

  private func drawMessage() {
    guard let display else { return }
    // Words on screen arrive with the overlay; until then a message is a dark grey screen.
    do {
      let drawn = try display.present { target in
        for row in 0..<target.height {
          (target.pixels.baseAddress! + row * target.stride).assumingMemoryBound(to: UInt32.self)
            .update(repeating: 0x0030_3030, count: target.width)
        }
      }
      if !drawn { messageWaiting = true }
    } catch {
      log("display: \(error)")
    }
  }
}
