import KioskCore
import LibcameraCamera
import Testing

@testable import KioskService

/// still-camera through libcamera: what a listing (scripted here) means for the gate, in its words.
@Suite struct LibcameraProbeTests {
  static let size = Size(width: 640, height: 360)
  static let sensor = LibcameraCameraInfo(
    id: "/base/soc/i2c0mux/i2c@1/imx219@10", model: "imx219", location: "back",
    formats: [LibcameraFormatInfo(name: "NV12", fourcc: "NV12", sizeRange: true, sizes: [Size(width: 64, height: 64), Size(width: 3280, height: 2464)])],
    scalerCrop: true, autofocus: false)

  func judge(_ report: LibcameraReport, device: String = "auto") -> Result<String, LibcameraChoiceFailure> {
    CapabilityProbe.judgeLibcamera(report, device: device, format: .yuyv, size: Self.size).map(\.evidence)
  }

  @Test func aMissingShimIsTheReason() {
    let report = LibcameraReport(version: nil, library: nil, problem: "libcamera: libkioskcam-libcamera.so not found (looked in /usr/bin, /usr/lib/kioskcam)", cameras: [])
    #expect(judge(report) == .failure(LibcameraChoiceFailure(reason: "libcamera: libkioskcam-libcamera.so not found (looked in /usr/bin, /usr/lib/kioskcam)")))
  }

  @Test func noCameraNamesTheVersionProbed() {
    let report = LibcameraReport(version: "v0.4.0", library: "/usr/lib/kioskcam/libkioskcam-libcamera.so", problem: nil, cameras: [])
    #expect(judge(report) == .failure(LibcameraChoiceFailure(reason: "libcamera v0.4.0: lists no camera")))
  }

  @Test func aCameraThatOffersTheSizePasses() {
    let report = LibcameraReport(version: "v0.4.0", library: nil, problem: nil, cameras: [Self.sensor])
    #expect(judge(report) == .success("libcamera v0.4.0: /base/soc/i2c0mux/i2c@1/imx219@10 (imx219): NV12 640x360"))
  }

  @Test func aCameraConfiguredByIdMustBeListed() {
    let report = LibcameraReport(version: "v0.4.0", library: nil, problem: nil, cameras: [Self.sensor])
    #expect(
      judge(report, device: "/base/soc/i2c0mux/i2c@0/imx708@1a")
        == .failure(LibcameraChoiceFailure(reason: "libcamera v0.4.0: no camera /base/soc/i2c0mux/i2c@0/imx708@1a: has /base/soc/i2c0mux/i2c@1/imx219@10")))
  }

  @Test func theServiceIsGivenTheCameraThatPassedByItsId() {
    var config = Config()
    config.camera.backend = .libcamera
    let report = LibcameraReport(version: "v0.4.0", library: nil, problem: nil, cameras: [Self.sensor])
    let (result, found) = CapabilityProbe.stillCamera(config, libcamera: report)
    #expect(result.passed)
    guard case .libcamera(let id) = found else {
      Issue.record("the verdict came from libcamera: \(String(describing: found))")
      return
    }
    #expect(id == Self.sensor.id)
  }

  @Test func underAutoALibcameraIdFailsOnV4L2AndPassesThroughLibcamera() {
    var config = Config()
    config.camera.backend = .auto
    config.camera.device = Self.sensor.id
    let report = LibcameraReport(version: "v0.4.0", library: nil, problem: nil, cameras: [Self.sensor])
    // The id is no V4L2 node, so V4L2 fails on it and libcamera is asked.
    let (result, found) = CapabilityProbe.stillCamera(config, libcamera: report)
    #expect(result.passed && found?.path == Self.sensor.id && found?.v4l2 == nil)
  }

  @Test func noCameraThroughLibcameraIsAFailureWithTheReason() {
    var config = Config()
    config.camera.backend = .libcamera
    let report = LibcameraReport(version: "v0.4.0", library: nil, problem: nil, cameras: [])
    let (result, found) = CapabilityProbe.stillCamera(config, libcamera: report)
    #expect(!result.passed && found == nil)
    #expect(result.evidence == "libcamera v0.4.0: lists no camera")
  }
}
