#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import LinuxIO

/// The control socket: one request line in, one reply out, then the connection closes.
///
/// Clients are read without blocking the loop; a request is posted to the kiosk like a button, and the
/// kiosk's reply goes back on the connection it came in on. A client that sends more than a line's worth or
/// nothing useful is answered with an error and dropped.
final class ControlServer: ControlDriver {
  private let listener: UnixListener
  private let loop: EventLoop
  private var clients: [CInt: Client] = [:]
  private let post: (ServiceEvent) -> Void

  final class Client {
    let fd: OwnedFD
    var buffer: [UInt8] = []
    init(_ fd: consuming OwnedFD) { self.fd = fd }
  }

  init(path: String, group: String, loop: EventLoop, post: @escaping (ServiceEvent) -> Void) throws(SystemCallError) {
    var gid: gid_t?
    if !group.isEmpty {
      guard let entry = getgrnam(group) else { throw SystemCallError("group \(group)", .noSuchFile) }
      gid = entry.pointee.gr_gid
    }
    let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    if !folder.isEmpty { try FileStatus.makeDirectory(folder) }
    listener = try UnixListener(path: path, mode: 0o660, group: gid)
    self.loop = loop
    self.post = post
    try loop.watch(listener.descriptor) { [unowned self] _ in acceptAll() }
  }

  private func acceptAll() {
    while let connection = try? listener.accept() {
      _ = fcntl(connection.raw, F_SETFL, O_NONBLOCK)
      let client = Client(connection)
      let raw = client.fd.raw
      clients[raw] = client
      do {
        try loop.watch(client.fd.descriptor) { [unowned self] _ in readable(raw) }
      } catch {
        clients[raw] = nil
      }
    }
  }

  private func readable(_ raw: CInt) {
    guard let client = clients[raw] else { return }
    var chunk = [UInt8](repeating: 0, count: 512)
    let count = chunk.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) }
    if count < 0, Errno.current == .wouldBlock { return }
    if count > 0 { client.buffer += chunk[0..<count] }
    let newline = client.buffer.firstIndex(of: 0x0A)
    guard newline != nil || count <= 0 || client.buffer.count > 1024 else { return }
    // Read once: what comes after the line is not another request.
    loop.unwatch(client.fd.descriptor)
    let line = String(decoding: client.buffer[..<(newline ?? client.buffer.endIndex)], as: UTF8.self)
    switch ControlRequest.parse(line) {
    case .failure(let error):
      reply(to: Int(raw), "error: \(error)")
    case .success(let request):
      post(.kiosk(.remote(request, client: Int(raw), at: now())))
    }
  }

  /// The reply and the end of the connection; a client that went away meanwhile is simply gone.
  func reply(to client: Int, _ line: String) {
    guard let client = clients.removeValue(forKey: CInt(client)) else { return }
    // What came past the request is read and dropped first (64 KiB at most): a Unix socket closed with unread
    // data resets its peer (ECONNRESET), and a client sent too long a line would get that instead of the reply.
    var (rest, dropped) = ([UInt8](repeating: 0, count: 4096), 0)
    while dropped < 1 << 16 {
      let count = rest.withUnsafeMutableBytes { read(client.fd.raw, $0.baseAddress, $0.count) }
      guard count > 0 else { break }
      dropped += count
    }
    let reply = Array((line + "\n").utf8)
    // Replies are a few kilobytes at most: they fit the socket buffer, so one send does not block. A client
    // that hung up (a `kioskcam status` stopped with Ctrl-C) is EPIPE here, not a SIGPIPE that ends the service.
    _ = reply.withUnsafeBytes { send(client.fd.raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }

  deinit {
    for raw in clients.keys { loop.unwatch(FileDescriptor(rawValue: raw)) }
    loop.unwatch(listener.descriptor)
  }
}

/// The client side, for `kioskcam shutter`, `mode` and `status`.
enum ControlClient {
  static func send(_ request: ControlRequest, to path: String) throws(ServiceError) -> String {
    do {
      let connection = try connectUnix(path)
      try connection.writeAll(Array((request.line + "\n").utf8))
      connection.shutdownWrite()
      return String(decoding: try connection.readToEnd(limit: 1 << 20), as: UTF8.self)
    } catch {
      if error.errno == .noSuchFile || error.errno == Errno(ECONNREFUSED) {
        throw .unavailable(["kioskcam is not running (no service at \(path))"])
      }
      throw .io("\(path): \(error)")
    }
  }
}
