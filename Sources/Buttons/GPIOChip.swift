import CGPIOD
import LinuxIO

/// One open GPIO chip through libgpiod; lines taken from it live as long as it does.
final class GPIOChip {
  let raw: OpaquePointer

  /// Opens by name (`gpiochip0`), path, label or number, as libgpiod's lookup does.
  init(lookup description: String) throws(ButtonError) {
    guard let chip = gpiod_chip_open_lookup(description) else {
      let error = Errno.current
      throw .absent("GPIO chip '\(description)': \(error)")
    }
    raw = chip
  }

  init(path: String) throws(ButtonError) {
    guard let chip = gpiod_chip_open(path) else { throw .absent("GPIO chip \(path): \(Errno.current)") }
    raw = chip
  }

  var name: String { String(cString: gpiod_chip_name(raw)) }
  var label: String { String(cString: gpiod_chip_label(raw)) }
  var lineCount: Int { Int(gpiod_chip_num_lines(raw)) }

  /// The line at `reference`, or nil if the chip has no such line.
  func line(_ offset: Int) -> OpaquePointer? {
    guard offset < lineCount else { return nil }
    return gpiod_chip_get_line(raw, UInt32(offset))
  }

  func line(named name: String) -> OpaquePointer? { gpiod_chip_find_line(raw, name) }

  deinit { gpiod_chip_close(raw) }
}
