import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif

/// Names appearing in directories, from inotify, on the loop: a device node that comes back (a camera
/// plugged in again) is seen when it appears rather than at the next retry.
///
/// A directory may come and go itself: udev makes `/dev/v4l/by-id` with a USB camera's first link and removes
/// it with the last, so a camera configured by its by-id link is only seen coming back if the watch follows.
/// A directory that does not exist is waited for on its nearest existing parent; once it is made, it is
/// watched, and what it already holds is reported as appeared (the links udev made before the watch was).
public final class DirectoryWatch {
  private let fd: OwnedFD
  private let loop: EventLoop
  private let wanted: [String]
  private let handler: (String, String) -> Void
  /// Watch descriptor to the directory it watches: wanted ones, and parents waited on.
  private var paths: [CInt: String] = [:]
  private static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

  /// The wanted directories watched now.
  public var watched: [String] { wanted.filter { paths.values.contains($0) } }

  /// `handler` gets the directory and the name of each entry created or moved in. Attribute changes are not
  /// watched: inotify reports those for nodes being opened, closed and removed as well, which is noise here.
  public init(loop: EventLoop, directories: [String], _ handler: @escaping (String, String) -> Void) throws(SystemCallError) {
    fd = OwnedFD(adopting: try systemCall("inotify_init1") { inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC)) })
    self.loop = loop
    wanted = directories
    self.handler = handler
    _ = rewatch()
    try loop.watch(fd.descriptor) { [weak self] _ in self?.drain() }
  }

  /// Adds a watch on every wanted directory that exists and is not watched yet, else on its nearest existing
  /// parent; returns the wanted directories newly watched.
  private func rewatch() -> [String] {
    var added: [String] = []
    for directory in wanted where !paths.values.contains(directory) {
      var candidate = directory
      while true {
        if paths.values.contains(candidate) { break }
        let descriptor = inotify_add_watch(fd.raw, candidate, Self.mask)
        if descriptor >= 0 {
          paths[descriptor] = candidate
          if candidate == directory { added.append(directory) }
          break
        }
        guard let slash = candidate.lastIndex(of: "/"), slash != candidate.startIndex else { break }
        candidate = String(candidate[..<slash])
      }
    }
    return added
  }

  private func drain() {
    // Large enough for many events at once; the kernel never splits one across reads.
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd.raw, $0.baseAddress, $0.count) }
      guard count > 0 else { return }
      var offset = 0
      let header = MemoryLayout<inotify_event>.size
      var changed = false
      while offset + header <= count {
        let (descriptor, mask, length, name) = buffer.withUnsafeBytes { bytes -> (CInt, UInt32, Int, String) in
          let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
          let start = offset + header
          let nameBytes = bytes[start..<min(count, start + Int(event.len))].prefix { $0 != 0 }
          return (event.wd, event.mask, Int(event.len), String(decoding: nameBytes, as: UTF8.self))
        }
        offset += header + length
        if mask & UInt32(IN_IGNORED) != 0 {
          // The directory went (or was moved off): wait for it again on its parent.
          paths[descriptor] = nil
          changed = true
          continue
        }
        guard let directory = paths[descriptor], !name.isEmpty else { continue }
        if wanted.contains(directory) { handler(directory, name) }
        if mask & UInt32(IN_ISDIR) != 0 { changed = true }
      }
      if changed {
        for directory in rewatch() {
          for name in Self.entries(of: directory) { handler(directory, name) }
        }
      }
    }
  }

  private static func entries(of directory: String) -> [String] {
    guard let stream = opendir(directory) else { return [] }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  deinit { loop.unwatch(fd.descriptor) }
}
