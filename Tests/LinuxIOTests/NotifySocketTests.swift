import Foundation
import KioskCore
import LinuxIO
import Testing

/// The supervisor's end of `$NOTIFY_SOCKET`, played by a datagram socket of our own: no systemd needed.
final class NotifyReceiver {
  let fd: Int32
  let address: String

  /// `abstract`: bind an abstract name (`@...`), as systemd does for user managers and containers.
  init(abstract: Bool) throws {
    let name = "kioskcam-notify-\(UUID().uuidString)"
    address = abstract ? "@" + name : NSTemporaryDirectory() + name
    fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
    var storage = sockaddr_un()
    storage.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(address.utf8)
    if abstract { bytes[0] = 0 } else { bytes.append(0) }
    withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
    let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
    let result = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard result == 0 else { throw POSIXError(.init(rawValue: errno)!) }
  }

  /// The next datagram; blocks until one is there, which a test that sent one first never waits for.
  func receive() -> String {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = recv(fd, &buffer, buffer.count, 0)
    return String(decoding: buffer[0..<max(count, 0)], as: UTF8.self)
  }

  deinit {
    close(fd)
    if address.hasPrefix("/") { unlink(address) }
  }
}

@Suite struct NotifySocketTests {
  @Test(arguments: [false, true])
  func datagramsArriveWholeAndInOrder(abstract: Bool) throws {
    let receiver = try NotifyReceiver(abstract: abstract)
    let socket = try NotifySocket(address: receiver.address)
    try socket.send(NotifyMessage.datagram([.ready, .status("streaming")]))
    try socket.send(NotifyMessage.datagram([.watchdog]))
    try socket.send(NotifyMessage.datagram([.stopping]))
    #expect(receiver.receive() == "READY=1\nSTATUS=streaming")
    #expect(receiver.receive() == "WATCHDOG=1")
    #expect(receiver.receive() == "STOPPING=1")
  }

  @Test func anAddressThatIsNeitherAPathNorAbstractIsRefused() {
    #expect(throws: SystemCallError.self) { _ = try NotifySocket(address: "vsock:2:1234") }
  }

  @Test func aSupervisorThatIsGoneIsAnErrorNotASignal() throws {
    let socket = try NotifySocket(address: NSTemporaryDirectory() + "kioskcam-notify-nobody-\(UUID().uuidString)")
    #expect(throws: SystemCallError.self) { try socket.send("READY=1") }
  }

  @Test func aNameTooLongForSockaddrIsRefused() {
    #expect(throws: SystemCallError.self) { _ = try NotifySocket(address: "/" + String(repeating: "x", count: 200)) }
  }
}
