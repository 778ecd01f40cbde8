#if canImport(Glibc)
  import Glibc
#endif
import Camera
import KioskCore
import LinuxIO

/// movie-camera by the rate a camera delivers rather than the one it advertises, through either backend: a
/// camera that passes on paper streams at `[movie] size` for `measureWindow` from its second frame (at most
/// `measureLimit`), asked for `[camera] frame-rate` (the rate the service streams at, which movies are recorded
/// from), and its frames' timestamps must show `[movie] frame-rate` (within `MeasuredRate.tolerance`).
/// `measure: false` is for a camera the service already streams from (a re-probe after the camera came back),
/// which cannot be opened a second time.
extension CapabilityProbe {
  static let measureWindow = Duration.seconds(2)
  /// A camera that has not sent its second frame by then is judged on what came.
  static let measureLimit = measureWindow * 4

  /// `name`: the camera, its format and size, as the evidence begins. `open`: the camera at `[movie] size`.
  static func measured(
    _ advertised: ProbeResult, name: String, _ config: Config, open: () throws(CameraError) -> any CaptureStream
  ) -> ProbeResult {
    let wanted = config.movie.frameRate
    do {
      let stream = try open()
      guard stream.format.width == config.movie.size.width, stream.format.height == config.movie.size.height else {
        return .fail(.movieCamera, "\(name) asked, \(stream.format.width)x\(stream.format.height) granted")
      }
      let (stamps, end) = try stream.sampleTimestamps(for: measureWindow, atMost: measureLimit)
      guard let rate = MeasuredRate(timestamps: stamps, end: end) else {
        return .fail(.movieCamera, "\(name): \(stamps.count) frames in at most \(measureLimit), \(wanted) fps wanted")
      }
      let seconds = (Double(rate.span.nanosecondsClamped) / 1e7).rounded() / 100
      let evidence = "\(name): \(rateText(rate.framesPerSecond)) fps measured over \(seconds) s, \(wanted) fps wanted"
      return rate.suffices(for: wanted) ? .pass(.movieCamera, evidence) : .fail(.movieCamera, evidence)
    } catch .busy(let reason) {
      // `kioskcam probe` beside a running kiosk: the paper check is all that can be had.
      return .pass(.movieCamera, "\(advertised.evidence); not measured: \(reason)")
    } catch {
      return .fail(.movieCamera, "\(name): \(error)")
    }
  }
}

extension CaptureStream {
  /// Streams until `window` of wall time has passed since the second frame came (at most `limit` in all) and
  /// returns the timestamps of the frames that came, each buffer given straight back, and when it stopped on
  /// CLOCK_MONOTONIC (the frames' clock, V4L2's and libcamera's pipelines' alike): what the camera delivers.
  /// The stream is stopped after.
  ///
  /// The window runs from the second frame, not from the stream's start, because a rate is judged from the
  /// second frame on (drivers often hold the first): a window from the start leaves a camera whose second frame
  /// comes late a span too short to tell its rate from chance (vivid dropping 80% of its frames at random
  /// measured 9 fps and more over such spans now and then, and passed as a 10 fps camera).
  func sampleTimestamps(for window: Duration, atMost limit: Duration) throws(CameraError) -> (
    stamps: [Instant], end: Instant
  ) {
    try start()
    defer { stop() }
    let clock = ContinuousClock()
    let started = clock.now
    var end = started + limit
    var stamps: [Instant] = []
    while clock.now < end {
      let left = max(1, Int32((end - clock.now).nanosecondsClamped / 1_000_000))
      var ready = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
      guard poll(&ready, 1, left) > 0 else { continue }
      if ready.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { throw .unplugged("\(path): device gone (poll)") }
      // One buffer per wake-up: asking V4L2 again with none ready makes libv4l2 print an error for EAGAIN.
      if let buffer = try dequeue() {
        stamps.append(buffer.info.timestamp)
        if stamps.count == 2 { end = min(clock.now + window, started + limit) }
        try requeue(buffer)
      }
    }
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return (stamps, Instant(seconds: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec)))
  }
}
