#if canImport(Glibc)
  import Glibc
#endif
import CLinuxIO
import Dispatch
import Synchronization

/// A thread of its own that runs jobs in order: a movie's writer, which owns a stateful encoder that must be
/// made and used on one thread (x264's own threads are made from it, and inherit its priority), and which
/// must not wait behind the work a Dispatch pool of a small board is busy with. `niceness` lowers the
/// thread's CPU priority for good (a thread cannot raise it back without CAP_SYS_NICE).
public final class BackgroundWorker: Sendable {
  private final class Jobs: Sendable {
    let pending = Mutex<[@Sendable () -> Void]>([])
    let wake = DispatchSemaphore(value: 0)
  }

  private let jobs = Jobs()

  public init(name: String, niceness: Int32 = 0) {
    let jobs = jobs
    OwnThread.start(name: name) {
      ThreadPriority.lower(to: niceness)
      while true {
        jobs.wake.wait()
        let next = jobs.pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { return }
        next()
      }
    }
  }

  /// Runs `job` after the ones before it.
  public func async(_ job: @escaping @Sendable () -> Void) {
    jobs.pending.withLock { $0.append(job) }
    jobs.wake.signal()
  }

  /// Ends the thread once the jobs given so far are done; nothing may be given after.
  public func finish() { jobs.wake.signal() }

  /// Runs `job` on the worker and waits for its result: what must be made on the worker's thread (an
  /// encoder whose own threads inherit its priority) but is needed at once.
  public func sync<T: Sendable>(_ job: @escaping @Sendable () -> T) -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<T?>(nil)
    async {
      let value = job()
      result.withLock { $0 = value }
      done.signal()
    }
    done.wait()
    return result.withLock { $0! }
  }
}
