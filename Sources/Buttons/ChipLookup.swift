import LinuxIO
import KioskCore

/// Finding a chip the way a person names it in the configuration, the same for both libgpiod versions
/// (libgpiod 1.6's `gpiod_chip_open_lookup` did this, and 2.x dropped it).
extension GPIOChip {
  /// Opens by path (`/dev/gpiochip0`), name (`gpiochip0`), number (`0`) or label (`gpio-sim.0-node0`).
  static func open(lookup description: String) throws(ButtonError) -> GPIOChip {
    if description.hasPrefix("/") { return try GPIOChip(path: description) }
    if !description.isEmpty, description.allSatisfy(\.isNumber) { return try GPIOChip(path: "/dev/gpiochip\(description)") }
    if description.hasPrefix("gpiochip"), FileStatus.exists("/dev/\(description)") {
      return try GPIOChip(path: "/dev/\(description)")
    }
    for path in DirectoryListing.numberedNodes(in: "/dev", prefix: "gpiochip") {
      guard let chip = try? GPIOChip(path: path) else { continue }
      if chip.label == description { return chip }
    }
    throw .absent("GPIO chip '\(description)': no chip has that path, name, number or label")
  }

  /// The line's offset on this chip, or nil if the chip has no such line.
  func offset(of reference: LineReference) -> Int? {
    switch reference {
    case .offset(let offset): offset < lineCount ? offset : nil
    case .name(let name): offset(named: name)
    }
  }
}
