import LinuxIO
import Preview

/// The loop thread's own CPU time per camera frame (CLOCK_THREAD_CPUTIME_ID): dequeuing and copying it,
/// the kiosk's handling, the hand-over to the preview's workers, and the flip of what they drew. What the
/// loop spends on flips is carried into the next frame's sample, so the samples add up to all of it.
final class LoopCPU {
  private(set) var perFrame = LatencyWindow()
  private var carried: Int64 = 0

  /// The camera's handling of a wake-up; a sample when `body` says it delivered a frame, else carried.
  func frame(_ body: () -> Bool) {
    let start = threadCPUNanoseconds()
    let delivered = body()
    carried += threadCPUNanoseconds() - start
    guard delivered else { return }
    perFrame.add(carried)
    carried = 0
  }

  /// Work for frames already counted (a drawn picture flipped).
  func carry(_ body: () -> Void) {
    let start = threadCPUNanoseconds()
    body()
    carried += threadCPUNanoseconds() - start
  }
}
