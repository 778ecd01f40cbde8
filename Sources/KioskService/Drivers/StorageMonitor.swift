#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import KioskCore
import LinuxIO

/// The roll's storage: still there (a card pulled, an unmount, a remount read-only), and room above the
/// reserve. Checked at every press, after every save, at once when anything is mounted or unmounted (a pulled
/// card's file system is taken away by systemd or an automounter), and on a timer (space freed over SSH shows
/// up on screen without a press); every second while recording, which must stop at the reserve with room
/// left to finish. What a failed card means is the kiosk's decision (Kiosk+Storage.swift): this only reports
/// what it sees, with the count of mount table changes that decision needs.
final class StorageMonitor: StorageDriver {
  private let config: Config
  private let roll: CameraRoll?
  private let post: (ServiceEvent) -> Void
  private var timer: LoopTimer?
  private var recording = false
  private(set) var shots = ShotsLeft()
  private let mountTable: MountTableWatch?
  /// Changes to the mount table seen since the start.
  private var mountChanges = 0

  init(config: Config, roll: CameraRoll?, loop: EventLoop, post: @escaping (ServiceEvent) -> Void) throws(SystemCallError) {
    self.config = config
    self.roll = roll
    self.post = post
    // Without the watch the timer still sees a card go, only later.
    mountTable = roll == nil ? nil : try? MountTableWatch()
    if let roll {
      for item in CameraRoll.list(root: roll.root) where item.file.uppercased().hasSuffix(".JPG") {
        shots.add(stillOf: item.bytes)
      }
    }
    timer = try LoopTimer(loop: loop) { [unowned self] in
      for event in check(at: nil) { post(.kiosk(event)) }
      arm()
    }
    arm()
    if let mountTable {
      try loop.watch(mountTable.descriptor, for: .priority) { [unowned self] _ in
        // The loop's epoll took the kernel's mark in reporting it: this is the change.
        mountChanges += 1
        for event in check(at: nil) { post(.kiosk(event)) }
      }
    }
  }

  /// Changes to the mount table so far, whoever saw them: the loop, or a check made between its turns.
  var mounts: Int {
    if mountTable?.consumeChange() == true { mountChanges += 1 }
    return mountChanges
  }

  private func arm() {
    try? timer?.arm(after: (recording ? Intervals.storageCheckRecording : Intervals.storageCheck).timerNanoseconds)
  }

  func recordingChanged(_ recording: Bool) {
    guard recording != self.recording else { return }
    self.recording = recording
    if recording { arm() }
  }

  /// These events carry a clock, and the kiosk decides button gestures by it. A check made for a press is
  /// told the press's own time: the press is not the kiosk's yet, and the edges queued behind it must not be
  /// overtaken (a clock 100 ms past a bounce's release, read late on a busy machine, decided a release while
  /// the next press edge waited, and one press became two photos).
  func check(at press: Instant?) -> [Event] {
    guard let roll else { return [] }
    let time = press ?? now()
    // Is the storage still there at all? Then free space, from the same look at it.
    let facts = CapabilityProbe.rollFacts(config)
    let place = RollStorageCheck.evaluate(facts, roll: config.roll, spaceCounts: false)
    var events: [Event] = [.rollStorage(available: place.passed, mounts: mounts, detail: place.evidence, at: time)]
    guard place.passed else { return events }
    guard let available = facts.availableBytes else {
      return events + [.storage(full: true, detail: "\(roll.root): cannot read the free space", at: time)]
    }
    shots.spareBytes = available > config.roll.reserveBytes ? available - config.roll.reserveBytes : 0
    let detail = "\(available / 1_048_576) MiB free on \(roll.root), reserve \(config.roll.reserveMegabytes) MiB"
    events.append(.storage(full: available < config.roll.reserveBytes, detail: detail, at: time))
    return events
  }

  /// A published still's size joins the mean that "shots left" divides the free space by.
  func stillPublished(_ relativePath: String) {
    guard let roll, relativePath.uppercased().hasSuffix(".JPG") else { return }
    var info = stat()
    guard stat("\(roll.root)/\(relativePath)", &info) == 0 else { return }
    shots.add(stillOf: Int(info.st_size))
  }
}
