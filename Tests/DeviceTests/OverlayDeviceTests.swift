import FontFile
import Foundation
import Imaging
import Testing

/// Where the overlay's words should be, rendered here from the font file's own bitmaps: each glyph's bits
/// are read straight from the PSF2 bytes (the glyph number through the font's Unicode table).
enum OverlayText {
  static let raw = (try? FontFile.bytes(at: FontFile.defaultPath)) ?? []
  static let font = try? ConsoleFont(psf2: raw)

  /// Pixels of `text` drawn at (x, y) at `scale` that differ from white on the glyph's bits and from
  /// `background` elsewhere in its cells; empty when the words are there exactly.
  static func mismatches(
    in screen: PPM, _ text: String, x: Int, y: Int, scale: Int, background: (Int, Int, Int)
  ) -> [String] {
    guard let font else { return ["no font"] }
    let header = Int(raw[8]) | Int(raw[9]) << 8
    let rowBytes = (font.glyphWidth + 7) / 8
    var found: [String] = []
    for (index, scalar) in text.unicodeScalars.enumerated() {
      let glyph = font.glyph(for: scalar)
      for py in 0..<(font.glyphHeight * scale) {
        for px in 0..<(font.glyphWidth * scale) {
          let (gx, gy) = (px / scale, py / scale)
          let byte = raw[header + glyph * rowBytes * font.glyphHeight + gy * rowBytes + gx / 8]
          let want = byte & (0x80 >> UInt8(gx % 8)) != 0 ? (255, 255, 255) : background
          let (sx, sy) = (x + index * font.glyphWidth * scale + px, y + py)
          let got = screen.pixel(sx, sy)
          if got != want, found.count < 5 { found.append("(\(sx), \(sy)) '\(scalar)': got \(got), want \(want)") }
        }
      }
    }
    return found
  }

  /// The number drawn before `suffix` on a line centred across the screen at row `y` (the recording's
  /// "N dropped"), read glyph by glyph against the font file's digits; nil when no such line is there.
  static func centredNumber(
    in screen: PPM, before suffix: String, y: Int, scale: Int, background: (Int, Int, Int)
  ) -> Int? {
    guard let font else { return nil }
    let advance = font.glyphWidth * scale
    func drawn(_ text: String, at x: Int) -> Bool {
      mismatches(in: screen, text, x: x, y: y, scale: scale, background: background).isEmpty
    }
    for digits in 1...6 {
      let x = (screen.width - (digits + suffix.unicodeScalars.count) * advance) / 2
      guard drawn(suffix, at: x + digits * advance) else { continue }
      var value = 0
      for place in 0..<digits {
        guard let digit = (0...9).first(where: { drawn(String($0), at: x + place * advance) }) else { return nil }
        value = value * 10 + digit
      }
      return value
    }
    return nil
  }

  /// A one-line full-screen message on a 1280x800 screen, laid out as docs/buttons.md (Overlay) says: the largest whole
  /// scale up to 4 at which it fits 90% of the width, centred both ways.
  static func messageMismatches(in screen: PPM, _ text: String, background: (Int, Int, Int)) -> [String] {
    guard let font else { return ["no font"] }
    let natural = text.unicodeScalars.count * font.glyphWidth
    let scale = max(1, min(4, screen.width * 9 / 10 / natural))
    let x = (screen.width - natural * scale) / 2
    let y = (screen.height - font.glyphHeight * scale) / 2
    return mismatches(in: screen, text, x: x, y: y, scale: scale, background: background)
  }
}

extension BoardDeviceTests {
  /// vivid's bars, left to right in the picture, must land where the configured turn and mirror put them.
  /// 640x360 turned a quarter fits 1280x800 as 450x800 in the middle; otherwise as 1280x720.
  @Test(arguments: [(90, false), (180, false), (270, false), (0, true)])
  func thePreviewIsTurnedAndMirroredAsConfigured(rotation: Int, mirror: Bool) throws {
    let name = "orientation-\(rotation)\(mirror ? "-mirror" : "")"
    let (config, _) = try Board.makeConfig(name: name) {
      $0.replacingOccurrences(
        of: "missing-message-seconds = 1\n",
        with: "missing-message-seconds = 1\nrotation = \(rotation)\nmirror = \(mirror ? "yes" : "no")\n")
    }
    try Board.withService(name, config: config) {
      var mismatches = ["no screendump yet"]
      var last: PPM?
      try Board.waitFor("colour bars turned \(rotation)\(mirror ? ", mirrored" : "")", seconds: 120) {
        let screen = try Board.screendump()
        last = screen
        // Positions along the bars' run, in the order the picture's left-to-right bars should appear.
        switch (rotation, mirror) {
        case (90, _): mismatches = VividBars.mismatches(in: { along, across in screen.pixel(across, along) }, x: 0, width: 800, y: 640)
        case (270, _): mismatches = VividBars.mismatches(in: { along, across in screen.pixel(across, 799 - along) }, x: 0, width: 800, y: 640)
        default: mismatches = VividBars.mismatches(in: { along, y in screen.pixel(1279 - along, y) }, x: 0, width: 1280, y: 400)
        }
        if mirror {
          // The mode label is drawn on the panel, never mirrored: "STILL" at the top-left margin, scale 2. In the
          // same dump as the bars: bochs has no vblank, so a dump can catch a buffer drawn up to the picture
          // but not yet the overlay (seen once in a clean-clone run).
          mismatches += OverlayText.mismatches(in: screen, "STILL", x: 25, y: 25, scale: 2, background: (0, 0, 0))
        }
        return mismatches.isEmpty
      }
      #expect(mismatches.isEmpty, "\(mismatches)")
      if let screen = last, rotation == 90 {
        #expect(screen.pixel(200, 400) == (0, 0, 0) && screen.pixel(1080, 400) == (0, 0, 0), "pillarbox bars black")
      }
      let stopped = try Board.kill(name)
      #expect(stopped.stdout.contains("exited 0"), "\(stopped.stdout)")
    }
  }

  /// After a still, the photo decoded from its file stays on screen for the review time, whatever the camera
  /// shows meanwhile: vivid is switched to a black pattern, and the bars stay until "use photo".
  @Test func theReviewShowsTheSavedPhotoNotTheLivePicture() throws {
    let (config, _) = try Board.makeConfig(name: "review") {  // 60 s: the longest review the config allows
      $0.replacingOccurrences(of: "jpeg-quality = 90\n", with: "jpeg-quality = 90\nreview-s = 60\n")
    }
    defer { _ = try? Board.run("v4l2-ctl -d /dev/video0 -c test_pattern=0") }
    try Board.withService("review", config: config) {
      try Board.waitFor("colour bars") { VividBars.mismatches(in: try Board.screendump().pixel, x: 0, width: 1280, y: 400).isEmpty }
      try Board.click("shutter")
      try Board.waitOnShare("IMG_0001.JPG") { try Board.logs("review").contains("screen: review DCIM/100KIOSK/IMG_0001.JPG") }
      // 5 = "100% Black" in vivid's test pattern menu.
      let black = try Board.run("v4l2-ctl -d /dev/video0 -c test_pattern=5")
      try #require(black.status == 0, "\(black.stderr)")
      // Frames keep arriving, black ones: vivid draws the pattern into each buffer it fills after the switch, so
      // once more frames came than it has buffers (the service queues 4), the camera has sent black. Only then
      // does the screen tell: it keeps the photo and says so.
      let framesAtSwitch = try #require(try Board.status()["framesReceived"] as? Int)
      try Board.waitFor("black frames from the camera") {
        (try Board.status()["framesReceived"] as? Int ?? 0) > framesAtSwitch + 8
      }
      var screen = try Board.screendump()
      #expect(VividBars.mismatches(in: screen.pixel, x: 0, width: 1280, y: 400).isEmpty, "the photo's bars")
      let label = 64
      #expect(
        OverlayText.mismatches(in: screen, "Review", x: (1280 - 6 * 32) / 2, y: 800 - 25 - label, scale: 2, background: (0, 0, 0))
          .isEmpty, "the Review label")
      try Board.click("shutter")  // "use photo" (the mode button would go on to review mode)
      try Board.waitFor("the live picture, now black") {
        screen = try Board.screendump()
        return screen.pixel(640, 400) == (0, 0, 0) && screen.pixel(80, 400) == (0, 0, 0)
      }
    }
  }
}
