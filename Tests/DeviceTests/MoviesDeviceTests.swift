import Foundation
import Testing

/// Movies on the board, from vivid's YUYV stream, checked on the host by ffprobe and ffmpeg. In the
/// serialized board suite: every test here holds the one camera.
extension BoardDeviceTests {
  /// ffprobe's codec, frame count and duration; ffmpeg's words while decoding every frame (none expected).
  func probeMovie(_ path: String) throws -> (codec: String, frames: Int, seconds: Double, ffmpeg: String) {
    let probe = try Board.host([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
      "stream=codec_name,nb_read_frames,duration", "-of", "default=noprint_wrappers=1", path,
    ])
    var fields: [String: String] = [:]
    for line in probe.stdout.split(separator: "\n") {
      let parts = line.split(separator: "=", maxSplits: 1)
      if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
    }
    let decode = try Board.host(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
    return (
      fields["codec_name"] ?? "", Int(fields["nb_read_frames"] ?? "") ?? -1, Double(fields["duration"] ?? "") ?? -1,
      probe.stderr + decode.stdout + decode.stderr
    )
  }

  /// The roll's record of `file` (its line of `.kioskcam-items.jsonl`, appended and fsynced after the log line).
  func movieRecord(in roll: String, _ file: String) throws -> [String: Any] {
    var record: [String: Any]?
    try Board.waitFor("the record of \(file)") {
      let lines = ((try? String(contentsOfFile: "\(roll)/.kioskcam-items.jsonl", encoding: .utf8)) ?? "").split(separator: "\n")
      record = lines.lazy.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        .first { $0["file"] as? String == file }
      return record != nil
    }
    return record!
  }

  /// `movieConfig` with the roll on a `megabytes` MiB tmpfs in the guest, keeping `reserve` MiB free; the
  /// caller unmounts the returned mount point.
  func movieConfigOnGuestTmpfs(_ name: String, megabytes: Int, reserve: Int) throws -> (config: String, mount: String) {
    let mount = "/tmp/kioskcam-\(name)"
    let made = try Board.run(
      "mkdir -p \(mount) && mount -t tmpfs -o size=\(megabytes)m kioskcam-\(name) \(mount) && mkdir \(mount)/roll")
    try #require(made.status == 0, "\(made.stderr)")
    let (config, _) = try movieConfig(name, edit: Board.guestRoll(name, at: "\(mount)/roll", reserve: reserve))
    return (config, mount)
  }

  /// Checked in the guest, which alone sees its tmpfs: `file` is the only item, nothing is left hidden, ffprobe
  /// counts the frames the service logged and ffmpeg decodes it without a word. The frame count.
  func expectOnlyMovie(_ service: String, _ file: String, in mount: String) throws -> Int {
    let listing = try Board.run("ls -A \(mount)/roll/DCIM/100KIOSK").stdout.split(separator: "\n").map(String.init)
    #expect(listing == [(file as NSString).lastPathComponent], "published, nothing hidden: \(listing)")
    let logged = try #require(try loggedMovie(service, file))
    let probe = try Board.run(
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,nb_read_frames -of csv=p=0 "
        + "\(mount)/roll/\(file) && ffmpeg -nostdin -v error -i \(mount)/roll/\(file) -f null -")
    #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,\(logged.frames)", "\(probe.stdout)")
    #expect(probe.stderr.isEmpty, "ffprobe/ffmpeg: \(probe.stderr)")
    return logged.frames
  }

  @Test func aMovieRecordedFromVividPlaysInFFmpeg() throws {
    let (config, roll) = try movieConfig("movie")
    try Board.withService("movie", config: config) {
      _ = try startRecording("movie")
      Thread.sleep(forTimeInterval: 3)
      #expect(try Board.control("shutter").status == 0)
      let file = "DCIM/100KIOSK/IMG_0001.MOV"
      try Board.waitFor(file) { try loggedMovie("movie", file) != nil }
      let logged = try #require(try loggedMovie("movie", file))
      let movie = try probeMovie("\(roll)/\(file)")
      #expect(movie.codec == "mjpeg")
      #expect(movie.frames == logged.frames, "every frame written is a frame ffprobe counts")
      #expect(movie.frames > 1)
      // The service's seconds come from vivid's buffer timestamps; the file must say the same within a frame.
      #expect(abs(movie.seconds - logged.seconds) <= 0.04 + 0.001, "ffprobe \(movie.seconds) s, log \(logged.seconds) s")
      #expect(movie.ffmpeg.isEmpty, "ffmpeg: \(movie.ffmpeg)")
      #expect(try hiddenFiles(in: roll).isEmpty, "no recording left hidden")
      // (The record is appended after the log line: waited for, not read at once.)
      let record = try movieRecord(in: roll, file)
      #expect(record["frames"] as? Int == logged.frames && record["mediaType"] as? String == "movie", "\(record)")

      // The same counter as stills: a photo after the movie is the next number.
      #expect(try Board.control("mode still").status == 0)
      try press("movie", expecting: "DCIM/100KIOSK/IMG_0002.JPG")
    }
  }

  /// Each video packet's presentation time and duration, in seconds, as ffprobe reads them.
  func packets(_ path: String) throws -> [(pts: Double, duration: Double)] {
    let probe = try Board.host([
      "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,duration_time",
      "-of", "csv=p=0", path,
    ])
    return probe.stdout.split(separator: "\n").compactMap { line in
      let fields = line.split(separator: ",").compactMap { Double($0) }
      return fields.count == 2 ? (fields[0], fields[1]) : nil
    }
  }

  /// The recording runs from the press for the maximum; the file from its first frame (vivid's timestamp, which
  /// the service logs) to the stop, except that its last frame lasts no longer than the frame before it
  /// (docs/movies.md). Held to the frame grid on ffprobe's packets: on the emulated board
  /// vivid's gaps reach a quarter of a second, so "the maximum within a frame" would be a bound on the board's
  /// speed, and the rule is what the product promises.
  @Test func aMovieStopsItselfAtTheMaximumDuration() throws {
    let (config, roll) = try movieConfig("moviemax", maximum: 3)
    try Board.withService("moviemax", config: config) {
      let pressed = try startRecording("moviemax")
      let file = "DCIM/100KIOSK/IMG_0001.MOV"
      try Board.waitFor(file) { try loggedMovie("moviemax", file) != nil }
      let log = try Board.logs("moviemax")
      #expect(log.contains("movie stopped at the maximum duration"))
      let firstLine = log.split(separator: "\n").first { $0.contains("kioskcam: movie first frame") }
      let first = try #require(firstLine?.split(separator: " ").last.flatMap { Double($0) })
      let movie = try probeMovie("\(roll)/\(file)")
      #expect(movie.codec == "mjpeg")
      #expect(movie.ffmpeg.isEmpty, "ffmpeg: \(movie.ffmpeg)")
      let timeline = try packets("\(roll)/\(file)")
      try #require(timeline.count >= 2, "\(timeline)")
      let (last, before) = (timeline[timeline.count - 1], timeline[timeline.count - 2])
      let stop = 3.0 - (first - pressed)
      // Times are on the grid of [camera] frame-rate (30 fps): the stop on the grid line at or below it. The
      // last frame lasts until then but no longer than the frame before it, and one step if the grid already
      // put it there (docs/movies.md).
      let (tick, grid) = (1.0 / 150, 1.0 / 30)
      let gridStop = (stop / grid + 1e-6).rounded(.down) * grid
      let end = last.pts + min(before.duration, gridStop > last.pts + tick ? gridStop - last.pts : grid)
      let ends = last.pts + last.duration
      #expect(abs(ends - end) <= tick, "ends at \(ends) s, the rule says \(end) s (stop \(stop) s): \(timeline)")
      #expect(abs(movie.seconds - ends) <= tick, "ffprobe's duration \(movie.seconds) s, its last packet ends at \(ends) s")
      // The last frame is a frame taken before the stop, put on the grid: at most half a step late, then one step.
      #expect(movie.seconds <= stop + grid / 2 + grid + tick, "never past the stop but by the last frame's step: \(movie.seconds) s")
      print("maximum-duration movie: \(movie.seconds) s, first frame \(first - pressed) s after the press, \(timeline.count) frames")
    }
  }

  /// Motion-JPEG, and H.264 with sound (100 ms beeps of 1 kHz each second played into snd-aloop: mostly
  /// silence, which AAC encodes cheaply; a steady tone is encoded slower than real time under TCG, 36 s for
  /// 20 s in an idle guest, and its CPU cost the pictures more than the second the test allows), whose
  /// recovered file keeps both streams and Chromium must play as well.
  @Test(arguments: ["mjpeg", "h264"])
  func aRecordingKilledWithSIGKILLIsRecoveredAtTheNextStart(codec: String) throws {
    let service = "moviekill-\(codec)"
    let (config, roll) = try movieConfig(service, codec: codec == "h264" ? "h264" : nil)
    if codec == "h264" {
      try #require(try Board.run("modprobe snd-aloop pcm_substreams=1").status == 0, "modprobe snd-aloop")
      // Rendered on the host into the share the guest sees, so the guest spends nothing on making it.
      let beeps = "\(Board.share!)/beeps.raw"
      let made = try Board.host([
        "/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
        "aevalsrc=if(lt(mod(t\\,1)\\,0.1)\\,0.5*sin(2*PI*1000*t)\\,0):s=48000:d=120", "-f", "s16le", "-ac", "1", beeps,
      ])
      try #require(made.status == 0, "ffmpeg: \(made.stderr)")
      try Board.spawn("tone", ["aplay", "-q", "-D", "hw:Loopback,1,0", "-f", "S16_LE", "-r", "48000", "-c", "1", "-t", "raw", beeps])
    }
    defer {
      if codec == "h264" {
        _ = try? Board.kill("tone", signal: "KILL")
        // The spawned pipeline is its own process group, killed whole; then the card can go.
        _ = try? Board.run("modprobe -r snd-aloop")
      }
    }
    let (start, firstSequence, uptime) = try Board.withService(service, config: config) {
      _ = try startRecording(service)
      Thread.sleep(forTimeInterval: 4)
      // The movie's time starts at its first frame's timestamp, which the service logs with its sequence.
      let firstFrame = try Board.logs(service).split(separator: "\n").first { $0.contains("kioskcam: movie first frame") }
      let words = firstFrame?.split(separator: " ") ?? []
      let start = try #require(words.last.flatMap { Double($0) })
      let sequence = try #require(words.count > 4 ? Int(words[4]) : nil, "\(firstFrame ?? "no first frame logged")")
      let uptime = try Board.run("cat /proc/uptime").stdout.split(separator: " ").first.flatMap { Double($0) }
      try Board.kill(service, signal: "KILL")
      return (start, sequence, uptime)
    }
    #expect(try hiddenFiles(in: roll).count == 1, "the interrupted recording is there, hidden")

    try Board.withService(service, config: config) {
      let file = "DCIM/100KIOSK/IMG_0001.\(codec == "h264" ? "MP4" : "MOV")"
      let logged = try #require(try loggedMovie(service, file))
      #expect(try Board.logs(service).contains("kioskcam: movie \(file) recovered"))
      #expect(try hiddenFiles(in: roll).isEmpty, "never left hidden")
      let movie = try probeMovie("\(roll)/\(file)")
      #expect(movie.codec == codec)
      if codec == "h264" {
        // Both streams kept to the last whole fragment; the sound never past the pictures (what the encoder
        // had not done yet is lost with the kill: on the emulated board the last run lost 0.2-4.7 s of it).
        let streams = try Board.host([
          "/usr/bin/ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,duration", "-of", "csv=p=0",
          "\(roll)/\(file)",
        ]).stdout.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
        #expect(streams.map { $0.prefix(2).joined(separator: ",") } == ["h264,video", "aac,audio"], "\(streams)")
        if streams.count == 2, let pictures = Double(streams[0].last ?? ""), let sound = Double(streams[1].last ?? "") {
          print("recovered after kill -9: pictures \(pictures) s, sound \(sound) s")
          #expect(sound <= pictures + 0.022 && sound >= 1, "sound \(sound) s, pictures \(pictures) s")
        }
        let played = try Board.host(["\(Board.repository)/board/virtual/play-movie.py", "\(roll)/\(file)"])
        let result = try JSONSerialization.jsonObject(with: Data(played.stdout.utf8)) as? [String: Any]
        #expect(result?["error"] == nil && result?["ended"] as? Bool == true, "chromium: \(played.stdout) \(played.stderr)")
        #expect(abs((result?["duration"] as? Double ?? -1) - movie.seconds) <= 0.1 + 0.001, "chromium's length, ffprobe's")
      }
      #expect(movie.frames == logged.frames)
      #expect(movie.ffmpeg.isEmpty, "ffmpeg: \(movie.ffmpeg)")
      // It plays up to within a second of the kill (by the guest's monotonic clock, which vivid stamps with).
      let killedAfter = try #require(uptime) - start
      print("\(codec) recording killed: recovered \(movie.seconds) s of \(killedAfter) s recorded by the guest's clock")
      #expect(movie.seconds >= killedAfter - 1.0, "recovered \(movie.seconds) s of \(killedAfter) s recorded")
      let records = try String(contentsOfFile: "\(roll)/.kioskcam-items.jsonl", encoding: .utf8)
      #expect(records.contains("\"recovered\":true"))
      if codec == "h264" { #expect(records.contains("\"audio\":\"aac\""), "\(records)") }
      // The start the recording wrote into its first fragment comes back with it: vivid's format, the first
      // frame's sequence number as the service logged it, its time to the millisecond.
      let record = try #require(
        records.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
          .first { $0["file"] as? String == file }, "\(records)")
      #expect(record["sourceFormat"] as? String == "YUYV" && record["frameSequence"] as? Int == firstSequence, "\(record)")
      if codec == "h264" { #expect((record["bitRate"] as? Int ?? 0) > 0, "the encoder's rate: \(record)") }
      let year = Calendar(identifier: .gregorian).component(.year, from: Date())
      let captured = record["captured"] as? String ?? ""
      #expect(captured.hasPrefix("\(year)-") && captured.count >= 23, "\(record)")
    }
  }

  @Test func theLowPresetRecordsHalfTheCamerasSize() throws {
    let (config, roll) = try movieConfig("movielow", quality: "low")
    try Board.withService("movielow", config: config) {
      _ = try startRecording("movielow")
      #expect(try Board.logs("movielow").contains("movie recording YUYV 640x360 as 320x180, Motion-JPEG, quality low"))
      Thread.sleep(forTimeInterval: 2)
      #expect(try Board.control("shutter").status == 0)
      let file = "DCIM/100KIOSK/IMG_0001.MOV"
      try Board.waitFor(file) { try loggedMovie("movielow", file) != nil }
      let size = try Board.host([
        "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
        "-of", "csv=p=0", "\(roll)/\(file)",
      ])
      #expect(size.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,320,180", "\(size.stdout)\(size.stderr)")
      #expect(try probeMovie("\(roll)/\(file)").ffmpeg.isEmpty)
    }
  }

  /// A 6 MiB file system with a 5 MiB reserve (vivid's bars compress to about 7 kB a frame): the recording
  /// stops by itself at the reserve, with room left to finish the file, and "Storage full" on screen; the
  /// movie plays and nothing is left hidden.
  @Test func aRecordingIntoASmallFileSystemStopsCleanlyAtTheReserve() throws {
    let (config, mount) = try movieConfigOnGuestTmpfs("moviesmall", megabytes: 6, reserve: 5)
    defer { _ = try? Board.run("umount \(mount)") }
    try Board.withService("moviesmall", config: config) {
      _ = try startRecording("moviesmall")
      let file = "DCIM/100KIOSK/IMG_0001.MOV"
      try Board.waitFor("the recording to stop at the reserve", seconds: 240) { try loggedMovie("moviesmall", file) != nil }
      let log = try Board.logs("moviesmall")
      #expect(log.contains("movie stopped: storage full"), "\(log)")
      #expect(log.contains("screen: Storage full"))
      #expect(!log.contains("write failed"), "stopped before the disk filled: \(log)")
      #expect(try expectOnlyMovie("moviesmall", file, in: mount) > 10)
    }
  }

  /// No reserve, and the disk filled behind the service's back mid-recording: the failed write stops the
  /// recording at once ("Save failed"), and what was written up to the last whole fragment is published and
  /// plays, with its record.
  @Test func aWriteFailureMidRecordingStopsItAtOnceAndKeepsWhatWasWritten() throws {
    let (config, mount) = try movieConfigOnGuestTmpfs("movieenospc", megabytes: 8, reserve: 0)
    defer { _ = try? Board.run("umount \(mount)") }
    try Board.withService("movieenospc", config: config) {
      _ = try startRecording("movieenospc")
      try Board.waitOnShare("the first frame") { try Board.logs("movieenospc").contains("movie first frame") }
      Thread.sleep(forTimeInterval: 2)
      _ = try Board.run("dd if=/dev/zero of=\(mount)/filler bs=4k 2>/dev/null; true")
      let file = "DCIM/100KIOSK/IMG_0001.MOV"
      try Board.waitFor("the recording to stop by itself") { try loggedMovie("movieenospc", file) != nil }
      let log = try Board.logs("movieenospc")
      #expect(log.contains("movie failed: write failed"), "\(log)")
      #expect(log.contains("screen: Save failed"))
      #expect(log.contains("No space left on device"))
      #expect(try expectOnlyMovie("movieenospc", file, in: mount) > 0)
      // Its record too, on the disk that is still full: the roll's record reserve.
      let records = try Board.run("cat \(mount)/roll/.kioskcam-items.jsonl").stdout
      #expect(records.contains("\"file\":\"\(file)\""), "the movie's record: \(records) \(log)")
      // The next recording works once there is room again, under the next number.
      _ = try Board.run("rm \(mount)/filler")
      #expect(try Board.control("shutter").status == 0)
      Thread.sleep(forTimeInterval: 1)
      #expect(try Board.control("shutter").status == 0)
      try Board.waitFor("IMG_0002.MOV") { try loggedMovie("movieenospc", "DCIM/100KIOSK/IMG_0002.MOV") != nil }
    }
  }
}

extension BoardSuite {
  /// The board's configuration with movie mode allowed at the stream's own size. `movie-camera` measures the
  /// rate vivid delivers when asked for the camera's 30 fps; 10 fps wanted leaves room for the emulated
  /// guest's stalls on a loaded machine (vivid asked for 10 delivered 8.9 under a load of 9 on two cores).

  /// `codec` nil leaves h264-encoder out of the lists, so `auto` records Motion-JPEG; "h264" wants the encoder,
  /// and the microphone, which the board has not (no sound card but in the sound test): silent MP4s.
  func movieConfig(
    _ name: String, maximum: Int = 600, quality: String = "high", codec: String? = nil, frameRate: Int = 10,
    edit: @escaping (String) -> String = { $0 }
  ) throws -> (config: String, roll: String) {
    let optional = "optional = display, mode-button, movie-camera" + (codec == nil ? "" : ", h264-encoder, microphone")
    return try Board.makeConfig(name: name) {
      edit($0).replacingOccurrences(of: "optional = display, mode-button", with: optional)
        + "[movie]\nsize = 640x360\nframe-rate = \(frameRate)\nmaximum-duration-s = \(maximum)\nquality = \(quality)\n"
        + (codec.map { "codec = \($0)\n" } ?? "")
    }
  }

  /// Switches to movie mode and starts recording over the control socket; returns the start (CLOCK_MONOTONIC
  /// seconds) the service logged.
  func startRecording(_ service: String) throws -> Double {
    let mode = try Board.control("mode movie")
    #expect(mode.status == 0, "\(mode.stderr)")
    let shutter = try Board.control("shutter")
    #expect(shutter.status == 0, "\(shutter.stderr)")
    var start: Double?
    try Board.waitFor("\(service) to record") {
      let line = try Board.logs(service).split(separator: "\n").first { $0.contains("kioskcam: movie recording") }
      start = line.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
      return start != nil
    }
    return start!
  }

  /// The frames and seconds of `file` as the service logged them.
  func loggedMovie(_ service: String, _ file: String) throws -> (frames: Int, seconds: Double)? {
    guard let line = try Board.logs(service).split(separator: "\n").first(where: { $0.contains("kioskcam: movie \(file) ") })
    else { return nil }
    let words = line.replacingOccurrences(of: ",", with: "").split(separator: " ").map(String.init)
    guard let frames = words.firstIndex(of: "frames").flatMap({ Int(words[$0 + 1]) }),
      let seconds = words.firstIndex(of: "s").flatMap({ Double(words[$0 - 1]) })
    else { return nil }
    return (frames, seconds)
  }
}
