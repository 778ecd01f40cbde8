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
    let lines = (0..<chip.lineCount).compactMap { chip.info($0) }
    return GPIOChipInfo(path: path, name: chip.name, label: chip.label, lines: lines)
  }
}
