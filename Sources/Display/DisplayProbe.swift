import CDRM
import LinuxIO

public struct DisplayModeInfo: Encodable, Sendable, Equatable {
  public let name: String
  public let width: Int
  public let height: Int
  public let refresh: Int
  public let preferred: Bool
}

public struct ConnectorInfo: Encodable, Sendable, Equatable {
  public let id: UInt32
  public let name: String
  public let status: String
  public let modes: [DisplayModeInfo]
}

public struct DisplayCardInfo: Encodable, Sendable, Equatable {
  public let path: String
  public let driver: String
  public let connectors: [ConnectorInfo]
}

public enum DisplayProbe {
  /// Every `/dev/dri/card*` with its connectors and modes, in number order.
  public static func list(devicesIn directory: String = "/dev/dri") -> [DisplayCardInfo] {
    DirectoryListing.numberedNodes(in: directory, prefix: "card").compactMap { try? describe($0) }
  }

  public static func describe(_ path: String) throws(DisplayError) -> DisplayCardInfo {
    let card = try DRMCard(path: path)
    let connectors = card.connectors().map { connector in
      ConnectorInfo(
        id: connector.id, name: connector.name, status: connector.status,
        modes: connector.modes.map {
          DisplayModeInfo(
            name: $0.nameString, width: Int($0.hdisplay), height: Int($0.vdisplay), refresh: Int($0.vrefresh),
            preferred: $0.isPreferred)
        })
    }
    return DisplayCardInfo(path: path, driver: card.driver, connectors: connectors)
  }

  /// Whether `device` (a card, or `auto`: any card) has a connected connector with a mode, as the kernel last
  /// knew it: a cheap look, once a second, for a display plugged in again. Opening it then probes for real.
  public static func connectedWithoutProbing(_ device: String, devicesIn directory: String = "/dev/dri") -> Bool {
    let paths = device == "auto" ? DirectoryListing.numberedNodes(in: directory, prefix: "card") : [device]
    return paths.contains { path in
      guard let card = try? DRMCard(path: path) else { return false }
      return card.connectors(probing: false).contains { $0.connected && !$0.modes.isEmpty }
    }
  }

  /// The first card with a connected connector that has a mode: what `device = auto` picks.
  public static func firstConnected(devicesIn directory: String = "/dev/dri") -> String? {
    list(devicesIn: directory).first { card in
      card.connectors.contains { $0.status == "connected" && !$0.modes.isEmpty }
    }?.path
  }
}
