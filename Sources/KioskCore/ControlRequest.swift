/// One line sent to the control socket by `kioskcam shutter`, `kioskcam mode M` or `kioskcam status`.
public enum ControlRequest: Sendable, Equatable {
  case shutter
  case mode(KioskMode)
  case status(json: Bool)
  case zoom(ZoomChange)

  /// Parses a request line; nil with a reason for anything else.
  public static func parse(_ line: String) -> Result<ControlRequest, ControlRequestError> {
    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
    switch words {
    case ["shutter"]: return .success(.shutter)
    case ["status"]: return .success(.status(json: false))
    case ["status", "--json"]: return .success(.status(json: true))
    case let words where words.count == 2 && words[0] == "zoom":
      guard let change = ZoomChange(rawValue: words[1]) else {
        return .failure(ControlRequestError("unknown zoom '\(words[1])' (in, out or reset)"))
      }
      return .success(.zoom(change))
    case let words where words.count == 2 && words[0] == "mode":
      guard let mode = KioskMode(rawValue: words[1]) else {
        return .failure(ControlRequestError("unknown mode '\(words[1])' (still, movie or review)"))
      }
      return .success(.mode(mode))
    default:
      return .failure(ControlRequestError("unknown request '\(line.prefix(60))' (shutter, mode M, zoom in|out|reset, status [--json])"))
    }
  }

  /// The line the client sends.
  public var line: String {
    switch self {
    case .shutter: "shutter"
    case .mode(let mode): "mode \(mode.rawValue)"
    case .status(let json): json ? "status --json" : "status"
    case .zoom(let change): "zoom \(change.rawValue)"
    }
  }
}

public struct ControlRequestError: Error, Sendable, Equatable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// What the kiosk answers a control request; the control server turns it into the line the client prints.
public enum ControlReply: Sendable, Equatable {
  case ok
  /// The shutter was refused, and why (the same words as the log's "shutter refused: ...").
  case refused(String)
  /// The mode asked for is not one the kiosk can offer now.
  case modeUnavailable(KioskMode, available: [KioskMode])
  /// `status`: the service's report, which only the service can put together.
  case status(json: Bool)

  /// The reply line; nil for `status`, whose text comes from the service.
  public var line: String? {
    switch self {
    case .ok: "ok"
    case .refused(let reason): "error: shutter refused: \(reason)"
    case .modeUnavailable(let mode, let available):
      "error: mode \(mode.rawValue) is not available (available: "
        + (available.isEmpty ? "none" : available.map(\.rawValue).joined(separator: ", ")) + ")"
    case .status: nil
    }
  }
}
