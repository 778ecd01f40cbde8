import CLinuxIO
#if canImport(Glibc)
  import Glibc
#endif

/// An open directory, for `*at` calls and for fsync of the directory itself after a rename.
public struct Directory: ~Copyable {
  public let path: String
  private let fd: OwnedFD

  public init(path: String) throws(SystemCallError) {
    // Stored after the throwing open, not before it: Swift 6.0.3 crashes (SIL memory lifetime) on a
    // noncopyable init that stores a property and then throws.
    fd = try OwnedFD(opening: path, flags: O_RDONLY | O_DIRECTORY)
    self.path = path
  }

  /// Creates `name` exclusively for writing (fails with EEXIST if it is there).
  public func createExclusive(_ name: String, mode: mode_t = 0o644) throws(SystemCallError) -> OwnedFD {
    OwnedFD(
      adopting: try systemCall("create \(path)/\(name)") {
        openat(fd.raw, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
      })
  }

  /// Renames within this directory without ever replacing an existing name (EEXIST if taken).
  ///
  /// Not every file system has `RENAME_NOREPLACE` (9p, FAT before Linux 6.0 answer EINVAL); there a hard
  /// link gives the same guarantee, and where links are missing too (FAT) an existence check before a plain
  /// rename does, given that only the caller writes into this directory.
  public func renameNoReplace(_ from: String, to: String) throws(SystemCallError) {
    let call = "rename \(path)/\(from) to \(to)"
    if CLinuxIO_renameat2(fd.raw, from, fd.raw, to, CLinuxIO_RENAME_NOREPLACE()) == 0 { return }
    let error = Errno.current
    guard error == .invalid || error == Errno(ENOSYS) else { throw SystemCallError(call, error) }
    if linkat(fd.raw, from, fd.raw, to, 0) == 0 {
      try systemCall("unlink \(path)/\(from)") { unlinkat(fd.raw, from, 0) }
      return
    }
    let linkError = Errno.current
    guard linkError == .permissionDenied || linkError == Errno(EOPNOTSUPP) else { throw SystemCallError(call, linkError) }
    var info = stat()
    if fstatat(fd.raw, to, &info, AT_SYMLINK_NOFOLLOW) == 0 { throw SystemCallError(call, .exists) }
    try systemCall(call) { renameat(fd.raw, from, fd.raw, to) }
  }

  public func remove(_ name: String) throws(SystemCallError) {
    try systemCall("unlink \(path)/\(name)") { unlinkat(fd.raw, name, 0) }
  }

  /// Renames within this directory, replacing what `to` names: only for recovery, which has decided that
  /// what is there is worth less than what replaces it.
  public func renameReplacing(_ from: String, to: String) throws(SystemCallError) {
    try systemCall("rename \(path)/\(from) to \(to)") { renameat(fd.raw, from, fd.raw, to) }
  }

  /// The size of a regular file in this directory, or nil when there is none by that name.
  public func fileSize(_ name: String) -> Int64? {
    var info = stat()
    guard fstatat(fd.raw, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int64(info.st_size)
  }

  /// Makes renames and creations in this directory durable.
  public func sync() throws(SystemCallError) {
    try systemCall("fsync \(path)") { fsync(fd.raw) }
  }
}

/// Space and access on the file system holding a path.
public struct FileSystemSpace: Sendable, Equatable {
  public let availableBytes: UInt64
  public let totalBytes: UInt64
  /// The largest file the file system keeps, where a movie can reach it: FAT's, whose directory entry holds
  /// a file's size in 32 bits (4 GiB less a byte; SD cards come as FAT32 up to 32 GB). nil: no such limit.
  public let largestFile: UInt64?

  /// statfs(2), not statvfs(3): the same counts, and the file system's kind, which statvfs does not give.
  public init(path: String) throws(SystemCallError) {
    var stats = statfs()
    try systemCall("statfs \(path)") { statfs(path, &stats) }
    // The fragment size, as statvfs takes it (the block size where a kernel leaves it 0).
    let unit = UInt64(stats.f_frsize != 0 ? stats.f_frsize : stats.f_bsize)
    availableBytes = UInt64(stats.f_bavail) * unit
    totalBytes = UInt64(stats.f_blocks) * unit
    // The msdos and vfat drivers both answer MSDOS_SUPER_MAGIC.
    largestFile = Int(stats.f_type) == Int(MSDOS_SUPER_MAGIC) ? UInt64(UInt32.max) : nil
  }
}

public enum FileStatus {
  public static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
  }

  public static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

  /// Whether the name exists now (a symbolic link counts when what it points to does).
  public static func exists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
  }

  /// The process's umask, read from /proc/self/status: umask(2) can only read it by setting it, which would
  /// race with other threads creating files. nil where the kernel does not say (before Linux 4.7).
  public static func processUmask() -> mode_t? {
    guard let file = try? OwnedFD(opening: "/proc/self/status", flags: O_RDONLY),
      let bytes = try? file.readToEnd(limit: 1 << 16)
    else { return nil }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Umask:") {
      return mode_t(String(line.dropFirst("Umask:".count).filter { $0 != " " && $0 != "\t" }), radix: 8)
    }
    return nil
  }

  /// Creates a directory if it is missing; an existing one is fine.
  public static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(SystemCallError) {
    if mkdir(path, mode) == 0 || errno == EEXIST { return }
    throw SystemCallError("mkdir \(path)", Errno.current)
  }
}
