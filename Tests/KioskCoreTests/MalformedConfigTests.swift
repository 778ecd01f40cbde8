import Testing

@testable import KioskCore

/// One malformed configuration and every problem it must produce, exactly.
struct Malformed: Sendable, CustomTestStringConvertible {
  let text: String
  let problems: [(line: Int, message: String)]
  init(_ text: String, _ problems: (Int, String)...) {
    self.text = text
    self.problems = problems.map { (line: $0.0, message: $0.1) }
  }
  var testDescription: String {
    let oneLine = text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "⏎")
    return oneLine.count > 60 ? String(oneLine.prefix(60)) + "..." : oneLine
  }
}

private let capabilityNames = "still-camera, movie-camera, display, shutter-button, mode-button, camera-roll, flash, zoom, h264-encoder, microphone"
private let sectionNames = "buttons, camera, capabilities, capture, control, display, movie, outputs, review, roll"
private let mountForms = "expected any, separate, mount-point, label:NAME or uuid:UUID"
private let noList = "expected capability names separated by commas, or none"

@Suite struct MalformedConfigTests {
  static let cases: [Malformed] = [
    // Syntax.
    Malformed("x = 1", (1, "key 'x' appears before any [section]")),
    Malformed("[camera]\n= 5", (2, "missing key before '='")),
    Malformed("[camera\ndevice = auto", (1, "malformed section header '[camera'")),
    Malformed("[]", (1, "malformed section header '[]'")),
    Malformed("[camera]\nsize", (2, "expected 'key = value', found 'size'")),
    Malformed("[camera]\n[camera]", (2, "section [camera] appears twice")),
    Malformed(
      "[camera]\nsize = 640x360\nsize = 320x180", (3, "duplicate key 'size' in [camera] (first set on line 2)")),
    Malformed("[cameras]\ndevice = auto\nsize = 1x1", (1, "unknown section [cameras] (known: \(sectionNames))")),
    Malformed("[Camera]", (1, "unknown section [Camera] (known: \(sectionNames))")),
    Malformed(
      "[roll]\ncolour = red", (2, "unknown key 'colour' in [roll] (known: folder-suffix, mount, path, reserve-mb)")),
    Malformed(
      "[camera]\nDevice = auto",
      (2, "unknown key 'Device' in [camera] (known: backend, device, format, frame-rate, rotation, size)")),
    Malformed("[camera]\nx\u{0}y = 1", (2, "NUL byte in line")),
    // [camera]
    Malformed("[camera]\nsize = big", (2, "camera.size: expected WIDTHxHEIGHT such as 640x360, got 'big'")),
    Malformed("[camera]\nsize = 0x360", (2, "camera.size: expected WIDTHxHEIGHT such as 640x360, got '0x360'")),
    Malformed("[camera]\nsize = 640x", (2, "camera.size: expected WIDTHxHEIGHT such as 640x360, got '640x'")),
    Malformed(
      "[camera]\nsize = 16385x100", (2, "camera.size: expected WIDTHxHEIGHT such as 640x360, got '16385x100'")),
    Malformed("[camera]\nsize = 640X360", (2, "camera.size: expected WIDTHxHEIGHT such as 640x360, got '640X360'")),
    Malformed("[camera]\nformat = h264", (2, "camera.format: expected one of yuyv, nv12, mjpeg, got 'h264'")),
    Malformed("[camera]\nformat = MJPG", (2, "camera.format: expected one of yuyv, nv12, mjpeg, got 'MJPG'")),
    Malformed("[camera]\nrotation = 45", (2, "camera.rotation: expected 0, 90, 180 or 270, got '45'")),
    Malformed("[camera]\nrotation = right", (2, "camera.rotation: expected 0, 90, 180 or 270, got 'right'")),
    Malformed("[camera]\nframe-rate = 0", (2, "camera.frame-rate: 0 is out of range 1...240")),
    Malformed("[camera]\nframe-rate = 241", (2, "camera.frame-rate: 241 is out of range 1...240")),
    Malformed("[camera]\nframe-rate = thirty", (2, "camera.frame-rate: expected a whole number, got 'thirty'")),
    Malformed(
      "[camera]\nframe-rate = 99999999999999999999",
      (2, "camera.frame-rate: expected a whole number, got '99999999999999999999'")),
    Malformed("[camera]\nframe-rate =", (2, "camera.frame-rate: expected a whole number, got ''")),
    Malformed(
      "[camera]\nframe-rate = 30# no space", (2, "camera.frame-rate: expected a whole number, got '30# no space'")),
    Malformed("[camera]\ndevice = video0", (2, "camera.device: expected auto, an absolute path, or a libcamera camera id as kioskcam probe lists it, got 'video0'")),
    // [display]
    Malformed("[display]\ndevice = hdmi", (2, "display.device: expected auto, none, an absolute path, got 'hdmi'")),
    Malformed("[display]\nrotation = -90", (2, "display.rotation: expected 0, 90, 180 or 270, got '-90'")),
    Malformed("[display]\nmirror = 2", (2, "display.mirror: expected yes or no, got '2'")),
    Malformed(
      "[display]\nmissing-message-seconds = 601", (2, "display.missing-message-seconds: 601 is out of range 0...600")),
    Malformed(
      "[display]\nmissing-message-seconds = -1", (2, "display.missing-message-seconds: -1 is out of range 0...600")),
    Malformed(
      "[display]\npreview-workers = 0",
      (2, "display.preview-workers: expected auto or a number of threads from 1 to 16, got '0'")),
    Malformed(
      "[display]\npreview-workers = all",
      (2, "display.preview-workers: expected auto or a number of threads from 1 to 16, got 'all'")),
    // [buttons]
    Malformed("[buttons]\nchip =", (2, "buttons.chip: expected auto, a chip name, path or label")),
    Malformed("[buttons]\nshutter = -3", (2, "buttons.shutter: expected a line offset, a line name, or none")),
    Malformed("[buttons]\nmode =", (2, "buttons.mode: expected a line offset, a line name, or none")),
    Malformed("[buttons]\nactive-low = maybe", (2, "buttons.active-low: expected yes or no, got 'maybe'")),
    Malformed(
      "[buttons]\nbias = up", (2, "buttons.bias: expected one of as-is, disabled, pull-up, pull-down, got 'up'")),
    Malformed(
      "[buttons]\nbias = Pull-Up", (2, "buttons.bias: expected one of as-is, disabled, pull-up, pull-down, got 'Pull-Up'")),
    Malformed("[buttons]\ndebounce-ms = 1001", (2, "buttons.debounce-ms: 1001 is out of range 0...1000")),
    Malformed(
      "[camera]\ndevice = /dev/video0, auto",
      (2, "camera.device: expected auto, a path, or different paths separated by commas, got '/dev/video0, auto'")),
    Malformed(
      "[camera]\ndevice = /dev/video0,/dev/video0",
      (2, "camera.device: expected auto, a path, or different paths separated by commas, got '/dev/video0,/dev/video0'")),
    // [capture]
    Malformed("[capture]\njpeg-quality = 0", (2, "capture.jpeg-quality: 0 is out of range 1...100")),
    Malformed("[capture]\njpeg-quality = 101", (2, "capture.jpeg-quality: 101 is out of range 1...100")),
    Malformed("[capture]\njpeg-quality = 9.5", (2, "capture.jpeg-quality: expected a whole number, got '9.5'")),
    Malformed("[capture]\nzoom-maximum = 0.5", (2, "capture.zoom-maximum: 0.5 is out of range 1.0...8.0")),
    Malformed("[capture]\nzoom-maximum = 2.", (2, "capture.zoom-maximum: expected a factor such as 2 or 2.5, got '2.'")),
    Malformed("[capture]\nzoom-step = 0.125", (2, "capture.zoom-step: expected a factor such as 2 or 2.5, got '0.125'")),
    Malformed("[capture]\nzoom-step = 0", (2, "capture.zoom-step: 0 is out of range 0.05...7.0")),
    // [movie]
    Malformed("[movie]\nsize = 640*360", (2, "movie.size: expected WIDTHxHEIGHT such as 640x360, got '640*360'")),
    Malformed("[movie]\nframe-rate = 500", (2, "movie.frame-rate: 500 is out of range 1...240")),
    Malformed("[movie]\nquality = best", (2, "movie.quality: expected one of high, medium, low, got 'best'")),
    Malformed(
      "[movie]\naudio = /dev/snd/pcmC0D0c",
      (2, "movie.audio: expected auto, none, or an ALSA capture PCM such as hw:1,0 or plughw:CARD=Loopback,DEV=1, got '/dev/snd/pcmC0D0c'")),
    Malformed(
      "[movie]\naudio = hw:Loop back",
      (2, "movie.audio: expected auto, none, or an ALSA capture PCM such as hw:1,0 or plughw:CARD=Loopback,DEV=1, got 'hw:Loop back'")),
    // [review]
    Malformed("[review]\nidle-s = 0", (2, "review.idle-s: 0 is out of range 1...3600")),
    Malformed("[review]\nallow-delete = maybe", (2, "review.allow-delete: expected yes or no, got 'maybe'")),
    Malformed("[review]\nidle = 5", (2, "unknown key 'idle' in [review] (known: allow-delete, idle-s)")),
    // [roll]
    Malformed("[roll]\npath = roll", (2, "roll.path: expected an absolute path, got 'roll'")),
    Malformed(
      "[roll]\nfolder-suffix = KIOS", (2, "roll.folder-suffix: expected 5 characters of A-Z, 0-9 or _ (DCF), got 'KIOS'")),
    Malformed(
      "[roll]\nfolder-suffix = kiosk",
      (2, "roll.folder-suffix: expected 5 characters of A-Z, 0-9 or _ (DCF), got 'kiosk'")),
    Malformed("[roll]\nreserve-mb = lots", (2, "roll.reserve-mb: expected a whole number, got 'lots'")),
    Malformed("[roll]\nreserve-mb = 16777217", (2, "roll.reserve-mb: 16777217 is out of range 0...16777216")),
    Malformed("[roll]\nmount = /mnt/card", (2, "roll.mount: \(mountForms), got '/mnt/card'")),
    Malformed("[roll]\nmount = label:", (2, "roll.mount: \(mountForms), got 'label:'")),
    Malformed("[roll]\nmount = uuid:a/b", (2, "roll.mount: \(mountForms), got 'uuid:a/b'")),
    Malformed("[roll]\nmount = Separate", (2, "roll.mount: \(mountForms), got 'Separate'")),
    // [capabilities]
    Malformed(
      "[capabilities]\nrequired = camera",
      (2, "capabilities.required: unknown capability 'camera' (known: \(capabilityNames))")),
    Malformed(
      "[capabilities]\noptional = display, lamp",
      (2, "capabilities.optional: unknown capability 'lamp' (known: \(capabilityNames))")),
    Malformed("[capabilities]\nrequired = display, display", (2, "capabilities.required: 'display' listed twice")),
    Malformed("[capabilities]\nrequired =", (2, "capabilities.required: \(noList)")),
    Malformed("[capabilities]\noptional = , ,", (2, "capabilities.optional: \(noList)")),
    Malformed(
      "[capabilities]\nrequired = display\noptional = display, mode-button",
      (3, "capabilities.optional: 'display' also required (line 2); a capability is one or the other")),
    Malformed(
      "[capabilities]\noptional = display, camera-roll\n\nrequired = camera-roll, display",
      (4, "capabilities.required: 'camera-roll', 'display' also optional (line 2); a capability is one or the other")),
    // Several problems in one file: all of them, in line order.
    Malformed(
      "[camera]\nsize = big\n[lights]\non = yes\n[roll]\npath = here\npath = /there",
      (2, "camera.size: expected WIDTHxHEIGHT such as 640x360, got 'big'"),
      (3, "unknown section [lights] (known: \(sectionNames))"),
      (6, "roll.path: expected an absolute path, got 'here'"),
      (7, "duplicate key 'path' in [roll] (first set on line 6)")),
  ]

  // A named list, not a closure in the attribute: Swift 6.0.3's compiler crashes on the closure there.
  static let casesWithProblems = cases.filter { !$0.problems.isEmpty }

  @Test(arguments: casesWithProblems)
  func eachMalformedFileGivesItsExactProblems(_ malformed: Malformed) {
    guard case .failure(let found) = Config.parse(Array(malformed.text.utf8), file: "kiosk.conf") else {
      Issue.record("parsed without a problem")
      return
    }
    #expect(found.problems.map(\.line) == malformed.problems.map(\.line))
    #expect(found.problems.map(\.message) == malformed.problems.map(\.message))
    #expect(
      found.description.split(separator: "\n").map(String.init)
        == malformed.problems.map { "kiosk.conf:\($0.line): \($0.message)" })
  }

  @Test func thereAreAtLeastFortyOfThem() {
    #expect(Self.casesWithProblems.count >= 40)
  }

  @Test func bytesThatAreNotTextAreNamedWithTheirLine() {
    let bytes: [UInt8] = Array("[camera]\n".utf8) + [0x73, 0x69, 0x7A, 0x65, 0x3D, 0xC3, 0x28, 0x0A]
      + Array(repeating: 0x23, count: IniFile.maximumLineLength + 1)
    guard case .failure(let found) = Config.parse(bytes, file: "kiosk.conf") else {
      Issue.record("parsed without a problem")
      return
    }
    #expect(found.description == "kiosk.conf:2: not valid UTF-8\nkiosk.conf:3: line longer than 4096 bytes")
  }
}
