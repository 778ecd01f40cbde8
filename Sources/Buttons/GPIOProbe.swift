import CGPIOD
import LinuxIO

public struct GPIOLineInfo: Encodable, Sendable, Equatable {
  public let offset: Int
  public let name: String?
  /// The program holding the line, if one does.
  public let consumer: String?
  public let used: Bool
  public let direction: String
}

public struct GPIOChipInfo: Encodable, Sendable, Equatable {
  public let path: String
  public let name: String
  public let label: String
  public let lines: [GPIOLineInfo]
}

public enum GPIOProbe {
  /// Every `/dev/gpiochip*` with its lines, in number order.
  public static func list(devicesIn directory: String = "/dev") -> [GPIOChipInfo] {
    DirectoryListing.numberedNodes(in: directory, prefix: "gpiochip").compactMap { try? describe($0) }
  }

  public static func describe(_ path: String) throws(ButtonError) -> GPIOChipInfo {
    let chip = try GPIOChip(path: path)
    let lines = (0..<chip.lineCount).compactMap { offset -> GPIOLineInfo? in
      guard let line = chip.line(offset) else { return nil }
      return GPIOLineInfo(
        offset: offset, name: gpiod_line_name(line).map { String(cString: $0) },
        consumer: gpiod_line_consumer(line).map { String(cString: $0) }, used: gpiod_line_is_used(line),
        direction: gpiod_line_direction(line) == Int32(GPIOD_LINE_DIRECTION_OUTPUT) ? "output" : "input")
    }
    return GPIOChipInfo(path: path, name: chip.name, label: chip.label, lines: lines)
  }
}
