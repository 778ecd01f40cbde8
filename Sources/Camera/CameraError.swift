#if canImport(Glibc)
  import Glibc
#endif
import LinuxIO

/// What went wrong with a camera, in the terms the kiosk cares about.
public enum CameraError: Error, Sendable, CustomStringConvertible {
  /// No such device node, or it is not a video capture device.
  case absent(String)
  /// Another program is streaming from it.
  case busy(String)
  /// The device went away (ENODEV): a pulled camera.
  case unplugged(String)
  /// The device cannot do what the configuration asks.
  case unsupported(String)
  /// Any other failed call.
  case io(SystemCallError)

  public var description: String {
    switch self {
    case .absent(let text), .busy(let text), .unplugged(let text), .unsupported(let text): text
    case .io(let error): error.description
    }
  }

  init(_ error: SystemCallError, device: String) {
    switch error.errno {
    case .noSuchFile: self = .absent("\(device): no such device")
    case .noDevice: self = .unplugged("\(device): device gone (\(error.call))")
    case .busy: self = .busy("\(device): busy, another program is using the camera (\(error.call))")
    default: self = .io(SystemCallError("\(device): \(error.call)", error.errno))
    }
  }
}
