/// What the adapters found about the roll's folder and its file system; judged by `RollStorageCheck`.
public struct RollStorageFacts: Sendable, Equatable {
  public var path: String
  public var isDirectory: Bool
  public var writable: Bool
  public var availableBytes: UInt64?
  /// `st_dev` of the roll folder, of its parent, and of `/`.
  public var device: UInt64?
  public var parentDevice: UInt64?
  public var rootDevice: UInt64?
  /// For `label:` and `uuid:`: the block device `/dev/disk/by-label/NAME` (or by-uuid) stands for, if any.
  public var expectedDevice: UInt64?

  public init(
    path: String, isDirectory: Bool, writable: Bool, availableBytes: UInt64?, device: UInt64?,
    parentDevice: UInt64?, rootDevice: UInt64?, expectedDevice: UInt64?
  ) {
    self.path = path
    self.isDirectory = isDirectory
    self.writable = writable
    self.availableBytes = availableBytes
    self.device = device
    self.parentDevice = parentDevice
    self.rootDevice = rootDevice
    self.expectedDevice = expectedDevice
  }
}

/// The `camera-roll` verdict: the folder exists on the expected file system, is writable, and keeps the reserve.
public enum RollStorageCheck {
  /// Where `label:` and `uuid:` are looked up.
  public static func expectedDevicePath(_ mount: RollMount) -> String? {
    switch mount {
    case .label(let name): "/dev/disk/by-label/\(name)"
    case .uuid(let id): "/dev/disk/by-uuid/\(id)"
    case .any, .separate, .mountPoint: nil
    }
  }

  /// `spaceCounts: false` judges only whether the storage is there and usable: while running, low space is
  /// "Storage full", a state of its own, not a lost roll.
  public static func evaluate(_ facts: RollStorageFacts, roll: Config.Roll, spaceCounts: Bool = true) -> ProbeResult {
    let path = facts.path
    func fail(_ why: String) -> ProbeResult { .fail(.cameraRoll, "\(path): \(why)") }
    guard facts.isDirectory else { return fail("no such directory (storage not mounted, or the folder is missing)") }

    let onRoot = facts.device != nil && facts.device == facts.rootDevice
    let place: String
    switch roll.mount {
    case .any:
      place = onRoot ? "on the root file system (mount = any)" : "on its own file system"
    case .separate:
      guard !onRoot else { return fail("on the root file system, expected a separate one (storage not mounted?)") }
      place = "on its own file system"
    case .mountPoint:
      guard !onRoot, facts.device != nil, facts.device != facts.parentDevice else {
        return fail("not a mount point (storage not mounted?)")
      }
      place = "a mount point"
    case .label, .uuid:
      let source = expectedDevicePath(roll.mount)!
      guard let expected = facts.expectedDevice else { return fail("\(source) does not exist (\(roll.mount) not attached?)") }
      guard facts.device == expected else { return fail("not on \(source) (\(roll.mount) not mounted there?)") }
      place = "on \(roll.mount)"
    }

    guard facts.writable else { return fail("not writable (\(place))") }
    guard spaceCounts else { return .pass(.cameraRoll, "\(path): writable, \(place)") }
    let reserve = UInt64(roll.reserveMegabytes) * 1_048_576
    guard let available = facts.availableBytes else { return fail("free space unknown (statfs failed)") }
    let free = "\(available / 1_048_576) MiB free, reserve \(roll.reserveMegabytes) MiB"
    guard available > reserve else { return fail("\(free): full") }
    return .pass(.cameraRoll, "\(path): writable, \(place), \(free)")
  }
}
