#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import LinuxIO

/// One open V4L2 device node through libv4l2, closed with `v4l2_close` so libv4l2 frees its state too.
final class V4L2Device {
  let path: String
  let raw: CInt

  init(path: String, nonBlocking: Bool) throws(CameraError) {
    self.path = path
    let flags = O_RDWR | O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)
    let plain: CInt
    do {
      plain = try systemCall("open") { open(path, flags) }
    } catch {
      throw CameraError(error, device: path)
    }
    // Ask the kernel first: libv4l2 prints its own lines to stderr for a node that is not V4L2, and the
    // kiosk owes the operator one plain reason instead.
    var capability = v4l2_capability()
    if ioctl(plain, CV4L2_VIDIOC_QUERYCAP(), &capability) == -1 {
      let error = Errno.current
      close(plain)
      if error == Errno(ENOTTY) { throw .absent("\(path): not a V4L2 device") }
      throw CameraError(SystemCallError("VIDIOC_QUERYCAP", error), device: path)
    }
    let wrapped = v4l2_fd_open(plain, 0)
    guard wrapped != -1 else {
      let error = Errno.current
      close(plain)
      throw CameraError(SystemCallError("v4l2_fd_open", error), device: path)
    }
    raw = wrapped
  }

  var descriptor: FileDescriptor { FileDescriptor(rawValue: raw) }

  /// One ioctl, named for the error message, retried on EINTR.
  func control<Argument>(_ name: String, _ request: UInt, _ argument: inout Argument) throws(CameraError) {
    do {
      _ = try withUnsafeMutableBytes(of: &argument) { (bytes) throws(SystemCallError) in
        try systemCall(name) { CV4L2_ioctl(raw, request, bytes.baseAddress) }
      }
    } catch {
      throw CameraError(error, device: path)
    }
  }

  /// Like `control`, but EINVAL (the end of an enumeration) is `false`, not an error. `kernel` asks the driver
  /// itself, past libv4l2: for a format the driver has, libv4l2 answers each ENUM_FRAMEINTERVALS of the formats
  /// it can also convert to (YU12, YV12, RGB3, BGR3) by first trying every format of the camera at that size,
  /// one VIDIOC_TRY_FMT each. On the virtual board `kioskcam probe` made 92,795 ioctls that way, 40,793 past
  /// it; on a UVC camera each try is a control transfer on the bus.
  func enumerate<Argument>(_ name: String, _ request: UInt, _ argument: inout Argument, kernel: Bool = false)
    throws(CameraError) -> Bool
  {
    let result = withUnsafeMutableBytes(of: &argument) {
      kernel ? ioctl(raw, request, $0.baseAddress!) : CV4L2_ioctl(raw, request, $0.baseAddress)
    }
    if result == 0 { return true }
    let error = Errno.current
    if error == .invalid { return false }
    throw CameraError(SystemCallError(name, error), device: path)
  }

  deinit { _ = v4l2_close(raw) }
}

/// Characters of a fixed-size C string field (`card`, `driver`, `description`).
func cString<T>(_ field: T) -> String {
  withUnsafeBytes(of: field) { bytes in
    let prefix = bytes.prefix { $0 != 0 }
    return String(decoding: prefix, as: UTF8.self)
  }
}
