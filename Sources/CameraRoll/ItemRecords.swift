#if canImport(Glibc)
  import Glibc
#endif
import FoundationEssentials
import KioskCore
import LinuxIO

/// The metadata of one published item, the camera roll's answer to the image picker's "info" dictionary.
///
/// One JSON object a line in `.kioskcam-items.jsonl` beside `DCIM`: appended and fsynced after the item is
/// published, so a record never names a file that is not there (a crash in between loses only the record).
public struct ItemRecord: Codable, Sendable, Equatable {
  /// `still` or `movie`.
  public var mediaType: String
  /// Relative to the roll: `DCIM/100KIOSK/IMG_0001.JPG`.
  public var file: String
  public var bytes: Int
  public var width: Int
  public var height: Int
  /// Wall-clock time of the saved frame, ISO 8601 with the UTC offset (the EXIF DateTimeOriginal, to the ms).
  public var captured: String
  /// Saved frame's timestamp minus the button edge's, in milliseconds: negative when the frame came before
  /// the press (zero shutter lag picks the nearest frame, on either side).
  public var shutterLagMilliseconds: Double
  /// The camera's pixel format (V4L2 fourcc): `YUYV`, `NV12`, `MJPG`.
  public var sourceFormat: String
  /// The part of the frame that was kept, `WIDTHxHEIGHT+X+Y`; nil when the whole frame was saved.
  public var crop: String?
  /// The driver's sequence number of the saved frame.
  public var frameSequence: UInt32
  /// The camera's controls at capture, as the driver reports them, where it has them.
  public var exposure100Microseconds: Int?
  public var gain: Int?
  /// EXIF ImageUniqueID.
  public var uniqueID: String
  /// Movies: frames in the file, frames the writer could not keep up with, the duration by the frames'
  /// timestamps, and whether it was recovered from the fragments an interrupted recording left.
  public var frames: Int?
  public var droppedFrames: Int?
  public var durationSeconds: Double?
  public var recovered: Bool?
  /// Movies: `h264` or `mjpeg`; for H.264 its profile and level (`High`, `3.0`) and the bit rate it was asked
  /// for (bits per second); `audio` is the sound's codec (`aac`) or `none`, and with sound its profile
  /// (`LC`), rate, channels and length by its sample count.
  public var codec: String?
  public var profile: String?
  public var level: String?
  public var bitRate: Int?
  public var audio: String?
  public var audioProfile: String?
  public var audioSampleRate: Int?
  public var audioChannels: Int?
  public var audioDurationSeconds: Double?

  public init(
    mediaType: String, file: String, bytes: Int, width: Int, height: Int, captured: String,
    shutterLagMilliseconds: Double, sourceFormat: String, crop: String?, frameSequence: UInt32,
    exposure100Microseconds: Int?, gain: Int?, uniqueID: String
  ) {
    self.mediaType = mediaType
    self.file = file
    self.bytes = bytes
    self.width = width
    self.height = height
    self.captured = captured
    self.shutterLagMilliseconds = shutterLagMilliseconds
    self.sourceFormat = sourceFormat
    self.crop = crop
    self.frameSequence = frameSequence
    self.exposure100Microseconds = exposure100Microseconds
    self.gain = gain
    self.uniqueID = uniqueID
  }
}

/// A published file as `kioskcam roll list` shows it: its record when there is one.
public struct ListedItem: Encodable, Sendable, Equatable {
  public let file: String
  public let bytes: Int
  public let record: ItemRecord?
}

extension CameraRoll {
  static let recordsFile = ".kioskcam-items.jsonl"

  /// Appends `record` durably. A torn last line from a crash was closed with a newline at start, so this
  /// line is always whole on its own. A disk that filled (ENOSPC: a movie stopped by it has just taken the last
  /// block) gets the record reserve back for it: the record of a published item survives the fault that ended it.
  public func append(_ record: ItemRecord) throws(RollError) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(record) else { throw .unavailable("cannot encode the record of \(record.file)") }
    let line = [UInt8](data) + [0x0A]
    try records.withLock { (_) throws(RollError) in
      do throws(SystemCallError) {
        do throws(SystemCallError) {
          try appendLine(line)
        } catch {
          guard error.errno == .noSpace, releaseRecordReserve() else { throw error }
          try appendLine(line)
        }
      } catch {
        throw .io(error)
      }
    }
    keepRecordReserve()
  }

  private func appendLine(_ line: [UInt8]) throws(SystemCallError) {
    let file = try OwnedFD(opening: "\(root)/\(Self.recordsFile)", flags: O_WRONLY | O_APPEND | O_CREAT, mode: 0o644)
    let length = try file.size()
    do throws(SystemCallError) {
      try file.writeAll(line)
      try file.sync()
    } catch {
      // A line cut short (ENOSPC) must not stay: cut back to where it began, or at least ended, so that it
      // never glues itself to the next record.
      if (try? file.truncate(to: length)) == nil { _ = try? file.writeAll([0x0A]) }
      throw error
    }
    try file.close()
  }

  /// Blocks kept for records beside them: written out (zeros, fsynced, so that they are really allocated on
  /// ext4, vfat and tmpfs alike) and given back only when a record finds the disk full. A line is under 1 KB;
  /// the reserve covers a new block or cluster of the records file on any card's file system (FAT32 clusters
  /// reach 32 KiB).
  static let recordReserveFile = ".kioskcam-record-reserve"
  static let recordReserveBytes = 64 * 1024

  /// Makes the reserve whole if it is not (at start, when the storage is back, after a record used it).
  /// Best effort: on a full disk it waits for the next time, and never stays half made.
  func keepRecordReserve() {
    let path = "\(root)/\(Self.recordReserveFile)"
    var info = stat()
    if stat(path, &info) == 0, Int(info.st_size) >= Self.recordReserveBytes { return }
    do throws(SystemCallError) {
      // Readable, as the records are: the roll is pulled whole (scp -r, sftp get -R, rsync), and a file the
      // camera account cannot open would fail every pull.
      let file = try OwnedFD(opening: path, flags: O_WRONLY | O_CREAT | O_CLOEXEC, mode: 0o644)
      try file.writeAll([UInt8](repeating: 0, count: Self.recordReserveBytes), at: 0)
      try file.sync()
      try file.close()
      try Directory(path: root).sync()
    } catch {
      _ = unlink(path)
    }
  }

  /// Frees the reserve for a record; false when there was none to free.
  private func releaseRecordReserve() -> Bool {
    guard (try? Directory(path: root).remove(Self.recordReserveFile)) != nil else { return false }
    try? Directory(path: root).sync()
    log("records: the disk is full, the record reserve is used")
    return true
  }

  /// Ends a torn last line (a crash in the middle of an append) so that the next record starts clean.
  func repairRecords() {
    let path = "\(root)/\(Self.recordsFile)"
    guard let file = try? OwnedFD(opening: path, flags: O_RDONLY), let bytes = try? file.readToEnd(),
      let last = bytes.last, last != 0x0A
    else { return }
    _ = try? OwnedFD(opening: path, flags: O_WRONLY | O_APPEND).writeAll([0x0A])
  }

  /// Every record that parses, the last one for each file winning; torn or foreign lines are skipped.
  public static func readRecords(root: String) -> [String: ItemRecord] {
    guard let file = try? OwnedFD(opening: "\(root)/\(recordsFile)", flags: O_RDONLY), let bytes = try? file.readToEnd()
    else { return [:] }
    let decoder = JSONDecoder()
    var result: [String: ItemRecord] = [:]
    for line in bytes.split(separator: 0x0A) {
      if let record = try? decoder.decode(ItemRecord.self, from: Data(line)) { result[record.file] = record }
    }
    return result
  }

  /// The published items on disk in DCF order, each with its record; records of files deleted over SSH are
  /// left out, files without a record (copied in, or a crash before the record) are listed without one.
  public static func list(root: String) -> [ListedItem] {
    let records = readRecords(root: root)
    let dcim = "\(root)/DCIM"
    var items: [(RollNumber, ListedItem)] = []
    for folderName in DirectoryListing.names(in: dcim) {
      guard let folder = RollNumber.folderNumber(of: folderName) else { continue }
      for name in DirectoryListing.names(in: "\(dcim)/\(folderName)") {
        guard let fileNumber = RollNumber.fileNumber(of: name), let number = RollNumber(folder: folder, file: fileNumber)
        else { continue }
        let relative = "DCIM/\(folderName)/\(name)"
        var info = stat()
        guard stat("\(root)/\(relative)", &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
        items.append((number, ListedItem(file: relative, bytes: Int(info.st_size), record: records[relative])))
      }
    }
    return items.sorted { ($0.0, $0.1.file) < ($1.0, $1.1.file) }.map(\.1)
  }
}

extension CameraRoll {
  /// Review mode's delete: the item, then its record, so that `roll list` and the records file stop naming it.
  /// The number stays used (the counter never goes back).
  public func delete(_ relativePath: String) throws(RollError) {
    try discard(relativePath)
    try removeRecords(of: relativePath)
  }

  /// Rewrites the records file without the lines of `file`: a new file beside it, fsynced, renamed over it,
  /// the folder fsynced, so a crash leaves the old file or the new one, never half of one.
  func removeRecords(of file: String) throws(RollError) {
    try records.withLock { (_) throws(RollError) in
      guard let old = try? OwnedFD(opening: "\(root)/\(Self.recordsFile)", flags: O_RDONLY),
        let bytes = try? old.readToEnd()
      else { return }
      let decoder = JSONDecoder()
      let lines = bytes.split(separator: 0x0A)
      let kept = lines.filter { (try? decoder.decode(ItemRecord.self, from: Data($0)))?.file != file }
      guard kept.count != lines.count else { return }
      do throws(SystemCallError) {
        let directory = try Directory(path: root)
        let temporary = "\(Self.recordsFile).new"
        try? directory.remove(temporary)
        let new = try directory.createExclusive(temporary)
        try new.writeAll(kept.flatMap { Array($0) + [0x0A] })
        try new.sync()
        try new.close()
        try systemCall("rename records") { rename("\(root)/\(temporary)", "\(root)/\(Self.recordsFile)") }
        try directory.sync()
      } catch {
        throw .io(error)
      }
    }
  }
}
