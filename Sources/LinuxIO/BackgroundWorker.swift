#if canImport(Glibc)
  import Glibc
#endif
import CLinuxIO
import Foundation
import Synchronization

/// A thread of its own that runs jobs in order at a lower CPU priority (nice 10): for work that may take
/// every cycle it is given, like H.264 encoding on a board too slow for the camera's rate, so that the loop
/// (nice 0) still gets the CPU for presses and frames. A Dispatch queue cannot be used: its threads are
/// shared, and a thread's nice value cannot be lowered back without privilege.
public final class BackgroundWorker: Sendable {
  public static let niceness: Int32 = 10

  private final class Jobs: Sendable {
    let pending = Mutex<[@Sendable () -> Void]>([])
    let wake = DispatchSemaphore(value: 0)
  }

  private let jobs = Jobs()

  public init(name: String) {
    let jobs = jobs
    let thread = Thread {
      // Linux keeps a nice value per thread: PRIO_PROCESS with the thread's own id.
      _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(CLinuxIO_gettid()), Self.niceness)
      while true {
        jobs.wake.wait()
        let next = jobs.pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else { return }
        next()
      }
    }
    thread.name = name
    thread.start()
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
