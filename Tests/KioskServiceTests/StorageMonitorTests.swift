#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import KioskCore
import LinuxIO
import Testing

@testable import CameraRoll
@testable import KioskService

/// The storage monitor on a real mount (a tmpfs of its own, so root only): it counts the mount table's
/// changes, which is how the kiosk tells a card mounted anew from the one that failed (even when the new mount
/// gets the old one's ID, as it does); and the adapter tells a card's failure from a full disk.
@Suite(.enabled(if: getuid() == 0, "mounts a tmpfs: run as root"))
struct StorageMonitorTests {
  func run(_ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }

  func checked(_ events: [Event]) -> (available: Bool, mounts: Int)? {
    for case .rollStorage(let available, let mounts, _, _) in events { return (available, mounts) }
    return nil
  }

  @Test func aCardTakenOutAndPutBackIsAChangeOfTheMountTable() throws {
    let root = NSTemporaryDirectory() + "kioskcam-monitor-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try #require(try run(["/bin/mount", "-t", "tmpfs", "-o", "size=8m", "kioskcam-monitor", root]) == 0)
    defer { _ = try? run(["/bin/umount", root]) }
    var config = Config()
    config.roll.path = root
    config.roll.mount = .mountPoint
    config.roll.reserveMegabytes = 1
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let loop = try EventLoop()
    let monitor = try StorageMonitor(config: config, roll: roll, loop: loop) { _ in }
    let first = try #require(checked(monitor.check(at: nil)))
    #expect(first.available)
    #expect(checked(monitor.check(at: nil))?.mounts == first.mounts, "nothing mounted since")
    // Taken out and put back between two checks: a new mount of the same folder.
    try #require(try run(["/bin/umount", root]) == 0)
    try #require(try run(["/bin/mount", "-t", "tmpfs", "-o", "size=8m", "kioskcam-monitor", root]) == 0)
    let again = try #require(checked(monitor.check(at: nil)))
    #expect(again.available && again.mounts > first.mounts, "\(first) then \(again)")
  }

  /// Heard by the loop itself, not only at the next check: a pulled card's file system taken away is a check
  /// at once, with the card seen gone.
  @Test func theLoopChecksAtOnceWhenTheRollIsUnmounted() throws {
    let root = NSTemporaryDirectory() + "kioskcam-monitor-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try #require(try run(["/bin/mount", "-t", "tmpfs", "-o", "size=8m", "kioskcam-monitor", root]) == 0)
    defer { _ = try? run(["/bin/umount", root]) }
    var config = Config()
    config.roll.path = root
    config.roll.mount = .mountPoint
    config.roll.reserveMegabytes = 1
    let roll = try CameraRoll(root: root, suffix: "KIOSK")
    let loop = try EventLoop()
    var posted: [Event] = []
    let monitor = try StorageMonitor(config: config, roll: roll, loop: loop) { event in
      if case .kiosk(let event) = event { posted.append(event) }
    }
    let before = try #require(checked(monitor.check(at: nil)))
    try #require(try run(["/bin/umount", root]) == 0)
    try KioskServiceTests.run(loop) { checked(posted)?.available == false }
    let seen = try #require(checked(posted))
    #expect(!seen.available && seen.mounts > before.mounts, "\(posted)")
  }

  @Test func aFullDiskIsNotAFailedCard() {
    #expect(StorageFault(RollError.io(SystemCallError("write", .noSpace))) == nil)
    #expect(StorageFault(RollError.io(SystemCallError("fsync", .io))) == .inputOutput)
    #expect(StorageFault(RollError.io(SystemCallError("create", .readOnlyFileSystem))) == .readOnly)
    #expect(StorageFault(SystemCallError("fsync", .io)) == .inputOutput)
    #expect(StorageFault(RollError.unavailable("/roll: no such directory")) == nil, "the check sees a folder gone")
  }
}
