import Dispatch
import Foundation
import Synchronization
import Testing

@testable import Preview

/// The hand-over from the loop to the preview's workers: a slot in which the newest job wins.
@Suite struct NewestWinsTests {
  /// A worker that blocks in each job until the test lets it go, saying when it has started one.
  final class HeldWorker: Sendable {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let done = Mutex<[Int]>([])
    let finished = DispatchSemaphore(value: 0)
    func work(_ index: Int, _ job: Int) {
      started.signal()
      release.wait()
      done.withLock { $0.append(job) }
      finished.signal()
    }
  }

  @Test func aJobWaitingIsReplacedByANewerOneAndNeverRun() {
    let held = HeldWorker()
    let handOver = NewestWins<Int>(workers: 1, name: "test") { held.work($0, $1) }
    #expect(handOver.submit(0) == nil)
    held.started.wait()
    // The worker is inside job 0: what follows waits in the slot, newest first.
    #expect(handOver.submit(1) == nil)
    #expect(handOver.submit(2) == 1)
    #expect(handOver.submit(3) == 2)
    held.release.signal()
    held.finished.wait()
    held.started.wait()
    held.release.signal()
    held.finished.wait()
    #expect(held.done.withLock { $0 } == [0, 3])
    #expect(handOver.stop() == nil)
  }

  /// The loop's side never waits for a worker: a thousand hand-overs while every worker is stuck in a job
  /// all return (a liveness check: the timeout only catches a hang, it measures nothing).
  @Test func handingOverNeverWaitsForBusyWorkers() {
    let held = HeldWorker()
    let handOver = NewestWins<Int>(workers: 2, name: "test") { held.work($0, $1) }
    // One at a time: a second job handed over before the first is taken would replace it.
    _ = handOver.submit(-2)
    held.started.wait()
    _ = handOver.submit(-1)
    held.started.wait()
    let submitted = DispatchSemaphore(value: 0)
    let replaced = Mutex(0)
    let submitter = Thread {
      for job in 0..<1000 where handOver.submit(job) != nil { replaced.withLock { $0 += 1 } }
      submitted.signal()
    }
    submitter.start()
    #expect(submitted.wait(timeout: .now() + 60) == .success, "a hand-over waited for a busy worker")
    #expect(replaced.withLock { $0 } == 999, "one job waits; every other was replaced by a newer one")
    #expect(handOver.stop() == 999, "the newest is the one left waiting")
    held.release.signal()
    held.release.signal()
    held.finished.wait()
    held.finished.wait()
    #expect(held.done.withLock { Set($0) } == [-2, -1], "the stopped hand-over ran nothing more")
  }
}
