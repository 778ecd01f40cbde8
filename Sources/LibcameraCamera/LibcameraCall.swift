#if canImport(Glibc)
  import Glibc
#endif
import Camera
import LinuxIO

/// Every shim call goes through here: it fills a message buffer and returns 0 or a negative errno, which
/// becomes the V4L2 camera's error kinds, so the service treats both backends' troubles alike.
enum LibcameraCall {
  static let messageSize = 512

  /// Runs `body` with a message buffer; a negative status becomes a `CameraError` with the shim's words.
  static func check(_ body: (UnsafeMutablePointer<CChar>, Int) -> CInt) throws(CameraError) {
    _ = try status(passing: [], body)
  }

  /// As `check`, but the statuses in `passing` come back to the caller instead of being thrown: a dequeue's
  /// -EAGAIN says only that nothing is waiting, as EAGAIN from a non-blocking V4L2 dequeue does.
  static func status(passing: Set<CInt>, _ body: (UnsafeMutablePointer<CChar>, Int) -> CInt) throws(CameraError)
    -> CInt
  {
    var message = [CChar](repeating: 0, count: messageSize)
    let status = message.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
    guard status < 0, !passing.contains(status) else { return status }
    throw error(status: status, message: message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
  }

  private static func error(status: CInt, message: String) -> CameraError {
    switch -status {
    case ENOENT: .absent(message)
    case ENODEV: .unplugged(message)
    case EBUSY: .busy(message)
    case EINVAL, ERANGE: .unsupported(message)
    default: .io(SystemCallError(message, Errno(-status)))
    }
  }
}
