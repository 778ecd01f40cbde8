import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif

/// Termination signals delivered through a signalfd in the loop's epoll set, never as async handlers.
public final class SignalWatcher {
  private let fd: OwnedFD
  // Strong: the loop must outlive this watcher's deinit, which unregisters from it.
  private let loop: EventLoop

  /// Blocks `signals` for the whole process; call before starting any thread so they inherit the mask.
  public init(loop: EventLoop, signals: [CInt], _ handler: @escaping (CInt) -> Void) throws(SystemCallError) {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    let result = pthread_sigmask(SIG_BLOCK, &set, nil)
    if result != 0 { throw SystemCallError("pthread_sigmask", Errno(result)) }
    fd = OwnedFD(
      adopting: try systemCall("signalfd") { signalfd(-1, &set, CInt(SFD_NONBLOCK | SFD_CLOEXEC)) })
    self.loop = loop
    let raw = fd.raw
    try loop.watch(fd.descriptor) { _ in
      var info = signalfd_siginfo()
      while read(raw, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
        handler(CInt(info.ssi_signo))
      }
    }
  }

  deinit { loop.unwatch(fd.descriptor) }
}
