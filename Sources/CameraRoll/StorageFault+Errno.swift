import KioskCore
import LinuxIO

/// The one place an error from the roll's storage is told to be the card's failure, for every write path
/// (still, movie, record, retake, delete, recovery): what the kiosk then does is its own decision.
extension StorageFault {
  /// EIO, or EROFS (ext4 goes read-only at its first failed write). Not ENOSPC, which space freed mends, nor
  /// a missing file or folder, which the storage check sees for itself.
  public init?(errno: Errno) {
    switch errno {
    case .io: self = .inputOutput
    case .readOnlyFileSystem: self = .readOnly
    default: return nil
    }
  }

  /// The same for what a roll write threw.
  public init?(_ error: any Error) {
    switch error {
    case RollError.io(let failure): self.init(errno: failure.errno)
    case let failure as SystemCallError: self.init(errno: failure.errno)
    default: return nil
    }
  }
}
