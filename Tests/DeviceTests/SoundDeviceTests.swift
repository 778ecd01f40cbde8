import Foundation
import Testing

/// Sound on the board: snd-aloop's loopback is the microphone (what is played into hw:Loopback,1,0 is
/// captured from hw:Loopback,0,0, which `[movie] audio = auto` finds), the movie is H.264 from vivid, and the
/// file is judged on the host by ffprobe and ffmpeg.
extension BoardSuite {
  /// The config of the sound tests: H.264 movies, the microphone optional.
  func soundConfig(_ name: String) throws -> (config: String, roll: String) {
    try Board.makeConfig(name: name) {
      $0.replacingOccurrences(
        of: "optional = display, mode-button", with: "optional = display, mode-button, movie-camera, h264-encoder, microphone")
        + "[movie]\nsize = 640x360\nframe-rate = 10\ncodec = h264\naudio = auto\n"
    }
  }
}

extension BoardDeviceTests.Sound.Long {
  /// Five beeps of 1 kHz played into the loopback while vivid's test pattern switches with each (white,
  /// blue, ...; board/virtual/guest-beeps.py): the movie has an AAC-LC stream at 48 kHz, mono, whose
  /// dominant frequency is 1 kHz and whose length is the pictures' within 50 ms, and each beep starts
  /// within a frame interval (the one before the changed picture, as the file has it) + 20 ms of the
  /// picture it came with. The offsets are printed.
  ///
  /// vivid stamps its frames "Start of Exposure" for this test: by default (End of Frame) it stamps a frame
  /// with the time it starts filling it plus 0.9 of the frame period (vivid-kthread-cap.c), so that a
  /// picture's time runs most of a frame ahead of what is in it, by as much as the switch's phase against
  /// vivid's ticks leaves (41 to 66 ms measured at 30 fps, the same for all five beeps of a run, which are
  /// whole periods apart). A webcam (uvcvideo) stamps the start of the frame, as this makes vivid do.
  @Test func aMovieWithTheLoopbacksBeepsHasThemAtOneKilohertzInStepWithThePictures() throws {
    try #require(try Board.run("modprobe snd-aloop pcm_substreams=1").status == 0, "modprobe snd-aloop")
    defer {
      // vivid's bars, its own timestamps and no sound card again, for the tests after this one.
      _ = try? Board.run(
        "for v in /dev/video0 /dev/video1; do v4l2-ctl -d $v -c test_pattern=0 -c timestamp_source=0; done; modprobe -r snd-aloop")
    }
    try #require(
      try Board.run("for v in /dev/video0 /dev/video1; do v4l2-ctl -d $v -c timestamp_source=1 || exit 1; done").status == 0,
      "vivid's timestamp source")
    let (config, roll) = try soundConfig("sound")
    try Board.withService("sound", config: config) {
      // The probe's evidence, as `kioskcam status` gives it (`kioskcam probe` says the same; on a loaded board
      // its start costs half a minute).
      let microphone = Board.capability("microphone", in: try Board.status())
      #expect(microphone?["available"] as? Bool == true, "\(String(describing: microphone))")
      let evidence = microphone?["evidence"] as? String
      #expect(
        evidence?.hasPrefix(
          "plughw:CARD=Loopback,DEV=0 (Loopback): S16_LE, 48000 Hz, mono, periods of 1024 frames, CLOCK_MONOTONIC timestamps; "
            + "AAC-LC through libavcodec") == true, "\(String(describing: microphone))")

      _ = try startRecording("sound")
      // Two seconds apart: a loaded emulated board records a frame a second at worst, and two switches
      // between the same two frames would show no change.
      let moments = [1.0, 3.0, 5.0, 7.0, 9.0]
      try Board.spawn(
        "beeps",
        ["/usr/bin/python3", "\(Board.repository)/board/virtual/guest-beeps.py", "hw:Loopback,1,0",
          moments.map { "\($0)" }.joined(separator: ","), "300", "/dev/video0", "/dev/video1"])
      var beeps: [(played: Double, switched: Double)] = []
      try Board.waitFor("the five beeps") {
        beeps = try Board.logs("beeps").split(separator: "\n").compactMap { line in
          guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let played = object["played"] as? Double, let switched = object["switched"] as? Double
          else { return nil }
          return (played, switched)
        }
        return beeps.count == moments.count
      }
      Thread.sleep(forTimeInterval: 1)
      #expect(try Board.control("shutter").status == 0)
      let file = "DCIM/100KIOSK/IMG_0001.MP4"
      try Board.waitFor(file) { try loggedMovie("sound", file) != nil }
      #expect(try Board.logs("sound").contains(", sound AAC-LC 48000 Hz mono, quality high"), "the start's log line")
      let path = "\(roll)/\(file)"

      let probed = try Board.host([
        "/usr/bin/ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,profile,sample_rate,channels,duration",
        "-of", "json", path,
      ])
      let streams = (try JSONSerialization.jsonObject(with: Data(probed.stdout.utf8)) as? [String: Any])?["streams"]
        as? [[String: Any]] ?? []
      let video = streams.first { $0["codec_type"] as? String == "video" }
      let audio = try #require(streams.first { $0["codec_type"] as? String == "audio" }, "\(probed.stdout)")
      #expect(audio["codec_name"] as? String == "aac" && audio["profile"] as? String == "LC", "\(audio)")
      #expect(audio["sample_rate"] as? String == "48000" && audio["channels"] as? Int == 1, "\(audio)")
      let videoSeconds = Double(video?["duration"] as? String ?? "") ?? -1
      let audioSeconds = Double(audio["duration"] as? String ?? "") ?? -1
      print("sound movie: pictures \(videoSeconds) s, sound \(audioSeconds) s")
      #expect(abs(audioSeconds - videoSeconds) <= 0.05, "sound \(audioSeconds) s, pictures \(videoSeconds) s")
      let decode = try Board.host(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
      #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")

      // The dominant frequency of ffmpeg's decode, by Goertzel filters every 25 Hz from 100 Hz to 4 kHz.
      let pcm = try Self.decodedSound(path)
      let strongest = stride(from: 100.0, through: 4000, by: 25).max { Self.power(pcm, $0) < Self.power(pcm, $1) } ?? 0
      #expect(strongest == 1000, "dominant frequency \(strongest) Hz")

      // The movie's time 0 is its first frame's timestamp, on the clock the script's times are on.
      let first = try Board.logs("sound").split(separator: "\n").first { $0.contains("kioskcam: movie first frame ") }
      let origin = try #require(first.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }, "first frame logged")
      let inMovie = beeps.map { (played: $0.played - origin, switched: $0.switched - origin) }
      let measured = try Self.beepOffsets(path, pcm: pcm, beeps: inMovie)
      print("A/V on the board, ms: each beep's onset in the file - when it was played (CLOCK_MONOTONIC): "
        + measured.map { $0.sound.map { "\(Int(($0 * 1000).rounded()))" } ?? "none" }.joined(separator: ", "))
      print("A/V on the board, ms: onset - picture change (allowed: the frame interval before it + 20 ms + the script's switch lateness): "
        + measured.map { m in m.offset.map { "\(Int(($0 * 1000).rounded())) (\(Int((m.interval * 1000).rounded())))" } ?? "none" }
        .joined(separator: ", "))
      for (index, beep) in measured.enumerated() {
        // The sound on the camera's clock: the count within the timeline's 20 ms tolerance, and a 4 ms
        // jiffy of snd-aloop's timer and a few ms of AAC besides.
        #expect(beep.sound.map { abs($0) <= 0.030 } == true, "beep \(index): sound \(String(describing: beep.sound)) s from when it was played")
        let lateness = max(0, inMovie[index].switched - inMovie[index].played)
        #expect(
          beep.offset.map { abs($0) <= beep.interval + 0.020 + lateness } == true,
          "beep \(index): onset - change \(String(describing: beep.offset)) s, frame interval \(beep.interval) s")
      }

      var record = ""
      try Board.waitFor("the record of \(file)") {
        let records = (try? String(contentsOfFile: "\(roll)/.kioskcam-items.jsonl", encoding: .utf8)) ?? ""
        record = String(records.split(separator: "\n").first { $0.contains("\"file\":\"\(file)\"") } ?? "")
        return !record.isEmpty
      }
      #expect(
        record.contains("\"audio\":\"aac\"") && record.contains("\"audioSampleRate\":48000")
          && record.contains("\"audioChannels\":1") && record.contains("\"audioProfile\":\"LC\""), "\(record)")
    }
  }
}

extension BoardDeviceTests.Sound {
  /// The microphone pulled while a movie records: snd-aloop's platform device unbound from its driver under
  /// the open capture. That is the kernel's `snd_card_disconnect`, what snd-usb-audio does when a USB
  /// microphone is pulled; a USB one cannot be pulled here (no emulated USB host controller carries its
  /// isochronous sound: docs/testing.md). The movie goes on and is published with the sound it had, the loss is
  /// logged once and "Off: sound" is on the overlay; bound again, the next movie opens the microphone, has sound
  /// to its end, and "Off: sound" is gone.
  @Test func aMicrophonePulledWhileRecordingLeavesTheMovieWholeAndSaysOffSound() throws {
    try #require(try Board.run("modprobe snd-aloop pcm_substreams=1").status == 0, "modprobe snd-aloop")
    let driver = "/sys/bus/platform/drivers/snd_aloop"
    defer { _ = try? Board.run("[ -e \(driver)/snd_aloop.0 ] || echo snd_aloop.0 > \(driver)/bind; modprobe -r snd-aloop") }
    let (config, roll) = try soundConfig("micpull")
    func offSound() throws -> Bool {
      OverlayText.mismatches(in: try Board.screendump(), "Off: sound", x: 25, y: 800 - 25 - 32, scale: 1, background: (0, 0, 0))
        .isEmpty
    }
    func streams(_ path: String) throws -> [String: Double] {
      let probed = try Board.host([
        "/usr/bin/ffprobe", "-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", path,
      ])
      return Dictionary(
        probed.stdout.split(separator: "\n").compactMap { line -> (String, Double)? in
          let parts = line.split(separator: ",")
          return parts.count == 2 ? (String(parts[0]), Double(parts[1]) ?? -1) : nil
        }, uniquingKeysWith: { first, _ in first })
    }
    try Board.withService("micpull", config: config) {
      #expect(!(try offSound()), "the microphone is there at the start")
      _ = try startRecording("micpull")
      Thread.sleep(forTimeInterval: 3)
      // In the background: the unbind returns only once the service has closed the device.
      try Board.spawn("unplug", ["/bin/sh", "-c", "echo snd_aloop.0 > \(driver)/unbind"])
      try Board.waitOnShare("the microphone lost") { try Board.logs("micpull").contains("kioskcam: microphone (optional) lost: ") }
      try Board.waitFor("Off: sound") { try offSound() }
      Thread.sleep(forTimeInterval: 3)
      #expect(try Board.control("shutter").status == 0)
      let first = "DCIM/100KIOSK/IMG_0001.MP4"
      try Board.waitFor(first) { try loggedMovie("micpull", first) != nil }
      let logs = try Board.logs("micpull")
      #expect(logs.components(separatedBy: "kioskcam: microphone (optional) lost: ").count == 2, "logged once")
      #expect(logs.components(separatedBy: "movie sound stopped: ").count == 2, "logged once")
      let pulled = try streams("\(roll)/\(first)")
      print("microphone pulled mid-movie: pictures \(pulled["video"] ?? -1) s, sound \(pulled["audio"] ?? -1) s")
      let (pictures, sound) = (pulled["video"] ?? -1, pulled["audio"] ?? -1)
      #expect(pictures >= 5, "the movie went on after the pull: \(pictures) s")
      #expect(sound > 1 && sound < pictures - 2, "sound up to the pull, pictures past it: \(sound) s of \(pictures) s")
      let decode = try Board.host(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", "\(roll)/\(first)", "-f", "null", "-"])
      #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")

      #expect(try Board.run("echo snd_aloop.0 > \(driver)/bind").status == 0, "the microphone back")
      _ = try startRecording("micpull")
      try Board.waitOnShare("the microphone back") { try Board.logs("micpull").contains("kioskcam: microphone back: ") }
      try Board.waitFor("no Off: sound") { !(try offSound()) }
      Thread.sleep(forTimeInterval: 3)
      #expect(try Board.control("shutter").status == 0)
      let second = "DCIM/100KIOSK/IMG_0002.MP4"
      try Board.waitFor(second) { try loggedMovie("micpull", second) != nil }
      let back = try streams("\(roll)/\(second)")
      print("microphone back: pictures \(back["video"] ?? -1) s, sound \(back["audio"] ?? -1) s")
      #expect(abs((back["audio"] ?? -10) - (back["video"] ?? 0)) <= 0.05, "sound to the end again: \(back)")
    }
  }
}

extension BoardDeviceTests.Sound.Long {
  static func decodedSound(_ path: String) throws -> [Int16] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-f", "s16le", "-ac", "1", "-ar", "48000", "-"]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let bytes = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
  }

  /// Goertzel's power at `frequency` in 48 kHz samples.
  static func power(_ samples: [Int16], _ frequency: Double) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
    var (s1, s2) = (0.0, 0.0)
    for sample in samples {
      let s0 = Double(sample) + coefficient * s1 - s2
      (s2, s1) = (s1, s0)
    }
    return s1 * s1 + s2 * s2 - coefficient * s1 * s2
  }

  /// For each beep (its play and switch times, seconds of the movie): its onset in the decoded sound (the
  /// 1 ms envelope past half the beep's, nearest the play time) less the play time; the first picture change
  /// (the mean luma of consecutive frames, as ffmpeg decodes them, jumps by more than 60) from the switch on,
  /// and the onset less it; and the interval from the frame before that change.
  static func beepOffsets(
    _ path: String, pcm: [Int16], beeps: [(played: Double, switched: Double)]
  ) throws -> [(sound: Double?, offset: Double?, interval: Double)] {
    let times = try Board.host([
      "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path,
    ]).stdout.split(separator: "\n").compactMap { line in line.split(separator: ",").first.flatMap { Double($0) } }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = [
      "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough", "-vf", "scale=16:16", "-f", "rawvideo",
      "-pix_fmt", "gray", "-",
    ]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let grey = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    let means = stride(from: 0, to: grey.count - 255, by: 256).map { grey[$0..<$0 + 256].reduce(0) { $0 + Int($1) } / 256 }
    let changes = (1..<min(means.count, times.count)).filter { abs(means[$0] - means[$0 - 1]) > 60 }
    let window = 48
    let envelope = stride(from: 0, to: max(0, pcm.count - window), by: window).map { at in
      (pcm[at..<at + window].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)).squareRoot()
    }
    let half = 16_000 / 2.0.squareRoot() / 2
    let onsets = (1..<max(1, envelope.count)).filter { envelope[$0] > half && envelope[$0 - 1] <= half }.map { Double($0 * window) / 48_000 }
    return beeps.map { beep in
      let onset = onsets.filter { abs($0 - beep.played) < 0.3 }.min { abs($0 - beep.played) < abs($1 - beep.played) }
      // A vivid frame stamped a little before the switch may already show it (its timestamps are nominal).
      guard let change = changes.first(where: { times[$0] >= beep.switched - 0.05 }), times[change] < beep.switched + 3 else {
        return (onset.map { $0 - beep.played }, nil, 0)
      }
      return (onset.map { $0 - beep.played }, onset.map { $0 - times[change] }, times[change] - times[change - 1])
    }
  }
}
