import Buttons
import Camera
import CameraRoll
import Display
import KioskCore
import LibcameraCamera
import V4L2Codec

/// One capability's verdict in the probe report.
public struct CapabilityReport: Encodable, Sendable, Equatable {
  public let name: String
  /// `required`, `optional` or `unused`, from the configuration.
  public let role: String
  public let passed: Bool
  public let evidence: String
}

/// What `kioskcam probe` found: every device the kiosk could use, the roll's storage, and what follows from them
/// for the configuration: each capability's verdict, the media types, and what would stop `kioskcam run`.
public struct ProbeReport: Encodable, Sendable {
  public let cameras: [CameraInfo]
  /// libcamera's version and cameras, or why the shim or libcamera could not be loaded.
  public let libcamera: LibcameraReport
  public let displays: [DisplayCardInfo]
  /// For each card with a connected connector: whether a hardware plane could scale the camera's frames.
  public let displayPlanes: [PlaneDecision]
  public let gpioChips: [GPIOChipInfo]
  /// Memory-to-memory codec nodes (a Pi's bcm2835-codec, the board's vicodec) and their formats.
  public let codecs: [CodecInfo]
  /// What the preview would decode the camera's MJPEG frames with, and why.
  public let previewDecoder: String
  public let storage: StorageInfo
  public let capabilities: [CapabilityReport]
  public let mediaTypes: [String]
  /// One line per missing required capability: what `kioskcam run` would exit 69 with.
  public let missingRequired: [String]

  public init(config: Config) {
    cameras = CameraProbe.list()
    libcamera = LibcameraReport()
    displays = DisplayProbe.list()
    let size = config.camera.size
    displayPlanes = displays.filter { $0.connectors.contains { $0.status == "connected" && !$0.modes.isEmpty } }
      .compactMap { try? PlaneProbe.probe(path: $0.path, sourceWidth: size.width, sourceHeight: size.height) }
    // Listed before the capability probes request button lines, so the listing shows who else holds them.
    gpioChips = GPIOProbe.list()
    codecs = CodecProbe.codecs()
    previewDecoder = CapabilityProbe.previewDecoder(config).evidence
    storage = StorageInfo(path: config.roll.path)
    let gate = CapabilityGate(config)
    let results = CapabilityProbe.all(config)
    capabilities = results.map {
      CapabilityReport(
        name: $0.capability.rawValue, role: gate.role(of: $0.capability).rawValue, passed: $0.passed,
        evidence: $0.evidence)
    }
    let verdict = gate.evaluate(results)
    mediaTypes = verdict.mediaTypes.map(\.rawValue)
    missingRequired = verdict.fatal
  }

  /// The report for people: one block a device, sizes and rates in the forms V4L2 tools print.
  public var text: String {
    var lines: [String] = []
    lines.append("Cameras:")
    if cameras.isEmpty { lines.append("  none") }
    for camera in cameras {
      lines.append("  \(camera.path): \(camera.card) (driver \(camera.driver), \(camera.bus))\(camera.streaming ? "" : " [no streaming]")")
      for format in camera.formats {
        let sizes = format.sizes.map { size in
          let rates = size.frameRates.map { rateText($0.framesPerSecond) }
          return "\(size.width)x\(size.height)" + (rates.isEmpty ? "" : "@\(rates.joined(separator: "/"))")
        }
        lines.append("    \(format.fourcc) \(format.description)\(format.emulated ? " (emulated by libv4l2)" : ""): \(sizes.joined(separator: " "))")
      }
      if camera.capture { lines.append("    zoom: \(camera.zoom)") }
    }
    lines.append("libcamera:")
    lines += libcamera.text
    lines.append("Displays:")
    if displays.isEmpty { lines.append("  none") }
    for card in displays {
      lines.append("  \(card.path): driver \(card.driver)")
      for connector in card.connectors {
        let modes = connector.modes.map { "\($0.name)@\($0.refresh)\($0.preferred ? "*" : "")" }
        lines.append("    \(connector.name) (id \(connector.id)) \(connector.status): \(modes.joined(separator: " "))")
      }
      for planes in displayPlanes where planes.card == card.path {
        lines.append("    preview plane: \(planes.decision): \(planes.evidence)")
      }
    }
    lines.append("GPIO chips:")
    if gpioChips.isEmpty { lines.append("  none") }
    for chip in gpioChips {
      lines.append("  \(chip.path): \(chip.name) '\(chip.label)', \(chip.lines.count) lines")
      for line in chip.lines where line.name != nil || line.used {
        let usage = line.used ? " used by \(line.consumer ?? "the kernel")" : ""
        lines.append("    \(line.offset) \(line.name ?? "-") \(line.direction)\(usage)")
      }
    }
    lines.append("Codecs (memory to memory):")
    if codecs.isEmpty { lines.append("  none") }
    for codec in codecs { lines.append("  \(codec.summary)") }
    lines.append("  preview decoder: \(previewDecoder)")
    lines.append("Storage:")
    var space = storage.availableBytes.map { "\($0 / 1_048_576) MiB free of \((storage.totalBytes ?? 0) / 1_048_576) MiB" } ?? "no file system"
    if let largest = storage.largestFile { space += ", files up to \(largest / 1_048_576) MiB (movies stop there)" }
    lines.append("  \(storage.path): \(storage.exists ? "exists" : "missing"), \(storage.writable ? "writable" : "not writable"), \(space)")
    lines.append("Capabilities:")
    if capabilities.isEmpty { lines.append("  none wanted") }
    for capability in capabilities {
      lines.append("  \(capability.name) (\(capability.role)): \(capability.passed ? "ok" : "MISSING"): \(capability.evidence)")
    }
    lines.append("Media types: \(mediaTypes.isEmpty ? "none" : mediaTypes.joined(separator: ", "))")
    if !missingRequired.isEmpty { lines.append("kioskcam run would stop: a required capability is missing") }
    return lines.joined(separator: "\n")
  }
}
