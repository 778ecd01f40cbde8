import FoundationEssentials

/// What `kioskcam status` reports about the running service.
struct ServiceStatus: Codable, Sendable, Equatable {
  let mode: String
  let screen: String
  let availableModes: [String]
  let camera: String?
  let cameraAvailable: Bool
  let display: String?
  let framesReceived: Int
  let framesDamaged: Int
  /// Frames the driver's sequence numbers say were never delivered.
  let framesMissing: Int
  let previewFramesShown: Int
  /// MJPEG frames the preview could not decode (the stills from them are judged on their own).
  let previewDecodeFailures: Int
  /// Frames handed to the preview's workers and never shown: a newer one replaced them, or no buffer was free.
  let previewFramesSkipped: Int
  let previewWorkers: Int
  /// From a frame's V4L2 timestamp to the vblank of the flip that showed it, over the last 512 shown.
  let previewLatencyMedianMilliseconds: Double?
  let previewLatencyP99Milliseconds: Double?
  /// The loop thread's own CPU time per camera frame (dequeue, copy, hand-over, flip), over the last 512.
  let loopCPUPerFrameMedianMilliseconds: Double?
  let loopCPUPerFrameP99Milliseconds: Double?
  let stillsSaved: Int
  let moviesSaved: Int
  /// A movie is being recorded now.
  let recording: Bool
  let saveFailures: Int
  let refusedPresses: Int
  let lastShutterLagMilliseconds: Double?
  /// Each capability the configuration wants, with its role and the evidence of its last probe.
  let capabilities: [CapabilityState]
  let mediaTypes: [String]
  /// The zoom now ("1.0x", "2.5x", "optical 3/6") and how it is done ("digital to 4.0x", "camera control
  /// 100..500 in 6 steps, then digital to 4.0x").
  let zoom: String
  let zoomMethod: String

  struct CapabilityState: Codable, Sendable, Equatable {
    let name: String
    let role: String
    let available: Bool
    let evidence: String
  }

  var json: String { JSONOutput.text(self) ?? "{}" }

  private func milliseconds(_ value: Double?) -> String { value.map { "\($0) ms" } ?? "-" }

  var text: String {
    """
    mode: \(mode) (available: \(availableModes.joined(separator: ", ")))
    screen: \(screen)
    camera: \(camera ?? "none")\(cameraAvailable ? "" : " (not available)")
    display: \(display ?? "none")
    frames: \(framesReceived) received, \(framesDamaged) damaged, \(framesMissing) missing, \(previewFramesShown) shown, \(previewFramesSkipped) skipped by the preview
    preview: \(previewWorkers) workers, latency \(milliseconds(previewLatencyMedianMilliseconds)) median, \(milliseconds(previewLatencyP99Milliseconds)) p99; loop \(milliseconds(loopCPUPerFrameMedianMilliseconds)) CPU a frame (p99 \(milliseconds(loopCPUPerFrameP99Milliseconds)))
    stills: \(stillsSaved) saved, movies: \(moviesSaved) saved\(recording ? ", recording now" : ""), \(saveFailures) failed, \(refusedPresses) presses refused
    last shutter lag: \(lastShutterLagMilliseconds.map { "\($0) ms" } ?? "none yet")
    zoom: \(zoom) (\(zoomMethod))
    media types: \(mediaTypes.isEmpty ? "none" : mediaTypes.joined(separator: ", "))
    capabilities:
    \(capabilities.map { "  \($0.name) (\($0.role)): \($0.available ? "ok" : "missing"): \($0.evidence)" }.joined(separator: "\n"))
    """
  }
}
