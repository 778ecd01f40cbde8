import Foundation

extension Board {
  /// `waitFor` a condition that only reads what the guest wrote to the share (a log, a file there), polled
  /// every 50 ms: the host reads the file and the guest does nothing for it, and a press's still is logged a
  /// few tenths of a second after the press (the soak's 150 of them waited a quarter second's poll each).
  static func waitOnShare(_ what: String, seconds: Double = 180, _ condition: () throws -> Bool) throws {
    try waitFor(what, seconds: seconds, every: 0.05, condition)
  }

  /// A spawned process's output so far, as `board logs NAME` prints it, read from the share the guest writes
  /// it to; empty before the process has written anything.
  static func logs(_ name: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: "\(share!)/logs/\(name).log") else { return "" }
    return String(decoding: data, as: UTF8.self)
  }

  /// Waits for `line` in `name`'s log; a timeout says what the log ended with instead, so a failure in CI,
  /// where the board is gone afterwards, shows what the service did.
  static func waitForLine(_ line: String, in name: String, seconds: Double = 180) throws {
    do {
      try waitOnShare("\"\(line)\" in \(name)'s log", seconds: seconds) { try logs(name).contains(line) }
    } catch {
      let tail = try logs(name).split(separator: "\n").suffix(20).joined(separator: "\n")
      throw BoardFailure("\(error); its last lines:\n\(tail)")
    }
  }
}
