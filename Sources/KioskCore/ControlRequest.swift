/// One line sent to the control socket by `kioskcam shutter`, `kioskcam mode M` or `kioskcam status`.
public enum ControlRequest: Sendable, Equatable {
  case shutter
  case mode(KioskMode)
  case status(json: Bool)

  /// Parses a request line; nil with a reason for anything else.
  public static func parse(_ line: String) -> Result<ControlRequest, ControlRequestError> {
    let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
    switch words {
    case ["shutter"]: return .success(.shutter)
    case ["status"]: return .success(.status(json: false))
    case ["status", "--json"]: return .success(.status(json: true))
    case let words where words.count == 2 && words[0] == "mode":
      guard let mode = KioskMode(rawValue: words[1]) else {
        return .failure(ControlRequestError("unknown mode '\(words[1])' (still, movie or review)"))
      }
      return .success(.mode(mode))
    default:
      return .failure(ControlRequestError("unknown request '\(line.prefix(60))' (shutter, mode M, status [--json])"))
    }
  }

  /// The line the client sends.
  public var line: String {
    switch self {
    case .shutter: "shutter"
    case .mode(let mode): "mode \(mode.rawValue)"
    case .status(let json): json ? "status --json" : "status"
    }
  }
}

public struct ControlRequestError: Error, Sendable, Equatable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
