#if canImport(Glibc)
  import Glibc
#endif
import Buttons
import CameraRoll
import FoundationEssentials
import KioskCore
import LinuxIO

/// The command line of README.md (Commands), parsed into what to do. The executable only calls `main`.
public enum Commands {
  public static let usage = """
    usage: kioskcam --version
           kioskcam run [--config PATH]
           kioskcam probe [--json] [--config PATH]
           kioskcam check-config [--config PATH]
           kioskcam shutter [--socket PATH | --config PATH]
           kioskcam mode still|movie|review [--socket PATH | --config PATH]
           kioskcam zoom in|out|reset [--socket PATH | --config PATH]
           kioskcam status [--json] [--socket PATH | --config PATH]
           kioskcam roll list [--json] [--config PATH]
           kioskcam roll recover [--path DIR] [--config PATH]
    """

  /// Runs one command and returns its exit status; every failure is one plain reason on standard error.
  public static func main(_ arguments: [String]) -> Int32 {
    do {
      try dispatch(arguments)
      return 0
    } catch {
      for line in error.description.split(separator: "\n") { log(String(line)) }
      if case .usage = error {
        let text = Array((usage + "\n").utf8)
        _ = text.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
      }
      return error.exitCode
    }
  }

  static func dispatch(_ arguments: [String]) throws(ServiceError) {
    guard let command = arguments.first else { throw .usage("no command given") }
    var options = Options(arguments.dropFirst())
    switch command {
    case "run":
      let path = try options.value("--config") ?? Config.defaultPath
      try options.finish()
      ProcessMemory.keepCompact()
      let service = try KioskService(config: try ConfigLoader.load(path))
      try service.run()
    case "probe":
      let json = options.flag("--json")
      let path = try options.value("--config")
      try options.finish()
      // Without --config, the verdicts are those of the shipped defaults.
      let report = ProbeReport(config: try path.map { (path) throws(ServiceError) in try ConfigLoader.load(path) } ?? Config())
      if json {
        guard let text = JSONOutput.text(report) else { throw .io("cannot encode the probe report") }
        print(text)
      } else {
        print(report.text)
      }
    case "check-config":
      let path = try options.value("--config") ?? Config.defaultPath
      try options.finish()
      _ = try ConfigLoader.load(path)
      print("\(path): ok")
    case "shutter", "mode", "status", "zoom":
      let request: ControlRequest
      switch command {
      case "shutter": request = .shutter
      case "status": request = .status(json: options.flag("--json"))
      case "zoom":
        guard let word = options.subcommand(), let change = ZoomChange(rawValue: word) else {
          throw .usage("zoom needs one of in, out, reset")
        }
        request = .zoom(change)
      default:
        guard let word = options.subcommand(), let mode = KioskMode(rawValue: word) else {
          throw .usage("mode needs one of still, movie, review")
        }
        request = .mode(mode)
      }
      let path = try socketPath(&options)
      try options.finish()
      let reply = try ControlClient.send(request, to: path)
      if reply.hasPrefix("error: ") {
        throw .unavailable([String(reply.dropFirst(7).withoutLineBreaksAround)])
      }
      print(reply.withoutLineBreaksAround)
    case "roll":
      try roll(&options)
    case "--version", "version":
      try options.finish()
      print(BuildInfo.line)
    case "help", "--help", "-h":
      print(usage)
    default:
      throw .usage("unknown command '\(command)'")
    }
  }
}

/// The control socket: `--socket`, else the one the configuration names, else the default.
private func socketPath(_ options: inout Options) throws(ServiceError) -> String {
  if let socket = try options.value("--socket") { return socket }
  if let path = try options.value("--config") { return try ConfigLoader.load(path).control.socket }
  // The default configuration may be unreadable to an unprivileged user: the default socket is then right.
  return (try? ConfigLoader.load(Config.defaultPath).control.socket) ?? Config().control.socket
}

/// `--name value` and `--flag` options, each at most once; anything left over is a usage error.
struct Options {
  private var remaining: [String]
  init(_ arguments: ArraySlice<String>) { remaining = Array(arguments) }

  /// The first argument when it is a word, not an option.
  mutating func subcommand() -> String? {
    guard let first = remaining.first, !first.hasPrefix("-") else { return nil }
    remaining.removeFirst()
    return first
  }

  mutating func flag(_ name: String) -> Bool {
    guard let index = remaining.firstIndex(of: name) else { return false }
    remaining.remove(at: index)
    return true
  }

  mutating func value(_ name: String) throws(ServiceError) -> String? {
    guard let index = remaining.firstIndex(of: name) else { return nil }
    guard index + 1 < remaining.count else { throw .usage("\(name) needs a value") }
    let value = remaining[index + 1]
    remaining.removeSubrange(index...index + 1)
    return value
  }

  func finish() throws(ServiceError) {
    if let first = remaining.first { throw .usage("unexpected argument '\(first)'") }
  }
}

extension StringProtocol {
  /// Without the line breaks before and after it (a reply ends with one).
  fileprivate var withoutLineBreaksAround: SubSequence {
    var trimmed = self[...]
    while trimmed.first?.isNewline == true { trimmed.removeFirst() }
    while trimmed.last?.isNewline == true { trimmed.removeLast() }
    return trimmed
  }
}
