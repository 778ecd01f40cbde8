#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import KioskCore
import LinuxIO
import Testing

@testable import CameraRoll
@testable import KioskService

/// The storage monitor on a real mount (a tmpfs of its own, so root only): a card whose write failed stays
/// "not available" while it is the same mount, and is the roll again once it has been unmounted and mounted
/// again, as a card taken out and put back is (even when the new mount gets the old one's ID, as it does).
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

  func available(_ events: [Event]) -> Bool? {
    for case .rollStorage(let available, _, _) in events { return available }
    return nil
  }

  @Test func aCardThatFailedIsUnavailableUntilItIsMountedAgain() throws {
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
    #expect(available(monitor.check(at: nil)) == true)
    monitor.storageFailed("fsync: Input/output error")
    let failed = monitor.check(at: nil)
    #expect(available(failed) == false, "\(failed)")
    #expect(available(monitor.check(at: nil)) == false, "still the mount that failed")
    // Taken out and put back between two checks: a new mount of the same folder.
    try #require(try run(["/bin/umount", root]) == 0)
    try #require(try run(["/bin/mount", "-t", "tmpfs", "-o", "size=8m", "kioskcam-monitor", root]) == 0)
    #expect(available(monitor.check(at: nil)) == true)
  }

  @Test func aFullDiskIsNotAFailedCard() {
    #expect(!RollError.io(SystemCallError("write", .noSpace)).isStorageFailure)
    #expect(RollError.io(SystemCallError("fsync", .io)).isStorageFailure)
    #expect(RollError.io(SystemCallError("create", .readOnlyFileSystem)).isStorageFailure)
  }
}
