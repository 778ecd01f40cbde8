import Dispatch
import LinuxIO
import Synchronization

/// Work handed from the loop to worker threads through one slot in which the newest job wins: a job handed
/// over while the workers are all busy waits in the slot, and a newer one replaces it (the caller is given
/// the one replaced, which no worker will ever see). So the backlog never grows past one job, and `submit`
/// never waits: it takes a lock that workers hold only to swap the slot.
public final class NewestWins<Job: Sendable>: Sendable {
  private struct Slot {
    var waiting: Job?
    var stopping = false
  }
  private let slot = Mutex(Slot())
  /// Signalled once each time the slot goes from empty to full, and once per worker at `stop`.
  private let wake = DispatchSemaphore(value: 0)
  public let workers: Int

  /// `work` runs on worker `index`'s own thread, one job at a time per worker. Threads, not Dispatch's pool:
  /// a worker blocks in `wake` between jobs, which would starve the pool's few threads on a small board.
  /// `niceness` lowers the workers' CPU priority.
  public init(
    workers: Int, name: String, niceness: Int32 = 0, work: @escaping @Sendable (_ index: Int, Job) -> Void
  ) {
    precondition(workers >= 1, "no workers")
    self.workers = workers
    for index in 0..<workers {
      OwnThread.start(name: "\(name)-\(index)") { [self] in
        ThreadPriority.lower(to: niceness)
        run(index, work)
      }
    }
  }

  /// Hands `job` over; returns the job it replaced, if one was still waiting.
  public func submit(_ job: Job) -> Job? {
    let replaced: Job?? = slot.withLock { slot in
      guard !slot.stopping else { return .some(job) }
      defer { slot.waiting = job }
      return .some(slot.waiting)
    }
    guard case .some(let old) = replaced else { return nil }
    if old == nil { wake.signal() }
    return old
  }

  /// The workers finish the job in hand and end; a job still waiting is returned, never run.
  public func stop() -> Job? {
    let left = slot.withLock { slot in
      slot.stopping = true
      defer { slot.waiting = nil }
      return slot.waiting
    }
    for _ in 0..<workers { wake.signal() }
    return left
  }

  private func run(_ index: Int, _ work: @Sendable (Int, Job) -> Void) {
    while true {
      wake.wait()
      let next: Job?? = slot.withLock { slot in
        guard !slot.stopping else { return .none }
        defer { slot.waiting = nil }
        return .some(slot.waiting)
      }
      guard case .some(let taken) = next else { return }
      if let taken { work(index, taken) }
    }
  }
}
