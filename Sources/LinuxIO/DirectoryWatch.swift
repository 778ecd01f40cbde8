import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif

/// Names appearing in directories, from inotify, on the loop: a device node that comes back (a camera
/// plugged in again) is seen when it appears rather than at the next retry.
public final class DirectoryWatch {
  private let fd: OwnedFD
  private let loop: EventLoop
  /// The directories actually watched; one that does not exist (yet) is left out, not an error.
  public private(set) var watched: [String] = []

  /// `handler` gets the directory and the name of each entry created or moved in. Attribute changes are not
  /// watched: inotify reports those for nodes being opened, closed and removed as well, which is noise here.
  public init(loop: EventLoop, directories: [String], _ handler: @escaping (String, String) -> Void) throws(SystemCallError) {
    fd = OwnedFD(adopting: try systemCall("inotify_init1") { inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC)) })
    self.loop = loop
    var paths: [CInt: String] = [:]
    for directory in directories {
      let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
      let descriptor = inotify_add_watch(fd.raw, directory, mask)
      guard descriptor >= 0 else { continue }
      paths[descriptor] = directory
      watched.append(directory)
    }
    let raw = fd.raw
    try loop.watch(fd.descriptor) { _ in
      // Large enough for many events at once; the kernel never splits one across reads.
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) }
        guard count > 0 else { return }
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
          let (descriptor, length, name) = buffer.withUnsafeBytes { bytes -> (CInt, Int, String) in
            let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let start = offset + header
            let nameBytes = bytes[start..<min(count, start + Int(event.len))].prefix { $0 != 0 }
            return (event.wd, Int(event.len), String(decoding: nameBytes, as: UTF8.self))
          }
          offset += header + length
          if let directory = paths[descriptor], !name.isEmpty { handler(directory, name) }
        }
      }
    }
  }

  deinit { loop.unwatch(fd.descriptor) }
}
