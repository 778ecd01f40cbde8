#if canImport(Glibc)
  import Glibc
#endif

/// A listening AF_UNIX stream socket: the service's control socket.
public struct UnixListener: ~Copyable {
  public let path: String
  private let fd: OwnedFD

  /// Binds `path` (replacing a stale socket left by a crash) with permissions `mode`.
  public init(path: String, mode: mode_t = 0o660, group: gid_t? = nil) throws(SystemCallError) {
    let listener = OwnedFD(
      adopting: try systemCall("socket") {
        socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
      })
    var address = try UnixAddress(path)
    // Only a socket may be replaced: a regular file at the path is someone else's.
    var info = stat()
    if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
    try address.withSockaddr { pointer, length throws(SystemCallError) in
      _ = try systemCall("bind \(path)") { bind(listener.raw, pointer, length) }
    }
    try systemCall("chmod \(path)") { chmod(path, mode) }
    if let group { try systemCall("chown \(path)") { chown(path, uid_t.max, group) } }
    try systemCall("listen \(path)") { listen(listener.raw, 8) }
    // Both stored after the last throwing call: Swift 6.0.3 crashes (SIL memory lifetime) on a noncopyable
    // init that stores a property and then throws.
    self.path = path
    fd = listener
  }

  public var descriptor: FileDescriptor { fd.descriptor }

  /// The next waiting connection, or nil if none is (the socket is non-blocking).
  public func accept() throws(SystemCallError) -> OwnedFD? {
    // accept4 is hidden behind _GNU_SOURCE; the service never execs, so a separate FD_CLOEXEC is enough.
    let client = Glibc.accept(fd.raw, nil, nil)
    if client == -1 {
      let error = Errno.current
      if error == .wouldBlock || error == .interrupted { return nil }
      throw SystemCallError("accept \(path)", error)
    }
    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
    return OwnedFD(adopting: client)
  }

  deinit { unlink(path) }
}

/// A `sockaddr_un`, which holds a path of at most 107 bytes.
struct UnixAddress {
  private var storage = sockaddr_un()

  init(_ path: String) throws(SystemCallError) {
    storage.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: storage.sun_path)
    guard bytes.count < capacity else { throw SystemCallError("socket path \(path)", Errno(ENAMETOOLONG)) }
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
  }

  mutating func withSockaddr<Result>(
    _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemCallError) -> Result
  ) throws(SystemCallError) -> Result {
    let length = socklen_t(MemoryLayout<sockaddr_un>.size)
    return try withUnsafePointer(to: &storage) { (pointer) throws(SystemCallError) -> Result in
      try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemCallError) -> Result in
        try body(address, length)
      }
    }
  }
}

/// Connects to a listening AF_UNIX stream socket (the CLI talking to the service).
public func connectUnix(_ path: String) throws(SystemCallError) -> OwnedFD {
  let fd = OwnedFD(
    adopting: try systemCall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) })
  var address = try UnixAddress(path)
  try address.withSockaddr { pointer, length throws(SystemCallError) in
    _ = try systemCall("connect \(path)") { connect(fd.raw, pointer, length) }
  }
  return fd
}

extension OwnedFD {
  /// Stops sending: the peer reads end of file after what was written.
  public func shutdownWrite() { _ = Glibc.shutdown(raw, Int32(SHUT_WR)) }
}
