import Buttons
import KioskCore
import LinuxIO
import Testing

@testable import KioskService

/// A set of lines as a test scripts it: edges pressed by hand, lamps read back, its chip pulled.
final class FakeLines: PanelLineSet {
  let roles: [ButtonRole]
  let lamps: [Output]
  var chipGone = false
  private(set) var attached = false
  private(set) var detached = false
  private(set) var lit: [Output: Bool] = [:]
  var pending: [ButtonEdgeEvent] = []
  private var handler: ((ButtonEdgeEvent) -> Void)?

  init(_ roles: [ButtonRole], lamps: [Output] = []) {
    self.roles = roles
    self.lamps = lamps
    for lamp in lamps { lit[lamp] = false }
  }

  var descriptions: [String] { roles.map { "\($0.rawValue) button (fake)" } }
  var lampDescriptions: [String] { lamps.map { "\($0.rawValue) lamp (fake)" } }

  func attach(to loop: EventLoop, _ handler: @escaping (ButtonEdgeEvent) -> Void) throws(SystemCallError) {
    attached = true
    self.handler = handler
  }
  func detach(from loop: EventLoop) {
    detached = true
    handler = nil
  }
  func readPending() -> [ButtonEdgeEvent] {
    defer { pending = [] }
    return pending
  }
  func set(_ output: Output, _ on: Bool) {
    if lamps.contains(output) { lit[output] = on }
  }
  /// The kernel reporting an edge on a watched line.
  func edge(_ role: ButtonRole, _ edge: ButtonEdge, at time: Instant) {
    handler?(ButtonEdgeEvent(role: role, edge: edge, time: time))
  }
}

/// Hands out the lines a test has queued, or says they are not there.
final class FakeLineSource: PanelLineSource {
  var buttons: [ButtonRole: FakeLines] = [:]
  var flashLamp: FakeLines?
  var extraLines: FakeLines?
  private(set) var asked: [String] = []

  func button(_ role: ButtonRole, _ config: Config) -> (result: ProbeResult, lines: (any PanelLineSet)?) {
    asked.append(role.rawValue)
    let capability: Capability = role == .shutter ? .shutterButton : .modeButton
    guard let lines = buttons.removeValue(forKey: role) else { return (.fail(capability, "no such line"), nil) }
    return (.pass(capability, "requested"), lines)
  }
  func flash(_ config: Config) -> (result: ProbeResult, lamp: (any PanelLineSet)?) {
    asked.append("flash")
    guard let lamp = flashLamp else { return (.fail(.flash, "no such line"), nil) }
    flashLamp = nil
    return (.pass(.flash, "requested"), lamp)
  }
  func extras(_ config: Config) throws(ButtonError) -> (any PanelLineSet)? {
    asked.append("extras")
    guard let lines = extraLines else { throw .absent("cancel button: no such line") }
    extraLines = nil
    return lines
  }
}

/// The button panel's wiring without a GPIO chip: edges to the kiosk, the kiosk's lamps to their lines, and
/// lines whose chip goes let go, reported and requested again (the board's gpio-sim tests prove the chip side).
@Suite struct ButtonPanelTests {
  let loop: EventLoop
  let source = FakeLineSource()
  let shutter = FakeLines([.shutter])
  let mode = FakeLines([.mode])
  let extras = FakeLines([.cancel], lamps: [.ready, .tally])
  let flash = FakeLines([], lamps: [.flash])
  var config = Config()
  final class Posted { var events: [ServiceEvent] = [] }
  let posted = Posted()

  init() throws {
    loop = try EventLoop()
    config.buttons.mode = .name("mode")
    config.buttons.cancel = .name("cancel")
    config.outputs.ready = .name("ready")
    config.outputs.tally = .name("tally")
    config.outputs.flash = .name("flash")
  }

  func panel(
    flash: FakeLines? = nil, optional: [Capability] = [.modeButton, .flash]
  ) throws -> ButtonPanel {
    source.extraLines = extras
    let gate = CapabilityGate(required: [.stillCamera, .shutterButton], optional: optional)
    let panel = ButtonPanel(
      config: config, gate: gate, buttons: [shutter, mode], flashLamp: flash, source: source, loop: loop,
      post: { [posted] in posted.events.append($0) })
    try panel.start()
    return panel
  }

  var kioskEvents: [Event] { posted.events.compactMap { if case .kiosk(let e) = $0 { e } else { nil } } }
  var capabilities: [ProbeResult] {
    posted.events.compactMap { if case .capability(let r) = $0 { r } else { nil } }
  }
  func at(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }

  @Test func edgesReachTheKioskWithTheKernelsTimeAndPendingOnesAreReadFirst() throws {
    let panel = try panel()
    #expect(shutter.attached && mode.attached && extras.attached)
    shutter.edge(.shutter, .pressed, at: at(10))
    extras.edge(.cancel, .released, at: at(12))
    #expect(kioskEvents == [.edge(.shutter, .pressed, at: at(10)), .edge(.cancel, .released, at: at(12))])
    mode.pending = [ButtonEdgeEvent(role: .mode, edge: .pressed, time: at(20))]
    shutter.pending = [ButtonEdgeEvent(role: .shutter, edge: .released, time: at(25))]
    let pending = panel.readPending()
    #expect(pending.count == 2)
    #expect(pending.contains(.edge(.mode, .pressed, at: at(20))))
    #expect(pending.contains(.edge(.shutter, .released, at: at(25))))
    #expect(panel.readPending().isEmpty, "an edge is read once")
  }

  @Test func theKiosksLampsLightTheirOwnLines() throws {
    let panel = try panel(flash: flash)
    panel.light(.ready, true)
    panel.light(.tally, true)
    panel.light(.flash, true)
    #expect(extras.lit == [.ready: true, .tally: true])
    #expect(flash.lit == [.flash: true])
    #expect(panel.readyLit)
    panel.light(.tally, false)
    panel.light(.flash, false)
    #expect(extras.lit == [.ready: true, .tally: false])
    #expect(flash.lit == [.flash: false])
  }

  @Test func aButtonWhoseChipGoesIsLetGoReportedAndRequestedAgain() throws {
    let panel = try panel()
    panel.check()
    #expect(posted.events.isEmpty, "nothing gone, nothing to say: \(posted.events)")
    shutter.chipGone = true
    panel.check()
    #expect(shutter.detached && !mode.detached)
    #expect(kioskEvents.count == 1)
    guard case .buttonsLost([.shutter], _) = kioskEvents.first else {
      Issue.record("the kiosk is told the shutter went: \(kioskEvents)")
      return
    }
    // Lost, then asked for again at once: the chip is still gone, so the capability stays failed.
    #expect(capabilities.map(\.capability) == [.shutterButton, .shutterButton])
    #expect(capabilities.allSatisfy { !$0.passed })
    #expect(capabilities.first?.evidence.contains("GPIO chip is gone") == true)
    // The chip is back: the next check requests the line, watches it and says so.
    let back = FakeLines([.shutter])
    source.buttons[.shutter] = back
    posted.events = []
    panel.check()
    #expect(back.attached)
    #expect(capabilities == [.pass(.shutterButton, "requested")])
    back.edge(.shutter, .pressed, at: at(40))
    #expect(kioskEvents.last == .edge(.shutter, .pressed, at: at(40)))
    posted.events = []
    panel.check()
    #expect(posted.events.isEmpty, "held again, not asked for again: \(posted.events)")
  }

  @Test func aButtonTheConfigurationLeavesUnusedIsNeverAskedFor() throws {
    let panel = try panel(optional: [.flash])
    mode.chipGone = true
    panel.check()
    #expect(mode.detached)
    #expect(!source.asked.contains("mode"), "\(source.asked)")
    #expect(capabilities.map(\.capability) == [.modeButton], "the loss is reported, nothing is requested")
  }

  @Test func lampsThatComeBackShowWhatTheKioskLastAskedFor() throws {
    let panel = try panel()
    panel.light(.ready, true)
    panel.recordingChanged(true)
    extras.chipGone = true
    panel.check()
    #expect(extras.detached)
    guard case .buttonsLost([.cancel], _) = kioskEvents.first else {
      Issue.record("the kiosk is told cancel went: \(kioskEvents)")
      return
    }
    panel.light(.ready, false)
    panel.light(.ready, true)  // asked while the lamps were gone: remembered
    let back = FakeLines([.cancel], lamps: [.ready, .tally])
    source.extraLines = back
    panel.check()
    #expect(back.attached)
    #expect(back.lit == [.ready: true, .tally: true], "ready as the kiosk left it, tally while recording")
    back.edge(.cancel, .pressed, at: at(50))
    #expect(kioskEvents.last == .edge(.cancel, .pressed, at: at(50)))
  }

  @Test func aFlashLampLostIsAskedForAgainOnlyIfItWasThereAtStart() throws {
    let panel = try panel(flash: flash)
    flash.chipGone = true
    panel.check()
    #expect(capabilities.map(\.capability) == [.flash, .flash])
    #expect(capabilities.allSatisfy { !$0.passed })
    let back = FakeLines([], lamps: [.flash])
    source.flashLamp = back
    panel.check()
    #expect(capabilities.last == .pass(.flash, "requested"))
    panel.light(.flash, true)
    #expect(back.lit == [.flash: true])

    let never = try self.panel(flash: nil)
    posted.events = []
    never.check()
    #expect(capabilities.isEmpty, "a lamp never fitted is not asked for: \(capabilities)")
  }
}
