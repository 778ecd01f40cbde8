import Foundation
import KioskCore
import Testing

@testable import CameraRoll

/// A real camera roll in a fresh temporary directory: publishing is about the file system, so no fakes.
@Suite struct CameraRollTests {
  let root: String

  init() throws {
    root = NSTemporaryDirectory() + "kioskcam-roll-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  }

  func files(_ folder: String = "100KIOSK") -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/DCIM/\(folder)")) ?? []).sorted()
  }

  @Test func itemsArePublishedInDCFOrder() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let first = try roll.publish([1, 2, 3], kind: .still)
    let second = try roll.publish([4, 5], kind: .still)
    #expect(first.relativePath == "DCIM/100KIOSK/IMG_0001.JPG")
    #expect(second.relativePath == "DCIM/100KIOSK/IMG_0002.JPG")
    #expect(files() == ["IMG_0001.JPG", "IMG_0002.JPG"], "no temporary file is left behind")
    #expect(FileManager.default.contents(atPath: "\(root)/\(first.relativePath)") == Data([1, 2, 3]))
  }

  func mode(_ relative: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: "\(root)/\(relative)")[.posixPermissions] as? Int)
  }

  /// The camera account pulls through group read: a hidden file is owner-only until it is complete, then it
  /// gets the mode creating it would have given (0644 under the process's umask, 0640 under the unit's 0027).
  @Test func hiddenFilesAreOwnerOnlyAndPublishedOnesFollowTheUmask() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let mask = umask(0o022)
    umask(mask)
    let published = 0o644 & ~Int(mask)
    let still = try roll.publish([1, 2, 3], kind: .still)
    #expect(try mode(still.relativePath) == published)
    #expect(try mode(".kioskcam-last-number") == published)
    let recording = try roll.createRecording(tag: "test")
    #expect(try mode("DCIM/\(recording.folder)/\(recording.name)") == 0o600)
    try recording.file.writeAll([7, 8, 9])
    try recording.file.sync()
    let movie = try roll.publishRecording(folder: recording.folder, name: recording.name, kind: .movie)
    #expect(movie.relativePath == "DCIM/100KIOSK/IMG_0002.MOV")
    #expect(try mode(movie.relativePath) == published)
  }

  @Test func numbersAreNeverReusedAfterDeletion() throws {
    var roll = try CameraRoll(root: root, suffix: "KIOSK")
    _ = try roll.publish([1], kind: .still)
    let second = try roll.publish([2], kind: .still)
    try FileManager.default.removeItem(atPath: "\(root)/\(second.relativePath)")
    roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(try roll.publish([3], kind: .still).relativePath == "DCIM/100KIOSK/IMG_0003.JPG")
  }

  @Test func aFileCopiedInIsNeverOverwritten() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    _ = try roll.publish([1], kind: .still)
    // Someone drops IMG_0002.JPG in while the service runs: it is theirs, so the next number is 3.
    _ = FileManager.default.createFile(atPath: "\(root)/DCIM/100KIOSK/IMG_0002.JPG", contents: Data([9]))
    #expect(try roll.publish([2], kind: .still).relativePath == "DCIM/100KIOSK/IMG_0003.JPG")
    #expect(FileManager.default.contents(atPath: "\(root)/DCIM/100KIOSK/IMG_0002.JPG") == Data([9]))
  }

  @Test func theCounterStartsAboveTheHighestFileOnDisk() throws {
    try FileManager.default.createDirectory(atPath: "\(root)/DCIM/104OTHER", withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: "\(root)/DCIM/104OTHER/IMG_0042.JPG", contents: Data([1]))
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(try roll.publish([1], kind: .still).relativePath == "DCIM/104KIOSK/IMG_0043.JPG")
  }

  @Test func aFullFolderMovesOnToTheNext() throws {
    try "100-9999\n".write(toFile: "\(root)/\(CameraRoll.counterFile)", atomically: true, encoding: .utf8)
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(try roll.publish([1], kind: .still).relativePath == "DCIM/101KIOSK/IMG_0001.JPG")
  }

  @Test func anExhaustedRollSaysSo() throws {
    try "999-9999\n".write(toFile: "\(root)/\(CameraRoll.counterFile)", atomically: true, encoding: .utf8)
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(throws: RollError.self) { try roll.publish([1], kind: .still) }
  }

  @Test func leftoversFromACrashAreRemovedAtStart() throws {
    try FileManager.default.createDirectory(atPath: "\(root)/DCIM/100KIOSK", withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: "\(root)/DCIM/100KIOSK/.tmp-IMG_0007.JPG", contents: Data([1]))
    _ = FileManager.default.createFile(atPath: "\(root)/DCIM/100KIOSK/IMG_0006.JPG", contents: Data([1]))
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(files() == ["IMG_0006.JPG"])
    #expect(roll.next == RollNumber(folder: 100, file: 7))
  }

  /// A rename cut on vfat, as fsck.fat leaves it: the new name truncated to 0 bytes beside the whole hidden
  /// file. The hidden file takes the name; a whole published file beside a leftover is kept as it is; an
  /// empty leftover beside an empty name finishes nothing.
  @Test func aStillWhoseRenameWasCutGetsItsWholeHiddenCopy() throws {
    let folder = "\(root)/DCIM/100KIOSK"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let still = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3])
    _ = FileManager.default.createFile(atPath: "\(folder)/.tmp-IMG_0012.JPG", contents: still)
    _ = FileManager.default.createFile(atPath: "\(folder)/IMG_0012.JPG", contents: Data())
    _ = FileManager.default.createFile(atPath: "\(folder)/.tmp-IMG_0011.JPG", contents: Data([9]))
    _ = FileManager.default.createFile(atPath: "\(folder)/IMG_0011.JPG", contents: still)
    _ = FileManager.default.createFile(atPath: "\(folder)/.tmp-IMG_0013.JPG", contents: Data())
    _ = FileManager.default.createFile(atPath: "\(folder)/IMG_0013.JPG", contents: Data())
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(roll.completedAtOpen == ["DCIM/100KIOSK/IMG_0012.JPG"])
    #expect(roll.sweptAtOpen.sorted() == ["DCIM/100KIOSK/.tmp-IMG_0011.JPG", "DCIM/100KIOSK/.tmp-IMG_0013.JPG"])
    #expect(files() == ["IMG_0011.JPG", "IMG_0012.JPG", "IMG_0013.JPG"])
    #expect(FileManager.default.contents(atPath: "\(folder)/IMG_0012.JPG") == still)
    #expect(FileManager.default.contents(atPath: "\(folder)/IMG_0011.JPG") == still)
  }

  @Test func aMissingRollIsUnavailableNotCreated() {
    #expect(throws: RollError.self) { try CameraRoll(root: "\(root)/not-mounted", suffix: "KIOSK") }
    #expect(!FileManager.default.fileExists(atPath: "\(root)/not-mounted"))
  }
}

extension CameraRollTests {
  @Test func aRetakeRemovesThePhotoAndItsNumberStaysUsed() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let first = try roll.publish([1], kind: .still)
    try roll.discard(first.relativePath)
    #expect(files().isEmpty)
    #expect(try roll.publish([2], kind: .still).relativePath == "DCIM/100KIOSK/IMG_0002.JPG")
  }

  @Test(arguments: ["../etc/passwd", "DCIM/100KIOSK/../../x", "DCIM/100KIOSK/.kioskcam", "IMG_0001.JPG"])
  func discardTouchesNothingButRollItems(path: String) throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    #expect(throws: RollError.self) { try roll.discard(path) }
  }
}

@Suite struct ItemRecordTests {
  let root: String

  init() throws {
    root = NSTemporaryDirectory() + "kioskcam-records-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  }

  func record(_ file: String, lag: Double = 12.5) -> ItemRecord {
    ItemRecord(
      mediaType: "still", file: file, bytes: 3, width: 640, height: 360, captured: "2026-01-02T03:04:05.006+01:00",
      shutterLagMilliseconds: lag, sourceFormat: "YUYV", crop: nil, frameSequence: 7, exposure100Microseconds: nil,
      gain: 10, uniqueID: "00")
  }

  @Test func recordsSurviveARestartAndFollowTheFilesOnDisk() throws {
    var roll = try CameraRoll(root: root, suffix: "KIOSK")
    let first = try roll.publish([1, 2, 3], kind: .still)
    try roll.append(record(first.relativePath))
    let second = try roll.publish([4, 5, 6], kind: .still)
    try roll.append(record(second.relativePath, lag: -3))
    roll = try CameraRoll(root: root, suffix: "KIOSK")
    // Deleted over SSH: its record no longer lists; a file copied in lists without one.
    try FileManager.default.removeItem(atPath: "\(root)/\(first.relativePath)")
    _ = FileManager.default.createFile(atPath: "\(root)/DCIM/100KIOSK/IMG_0009.JPG", contents: Data([1]))
    let items = CameraRoll.list(root: root)
    #expect(items.map(\.file) == ["DCIM/100KIOSK/IMG_0002.JPG", "DCIM/100KIOSK/IMG_0009.JPG"])
    #expect(items[0].record == record(second.relativePath, lag: -3))
    #expect(items[0].bytes == 3)
    #expect(items[1].record == nil)
  }

  @Test func aTornLastLineFromACrashIsClosedAndSkipped() throws {
    var roll = try CameraRoll(root: root, suffix: "KIOSK")
    let first = try roll.publish([1], kind: .still)
    try roll.append(record(first.relativePath))
    let handle = try #require(FileHandle(forWritingAtPath: "\(root)/\(CameraRoll.recordsFile)"))
    handle.seekToEndOfFile()
    handle.write(Data("{\"file\":\"DCIM/100KIOSK/IMG_0002.JPG\",\"byt".utf8))
    handle.closeFile()
    roll = try CameraRoll(root: root, suffix: "KIOSK")
    let second = try roll.publish([2], kind: .still)
    try roll.append(record(second.relativePath))
    let records = CameraRoll.readRecords(root: root)
    #expect(records.keys.sorted() == [first.relativePath, second.relativePath])
  }

  @Test func aDeleteRemovesTheItemAndItsRecordAndKeepsTheNumberUsed() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let first = try roll.publish([1], kind: .still)
    try roll.append(record(first.relativePath))
    let second = try roll.publish([2], kind: .movie)
    try roll.append(record(second.relativePath))
    try roll.delete(second.relativePath)
    #expect(!FileManager.default.fileExists(atPath: "\(root)/\(second.relativePath)"))
    let text = try String(contentsOfFile: "\(root)/\(CameraRoll.recordsFile)", encoding: .utf8)
    #expect(!text.contains("IMG_0002"), "\(text)")
    #expect(CameraRoll.readRecords(root: root).keys.sorted() == [first.relativePath])
    #expect(try roll.publish([3], kind: .still).relativePath == "DCIM/100KIOSK/IMG_0003.JPG")
    #expect(throws: RollError.self) { try roll.delete("DCIM/100KIOSK/../../x") }
  }
}
