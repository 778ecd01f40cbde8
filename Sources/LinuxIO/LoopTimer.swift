import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif

/// A timerfd on CLOCK_MONOTONIC, watched by the loop like any other descriptor.
public final class LoopTimer {
  private let fd: OwnedFD
  // Strong: the loop must outlive this watcher's deinit, which unregisters from it.
  private let loop: EventLoop

  public init(loop: EventLoop, _ handler: @escaping () -> Void) throws(SystemCallError) {
    fd = OwnedFD(
      adopting: try systemCall("timerfd_create") {
        timerfd_create(CLOCK_MONOTONIC, CInt(TFD_NONBLOCK | TFD_CLOEXEC))
      })
    self.loop = loop
    let raw = fd.raw
    try loop.watch(fd.descriptor) { _ in
      var expirations: UInt64 = 0
      // EAGAIN here means the timer was re-armed after it fired: nothing to do.
      guard read(raw, &expirations, 8) == 8 else { return }
      handler()
    }
  }

  /// Fires once after `nanoseconds`, then every `interval` nanoseconds if that is not zero.
  public func arm(after nanoseconds: Int64, interval: Int64 = 0) throws(SystemCallError) {
    var spec = itimerspec()
    spec.it_value = Self.timespec(max(nanoseconds, 1))
    spec.it_interval = Self.timespec(interval)
    try systemCall("timerfd_settime") { timerfd_settime(fd.raw, 0, &spec, nil) }
  }

  public func disarm() {
    var spec = itimerspec()
    _ = timerfd_settime(fd.raw, 0, &spec, nil)
  }

  private static func timespec(_ nanoseconds: Int64) -> Glibc.timespec {
    Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
  }

  deinit { loop.unwatch(fd.descriptor) }
}
