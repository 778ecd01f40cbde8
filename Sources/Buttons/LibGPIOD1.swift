// libgpiod 1.6 (Debian 12, Raspberry Pi OS bookworm): the GPIO character device's v1 uAPI, one request per line.
// Package.swift picks this file or LibGPIOD2.swift from the version pkg-config finds; both give the rest of
// the module the same three types.
#if !KIOSKCAM_GPIOD2
  #if canImport(Glibc)
    import Glibc
  #endif
  import CGPIOD
  import KioskCore
  import LinuxIO

  /// The libgpiod the service runs with, for `kioskcam --version`.
  public enum GPIOLibrary {
    public static var version: String { "libgpiod " + String(cString: gpiod_version_string()) }
  }

  /// One open GPIO chip; lines taken from it live as long as it does.
  final class GPIOChip {
    private let raw: OpaquePointer

    init(path: String) throws(ButtonError) {
      guard let chip = gpiod_chip_open(path) else { throw .absent("GPIO chip \(path): \(Errno.current)") }
      raw = chip
    }

    var name: String { String(cString: gpiod_chip_name(raw)) }
    var label: String { String(cString: gpiod_chip_label(raw)) }
    var lineCount: Int { Int(gpiod_chip_num_lines(raw)) }

    func offset(named name: String) -> Int? { gpiod_chip_find_line(raw, name).map { Int(gpiod_line_offset($0)) } }

    /// What the kernel says of the line now, or nil if the chip has no such line.
    func info(_ offset: Int) -> GPIOLineInfo? {
      guard offset < lineCount, let line = gpiod_chip_get_line(raw, UInt32(offset)) else { return nil }
      return GPIOLineInfo(
        offset: offset, name: gpiod_line_name(line).map { String(cString: $0) },
        consumer: gpiod_line_consumer(line).map { String(cString: $0) }, used: gpiod_line_is_used(line),
        direction: gpiod_line_direction(line) == Int32(GPIOD_LINE_DIRECTION_OUTPUT) ? "output" : "input")
    }

    /// Whether the chip went away (reading a line's info again fails with ENODEV).
    func isGone(probing offset: Int) -> Bool {
      guard let line = gpiod_chip_get_line(raw, UInt32(offset)) else { return Errno.current == .noDevice }
      return gpiod_line_update(line) != 0 && Errno.current == .noDevice
    }

    /// Requests the line for both edges. The v1 uAPI has no debounce: `kernelDebounce` is not used, the
    /// software filter does it all.
    func requestInput(
      _ offset: Int, consumer: String, wiring: ButtonWiring, kernelDebounce: Duration
    ) throws(Errno) -> InputLine {
      guard let line = gpiod_chip_get_line(raw, UInt32(offset)) else { throw Errno.current }
      var flags = Int32(0)
      if wiring.activeLow { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) }
      switch wiring.bias {
      case .asIs: break
      case .disabled: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
      case .pullUp: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
      case .pullDown: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
      }
      guard gpiod_line_request_both_edges_events_flags(line, consumer, flags) == 0 else { throw Errno.current }
      return InputLine(chip: self, line: line)
    }

    /// Requests the line as an output, inactive.
    func requestOutput(_ offset: Int, consumer: String, activeLow: Bool) throws(Errno) -> OutputLine {
      guard let line = gpiod_chip_get_line(raw, UInt32(offset)) else { throw Errno.current }
      let flags = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
      guard gpiod_line_request_output_flags(line, consumer, flags, 0) == 0 else { throw Errno.current }
      return OutputLine(chip: self, line: line)
    }

    deinit { gpiod_chip_close(raw) }
  }

  /// A line requested for edge events; released when dropped.
  final class InputLine {
    private let chip: GPIOChip  // the line belongs to the chip: it must outlive the line
    private let line: OpaquePointer

    fileprivate init(chip: GPIOChip, line: OpaquePointer) {
      self.chip = chip
      self.line = line
    }

    /// The descriptor that is readable when an edge is queued.
    var descriptor: Int32 { gpiod_line_event_get_fd(line) }

    /// The next queued edge (active: the line went to its active level) with the kernel's CLOCK_MONOTONIC
    /// time, or nil when none is queued (the descriptor is non-blocking).
    func readEdge() -> (active: Bool, time: Instant)? {
      var event = gpiod_line_event()
      guard gpiod_line_event_read_fd(descriptor, &event) == 0 else { return nil }
      return (
        event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE),
        Instant(seconds: Int64(event.ts.tv_sec), nanoseconds: Int64(event.ts.tv_nsec))
      )
    }

    deinit { gpiod_line_release(line) }
  }

  /// A line requested as an output; set inactive and released when dropped.
  final class OutputLine {
    private let chip: GPIOChip
    private let line: OpaquePointer

    fileprivate init(chip: GPIOChip, line: OpaquePointer) {
      self.chip = chip
      self.line = line
    }

    func set(_ active: Bool) { _ = gpiod_line_set_value(line, active ? 1 : 0) }

    deinit {
      gpiod_line_set_value(line, 0)
      gpiod_line_release(line)
    }
  }
#endif
