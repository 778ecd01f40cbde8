import Foundation
import KioskCore
import Testing

@testable import CameraRoll

/// The roll's storage coming back while the service runs (a card put back in, or remounted after an error):
/// what the loss left is swept or recovered, and no number is ever used twice, whichever card comes back.
@Suite struct RollReturnTests {
  let root: String

  init() throws {
    root = NSTemporaryDirectory() + "kioskcam-return-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
  }

  func put(_ relative: String) throws {
    let path = "\(root)/\(relative)"
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: path, contents: Data([1]))
  }

  @Test func aCardThatComesBackMovesTheCounterUpAndNeverDown() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    _ = try roll.publish([1], kind: .still)
    _ = try roll.publish([2], kind: .still)
    // Another card, numbered further on (or this one, written to elsewhere), with a half-written still.
    try put("DCIM/100KIOSK/IMG_0010.MOV")
    try put("DCIM/100KIOSK/.tmp-IMG_0011.JPG")
    roll.storageReturned()
    #expect(try roll.publish([3], kind: .still).relativePath == "DCIM/100KIOSK/IMG_0011.JPG")
    let names = try FileManager.default.contentsOfDirectory(atPath: "\(root)/DCIM/100KIOSK").sorted()
    #expect(names == ["IMG_0001.JPG", "IMG_0002.JPG", "IMG_0010.MOV", "IMG_0011.JPG"], "the leftover swept")
    // A card numbered lower than what this service has used: the counter stays where it is.
    try FileManager.default.removeItem(atPath: "\(root)/DCIM")
    try "100-0004\n".write(toFile: "\(root)/\(CameraRoll.counterFile)", atomically: true, encoding: .utf8)
    try put("DCIM/100KIOSK/IMG_0003.JPG")
    roll.storageReturned()
    #expect(try roll.publish([4], kind: .still).relativePath == "DCIM/100KIOSK/IMG_0012.JPG")
  }

  @Test func aRecordingBeingWrittenIsNotInterruptedAndOneLetGoIs() throws {
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let recording = try roll.createRecording(tag: "live")
    try put("DCIM/100KIOSK/.rec-crashed.MOV")
    #expect(roll.interruptedRecordings().map(\.name) == [".rec-crashed.MOV"], "not the one still being written")
    roll.abandonRecording(name: recording.name)
    #expect(roll.interruptedRecordings().map(\.name) == [".rec-crashed.MOV", recording.name])
    // Published: neither open nor interrupted.
    let second = try roll.createRecording(tag: "next")
    _ = try roll.publishRecording(folder: second.folder, name: second.name, kind: .movie)
    #expect(roll.interruptedRecordings().count == 2)
    #expect(roll.recordingsOpen.withLock { $0.isEmpty })
  }
}
