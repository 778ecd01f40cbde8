import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Requests to the guest agent through the board supervisor's `ctl.sock` directly, in the protocol the `board`
/// CLI speaks (board/virtual/kioskboard/client.py: one JSON request, JSON-line frames back, base64 output, one
/// terminal frame last). The tests make thousands of these calls, and the CLI costs a Python start and its
/// imports on every one: about 0.4 s of the 0.6 s a `board run -- true` took, measured on the board.
enum BoardSocket {
  /// What ended an exchange: the agent's terminal frame, or why none came.
  enum Answer {
    case frame([String: Any])
    /// The agent's own "error" frame: the request was refused (a name not spawned, a line not known).
    case refused(String)
    case timedOut
    /// The board could not be reached, or the connection dropped.
    case unreachable(String)
  }

  static let terminal: Set = ["exit", "result", "error", "pong"]

  /// Sends `request` and reads frames until a terminal one, at most `timeout` seconds; output frames go to
  /// `onOutput` as they come.
  static func exchange(
    _ request: [String: Any], timeout: Double, state: String, onOutput: (String, Data) -> Void = { _, _ in }
  ) -> Answer {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return .unreachable("socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let path = "\(state)/ctl.sock"
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard path.utf8.count < capacity else { return .unreachable("\(path): longer than a socket address holds") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: path.utf8)
      raw[path.utf8.count] = 0
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else { return .unreachable("the board is not running (\(path): \(String(cString: strerror(errno))))") }

    guard var bytes = try? JSONSerialization.data(withJSONObject: request) else { return .unreachable("unencodable: \(request)") }
    bytes.append(0x0A)
    let sent = bytes.withUnsafeBytes { raw -> Bool in
      var offset = 0
      while offset < raw.count {
        let wrote = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
        if wrote < 0 && errno == EINTR { continue }
        guard wrote > 0 else { return false }
        offset += wrote
      }
      return true
    }
    guard sent else { return .unreachable("send: \(String(cString: strerror(errno)))") }

    let deadline = Date().addingTimeInterval(timeout)
    var pending = Data()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let left = deadline.timeIntervalSinceNow
      guard left > 0 else { return .timedOut }
      var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, Int32(min(left, 60) * 1000) + 1)
      if ready < 0 && errno == EINTR { continue }
      guard ready > 0 else { continue }
      let got = recv(fd, &chunk, chunk.count, 0)
      if got < 0 && errno == EINTR { continue }
      guard got > 0 else { return .unreachable("connection to the board was lost") }
      pending.append(contentsOf: chunk[0..<got])
      while let newline = pending.firstIndex(of: 0x0A) {
        let line = pending[pending.startIndex..<newline]
        pending = Data(pending[(newline + 1)...])
        guard let frame = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
          let type = frame["type"] as? String
        else { continue }
        if type == "error" { return .refused(frame["message"] as? String ?? "guest agent error") }
        if terminal.contains(type) { return .frame(frame) }
        onOutput(type, Data(base64Encoded: frame["data"] as? String ?? "") ?? Data())
      }
    }
  }

  /// `board run --timeout T -- command`: the same status, output and errors (124 when no answer came in time,
  /// 125 with the reason on stderr when the board cannot be reached).
  static func exec(_ command: String, timeout: Int, state: String) -> Board.Output {
    var out = Data()
    var err = Data()
    // As the CLI: the agent kills the command at `timeout`; 30 s more for its answer to come back.
    let answer = exchange(["op": "exec", "cmd": command, "timeout": Double(timeout)], timeout: Double(timeout) + 30, state: state) {
      kind, data in
      if kind == "out" { out.append(data) } else if kind == "err" { err.append(data) }
    }
    let stdout = String(decoding: out, as: UTF8.self)
    let stderr = String(decoding: err, as: UTF8.self)
    switch answer {
    case .frame(let frame): return Board.Output(status: Int32((frame["status"] as? Int) ?? 1), stdout: stdout, stderr: stderr)
    case .timedOut: return Board.Output(status: 124, stdout: stdout, stderr: stderr)
    case .refused(let reason), .unreachable(let reason):
      return Board.Output(status: 125, stdout: stdout, stderr: stderr + "board: \(reason)\n")
    }
  }

  /// A request whose answer is one "result" frame (spawn, kill, gpio, control); throws with the reason otherwise.
  static func result(_ request: [String: Any], timeout: Double, state: String) throws -> [String: Any] {
    switch exchange(request, timeout: timeout, state: state) {
    case .frame(let frame): return frame
    case .refused(let reason), .unreachable(let reason): throw BoardFailure("\(request["op"] ?? "?"): \(reason)")
    case .timedOut: throw BoardFailure("\(request["op"] ?? "?"): no answer from the board within \(Int(timeout)) s")
    }
  }
}
