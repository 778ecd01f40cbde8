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

  @Test(arguments: [
    "\\_SB_.PCI0-1:1.0-1d6b:0102", "/base/soc/i2c0mux/i2c@1/imx219@10",
    "/base/scb/pcie@7d500000/pci@0,0/usb@0,0-1:1.0-046d:0825",
  ])
  func aLibcameraCameraIdIsOneDeviceUnderLibcamera(id: String) throws {
    for backend in ["libcamera", "auto"] {
      let config = try parse("[camera]\nbackend = \(backend)\ndevice = \(id)\n").get()
      #expect(config.camera.device == id && config.camera.cycle.isEmpty)
    }
  }

  @Test func aLibcameraCameraIdUnderV4L2IsAProblemOnTheDevicesLine() throws {
    let problems = try #require(parse("[camera]\ndevice = \\_SB_.PCI0-1:1.0-1d6b:0102\n").failure)
    #expect(
      problems.description
        == "kiosk.conf:2: camera.device: '\\_SB_.PCI0-1:1.0-1d6b:0102' is a libcamera camera id, not a V4L2 device: "
        + "set [camera] backend = libcamera (or auto), or separate cameras with commas, each a path")
    let commas = try #require(parse("[camera]\ndevice = /base/scb/pci@0,0/usb@0,0-1\nbackend = v4l2\n").failure)
    #expect(commas.description.hasPrefix("kiosk.conf:2: camera.device: '/base/scb/pci@0,0/usb@0,0-1' is a libcamera camera id"))
  }

  @Test func pathsSeparatedByCommasStillCycle() throws {
    let config = try parse("[camera]\nbackend = libcamera\ndevice = /base/a/imx219@10, /base/b/imx708@1a\n").get()
    #expect(config.camera.cycle == ["/base/a/imx219@10", "/base/b/imx708@1a"])
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
