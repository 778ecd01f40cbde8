#if canImport(Glibc)
  import Glibc
#endif
import Foundation
import KioskCore
import LinuxIO
import TestPeers
import Testing

@testable import CameraRoll
@testable import KioskService

/// The storage monitor on a real mount (a tmpfs of its own, so root only): it counts the mount table's
/// changes, which is how the kiosk tells a card mounted anew from the one that failed (even when the new mount
/// gets the old one's ID, as it does); and the adapter tells a card's failure from a full disk.
@Suite(.enabled(if: getuid() == 0, "mounts a tmpfs: run as root"))
struct StorageMonitorTests {
  func checked(_ events: [Event]) -> (available: Bool, mounts: Int)? {
    for case .rollStorage(let available, let mounts, _, _) in events { return (available, mounts) }
    return nil
  }

  func mount(_ root: String) throws {
    let mounted = try peer(["/bin/mount", "-t", "tmpfs", "-o", "size=8m", "kioskcam-monitor", root])
    try #require(mounted.status == 0, "\(mounted.stderr)")
  }

  func unmount(_ root: String) throws {
    let unmounted = try peer(["/bin/umount", root])
    try #require(unmounted.status == 0, "\(unmounted.stderr)")
  }

  /// A roll on a tmpfs of its own (`[roll] mount = mount-point`), its monitor on a loop that `body` may run;
  /// what the monitor posts for the kiosk is collected in `posted`.
  func withMonitoredRoll(_ body: (_ root: String, _ loop: EventLoop, _ monitor: StorageMonitor, _ posted: @escaping () -> [Event]) throws -> Void) throws {
    let root = NSTemporaryDirectory() + "kioskcam-monitor-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try mount(root)
    defer { _ = try? peer(["/bin/umount", root]) }
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
    try body(root, loop, monitor) { posted }
  }

  @Test func aCardTakenOutAndPutBackIsAChangeOfTheMountTable() throws {
    try withMonitoredRoll { root, _, monitor, _ in
      let first = try #require(checked(monitor.check(at: nil)))
      #expect(first.available)
      // Two checks with no mount between them count the same. The mount table is the process's: a test of
      // another suite running beside this one may mount or unmount between two checks (seen under qemu-aarch64),
      // so a pair is taken up to five times; a monitor that counted a mount at every check never gives one.
      let steady = (0..<5).contains { _ in
        let (one, two) = (checked(monitor.check(at: nil))?.mounts, checked(monitor.check(at: nil))?.mounts)
        return one != nil && one == two
      }
      #expect(steady, "two checks with nothing mounted between them counted the same")
      // Taken out and put back between two checks: a new mount of the same folder.
      try unmount(root)
      try mount(root)
      let again = try #require(checked(monitor.check(at: nil)))
      #expect(again.available && again.mounts > first.mounts, "\(first) then \(again)")
    }
  }

  /// Heard by the loop itself, not only at the next check: a pulled card's file system taken away is a check
  /// at once, with the card seen gone.
  @Test func theLoopChecksAtOnceWhenTheRollIsUnmounted() throws {
    try withMonitoredRoll { root, loop, monitor, posted in
      let before = try #require(checked(monitor.check(at: nil)))
      try unmount(root)
      try KioskServiceTests.run(loop) { checked(posted())?.available == false }
      let seen = try #require(checked(posted()))
      #expect(!seen.available && seen.mounts > before.mounts, "\(posted())")
    }
  }

  @Test func aFullDiskIsNotAFailedCard() {
    #expect(StorageFault(RollError.io(SystemCallError("write", .noSpace))) == nil)
    #expect(StorageFault(RollError.io(SystemCallError("fsync", .io))) == .inputOutput)
    #expect(StorageFault(RollError.io(SystemCallError("create", .readOnlyFileSystem))) == .readOnly)
    #expect(StorageFault(SystemCallError("fsync", .io)) == .inputOutput)
    #expect(StorageFault(RollError.unavailable("/roll: no such directory")) == nil, "the check sees a folder gone")
  }
}
