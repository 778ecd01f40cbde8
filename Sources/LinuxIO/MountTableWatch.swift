#if canImport(Glibc)
  import Glibc
#endif

/// Whether any file system has been mounted or unmounted in this process's namespace since it was made:
/// the kernel marks `/proc/self/mountinfo` with POLLPRI after every change (proc(5)). A card taken out and put
/// back is mounted anew, and that is all that can be told here: mount IDs are reused (the new mount of the
/// same device at the same place often gets the old one's), and nothing else in the table differs.
public final class MountTableWatch {
  private let file: OwnedFD
  private var seen = false

  public init() throws(SystemCallError) {
    file = try OwnedFD(opening: "/proc/self/mountinfo", flags: O_RDONLY | O_CLOEXEC)
  }

  /// Never waits: one poll with no timeout. Once true, stays true.
  public var changed: Bool {
    if !seen {
      var entry = pollfd(fd: file.raw, events: Int16(POLLPRI), revents: 0)
      if poll(&entry, 1, 0) > 0, entry.revents & Int16(POLLPRI | POLLERR) != 0 { seen = true }
    }
    return seen
  }
}
