#if canImport(Glibc)
  import Glibc
#endif

/// A file descriptor number that someone else owns: what the event loop watches.
public struct FileDescriptor: Hashable, Sendable, CustomStringConvertible {
  public let rawValue: CInt
  public init(rawValue: CInt) { self.rawValue = rawValue }
  public var description: String { "fd \(rawValue)" }
}

/// The one owner of a kernel file descriptor; closing it is the owner's last act.
public struct OwnedFD: ~Copyable, Sendable {
  public let raw: CInt

  /// Takes ownership of a descriptor that a call just returned.
  public init(adopting raw: CInt) { self.raw = raw }

  /// Opens a path with `open(2)`; `O_CLOEXEC` is always added.
  public init(opening path: String, flags: CInt, mode: mode_t = 0) throws(SystemCallError) {
    raw = try systemCall("open \(path)") { open(path, flags | O_CLOEXEC, mode) }
  }

  public var descriptor: FileDescriptor { FileDescriptor(rawValue: raw) }

  /// Closes and reports the error, for files whose contents matter.
  public consuming func close() throws(SystemCallError) {
    let fd = raw
    discard self
    // close(2) must not be retried on EINTR: the descriptor is gone either way on Linux.
    if Glibc.close(fd) == -1 { throw SystemCallError("close", Errno.current) }
  }

  deinit { _ = Glibc.close(raw) }
}

extension OwnedFD {
  /// Writes all of `bytes`, looping over short writes.
  public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
    var offset = 0
    while offset < bytes.count {
      let base = bytes.baseAddress!.advanced(by: offset)
      let remaining = bytes.count - offset
      let written = try systemCall("write") { Glibc.write(raw, base, remaining) }
      offset += written
    }
  }

  public func writeAll(_ bytes: [UInt8]) throws(SystemCallError) {
    var failure: SystemCallError?
    bytes.withUnsafeBytes { raw in
      do throws(SystemCallError) { try writeAll(raw) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  public func sync() throws(SystemCallError) {
    try systemCall("fsync") { fsync(raw) }
  }

  /// `fchmod(2)`: the mode as given, the umask does not apply.
  public func setMode(_ mode: mode_t) throws(SystemCallError) {
    try systemCall("fchmod") { fchmod(raw, mode) }
  }

  /// Reads the whole file from the current offset.
  public func readToEnd(limit: Int = 1 << 26) throws(SystemCallError) -> [UInt8] {
    var result: [UInt8] = []
    let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
    defer { chunk.deallocate() }
    while result.count < limit {
      let count = try systemCall("read") { Glibc.read(raw, chunk.baseAddress, chunk.count) }
      if count == 0 { break }
      result.append(contentsOf: chunk[0..<count])
    }
    return result
  }
}
