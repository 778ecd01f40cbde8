import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif
import Synchronization

/// How worker threads hand results to the loop thread: a locked queue and an eventfd that wakes the loop.
public final class Mailbox<Message: Sendable>: Sendable {
  private let queue = Mutex<[Message]>([])
  private let fd: OwnedFD

  public init() throws(SystemCallError) {
    fd = OwnedFD(adopting: try systemCall("eventfd") { eventfd(0, CInt(EFD_NONBLOCK | EFD_CLOEXEC)) })
  }

  /// Safe from any thread.
  public func post(_ message: Message) {
    queue.withLock { $0.append(message) }
    var one: UInt64 = 1
    // The counter only saturates after 2^64-2 posts without a read; a failed write cannot lose the message.
    _ = write(fd.raw, &one, 8)
  }

  /// Delivers messages to `handler` on the loop thread, in the order they were posted.
  public func attach(to loop: EventLoop, _ handler: @escaping (Message) -> Void) throws(SystemCallError) {
    let raw = fd.raw
    try loop.watch(fd.descriptor) { [self] _ in
      var counter: UInt64 = 0
      _ = read(raw, &counter, 8)
      let messages = queue.withLock { pending in
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
      }
      for message in messages { handler(message) }
    }
  }
}
