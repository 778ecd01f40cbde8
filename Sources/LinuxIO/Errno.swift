#if canImport(Glibc)
  import Glibc
#endif

/// A C `errno` value with its name, the way the kernel's documentation spells it.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
  public let rawValue: CInt
  public init(_ rawValue: CInt) { self.rawValue = rawValue }

  /// The calling thread's current `errno`.
  public static var current: Errno { Errno(errno) }

  public static let interrupted = Errno(EINTR)
  public static let wouldBlock = Errno(EAGAIN)
  public static let noDevice = Errno(ENODEV)
  public static let noSuchFile = Errno(ENOENT)
  public static let busy = Errno(EBUSY)
  public static let accessDenied = Errno(EACCES)
  public static let permissionDenied = Errno(EPERM)
  public static let noSpace = Errno(ENOSPC)
  public static let exists = Errno(EEXIST)
  public static let invalid = Errno(EINVAL)
  public static let io = Errno(EIO)
  public static let readOnlyFileSystem = Errno(EROFS)

  public var description: String {
    guard let text = strerror(rawValue) else { return "errno \(rawValue)" }
    return String(cString: text)
  }
}

/// A failed system or library call: which call, on what, and the errno it left.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
  public let call: String
  public let errno: Errno
  public init(_ call: String, _ errno: Errno) {
    self.call = call
    self.errno = errno
  }
  public var description: String { "\(call): \(errno)" }
}

/// The one funnel for calls that return -1 and set errno: retries EINTR, names the call on failure.
@discardableResult
public func systemCall<T: BinaryInteger>(_ name: @autoclosure () -> String, _ body: () -> T) throws(SystemCallError) -> T {
  while true {
    let result = body()
    if result != -1 { return result }
    let error = Errno.current
    if error == .interrupted { continue }
    throw SystemCallError(name(), error)
  }
}
