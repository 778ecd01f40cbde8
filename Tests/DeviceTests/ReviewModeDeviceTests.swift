import Foundation
import Testing

/// Review mode on the board: a roll made on the host by ffmpeg (stills of known colours at three sizes, one
/// Motion-JPEG movie that is yellow for 1 s, then magenta for 8 s), stepped through with the gpio-sim buttons and
/// checked in QEMU's screendumps.
extension BoardDeviceTests {
  static let red = (255, 0, 0), green = (0, 255, 0), blue = (0, 0, 255)
  static let yellow = (255, 255, 0), magenta = (255, 0, 255)

  func ffmpeg(_ arguments: [String]) throws {
    let result = try Board.host(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-y"] + arguments)
    try #require(result.status == 0, "ffmpeg \(arguments): \(result.stderr)")
  }

  /// IMG_0001 red 640x480, IMG_0002 green 4000x3000, IMG_0003 blue 1920x1080, IMG_0004.MOV: 9 s.
  func makeReviewRoll(_ roll: String) throws {
    let folder = "\(roll)/DCIM/100KIOSK"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (name, colour, size) in [("IMG_0001", "0xFF0000", "640x480"), ("IMG_0002", "0x00FF00", "4000x3000"), ("IMG_0003", "0x0000FF", "1920x1080")] {
      try ffmpeg([
        "-f", "lavfi", "-i", "color=c=\(colour):s=\(size)", "-frames:v", "1", "-pix_fmt", "yuvj420p", "-q:v", "2",
        "-f", "image2", "-c:v", "mjpeg", "\(folder)/\(name).JPG",
      ])
    }
    try ffmpeg([
      "-f", "lavfi", "-i", "color=c=0xFFFF00:s=320x240:r=10:d=1", "-f", "lavfi", "-i", "color=c=0xFF00FF:s=320x240:r=10:d=8",
      "-filter_complex", "[0][1]concat=n=2:v=1", "-pix_fmt", "yuvj420p", "-c:v", "mjpeg", "-q:v", "2", "-f", "mov",
      "\(folder)/IMG_0004.MOV",
    ])
  }

  func near(_ got: (Int, Int, Int), _ want: (Int, Int, Int)) -> Bool {
    abs(got.0 - want.0) <= 24 && abs(got.1 - want.1) <= 24 && abs(got.2 - want.2) <= 24
  }

  /// Waits for the log to say which item is on screen, then for the screen to show `colour` in the middle and
  /// the position text in the bottom-right corner (the font's own glyphs on a black cell, scale 2, margin 25).
  func expectShown(_ service: String, _ file: String, _ position: String, _ colour: (Int, Int, Int), playing: Bool = false)
    throws
  {
    let line = "screen: reviewing DCIM/100KIOSK/\(file) \(position)\(playing ? " playing" : "")\n"
    let asked = Date()
    try Board.waitOnShare("'\(line.dropLast())' in the log") { try Board.logs(service).contains(line) }
    let logged = Date().timeIntervalSince(asked)
    var last: (Int, Int, Int) = (-1, -1, -1)
    var text: [String] = ["no screendump"]
    // What the screendumps showed, in order, each colour with the times (from the wait's start) it was first
    // and last seen and how often, for the record of a wait that fails.
    var seen: [(colour: String, first: Double, last: Double, count: Int)] = []
    do {
      try Board.waitFor("\(file) in \(colour) with '\(position)'", seconds: 60) {
        let screen = try Board.screendump()
        last = screen.pixel(640, 400)
        let width = position.unicodeScalars.count * 32
        text = OverlayText.mismatches(in: screen, position, x: 1280 - 25 - width, y: 800 - 25 - 64, scale: 2, background: (0, 0, 0))
        let (entry, at) = ("\(last)", Date().timeIntervalSince(asked))
        if seen.last?.colour == entry { seen[seen.count - 1].last = at; seen[seen.count - 1].count += 1 } else {
          seen.append((entry, at, at, 1))
        }
        return near(last, colour) && text.isEmpty
      }
    } catch {
      let dumps = seen.suffix(8).map { String(format: "%@ %d times from %.1f s to %.1f s", $0.colour, $0.count, $0.first, $0.last) }
      let tail = (try? Board.logs(service).split(separator: "\n").suffix(8).joined(separator: " | ")) ?? ""
      throw BoardFailure(
        "\(error); the log said '\(line.dropLast())' after \(String(format: "%.1f", logged)) s; the centre was "
          + "\(dumps.joined(separator: ", then ")); screen: \(try lastScreen(service)); the service's last words: \(tail)")
    }
    #expect(near(last, colour), "\(file): centre \(last), want \(colour)")
    #expect(text.isEmpty, "\(text)")
  }

  @Test func reviewModeStepsPlaysAndTimesOut() throws {
    let (config, roll) = try Board.makeConfig(name: "review-mode") { $0 + "\n[review]\nidle-s = 25\n" }
    try makeReviewRoll(roll)
    try Board.withService("review-mode", config: config) {

      // The mode button: newest first, a movie shows its first frame, its name and its length.
      try Board.click("mode")
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.yellow)
      let screen = try Board.screendump()
      #expect(OverlayText.mismatches(in: screen, "IMG_0004.MOV 0:09", x: 25, y: 25, scale: 2, background: (0, 0, 0)).isEmpty)

      // Shutter: older. The 4000x3000 photo is decoded at a DCT scale, never at full size.
      try Board.click("shutter")
      try expectShown("review-mode", "IMG_0003.JPG", "2 / 4", Self.blue)
      try Board.click("shutter")
      try expectShown("review-mode", "IMG_0002.JPG", "3 / 4", Self.green)
      let decoded = try Board.logs("review-mode").split(separator: "\n").first { $0.contains("review DCIM/100KIOSK/IMG_0002.JPG: 4000x3000") }
      #expect(decoded?.contains("decoded at 1/2 to 2000x1500, shown at 1066x800+107+0") == true, "\(decoded ?? "no line")")
      #expect(try Board.screendump().pixel(50, 400) == (0, 0, 0), "pillarbox bars")
      try Board.click("shutter")
      try expectShown("review-mode", "IMG_0001.JPG", "4 / 4", Self.red)
      try Board.click("shutter")
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.yellow)

      // A long press on shutter: newer (round from the newest to the oldest).
      try Board.click("shutter", holdMilliseconds: 1500)
      try expectShown("review-mode", "IMG_0001.JPG", "4 / 4", Self.red)
      try Board.click("shutter")
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.yellow)

      // Cancel plays the movie: it turns magenta after its first second; cancel again stops it at its first frame.
      try Board.click("cancel")
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.magenta, playing: true)
      try Board.click("cancel")
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.yellow)
      // Played to the end, it comes back to its first frame by itself.
      try Board.click("cancel")
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.magenta, playing: true)
      try Board.waitFor("the end of the movie") {
        try lastScreen("review-mode") == "reviewing DCIM/100KIOSK/IMG_0004.MOV 1 / 4"
      }
      try expectShown("review-mode", "IMG_0004.MOV", "1 / 4", Self.yellow)
      let played = try Board.logs("review-mode").split(separator: "\n").filter { $0.contains("playing DCIM/100KIOSK/IMG_0004.MOV") }
      #expect(played.count == 2 && played.allSatisfy { $0.contains(": 90 frames, ") }, "\(played)")

      // A still taken over the control socket joins the list; the screen stays on the movie, now 2 / 5.
      let shutter = try Board.control("shutter")
      #expect(shutter.status == 0 && shutter.stdout == "ok\n", "\(shutter.stdout) \(shutter.stderr)")
      try expectShown("review-mode", "IMG_0004.MOV", "2 / 5", Self.yellow)
      #expect(FileManager.default.fileExists(atPath: "\(roll)/DCIM/100KIOSK/IMG_0005.JPG"))
      try Board.click("shutter")
      try Board.waitFor("the next older item") { try lastScreen("review-mode") == "reviewing DCIM/100KIOSK/IMG_0003.JPG 3 / 5" }
      try Board.click("shutter", holdMilliseconds: 1500)
      try Board.click("shutter", holdMilliseconds: 1500)
      try Board.waitFor("the photo from the socket, newest") {
        try lastScreen("review-mode") == "reviewing DCIM/100KIOSK/IMG_0005.JPG 1 / 5"
      }

      // Left alone, review goes back to the live picture.
      func liveScreens() throws -> Int { try Board.logs("review-mode").components(separatedBy: "screen: live still\n").count }
      let before = try liveScreens()
      try Board.waitFor("the idle timeout", seconds: 120) { try liveScreens() > before }
      #expect(try Board.logs("review-mode").contains("review idle for 25.0 seconds: back to the live picture"))
      try Board.waitFor("vivid's bars") { VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty }
      let stopped = try Board.kill("review-mode")
      #expect(stopped.stdout.contains("exited 0"), "\(stopped.stdout)")
    }
  }
}

extension BoardDeviceTests {
  /// With `allow-delete`, a long press on cancel asks on screen, and shutter removes the item and its record;
  /// the next photo takes a new number.
  @Test func reviewModeDeletesOnlyAfterAsking() throws {
    let (config, roll) = try Board.makeConfig(name: "delete") { $0 + "\n[review]\nallow-delete = yes\n" }
    try Board.withService("delete", config: config) {
      // One at a time: a press that comes while the one before still waits for its frame is refused (the
      // socket answers in milliseconds, under a frame), and make test failed on that.
      for number in 1...2 {
        let shutter = try Board.control("shutter")
        #expect(shutter.status == 0, "\(shutter.stdout) \(shutter.stderr)")
        try Board.waitOnShare("still \(number)") { try Board.logs("delete").contains("still DCIM/100KIOSK/IMG_000\(number).JPG") }
      }
      try Board.click("mode")
      try Board.waitFor("review") { try lastScreen("delete") == "reviewing DCIM/100KIOSK/IMG_0002.JPG 1 / 2" }
      try Board.click("cancel", holdMilliseconds: 1500)
      try Board.waitFor("the question") { try lastScreen("delete") == "reviewing DCIM/100KIOSK/IMG_0002.JPG 1 / 2 delete?" }
      // "Delete?" centred on the middle of three lines, white on red, scale 2.
      var words: [String] = []
      try Board.waitFor("Delete? on screen", seconds: 60) {
        words = OverlayText.mismatches(
          in: try Board.screendump(), "Delete?", x: (1280 - 7 * 32) / 2, y: (800 - 3 * 64) / 2, scale: 2, background: (224, 32, 32))
        return words.isEmpty
      }
      #expect(words.isEmpty, "\(words)")
      try Board.click("shutter")
      try Board.waitFor("the delete") { try lastScreen("delete") == "reviewing DCIM/100KIOSK/IMG_0001.JPG 1 / 1" }
      try Board.waitFor("IMG_0002.JPG gone") { !FileManager.default.fileExists(atPath: "\(roll)/DCIM/100KIOSK/IMG_0002.JPG") }
      try Board.waitFor("its record gone") {
        let records = (try? String(contentsOfFile: "\(roll)/.kioskcam-items.jsonl", encoding: .utf8)) ?? ""
        return records.contains("IMG_0001.JPG") && !records.contains("IMG_0002.JPG")
      }
      #expect(try Board.control("shutter").status == 0)
      try Board.waitOnShare("the next photo") { try Board.logs("delete").contains("still DCIM/100KIOSK/IMG_0003.JPG") }
      #expect(!FileManager.default.fileExists(atPath: "\(roll)/DCIM/100KIOSK/IMG_0002.JPG"), "number 2 is not reused")
    }
  }

  /// A camera mounted a quarter turn clockwise ([camera] rotation = 90): the preview shows the sensor's
  /// picture as it is, the still says Orientation 8 (exiftool), and review shows it upright, turned back a
  /// quarter: vivid's bars then run up the screen, the first bar at the bottom.
  @Test func reviewShowsAPhotoFromATurnedCameraUpright() throws {
    let (config, roll) = try Board.makeConfig(name: "upright") {
      $0.replacingOccurrences(of: "frame-rate = 30\n", with: "frame-rate = 30\nrotation = 90\n")
    }
    try Board.withService("upright", config: config) {
      #expect(try Board.control("shutter").status == 0)
      try Board.waitOnShare("the still") { try Board.logs("upright").contains("still DCIM/100KIOSK/IMG_0001.JPG") }
      let exif = try Board.host(["/usr/bin/exiftool", "-s3", "-n", "-Orientation", "\(roll)/DCIM/100KIOSK/IMG_0001.JPG"])
      #expect(exif.stdout == "8\n", "\(exif.stdout)")
      try Board.click("mode")
      try Board.waitFor("review") { try lastScreen("upright") == "reviewing DCIM/100KIOSK/IMG_0001.JPG 1 / 1" }
      // 640x360 turned fits 1280x800 as 450x800 in the middle; bars from the bottom up.
      var mismatches = ["no screendump yet"]
      try Board.waitFor("the photo upright", seconds: 60) {
        let screen = try Board.screendump()
        mismatches = VividBars.mismatches(in: { along, across in screen.pixel(across, 799 - along) }, x: 0, width: 800, y: 640)
        return mismatches.isEmpty
      }
      #expect(mismatches.isEmpty, "\(mismatches)")
    }
  }
}

extension BoardSuite {
  /// The last screen the service logged.
  func lastScreen(_ service: String) throws -> String {
    let lines = try Board.logs(service).split(separator: "\n").filter { $0.hasPrefix("kioskcam: screen: ") }
    return lines.last.map { String($0.dropFirst("kioskcam: screen: ".count)) } ?? ""
  }
}
