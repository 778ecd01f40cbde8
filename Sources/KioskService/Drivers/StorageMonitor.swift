#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import KioskCore
import LinuxIO

/// The roll's storage: still there (a card pulled, an unmount, a remount read-only), and room above the
/// reserve. Checked at every press, after every save, and on a timer (space freed over SSH shows up on screen
/// without a press); every second while recording, which must stop at the reserve with room left to finish.
final class StorageMonitor: StorageDriver {
  private let config: Config
  private let roll: CameraRoll?
  private let post: (ServiceEvent) -> Void
  private var timer: LoopTimer?
  private var recording = false
  private(set) var shots = ShotsLeft()
  /// Why a write failed on the storage itself (EIO, or read-only since one), and a watch on the mount table
  /// from then: a card that failed is not the roll again until it has been taken out and put back, which
  /// unmounts and mounts it (ext4 refuses every write until then, and vfat's cache no longer matches the card).
  /// Any mount or unmount since counts: a card mounted anew looks like the old one in every other way, and the
  /// cost of an unrelated mount is one more press that fails.
  private var failed: (reason: String, mounts: MountTableWatch?)?

  init(config: Config, roll: CameraRoll?, loop: EventLoop, post: @escaping (ServiceEvent) -> Void) throws(SystemCallError) {
    self.config = config
    self.roll = roll
    self.post = post
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
    // A card seen gone comes back mounted anew; one on the mount that failed is not the roll yet.
    if !place.passed || failed?.mounts?.changed == true { failed = nil }
    if let failure = failed {
      return [.rollStorage(available: false, detail: "\(roll.root): \(failure.reason)", at: time)]
    }
    var events: [Event] = [.rollStorage(available: place.passed, detail: place.evidence, at: time)]
    guard place.passed else { return events }
    guard let available = facts.availableBytes else {
      return events + [.storage(full: true, detail: "\(roll.root): cannot read the free space", at: time)]
    }
    shots.spareBytes = available > config.roll.reserveBytes ? available - config.roll.reserveBytes : 0
    let detail = "\(available / 1_048_576) MiB free on \(roll.root), reserve \(config.roll.reserveMegabytes) MiB"
    events.append(.storage(full: available < config.roll.reserveBytes, detail: detail, at: time))
    return events
  }

  /// A write on the roll failed because the storage did (not because it was full): "Storage not available"
  /// from the next check until the card is mounted again.
  func storageFailed(_ reason: String) {
    guard roll != nil, failed == nil else { return }
    failed = ("a write failed (\(reason)); take the card out and put it back", try? MountTableWatch())
  }

  /// A published still's size joins the mean that "shots left" divides the free space by.
  func stillPublished(_ relativePath: String) {
    guard let roll, relativePath.uppercased().hasSuffix(".JPG") else { return }
    var info = stat()
    guard stat("\(roll.root)/\(relativePath)", &info) == 0 else { return }
    shots.add(stillOf: Int(info.st_size))
  }
}
