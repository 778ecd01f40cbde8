#if canImport(Glibc)
  import Glibc
#endif
import CLinuxIO

/// The calling thread's CPU priority (its nice value: Linux keeps one per thread). Raising it back needs
/// privilege, so a thread that lowers itself is one of its own, never a pool's.
public enum ThreadPriority {
  /// A movie's encoders and writer give way to the loop and the viewfinder: the person recording is watching
  /// themselves on the screen, and a frame the recording cannot take in time is dropped and counted (in its
  /// record and on the overlay), never queued. Under the Pi-class budget (cpu.max 54% of the board) the other
  /// way round kept the preview at 31-39% of its idle rate while recording (docs/performance.md).
  public static let yielding: Int32 = 5

  public static func lower(to niceness: Int32) {
    guard niceness > 0 else { return }
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(CLinuxIO_gettid()), niceness)
  }
}
