/// Where the camera roll must live, so that an unmounted card never turns into the root file system filling up.
public enum RollMount: Sendable, Equatable, CustomStringConvertible {
  /// No check: the roll may be on any file system, the root one included.
  case any
  /// On a file system other than the root one.
  case separate
  /// The roll path itself is a mount point (and not the root file system).
  case mountPoint
  /// On the file system with this label (`/dev/disk/by-label/NAME`).
  case label(String)
  /// On the file system with this UUID (`/dev/disk/by-uuid/UUID`).
  case uuid(String)

  /// Parses the `[roll] mount` value; nil when it is none of the forms.
  public init?(parsing text: String) {
    switch text {
    case "any": self = .any
    case "separate": self = .separate
    case "mount-point": self = .mountPoint
    default:
      if let name = text.droppingPrefix("label:"), Self.isPlainName(name) {
        self = .label(name)
      } else if let id = text.droppingPrefix("uuid:"), Self.isPlainName(id) {
        self = .uuid(id)
      } else {
        return nil
      }
    }
  }

  public var description: String {
    switch self {
    case .any: "any"
    case .separate: "separate"
    case .mountPoint: "mount-point"
    case .label(let name): "label:\(name)"
    case .uuid(let id): "uuid:\(id)"
    }
  }

  /// A name that can be a file in `/dev/disk/by-*`: no slash, no dot names, nothing invisible.
  private static func isPlainName(_ name: String) -> Bool {
    !name.isEmpty && name != "." && name != ".." && name.utf8.count <= 255
      && name.unicodeScalars.allSatisfy { $0.value > 0x20 && $0 != "/" && $0.value != 0x7F }
  }
}

extension String {
  func droppingPrefix(_ prefix: String) -> String? {
    hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
  }
}
