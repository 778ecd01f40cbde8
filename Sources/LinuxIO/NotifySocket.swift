#if canImport(Glibc)
  import Glibc
#endif

/// The supervisor's notification socket (`$NOTIFY_SOCKET`, `sd_notify(3)`): an AF_UNIX datagram socket that
/// takes one datagram of `KEY=VALUE` lines per state change. Written here so that the service needs no libsystemd.
public struct NotifySocket: ~Copyable {
  public let address: String
  private let fd: OwnedFD
  private let storage: sockaddr_un
  private let length: socklen_t

  /// `address` as systemd puts it into the environment: a path (`/run/systemd/notify`), or an abstract
  /// socket name written with a leading `@`, which stands for the leading NUL byte of the kernel's name.
  public init(address: String) throws(SystemCallError) {
    var bytes = Array(address.utf8)
    var storage = sockaddr_un()
    let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
    let capacity = MemoryLayout.size(ofValue: storage.sun_path)
    switch bytes.first {
    case UInt8(ascii: "@"):
      // An abstract name is exactly its bytes, the NUL included and no terminator: the length says where it ends.
      bytes[0] = 0
      guard bytes.count <= capacity else { throw SystemCallError("notify socket \(address)", Errno(ENAMETOOLONG)) }
    case UInt8(ascii: "/"):
      guard bytes.count < capacity else { throw SystemCallError("notify socket \(address)", Errno(ENAMETOOLONG)) }
      bytes.append(0)
    default:
      // libsystemd refuses the same (vsock and other families are not used on this appliance).
      throw SystemCallError("notify socket \(address)", Errno(EAFNOSUPPORT))
    }
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in raw.copyBytes(from: bytes) }
    let socketFD = try systemCall("socket") {
      socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }
    self.address = address
    self.storage = storage
    self.length = socklen_t(pathOffset + bytes.count)
    self.fd = OwnedFD(adopting: socketFD)
  }

  /// Sends one datagram. The socket is blocking, as libsystemd's is: the supervisor reads at once, and a
  /// notification lost to EAGAIN could be a READY=1.
  public func send(_ message: String) throws(SystemCallError) {
    let bytes = Array(message.utf8)
    var target = storage
    let raw = fd.raw
    let length = length
    let sent = try systemCall("sendto \(address)") {
      withUnsafePointer(to: &target) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
          bytes.withUnsafeBytes { buffer in
            // MSG_NOSIGNAL: a supervisor that went away is an error to report, never a SIGPIPE.
            sendto(raw, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), socketAddress, length)
          }
        }
      }
    }
    if sent != bytes.count { throw SystemCallError("sendto \(address): short datagram", Errno(EMSGSIZE)) }
  }
}
