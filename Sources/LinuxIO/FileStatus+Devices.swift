#if canImport(Glibc)
  import Glibc
#endif

extension FileStatus {
  /// The device of the file system holding `path` (`st_dev`); nil if it cannot be stat'ed.
  public static func fileSystemDevice(_ path: String) -> UInt64? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return UInt64(info.st_dev)
  }

  /// The device number a block special file stands for (`st_rdev`), following symlinks such as
  /// `/dev/disk/by-label/NAME`; nil if it is missing or not a block device.
  public static func blockDevice(_ path: String) -> UInt64? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFBLK else { return nil }
    return UInt64(info.st_rdev)
  }
}
