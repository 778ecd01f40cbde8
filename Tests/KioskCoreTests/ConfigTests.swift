#if canImport(Glibc)
  import Glibc
#endif
import Testing

@testable import KioskCore

@Suite struct ConfigTests {
  func parse(_ text: String) -> Result<Config, ConfigProblems> {
    Config.parse(Array(text.utf8), file: "test.conf")
  }

  @Test func emptyFileGivesTheDocumentedDefaults() throws {
    let config = try parse("").get()
    #expect(config == Config())
    #expect(config.camera.device == "auto")
    #expect(config.camera.format == .yuyv)
    #expect(config.buttons.shutter == .name("GPIO17"))
    #expect(config.buttons.debounce == .milliseconds(30))
    #expect(config.roll.folderSuffix == "KIOSK")
    #expect(config.roll.mount == .any)
    // The preview's workers: every core on one or two, all but the loop's on more.
    #expect([1, 2, 3, 4, 8].map(config.display.previewWorkers(cores:)) == [1, 2, 2, 3, 7])
  }

  @Test func everyKeyIsRead() throws {
    let config = try parse(
      """
      # a comment
      [camera]
      device = /dev/video0
      format = YUYV
      size = 1280x720   # trailing comment
      frame-rate = 15
      rotation = 270
      [display]
      device = none
      missing-message-seconds = 3
      preview-workers = 3
      [buttons]
      chip = gpio-sim.0-node0
      shutter = 3
      mode = mode
      active-low = no
      bias = pull-down
      debounce-ms = 50
      [outputs]
      flash = 5
      flash-lead-ms = 250
      flash-movies = yes
      [capture]
      jpeg-quality = 75
      zoom-maximum = 2.5
      zoom-step = 0.25
      [movie]
      size = 1280x720
      frame-rate = 12
      quality = Medium
      [review]
      idle-s = 15
      allow-delete = yes
      [roll]
      path = /srv/roll
      folder-suffix = BOOTH
      reserve-mb = 500
      mount = label:KIOSKROLL
      [capabilities]
      required = still-camera, display
      optional = none
      """
    ).get()
    #expect(config.camera.device == "/dev/video0")
    #expect(config.camera.size == Size(width: 1280, height: 720))
    #expect(config.camera.frameRate == 15)
    #expect(config.display.previewWorkers(cores: 8) == 3, "as set, whatever the cores")
    #expect(config.display.device == "none")
    #expect(config.buttons.chip == "gpio-sim.0-node0")
    #expect(config.buttons.shutter == .offset(3))
    #expect(config.buttons.mode == .name("mode"))
    #expect(config.buttons.activeLow == false)
    #expect(config.buttons.bias == .pullDown)
    #expect(config.buttons.debounce == .milliseconds(50))
    #expect(config.capture.jpegQuality == 75)
    #expect(config.capture.zoomMaximum == 250 && config.capture.zoomStep == 25)
    #expect(config.roll.path == "/srv/roll")
    #expect(config.roll.folderSuffix == "BOOTH")
    #expect(config.display.missingMessage == .seconds(3))
    #expect(config.movie.size == Size(width: 1280, height: 720))
    #expect(config.movie.frameRate == 12)
    #expect(config.movie.quality == .medium)
    #expect(config.outputs.flash == .offset(5))
    #expect(config.outputs.flashLead == .milliseconds(250))
    #expect(config.outputs.flashForMovies)
    #expect(config.outputs.lines.map(\.0) == [.flash])
    #expect(config.review.idle == .seconds(15))
    #expect(config.review.allowDelete)
    #expect(config.roll.reserveMegabytes == 500)
    #expect(config.roll.mount == .label("KIOSKROLL"))
    #expect(config.capabilities.required == [.stillCamera, .display])
    #expect(config.capabilities.optional == [])
    #expect(config.camera.rotation == 270)
    #expect(config.roll.reserveBytes == 500 * 1_048_576)
  }

  @Test(arguments: [
    ("any", RollMount.any), ("separate", .separate), ("mount-point", .mountPoint),
    ("uuid:1234-ABCD", .uuid("1234-ABCD")), ("label:ROLL", .label("ROLL")),
  ])
  func rollMounts(text: String, expected: RollMount) throws {
    #expect(try parse("[roll]\nmount = \(text)").get().roll.mount == expected)
  }

  @Test func aCapabilityNamedInOneListLeavesTheOthersDefault() throws {
    let optionalCamera = try parse("[capabilities]\noptional = still-camera").get().capabilities
    #expect(optionalCamera.optional == [.stillCamera])
    #expect(optionalCamera.required == [.shutterButton, .cameraRoll])
    let requiredDisplay = try parse("[capabilities]\nrequired = display shutter-button").get().capabilities
    #expect(requiredDisplay.required == [.display, .shutterButton])
    #expect(requiredDisplay.optional == [.stillCamera, .movieCamera, .modeButton, .cameraRoll, .flash, .zoom, .h264Encoder, .microphone])
    #expect(try parse("[capabilities]\nrequired = none").get().capabilities.required == [])
  }

  /// Every choice is one of its words; format, quality and yes/no whatever their case, a quarter turn as a number.
  @Test func choicesAreReadByTheirWords() throws {
    let config = try parse(
      "[camera]\nformat = MJPEG\nrotation = +90\n[display]\nrotation = 0180\nmirror = ON\n[buttons]\nbias = as-is\n"
        + "[movie]\nquality = LOW\n"
    ).get()
    #expect(config.camera.format == .mjpeg)
    #expect(config.camera.rotation == 90)
    #expect(config.display.rotation == 180)
    #expect(config.display.mirror)
    #expect(config.buttons.bias == .asIs)
    #expect(config.movie.quality == .low)
  }

  @Test func movieAudioIsAutoNoneOrAPCMName() throws {
    #expect(try parse("").get().movie.audio == .auto)
    #expect(try parse("[movie]\naudio = NONE").get().movie.audio == .none)
    #expect(try parse("[movie]\naudio = plughw:CARD=Loopback,DEV=1").get().movie.audio == .device("plughw:CARD=Loopback,DEV=1"))
    // Without a microphone to give it, or with Motion-JPEG that takes none, the capability is not fitted.
    #expect(CapabilityGate(try parse("[movie]\naudio = none").get()).role(of: .microphone) == .unused)
    #expect(CapabilityGate(try parse("[movie]\ncodec = mjpeg").get()).role(of: .microphone) == .unused)
    #expect(CapabilityGate(try parse("").get()).role(of: .microphone) == .optional)
  }

  @Test(arguments: ["45", "-90", "360", "upside-down"])
  func rotationIsAQuarterTurn(value: String) {
    #expect(throws: ConfigProblems.self) { try parse("[camera]\nrotation = \(value)").get() }
  }

  @Test func everyProblemIsReportedWithFileAndLine() {
    let result = parse(
      """
      [camera]
      size = big
      frame-rate = 1000
      colour = red
      [camera]
      [lights]
      on = yes
      [roll]
      path = relative/path
      path = /again
      orphan line
      """)
    guard case .failure(let problems) = result else {
      Issue.record("a bad file parsed")
      return
    }
    let lines = problems.problems.map(\.line)
    #expect(lines == [2, 3, 4, 5, 6, 9, 10, 11])
    let text = problems.description
    #expect(text.contains("test.conf:2: camera.size: expected WIDTHxHEIGHT"))
    #expect(text.contains("test.conf:3: camera.frame-rate: 1000 is out of range 1...240"))
    #expect(text.contains("test.conf:4: unknown key 'colour' in [camera]"))
    #expect(text.contains("test.conf:5: section [camera] appears twice"))
    #expect(text.contains("test.conf:6: unknown section [lights]"))
    #expect(text.contains("test.conf:9: roll.path: expected an absolute path"))
    #expect(text.contains("test.conf:10: duplicate key 'path' in [roll] (first set on line 9)"))
    #expect(text.contains("test.conf:11: expected 'key = value'"))
  }

  @Test func bytesThatAreNotTextAreProblemsNotCrashes() {
    var bytes = Array("[camera]\nsize = 640x360\n".utf8)
    bytes += [0x66, 0x6F, 0x00, 0x3D, 0x31, 0x0A]  // a NUL inside a key
    bytes += [0x6B, 0x20, 0x3D, 0x20, 0xFF, 0xFE, 0x0A]  // invalid UTF-8
    bytes += Array(repeating: UInt8(ascii: "a"), count: IniFile.maximumLineLength + 1)
    guard case .failure(let problems) = Config.parse(bytes, file: "f") else {
      Issue.record("binary garbage parsed")
      return
    }
    #expect(problems.problems.map(\.message) == [
      "NUL byte in line", "not valid UTF-8", "line longer than \(IniFile.maximumLineLength) bytes",
    ])
    #expect(problems.problems.map(\.line) == [3, 4, 5])
  }

  @Test(arguments: [
    ("[buttons]\nshutter = none", nil as LineReference?),
    ("[buttons]\nshutter = 0", .offset(0)),
    ("[buttons]\nshutter = GPIO17", .name("GPIO17")),
  ])
  func lineReferences(text: String, expected: LineReference?) throws {
    #expect(try parse(text).get().buttons.shutter == expected)
  }

  @Test(arguments: ["12345678901234567890", "-1", "0x10", " ", "9.5"])
  func numbersThatAreNotInRangeOrNotNumbers(value: String) {
    #expect(throws: ConfigProblems.self) { try parse("[capture]\njpeg-quality = \(value)").get() }
  }
}

/// The shipped configuration documents every key with its default: parsed, it must equal `Config()`.
@Suite struct ShippedConfigTests {
  static let path = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
    .prepending("/") + "/rootfs-overlay/etc/kioskcam/kioskcam.conf"

  @Test func theShippedFileIsTheDefaults() throws {
    let bytes = try readFile(Self.path)
    #expect(try Config.parse(bytes, file: Self.path).get() == Config())
  }

  @Test func theShippedFileNamesEveryKeyOfTheSchema() throws {
    let (entries, _, problems) = IniFile.parse(try readFile(Self.path), file: Self.path)
    #expect(problems.isEmpty)
    let shipped = Set(entries.map { "\($0.section).\($0.key)" })
    let known = Set(Config.schema.flatMap { section, keys in keys.keys.map { "\(section).\($0)" } })
    #expect(shipped == known)
  }
}

extension String {
  fileprivate func prepending(_ prefix: String) -> String { prefix + self }
}

func readFile(_ path: String) throws -> [UInt8] {
  guard let file = fopen(path, "rb") else { throw ReadFailure(path: path) }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  while true {
    let count = fread(&chunk, 1, chunk.count, file)
    if count == 0 { break }
    bytes += chunk[0..<count]
  }
  return bytes
}

private struct ReadFailure: Error { let path: String }

/// The movie presets' frame sizes: halved until inside the bound, never upscaled, never reshaped.
struct MovieQualityTests {
  @Test(arguments: [
    (MovieQuality.high, 3840, 2160, 0), (.medium, 1920, 1080, 1), (.medium, 1280, 720, 0), (.medium, 3840, 2160, 2),
    (.low, 640, 360, 1), (.low, 480, 360, 0), (.low, 1920, 1080, 2), (.low, 320, 240, 0), (.medium, 1281, 720, 1),
  ])
  func framesAreHalvedUntilTheyFit(preset: MovieQuality, width: Int, height: Int, halvings: Int) {
    #expect(preset.halvings(width: width, height: height) == halvings)
  }

  @Test func lowerPresetsCompressHarder() {
    #expect(MovieQuality.high.jpegQuality > MovieQuality.medium.jpegQuality)
    #expect(MovieQuality.medium.jpegQuality > MovieQuality.low.jpegQuality)
  }
}

struct CameraCycleTests {
  @Test func severalPathsAreTheCycleAndTheFirstIsUsedAtStart() throws {
    let config = try Config.parse(Array("[camera]\ndevice = /dev/video0, /dev/v4l/by-id/usb-cam-video-index0\n".utf8), file: "k.conf").get()
    #expect(config.camera.device == "/dev/video0")
    #expect(config.camera.cycle == ["/dev/video0", "/dev/v4l/by-id/usb-cam-video-index0"])
    #expect(try Config.parse(Array("[camera]\ndevice = /dev/video0\n".utf8), file: "k.conf").get().camera.cycle == [])
  }
}

