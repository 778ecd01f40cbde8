import Foundation
import JPEGCodec
import Testing

/// Device tests: real kernel drivers on the virtual board (vivid, gpio-sim, bochs-drm), driven from outside
/// exactly as a user would. One boot serves them all; `make test` starts the board and sets the environment.
@Suite(.serialized, .enabled(if: Board.isUp, "needs the virtual board (make test boots it)"))
struct BoardDeviceTests {
  @Test func probeJSONDescribesTheBoardsDevices() throws {
    let (config, roll) = try Board.makeConfig(name: "probe")
    let result = try Board.run("\(Board.binary) probe --json --config \(config)")
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONDecoder().decode(ProbeJSON.self, from: Data(result.stdout.utf8))

    let camera = try #require(report.cameras.first { $0.driver == "vivid" }, "vivid in \(report.cameras)")
    #expect(camera.path == "/dev/video0")
    #expect(camera.capture && camera.streaming)
    #expect(camera.bus.hasPrefix("platform:vivid"))
    let yuyv = try #require(camera.formats.first { $0.fourcc == "YUYV" && !$0.emulated })
    let sizes = yuyv.sizes.map { "\($0.width)x\($0.height)" }
    for size in ["320x180", "640x360", "1280x720"] { #expect(sizes.contains(size), "\(size) in \(sizes)") }
    let vga = try #require(yuyv.sizes.first { $0.width == 640 && $0.height == 360 })
    #expect(!vga.frameRates.isEmpty)
    #expect(vga.frameRates.allSatisfy { $0.numerator > 0 && $0.denominator > 0 })
    #expect(camera.formats.contains { $0.fourcc == "NV12" })

    let card = try #require(report.displays.first, "a DRM card")
    #expect(card.path == "/dev/dri/card0")
    #expect(card.driver == "bochs-drm")
    let connector = try #require(card.connectors.first)
    #expect(connector.name == "Virtual-1")
    #expect(connector.status == "connected")
    let preferred = connector.modes.filter(\.preferred)
    #expect(preferred.count == 1)
    #expect(preferred.first.map { "\($0.width)x\($0.height)" } == "1280x800")
    #expect(connector.modes.contains { $0.width == 1920 && $0.height == 1080 })

    let chip = try #require(report.gpioChips.first { $0.label == "kioskcam-gpio" }, "gpio-sim in \(report.gpioChips)")
    #expect(chip.path.hasPrefix("/dev/gpiochip"))
    #expect(chip.lines.count == 8)
    #expect(chip.lines.map(\.name) == ["shutter", "mode", "cancel", "zoom-in", "zoom-out", "flash", "tally", "ready"])
    #expect(chip.lines.allSatisfy { !$0.used && $0.direction == "input" })

    #expect(report.storage.path == roll)
    #expect(report.storage.exists && report.storage.writable)
    #expect((report.storage.availableBytes ?? 0) > 0)
    #expect((report.storage.totalBytes ?? 0) >= (report.storage.availableBytes ?? 0))
  }

  @Test func theServiceShowsColourBarsAndOnePressSavesOneStill() throws {
    let (config, roll) = try Board.makeConfig(name: "service")
    try Board.spawn("service", [Board.binary, "run", "--config", config])
    defer { _ = try? Board.kill("service") }
    try Board.waitFor("the service to be ready") { try Board.logs("service").contains("kioskcam: ready") }

    // The preview: 640x360 fitted to the 1280x800 mode is 1280x720 with 40-pixel bars above and below.
    var mismatches: [String] = ["no screendump yet"]
    try Board.waitFor("colour bars on the display", seconds: 120) {
      let screen = try Board.screendump()
      guard screen.width == 1280, screen.height == 800 else { return false }
      mismatches = VividBars.mismatches(in: screen.pixel, x: 0, width: 1280, y: 400)
      if mismatches.isEmpty {
        #expect(screen.pixel(640, 10) == (0, 0, 0), "letterbox above")
        #expect(screen.pixel(640, 790) == (0, 0, 0), "letterbox below")
      }
      return mismatches.isEmpty
    }
    #expect(mismatches.isEmpty, "\(mismatches)")

    let line = try Board.run("gpioinfo kioskcam-gpio | grep -w shutter").stdout
    #expect(line.contains("\"kioskcam\""), "the shutter line is held by the service: \(line)")

    try Board.click("shutter")
    let first = "\(roll)/DCIM/100KIOSK/IMG_0001.JPG"
    try Board.waitFor("IMG_0001.JPG") { try Board.logs("service").contains("still DCIM/100KIOSK/IMG_0001.JPG") }
    // Let more frames go by: one press must never become a second file.
    Thread.sleep(forTimeInterval: 3)
    #expect(try jpegs(in: roll) == ["DCIM/100KIOSK/IMG_0001.JPG"])
    #expect(try hiddenFiles(in: roll).isEmpty, "no temporary file left in the roll")

    // Peers nobody here wrote read it without complaint.
    let jpeginfo = try Board.host(["/usr/bin/jpeginfo", "-c", first])
    // jpeginfo 1.6 ends a good file's line with "OK", a bad one's with "ERROR" or "WARNING".
    let verdict = jpeginfo.stdout.split(whereSeparator: \.isWhitespace).last
    #expect(jpeginfo.status == 0 && verdict?.hasPrefix("OK") == true, "jpeginfo: \(jpeginfo.stdout)")
    #expect(jpeginfo.stdout.contains("640 x  360"), "jpeginfo: \(jpeginfo.stdout)")
    let exiftool = try Board.host(["/usr/bin/exiftool", "-validate", "-FileType", "-ImageSize", "-s", first])
    #expect(exiftool.status == 0, "exiftool: \(exiftool.stderr)")
    #expect(exiftool.stdout.contains("JPEG") && exiftool.stdout.contains("640x360"), "exiftool: \(exiftool.stdout)")
    #expect(!exiftool.stderr.contains("Error"))

    // Decoded by djpeg (libjpeg-turbo's own tool) and by our decoder, the pixels are vivid's bars.
    let decodedPath = "\(Board.stateDirectory!)/test-still.ppm"
    let djpeg = try Board.host(["/usr/bin/djpeg", "-pnm", "-outfile", decodedPath, first])
    #expect(djpeg.status == 0, "djpeg: \(djpeg.stderr)")
    let decoded = try PPM(contentsOf: decodedPath)
    #expect(decoded.width == 640 && decoded.height == 360)
    #expect(VividBars.mismatches(in: decoded.pixel, x: 0, width: 640, y: 180, tolerance: 12).isEmpty)
    let ours = try JPEGDecoder.decodeRGB([UInt8](try Data(contentsOf: URL(fileURLWithPath: first))))
    let mismatchesOurs = VividBars.mismatches(
      in: { let p = ours.pixel(x: $0, y: $1); return (Int(p.r), Int(p.g), Int(p.b)) }, x: 0, width: 640, y: 180,
      tolerance: 12)
    #expect(mismatchesOurs.isEmpty, "\(mismatchesOurs)")

    try Board.click("shutter")
    try Board.waitFor("IMG_0002.JPG") { try Board.logs("service").contains("still DCIM/100KIOSK/IMG_0002.JPG") }
    #expect(try jpegs(in: roll) == ["DCIM/100KIOSK/IMG_0001.JPG", "DCIM/100KIOSK/IMG_0002.JPG"])

    let stopped = try Board.kill("service")
    #expect(stopped.stdout.contains("exited 0"), "stopped cleanly on SIGTERM: \(stopped.stdout) \(stopped.stderr)")
    #expect(try Board.logs("service").contains("stopping"))
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
    #expect(result.stderr.contains("camera:") && result.stderr.contains("/dev/dri/card0"), "\(result.stderr)")
  }

  @Test func aBadConfigPathIsOneLineAndExit78() throws {
    let result = try Board.run("\(Board.binary) run --config /etc/kioskcam/missing.conf")
    #expect(result.status == 78)
    #expect(result.stderr == "kioskcam: /etc/kioskcam/missing.conf: cannot read: No such file or directory\n")
  }

  func jpegs(in roll: String) throws -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: roll)
    var found: [String] = []
    while let path = enumerator?.nextObject() as? String {
      // Hidden names are the roll's temporary files, never published items.
      if path.hasSuffix(".JPG"), !(path as NSString).lastPathComponent.hasPrefix(".") { found.append(path) }
    }
    return found.sorted()
  }

  func hiddenFiles(in roll: String) throws -> [String] {
    try FileManager.default.subpathsOfDirectory(atPath: "\(roll)/DCIM").filter {
      ($0 as NSString).lastPathComponent.hasPrefix(".")
    }
  }
}

/// The fields of `kioskcam probe --json` that the board pins down.
struct ProbeJSON: Decodable {
  struct Camera: Decodable {
    struct Format: Decodable {
      struct Size: Decodable {
        struct Rate: Decodable {
          let numerator: UInt32
          let denominator: UInt32
        }
        let width: Int
        let height: Int
        let frameRates: [Rate]
      }
      let fourcc: String
      let emulated: Bool
      let sizes: [Size]
    }
    let path, driver, card, bus: String
    let capture, streaming: Bool
    let formats: [Format]
  }
  struct Card: Decodable {
    struct Connector: Decodable {
      struct Mode: Decodable {
        let width, height: Int
        let preferred: Bool
      }
      let name, status: String
      let modes: [Mode]
    }
    let path, driver: String
    let connectors: [Connector]
  }
  struct Chip: Decodable {
    struct Line: Decodable {
      let offset: Int
      let name: String?
      let used: Bool
      let direction: String
    }
    let path, name, label: String
    let lines: [Line]
  }
  struct Storage: Decodable {
    let path: String
    let exists, writable: Bool
    let availableBytes, totalBytes: UInt64?
  }
  let cameras: [Camera]
  let displays: [Card]
  let gpioChips: [Chip]
  let storage: Storage
}
