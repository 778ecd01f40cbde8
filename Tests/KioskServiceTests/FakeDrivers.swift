import Capture
import Imaging
import JPEGCodec
import KioskCore
import Preview

@testable import CameraRoll
@testable import KioskService

/// Every call a fake driver gets, in order, in a few words: what the wiring did, as a test reads it.
final class Journal {
  var lines: [String] = []
  func note(_ line: String) { lines.append(line) }
  func index(of line: String) -> Int? { lines.firstIndex(of: line) }
  func contains(_ line: String) -> Bool { lines.contains(line) }
}

/// The dispatcher and its real `Kiosk` with fake drivers that write down what they are asked and post what
/// the test scripts them to post.
final class Rig {
  let journal = Journal()
  let dispatcher: Dispatcher
  let camera: FakeCamera
  let screen: FakeScreen
  let player: FakePlayer
  let panel: FakePanel
  let stills: FakeStills
  let movie: FakeMovie
  let storage: FakeStorage
  let control: FakeControl
  var clock = Instant(nanoseconds: 0)

  static let timing = GestureTiming(debounce: .milliseconds(30), minimumPulse: .milliseconds(5), hold: .milliseconds(800))

  init(
    required: [Capability] = [.stillCamera, .cameraRoll],
    optional: [Capability] = [.movieCamera, .display, .shutterButton, .modeButton, .zoom],
    missing: [Capability] = []
  ) {
    let gate = CapabilityGate(required: required, optional: optional)
    let results = (required + optional).map { capability in
      missing.contains(capability) ? ProbeResult.fail(capability, "not fitted") : .pass(capability, "fake")
    }
    let settings = KioskSettings(gestures: Self.timing, movieMaximum: .seconds(10), allowDelete: true)
    var clockBox: (() -> Instant)!
    dispatcher = Dispatcher(
      kiosk: Kiosk(settings: settings), capabilities: CapabilityMonitor(gate: gate, results: results), rollOpen: true,
      clock: { clockBox() }, deadlineChanged: { _ in })
    let post: (ServiceEvent) -> Void = { [unowned dispatcher] in dispatcher.post($0) }
    camera = FakeCamera(journal)
    screen = FakeScreen(journal)
    player = FakePlayer(journal, post: post)
    panel = FakePanel(journal)
    stills = FakeStills(journal, post: post)
    movie = FakeMovie(journal, post: post)
    storage = FakeStorage(journal)
    control = FakeControl(journal)
    dispatcher.drivers = Drivers(
      camera: camera, display: FakeDisplay(journal), screen: screen, player: player, panel: panel, stills: stills,
      movie: movie, storage: storage, control: control, supervisor: FakeSupervisor(journal))
    dispatcher.statusReport = { json in json ? "{}" : "status" }
    clockBox = { [unowned self] in clock }
    storage.clock = { [unowned self] in clock }
    post(.kiosk(.available(dispatcher.availableModes, at: clock)))
  }

  func ms(_ value: Int64) -> Instant { Instant(nanoseconds: value * 1_000_000) }

  func post(_ event: ServiceEvent) { dispatcher.post(event) }

  /// A clean press and release at `time` (ms), with the ticks the loop's timer would give.
  func click(_ role: ButtonRole, at time: Int64, hold: Int64 = 100) {
    clock = ms(time)
    post(.kiosk(.edge(role, .pressed, at: ms(time))))
    clock = ms(time + 5)
    post(.kiosk(.tick(ms(time + 5))))
    clock = ms(time + hold)
    post(.kiosk(.edge(role, .released, at: ms(time + hold))))
    clock = ms(time + hold + 30)
    post(.kiosk(.tick(ms(time + hold + 30))))
  }

  func frame(_ sequence: UInt32, at time: Int64) -> FrameInfo {
    clock = ms(time)
    let frame = FrameInfo(sequence: sequence, timestamp: ms(time))
    post(.cameraFrame(frame))
    return frame
  }

  var screenShown: Screen { dispatcher.kiosk.screen }
}

final class FakeCamera: CameraDriver {
  let journal: Journal
  init(_ journal: Journal) { self.journal = journal }
  func nextCamera() { journal.note("camera next") }
  func zoom(_ change: ZoomChange) { journal.note("camera zoom \(change.rawValue)") }
  func nodeAppeared(directory: String, name: String) { journal.note("camera node \(directory)/\(name)") }
}

final class FakeDisplay: DisplayDriver {
  let journal: Journal
  init(_ journal: Journal) { self.journal = journal }
  func nodeAppeared(name: String) { journal.note("display node \(name)") }
}

final class FakeScreen: ScreenDriver {
  let journal: Journal
  var shown: [Screen] = []
  var frames: [FrameInfo] = []
  init(_ journal: Journal) { self.journal = journal }
  func show(_ screen: Screen) {
    shown.append(screen)
    journal.note("show \(describe(screen))")
  }
  func showFrame(_ frame: FrameInfo) { frames.append(frame) }
  func streamChanged() { journal.note("screen stream changed") }
  func displayChanged() { journal.note("screen display changed") }
  func flipDone() {}
  func drawn(_ outcome: PreviewPipeline.Outcome) { journal.note("screen drawn") }
  func keepPhotoCheck(name: String, picture: XRGBImage) { journal.note("screen review \(name)") }
  var framesShown: Int { frames.count }
  var expectsFrames: Bool { true }
}

final class FakePlayer: RollPlayerDriver {
  let journal: Journal
  let post: (ServiceEvent) -> Void
  init(_ journal: Journal, post: @escaping (ServiceEvent) -> Void) {
    self.journal = journal
    self.post = post
  }
  func delete(_ name: String) { journal.note("player delete \(name)") }
  func relist() { journal.note("player relist") }
  func playbackFrame(_ frame: PlaybackFrame) { journal.note("player frame \(frame.number)") }
  func listed(_ entries: [RollEntry]) { post(.kiosk(.roll(entries, at: Instant(nanoseconds: 0)))) }
  func deleted(_ name: String) { journal.note("player deleted \(name)") }
  func viewed(_ item: ViewedItem) {}
  func viewFailed(path: String, reason: String) {}
  func show(_ screen: Screen) {}
  func displayChanged() {}
}

final class FakePanel: PanelDriver {
  let journal: Journal
  /// Edges the kernel "already has": handed over at the next `readPending`.
  var pending: [Event] = []
  init(_ journal: Journal) { self.journal = journal }
  func light(_ output: Output, _ on: Bool) { journal.note("light \(output.rawValue) \(on ? "on" : "off")") }
  func readPending() -> [Event] {
    defer { pending = [] }
    return pending
  }
  func nodeAppeared(name: String) {}
  func recordingChanged(_ recording: Bool) { journal.note("panel recording \(recording)") }
}

final class FakeStills: StillDriver {
  let journal: Journal
  let post: (ServiceEvent) -> Void
  /// What `save` posts at once, as the real writer does when the frame has left the ring.
  var failAtOnce: String?
  var saves: [(FrameInfo, Instant)] = []
  init(_ journal: Journal, post: @escaping (ServiceEvent) -> Void) {
    self.journal = journal
    self.post = post
  }
  func save(_ frame: FrameInfo, pressedAt: Instant) {
    journal.note("stills save \(frame.sequence)")
    saves.append((frame, pressedAt))
    if let failAtOnce { post(.stillFailed(failAtOnce)) }
  }
  func discard(_ name: String) { journal.note("stills discard \(name)") }
  func saved(_ item: RollItem, _ frame: FrameInfo, pressedAt: Instant) { journal.note("stills saved \(item.relativePath)") }
  func failed() { journal.note("stills failed") }
}

final class FakeMovie: MovieDriver {
  let journal: Journal
  let post: (ServiceEvent) -> Void
  var recorded: [FrameInfo] = []
  private(set) var isRecording = false
  init(_ journal: Journal, post: @escaping (ServiceEvent) -> Void) {
    self.journal = journal
    self.post = post
  }
  func start(at time: Instant) {
    isRecording = true
    journal.note("movie start")
  }
  func record(_ frame: FrameInfo) { recorded.append(frame) }
  func paceFrame(_ frame: FrameInfo, previewShown: Int, previewLive: Bool) {}
  func stop(at time: Instant) {
    guard isRecording else { return }
    isRecording = false
    journal.note("movie stop")
  }
  func saved(_ movie: MovieSummary) { journal.note("movie saved") }
  func failed() { journal.note("movie failed") }
  func storageReturned() { journal.note("movie storage returned") }
}

final class FakeStorage: StorageDriver {
  let journal: Journal
  /// The rig's clock: a timed check is stamped with it, as the real one is with now().
  var clock: () -> Instant = { Instant(nanoseconds: 0) }
  var full = false
  var present = true
  /// The mount table's changes, as the real monitor counts them: a card put back adds one.
  var mounts = 0
  var checks: [Instant?] = []
  init(_ journal: Journal) { self.journal = journal }
  func check(at press: Instant?) -> [Event] {
    checks.append(press)
    let time = press ?? clock()
    return [
      .rollStorage(available: present, mounts: mounts, detail: "fake", at: time),
      .storage(full: full, detail: full ? "0 MiB free" : "plenty", at: time),
    ]
  }
  func stillPublished(_ relativePath: String) { journal.note("storage counts \(relativePath)") }
  func recordingChanged(_ recording: Bool) {}
}

final class FakeControl: ControlDriver {
  let journal: Journal
  var replies: [Int: String] = [:]
  init(_ journal: Journal) { self.journal = journal }
  func reply(to client: Int, _ line: String) {
    replies[client] = line
    journal.note("reply \(client) \(line)")
  }
}

final class FakeSupervisor: SupervisorDriver {
  let journal: Journal
  init(_ journal: Journal) { self.journal = journal }
  func frameArrived(previewShown: Bool, previewExpected: Bool) {}
  func cameraUnavailable(_ reason: String) { journal.note("supervisor camera unavailable") }
}

extension RollItem {
  static func still(_ file: Int) -> RollItem {
    RollItem(
      number: RollNumber(folder: 100, file: file)!, kind: .still,
      relativePath: "DCIM/100KIOSK/IMG_\(String(repeating: "0", count: 4 - String(file).count))\(file).JPG")
  }
}
