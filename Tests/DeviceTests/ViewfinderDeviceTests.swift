import Foundation
import Testing

/// The viewfinder while a movie records: the person recording is watching themselves on it.
extension BoardDeviceTests {
  struct ViewfinderRates {
    var idle: Double
    var recording: Double
    /// Frames in the movie by ffprobe, dropped by its record, and the camera's frames between the two shutter
    /// commands by `status` (received, and missing by the driver's sequence numbers).
    var frames: Int
    var dropped: Int
    var cameraFrames: Int
    /// By the guest's kernel: the cores the board left idle while the preview ran alone, and the cores the
    /// movie's threads would need for every one of the camera's frames (their CPU over ffprobe's frames).
    var spareIdle: Double
    var movieAtCameraRate: Double
    var figures: String
  }

  /// The guest kernel's count of its cores, of the time they were busy, of its uptime, and of the CPU time of
  /// the service's movie threads (`kioskcam.movie-…`), all in seconds: one shell and one awk, so that reading
  /// it costs the window little. The task files go through cat: a thread that ends between the shell's glob and
  /// awk's open would end mawk (a file it cannot open is fatal to it) with nothing printed.
  struct GuestCPU {
    var cores: Int
    var busy: Double
    var uptime: Double
    var movie: Double

    static func now(config: String) throws -> GuestCPU {
      let read = try Board.run(
        "pid=\(Board.servicePID(config: config)); cat /proc/uptime; grep -c '^cpu[0-9]' /proc/stat; head -1 /proc/stat; "
          + "cat /proc/$pid/task/*/stat 2>/dev/null | awk '$2 ~ /^[(]kioskcam[.]movie-/ { t += $14 + $15 } END { print t + 0 }'")
      let lines = read.stdout.split(separator: "\n").map { $0.split(separator: " ") }
      guard read.status == 0, lines.count == 4, let uptime = lines[0].first.flatMap({ Double($0) }),
        let cores = Int(lines[1].first ?? ""), lines[2].first == "cpu", let movie = Double(lines[3].first ?? "")
      else { throw BoardFailure("the guest's CPU: \(read.stdout)\(read.stderr)") }
      // user, nice, system, irq, softirq and steal; not idle or iowait (the kernel's USER_HZ is 100).
      let busy = [1, 2, 3, 6, 7, 8].compactMap { lines[2].count > $0 ? Double(lines[2][$0]) : nil }.reduce(0, +)
      return GuestCPU(cores: cores, busy: busy / 100, uptime: uptime, movie: movie / 100)
    }

    /// The cores left idle from `self` to `later`.
    func spare(until later: GuestCPU) -> Double {
      Double(cores) - (later.busy - busy) / max(0.001, later.uptime - uptime)
    }
  }

  /// The preview's rate idle and while a movie records (`status` counters), the movie's frames and drops, as the
  /// board runs (6 s a window) or under a cgroup `cpu.max` share. There the idle preview is itself short of CPU
  /// and its rate moves by a tenth from one window to the next (24.6 and 27.4 a second in one run): the ratio
  /// is printed, not asserted, so one 6 s idle window serves, and the recording window is 12 s, three of the
  /// paced movie's frames.
  func viewfinderRates(_ name: String, roll: String, share: Double?) throws -> ViewfinderRates {
    let config = "\(Board.share!)/\(name).conf"
    var throttled = false
    if let share {
      try Board.throttle(config: config, share: share)
      throttled = true
      Thread.sleep(forTimeInterval: 2)
    }
    defer { if throttled { _ = try? Board.unthrottle(config: config) } }
    let window = 6.0
    let idleStart = try GuestCPU.now(config: config)
    let idle = try rates(over: window)
    let spareIdle = idleStart.spare(until: try GuestCPU.now(config: config))
    let log = try Board.logs(name)
    let movies = Card.movies(in: log).count
    let firstFrames = { (log: String) in log.split(separator: "\n").filter { $0.contains("movie first frame") }.count }
    let started = firstFrames(log)
    #expect(try Board.control("mode movie").status == 0)
    let before = try Counters.now()
    #expect(try Board.control("shutter").status == 0)
    try Board.waitOnShare("the first frame") { firstFrames(try Board.logs(name)) > started }
    // Under the quota the movie takes a frame every 4 s: its window spans three of them, where the test asks
    // for two.
    let recording = try rates(over: share == nil ? window : 12)
    let movieCPU = try GuestCPU.now(config: config).movie
    #expect(try Board.control("shutter").status == 0)
    let after = try Counters.now()
    try Board.waitOnShare("the movie", seconds: 300) { Card.movies(in: try Board.logs(name)).count > movies }
    let file = try #require(Card.movies(in: try Board.logs(name)).last)
    let probed = try probeMovie("\(roll)/\(file)")
    let dropped = try #require(try movieRecord(in: roll, file)["droppedFrames"] as? Int)
    #expect(try Board.control("mode still").status == 0)
    let pace = try Board.logs(name).split(separator: "\n").dropFirst(log.split(separator: "\n").count)
      .filter { $0.contains("movie pace: ") }.map { $0.replacingOccurrences(of: "kioskcam: movie pace: ", with: "") }
    let cameraFrames = after.received - before.received + after.missing - before.missing
    let movieAtCameraRate = movieCPU / Double(max(1, probed.frames)) * recording.received
    let figures = String(
      format: "%@: idle %.1f/s shown of %.1f/s received; recording %.1f/s shown of %.1f/s (%.0f%% of idle); "
        + "%@ %d frames (ffprobe), %d dropped, of the camera's %d; the board idle had %.2f of %d cores spare, "
        + "the movie at the camera's rate needs %.2f (%.1f ms a frame); pace %@",
      share.map { String(format: "cpu.max %.0f%%", $0 * 100) } ?? "unthrottled", idle.shown, idle.received,
      recording.shown, recording.received, 100 * recording.shown / max(idle.shown, 0.001), file, probed.frames, dropped,
      cameraFrames, spareIdle, idleStart.cores, movieAtCameraRate, movieCPU / Double(max(1, probed.frames)) * 1000,
      pace.joined(separator: "; "))
    return ViewfinderRates(
      idle: idle.shown, recording: recording.shown, frames: probed.frames, dropped: dropped, cameraFrames: cameraFrames,
      spareIdle: spareIdle, movieAtCameraRate: movieAtCameraRate, figures: figures)
  }

  /// vivid's 640x360 YUYV at 30 fps and a movie at the camera's full rate onto the share, Motion-JPEG and H.264:
  /// the viewfinder keeps at least 90% of its idle rate while recording as the board runs, where the board has
  /// the CPU for both: by the guest kernel's counts, the movie's threads need for all the camera's frames at
  /// most three quarters of the cores the idle board left spare. Where it has not (a slow host), that run is
  /// judged as the quota's is, and says so. Under the Pi-class
  /// budget (cpu.max, 27% of each core: make bench's Pi fraction) a quota stops the whole service once it is
  /// spent, whatever its threads' priorities, so the movie takes only the frames the CPU left by the preview
  /// pays for (`RecordingPace`, which learns a movie frame's cost in the first, unthrottled recording; its
  /// rules are RecordingPaceTests'): there the test asserts the movie's frames and drops against the camera's,
  /// and at least two frames. The preview's ratio there is printed, not asserted: short of CPU, its
  /// rate moves by more than the tenth a bound could allow (two whole make test runs gave 81% and 87%, the
  /// same test alone 105% and 108%, with one binary). Every frame the movie leaves is counted as dropped, so
  /// that its frames and its drops are the camera's frames.
  @Test(arguments: ["mjpeg", "h264"])
  func theViewfinderKeepsItsRateWhileAMovieRecordsAtTheCamerasRate(codec: String) throws {
    let name = "viewfinder\(codec)"
    let (config, roll) = try movieConfig(name, codec: codec, frameRate: 30)
    try Board.withService(name, config: config) {
      Thread.sleep(forTimeInterval: 2)
      for share in [nil, 2 * 0.27] {
        let rates = try viewfinderRates(name, roll: roll, share: share)
        print("viewfinder \(codec): \(rates.figures)")
        // 90% is the promise where the board has the CPU for the movie beside the preview. Where it has not (the
        // emulated board on a slow host: idle, the preview left 0.1 of its 2 cores spare, and a 640x360 movie
        // frame took 36-41 ms, over a core at 30 a second) it is the quota's case below without the quota.
        if share == nil && rates.movieAtCameraRate <= 0.75 * rates.spareIdle {
          #expect(rates.recording >= 0.9 * rates.idle, "\(rates.figures)")
        } else if share == nil {
          print("viewfinder \(codec): the board had not the CPU for the movie at the camera's rate beside the preview: its ratio is printed, not asserted")
        }
        // Each shutter command's round trip may take or leave a frame either side, and a frame or two in a
        // hundred may fall between the counters' reads and the presses.
        #expect(abs(rates.frames + rates.dropped - rates.cameraFrames) <= 4 + rates.cameraFrames / 50, "\(rates.figures)")
        // Under the quota the idle preview spends it all, and the movie takes its slowest: a frame every 4 s.
        #expect(rates.frames >= (share == nil ? 5 : 2), "\(rates.figures)")
      }
    }
  }
}
