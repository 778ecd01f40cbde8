extension Config {
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
    // Keys whose value was refused: their problem is reported, and what they left (the default) is not theirs.
    var refused: Set<String> = []
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
      if let message = apply(&config, entry.value) {
        problem("\(entry.section).\(entry.key): \(message)")
        refused.insert(qualified)
      }
    }
    problems += reconcileCapabilities(&config, required: seen["capabilities.required"],
      optional: seen["capabilities.optional"], file: file)
    problems += lineConflicts(config, setOn: seen, refused: refused, file: file)
    problems += cameraDeviceBackend(config, setOn: seen, refused: refused, file: file)
    // Stable: two problems on one line keep the order in which they were found.
    problems = problems.enumerated().sorted { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }
      .map(\.element)
    return problems.isEmpty ? .success(config) : .failure(ConfigProblems(problems: problems))
  }

  /// For each section, each key's parser: it stores the value or returns what is wrong with it.
  static let schema: [String: [String: @Sendable (inout Config, String) -> String?]] = [
    "camera": [
      "backend": { config, value in setChoice(&config.camera.backend, value, ignoringCase: true) },
      "device": { config, value in
        let paths = value.split(separator: ",", omittingEmptySubsequences: false).map { part in
          String(part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }
        guard paths.count > 1 else {
          guard value == "auto" || Camera.isDeviceName(value) else {
            return "expected auto, an absolute path, or a libcamera camera id as kioskcam probe lists it, got \(value.quotedForMessage)"
          }
          config.camera.device = value
          return nil
        }
        let cycle = paths.allSatisfy(Camera.isDeviceName)
        if cycle, Set(paths).count == paths.count {
          config.camera.device = paths[0]
          config.camera.cycle = paths
          return nil
        }
        // One libcamera id with commas in it: a Pi 4's USB webcam is `/base/scb/pcie@7d500000/pci@0,0/usb@0,0-1:1.0-046d:0825`.
        // (Only a libcamera backend takes it: the cross-key check refuses it under backend = v4l2.)
        guard !cycle, value.hasPrefix("/"), !value.contains(" "), !value.contains("\t") else {
          return "expected auto, a path, or different paths separated by commas, got \(value.quotedForMessage)"
        }
        config.camera.device = value
        return nil
      },
      "format": { config, value in setChoice(&config.camera.format, value, ignoringCase: true) },
      "size": { config, value in
        guard let size = Size(parsing: value) else { return "expected WIDTHxHEIGHT such as 640x360, got \(value.quotedForMessage)" }
        config.camera.size = size
        return nil
      },
      "frame-rate": { config, value in setInteger(&config.camera.frameRate, value, in: 1...240) },
      "rotation": { config, value in setQuarterTurn(&config.camera.rotation, value) },
    ],
    "display": [
      "device": { config, value in setPath(&config.display.device, value, keywords: ["auto", "none"]) },
      "missing-message-seconds": { config, value in
        var seconds = 0
        if let message = setInteger(&seconds, value, in: 0...600) { return message }
        config.display.missingMessage = .seconds(seconds)
        return nil
      },
      "rotation": { config, value in setQuarterTurn(&config.display.rotation, value) },
      "mirror": { config, value in setBoolean(&config.display.mirror, value) },
      "font": { config, value in setPath(&config.display.font, value, keywords: []) },
      "preview-workers": { config, value in
        guard value != "auto" else {
          config.display.previewWorkers = nil
          return nil
        }
        guard let workers = Int(value), (1...16).contains(workers) else {
          return "expected auto or a number of threads from 1 to 16, got \(value.quotedForMessage)"
        }
        config.display.previewWorkers = workers
        return nil
      },
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
      // Matched as written, unlike format and quality: "Pull-Up" has always been refused.
      "bias": { config, value in setChoice(&config.buttons.bias, value, ignoringCase: false) },
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
      "quality": { config, value in setChoice(&config.movie.quality, value, ignoringCase: true) },
      "codec": { config, value in setChoice(&config.movie.codec, value, ignoringCase: true) },
      "audio": { config, value in
        guard let audio = MovieAudio(parsing: value) else {
          return "expected auto, none, or an ALSA capture PCM such as hw:1,0 or plughw:CARD=Loopback,DEV=1, got \(value.quotedForMessage)"
        }
        config.movie.audio = audio
        return nil
      },
    ],
    "capture": [
      "jpeg-quality": { config, value in setInteger(&config.capture.jpegQuality, value, in: 1...100) },
      "countdown-s": { config, value in setDuration(&config.capture.countdown, value, unit: .seconds(1), in: 0...30) },
      "review-s": { config, value in setDuration(&config.capture.photoCheck, value, unit: .seconds(1), in: 0...60) },
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
}

/// Every problem found in one configuration file.
public struct ConfigProblems: Error, Sendable, Equatable, CustomStringConvertible {
  public var problems: [ConfigProblem]
  public init(problems: [ConfigProblem]) { self.problems = problems }
  public var description: String { problems.map(\.description).joined(separator: "\n") }
}
