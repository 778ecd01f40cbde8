import Foundation
import Testing

/// H.264 movies on the board, from vivid's YUYV stream through libx264 in the guest, judged on the host by
/// ffprobe, ffmpeg and Debian's chromium as someone who pulled the file would open it.
extension BoardDeviceTests {
  @Test func anH264MovieFromVividPlaysInFFmpegAndInChromium() throws {
    let (config, roll) = try movieConfig("h264", codec: "h264")
    try Board.withService("h264", config: config) {
      let probe = try Board.run("\(Board.binary) probe --config \(config)")
      #expect(probe.stdout.contains("h264-encoder (optional): ok: libx264 core "), "\(probe.stdout)")
      #expect(probe.stdout.contains("; no V4L2 H264 encoder among 3 codec nodes (vicodec)\n"), "\(probe.stdout)")
      // No sound card on the board here: the microphone is off, logged once and on the overlay, and the
      // movie has no sound stream at all.
      let microphone = probe.stdout.split(separator: "\n").first { $0.contains("microphone (optional): MISSING: libasound ") }
      #expect(microphone?.hasSuffix(": no sound card with a capture device") == true, "\(probe.stdout)")
      #expect(try Board.logs("h264").components(separatedBy: "kioskcam: microphone off (optional): ").count == 2)
      var offSound = ["no screendump yet"]
      try Board.waitFor("Off: sound") {
        offSound = OverlayText.mismatches(
          in: try Board.screendump(), "Off: sound", x: 25, y: 800 - 25 - 32, scale: 1, background: (0, 0, 0))
        return offSound.isEmpty
      }
      #expect(offSound.isEmpty, "\(offSound)")
      _ = try startRecording("h264")
      Thread.sleep(forTimeInterval: 4)
      #expect(try Board.control("shutter").status == 0)
      let file = "DCIM/100KIOSK/IMG_0001.MP4"
      try Board.waitFor(file) { try loggedMovie("h264", file) != nil }
      let logged = try #require(try loggedMovie("h264", file))
      let path = "\(roll)/\(file)"
      let streams = try Board.host([
        "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
        "stream=codec_name,profile,pix_fmt,color_range,color_space,nb_read_frames,duration", "-of",
        "default=noprint_wrappers=1", path,
      ])
      var fields: [String: String] = [:]
      for line in streams.stdout.split(separator: "\n") {
        let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
        if parts.count == 2 { fields[parts[0]] = parts[1] }
      }
      #expect(fields["codec_name"] == "h264", "\(streams.stdout)")
      #expect(["High", "Main"].contains(fields["profile"] ?? ""), "\(streams.stdout)")
      #expect(fields["pix_fmt"] == "yuv420p" && fields["color_range"] == "tv" && fields["color_space"] == "smpte170m")
      #expect(Int(fields["nb_read_frames"] ?? "") == logged.frames, "every frame the log counts is in the file")
      #expect(logged.frames >= 20, "4 s at 10 fps wanted: \(logged.frames) frames")
      let seconds = Double(fields["duration"] ?? "") ?? -1
      #expect(abs(seconds - logged.seconds) <= 0.1 + 0.001, "ffprobe \(seconds) s, log \(logged.seconds) s: within a frame")
      let types = try Board.host(["/usr/bin/ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path])
      #expect(types.stdout.split(separator: "\n").map(String.init) == ["video"], "no sound stream: \(types.stdout)")
      let decode = try Board.host(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
      #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")
      let fragments = try #require(MovieFragments.videoFragments(Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
      print("H.264 movie from vivid: fragments \(fragments.map { String(format: "%.3f s/%d", $0.seconds, $0.samples) })")
      #expect(fragments.count >= 2 && fragments.allSatisfy { $0.samples == 1 || $0.seconds <= 0.25 + 0.001 }, "\(fragments)")
      #expect(fragments.reduce(0) { $0 + $1.samples } == logged.frames, "every frame in one fragment")
      // The record is appended (and fsynced) after the log line. It says what ffprobe finds: on the emulated
      // board the measured preset is ultrafast, whose profile is Main; a faster board gets High.
      let record = try movieRecord(in: roll, file)
      #expect(record["codec"] as? String == "h264" && record["profile"] as? String == fields["profile"], "\(record)")
      #expect(record["frames"] as? Int == logged.frames, "\(record)")
      #expect(record["audio"] as? String == "none", "\(record)")

      // Chromium, from a local page: the length ffprobe gives, played to the end, a seek to the middle, and
      // vivid's bars drawn from the middle frame (the bars fill the top of vivid's picture).
      let played = try Board.host([
        "\(Board.repository)/board/virtual/play-movie.py", path, "0.25",
        (0..<8).map { "\((Double($0) * 2 + 1) / 16)" }.joined(separator: ","),
      ])
      let result = try #require(
        try JSONSerialization.jsonObject(with: Data(played.stdout.utf8)) as? [String: Any], "\(played.stdout) \(played.stderr)")
      #expect(result["error"] == nil, "chromium: \(result["error"] ?? "")")
      let duration = result["duration"] as? Double ?? -1
      #expect(abs(duration - seconds) <= 0.1 + 0.001, "chromium \(duration) s, ffprobe \(seconds) s")
      #expect(result["ended"] as? Bool == true)
      #expect(abs((result["seekedTo"] as? Double ?? -1) - duration / 2) <= 0.15, "seek landed at \(result["seekedTo"] ?? "")")
      let samples = (result["samples"] as? [[Int]]) ?? []
      #expect(samples.count == 8)
      let mismatches = zip(samples, VividBars.rgb).enumerated().compactMap { bar, pair -> String? in
        let (got, want) = pair
        let close = got.count == 3 && abs(got[0] - want.0) <= 24 && abs(got[1] - want.1) <= 24 && abs(got[2] - want.2) <= 24
        return close ? nil : "bar \(bar): got \(got), want \(want)"
      }
      #expect(mismatches.isEmpty, "chromium drew \(mismatches)")
    }
  }
}
