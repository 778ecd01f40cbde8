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
    /// `auto` (the first capture device that streams) or a device path: the camera used at start.
    public var device = "auto"
    /// Every camera the `camera` button cycles through, in order, when the configuration names more than
    /// one (`device = /dev/video0, /dev/video2`); empty with a single camera.
    public var cycle: [String] = []
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
    /// How long the reasons stay on screen before the service exits for a missing required capability.
    public var missingMessage = Duration.seconds(10)
    /// Degrees clockwise the preview is turned on the panel (0, 90, 180, 270): for a display mounted in
    /// portrait or upside down. The saved files are not turned (see `[camera] rotation` for those).
    public var rotation = 0
    /// Mirror the preview left to right, as photo booths do; the saved files are never mirrored.
    public var mirror = false
    /// The PSF2 console font the overlay's words are drawn in (gzipped or not), read at start.
    public var font = "/usr/share/consolefonts/Lat15-TerminusBold32x16.psf.gz"
  }
  public struct Buttons: Sendable, Equatable {
    /// `auto` (the first chip that has the configured lines), a chip name, path or label.
    public var chip = "auto"
    public var shutter: LineReference? = .name("shutter")
    public var mode: LineReference? = nil
    public var cancel: LineReference? = nil
    public var camera: LineReference? = nil
    public var zoomIn: LineReference? = nil
    public var zoomOut: LineReference? = nil
    public var activeLow = true
    public var bias = Bias.pullUp
    public var debounce = Duration.milliseconds(30)
    public var minimumPulse = Duration.milliseconds(5)
    public var longPress = Duration.milliseconds(800)

    /// Every configured role with its line, in role order.
    public var lines: [(ButtonRole, LineReference)] {
      let all: [(ButtonRole, LineReference?)] = [
        (.shutter, shutter), (.mode, mode), (.cancel, cancel), (.camera, camera), (.zoomIn, zoomIn),
        (.zoomOut, zoomOut),
      ]
      return all.compactMap { role, line in line.map { (role, $0) } }
    }

    public var timing: GestureTiming {
      GestureTiming(debounce: debounce, minimumPulse: minimumPulse, hold: longPress)
    }
  }
  public struct Outputs: Sendable, Equatable {
    /// Lamps on the buttons' chip, by offset or name; none = not fitted.
    public var tally: LineReference? = nil
    public var ready: LineReference? = nil
    public var flash: LineReference? = nil
    /// How long the flash lamp is lit before the frame that becomes the still: the exposure must happen in
    /// its light, so a flash still is the first frame taken this long after the press, not the nearest one.
    public var flashLead = Duration.milliseconds(100)
    /// The flash lamp stays lit while a movie records, as a video light.
    public var flashForMovies = false
    /// Lamps wired to light when the line is low.
    public var activeLow = false

    public var lines: [(Output, LineReference)] {
      [(Output.tally, tally), (.ready, ready), (.flash, flash)].compactMap { output, line in line.map { (output, $0) } }
    }
  }
  public struct Capture: Sendable, Equatable {
    public var jpegQuality = 90
    /// Seconds counted down on screen before a still; 0 = at the press.
    public var countdown = Duration.zero
    /// Seconds the photo just taken stays on screen for "use photo / retake"; 0 = no review.
    public var review = Duration.zero
    /// Digital zoom, in hundredths of the factor (400 = 4.0x): the most the zoom buttons go to, and each step.
    public var zoomMaximum = 400
    public var zoomStep = 50
  }
  public struct Movie: Sendable, Equatable {
    /// A recording stops by itself after this long.
    public var maximumDuration = Duration.seconds(600)
    /// What the camera must stream for `movie-camera` to pass.
    public var size = Size(width: 640, height: 360)
    public var frameRate = 25
    /// Frame size and JPEG quality of what is recorded (`videoQuality`).
    public var quality = MovieQuality.high
  }
  public struct Review: Sendable, Equatable {
    /// Review mode with no press (and no movie playing) for this long returns to the live picture.
    public var idle = Duration.seconds(60)
    /// Whether a long press on cancel, confirmed with shutter, deletes the item on screen.
    public var allowDelete = false
  }
  public struct Roll: Sendable, Equatable {
    public var path = "/var/lib/kioskcam/roll"
    /// The five characters after the folder number: `100KIOSK`.
    public var folderSuffix = "KIOSK"
    /// Free space, in MiB, the roll's file system must keep: below it at start `camera-roll` fails, and
    /// while running the shutter is refused ("Storage full") before the disk fills.
    public var reserveMegabytes = 64
    public var reserveBytes: UInt64 { UInt64(reserveMegabytes) * 1_048_576 }
    public var mount = RollMount.separate
  }
  public struct Capabilities: Sendable, Equatable {
    public static let defaultRequired: [Capability] = [.stillCamera, .shutterButton, .cameraRoll]
    public var required = defaultRequired
    /// By default every capability that is not required.
    public var optional = Capability.allCases.filter { !defaultRequired.contains($0) }
  }

  public struct Control: Sendable, Equatable {
    /// Where `kioskcam shutter`, `mode` and `status` find the running service.
    public var socket = "/run/kioskcam/control.sock"
    /// The group allowed to use it (mode 0660); empty = the service's own group.
    public var group = ""
  }

  public var camera = Camera()
  public var display = Display()
  public var buttons = Buttons()
  public var outputs = Outputs()
  public var capture = Capture()
  public var movie = Movie()
  public var review = Review()
  public var roll = Roll()
  public var control = Control()
  public var capabilities = Capabilities()

  public init() {}
}

extension Config {
  public static let defaultPath = "/etc/kioskcam/kioskcam.conf"

  /// Parses and validates a whole file; on failure, every problem found, in file order.
  public static func parse(_ bytes: [UInt8], file: String) -> Result<Config, ConfigProblems> {
    let (entries, sections, syntaxProblems) = IniFile.parse(bytes, file: file)
    var problems = syntaxProblems
    // An unknown section is reported once, at its header; its keys would only repeat the news.
    for section in sections where schema[section.name] == nil {
      let known = schema.keys.sorted().joined(separator: ", ")
      problems.append(ConfigProblem(file: file, line: section.line, message: "unknown section [\(section.name)] (known: \(known))"))
    }
    var config = Config()
    var seen: [String: Int] = [:]
    for entry in entries {
      func problem(_ message: String) {
        problems.append(ConfigProblem(file: file, line: entry.line, message: message))
      }
      guard let keys = schema[entry.section] else { continue }
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
    problems += reconcileCapabilities(&config, required: seen["capabilities.required"],
      optional: seen["capabilities.optional"], file: file)
    // Stable: two problems on one line keep the order in which they were found.
    problems = problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
      .map(\.element)
    return problems.isEmpty ? .success(config) : .failure(ConfigProblems(problems: problems))
  }

  /// For each section, each key's parser: it stores the value or returns what is wrong with it.
  static let schema: [String: [String: @Sendable (inout Config, String) -> String?]] = [
    "camera": [
      "device": { config, value in
        let paths = value.split(separator: ",", omittingEmptySubsequences: false).map { part in
          String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }
        guard paths.count > 1 else { return setPath(&config.camera.device, value, keywords: ["auto"]) }
        guard paths.allSatisfy({ $0.hasPrefix("/") }), Set(paths).count == paths.count else {
          return "expected auto, a path, or different paths separated by commas, got \(value.quotedForMessage)"
        }
        config.camera.device = paths[0]
        config.camera.cycle = paths
        return nil
      },
      "format": { config, value in
        guard let format = PixelFormat(rawValue: value.lowercased()) else {
          return "expected one of \(PixelFormat.allCases.map(\.rawValue).joined(separator: ", ")), got \(value.quotedForMessage)"
        }
        config.camera.format = format
        return nil
      },
      "size": { config, value in
        guard let size = Size(parsing: value) else { return "expected WIDTHxHEIGHT such as 640x360, got \(value.quotedForMessage)" }
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
      "device": { config, value in setPath(&config.display.device, value, keywords: ["auto", "none"]) },
      "missing-message-seconds": { config, value in
        var seconds = 0
        if let message = setInteger(&seconds, value, in: 0...600) { return message }
        config.display.missingMessage = .seconds(seconds)
        return nil
      },
      "rotation": { config, value in
        guard let degrees = Int(value), [0, 90, 180, 270].contains(degrees) else {
          return "expected 0, 90, 180 or 270, got \(value.quotedForMessage)"
        }
        config.display.rotation = degrees
        return nil
      },
      "mirror": { config, value in setBoolean(&config.display.mirror, value) },
      "font": { config, value in setPath(&config.display.font, value, keywords: []) },
    ],
    "buttons": [
      "chip": { config, value in
        guard !value.isEmpty else { return "expected auto, a chip name, path or label" }
        config.buttons.chip = value
        return nil
      },
      "shutter": { config, value in setLine(&config.buttons.shutter, value) },
      "mode": { config, value in setLine(&config.buttons.mode, value) },
      "cancel": { config, value in setLine(&config.buttons.cancel, value) },
      "camera": { config, value in setLine(&config.buttons.camera, value) },
      "zoom-in": { config, value in setLine(&config.buttons.zoomIn, value) },
      "zoom-out": { config, value in setLine(&config.buttons.zoomOut, value) },
      "active-low": { config, value in setBoolean(&config.buttons.activeLow, value) },
      "bias": { config, value in
        guard let bias = Bias(rawValue: value) else {
          return "expected one of \(Bias.allCases.map(\.rawValue).joined(separator: ", ")), got \(value.quotedForMessage)"
        }
        config.buttons.bias = bias
        return nil
      },
      "debounce-ms": { config, value in setDuration(&config.buttons.debounce, value, unit: .milliseconds(1), in: 0...1000) },
      "min-pulse-ms": { config, value in
        setDuration(&config.buttons.minimumPulse, value, unit: .milliseconds(1), in: 0...500)
      },
      "long-press-ms": { config, value in
        setDuration(&config.buttons.longPress, value, unit: .milliseconds(1), in: 100...10_000)
      },
    ],
    "outputs": [
      "tally": { config, value in setLine(&config.outputs.tally, value) },
      "ready": { config, value in setLine(&config.outputs.ready, value) },
      "flash": { config, value in setLine(&config.outputs.flash, value) },
      "flash-lead-ms": { config, value in
        setDuration(&config.outputs.flashLead, value, unit: .milliseconds(1), in: 0...5000)
      },
      "flash-movies": { config, value in setBoolean(&config.outputs.flashForMovies, value) },
      "active-low": { config, value in setBoolean(&config.outputs.activeLow, value) },
    ],
    "movie": [
      "maximum-duration-s": { config, value in
        setDuration(&config.movie.maximumDuration, value, unit: .seconds(1), in: 1...86_400)
      },
      "size": { config, value in
        guard let size = Size(parsing: value) else { return "expected WIDTHxHEIGHT such as 640x360, got \(value.quotedForMessage)" }
        config.movie.size = size
        return nil
      },
      "frame-rate": { config, value in setInteger(&config.movie.frameRate, value, in: 1...240) },
      "quality": { config, value in
        guard let quality = MovieQuality(rawValue: value.lowercased()) else {
          return "expected one of \(MovieQuality.allCases.map(\.rawValue).joined(separator: ", ")), got \(value.quotedForMessage)"
        }
        config.movie.quality = quality
        return nil
      },
    ],
    "capture": [
      "jpeg-quality": { config, value in setInteger(&config.capture.jpegQuality, value, in: 1...100) },
      "countdown-s": { config, value in setDuration(&config.capture.countdown, value, unit: .seconds(1), in: 0...30) },
      "review-s": { config, value in setDuration(&config.capture.review, value, unit: .seconds(1), in: 0...60) },
      "zoom-maximum": { config, value in setZoomFactor(&config.capture.zoomMaximum, value, in: 100...800) },
      "zoom-step": { config, value in setZoomFactor(&config.capture.zoomStep, value, in: 5...700) },
    ],
    "review": [
      "idle-s": { config, value in setDuration(&config.review.idle, value, unit: .seconds(1), in: 1...3600) },
      "allow-delete": { config, value in setBoolean(&config.review.allowDelete, value) },
    ],
    "control": [
      "socket": { config, value in setPath(&config.control.socket, value, keywords: []) },
      "group": { config, value in
        let valid = value.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2D }
        guard valid, value.utf8.count <= 32 else { return "expected a group name, got \(value.quotedForMessage)" }
        config.control.group = value
        return nil
      },
    ],
    "roll": [
      "path": { config, value in setPath(&config.roll.path, value, keywords: []) },
      "folder-suffix": { config, value in
        let valid = value.utf8.count == 5
          && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || $0 == 0x5F }
        guard valid else { return "expected 5 characters of A-Z, 0-9 or _ (DCF), got \(value.quotedForMessage)" }
        config.roll.folderSuffix = value
        return nil
      },
      "reserve-mb": { config, value in setInteger(&config.roll.reserveMegabytes, value, in: 0...16_777_216) },
      "mount": { config, value in
        guard let mount = RollMount(parsing: value) else {
          return "expected any, separate, mount-point, label:NAME or uuid:UUID, got \(value.quotedForMessage)"
        }
        config.roll.mount = mount
        return nil
      },
    ],
    "capabilities": [
      "required": { config, value in setCapabilities(&config.capabilities.required, value) },
      "optional": { config, value in setCapabilities(&config.capabilities.optional, value) },
    ],
  ]

  /// A capability named in one list leaves the other's default; named in both lists, it is an error on the later line.
  private static func reconcileCapabilities(
    _ config: inout Config, required: Int?, optional: Int?, file: String
  ) -> [ConfigProblem] {
    switch (required, optional) {
    case (nil, nil):
      return []
    case (.some, nil):
      config.capabilities.optional = Capability.allCases.filter { !config.capabilities.required.contains($0) }
      return []
    case (nil, .some):
      config.capabilities.required.removeAll { config.capabilities.optional.contains($0) }
      return []
    case (.some(let requiredLine), .some(let optionalLine)):
      let both = config.capabilities.required.filter { config.capabilities.optional.contains($0) }
      guard !both.isEmpty else { return [] }
      let names = both.map { "'\($0)'" }.joined(separator: ", ")
      let message =
        optionalLine > requiredLine
        ? "capabilities.optional: \(names) also required (line \(requiredLine)); a capability is one or the other"
        : "capabilities.required: \(names) also optional (line \(optionalLine)); a capability is one or the other"
      return [ConfigProblem(file: file, line: max(requiredLine, optionalLine), message: message)]
    }
  }
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

/// A zoom factor written as 2, 2.5 or 0.25 (at most two decimals), kept in hundredths.
private func setZoomFactor(_ target: inout Int, _ value: String, in range: ClosedRange<Int>) -> String? {
  let parts = value.split(separator: ".", omittingEmptySubsequences: false)
  let fraction = parts.count == 2 ? String(parts[1]) : ""
  guard parts.count <= 2, let whole = Int(parts[0]), whole >= 0, fraction.count <= 2,
    fraction.allSatisfy({ $0.isASCII && $0.isNumber }), parts.count == 1 || !fraction.isEmpty
  else { return "expected a factor such as 2 or 2.5, got \(value.quotedForMessage)" }
  let hundredths = whole * 100 + (Int(fraction.count == 1 ? fraction + "0" : fraction) ?? 0)
  guard range.contains(hundredths) else {
    func factor(_ h: Int) -> String { h % 100 == 0 ? "\(h / 100).0" : "\(h / 100).\(h % 100 < 10 ? "0" : "")\(h % 100)" }
    return "\(value) is out of range \(factor(range.lowerBound))...\(factor(range.upperBound))"
  }
  target = hundredths
  return nil
}

private func setDuration(_ target: inout Duration, _ value: String, unit: Duration, in range: ClosedRange<Int>)
  -> String?
{
  var count = 0
  if let message = setInteger(&count, value, in: range) { return message }
  target = unit * count
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

private func setCapabilities(_ target: inout [Capability], _ value: String) -> String? {
  if value == "none" {
    target = []
    return nil
  }
  let names = value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
  guard !names.isEmpty else { return "expected capability names separated by commas, or none" }
  var list: [Capability] = []
  for name in names {
    guard let capability = Capability(rawValue: String(name)) else {
      return "unknown capability \(name.quotedForMessage) (known: \(Capability.known))"
    }
    guard !list.contains(capability) else { return "'\(capability)' listed twice" }
    list.append(capability)
  }
  target = list
  return nil
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
