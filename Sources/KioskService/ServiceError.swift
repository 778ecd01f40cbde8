import KioskCore

/// Why the service or a command stopped, with the sysexits code README.md (Commands) promises.
public enum ServiceError: Error, Sendable, CustomStringConvertible {
  /// 64: the command line is wrong.
  case usage(String)
  /// 69: a required device or capability is unavailable.
  case unavailable([String])
  /// 74: an I/O error.
  case io(String)
  /// 78: the configuration is wrong, every problem with file and line.
  case configuration(ConfigProblems)

  public var exitCode: Int32 {
    switch self {
    case .usage: 64
    case .unavailable: 69
    case .io: 74
    case .configuration: 78
    }
  }

  public var description: String {
    switch self {
    case .usage(let text), .io(let text): text
    case .unavailable(let reasons): reasons.joined(separator: "\n")
    case .configuration(let problems): problems.description
    }
  }
}
