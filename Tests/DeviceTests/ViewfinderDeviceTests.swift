import Foundation
import Testing

/// The viewfinder while a movie records: the person recording is watching themselves on it.
extension BoardDeviceTests {
  /// The preview's rate idle and while a movie records (`status` counters, 6 s each), the movie's frames and
  /// drops, as the board runs or under a cgroup `cpu.max` share.
  func viewfinderRates(_ name: String, share: Double?) throws -> (idle: Double, recording: Double, figures: String) {
    var throttled = false
    if let share {
      try Board.throttle(config: "\(Board.share!)/\(name).conf", share: share)
      throttled = true
      Thread.sleep(forTimeInterval: 2)
    }
    defer { if throttled { _ = try? Board.unthrottle(config: "\(Board.share!)/\(name).conf") } }
    let idle = try rates(over: 6)
    let movies = Card.movies(in: try Board.logs(name)).count
    _ = try startRecording(name)
    try Board.waitFor("the first frame") {
      try Board.logs(name).split(separator: "\n").filter { $0.contains("movie first frame") }.count > movies
    }
    let recording = try rates(over: 6)
    #expect(try Board.control("shutter").status == 0)
    try Board.waitFor("the movie", seconds: 300) { Card.movies(in: try Board.logs(name)).count > movies }
    let movie = try Board.logs(name).split(separator: "\n").last { $0.hasPrefix("kioskcam: movie DCIM/") && $0.contains(" frames ") } ?? ""
    #expect(try Board.control("mode still").status == 0)
    let figures = String(
      format: "%@: idle %.1f/s shown of %.1f/s received; recording %.1f/s shown of %.1f/s (%.0f%% of idle); %@",
      share.map { String(format: "cpu.max %.0f%%", $0 * 100) } ?? "unthrottled", idle.shown, idle.received,
      recording.shown, recording.received, 100 * recording.shown / max(idle.shown, 0.001),
      String(movie.dropFirst("kioskcam: movie ".count)))
    return (idle.shown, recording.shown, figures)
  }

  /// vivid's 640x360 YUYV at 30 fps and a movie at the camera's full rate onto the share, Motion-JPEG and H.264:
  /// the viewfinder keeps at least 90% of its idle rate while recording, the recording's encoders giving way to
  /// it (`ThreadPriority.yielding`) and what they cannot take dropped and counted. Under the Pi-class budget
  /// (cpu.max, 27% of each core: make bench's Pi fraction) the figures are printed, not held: a quota stops
  /// the whole service once it is spent, whatever its threads' priorities, so the encoders' share of it is
  /// the preview's loss (docs/performance.md).
  @Test(arguments: ["mjpeg", "h264"])
  func theViewfinderKeepsItsRateWhileAMovieRecordsAtTheCamerasRate(codec: String) throws {
    let name = "viewfinder\(codec)"
    let (config, _) = try movieConfig(name, codec: codec, frameRate: 30)
    try Board.withService(name, config: config) {
      Thread.sleep(forTimeInterval: 2)
      let board = try viewfinderRates(name, share: nil)
      print("viewfinder \(codec): \(board.figures)")
      #expect(board.recording >= 0.9 * board.idle, "\(board.figures)")
      print("viewfinder \(codec): \(try viewfinderRates(name, share: 2 * 0.27).figures)")
    }
  }
}
