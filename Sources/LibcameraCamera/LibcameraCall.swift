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
    var message = [CChar](repeating: 0, count: messageSize)
    let status = message.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
    guard status < 0 else { return }
    throw error(status: status, message: message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
  }

  static func error(status: CInt, message: String) -> CameraError {
    switch -status {
    case ENOENT: .absent(message)
    case ENODEV: .unplugged(message)
    case EBUSY: .busy(message)
    case EINVAL, ERANGE: .unsupported(message)
    default: .io(SystemCallError(message, Errno(-status)))
    }
  }
}
