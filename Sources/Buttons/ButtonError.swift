import LinuxIO

/// What went wrong with the button lines, naming the chip and line a technician would look for.
public enum ButtonError: Error, Sendable, CustomStringConvertible {
  case absent(String)
  /// The line is held by another program; the text names it and its consumer.
  case busy(String)
  case io(String)

  public var description: String {
    switch self {
    case .absent(let text), .busy(let text), .io(let text): text
    }
  }
}
