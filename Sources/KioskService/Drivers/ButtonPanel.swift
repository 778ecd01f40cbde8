import Buttons
import KioskCore
import LinuxIO

/// The front panel: the shutter and mode buttons (capabilities, each on its own request so a missing optional
/// one leaves the others), the optional buttons and the ready and tally lamps (best effort, together), and
/// the flash lamp (a capability, on its own line). GPIO chips come and go too (an expander on USB or I2C, a
/// driver unbound): lines whose chip is gone are let go, and what the configuration wants and the panel
/// lacks is requested again. A lost required button is shown ("Off: shutter button") and retried, never a
/// reason to stop: the control socket still works.
final class ButtonPanel: PanelDriver {
  private let config: Config
  private let gate: CapabilityGate
  private let loop: EventLoop
  private let post: (ServiceEvent) -> Void
  private let source: any PanelLineSource
  private var buttons: [any PanelLineSet]
  private var extras: (any PanelLineSet)?
  /// The optional roles and lamps went away with their chip at run time: they are requested again.
  private var extrasLost = false
  private var flashLamp: (any PanelLineSet)?
  /// The kiosk was given a flash lead at start: a lamp lost at run time is requested again; one that was
  /// never there is not (the kiosk does not wait for a light that never came).
  private let flashExpected: Bool
  private var checkTimer: LoopTimer?
  /// The ready lamp's state as the kiosk decides it, lamp wired or not: the overlay's ready cue.
  private(set) var readyLit = false
  private var recording = false

  init(
    config: Config, gate: CapabilityGate, buttons: [any PanelLineSet], flashLamp: (any PanelLineSet)?,
    source: any PanelLineSource = GPIOLineSource(), loop: EventLoop, post: @escaping (ServiceEvent) -> Void
  ) {
    self.config = config
    self.gate = gate
    self.buttons = buttons
    self.flashLamp = flashLamp
    flashExpected = flashLamp != nil
    self.loop = loop
    self.post = post
    self.source = source
    extras = Self.requestExtras(config, source)
  }

  private var allLines: [any PanelLineSet] { buttons + (extras.map { [$0] } ?? []) }

  func start() throws(SystemCallError) {
    for lines in allLines { try attach(lines) }
    checkTimer = try LoopTimer(loop: loop) { [unowned self] in
      check()
      try? checkTimer?.arm(after: Intervals.buttonCheck.timerNanoseconds)
    }
    try checkTimer?.arm(after: Intervals.buttonCheck.timerNanoseconds)
    log("buttons: \(allLines.flatMap(\.descriptions).joined(separator: "; "))")
    let lamps = [extras, flashLamp].compactMap { $0 }.flatMap(\.lampDescriptions)
    if !lamps.isEmpty { log("lamps: \(lamps.joined(separator: "; "))") }
  }

  private func attach(_ lines: any PanelLineSet) throws(SystemCallError) {
    try lines.attach(to: loop) { [post] edge in post(.kiosk(.edge(edge.role, edge.edge, at: edge.time))) }
  }

  func readPending() -> [Event] {
    allLines.flatMap { $0.readPending() }.map { .edge($0.role, $0.edge, at: $0.time) }
  }

  func light(_ output: Output, _ on: Bool) {
    if output == .ready { readyLit = on }
    if output == .flash, let flashLamp {
      flashLamp.set(.flash, on)
      // When the lamp lit, on the frames' clock: the still's log line says how long after it the frame was.
      log("flash \(on ? "lit" : "dark") at \(now())")
    } else {
      extras?.set(output, on)
    }
  }

  func recordingChanged(_ recording: Bool) { self.recording = recording }

  func nodeAppeared(name: String) {
    // A moment for the chip to name its lines and for udev to give the node to the gpio group.
    try? checkTimer?.arm(after: Intervals.gpioChipSettle.timerNanoseconds)
  }

  // MARK: Lines that come and go

  /// Run by the check timer; the unit tests call it as the timer would.
  func check() {
    for lines in buttons where lines.chipGone {
      letGo(lines)
      buttons.removeAll { $0 === lines }
      for role in lines.roles {
        post(.capability(.fail(role == .shutter ? .shutterButton : .modeButton, "\(role.rawValue) button: its GPIO chip is gone")))
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
      post(.capability(.fail(.flash, "flash lamp: its GPIO chip is gone")))
    }
    requestMissing()
  }

  private func letGo(_ lines: any PanelLineSet) {
    lines.detach(from: loop)
    post(.kiosk(.buttonsLost(lines.roles, at: now())))
  }

  private func requestMissing() {
    let held = Set(buttons.flatMap(\.roles))
    for (role, capability) in [(ButtonRole.shutter, Capability.shutterButton), (.mode, .modeButton)]
    where gate.role(of: capability) != .unused && !held.contains(role) {
      let (result, requested) = source.button(role, config)
      if let requested {
        do {
          try attach(requested)
        } catch {
          log("\(role.rawValue) button: \(error)")
          continue
        }
        buttons.append(requested)
      }
      post(.capability(result))
    }
    if flashLamp == nil, flashExpected {
      let (result, lamp) = source.flash(config)
      flashLamp = lamp
      post(.capability(result))
    }
    if extrasLost, let lines = try? source.extras(config) {
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
      lines.set(.tally, recording)
      log("buttons back: \((lines.descriptions + lines.lampDescriptions).joined(separator: "; "))")
    }
  }

  // MARK: The optional buttons and lamps

  /// Not capabilities of their own, so a missing one is logged and off.
  private static func requestExtras(_ config: Config, _ source: any PanelLineSource) -> (any PanelLineSet)? {
    do {
      return try source.extras(config)
    } catch {
      let names = (config.extraButtonLines.map(\.0.rawValue) + config.extraLampLines.map(\.0.rawValue))
      log("\(names.joined(separator: ", ")) off: \(error)")
      return nil
    }
  }
}
