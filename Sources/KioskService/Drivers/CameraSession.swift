import Camera
import Capture
import Imaging
import KioskCore
import LinuxIO
import Preview

/// A frame from the ring with what a still or a movie needs to be made of it.
struct CapturedFrame {
  let frame: FrameInfo
  /// The ring's copy, shared, not copied again.
  let still: StillFrame
  /// The digital zoom's cut at this moment, and its factor in hundredths.
  let crop: PixelRect?
  let zoomFactor: Int
}

/// Where stills, movies and the preview read frames from: the camera session's ring and its format.
protocol FrameSource: AnyObject {
  /// Nil while no camera streams.
  var streamFormat: StreamFormat? { get }
  var zoom: Zoom { get }
  func bytes(of frame: FrameInfo) -> [UInt8]?
  func captured(_ frame: FrameInfo) -> CapturedFrame?
  /// The camera's name and its exposure and gain now, for a still's EXIF and record (ioctls: not per frame).
  func stillFacts() -> (card: String, controls: (exposure100Microseconds: Int?, gain: Int?))?
  /// The last frame before `instant` and the first at or after it, as far as the ring reaches.
  func neighbours(of instant: Instant) -> (before: FrameInfo?, after: FrameInfo?)
}

/// The camera: opened per the gate, cycled by the camera button, let go when it goes away and tried again
/// (at once when a capture node appears, else with backoff). Good frames go into the ring and are posted.
final class CameraSession: CameraDriver, FrameSource {
  private let config: Config
  private let loop: EventLoop
  private let post: (ServiceEvent) -> Void
  private let movieCameraWanted: Bool
  private let loopCPU: LoopCPU
  private let source: any CaptureSource
  private var camera: (any CaptureStream)?
  private(set) var path: String
  private var ring = FrameRing(capacity: Kiosk.recentFrameCount)
  private(set) var counts = FrameCounts()
  /// The zoom the zoom buttons and `kioskcam zoom` step: the camera's zoom control first, then the digital crop.
  private(set) var zoom: Zoom
  private var retryTimer: LoopTimer?
  /// The wait the retry timer was last armed with: what the unit tests read instead of waiting it out.
  private(set) var retryArmed: Duration?
  private var backoff = Intervals.cameraRetry
  /// When a capture node appeared while the camera was lost: the log says how long the return took.
  private var nodeAppeared: (name: String, at: Instant)?

  init(
    config: Config, opened: (any CaptureStream)?, path: String, movieCameraWanted: Bool, loopCPU: LoopCPU,
    source: any CaptureSource = V4L2CaptureSource(), loop: EventLoop, post: @escaping (ServiceEvent) -> Void
  ) throws(SystemCallError) {
    self.config = config
    self.source = source
    self.loopCPU = loopCPU
    self.loop = loop
    self.post = post
    self.movieCameraWanted = movieCameraWanted
    camera = opened
    self.path = path
    zoom = Zoom(maximum: config.capture.zoomMaximum, step: config.capture.zoomStep)
    retryTimer = try LoopTimer(loop: loop) { [unowned self] in retry() }
  }

  static func open(_ path: String, _ settings: Config.Camera) throws(CameraError) -> CameraStream {
    try CameraStream(path: path, format: settings.format, size: settings.size, frameRate: settings.frameRate)
  }

  var isStreaming: Bool { camera != nil }
  var streamFormat: StreamFormat? { camera?.format }

  /// Starts the camera opened at start; one optional and missing there gets the screen and retries of a
  /// camera lost later.
  func start(optionalAndMissing: Bool) throws(SystemCallError) {
    try startStreaming()
    if camera == nil, optionalAndMissing {
      post(.kiosk(.cameraLost(reason: "not found at start", at: now())))
      armRetry(after: backoff.take())
    }
  }

  func stop() {
    camera?.stop()
    log(counts.summary)
  }

  private func startStreaming() throws(SystemCallError) {
    guard let camera else { return }
    do {
      try camera.start()
    } catch {
      lost("\(error)")
      return
    }
    let format = camera.format
    log("camera \(camera.path) \(format.format.fourcc) \(format.width)x\(format.height) streaming")
    useZoomControl(of: camera)
    counts.lastSequence = nil
    post(.streamChanged)
    // POLLPRI and errors arrive too: a disconnect shows up as POLLERR|POLLHUP on the capture node.
    try loop.watch(camera.descriptor, for: [.readable, .priority]) { [unowned self] readiness in
      loopCPU.frame { ready(readiness) }
    }
  }

  // MARK: Frames

  /// True when a good frame was delivered. Called by the loop; the unit tests call it as the loop would.
  func ready(_ readiness: Readiness) -> Bool {
    guard let camera else { return false }
    if readiness.contains(.error) || readiness.contains(.hangUp) {
      lost("\(camera.path): the device reported an error (\(readiness))")
      return false
    }
    // One buffer per readiness: the loop is level-triggered and calls again while more are ready, and
    // libv4l2 prints a line to stderr for every DQBUF that finds none.
    guard readiness.contains(.readable) else { return false }
    let frame: FrameInfo
    do {
      guard let buffer = try camera.dequeue() else { return false }
      let (last, missingBefore) = (counts.lastSequence ?? 0, counts.missing)
      if counts.arrived(sequence: buffer.info.sequence) > 0, missingBefore == 0 {
        log("camera skipped frames (sequence \(last) to \(buffer.info.sequence)); counting")
      }
      let format = camera.format
      let problem = camera.withBytes(of: buffer) { bytes in
        FrameCheck.problem(
          with: bytes, flagged: buffer.damaged, format: format.format, bytesPerLine: format.bytesPerLine,
          height: format.height)
      }
      if let problem {
        counts.count(problem)
        if counts.bad == 1 { log("bad frame \(buffer.info.sequence): \(problem), not kept; counting") }
        try camera.requeue(buffer)
        return false
      }
      camera.withBytes(of: buffer) { bytes in ring.append(buffer.info, bytes) }
      frame = buffer.info
      try camera.requeue(buffer)
    } catch {
      lost("\(error)")
      return false
    }
    post(.cameraFrame(frame))
    return true
  }

  func bytes(of frame: FrameInfo) -> [UInt8]? { ring.frame(frame)?.bytes }

  func captured(_ frame: FrameInfo) -> CapturedFrame? {
    guard let camera, let entry = ring.frame(frame) else { return nil }
    let format = camera.format
    return CapturedFrame(
      frame: frame,
      still: StillFrame(
        format: format.format, width: format.width, height: format.height, bytesPerLine: format.bytesPerLine,
        range: format.range, bytes: entry.bytes),
      crop: zoom.pixelCrop(width: format.width, height: format.height), zoomFactor: zoom.factor)
  }

  func stillFacts() -> (card: String, controls: (exposure100Microseconds: Int?, gain: Int?))? {
    camera.map { ($0.card, $0.exposureAndGain()) }
  }

  func neighbours(of instant: Instant) -> (before: FrameInfo?, after: FrameInfo?) { ring.neighbours(of: instant) }

  // MARK: Zoom

  func zoom(_ change: ZoomChange) {
    let control = zoom.controlValue
    guard zoom.apply(change) else { return }
    log("zoom \(zoom.label)" + (zoom.controlSetting.map { " (\($0))" } ?? ""))
    if let camera, let value = zoom.controlValue, value != control { setZoomControl(value, on: camera) }
    post(.streamChanged)
  }

  /// A camera just opened: its own zoom control, if it has one, comes before the digital zoom, and is set to
  /// the zoom's step (a camera back from an unplug has forgotten it).
  private func useZoomControl(of camera: any CaptureStream) {
    zoom.useControl(camera.zoomControl)
    log("zoom method: \(zoom.method)")
    if let value = zoom.controlValue { setZoomControl(value, on: camera) }
  }

  /// Sets the camera's zoom control; one that fails is given up for this camera (digital zoom only, from 1.0x)
  /// rather than leaving the zoom's steps and the lens disagreeing.
  private func setZoomControl(_ value: Int, on camera: any CaptureStream) {
    do {
      try camera.setZoom(value)
    } catch {
      log("camera zoom control failed: \(error); digital zoom only")
      zoom.useControl(nil)
      post(.streamChanged)
    }
  }

  // MARK: Lost, cycled, back

  private func lost(_ reason: String) {
    guard let gone = camera else { return }
    loop.unwatch(gone.descriptor)
    camera = nil
    ring.removeAll()
    unavailable(reason)
  }

  /// Tells the kiosk, the supervisor and the gate that there is no camera, and retries.
  private func unavailable(_ reason: String) {
    post(.kiosk(.cameraLost(reason: reason, at: now())))
    post(.cameraUnavailable(reason))
    post(.capability(.fail(.stillCamera, reason)))
    if movieCameraWanted { post(.capability(.fail(.movieCamera, reason))) }
    // Every old descriptor must be closed before the device can be opened again (vivid, uvcvideo).
    backoff.reset()
    armRetry(after: backoff.take())
  }

  /// The `camera` button: closes this stream and opens the next configured camera; one that cannot be opened
  /// is skipped (logged), and if none can, the one before is opened again.
  func nextCamera() {
    let cycle = config.camera.cycle
    guard let current = cycle.firstIndex(of: path) ?? cycle.indices.first else { return }
    if let camera { loop.unwatch(camera.descriptor) }
    // The old stream's buffers and descriptor go before the next opens: two vivid instances would
    // coexist, but a USB camera pair on one hub often cannot stream at once.
    camera = nil
    ring.removeAll()
    for step in 1...cycle.count {
      let next = cycle[(current + step) % cycle.count]
      do {
        camera = try source.open(next, config.camera)
        path = next
        log("camera switched to \(next)")
        try startStreaming()
        return
      } catch {
        camera = nil
        log("camera \(next) skipped: \(error)")
      }
    }
    unavailable("no configured camera opens")
  }

  func nodeAppeared(directory: String, name: String) {
    guard camera == nil, directory != "/dev" || name.hasPrefix("video") else { return }
    let node = "\(directory)/\(name)"
    // Created and gone again (a camera that bounced on its connector) is not worth a try.
    guard FileStatus.exists(node) else { return }
    // The configured path itself restarts the clock: a camera named by its /dev/v4l/by-id link cannot be opened
    // before udev has made the link, which under load comes seconds after the node.
    if nodeAppeared == nil || (node == path && nodeAppeared?.name != node) {
      nodeAppeared = (node, now())
      log("\(node) appeared: trying the camera")
    }
    // The backoff stays as the fallback.
    armRetry(after: Intervals.cameraNodeSettle)
  }

  private func armRetry(after wait: Duration) {
    retryArmed = wait
    try? retryTimer?.arm(after: wait.timerNanoseconds)
  }

  /// Re-probes the camera; `auto` looks again at every capture device, since a camera may come back as another
  /// node. Run by the retry timer; the unit tests call it as the timer would.
  func retry() {
    var found = path
    if config.camera.device == "auto" {
      let (result, foundPath) = source.find(config)
      guard let foundPath else {
        if nodeAppeared != nil { log("camera not back yet: \(result.evidence)") }
        armRetry(after: backoff.take())
        return
      }
      found = foundPath
    }
    do {
      camera = try source.open(found, config.camera)
      path = found
      try startStreaming()
      guard camera != nil else { return }
      backoff.reset()
      post(.capability(.pass(.stillCamera, "\(found): streaming again")))
      if movieCameraWanted { post(.capability(source.movieCamera(config))) }
      if let appeared = nodeAppeared {
        log("camera streaming \((now() - appeared.at).nanosecondsClamped / 1_000_000) ms after \(appeared.name) appeared")
      }
      nodeAppeared = nil
      post(.kiosk(.cameraBack(at: now())))
    } catch {
      camera = nil
      if nodeAppeared != nil { log("camera not back yet: \(error)") }
      armRetry(after: backoff.take())
    }
  }
}


func now() -> Instant { Instant(nanoseconds: monotonicNanoseconds()) }
