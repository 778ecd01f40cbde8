import KioskCore

extension ServiceStatus {
  /// `kioskcam status`: the kiosk's state and each driver's counts, as they are now.
  init(
    dispatcher: Dispatcher, _ camera: CameraSession, _ display: DisplaySession, _ preview: ScreenSink,
    _ stills: StillWriter, _ movie: MovieSink, _ loopCPU: LoopCPU
  ) {
    let kiosk = dispatcher.kiosk
    let capabilities = dispatcher.capabilities
    let counts = camera.counts
    self.init(
      mode: kiosk.mode.rawValue, screen: describe(kiosk.screen),
      availableModes: KioskMode.allCases.filter { kiosk.available.contains($0) }.map(\.rawValue),
      camera: camera.isStreaming ? camera.path : nil, cameraAvailable: kiosk.cameraAvailable,
      display: display.card?.path, framesReceived: counts.delivered, framesDamaged: counts.bad,
      framesMissing: counts.missing, previewFramesShown: preview.framesShown,
      previewDecodeFailures: preview.decodeFailures, previewFramesSkipped: preview.skipped,
      previewWorkers: preview.workers,
      previewLatencyMedianMilliseconds: preview.latency.percentile(0.5).map { milliseconds(.nanoseconds($0)) },
      previewLatencyP99Milliseconds: preview.latency.percentile(0.99).map { milliseconds(.nanoseconds($0)) },
      loopCPUPerFrameMedianMilliseconds: loopCPU.perFrame.percentile(0.5).map { milliseconds(.nanoseconds($0)) },
      loopCPUPerFrameP99Milliseconds: loopCPU.perFrame.percentile(0.99).map { milliseconds(.nanoseconds($0)) },
      stillsSaved: stills.saved, moviesSaved: movie.saved,
      recording: movie.isRecording, saveFailures: stills.failures + movie.failures,
      refusedPresses: kiosk.refusedPresses, lastShutterLagMilliseconds: stills.lastShutterLag.map(milliseconds),
      capabilities: capabilities.results.values.sorted { $0.capability < $1.capability }.map {
        .init(
          name: $0.capability.rawValue, role: capabilities.gate.role(of: $0.capability).rawValue, available: $0.passed,
          evidence: $0.evidence)
      },
      mediaTypes: capabilities.verdict.mediaTypes.map(\.rawValue), zoom: camera.zoom.label,
      zoomMethod: camera.zoom.method)
  }
}
