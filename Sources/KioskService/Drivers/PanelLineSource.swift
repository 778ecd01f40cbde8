import Buttons
import KioskCore
import LinuxIO

/// What the button panel needs of a set of GPIO lines: edges into the loop, lamps out, and whether the chip
/// under them went away. `PanelLines` (libgpiod) is the real one; the unit tests script their own.
protocol PanelLineSet: AnyObject {
  /// The roles these lines serve.
  var roles: [ButtonRole] { get }
  var chipGone: Bool { get }
  /// What each line is, for the log.
  var descriptions: [String] { get }
  var lampDescriptions: [String] { get }
  func attach(to loop: EventLoop, _ handler: @escaping (ButtonEdgeEvent) -> Void) throws(SystemCallError)
  func detach(from loop: EventLoop)
  func readPending() -> [ButtonEdgeEvent]
  func set(_ output: Output, _ on: Bool)
}

extension PanelLines: PanelLineSet {}

/// Where the panel gets lines when it asks again: from the GPIO chips, or from a test.
protocol PanelLineSource {
  /// A required-or-optional button's line, with the capability's verdict on it.
  func button(_ role: ButtonRole, _ config: Config) -> (result: ProbeResult, lines: (any PanelLineSet)?)
  func flash(_ config: Config) -> (result: ProbeResult, lamp: (any PanelLineSet)?)
  /// The buttons and lamps that are not capabilities (cancel, camera, zoom; ready, tally), on one request;
  /// nil when none are configured.
  func extras(_ config: Config) throws(ButtonError) -> (any PanelLineSet)?
}

/// The lines requested from the chips through libgpiod, as the capability probe requests them.
struct GPIOLineSource: PanelLineSource {
  func button(_ role: ButtonRole, _ config: Config) -> (result: ProbeResult, lines: (any PanelLineSet)?) {
    let (result, lines) = CapabilityProbe.button(role, config)
    return (result, lines)
  }

  func flash(_ config: Config) -> (result: ProbeResult, lamp: (any PanelLineSet)?) {
    let (result, lamp) = CapabilityProbe.flash(config)
    return (result, lamp)
  }

  func extras(_ config: Config) throws(ButtonError) -> (any PanelLineSet)? {
    let (roles, outputs) = (config.extraButtonLines, config.extraLampLines)
    guard !roles.isEmpty || !outputs.isEmpty else { return nil }
    return try PanelLines(
      chip: config.buttons.chip, lines: roles,
      wiring: ButtonWiring(activeLow: config.buttons.activeLow, bias: config.buttons.bias),
      kernelDebounce: config.buttons.minimumPulse, outputs: outputs, outputsActiveLow: config.outputs.activeLow)
  }
}

extension Config {
  /// The buttons that are not capabilities of their own: all but shutter and mode.
  var extraButtonLines: [(ButtonRole, LineReference)] {
    buttons.lines.filter { $0.0 != .shutter && $0.0 != .mode }
  }
  /// The lamps that are not capabilities of their own: all but the flash.
  var extraLampLines: [(Output, LineReference)] {
    outputs.lines.filter { $0.0 != .flash }
  }
}
