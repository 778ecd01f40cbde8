#if canImport(Glibc)
  import Glibc
#endif

extension OwnedFD {
  /// Writes all of `bytes` at `offset` (pwrite), leaving the file offset alone: how a movie's index is
  /// patched in place after its fragments were appended.
  public func writeAll(_ bytes: [UInt8], at offset: UInt64) throws(SystemCallError) {
    var done = 0
    var failure: SystemCallError?
    bytes.withUnsafeBytes { raw in
      while done < raw.count {
        let base = raw.baseAddress!.advanced(by: done)
        let remaining = raw.count - done
        let position = off_t(offset) + off_t(done)
        do throws(SystemCallError) {
          done += try systemCall("pwrite") { pwrite(self.raw, base, remaining, position) }
        } catch {
          failure = error
          return
        }
      }
    }
    if let failure { throw failure }
  }

  /// Up to `count` bytes at `offset` (pread); fewer only at the end of the file.
  public func read(at offset: UInt64, count: Int) throws(SystemCallError) -> [UInt8] {
    var result = [UInt8](repeating: 0, count: count)
    var done = 0
    var failure: SystemCallError?
    result.withUnsafeMutableBytes { raw in
      while done < count {
        let base = raw.baseAddress!.advanced(by: done)
        let remaining = count - done
        let position = off_t(offset) + off_t(done)
        do throws(SystemCallError) {
          let got = try systemCall("pread") { pread(self.raw, base, remaining, position) }
          if got == 0 { return }
          done += got
        } catch {
          failure = error
          return
        }
      }
    }
    if let failure { throw failure }
    return Array(result.prefix(done))
  }

  /// The file's size in bytes.
  public func size() throws(SystemCallError) -> UInt64 {
    var info = stat()
    try systemCall("fstat") { fstat(raw, &info) }
    return UInt64(info.st_size)
  }

  /// Cuts the file to `length` bytes: what a crash or a full disk left past the last whole fragment goes.
  public func truncate(to length: UInt64) throws(SystemCallError) {
    try systemCall("ftruncate") { ftruncate(raw, off_t(length)) }
  }
}
