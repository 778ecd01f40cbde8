import Foundation
import Testing

/// `kioskcam probe --json` on the board: what it finds, and what it names as missing.
extension BoardDeviceTests {
  @Test func probeNamesWhatTheBoardLacks() throws {
    let (config, _) = try Board.makeConfig(name: "probe-lacking") {
      $0.replacingOccurrences(of: "required = still-camera, shutter-button, camera-roll", with: "required = still-camera, shutter-button, camera-roll, movie-camera")
        .replacingOccurrences(of: "mode = mode", with: "mode = nonexistent") + "[movie]\nsize = 1920x1080\nframe-rate = 25\n"
    }
    let result = try Board.run("\(Board.binary) probe --json --config \(config)")
    #expect(result.status == 0, "\(result.stderr)")
    let report = try JSONDecoder().decode(ProbeJSON.self, from: Data(result.stdout.utf8))
    let failed = report.capabilities.filter { !$0.passed }.map { "\($0.name) (\($0.role)): \($0.evidence)" }
    #expect(
      failed == [
        "movie-camera (required): /dev/video0 (vivid): YUYV 1920x1080 at most 5 fps advertised, 25 fps wanted; "
          + "/dev/video1 (vivid): YUYV 1920x1080 at most 5 fps advertised, 25 fps wanted",
        "mode-button (optional): mode button (line 'nonexistent' on gpiochip0 'kioskcam-gpio'): no such line",
      ])
    #expect(report.missingRequired == [
      "movie-camera (required): /dev/video0 (vivid): YUYV 1920x1080 at most 5 fps advertised, 25 fps wanted; "
          + "/dev/video1 (vivid): YUYV 1920x1080 at most 5 fps advertised, 25 fps wanted"
    ])
    #expect(report.mediaTypes == ["stills"])
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
    /// "camera control MIN..MAX" or "digital only"; the control itself when there is one; the formats the
    /// digital zoom can crop.
    let zoom: String
    let zoomControl: ZoomRange?
    let croppableFormats: [String]
    struct ZoomRange: Decodable {
      let minimum: Int
      let maximum: Int
    }
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
    let availableBytes, totalBytes, largestFile: UInt64?
  }
  struct Capability: Decodable {
    let name, role, evidence: String
    let passed: Bool
  }
  struct Codec: Decodable {
    let path, driver, card: String
    let takes, gives: [String]
  }
  let cameras: [Camera]
  let displays: [Card]
  let gpioChips: [Chip]
  let codecs: [Codec]
  let storage: Storage
  let capabilities: [Capability]
  let mediaTypes: [String]
  let missingRequired: [String]
}

extension BoardDeviceTests.Lines {
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
    #expect(chip.lines.allSatisfy { !$0.used })
    // Lamp lines keep the direction the last service gave them; the buttons are inputs.
    #expect(chip.lines.prefix(5).allSatisfy { $0.direction == "input" })

    // vicodec's three memory-to-memory nodes, after the cameras, and never among them.
    #expect(report.codecs.map(\.path) == ["/dev/video2", "/dev/video3", "/dev/video4"], "\(report.codecs)")
    #expect(report.codecs.allSatisfy { $0.driver == "vicodec" })
    #expect(report.codecs.first?.gives == ["FWHT"] && report.codecs.first?.takes.prefix(1) == ["YU12"])
    #expect(report.codecs.dropFirst().first?.takes == ["FWHT"])
    #expect(!report.cameras.contains { $0.driver == "vicodec" })

    #expect(report.storage.path == roll)
    #expect(report.storage.exists && report.storage.writable)
    #expect((report.storage.availableBytes ?? 0) > 0)
    #expect((report.storage.totalBytes ?? 0) >= (report.storage.availableBytes ?? 0))

    // The board's configuration wants six capabilities (movie-camera is in neither list, flash is not fitted);
    // it has them all.
    let verdicts = Dictionary(uniqueKeysWithValues: report.capabilities.map { ($0.name, $0) })
    #expect(
      report.capabilities.map(\.name) == ["still-camera", "display", "shutter-button", "mode-button", "camera-roll", "zoom"])
    #expect(report.capabilities.map(\.role) == ["required", "optional", "required", "optional", "required", "optional"])
    #expect(report.capabilities.allSatisfy { $0.passed }, "\(report.capabilities)")
    #expect(verdicts["still-camera"]?.evidence == "/dev/video0 (vivid): capture, streaming, YUYV 640x360")
    #expect(verdicts["display"]?.evidence == "/dev/dri/card0 (bochs-drm): Virtual-1 connected, 1280x800")
    #expect(verdicts["shutter-button"]?.evidence.contains("line 'shutter' on gpiochip0 'kioskcam-gpio'") == true)
    #expect(verdicts["mode-button"]?.evidence.contains("line 'mode' on gpiochip0 'kioskcam-gpio'") == true)
    #expect(verdicts["camera-roll"]?.evidence.hasPrefix("\(roll): writable, on its own file system, ") == true)
    #expect(verdicts["zoom"]?.evidence == "/dev/video0: digital to 4.0x", "vivid has no zoom control of its own")
    #expect(report.mediaTypes == ["stills"])
    #expect(report.missingRequired == [])
    // Probing requested the button lines and gave them back.
    let info = try Board.run("gpioinfo kioskcam-gpio").stdout
    #expect(!info.contains("kioskcam"), "no line left held: \(info)")
  }
}
