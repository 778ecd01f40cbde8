#if canImport(Glibc)
  import Glibc
#endif
import CGPIOD
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
  private var requested: [(role: ButtonRole, line: OpaquePointer, label: String)] = []
  public static let consumer = "kioskcam"

  private var outputLines: [Output: OpaquePointer] = [:]
  private var handler: ((ButtonEdgeEvent) -> Void)?

  /// Requests each role's line on the chip named `chip` (`auto`: the first chip that has the first line),
  /// and each lamp's line as an output, off.
  public init(
    chip chipName: String, lines: [(ButtonRole, LineReference)], wiring: ButtonWiring,
    outputs: [(Output, LineReference)] = [], outputsActiveLow: Bool = false
  ) throws(ButtonError) {
    chip = try Self.openChip(chipName, lines: lines)
    var flags = Int32(0)
    if wiring.activeLow { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) }
    switch wiring.bias {
    case .asIs: break
    case .disabled: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
    case .pullUp: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
    case .pullDown: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
    }
    for (role, reference) in lines {
      let label = "\(role.rawValue) button (\(reference) on \(chip.name) '\(chip.label)')"
      guard let line = find(reference) else { throw .absent("\(label): no such line") }
      try checkFree(line, label)
      guard gpiod_line_request_both_edges_events_flags(line, Self.consumer, flags) == 0 else {
        let error = Errno.current
        throw error == .busy ? .busy("\(label): busy (\(error))") : .io("\(label): request failed: \(error)")
      }
      requested.append((role, line, label))
    }
    for (output, reference) in outputs {
      let label = "\(output.rawValue) lamp (\(reference) on \(chip.name) '\(chip.label)')"
      guard let line = find(reference) else { throw .absent("\(label): no such line") }
      try checkFree(line, label)
      let flags = outputsActiveLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
      guard gpiod_line_request_output_flags(line, Self.consumer, flags, 0) == 0 else {
        throw .io("\(label): request failed: \(Errno.current)")
      }
      outputLines[output] = line
      lampDescriptions.append(label)
    }
  }

  /// Lights or darkens a lamp; a lamp that is not fitted is ignored.
  public func set(_ output: Output, _ on: Bool) {
    guard let line = outputLines[output] else { return }
    _ = gpiod_line_set_value(line, on ? 1 : 0)
  }

  private func find(_ reference: LineReference) -> OpaquePointer? {
    switch reference {
    case .offset(let offset): chip.line(offset)
    case .name(let name): chip.line(named: name)
    }
  }

  private func checkFree(_ line: OpaquePointer, _ label: String) throws(ButtonError) {
    if gpiod_line_is_used(line) {
      let holder = gpiod_line_consumer(line).map { String(cString: $0) } ?? "the kernel"
      throw .busy("\(label): already in use by \(holder)")
    }
  }

  /// Whether the chip went away under the lines (an expander unplugged, its driver unbound). The kernel does
  /// not wake a line's event descriptor for that, but reading the line's info again fails with ENODEV.
  public var chipGone: Bool {
    guard let line = requested.first?.line ?? outputLines.values.first else { return false }
    return gpiod_line_update(line) != 0 && Errno.current == .noDevice
  }

  /// The roles these lines serve.
  public var roles: [ButtonRole] { requested.map(\.role) }

  /// Takes the lines' descriptors out of the loop, before the lines are let go.
  public func detach(from loop: EventLoop) {
    for (_, line, _) in requested { loop.unwatch(FileDescriptor(rawValue: gpiod_line_event_get_fd(line))) }
    handler = nil
  }

  /// Watches every line in `loop`; `handler` gets each edge, in kernel order per line.
  public func attach(to loop: EventLoop, _ handler: @escaping (ButtonEdgeEvent) -> Void) throws(SystemCallError) {
    self.handler = handler
    for (role, line, _) in requested {
      let fd = gpiod_line_event_get_fd(line)
      // Non-blocking: an edge announced by epoll may already have been read by `readPending`.
      try systemCall("fcntl O_NONBLOCK") { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
      try loop.watch(FileDescriptor(rawValue: fd)) { [unowned self] _ in readOne(role, line) }
    }
  }

  /// Every edge the kernel has already timestamped but the loop has not read yet, in kernel order per line;
  /// returned rather than handed to the handler, so that the caller handles them before what it is doing.
  ///
  /// Call before acting on the clock: a tick or a frame must never decide a press that queued edges (read
  /// late when the machine stalls) would have changed.
  public func readPending() -> [ButtonEdgeEvent] {
    var edges: [ButtonEdgeEvent] = []
    for (role, line, _) in requested {
      while let edge = readEdge(role, line) { edges.append(edge) }
    }
    return edges
  }

  private func readOne(_ role: ButtonRole, _ line: OpaquePointer) {
    if let edge = readEdge(role, line) { handler?(edge) }
  }

  private func readEdge(_ role: ButtonRole, _ line: OpaquePointer) -> ButtonEdgeEvent? {
    var event = gpiod_line_event()
    // EAGAIN (nothing queued) is the usual way out of here, not an error.
    guard gpiod_line_event_read_fd(gpiod_line_event_get_fd(line), &event) == 0 else { return nil }
    let edge: ButtonEdge = event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE) ? .pressed : .released
    let time = Instant(seconds: Int64(event.ts.tv_sec), nanoseconds: Int64(event.ts.tv_nsec))
    return ButtonEdgeEvent(role: role, edge: edge, time: time)
  }

  /// What each requested line is, for the log.
  public var descriptions: [String] { requested.map(\.label) }
  public private(set) var lampDescriptions: [String] = []

  private static func openChip(_ name: String, lines: [(ButtonRole, LineReference)]) throws(ButtonError) -> GPIOChip {
    if name != "auto" { return try GPIOChip(lookup: name) }
    for info in GPIOProbe.list() {
      guard let chip = try? GPIOChip(path: info.path) else { continue }
      let hasAll = lines.allSatisfy { _, reference in
        switch reference {
        case .offset(let offset): offset < chip.lineCount
        case .name(let name): chip.line(named: name) != nil
        }
      }
      if hasAll { return chip }
    }
    let wanted = lines.map { "\($0.0.rawValue)=\($0.1)" }.joined(separator: ", ")
    throw .absent("no GPIO chip has the button lines (\(wanted))")
  }

  deinit {
    for (_, line, _) in requested { gpiod_line_release(line) }
    for line in outputLines.values {
      gpiod_line_set_value(line, 0)
      gpiod_line_release(line)
    }
  }
}
