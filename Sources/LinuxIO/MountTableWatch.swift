#if canImport(Glibc)
  import Glibc
#endif

/// Changes to the mount table of this process's namespace: the kernel marks `/proc/self/mountinfo` with
/// POLLPRI after every mount or unmount (proc(5)), until this open file next looks. A card taken out and put
/// back is mounted anew, and that is all that can be told here: mount IDs are reused (the new mount of the
/// same device at the same place often gets the old one's), and nothing else in the table differs.
///
/// Watch `descriptor` for `.priority` in the event loop to hear of a change at once. Whoever looks first
/// (the loop's epoll or `consumeChange`) takes the mark: count a change where it is seen.
public final class MountTableWatch {
  private let file: OwnedFD

  public init() throws(SystemCallError) {
    file = try OwnedFD(opening: "/proc/self/mountinfo", flags: O_RDONLY | O_CLOEXEC)
  }

  public var descriptor: FileDescriptor { file.descriptor }

  /// Whether the table changed since the last look; never waits (one poll with no timeout).
  public func consumeChange() -> Bool {
    var entry = pollfd(fd: file.raw, events: Int16(POLLPRI), revents: 0)
    return poll(&entry, 1, 0) > 0 && entry.revents & Int16(POLLPRI | POLLERR) != 0
  }
}
