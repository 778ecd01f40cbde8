import Testing

@testable import KioskCore

/// Two keys that ask for one GPIO line are refused by `check-config`, on the later key's line, naming both.
@Suite struct LineConflictTests {
  static let conflicts: [Malformed] = [
    Malformed(
      "[buttons]\nshutter = 3\nmode = 3",
      (3, "[buttons] mode uses line 3, which [buttons] shutter (line 2) already uses")),
    Malformed(
      "[buttons]\nshutter = 3\n[outputs]\nready = 3",
      (4, "[outputs] ready uses line 3, which [buttons] shutter (line 2) already uses")),
    // File order decides which key is named first, not the section.
    Malformed(
      "[outputs]\nready = 3\n[buttons]\nshutter = 3",
      (4, "[buttons] shutter uses line 3, which [outputs] ready (line 2) already uses")),
    Malformed(
      "[outputs]\ntally = 5\nflash = 5",
      (3, "[outputs] flash uses line 5, which [outputs] tally (line 2) already uses")),
    Malformed(
      "[buttons]\nshutter = go\ncancel = go",
      (3, "[buttons] cancel uses line 'go', which [buttons] shutter (line 2) already uses")),
    Malformed(
      "[buttons]\nshutter = 0\n[outputs]\ntally = lamp\nready = lamp",
      (5, "[outputs] ready uses line 'lamp', which [outputs] tally (line 4) already uses")),
    // Left out of the file, shutter still asks for the line named "GPIO17" (a Pi's header pin 11).
    Malformed(
      "[outputs]\nflash = GPIO17",
      (2, "[outputs] flash uses line 'GPIO17', which [buttons] shutter (by default) already uses")),
    // Every later user of a line is reported, each naming the first.
    Malformed(
      "[buttons]\nshutter = 3\nmode = 3\nzoom-in = 7\nzoom-out = 7\n[outputs]\nready = 3",
      (3, "[buttons] mode uses line 3, which [buttons] shutter (line 2) already uses"),
      (5, "[buttons] zoom-out uses line 7, which [buttons] zoom-in (line 4) already uses"),
      (7, "[outputs] ready uses line 3, which [buttons] shutter (line 2) already uses")),
    // Among the other problems of the file, in line order.
    Malformed(
      "[buttons]\nshutter = 3\nbias = up\ncamera = 3\n[outputs]\nflash-lead-ms = x",
      (3, "buttons.bias: expected one of as-is, disabled, pull-up, pull-down, got 'up'"),
      (4, "[buttons] camera uses line 3, which [buttons] shutter (line 2) already uses"),
      (6, "outputs.flash-lead-ms: expected a whole number, got 'x'")),
    // A refused value is reported once; the default it leaves behind is not a second problem.
    Malformed(
      "[buttons]\nshutter = -3\n[outputs]\nready = shutter",
      (2, "buttons.shutter: expected a line offset, a line name, or none")),
  ]

  @Test(arguments: conflicts)
  func twoKeysOnOneLineAreBothNamed(_ malformed: Malformed) {
    guard case .failure(let found) = Config.parse(Array(malformed.text.utf8), file: "kioskcam.conf") else {
      Issue.record("parsed without a problem")
      return
    }
    #expect(
      found.description.split(separator: "\n").map(String.init)
        == malformed.problems.map { "kioskcam.conf:\($0.line): \($0.message)" })
  }

  @Test(arguments: [
    // A name and an offset may be one line, but only the chip can tell.
    "[buttons]\nshutter = 3\nmode = GPIO3",
    "[buttons]\nshutter = none\nmode = shutter",
    "[buttons]\nshutter = 1\nmode = 2\ncancel = 3\ncamera = 4\nzoom-in = 5\nzoom-out = 6\n"
      + "[outputs]\ntally = 7\nready = 8\nflash = 9",
    "[buttons]\nshutter = 3\nmode = none\ncancel = none\n[outputs]\nready = none\nflash = none",
  ])
  func differentLinesPass(text: String) throws {
    _ = try Config.parse(Array(text.utf8), file: "kioskcam.conf").get()
  }

  @Test func theVirtualBoardsConfigurationPasses() throws {
    let path = ShippedConfigTests.path.replacing(
      "rootfs-overlay/etc/kioskcam/kioskcam.conf", with: "board/virtual/kioskcam.conf")
    let text = String(decoding: try readFile(path), as: UTF8.self).replacing("@ROLL@", with: "/srv/roll")
    let config = try Config.parse(Array(text.utf8), file: path).get()
    #expect(config.buttons.lines.count + config.outputs.lines.count == 5)
  }

  /// The check names a line's key from its role's raw value.
  @Test func everyRoleAndLampIsAKeyOfItsSection() {
    #expect(ButtonRole.allCases.allSatisfy { Config.schema["buttons"]?[$0.rawValue] != nil })
    #expect(Output.allCases.allSatisfy { Config.schema["outputs"]?[$0.rawValue] != nil })
  }
}
