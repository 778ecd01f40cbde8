import Testing

@testable import KioskCore

/// The gate with fake probe results: every capability present, absent, and lost or regained at run time.
@Suite struct CapabilityGateTests {
  static let defaults = CapabilityGate(Config().capabilities)

  /// Every capability passing, each with evidence that names it.
  static func allPassing() -> [ProbeResult] {
    Capability.allCases.map { .pass($0, "\($0) probed fine") }
  }
  static func results(failing: Set<Capability>) -> [ProbeResult] {
    Capability.allCases.map { failing.contains($0) ? .fail($0, "no \($0) found") : .pass($0, "\($0) probed fine") }
  }

  @Test func everythingPresentMeansStillsAndMovies() {
    let verdict = Self.defaults.evaluate(Self.allPassing())
    #expect(verdict.canRun)
    #expect(verdict.fatal == [])
    #expect(verdict.disabled == [])
    #expect(verdict.usable == Set(Capability.allCases))
    #expect(verdict.mediaTypes == [.stills, .movies])
  }

  @Test(arguments: Config.Capabilities.defaultRequired)
  func aMissingRequiredCapabilityIsOneFatalLineNamingTheProbe(_ missing: Capability) {
    let verdict = Self.defaults.evaluate(Self.results(failing: [missing]))
    #expect(!verdict.canRun)
    #expect(verdict.fatal == ["\(missing) (required): no \(missing) found"])
    #expect(verdict.missingRequired == [missing])
    #expect(verdict.disabled == [])
  }

  @Test func everyMissingRequiredCapabilityHasItsLineInCapabilityOrder() {
    let verdict = Self.defaults.evaluate(Self.results(failing: [.cameraRoll, .stillCamera]))
    #expect(
      verdict.fatal == ["still-camera (required): no still-camera found", "camera-roll (required): no camera-roll found"])
    #expect(verdict.mediaTypes == [])
  }

  @Test(arguments: Config().capabilities.optional)
  func aMissingOptionalCapabilityTurnsItsFeatureOff(_ missing: Capability) {
    let verdict = Self.defaults.evaluate(Self.results(failing: [missing]))
    #expect(verdict.canRun)
    #expect(verdict.disabled == [.fail(missing, "no \(missing) found")])
    #expect(!verdict.usable.contains(missing))
    #expect(verdict.mediaTypes == (missing == .movieCamera ? [.stills] : [.stills, .movies]))
  }

  @Test func aWantedCapabilityWithoutAResultCountsAsMissing() {
    let verdict = Self.defaults.evaluate(Self.allPassing().filter { $0.capability != .shutterButton })
    #expect(verdict.fatal == ["shutter-button (required): not probed"])
  }

  @Test func anUnusedCapabilityIsNeitherUsableNorReported() {
    let gate = CapabilityGate(required: [.stillCamera, .cameraRoll], optional: [])
    let verdict = gate.evaluate(Self.results(failing: [.display, .modeButton]))
    #expect(verdict.canRun)
    #expect(verdict.disabled == [])
    #expect(verdict.usable == [.stillCamera, .cameraRoll])
    #expect(verdict.mediaTypes == [.stills], "movie-camera passed its probe but is not wanted")
    #expect(gate.role(of: .display) == .unused)
  }

  @Test(arguments: [
    ([Capability.stillCamera, .cameraRoll], [MediaType.stills]),
    ([.movieCamera, .cameraRoll], [.movies]),
    ([.stillCamera, .movieCamera], []),
    ([.cameraRoll], []),
    ([.stillCamera, .movieCamera, .cameraRoll, .display], [.stills, .movies]),
  ])
  func mediaTypesNeedACameraAndARoll(usable: [Capability], expected: [MediaType]) {
    #expect(CapabilityGate.mediaTypes(usable: Set(usable)) == expected)
  }

  @Test func aCapabilityInBothListsIsRequired() {
    let gate = CapabilityGate(required: [.display], optional: [.display, .modeButton])
    #expect(gate.role(of: .display) == .required)
    #expect(gate.role(of: .modeButton) == .optional)
  }

  // Run time: hardware comes and goes.

  @Test func aLostRequiredCameraIsReportedOnceAndItsReturnOnce() {
    var monitor = CapabilityMonitor(gate: Self.defaults, results: Self.allPassing())
    #expect(monitor.isUsable(.stillCamera))
    let lost = monitor.update(.fail(.stillCamera, "/dev/video0: device gone (VIDIOC_DQBUF)"))
    #expect(
      lost == [
        .lost(.stillCamera, .required, evidence: "/dev/video0: device gone (VIDIOC_DQBUF)"), .mediaTypes([.movies]),
      ])
    #expect(!monitor.isUsable(.stillCamera))
    #expect(monitor.verdict.fatal == ["still-camera (required): /dev/video0: device gone (VIDIOC_DQBUF)"])
    // Retries that fail again, even with other words, are not news.
    #expect(monitor.update(.fail(.stillCamera, "/dev/video0: no such device")) == [])
    #expect(monitor.update(.fail(.stillCamera, "/dev/video0: no such device")) == [])
    let back = monitor.update(.pass(.stillCamera, "/dev/video0 (vivid)"))
    #expect(back == [.regained(.stillCamera, evidence: "/dev/video0 (vivid)"), .mediaTypes([.stills, .movies])])
    #expect(monitor.verdict.canRun)
    #expect(monitor.update(.pass(.stillCamera, "/dev/video0 (vivid)")) == [])
  }

  @Test func aLostOptionalDisplayChangesNoMediaType() {
    var monitor = CapabilityMonitor(gate: Self.defaults, results: Self.allPassing())
    #expect(monitor.update(.fail(.display, "card0 unplugged")) == [.lost(.display, .optional, evidence: "card0 unplugged")])
    #expect(monitor.verdict.disabled == [.fail(.display, "card0 unplugged")])
    #expect(monitor.update(.pass(.display, "card0")) == [.regained(.display, evidence: "card0")])
  }

  @Test func aRollThatFillsUpTakesBothMediaTypesAway() {
    var monitor = CapabilityMonitor(gate: Self.defaults, results: Self.allPassing())
    #expect(
      monitor.update(.fail(.cameraRoll, "12 MiB free, reserve 64 MiB"))
        == [.lost(.cameraRoll, .required, evidence: "12 MiB free, reserve 64 MiB"), .mediaTypes([])])
  }

  @Test func aCapabilityMissingAtStartThatAppearsIsRegained() {
    var monitor = CapabilityMonitor(gate: Self.defaults, results: Self.results(failing: [.movieCamera]))
    #expect(monitor.verdict.mediaTypes == [.stills])
    #expect(
      monitor.update(.pass(.movieCamera, "25 fps")) == [
        .regained(.movieCamera, evidence: "25 fps"), .mediaTypes([.stills, .movies]),
      ])
  }

  @Test func unusedCapabilitiesAreIgnoredAtRunTime() {
    var monitor = CapabilityMonitor(
      gate: CapabilityGate(required: [.stillCamera], optional: []), results: Self.allPassing())
    #expect(monitor.update(.fail(.display, "gone")) == [])
  }

  @Test func changesReadAsLogLines() {
    #expect(
      CapabilityChange.lost(.stillCamera, .required, evidence: "gone").description == "still-camera (required) lost: gone")
    #expect(CapabilityChange.regained(.display, evidence: "card0").description == "display back: card0")
    #expect(CapabilityChange.mediaTypes([]).description == "media types now: none")
    #expect(CapabilityChange.mediaTypes([.stills, .movies]).description == "media types now: stills, movies")
  }

  @Test func aPartConfiguredAsNoneIsNotWantedUnlessRequired() {
    var config = Config()
    config.buttons.mode = nil
    config.display.device = "none"
    let gate = CapabilityGate(config)
    #expect(gate.role(of: .modeButton) == .unused, "no mode button fitted: not a missing one")
    #expect(gate.role(of: .display) == .unused)
    #expect(gate.role(of: .movieCamera) == .optional)
    config.capabilities.required.append(.display)
    #expect(CapabilityGate(config).role(of: .display) == .required, "required and not fitted still fails")
  }

  @Test func flashIsWantedOnlyWithALampAndZoomOnlyWithSomethingToZoom() {
    var config = Config()
    #expect(config.outputs.flash == nil && config.capture.zoomMaximum == 400, "the defaults: no lamp, zoom to 4.0x")
    #expect(CapabilityGate(config).role(of: .flash) == .unused, "flash = none: no lamp fitted")
    #expect(CapabilityGate(config).role(of: .zoom) == .optional)
    config.outputs.flash = .name("flash")
    config.capture.zoomMaximum = 100
    #expect(CapabilityGate(config).role(of: .flash) == .optional)
    #expect(CapabilityGate(config).role(of: .zoom) == .unused, "zoom-maximum = 1.0: nothing to zoom")
    config.capabilities.required.append(.zoom)
    #expect(CapabilityGate(config).role(of: .zoom) == .required)
  }

  /// Every capability, lost while the kiosk runs and back: one change each way, whatever its role, and
  /// a lost required one is shown (fatal in the verdict) but never ends the monitor.
  @Test(arguments: Capability.allCases)
  func everyCapabilityLostAtRunTimeIsReportedOnceAndItsReturnOnce(_ capability: Capability) {
    var monitor = CapabilityMonitor(gate: Self.defaults, results: Self.allPassing())
    let role = Self.defaults.role(of: capability)
    let lost = monitor.update(.fail(capability, "gone"))
    #expect(lost.first == .lost(capability, role, evidence: "gone"))
    #expect(!monitor.isUsable(capability))
    #expect(monitor.verdict.canRun == (role != .required))
    #expect(monitor.update(.fail(capability, "still gone")) == [])
    let back = monitor.update(.pass(capability, "back"))
    #expect(back.first == .regained(capability, evidence: "back"))
    #expect(monitor.verdict == Self.defaults.evaluate(Self.allPassing()))
  }
}

