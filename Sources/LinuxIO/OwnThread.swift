#if canImport(Glibc)
  import Glibc
#endif
import CLinuxIO

/// A thread of the service's own (a worker that blocks between jobs, which must not take one of Dispatch's
/// few threads), started with pthreads rather than Foundation's `Thread`: the service links no Foundation
/// beyond FoundationEssentials, whose libraries cost resident memory (docs/performance.md).
public enum OwnThread {
  private final class Start {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }
  }

  /// Starts `body` on a new detached thread named `name` (as `top -H` and /proc show it: the kernel keeps
  /// 15 bytes of it).
  public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let result = pthread_create(
      &thread, &attributes,
      { raw in
        let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
        _ = CLinuxIO_setThreadName(String(start.name.utf8.prefix(15))!)
        start.body()
        return nil
      }, start)
    // Without its thread the worker's jobs would wait for ever: failing loudly is the honest outcome.
    precondition(result == 0, "pthread_create \(name): \(String(cString: strerror(result)))")
  }
}
