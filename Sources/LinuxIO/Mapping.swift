#if canImport(Glibc)
  import Glibc
#endif

/// One owned memory mapping; unmapped when its owner goes.
public struct Mapping: ~Copyable {
  public let base: UnsafeMutableRawPointer
  public let count: Int
  private let unmap: @convention(c) (UnsafeMutableRawPointer?, Int) -> CInt

  /// Adopts a mapping made by a library with its own unmap function (libv4l2 has `v4l2_munmap`).
  public init(
    adopting base: UnsafeMutableRawPointer, count: Int,
    unmap: @escaping @convention(c) (UnsafeMutableRawPointer?, Int) -> CInt = munmap
  ) {
    self.base = base
    self.count = count
    self.unmap = unmap
  }

  /// Maps `count` bytes of `fd` at `offset`, shared and read-write unless told otherwise.
  public init(
    fd: FileDescriptor, count: Int, offset: Int64, protection: CInt = PROT_READ | PROT_WRITE
  ) throws(SystemCallError) {
    guard let pointer = mmap(nil, count, protection, MAP_SHARED, fd.rawValue, off_t(offset)),
      pointer != MAP_FAILED
    else { throw SystemCallError("mmap", Errno.current) }
    self.init(adopting: pointer, count: count)
  }

  public var bytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: base, count: count) }

  deinit { _ = unmap(base, count) }
}
