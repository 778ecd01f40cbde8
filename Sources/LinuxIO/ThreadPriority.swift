#if canImport(Glibc)
  import Glibc
#endif
import CLinuxIO

/// The calling thread's CPU priority (its nice value: Linux keeps one per thread). Raising it back needs
/// privilege, so a thread that lowers itself is one of its own, never a pool's.
public enum ThreadPriority {
  /// Work that sheds load by design (the preview: the newest frame wins) gives way to the loop and to a movie's
  /// encoder, which must not.
  public static let yielding: Int32 = 5

  public static func lower(to niceness: Int32) {
    guard niceness > 0 else { return }
    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(CLinuxIO_gettid()), niceness)
  }
}
