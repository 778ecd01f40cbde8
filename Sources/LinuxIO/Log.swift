#if canImport(Glibc)
  import Glibc
#endif

/// One line to standard error, which journald or the board's log file keeps.
///
/// A single write(2) per line, so lines from the loop and the writer never interleave.
public func log(_ message: String) {
  let line = Array("kioskcam: \(message)\n".utf8)
  _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
