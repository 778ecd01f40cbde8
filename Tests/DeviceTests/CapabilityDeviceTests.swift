import Foundation
import Testing

/// The capability gate on the board: a required capability the board lacks is one line and exit 69 (78 for a
/// configuration it cannot read); an optional one is off, said once, and the rest works.
extension BoardDeviceTests {
  @Test func aRequiredCapabilityTheBoardLacksIsOneLineAndExit69() throws {
    let (config, _) = try Board.makeConfig(name: "nomovie") {
      $0.replacingOccurrences(of: "required = still-camera, shutter-button, camera-roll", with: "required = still-camera, shutter-button, camera-roll, movie-camera")
        + "[movie]\nsize = 1920x1080\nframe-rate = 25\n"
    }
    let result = try Board.run("\(Board.binary) run --config \(config)")
    #expect(result.status == 69)
    #expect(
      result.stderr
        == "kioskcam: movie-camera (required): /dev/video0 (vivid): YUYV 1920x1080 at most 5 fps advertised, 25 fps wanted; "
        + "/dev/video1 (vivid): YUYV 1920x1080 at most 5 fps advertised, 25 fps wanted\n")
  }

  /// movie-camera is judged by the rate vivid delivers, not the one it advertises: at 10 fps it passes with
  /// the measured rate as evidence; with 90% of its buffers dropped it advertises the same and fails (asked
  /// for the camera's 30 fps, under emulation it delivers 20-30, so 2-3 fps come). vivid drops at random, so
  /// the verdict is a statistic: 9 fps over the probe's 2 s span is 18 frame periods where 4-6 are expected,
  /// 1 run in 70 000 if vivid keeps the full 30 fps, 1 in 1.3 million at 25 (binomial; 80% dropped measured
  /// 9 fps or more in 3.7% of runs, and 4% at 30 fps by the same sum). Fewer than three frames (1 run in 70 at
  /// 20 fps, 1 in 500 at 30) is refused by the same measurement, with its count instead of a rate.
  @Test func theMovieCameraRateIsMeasuredNotTakenFromTheDriver() throws {
    let (config, _) = try Board.makeConfig(name: "movierate") {
      $0.replacingOccurrences(of: "required = still-camera, shutter-button, camera-roll", with: "required = still-camera, shutter-button, camera-roll, movie-camera")
        + "[movie]\nsize = 640x360\nframe-rate = 10\n"
    }
    let probe = try Board.run("\(Board.binary) probe --json --config \(config)")
    #expect(probe.status == 0, "\(probe.stderr)")
    let report = try JSONDecoder().decode(ProbeJSON.self, from: Data(probe.stdout.utf8))
    let movie = try #require(report.capabilities.first { $0.name == "movie-camera" })
    #expect(movie.passed, "\(movie.evidence)")
    #expect(movie.evidence.hasPrefix("/dev/video0 (vivid): YUYV 640x360: "), "\(movie.evidence)")
    #expect(movie.evidence.contains(" fps measured over ") && movie.evidence.hasSuffix(", 10 fps wanted"), "\(movie.evidence)")
    #expect((Self.measuredSpan(movie.evidence) ?? 0) >= Self.wholeWindow, "a span of the whole window: \(movie.evidence)")

    defer { _ = try? Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0") }
    #expect(try Board.run("v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=90").status == 0)
    let refused = try Board.run("\(Board.binary) run --config \(config)")
    #expect(refused.status == 69, "\(refused.stderr)")
    let line = refused.stderr.split(separator: "\n").first { $0.contains("movie-camera (required)") }.map(String.init) ?? refused.stderr
    print("movie-camera with 90% of vivid's buffers dropped: \(line)")
    let prefix = "kioskcam: movie-camera (required): /dev/video0 (vivid): YUYV 640x360: "
    #expect(line.hasPrefix(prefix) && line.hasSuffix(", 10 fps wanted"), "\(line)")
    let words = line.dropFirst(prefix.count).split(separator: " ")
    if line.contains(" frames in at most 8.0 seconds") {
      #expect((Int(words.first ?? "") ?? 99) < 3, "too few frames to measure: \(line)")
    } else {
      #expect(line.contains(" fps measured over "), "\(line)")
      #expect((Double(words.first ?? "") ?? 99) < 9, "below 90% of 10 fps: \(line)")
      // The span runs a whole window from the second frame, however late that came.
      #expect((Self.measuredSpan(line) ?? 0) >= Self.wholeWindow, "\(line)")
    }
  }

  /// The probe's 2 s window as its evidence shows it: vivid stamps a buffer with its nominal time (its sequence
  /// times its period), which can run a frame ahead of the clock the window is timed on (1.97 s seen).
  static let wholeWindow = 2.0 - 0.1

  /// The seconds of "N fps measured over S s" in a probe's evidence.
  static func measuredSpan(_ evidence: String) -> Double? {
    guard let range = evidence.range(of: " fps measured over ") else { return nil }
    return evidence[range.upperBound...].split(separator: " ").first.flatMap { Double($0) }
  }

  @Test func aRollOnTheRootFileSystemIsRefused() throws {
    let (config, roll) = try Board.makeConfig(name: "rootroll")
    let edited = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "path = \(roll)", with: "path = /mnt")
    try edited.write(toFile: config, atomically: true, encoding: .utf8)
    let result = try Board.run("\(Board.binary) run --config \(config)")
    #expect(result.status == 69)
    #expect(
      result.stderr
        == "kioskcam: camera-roll (required): /mnt: on the root file system, expected a separate one (storage not mounted?)\n")
  }

  /// The same refusal with a display: the missing capability in plain words, white on dark red (0x501010),
  /// centred as every message is, read back from the screen that is scanned out, for `[display]
  /// missing-message-seconds`; then exit 69 with the same one line.
  @Test func aRequiredCapabilityMissingIsShownOnDarkRedThenExit69() throws {
    let (config, roll) = try Board.makeConfig(name: "fatalscreen") {
      $0.replacingOccurrences(of: "missing-message-seconds = 1", with: "missing-message-seconds = 12")
    }
    let edited = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "path = \(roll)", with: "path = /mnt")
    try edited.write(toFile: config, atomically: true, encoding: .utf8)
    try Board.spawn("fatalscreen", [Board.binary, "run", "--config", config])
    defer { _ = try? Board.kill("fatalscreen", signal: "KILL") }
    var mismatches = ["no screendump yet"]
    try Board.waitFor("the missing capability on dark red", seconds: 60) {
      mismatches = OverlayText.messageMismatches(in: try Board.screendump(), "Storage not available", background: (0x50, 0x10, 0x10))
      return mismatches.isEmpty
    }
    #expect(mismatches.isEmpty, "\(mismatches)")
    try Board.waitFor("the service to give up", seconds: 60) {
      try Board.host([Board.cli, "ps"]).stdout.split(separator: "\n").contains { $0.hasPrefix("fatalscreen ") && !$0.contains(" running ") }
    }
    let listed = try Board.host([Board.cli, "ps"]).stdout.split(separator: "\n").first { $0.hasPrefix("fatalscreen ") } ?? ""
    #expect(listed.contains(" exited 69 "), "\(listed)")
    let log = try Board.logs("fatalscreen")
    #expect(
      log.hasSuffix("kioskcam: camera-roll (required): /mnt: on the root file system, expected a separate one (storage not mounted?)\n"),
      "\(log)")
  }

  /// `zoom` required of a kiosk configured with nothing to zoom (zoom-maximum = 1.0) cannot run; the zoom of a
  /// kiosk where it is optional and passes is in ZoomDeviceTests.
  @Test func zoomRequiredWithNothingToZoomIsExit69() throws {
    let (config, _) = try Board.makeConfig(name: "nozoom") {
      $0.replacingOccurrences(of: "jpeg-quality = 90", with: "jpeg-quality = 90\nzoom-maximum = 1.0")
        .replacingOccurrences(
          of: "required = still-camera, shutter-button, camera-roll\noptional = display, mode-button, flash, zoom",
          with: "required = still-camera, shutter-button, camera-roll, zoom\noptional = display, mode-button, flash")
    }
    let result = try Board.run("\(Board.binary) run --config \(config)")
    #expect(result.status == 69, "\(result.stdout) \(result.stderr)")
    #expect(result.stderr == "kioskcam: zoom (required): [capture] zoom-maximum = 1.0: nothing to zoom\n", "\(result.stderr)")
  }

  @Test func aMissingCameraIsOneLineAndExit69() throws {
    let (config, _) = try Board.makeConfig(name: "nocamera") {
      $0.replacingOccurrences(of: "device = auto\nformat", with: "device = /dev/video7\nformat")
    }
    let result = try Board.run("\(Board.binary) run --config \(config)")
    #expect(result.status == 69)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(lines)")
    #expect(result.stderr.contains("/dev/video7: no such device"))
  }

  @Test func aDeviceThatIsNotACameraIsOneLineAndExit69() throws {
    let (config, _) = try Board.makeConfig(name: "notcamera") {
      $0.replacingOccurrences(of: "device = auto\nformat", with: "device = /dev/dri/card0\nformat")
    }
    let result = try Board.run("\(Board.binary) run --config \(config)")
    #expect(result.status == 69)
    #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    #expect(result.stderr.hasPrefix("kioskcam: still-camera (required): /dev/dri/card0"), "\(result.stderr)")
  }

  @Test func aBadConfigPathIsOneLineAndExit78() throws {
    let result = try Board.run("\(Board.binary) run --config /etc/kioskcam/missing.conf")
    #expect(result.status == 78)
    #expect(result.stderr == "kioskcam: /etc/kioskcam/missing.conf: cannot read: No such file or directory\n")
  }
}

extension BoardDeviceTests.Lines {
  @Test func aMissingOptionalModeButtonIsLoggedOnceAndStillsAreTaken() throws {
    let (config, roll) = try Board.makeConfig(name: "nomode") {
      $0.replacingOccurrences(of: "mode = mode", with: "mode = nonexistent")
    }
    try Board.withService("nomode", config: config) {
      let log = try Board.logs("nomode")
      let off = "kioskcam: mode-button off (optional): mode button (line 'nonexistent' on gpiochip0 'kioskcam-gpio'): no such line"
      #expect(log.components(separatedBy: off).count == 2, "logged exactly once: \(log)")
      #expect(log.contains("kioskcam: media types: stills"))
      // And on screen, bottom left in the font's own letters at half the label size (scale 1 on 1280x800).
      var mismatches = ["no screendump yet"]
      try Board.waitFor("the note of what is off") {
        mismatches = OverlayText.mismatches(
          in: try Board.screendump(), "Off: mode button", x: 25, y: 800 - 25 - 32, scale: 1, background: (0, 0, 0))
        return mismatches.isEmpty
      }
      #expect(mismatches.isEmpty, "\(mismatches)")
      try Board.click("shutter")
      try Board.waitOnShare("IMG_0001.JPG") { try Board.logs("nomode").contains("still DCIM/100KIOSK/IMG_0001.JPG") }
      #expect(try jpegs(in: roll) == ["DCIM/100KIOSK/IMG_0001.JPG"])
    }
  }

  /// `flash`, optional, with a lamp line the chip does not have: the flash is off (log, overlay, status) and a
  /// still is taken at the press, without waiting a lead for a light that never comes. Required: exit 69.
  @Test func aMissingFlashLampIsOffWhenOptionalAndFatalWhenRequired() throws {
    let wiring: (String) -> String = {
      $0.replacingOccurrences(of: "ready = ready\n", with: "ready = ready\nflash = 42\nflash-lead-ms = 3000\n")
    }
    let (config, roll) = try Board.makeConfig(name: "noflash", edit: wiring)
    try Board.withService("noflash", config: config) {
      let off = "kioskcam: flash off (optional): flash lamp (line 42 on gpiochip0 'kioskcam-gpio'): no such line"
      #expect(try Board.logs("noflash").components(separatedBy: off).count == 2, "logged exactly once")
      var mismatches = ["no screendump yet"]
      try Board.waitFor("the note of what is off") {
        mismatches = OverlayText.mismatches(
          in: try Board.screendump(), "Off: flash", x: 25, y: 800 - 25 - 32, scale: 1, background: (0, 0, 0))
        return mismatches.isEmpty
      }
      let flash = Board.capability("flash", in: try Board.status())
      #expect(flash?["available"] as? Bool == false, "\(String(describing: flash))")
      #expect(flash?["role"] as? String == "optional")
      try Board.click("shutter")
      try Board.waitOnShare("IMG_0001.JPG") { try Board.logs("noflash").contains("still DCIM/100KIOSK/IMG_0001.JPG") }
      #expect(try jpegs(in: roll) == ["DCIM/100KIOSK/IMG_0001.JPG"])
      let log = try Board.logs("noflash")
      #expect(!log.contains("flash lit"), "\(log)")
      // No lead: one of the two frames around the press, as for a kiosk without a flash (the 3 s lead would
      // take one about 90 frames after). The log names both neighbours and the frame saved.
      let press = try #require(log.split(separator: "\n").first { $0.hasPrefix("kioskcam: press at ") }.map(String.init))
      let words = press.split(separator: " ")
      let saved = words.last.map(String.init)
      let neighbours = words.indices.filter { words[$0] == "before" || words[$0] == "after" }.map { String(words[$0 + 1]) }
      #expect(neighbours.count == 2 && neighbours.contains(saved ?? ""), "\(press)")
    }

    let (required, _) = try Board.makeConfig(name: "noflashrequired") {
      wiring($0).replacingOccurrences(
        of: "required = still-camera, shutter-button, camera-roll\noptional = display, mode-button, flash, zoom",
        with: "required = still-camera, shutter-button, camera-roll, flash\noptional = display, mode-button, zoom")
    }
    let result = try Board.run("\(Board.binary) run --config \(required)")
    #expect(result.status == 69, "\(result.stdout) \(result.stderr)")
    #expect(
      result.stderr == "kioskcam: flash (required): flash lamp (line 42 on gpiochip0 'kioskcam-gpio'): no such line\n",
      "\(result.stderr)")
  }
}
