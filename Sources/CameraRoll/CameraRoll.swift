#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import LinuxIO
import Synchronization

/// Why the roll could not take an item.
public enum RollError: Error, Sendable, CustomStringConvertible {
  /// The roll path is missing or not writable.
  case unavailable(String)
  /// Every DCF number up to 999-9999 is used.
  case exhausted
  case io(SystemCallError)
  /// An interrupted recording with no complete fragment (cut before its first was durable): nothing to play,
  /// so it was removed. The roll is whole; this is said, not failed.
  case nothingToRecover(String)

  public var description: String {
    switch self {
    case .unavailable(let text): text
    case .exhausted: "camera roll full: all DCF numbers up to 999-9999 are used"
    case .io(let error): error.description
    case .nothingToRecover(let name): "\(name): no complete fragment, removed"
    }
  }
}

/// A published item: its number and where it now is, complete and durable.
public struct RollItem: Sendable, Equatable {
  public let number: RollNumber
  public let kind: MediaKind
  /// Relative to the roll root: `DCIM/100KIOSK/IMG_0001.JPG`.
  public let relativePath: String
}

/// The DCF camera roll on disk, as people see it over SSH: only whole files ever carry a final name.
///
/// Publishing writes under a hidden name in the target folder, fsyncs, renames without replacing, and fsyncs
/// the folder. Hidden files are made owner-only (0600) and get their readable mode only once complete: the
/// camera account pulls through group read, so a puller that lists one can never read its bytes. Numbers come from one counter persisted beside `DCIM`, so a number is never used twice, even
/// after its file was deleted or the power was cut.
/// Safe to share between threads: publishing is serialised by the lock around the counter.
public final class CameraRoll: Sendable {
  public let root: String
  public let suffix: String
  /// The number the next item gets; nil once the roll is exhausted.
  let counter: Mutex<RollNumber?>
  public var next: RollNumber? { counter.withLock { $0 } }
  /// Serialises appends to the records file.
  let records = Mutex(())
  /// Hidden names of the recordings this process has open: never an interrupted recording to recover, even
  /// when the storage comes back while one is being written.
  let recordingsOpen = Mutex<Set<String>>([])

  static let counterFile = ".kioskcam-last-number"
  static let temporaryPrefix = ".tmp-"
  /// While being written: nobody but the service may read it (see the type's comment).
  static let hiddenMode: mode_t = 0o600
  /// A published file: what creating it with 0644 would give under the process's umask (the unit's 0027
  /// makes it 0640, group `camera` through the set-group-ID roll).
  let publishedMode: mode_t

  public init(root: String, suffix: String) throws(RollError) {
    self.root = root
    self.suffix = suffix
    publishedMode = 0o644 & ~(FileStatus.processUmask() ?? 0o022)
    guard FileStatus.isDirectory(root) else { throw .unavailable("camera roll \(root): no such directory") }
    guard FileStatus.isWritable(root) else { throw .unavailable("camera roll \(root): not writable") }
    do {
      try FileStatus.makeDirectory("\(root)/DCIM")
    } catch {
      throw .io(error)
    }
    let highest = [Self.highestOnDisk(dcim: "\(root)/DCIM"), Self.readCounter(root: root)].compactMap { $0 }.max()
    counter = Mutex(highest.map { $0.next } ?? .first)
    (sweptAtOpen, completedAtOpen) = Self.removeLeftovers(dcim: "\(root)/DCIM")
    repairRecords()
    keepRecordReserve()
  }

  /// The half-written files a crash left that opening the roll removed (`DCIM/100KIOSK/.tmp-...`).
  public let sweptAtOpen: [String]
  /// The stills whose rename a cut interrupted and opening the roll finished (`removeLeftovers`).
  public let completedAtOpen: [String]

  /// The roll's storage is back (a card put back in, or remounted after an error): it may hold what the loss
  /// left, and it may not even be the card that went. Leftovers go and a torn record is closed, as at start,
  /// and the counter moves up past every number on it, never down, so that no number is used twice whichever
  /// card this is. Under the counter's lock, so that no still is half-written while its leftovers are swept.
  public func storageReturned() {
    counter.withLock { next in
      let highest = [Self.highestOnDisk(dcim: dcim), Self.readCounter(root: root)].compactMap { $0 }.max()
      if let highest, let current = next, highest >= current { next = highest.next }
      let (_, completed) = Self.removeLeftovers(dcim: dcim)
      for name in completed { log("\(name): its rename, cut by the card's loss, finished") }
    }
    repairRecords()
    keepRecordReserve()
  }

  var dcim: String { "\(root)/DCIM" }

  /// Writes `bytes` as the next item and returns it once it is durable under its final name.
  public func publish(_ bytes: [UInt8], kind: MediaKind) throws(RollError) -> RollItem {
    try counter.withLock { (next) throws(RollError) -> RollItem in try publish(bytes, kind: kind, next: &next) }
  }

  private func publish(_ bytes: [UInt8], kind: MediaKind, next: inout RollNumber?) throws(RollError) -> RollItem {
    while true {
      guard let number = next else { throw .exhausted }
      let folderName = number.folderName(suffix: suffix)
      let name = number.fileName(kind)
      do throws(SystemCallError) {
        let folderPath = "\(dcim)/\(folderName)"
        if !FileStatus.isDirectory(folderPath) {
          try FileStatus.makeDirectory(folderPath)
          try Directory(path: dcim).sync()
        }
        let folder = try Directory(path: folderPath)
        let temporary = "\(Self.temporaryPrefix)\(name)"
        // A leftover from a crash in this very second would block the exclusive create: it is garbage.
        try? folder.remove(temporary)
        let file = try folder.createExclusive(temporary, mode: Self.hiddenMode)
        let renamed: Bool
        do throws(SystemCallError) {
          try file.writeAll(bytes)
          // Readable from here on: every byte is written, the name is still hidden until the rename.
          try file.setMode(publishedMode)
          try file.sync()
          renamed = try folder.renameNoReplaceUnlessTaken(temporary, to: name)
        } catch {
          try? folder.remove(temporary)
          throw error
        }
        guard renamed else {
          // Someone put a file with this name there (copied in over SSH): skip the number, never overwrite.
          try? folder.remove(temporary)
          next = advance(past: number)
          continue
        }
        try Self.syncRenamed(file, in: folder)
        next = advance(past: number)
        return RollItem(number: number, kind: kind, relativePath: "DCIM/\(folderName)/\(name)")
      } catch {
        throw .io(error)
      }
    }
  }

  /// Removes a published item ("retake"); its number stays used. Only DCF names inside DCIM are accepted.
  public func discard(_ relativePath: String) throws(RollError) {
    let parts = relativePath.split(separator: "/").map(String.init)
    guard parts.count == 3, parts[0] == "DCIM", RollNumber.folderNumber(of: parts[1]) != nil,
      RollNumber.fileNumber(of: parts[2]) != nil
    else { throw .unavailable("\(relativePath): not an item of the camera roll") }
    try counter.withLock { (_) throws(RollError) in
      do throws(SystemCallError) {
        let folder = try Directory(path: "\(dcim)/\(parts[1])")
        try folder.remove(parts[2])
        try folder.sync()
      } catch {
        throw .io(error)
      }
    }
  }

  /// Moves the counter on and persists it before anyone can see a later number.
  func advance(past number: RollNumber) -> RollNumber? {
    writeCounter(number)
    return number.next
  }

  private static func readCounter(root: String) -> RollNumber? {
    guard let file = try? OwnedFD(opening: "\(root)/\(Self.counterFile)", flags: O_RDONLY),
      let bytes = try? file.readToEnd(limit: 64)
    else { return nil }
    let text = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first ?? ""
    let parts = text.split(separator: "-")
    guard parts.count == 2, let folder = Int(parts[0]), let file = Int(parts[1]) else { return nil }
    return RollNumber(folder: folder, file: file)
  }

  private func writeCounter(_ number: RollNumber) {
    // Best effort: the highest file on disk also bounds the counter, so a lost write reuses no visible name.
    do {
      let directory = try Directory(path: root)
      let temporary = "\(Self.counterFile).new"
      try? directory.remove(temporary)
      let file = try directory.createExclusive(temporary, mode: Self.hiddenMode)
      let text = Array("\(number.folder)-\(number.file)\n".utf8)
      try file.writeAll(text)
      try file.setMode(publishedMode)
      try file.sync()
      try systemCall("rename counter") { rename("\(root)/\(temporary)", "\(root)/\(Self.counterFile)") }
      try Self.syncRenamed(file, in: directory)
    } catch {}
  }

  /// Makes a rename of `file` (already fsynced under its old name) in `folder` durable. vfat keeps a file's
  /// size and first cluster in its directory entry, and a rename writes a new entry that gets them only when
  /// the file's inode is next written back: the folder's fsync alone makes an entry of size 0 durable (a card
  /// that failed after the save gave back an empty IMG_0001.JPG, its record saying 9882 bytes). So the file is
  /// fsynced again under its new name, then the folder. On ext4 the second fsync finds nothing to write.
  static func syncRenamed(_ file: consuming OwnedFD, in folder: borrowing Directory) throws(SystemCallError) {
    try file.sync()
    try file.close()
    try folder.sync()
  }

  /// The highest DCF number among the published files, any suffix, any extension.
  static func highestOnDisk(dcim: String) -> RollNumber? {
    var highest: RollNumber?
    for folderName in DirectoryListing.names(in: dcim) {
      guard let folder = RollNumber.folderNumber(of: folderName) else { continue }
      for name in DirectoryListing.names(in: "\(dcim)/\(folderName)") {
        guard let file = RollNumber.fileNumber(of: name), let number = RollNumber(folder: folder, file: file) else {
          continue
        }
        if highest.map({ number > $0 }) ?? true { highest = number }
      }
    }
    return highest
  }

  /// Half-written files from a crash: hidden names that nobody pulling the roll should ever receive.
  /// Interrupted recordings (`.rec-`) are not among them: they are recovered (`interruptedRecordings`).
  ///
  /// One hidden file is whole: a still's, when its rename was cut on vfat. The rename writes the new entry
  /// before it clears the old, so a cut between leaves both sharing the file's clusters, and fsck.fat truncates
  /// the second in the directory, often the new name, to 0 bytes. The hidden file was written and fsynced
  /// before the rename began, so it takes the name (never published: it has no record, as a cut between a
  /// rename and its record leaves). Returns what was removed and what was finished so.
  private static func removeLeftovers(dcim: String) -> (removed: [String], completed: [String]) {
    var removed: [String] = []
    var completed: [String] = []
    for folderName in DirectoryListing.names(in: dcim) where RollNumber.folderNumber(of: folderName) != nil {
      guard let folder = try? Directory(path: "\(dcim)/\(folderName)") else { continue }
      for name in DirectoryListing.names(in: "\(dcim)/\(folderName)") where name.hasPrefix(Self.temporaryPrefix) {
        let final = String(name.dropFirst(Self.temporaryPrefix.count))
        if RollNumber.fileNumber(of: final) != nil, folder.fileSize(final) == 0, (folder.fileSize(name) ?? 0) > 0,
          (try? folder.renameReplacing(name, to: final)) != nil
        {
          completed.append("DCIM/\(folderName)/\(final)")
          continue
        }
        if (try? folder.remove(name)) != nil { removed.append("DCIM/\(folderName)/\(name)") }
      }
      try? folder.sync()
    }
    return (removed, completed)
  }
}

/// What the roll's storage looks like from the service's side.
public struct StorageInfo: Encodable, Sendable, Equatable {
  public let path: String
  public let exists: Bool
  public let writable: Bool
  public let availableBytes: UInt64?
  public let totalBytes: UInt64?
  /// The largest file its file system keeps, where a movie can reach it (FAT's 4 GiB): recordings stop there.
  public let largestFile: UInt64?

  public init(path: String) {
    self.path = path
    exists = FileStatus.isDirectory(path)
    writable = exists && FileStatus.isWritable(path)
    let space = try? FileSystemSpace(path: path)
    availableBytes = space?.availableBytes
    totalBytes = space?.totalBytes
    largestFile = space?.largestFile
  }
}

extension Directory {
  /// False when `to` already exists; any other failure throws.
  func renameNoReplaceUnlessTaken(_ from: String, to: String) throws(SystemCallError) -> Bool {
    do {
      try renameNoReplace(from, to: to)
      return true
    } catch {
      if error.errno == .exists { return false }
      throw error
    }
  }
}
