import LinuxIO

/// What went wrong with the display, in the terms the kiosk cares about.
public enum DisplayError: Error, Sendable, CustomStringConvertible {
  /// No card, or no connected connector with a usable mode.
  case absent(String)
  /// Another program is DRM master (a desktop, another kiosk).
  case busy(String)
  case io(SystemCallError)

  /// The card went away under us (ENODEV): unplugged, or its driver unbound.
  public var isGone: Bool {
    if case .io(let error) = self { error.errno == .noDevice } else { false }
  }

  public var description: String {
    switch self {
    case .absent(let text), .busy(let text): text
    case .io(let error): error.description
    }
  }
}
