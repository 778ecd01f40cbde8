#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import Capture
import Dispatch
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles

/// Review mode: the item the kiosk selected, read and decoded off the loop the first time and handed to the
/// screen from memory after that; a movie played at its own frame times, each frame decoded off the loop and
/// handed over when it is due. The screen sink draws and flips them. Also keeps the kiosk's listing of the
/// roll current, and carries out review's deletes.
final class RollPlayer: RollPlayerDriver {
  private let config: Config
  private let screen: any ReviewScreen
  private let roll: CameraRoll?
  /// The roll's writer, shared with the still writer: a listing or delete runs behind the saves queued there.
  private let writer: DispatchQueue
  private let viewer = DispatchQueue(label: "kioskcam.viewer")
  private let results: Mailbox<ServiceEvent>
  private let post: (ServiceEvent) -> Void
  /// The view on screen; nil when review is not.
  private var view: ReviewView?
  /// The item review mode shows (decoded), and the one being read for it.
  private var shown: ViewedItem?
  private var loading: String?
  private var playback: Playback?
  private var playbacks = 0
  private var playbackTimer: LoopTimer?
  private var listTimer: LoopTimer?
  /// The listing the kiosk last got, so an unchanged roll is not sent again every few seconds.
  private var listed: [RollEntry]?
  /// Items being deleted on the writer: a listing taken meanwhile must not bring them back.
  private var deleting: Set<String> = []

  init(
    config: Config, screen: any ReviewScreen, roll: CameraRoll?, writer: DispatchQueue, results: Mailbox<ServiceEvent>,
    loop: EventLoop, post: @escaping (ServiceEvent) -> Void
  ) throws(SystemCallError) {
    self.config = config
    self.screen = screen
    self.roll = roll
    self.writer = writer
    self.results = results
    self.post = post
    playbackTimer = try LoopTimer(loop: loop) { [unowned self] in playbackTick() }
    // Items copied in or deleted over SSH reach review mode too.
    listTimer = try LoopTimer(loop: loop) { [unowned self] in
      relist()
      try? listTimer?.arm(after: Intervals.rollListing.timerNanoseconds)
    }
    try listTimer?.arm(after: Intervals.rollListing.timerNanoseconds)
  }

  // MARK: The listing

  /// The first listing, at start, is immediate, so that review is offered from the first press.
  func listNow() {
    guard let roll else { return }
    listed(RollViewer.entries(root: roll.root))
  }

  /// Lists the roll on the writer (a folder on slow or network storage never stalls the loop).
  func relist() {
    guard let roll else { return }
    let results = results
    writer.async { results.post(.rollListed(RollViewer.entries(root: roll.root))) }
  }

  /// Tells the kiosk what the roll holds now, when that changed.
  func listed(_ found: [RollEntry]) {
    let entries = found.filter { !deleting.contains($0.path) }.sorted { ($0.number, $0.path) < ($1.number, $1.path) }
    guard entries != listed else { return }
    listed = entries
    post(.kiosk(.roll(entries, at: now())))
  }

  func delete(_ name: String) {
    guard let roll else { return }
    if shown?.path == name { shown = nil }
    deleting.insert(name)
    let results = results
    writer.async {
      do {
        try roll.delete(name)
      } catch {
        log("delete \(name): \(error)")
        results.reportCardFailure(error, during: .delete)
      }
      results.post(.rollChanged(deleted: name))
    }
  }

  func deleted(_ name: String) {
    deleting.remove(name)
    relist()
  }

  // MARK: Showing

  /// `.show`: review's screen, or another one.
  func show(_ screen: Screen) {
    guard case .reviewing(let view) = screen else { return leave() }
    review(view)
  }

  /// A display opened (perhaps another, of another size): the item is decoded again for it.
  func displayChanged() {
    guard let view else { return }
    stopPlayback()
    shown = nil
    loading = nil
    review(view)
  }

  /// The screen is no longer review's.
  private func leave() {
    view = nil
    stopPlayback()
    shown = nil
  }

  /// Shows the item the kiosk selected: read and decoded on the viewer queue the first time, handed over
  /// from memory after that (a new position, the delete question); a movie plays from the playback timer.
  private func review(_ view: ReviewView) {
    self.view = view
    if let playback, !view.playing || playback.path != view.item.path { stopPlayback() }
    guard let size = screen.size, let roll else { return }
    guard shown?.path == view.item.path else {
      guard loading != view.item.path else { return }
      loading = view.item.path
      let (entry, results, width, height) = (view.item, results, size.width, size.height)
      let orientation = PreviewOrientation(rotation: config.display.rotation, mirror: false)
      let threads = ScreenSink.workers(for: config)
      viewer.async {
        do {
          let item = try RollViewer.load(
            entry, root: roll.root, screenWidth: width, screenHeight: height, orientation: orientation, threads: threads
          ) { results.post(.viewed($0)) }
          results.post(.viewed(item))
        } catch {
          results.post(.viewFailed(path: entry.path, reason: "\(error)"))
        }
      }
      return
    }
    if view.playing, playback == nil, let movie = shown?.movie {
      playbacks += 1
      playback = Playback(
        id: playbacks, path: view.item.path, index: movie, file: "\(roll.root)/\(view.item.path)", start: monotonicNanoseconds())
      log("playing \(view.item.path): \(movie.samples.count) frames, \(milliseconds(.nanoseconds(movie.duration))) ms")
      playbackTick()
      return
    }
    if playback == nil { drawItem() }
  }

  func viewed(_ item: ViewedItem) {
    guard item.full else {
      // The thumbnail, unless the photo itself is already on screen.
      guard let view, view.item.path == item.path, shown?.path != item.path else { return }
      shown = item
      review(view)
      return
    }
    if loading == item.path { loading = nil }
    let picture = item.fitted
    log(
      "review \(item.path): \(picture.sourceWidth)x\(picture.sourceHeight) decoded at 1/\(picture.picture.denominator)"
        + " to \(picture.picture.width)x\(picture.picture.height), shown at \(picture.scaler.target)")
    guard let view, view.item.path == item.path else { return }
    shown = item
    review(view)
  }

  func viewFailed(path: String, reason: String) {
    if loading == path { loading = nil }
    log("review: \(path) not shown: \(reason)")
  }

  private func drawItem() {
    guard let view, let shown, shown.path == view.item.path, playback == nil else { return }
    hand(shown, view, frame: nil)
  }

  /// The item's picture (or a movie frame) to the screen, with its words.
  private func hand(_ item: ViewedItem, _ view: ReviewView, frame: (FittedPicture, elapsed: Int64)?) {
    let name = String(item.path.split(separator: "/").last ?? "")
    var title = name
    if let movie = item.movie {
      title += frame.map { " \(RollViewer.length($0.elapsed)) / " } ?? " "
      title += RollViewer.length(movie.duration)
    }
    screen.showReview(frame?.0 ?? item.fitted, of: view, title: title, date: item.date)
  }

  /// Asks the viewer queue for the movie's frame due at this moment (skipping any it was too late for, one
  /// at a time; an H.264 movie behind the clock at most `Playback.mostDecodedAhead` frames on), then sleeps
  /// on the timer until the next one is due.
  private func playbackTick() {
    guard let playback, let size = screen.size, let item = shown, item.path == playback.path else { return }
    let samples = playback.index.samples
    let elapsed = monotonicNanoseconds() - playback.start
    guard elapsed < playback.index.duration else {
      stopPlayback()
      post(.kiosk(.playbackEnded(at: now())))
      return
    }
    var due = playback.shown < 0 ? 0 : playback.shown
    while due + 1 < samples.count, samples[due + 1].time <= elapsed { due += 1 }
    if (due != playback.shown || playback.shown < 0) && !playback.decoding {
      playback.decoding = true
      let number = Playback.next(due: due, shown: playback.shown, h264: playback.index.codec == "avc1")
      let (decoder, results, id) = (playback.decoder, results, playback.id)
      let (width, height) = (size.width, size.height)
      let orientation = PreviewOrientation(rotation: config.display.rotation, mirror: false)
      viewer.async {
        let picture = decoder.picture(number, screenWidth: width, screenHeight: height, orientation: orientation)
        results.post(.playbackFrame(PlaybackFrame(playback: id, number: number, picture: picture)))
      }
    }
    let next = due + 1 < samples.count ? samples[due + 1].time : playback.index.duration
    try? playbackTimer?.arm(after: max(1, next - (monotonicNanoseconds() - playback.start)))
  }

  /// A frame back from the viewer queue: shown if its playback is still the one on screen, and the next due
  /// one asked for.
  func playbackFrame(_ frame: PlaybackFrame) {
    guard let playback, playback.id == frame.playback else { return }
    playback.decoding = false
    switch frame.picture {
    case .success(let picture): show(frame.number, picture, of: playback)
    case .failure(let error):
      log("review: frame \(frame.number) of \(playback.path): \(error)")
      playback.shown = frame.number
    }
    playbackTick()
  }

  private func show(_ number: Int, _ picture: FittedPicture, of playback: Playback) {
    guard let item = shown, item.path == playback.path, let view else { return }
    let elapsed = monotonicNanoseconds() - playback.start
    hand(item, view, frame: (picture, min(elapsed, playback.index.duration)))
    playback.shown = number
  }

  private func stopPlayback() {
    guard playback != nil else { return }
    playback = nil
    playbackTimer?.disarm()
  }
}
