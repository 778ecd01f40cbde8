#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import LinuxIO

/// The electrical side of the buttons: how the lines are wired.
public struct ButtonWiring: Sendable {
  public var activeLow: Bool
  public var bias: Bias
  public init(activeLow: Bool, bias: Bias) {
    self.activeLow = activeLow
    self.bias = bias
  }
}

/// One edge on one button line, with the kernel's CLOCK_MONOTONIC timestamp.
public struct ButtonEdgeEvent: Sendable, Equatable {
  public let role: ButtonRole
  public let edge: ButtonEdge
  public let time: Instant

  public init(role: ButtonRole, edge: ButtonEdge, time: Instant) {
    self.role = role
    self.edge = edge
    self.time = time
  }
}

/// A set of the front panel's GPIO lines: button lines requested for both edges (each line's event descriptor
/// goes into the loop) and lamp lines requested as outputs, all on one chip.
public final class PanelLines {
  private let chip: GPIOChip
  private var requested: [(role: ButtonRole, line: InputLine, offset: Int, label: String)] = []
  public static let consumer = "kioskcam"

  private var outputLines: [Output: (line: OutputLine, offset: Int)] = [:]
  private var handler: ((ButtonEdgeEvent) -> Void)?

  /// Requests each role's line on the chip named `chip` (`auto`: the first chip that has the first line),
  /// and each lamp's line as an output, off. `kernelDebounce` asks the kernel to drop level changes shorter
  /// than it, where the GPIO uAPI can (libgpiod 2); pass the shortest pulse the software filter counts.
  public init(
    chip chipName: String, lines: [(ButtonRole, LineReference)], wiring: ButtonWiring,
    kernelDebounce: Duration = .zero, outputs: [(Output, LineReference)] = [], outputsActiveLow: Bool = false
  ) throws(ButtonError) {
    chip = try Self.openChip(chipName, lines: lines)
    for (role, reference) in lines {
      let label = "\(role.rawValue) button (\(reference) on \(chip.name) '\(chip.label)')"
      guard let offset = chip.offset(of: reference) else { throw .absent("\(label): no such line") }
      try checkFree(offset, label)
      do {
        let line = try chip.requestInput(offset, consumer: Self.consumer, wiring: wiring, kernelDebounce: kernelDebounce)
        requested.append((role, line, offset, label))
      } catch {
        throw error == .busy ? .busy("\(label): busy (\(error))") : .io("\(label): request failed: \(error)")
      }
    }
    for (output, reference) in outputs {
      let label = "\(output.rawValue) lamp (\(reference) on \(chip.name) '\(chip.label)')"
      guard let offset = chip.offset(of: reference) else { throw .absent("\(label): no such line") }
      try checkFree(offset, label)
      do {
        outputLines[output] = (try chip.requestOutput(offset, consumer: Self.consumer, activeLow: outputsActiveLow), offset)
      } catch {
        throw .io("\(label): request failed: \(error)")
      }
      lampDescriptions.append(label)
    }
  }

  /// Lights or darkens a lamp; a lamp that is not fitted is ignored.
  public func set(_ output: Output, _ on: Bool) {
    outputLines[output]?.line.set(on)
  }

  private func checkFree(_ offset: Int, _ label: String) throws(ButtonError) {
    if let info = chip.info(offset), info.used {
      throw .busy("\(label): already in use by \(info.consumer ?? "the kernel")")
    }
  }

  /// Whether the chip went away under the lines (an expander unplugged, its driver unbound). The kernel does
  /// not wake a line's event descriptor for that, but reading the line's info again fails with ENODEV.
  public var chipGone: Bool {
    guard let offset = requested.first?.offset ?? outputLines.values.first?.offset else { return false }
    return chip.isGone(probing: offset)
  }

  /// The roles these lines serve.
  public var roles: [ButtonRole] { requested.map(\.role) }

  /// Takes the lines' descriptors out of the loop, before the lines are let go.
  public func detach(from loop: EventLoop) {
    for requested in requested { loop.unwatch(FileDescriptor(rawValue: requested.line.descriptor)) }
    handler = nil
  }

  /// Watches every line in `loop`; `handler` gets each edge, in kernel order per line.
  public func attach(to loop: EventLoop, _ handler: @escaping (ButtonEdgeEvent) -> Void) throws(SystemCallError) {
    self.handler = handler
    for (role, line, _, _) in requested {
      let fd = line.descriptor
      // Non-blocking: an edge announced by epoll may already have been read by `readPending`.
      try systemCall("fcntl O_NONBLOCK") { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
      try loop.watch(FileDescriptor(rawValue: fd)) { [unowned self] _ in
        if let edge = Self.readEdge(role, line) { self.handler?(edge) }
      }
    }
  }

  /// Every edge the kernel has already timestamped but the loop has not read yet, in kernel order per line;
  /// returned rather than handed to the handler, so that the caller handles them before what it is doing.
  ///
  /// Call before acting on the clock: a tick or a frame must never decide a press that queued edges (read
  /// late when the machine stalls) would have changed.
  public func readPending() -> [ButtonEdgeEvent] {
    var edges: [ButtonEdgeEvent] = []
    for (role, line, _, _) in requested {
      while let edge = Self.readEdge(role, line) { edges.append(edge) }
    }
    return edges
  }

  /// EAGAIN (nothing queued) is the usual way out of here, not an error.
  private static func readEdge(_ role: ButtonRole, _ line: InputLine) -> ButtonEdgeEvent? {
    guard let (active, time) = line.readEdge() else { return nil }
    return ButtonEdgeEvent(role: role, edge: active ? .pressed : .released, time: time)
  }

  /// What each requested line is, for the log.
  public var descriptions: [String] { requested.map(\.label) }
  public private(set) var lampDescriptions: [String] = []

  private static func openChip(_ name: String, lines: [(ButtonRole, LineReference)]) throws(ButtonError) -> GPIOChip {
    if name != "auto" { return try GPIOChip.open(lookup: name) }
    for info in GPIOProbe.list() {
      guard let chip = try? GPIOChip(path: info.path) else { continue }
      if lines.allSatisfy({ chip.offset(of: $0.1) != nil }) { return chip }
    }
    let wanted = lines.map { "\($0.0.rawValue)=\($0.1)" }.joined(separator: ", ")
    throw .absent("no GPIO chip has the button lines (\(wanted))")
  }
}
