/// A GPIO line as the configuration names it: by offset on its chip, or by the line's name.
public enum LineReference: Hashable, Sendable, CustomStringConvertible {
  case offset(Int)
  case name(String)

  public init(parsing text: String) {
    if let offset = Int(text), offset >= 0 { self = .offset(offset) } else { self = .name(text) }
  }
  public var description: String {
    switch self {
    case .offset(let offset): "line \(offset)"
    case .name(let name): "line '\(name)'"
    }
  }
}

/// The pull resistor requested on an input line.
public enum Bias: String, Sendable, CaseIterable {
  case asIs = "as-is", disabled, pullUp = "pull-up", pullDown = "pull-down"
}

/// The validated configuration of `/etc/kioskcam/kioskcam.conf`; every default here is the documented one.
public struct Config: Sendable, Equatable {
  public struct Camera: Sendable, Equatable {
    /// `auto` (the first capture device that streams) or a device path.
    public var device = "auto"
    public var format = PixelFormat.yuyv
    public var size = Size(width: 640, height: 360)
    public var frameRate = 30
    /// How the camera is mounted, in degrees clockwise (0, 90, 180, 270): written as EXIF Orientation so
    /// viewers turn the picture upright; the pixels are stored as the sensor reads them.
    public var rotation = 0
  }
  public struct Display: Sendable, Equatable {
    /// `auto` (the first card with a connected connector), `none` (headless), or a card path.
    public var device = "auto"
  }
  public struct Buttons: Sendable, Equatable {
    /// `auto` (the first chip that has the configured lines), a chip name, path or label.
    public var chip = "auto"
    public var shutter: LineReference? = .name("shutter")
    public var mode: LineReference? = nil
    public var activeLow = true
    public var bias = Bias.pullUp
    public var debounce = Duration.milliseconds(30)
  }
  public struct Capture: Sendable, Equatable {
    public var jpegQuality = 90
  }
  public struct Roll: Sendable, Equatable {
    public var path = "/var/lib/kioskcam/roll"
    /// The five characters after the folder number: `100KIOSK`.
    public var folderSuffix = "KIOSK"
    /// Free space, in MiB, kept on the roll's file system: below it the shutter is refused ("Storage full").
    public var freeSpaceReserveMiB = 64
    public var freeSpaceReserveBytes: UInt64 { UInt64(freeSpaceReserveMiB) * 1_048_576 }
  }

  public var camera = Camera()
  public var display = Display()
  public var buttons = Buttons()
  public var capture = Capture()
  public var roll = Roll()

  public init() {}
}

extension Config {
  public static let defaultPath = "/etc/kioskcam/kioskcam.conf"

  /// Parses and validates a whole file; on failure, every problem found, in file order.
  public static func parse(_ bytes: [UInt8], file: String) -> Result<Config, ConfigProblems> {
    let (entries, syntaxProblems) = IniFile.parse(bytes, file: file)
    var problems = syntaxProblems
    var config = Config()
    var seen: [String: Int] = [:]
    for entry in entries {
      func problem(_ message: String) {
        problems.append(ConfigProblem(file: file, line: entry.line, message: message))
      }
      guard let keys = schema[entry.section] else {
        problem("unknown section [\(entry.section)]")
        continue
      }
      guard let apply = keys[entry.key] else {
        let known = keys.keys.sorted().joined(separator: ", ")
        problem("unknown key '\(entry.key)' in [\(entry.section)] (known: \(known))")
        continue
      }
      let qualified = "\(entry.section).\(entry.key)"
      if let first = seen[qualified] {
        problem("duplicate key '\(entry.key)' in [\(entry.section)] (first set on line \(first))")
        continue
      }
      seen[qualified] = entry.line
      if let message = apply(&config, entry.value) { problem("\(entry.section).\(entry.key): \(message)") }
    }
    problems.sort { $0.line < $1.line }
    return problems.isEmpty ? .success(config) : .failure(ConfigProblems(problems: problems))
  }

  /// For each section, each key's parser: it stores the value or returns what is wrong with it.
  static let schema: [String: [String: @Sendable (inout Config, String) -> String?]] = [
    "camera": [
      "device": { config, value in setPath(&config.camera.device, value, keywords: ["auto"]) },
      "format": { config, value in
        guard let format = PixelFormat(rawValue: value.lowercased()) else {
          return "expected one of \(PixelFormat.allCases.map(\.rawValue).joined(separator: ", ")), got '\(value)'"
        }
        config.camera.format = format
        return nil
      },
      "size": { config, value in
        guard let size = Size(parsing: value) else { return "expected WIDTHxHEIGHT such as 640x360, got '\(value)'" }
        config.camera.size = size
        return nil
      },
      "frame-rate": { config, value in setInteger(&config.camera.frameRate, value, in: 1...240) },
      "rotation": { config, value in
        guard let degrees = Int(value), [0, 90, 180, 270].contains(degrees) else {
          return "expected 0, 90, 180 or 270, got \(value.quotedForMessage)"
        }
        config.camera.rotation = degrees
        return nil
      },
    ],
    "display": [
      "device": { config, value in setPath(&config.display.device, value, keywords: ["auto", "none"]) }
    ],
    "buttons": [
      "chip": { config, value in
        guard !value.isEmpty else { return "expected auto, a chip name, path or label" }
        config.buttons.chip = value
        return nil
      },
      "shutter": { config, value in setLine(&config.buttons.shutter, value) },
      "mode": { config, value in setLine(&config.buttons.mode, value) },
      "active-low": { config, value in setBoolean(&config.buttons.activeLow, value) },
      "bias": { config, value in
        guard let bias = Bias(rawValue: value) else {
          return "expected one of \(Bias.allCases.map(\.rawValue).joined(separator: ", ")), got '\(value)'"
        }
        config.buttons.bias = bias
        return nil
      },
      "debounce-ms": { config, value in
        var milliseconds = 0
        if let message = setInteger(&milliseconds, value, in: 0...1000) { return message }
        config.buttons.debounce = .milliseconds(milliseconds)
        return nil
      },
    ],
    "capture": [
      "jpeg-quality": { config, value in setInteger(&config.capture.jpegQuality, value, in: 1...100) }
    ],
    "roll": [
      "path": { config, value in setPath(&config.roll.path, value, keywords: []) },
      "folder-suffix": { config, value in
        let valid = value.utf8.count == 5
          && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || $0 == 0x5F }
        guard valid else { return "expected 5 characters of A-Z, 0-9 or _ (DCF), got '\(value)'" }
        config.roll.folderSuffix = value
        return nil
      },
      "free-space-reserve-mb": { config, value in setInteger(&config.roll.freeSpaceReserveMiB, value, in: 0...1_048_576) },
    ],
  ]
}

/// Every problem found in one configuration file.
public struct ConfigProblems: Error, Sendable, Equatable, CustomStringConvertible {
  public var problems: [ConfigProblem]
  public init(problems: [ConfigProblem]) { self.problems = problems }
  public var description: String { problems.map(\.description).joined(separator: "\n") }
}

private func setInteger(_ target: inout Int, _ value: String, in range: ClosedRange<Int>) -> String? {
  guard let number = Int(value) else { return "expected a whole number, got \(value.quotedForMessage)" }
  guard range.contains(number) else { return "\(number) is out of range \(range.lowerBound)...\(range.upperBound)" }
  target = number
  return nil
}

private func setBoolean(_ target: inout Bool, _ value: String) -> String? {
  switch value.lowercased() {
  case "yes", "true", "on", "1": target = true
  case "no", "false", "off", "0": target = false
  default: return "expected yes or no, got \(value.quotedForMessage)"
  }
  return nil
}

private func setPath(_ target: inout String, _ value: String, keywords: [String]) -> String? {
  if keywords.contains(value) || value.hasPrefix("/") {
    target = value
    return nil
  }
  let choices = (keywords + ["an absolute path"]).joined(separator: ", ")
  return "expected \(choices), got \(value.quotedForMessage)"
}

private func setLine(_ target: inout LineReference?, _ value: String) -> String? {
  if value == "none" {
    target = nil
    return nil
  }
  guard !value.isEmpty, !value.hasPrefix("-") else { return "expected a line offset, a line name, or none" }
  target = LineReference(parsing: value)
  return nil
}
