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
import MediaFiles

/// Results that come back to the loop from the still writer.
enum WorkerResult: Sendable {
  case saved(RollItem, FrameInfo, pressedAt: Instant)
  case failed(String)
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
  private var scaler: PreviewScaler?
  private let buttons: ButtonLines
  private let roll: CameraRoll
  private let results: Mailbox<WorkerResult>
  private let writer = DispatchQueue(label: "kioskcam.still-writer")
  private var ring = FrameRing(capacity: Kiosk.recentFrameCount)
  private var signals: SignalWatcher?
  private var retryTimer: LoopTimer?
  private var cameraPath: String
  private var counts = FrameCounts()
  private var storageTimer: LoopTimer?

  /// Opens every device the configuration names; what is required and missing stops it here, with reasons.
  public init(config: Config) throws(ServiceError) {
    self.config = config
    kiosk = Kiosk(debounce: config.buttons.debounce)
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

    var lines: [(ButtonRole, LineReference)] = []
    if let shutter = config.buttons.shutter { lines.append((.shutter, shutter)) }
    if let mode = config.buttons.mode { lines.append((.mode, mode)) }
    var requested: ButtonLines?
    if lines.isEmpty {
      missing.append("shutter button: [buttons] shutter is none")
    } else {
      do {
        requested = try ButtonLines(
          chip: config.buttons.chip, lines: lines,
          wiring: ButtonWiring(activeLow: config.buttons.activeLow, bias: config.buttons.bias))
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
      try buttons.attach(to: loop) { [unowned self] edge in
        if edge.role == .shutter && edge.edge == .pressed { checkStorage() }
        perform(kiosk.handle(.button(edge.role, edge.edge, at: edge.time)))
      }
      if let display {
        try loop.watch(display.descriptor) { [unowned display] _ in display.handleEvents() }
      }
      retryTimer = try LoopTimer(loop: loop) { [unowned self] in retryCamera() }
      // Space freed over SSH shows up on screen without a press; a press also checks first.
      storageTimer = try LoopTimer(loop: loop) { [unowned self] in
        checkStorage()
        try? storageTimer?.arm(after: 5_000_000_000)
      }
      try storageTimer?.arm(after: 5_000_000_000)
      checkStorage()
      try startCamera()
      log("buttons: \(buttons.descriptions.joined(separator: "; "))")
      log("roll \(roll.root), next \(roll.next.map { "\($0.folderName(suffix: roll.suffix))/\($0.fileName(.still))" } ?? "none")")
      log("ready")
      try loop.run()
    } catch {
      throw .io(error.description)
    }
    camera?.stop()
    writer.sync {}
    log(counts.summary)
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
    counts.lastSequence = nil
    if format.format == .mjpeg, display != nil {
      log("preview off: MJPEG frames are saved as they come but not yet decoded for the display")
    }
    if let display, format.format != .mjpeg {
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
        if counts.flaggedError + counts.short + counts.truncated == 1 { log("bad frame \(buffer.info.sequence): \(problem), not kept; counting") }
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
    guard let display, let scaler, let camera, kiosk.screen == .live, let entry = ring.frame(frame) else { return }
    let stride = camera.format.bytesPerLine
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
    // Every old descriptor must be closed before the device can be opened again (vivid, uvcvideo).
    try? retryTimer?.arm(after: 2_000_000_000)
  }

  private func retryCamera() {
    do {
      camera = try Self.openCamera(cameraPath, config.camera)
      try startCamera()
      log("camera back")
      perform(kiosk.handle(.cameraBack))
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
      case .show(let screen):
        show(screen)
      case .log(let message):
        log(message)
      }
    }
  }

  private func saveStill(_ frame: FrameInfo, pressedAt: Instant) {
    guard let camera, let entry = ring.frame(frame) else {
      perform(kiosk.handle(.saveFailed(reason: "frame \(frame.sequence) no longer in the ring")))
      return
    }
    // The two frames around the press, from the driver's own timestamps: the log shows the choice was the nearer.
    let (before, after) = ring.neighbours(of: pressedAt)
    func offset(_ frame: FrameInfo?) -> String {
      frame.map { "\($0.sequence) at \(Double(($0.timestamp - pressedAt).nanosecondsClamped) / 1_000_000) ms" } ?? "none"
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
    let lag = Double((frame.timestamp - pressedAt).nanosecondsClamped) / 1_000_000
    let roll = roll
    let results = results
    writer.async {
      do {
        let encoded = try StillPipeline.encode(still, quality: quality)
        let metadata = ExifMetadata(
          make: "kioskcam", model: model, software: "kioskcam", captured: captured, orientation: orientation,
          pixelWidth: encoded.width, pixelHeight: encoded.height, uniqueID: uniqueID,
          exposure100Microseconds: controls.exposure100Microseconds)
        let file = try StillPipeline.withExif(encoded, metadata)
        let item = try roll.publish(file, kind: .still)
        let record = ItemRecord(
          mediaType: MediaKind.still.rawValue, file: item.relativePath, bytes: file.count, width: encoded.width,
          height: encoded.height, captured: captured.isoText, shutterLagMilliseconds: lag,
          sourceFormat: still.format.fourcc, crop: nil, frameSequence: frame.sequence,
          exposure100Microseconds: controls.exposure100Microseconds, gain: controls.gain, uniqueID: uniqueID)
        do {
          try roll.append(record)
        } catch {
          // The picture is whole and published; only its record is missing, and `roll list` still shows it.
          log("record of \(item.relativePath) not written: \(error)")
        }
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
    checkStorage()
  }

  /// Tells the kiosk whether the roll is below its free-space reserve; the kiosk acts only on a change.
  private func checkStorage() {
    let reserve = config.roll.freeSpaceReserveBytes
    guard let available = roll.availableBytes else {
      perform(kiosk.handle(.storage(full: true, detail: "\(roll.root): cannot read the free space")))
      return
    }
    let detail = "\(available / 1_048_576) MiB free on \(roll.root), reserve \(config.roll.freeSpaceReserveMiB) MiB"
    perform(kiosk.handle(.storage(full: available < reserve, detail: detail)))
  }

  private func show(_ screen: Screen) {
    guard let display else { return }
    switch screen {
    case .live:
      break
    case .message(let text):
      log("screen: \(text)")
      // Words on screen arrive with the overlay; until then a message is a dark grey screen.
      _ = try? display.present { target in
        for row in 0..<target.height {
          (target.pixels.baseAddress! + row * target.stride).assumingMemoryBound(to: UInt32.self)
            .update(repeating: 0x0030_3030, count: target.width)
        }
      }
    }
  }
}
