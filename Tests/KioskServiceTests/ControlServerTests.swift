#if canImport(Glibc)
  import Glibc
#endif
import Dispatch
import Foundation
import KioskCore
import LinuxIO
import Synchronization
import Testing

@testable import KioskService

/// The control socket on a real Unix socket in a folder of its own, with the loop on the test's thread and
/// clients on others, as `kioskcam shutter` and the board's agent are: a request is posted like a button and
/// answered on its own connection; a bad line is answered without reaching the kiosk.
@Suite struct ControlServerTests {
  let folder: String
  let loop: EventLoop
  let posted = Heard()

  init() throws {
    folder = NSTemporaryDirectory() + "kioskcam-control-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    loop = try EventLoop()
  }

  /// A server whose kiosk answers each request with `answer`, and the socket's path (its folder made by it).
  func server(answer: @escaping (ControlRequest) -> String?) throws -> (ControlServer, String) {
    let path = "\(folder)/run/control.sock"
    var server: ControlServer?
    server = try ControlServer(path: path, group: "", loop: loop) { [posted] event in
      posted.events.append(event)
      if case .kiosk(.remote(let request, let client, _)) = event, let line = answer(request) {
        server?.reply(to: client, line)
      }
    }
    return (server!, path)
  }

  /// Sends `bytes` as a client on another thread and runs the loop until its answer is in.
  func ask(_ path: String, _ bytes: [UInt8], closeEarly: Bool = false) throws -> String {
    let answer = Mutex<String?>(nil)
    DispatchQueue.global().async {
      guard let connection = try? connectUnix(path) else { return answer.withLock { $0 = "no connection" } }
      _ = try? connection.writeAll(bytes)
      if closeEarly { return answer.withLock { $0 = "" } }
      connection.shutdownWrite()
      let reply = (try? connection.readToEnd(limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) }
      answer.withLock { $0 = reply ?? "read failed" }
    }
    try run(loop) { answer.withLock { $0 } != nil }
    return try #require(answer.withLock { $0 }, "an answer within 30 s")
  }

  @Test func aRequestReachesTheKioskAndItsReplyGoesBackOnItsConnection() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (server, path) = try server { request in request == .shutter ? "ok" : "error: not now" }
    var info = stat()
    #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o660, "the socket is for its group only")
    #expect(try ask(path, Array("shutter\n".utf8)) == "ok\n")
    #expect(try ask(path, Array("mode movie\n".utf8)) == "error: not now\n")
    let requests = posted.events.compactMap { if case .kiosk(.remote(let r, _, _)) = $0 { r } else { nil } }
    #expect(requests == [.shutter, .mode(.movie)])
    withExtendedLifetime(server) {}
  }

  @Test func aLineTheKioskCannotReadIsAnsweredWithoutReachingIt() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (server, path) = try server { _ in "ok" }
    #expect(try ask(path, Array("fly away\n".utf8)).hasPrefix("error: "))
    // More than a line's worth and no newline: answered and dropped, not read forever.
    let flood = try ask(path, [UInt8](repeating: 0x61, count: 4096))
    #expect(flood.hasPrefix("error: "), "\(flood)")
    #expect(posted.events.isEmpty, "\(posted.events)")
    // Only the first line is a request.
    #expect(try ask(path, Array("shutter\nmode still\n".utf8)) == "ok\n")
    #expect(posted.events.count == 1)
    withExtendedLifetime(server) {}
  }

  @Test func aClientThatLeavesBeforeTheReplyIsSimplyGone() throws {
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let (server, path) = try server { _ in nil }  // the kiosk answers later
    _ = try ask(path, Array("status\n".utf8), closeEarly: true)
    try run(loop) { [posted] in !posted.events.isEmpty }
    guard case .kiosk(.remote(_, let client, _)) = posted.events.first else {
      Issue.record("\(posted.events)")
      return
    }
    server.reply(to: client, "too late")  // no crash, no write to a reused descriptor
    server.reply(to: client, "twice")
    #expect(try ask(path, Array("fly away\n".utf8)).hasPrefix("error: "), "the server still answers")
  }
}
