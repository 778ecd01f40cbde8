#if canImport(Glibc)
  import Glibc
#endif

public enum DirectoryListing {
  /// Entry names in `path` without `.` and `..`; empty if the directory cannot be read.
  public static func names(in path: String) -> [String] {
    guard let directory = opendir(path) else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Device nodes named `prefix` and a number (`video0`, `card1`, `gpiochip2`), as full paths in number order.
  public static func numberedNodes(in directory: String, prefix: String) -> [String] {
    names(in: directory)
      .compactMap { name -> (Int, String)? in
        guard name.hasPrefix(prefix), let number = Int(name.dropFirst(prefix.count)) else { return nil }
        return (number, "\(directory)/\(name)")
      }
      .sorted { $0.0 < $1.0 }
      .map(\.1)
  }
}
