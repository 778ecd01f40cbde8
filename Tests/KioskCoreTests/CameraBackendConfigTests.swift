import Testing

@testable import KioskCore

/// `[camera] backend`: V4L2 unless a configuration asks, read by its words, refused with file and line.
@Suite struct CameraBackendConfigTests {
  func parse(_ text: String) -> Result<Config, ConfigProblems> {
    Config.parse(Array(text.utf8), file: "kiosk.conf")
  }

  @Test func aConfigurationWithoutTheKeyStaysOnV4L2() throws {
    #expect(try parse("[camera]\ndevice = auto\n").get().camera.backend == .v4l2)
  }

  @Test(arguments: [("v4l2", CameraBackend.v4l2), ("libcamera", .libcamera), ("auto", .auto), ("LibCamera", .libcamera)])
  func eachWordIsItsBackend(word: String, backend: CameraBackend) throws {
    #expect(try parse("[camera]\nbackend = \(word)\n").get().camera.backend == backend)
  }

  @Test func anUnknownBackendIsAProblemOnItsLine() throws {
    let problems = try #require(parse("[camera]\ndevice = auto\nbackend = picamera\n").failure)
    #expect(
      problems.description
        == "kiosk.conf:3: camera.backend: expected one of v4l2, libcamera, auto, got 'picamera'")
  }

  @Test func aDuplicateBackendNamesTheFirstLine() throws {
    let problems = try #require(parse("[camera]\nbackend = v4l2\nbackend = libcamera\n").failure)
    #expect(problems.description == "kiosk.conf:3: duplicate key 'backend' in [camera] (first set on line 2)")
  }
}

extension Result {
  fileprivate var failure: Failure? {
    if case .failure(let error) = self { error } else { nil }
  }
}
