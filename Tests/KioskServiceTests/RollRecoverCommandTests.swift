import Foundation
import KioskService
import LinuxIO
import Testing

/// `kioskcam roll recover` as the executable runs it (`Commands.main`): exit status and the roll's files.
@Suite struct RollRecoverCommandTests {
  let root = NSTemporaryDirectory() + "kioskcam-recover-command-\(UUID().uuidString)"
  var leftover: String { "\(root)/roll/DCIM/100KIOSK/.tmp-99.JPG" }
  /// A recording cut before anything of it was durable: removed, and no failure.
  var emptyRecording: String { "\(root)/roll/DCIM/100KIOSK/.rec-0123.MOV" }
  var config: String { "\(root)/kioskcam.conf" }
  var socket: String { "\(root)/control.sock" }

  init() throws {
    try FileManager.default.createDirectory(atPath: "\(root)/roll/DCIM/100KIOSK", withIntermediateDirectories: true)
    try Data([0xFF, 0xD8]).write(to: URL(fileURLWithPath: leftover))
    try Data().write(to: URL(fileURLWithPath: emptyRecording))
    try Data("[roll]\npath = \(root)/roll\n[control]\nsocket = \(socket)\n".utf8).write(to: URL(fileURLWithPath: config))
  }

  /// While something answers on the configuration's control socket (a running service), the roll is left
  /// alone with exit 69; once nothing does, the leftover and the empty recording go and the exit is 0 (an empty
  /// recording is nothing to recover, not a failure), and a path with no roll is 74.
  @Test func refusedWhileTheServiceRunsAndDoneWhenItDoesNot() throws {
    defer { try? FileManager.default.removeItem(atPath: root) }
    do {
      let service = try UnixListener(path: socket)
      _ = service.descriptor
      #expect(Commands.main(["roll", "recover", "--config", config]) == 69)
      #expect(FileManager.default.fileExists(atPath: leftover), "the roll was touched while the service ran")
    }
    #expect(Commands.main(["roll", "recover", "--config", config]) == 0)
    #expect(!FileManager.default.fileExists(atPath: leftover))
    #expect(!FileManager.default.fileExists(atPath: emptyRecording))
    #expect(Commands.main(["roll", "recover", "--path", "\(root)/no-roll", "--config", config]) == 74)
    #expect(Commands.main(["roll", "recover", "--bogus"]) == 64)
  }
}
