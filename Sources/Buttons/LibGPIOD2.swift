// libgpiod 2.x (Debian 13, Raspberry Pi OS trixie): the GPIO character device's v2 uAPI, one request per line,
// with the kernel's debounce. Package.swift picks this file or LibGPIOD1.swift from the version pkg-config
// finds; both give the rest of the module the same three types.
#if KIOSKCAM_GPIOD2
  import CGPIOD
  import KioskCore
  import LinuxIO

  /// The libgpiod the service runs with, for `kioskcam --version`.
  public enum GPIOLibrary {
    public static var version: String { "libgpiod " + String(cString: gpiod_api_version()) }
  }

  /// One open GPIO chip. Unlike 1.6, a request outlives its chip in libgpiod 2; the lines keep it anyway, so
  /// that `isGone` can ask it.
  final class GPIOChip {
    private let raw: OpaquePointer
    let name: String
    let label: String
    let lineCount: Int

    init(path: String) throws(ButtonError) {
      guard let chip = gpiod_chip_open(path) else { throw .absent("GPIO chip \(path): \(Errno.current)") }
      guard let info = gpiod_chip_get_info(chip) else {
        let error = Errno.current
        gpiod_chip_close(chip)
        throw .io("GPIO chip \(path): reading its info: \(error)")
      }
      defer { gpiod_chip_info_free(info) }
      raw = chip
      name = String(cString: gpiod_chip_info_get_name(info))
      label = String(cString: gpiod_chip_info_get_label(info))
      lineCount = gpiod_chip_info_get_num_lines(info)
    }

    func offset(named name: String) -> Int? {
      let offset = gpiod_chip_get_line_offset_from_name(raw, name)
      return offset < 0 ? nil : Int(offset)
    }

    /// What the kernel says of the line now, or nil if the chip has no such line.
    func info(_ offset: Int) -> GPIOLineInfo? {
      guard offset < lineCount, let info = gpiod_chip_get_line_info(raw, UInt32(offset)) else { return nil }
      defer { gpiod_line_info_free(info) }
      return GPIOLineInfo(
        offset: offset, name: gpiod_line_info_get_name(info).map { String(cString: $0) },
        consumer: gpiod_line_info_get_consumer(info).map { String(cString: $0) }, used: gpiod_line_info_is_used(info),
        direction: gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT ? "output" : "input")
    }

    /// Whether the chip went away (reading a line's info again fails with ENODEV).
    func isGone(probing offset: Int) -> Bool {
      guard let info = gpiod_chip_get_line_info(raw, UInt32(offset)) else { return Errno.current == .noDevice }
      gpiod_line_info_free(info)
      return false
    }

    /// Requests the line for both edges, asking the kernel to drop level changes shorter than
    /// `kernelDebounce` (in hardware where the chip can, else in the kernel's GPIO character device). The
    /// software filter stays behind it: the kernel settles glitches; a bounce against a hold is still decided
    /// from the edges' timestamps. A line whose driver refuses the debounce is requested without it.
    func requestInput(
      _ offset: Int, consumer: String, wiring: ButtonWiring, kernelDebounce: Duration
    ) throws(Errno) -> InputLine {
      let microseconds = max(0, kernelDebounce.nanosecondsClamped / 1000)
      do {
        return try requestInput(offset, consumer: consumer, wiring: wiring, debounceMicroseconds: UInt(microseconds))
      } catch let error where microseconds > 0 && error != .busy {
        return try requestInput(offset, consumer: consumer, wiring: wiring, debounceMicroseconds: 0)
      }
    }

    private func requestInput(
      _ offset: Int, consumer: String, wiring: ButtonWiring, debounceMicroseconds: UInt
    ) throws(Errno) -> InputLine {
      let request = try self.request(offset, consumer: consumer) { settings in
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT)
        gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH)
        gpiod_line_settings_set_active_low(settings, wiring.activeLow)
        let bias: gpiod_line_bias =
          switch wiring.bias {
          case .asIs: GPIOD_LINE_BIAS_AS_IS
          case .disabled: GPIOD_LINE_BIAS_DISABLED
          case .pullUp: GPIOD_LINE_BIAS_PULL_UP
          case .pullDown: GPIOD_LINE_BIAS_PULL_DOWN
          }
        gpiod_line_settings_set_bias(settings, bias)
        gpiod_line_settings_set_debounce_period_us(settings, debounceMicroseconds)
        gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC)
      }
      return InputLine(chip: self, request: request)
    }

    /// Requests the line as an output, inactive.
    func requestOutput(_ offset: Int, consumer: String, activeLow: Bool) throws(Errno) -> OutputLine {
      let request = try self.request(offset, consumer: consumer) { settings in
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT)
        gpiod_line_settings_set_active_low(settings, activeLow)
        gpiod_line_settings_set_output_value(settings, GPIOD_LINE_VALUE_INACTIVE)
      }
      return OutputLine(chip: self, request: request, offset: UInt32(offset))
    }

    /// One line requested with the settings `configure` makes.
    private func request(
      _ offset: Int, consumer: String, _ configure: (OpaquePointer) -> Void
    ) throws(Errno) -> OpaquePointer {
      guard let settings = gpiod_line_settings_new() else { throw Errno.current }
      defer { gpiod_line_settings_free(settings) }
      configure(settings)
      guard let lineConfig = gpiod_line_config_new() else { throw Errno.current }
      defer { gpiod_line_config_free(lineConfig) }
      var line = UInt32(offset)
      guard gpiod_line_config_add_line_settings(lineConfig, &line, 1, settings) == 0 else { throw Errno.current }
      guard let requestConfig = gpiod_request_config_new() else { throw Errno.current }
      defer { gpiod_request_config_free(requestConfig) }
      gpiod_request_config_set_consumer(requestConfig, consumer)
      guard let request = gpiod_chip_request_lines(raw, requestConfig, lineConfig) else { throw Errno.current }
      return request
    }

    deinit { gpiod_chip_close(raw) }
  }

  /// A line requested for edge events; released when dropped.
  final class InputLine {
    private let chip: GPIOChip
    private let request: OpaquePointer
    private let buffer: OpaquePointer?

    fileprivate init(chip: GPIOChip, request: OpaquePointer) {
      self.chip = chip
      self.request = request
      buffer = gpiod_edge_event_buffer_new(1)
    }

    /// The descriptor that is readable when an edge is queued.
    var descriptor: Int32 { gpiod_line_request_get_fd(request) }

    /// The next queued edge (active: the line went to its active level) with the kernel's CLOCK_MONOTONIC
    /// time, or nil when none is queued (the descriptor is non-blocking).
    func readEdge() -> (active: Bool, time: Instant)? {
      guard let buffer, gpiod_line_request_read_edge_events(request, buffer, 1) == 1,
        let event = gpiod_edge_event_buffer_get_event(buffer, 0)
      else { return nil }
      let nanoseconds = gpiod_edge_event_get_timestamp_ns(event)
      return (
        gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE,
        Instant(nanoseconds: Int64(nanoseconds))
      )
    }

    deinit {
      if let buffer { gpiod_edge_event_buffer_free(buffer) }
      gpiod_line_request_release(request)
    }
  }

  /// A line requested as an output; set inactive and released when dropped.
  final class OutputLine {
    private let chip: GPIOChip
    private let request: OpaquePointer
    private let offset: UInt32

    fileprivate init(chip: GPIOChip, request: OpaquePointer, offset: UInt32) {
      self.chip = chip
      self.request = request
      self.offset = offset
    }

    func set(_ active: Bool) {
      _ = gpiod_line_request_set_value(request, offset, active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE)
    }

    deinit {
      _ = gpiod_line_request_set_value(request, offset, GPIOD_LINE_VALUE_INACTIVE)
      gpiod_line_request_release(request)
    }
  }
#endif
