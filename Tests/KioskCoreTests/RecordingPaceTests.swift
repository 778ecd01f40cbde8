import KioskCore
import Testing

/// The movie's pace against the viewfinder, with the figures the board gave (docs/performance.md): a
/// 640x360 preview at 30 frames a second that shows 26 of them idle under the Pi-class quota.
@Suite struct RecordingPaceTests {
  /// A service fed window by window: the counters run on as a real service's would.
  struct Service {
    var pace = RecordingPace(cameraRate: 30)
    var now = Instant(seconds: 100, nanoseconds: 0)
    var shown = 0
    var cpu = Duration.zero
    var movieCPU = Duration.zero
    var log: [String] = []

    /// One second: the camera's 30 frames offered to the movie while recording (taken ones counted), the
    /// preview showing `shown`, the service using `cores`, each frame the movie took costing `frame`.
    /// Returns the frames the movie took.
    @discardableResult
    mutating func second(shown: Int, cores: Double, frame: Duration = .milliseconds(20), recording: Bool = true) -> Int {
      if pace.windowDue(at: now) { sample(recording: recording) }
      var taken = 0
      for _ in 0..<30 where recording && pace.take() { taken += 1 }
      now = now + .seconds(1)
      self.shown += shown
      cpu += .milliseconds(Int64(cores * 1000))
      movieCPU += frame * taken
      sample(recording: recording)
      return taken
    }

    mutating func sample(recording: Bool) {
      let change = pace.observe(
        RecordingPace.Sample(
          at: now, previewShown: shown, previewLive: true, serviceCPU: cpu, movieCPU: recording ? movieCPU : .zero))
      if let change { log.append(change) }
    }

    mutating func idle(seconds: Int, shown: Int = 26, cores: Double = 0.45) {
      for _ in 0..<seconds { second(shown: shown, cores: cores, recording: false) }
    }

    /// A movie of three seconds on two cores, at the camera's rate: it has taught the pace a frame's cost, 20 ms.
    static func afterAMovieOnTwoCores() -> Service {
      var service = Service()
      service.idle(seconds: 4)
      _ = service.pace.start(budget: 2)
      for _ in 0..<3 { service.second(shown: 26, cores: 1.05) }
      service.pace.stop()
      return service
    }

    /// Four idle seconds, a recording started on 0.54 of a core with no frame's cost known (so at the camera's
    /// rate), and its first window, which only measures.
    static func recordingOnAQuota() -> Service {
      var service = Service()
      service.idle(seconds: 4)
      _ = service.pace.start(budget: 0.54)
      service.second(shown: 26, cores: 0.54, frame: .zero)
      return service
    }
  }

  @Test func withNothingMeasuredTheMovieTakesEveryFrame() {
    var service = Service()
    let start = service.pace.start(budget: 2)
    #expect(start.contains("the camera's") && start.contains("no idle preview measured"), "\(start)")
    #expect(service.second(shown: 26, cores: 1.0) == 30)
  }

  @Test func aMachineWithCoresToSpareRecordsEveryFrameAndLearnsAFramesCost() {
    var service = Service()
    service.idle(seconds: 4)
    #expect(service.pace.start(budget: 2).contains("not known yet"))
    for _ in 0..<5 { #expect(service.second(shown: 26, cores: 1.05) == 30) }
    #expect(service.pace.costPerFrame == .milliseconds(20))
    service.pace.stop()
    service.idle(seconds: 4)
    // (2 × 0.9 − 0.45) / 20 ms: 67 frames a second would fit; the camera sends 30.
    #expect(service.pace.start(budget: 2).contains("30 of 30 frames a second to start"))
    #expect(service.second(shown: 26, cores: 1.05) == 30)
  }

  @Test func underAQuotaTheIdlePreviewAlmostFillsTheMovieStartsAtWhatIsLeft() {
    var service = Service.afterAMovieOnTwoCores()
    // The same service on 0.54 of a core, its preview using 0.45 of it idle: (0.486 − 0.45) / 20 ms is under
    // two frames a second; one it is, spread over the second.
    service.idle(seconds: 4, shown: 26, cores: 0.45)
    let start = service.pace.start(budget: 0.54)
    #expect(start.contains("1 of 30 frames a second to start"), "\(start)")
    #expect(service.second(shown: 26, cores: 0.47) == 1)
    service.pace.stop()
    // The idle preview spending the whole quota: nothing left, the slowest pace, a frame every four seconds.
    service.idle(seconds: 4, shown: 26, cores: 0.52)
    let nothingLeft = service.pace.start(budget: 0.54)
    #expect(nothingLeft.contains("0.25 of 30 frames a second to start"), "\(nothingLeft)")
    var taken = 0
    for _ in 0..<8 { taken += service.second(shown: 26, cores: 0.54) }
    #expect(taken == 2, "\(service.log)")
  }

  @Test func aShortPreviewHalvesTheMovieOnlyWhileTheCPUIsSpent() {
    var service = Service.recordingOnAQuota()
    service.second(shown: 12, cores: 0.3, frame: .zero)
    #expect(service.pace.rate == 30, "\(service.log)")
    service.second(shown: 12, cores: 0.54, frame: .zero)
    #expect(service.pace.rate == 15, "\(service.log)")
    #expect(service.log.last?.contains("preview 12 a second of 26 idle") == true, "\(service.log)")
    service.second(shown: 12, cores: 0.54, frame: .zero)
    #expect(service.pace.rate == 7.5)
    // 7.5 a second: seven or eight of a second's 30 frames, by where the count stands.
    #expect((7...8).contains(service.second(shown: 26, cores: 0.5, frame: .zero)))
  }

  @Test func aFullPreviewForTwoWindowsWithCPUToSpareLetsTheMovieTakeAQuarterMore() {
    var service = Service.recordingOnAQuota()
    service.second(shown: 10, cores: 0.54, frame: .zero)
    service.second(shown: 10, cores: 0.54, frame: .zero)
    #expect(service.pace.rate == 7.5)
    // The preview at its idle rate, but the quota all spent: nothing to take more with.
    for _ in 0..<3 { service.second(shown: 26, cores: 0.52, frame: .zero) }
    #expect(service.pace.rate == 7.5, "\(service.log)")
    service.second(shown: 26, cores: 0.3, frame: .zero)
    #expect(service.pace.rate == 7.5)
    service.second(shown: 26, cores: 0.3, frame: .zero)
    #expect(service.pace.rate == 9.375)
    // A window in between (at 95% of idle) holds the rate and starts the count again.
    service.second(shown: 25, cores: 0.3, frame: .zero)
    service.second(shown: 26, cores: 0.3, frame: .zero)
    #expect(service.pace.rate == 9.375)
  }

  @Test func theMovieTakesEvenlySpreadFrames() {
    var service = Service.recordingOnAQuota()
    service.second(shown: 10, cores: 0.54, frame: .zero)
    #expect(service.pace.rate == 15)
    var pattern = ""
    for _ in 0..<12 { pattern += service.pace.take() ? "x" : "." }
    #expect(pattern == ".x.x.x.x.x.x" || pattern == "x.x.x.x.x.x.", "\(pattern)")
  }

  @Test func withoutAViewfinderTheMovieKeepsTheCamerasRateOnAQuota() {
    var service = Service.afterAMovieOnTwoCores()
    // The display gone: nothing shown while idle, the whole quota spent.
    service.idle(seconds: 4, shown: 0, cores: 0.54)
    let start = service.pace.start(budget: 0.54)
    #expect(start.contains("30 frames a second, the camera's (no preview shown)"), "\(start)")
    #expect(service.second(shown: 0, cores: 0.54) == 30)
  }

  @Test func idleWindowsAwayFromTheLivePictureAreNoBaseline() {
    var pace = RecordingPace(cameraRate: 30)
    var at = Instant(seconds: 1, nanoseconds: 0)
    for second in 0..<5 {
      _ = pace.observe(
        .init(at: at, previewShown: second * 26, previewLive: false, serviceCPU: .milliseconds(second * 400), movieCPU: .zero))
      at = at + .seconds(1)
    }
    #expect(pace.start(budget: 2).contains("no idle preview measured"))
  }
}
