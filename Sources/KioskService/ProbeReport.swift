import Buttons
import Camera
import CameraRoll
import Display
import KioskCore

/// What `kioskcam probe` found: every device the kiosk could use, and the roll's storage.
public struct ProbeReport: Encodable, Sendable {
  public let cameras: [CameraInfo]
  public let displays: [DisplayCardInfo]
  public let gpioChips: [GPIOChipInfo]
  public let storage: StorageInfo

  public init(rollPath: String) {
    cameras = CameraProbe.list()
    displays = DisplayProbe.list()
    gpioChips = GPIOProbe.list()
    storage = StorageInfo(path: rollPath)
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
          let rates = size.frameRates.map { formatRate($0.framesPerSecond) }
          return "\(size.width)x\(size.height)" + (rates.isEmpty ? "" : "@\(rates.joined(separator: "/"))")
        }
        lines.append("    \(format.fourcc) \(format.description)\(format.emulated ? " (emulated by libv4l2)" : ""): \(sizes.joined(separator: " "))")
      }
    }
    lines.append("Displays:")
    if displays.isEmpty { lines.append("  none") }
    for card in displays {
      lines.append("  \(card.path): driver \(card.driver)")
      for connector in card.connectors {
        let modes = connector.modes.map { "\($0.name)@\($0.refresh)\($0.preferred ? "*" : "")" }
        lines.append("    \(connector.name) (id \(connector.id)) \(connector.status): \(modes.joined(separator: " "))")
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
    lines.append("Storage:")
    let space = storage.availableBytes.map { "\($0 / 1_048_576) MiB free of \((storage.totalBytes ?? 0) / 1_048_576) MiB" } ?? "no file system"
    lines.append("  \(storage.path): \(storage.exists ? "exists" : "missing"), \(storage.writable ? "writable" : "not writable"), \(space)")
    return lines.joined(separator: "\n")
  }
}

private func formatRate(_ rate: Double) -> String {
  let rounded = (rate * 100).rounded() / 100
  return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
}
