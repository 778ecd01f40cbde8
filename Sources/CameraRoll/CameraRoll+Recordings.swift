#if canImport(Glibc)
  import Glibc
#endif
import KioskCore
import LinuxIO

/// A movie being recorded: a hidden file in a DCF folder, owned by the recorder until it is published.
/// A class, so that the recorder's workers and recovery's reader can share the one descriptor.
public final class RecordingFile: Sendable {
  /// The DCF folder, relative to DCIM: `100KIOSK`.
  public let folder: String
  /// The hidden name inside it: `.rec-<unique>.MOV`, or `.MP4`: the published file keeps the extension.
  public let name: String
  public let file: OwnedFD

  init(folder: String, name: String, file: consuming OwnedFD) {
    self.folder = folder
    self.name = name
    self.file = file
  }
}

extension CameraRoll {
  /// Recordings live under this prefix until they are finished and published; a crash leaves them for
  /// `interruptedRecordings`, never for the leftover sweep.
  public static let recordingPrefix = ".rec-"

  /// Creates a hidden file for a recording in the folder the next item goes to, so that publishing it is a
  /// rename within one folder.
  public func createRecording(tag: String, extension: String = MediaKind.movie.fileExtension) throws(RollError) -> RecordingFile {
    guard let number = next else { throw .exhausted }
    let folder = number.folderName(suffix: suffix)
    let name = "\(Self.recordingPrefix)\(tag).\(`extension`)"
    do throws(SystemCallError) {
      let folderPath = "\(dcim)/\(folder)"
      if !FileStatus.isDirectory(folderPath) {
        try FileStatus.makeDirectory(folderPath)
        try Directory(path: dcim).sync()
      }
      let directory = try Directory(path: folderPath)
      let file = try OwnedFD(opening: "\(folderPath)/\(name)", flags: O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: Self.hiddenMode)
      recordingsOpen.withLock { _ = $0.insert(name) }
      // The name must survive a power cut too, or there is nothing to recover.
      do {
        try directory.sync()
      } catch {
        recordingsOpen.withLock { _ = $0.remove(name) }
        throw error
      }
      return RecordingFile(folder: folder, name: name, file: file)
    } catch {
      throw .io(error)
    }
  }

  /// Hidden recordings a crash or a lost card left, as (folder, name), oldest folder first; not the ones this
  /// process is still writing or finishing.
  public func interruptedRecordings() -> [(folder: String, name: String)] {
    let open = recordingsOpen.withLock { $0 }
    var found: [(String, String)] = []
    for folder in DirectoryListing.names(in: dcim).sorted() where RollNumber.folderNumber(of: folder) != nil {
      for name in DirectoryListing.names(in: "\(dcim)/\(folder)").sorted()
      where name.hasPrefix(Self.recordingPrefix) && !open.contains(name) {
        found.append((folder, name))
      }
    }
    return found
  }

  /// The recorder could not finish or publish its recording (the card failed or went): it is an interrupted
  /// recording now, for the recovery that runs when the storage is back or at the next start.
  public func abandonRecording(name: String) {
    recordingsOpen.withLock { _ = $0.remove(name) }
  }

  /// Opens an interrupted recording for recovery.
  public func openRecording(folder: String, name: String) throws(RollError) -> RecordingFile {
    do {
      return RecordingFile(
        folder: folder, name: name, file: try OwnedFD(opening: "\(dcim)/\(folder)/\(name)", flags: O_RDWR | O_CLOEXEC))
    } catch {
      throw .io(error)
    }
  }

  /// Removes a hidden recording that held nothing worth keeping.
  public func removeRecording(folder: String, name: String) {
    recordingsOpen.withLock { _ = $0.remove(name) }
    guard let directory = try? Directory(path: "\(dcim)/\(folder)") else { return }
    try? directory.remove(name)
    try? directory.sync()
  }

  /// Publishes a finished, fsynced recording under the next DCF number (same counter as stills), with the
  /// extension of its hidden name (`MOV`, `MP4`).
  public func publishRecording(folder: String, name: String, kind: MediaKind) throws(RollError) -> RollItem {
    let fileExtension = name.split(separator: ".").last.map(String.init) ?? kind.fileExtension
    return try counter.withLock { (next) throws(RollError) -> RollItem in
      var source = folder
      var madeReadable = false
      while true {
        guard let number = next else { throw .exhausted }
        let folderName = number.folderName(suffix: suffix)
        let finalName = number.fileName(extension: fileExtension)
        do throws(SystemCallError) {
          let folderPath = "\(dcim)/\(folderName)"
          if source != folderName {
            // The next number is in another folder now (the old one filled): move it there, still hidden.
            if !FileStatus.isDirectory(folderPath) {
              try FileStatus.makeDirectory(folderPath)
              try Directory(path: dcim).sync()
            }
            try systemCall("rename \(source)/\(name) to \(folderName)") {
              rename("\(dcim)/\(source)/\(name)", "\(folderPath)/\(name)")
            }
            try Directory(path: "\(dcim)/\(source)").sync()
            source = folderName
          }
          // Finished and fsynced by the recorder: readable now, durably, before it gets its final name (and
          // fsynced again under that name, for vfat: `syncRenamed`).
          let file = try OwnedFD(opening: "\(folderPath)/\(name)", flags: O_RDONLY)
          if !madeReadable {
            try file.setMode(publishedMode)
            try file.sync()
            madeReadable = true
          }
          let directory = try Directory(path: folderPath)
          guard try directory.renameNoReplaceUnlessTaken(name, to: finalName) else {
            // A file copied in under this name: skip the number, never overwrite.
            next = advance(past: number)
            continue
          }
          try Self.syncRenamed(file, in: directory)
          next = advance(past: number)
          recordingsOpen.withLock { _ = $0.remove(name) }
          return RollItem(number: number, kind: kind, relativePath: "DCIM/\(folderName)/\(finalName)")
        } catch {
          throw .io(error)
        }
      }
    }
  }
}
