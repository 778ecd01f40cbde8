import CameraRoll
import Capture
import Imaging
import JPEGCodec
import KioskCore
import Preview

// The drivers as the dispatcher sees them: each carries out one kind of action and posts what happens.
// Small protocols, so that the wiring (event, actions, drivers, events) is tested with fakes as well as on
// the board.

/// The camera session: opens, cycles, retries; keeps the ring of recent frames; steps the zoom.
protocol CameraDriver: AnyObject {
  /// `.nextCamera`.
  func nextCamera()
  /// `.zoom`, once the gate says zoom is on.
  func zoom(_ change: ZoomChange)
  func nodeAppeared(directory: String, name: String)
}

/// The screen sink, the screen's one owner: the screen the kiosk asks for, live frames under the overlay,
/// messages, the photo check, and review's pictures from the roll player.
protocol ScreenDriver: AnyObject {
  /// `.show`.
  func show(_ screen: Screen)
  func showFrame(_ frame: FrameInfo)
  func streamChanged()
  func displayChanged()
  func flipDone()
  /// A worker's picture, drawn or not.
  func drawn(_ outcome: PreviewPipeline.Outcome)
  func keepPhotoCheck(name: String, picture: XRGBImage)
  /// Frames that reached the display, and whether the screen wants the live picture now: the watchdog's rule.
  var framesShown: Int { get }
  var expectsFrames: Bool { get }
}

/// The display session: the card, let go and taken back.
protocol DisplayDriver: AnyObject {
  func nodeAppeared(name: String)
}

/// Where review's pictures go: the screen sink, which draws them off the loop and flips them.
protocol ReviewScreen: AnyObject {
  /// The panel's size, which review decodes for; nil without a display.
  var size: (width: Int, height: Int)? { get }
  /// The picture of the item on screen (or of the movie's frame due), under its words.
  func showReview(_ picture: FittedPicture, of view: ReviewView, title: String, date: String)
}

/// The roll player: review mode's items, a movie playing, the roll listed, deletes.
protocol RollPlayerDriver: AnyObject {
  /// `.show`: review's items are read when review is on screen, and let go when it is not.
  func show(_ screen: Screen)
  func displayChanged()
  /// `.deleteItem`.
  func delete(_ name: String)
  /// Lists the roll again (behind any save or delete already queued on the writer).
  func relist()
  func listed(_ entries: [RollEntry])
  func deleted(_ name: String)
  func viewed(_ item: ViewedItem)
  func viewFailed(path: String, reason: String)
  func playbackFrame(_ frame: PlaybackFrame)
}

/// The button panel: button lines in, lamps out, lines that come and go.
protocol PanelDriver: AnyObject {
  /// `.light`.
  func light(_ output: Output, _ on: Bool)
  /// Edges the kernel has already timestamped and the loop has not read: handled before anything else.
  func readPending() -> [Event]
  func nodeAppeared(name: String)
  func recordingChanged(_ recording: Bool)
}

/// The still writer: encode, EXIF, publish, off the loop.
protocol StillDriver: AnyObject {
  /// `.saveStill`.
  func save(_ frame: FrameInfo, pressedAt: Instant)
  /// `.discardStill`.
  func discard(_ name: String)
  func saved(_ item: RollItem, _ frame: FrameInfo, pressedAt: Instant)
  func failed()
}

/// The movie sink: the recorder between the kiosk's start and stop.
protocol MovieDriver: AnyObject {
  /// `.startMovie`, `.recordFrame`, `.stopMovie`.
  func start(at time: Instant)
  func record(_ frame: FrameInfo)
  func stop(at time: Instant)
  /// Every camera frame, with the preview's frames shown so far and whether the live picture is on screen:
  /// how fast a movie records is weighed against them (`RecordingPace`).
  func paceFrame(_ frame: FrameInfo, previewShown: Int, previewLive: Bool)
  func saved(_ movie: MovieSummary)
  func failed()
  /// `.recoverRoll`: publishes what the storage's loss left on it.
  func storageReturned()
  var isRecording: Bool { get }
}

/// The storage monitor: is the roll's storage there, and how much room is left.
protocol StorageDriver: AnyObject {
  /// The kiosk's storage events for now, or for a press at its own time.
  func check(at press: Instant?) -> [Event]
  func stillPublished(_ relativePath: String)
  func recordingChanged(_ recording: Bool)
  /// How many times the mount table has changed since the start: a card failed on one mount is the roll
  /// again on the next (the kiosk's decision).
  var mounts: Int { get }
}

/// The control server: one reply per request.
protocol ControlDriver: AnyObject {
  /// `.reply`.
  func reply(to client: Int, _ line: String)
}

/// sd_notify, by the pure `Supervision` rule.
protocol SupervisorDriver: AnyObject {
  func frameArrived(previewShown: Bool, previewExpected: Bool)
  func cameraUnavailable(_ reason: String)
}

struct Drivers {
  var camera: any CameraDriver
  var display: any DisplayDriver
  var screen: any ScreenDriver
  var player: any RollPlayerDriver
  var panel: any PanelDriver
  var stills: any StillDriver
  var movie: any MovieDriver
  var storage: any StorageDriver
  var control: any ControlDriver
  var supervisor: any SupervisorDriver
}
