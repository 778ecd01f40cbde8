import KioskCore
import Testing

@testable import LibcameraCamera

/// The adapter's pure parts: which format and size a camera's listing gives, and where planes lie in maps.
@Suite struct LibcameraChoiceTests {
  static let imx708 = LibcameraCameraInfo(
    id: "/base/soc/i2c0mux/i2c@1/imx708@1a", model: "imx708", location: "back",
    formats: [
      LibcameraFormatInfo(name: "YUV420", fourcc: "YU12", sizeRange: true, sizes: [Size(width: 64, height: 64), Size(width: 4608, height: 2592)]),
      LibcameraFormatInfo(name: "NV12", fourcc: "NV12", sizeRange: true, sizes: [Size(width: 64, height: 64), Size(width: 4608, height: 2592)]),
    ], scalerCrop: true, autofocus: true)
  static let webcam = LibcameraCameraInfo(
    id: "\\_SB_.PCI0-2:1.0-046d:0825", model: "UVC Camera (046d:0825)", location: "external",
    formats: [
      LibcameraFormatInfo(name: "MJPEG", fourcc: "MJPG", sizeRange: false, sizes: [Size(width: 640, height: 480), Size(width: 1280, height: 720)]),
      LibcameraFormatInfo(name: "YUYV", fourcc: "YUYV", sizeRange: false, sizes: [Size(width: 640, height: 480)]),
    ], scalerCrop: false, autofocus: false)

  @Test func theConfiguredFormatWinsWhenOffered() throws {
    let choice = try LibcameraStreamChoice.choose(Self.webcam, preferring: .yuyv, size: Size(width: 640, height: 480)).get()
    #expect(choice == LibcameraStreamChoice(format: "YUYV", fourcc: "YUYV", size: Size(width: 640, height: 480)))
  }

  @Test func otherwiseNV12BeforeMJPEGAndNeverYUV420() throws {
    let sensor = try LibcameraStreamChoice.choose(Self.imx708, preferring: .yuyv, size: Size(width: 1920, height: 1080)).get()
    #expect(sensor.format == "NV12")
    // The ISP offers YUV420 first; its three planes fit no frame path, so a camera offering only it has nothing.
    let yuv420Only = LibcameraCameraInfo(
      id: Self.imx708.id, model: "imx708", location: "back", formats: [Self.imx708.formats[0]], scalerCrop: true,
      autofocus: true)
    #expect(
      LibcameraStreamChoice.choose(yuv420Only, preferring: .nv12, size: Size(width: 640, height: 480))
        == .failure(LibcameraChoiceFailure(reason: "none of NV12 MJPEG YUYV at 640x480 (offers YUV420 64x64-4608x2592)")))
    let webcam = try LibcameraStreamChoice.choose(Self.webcam, preferring: .nv12, size: Size(width: 1280, height: 720)).get()
    #expect(webcam.format == "MJPEG")
  }

  @Test func aSizeOutsideEveryOfferIsRefusedWithWhatIsOffered() {
    let result = LibcameraStreamChoice.choose(Self.webcam, preferring: .mjpeg, size: Size(width: 1920, height: 1080))
    #expect(
      result
        == .failure(
          LibcameraChoiceFailure(
            reason: "none of MJPEG NV12 YUYV at 1920x1080 (offers MJPEG 640x480 1280x720, YUYV 640x480)")))
  }

  @Test func aRangeTakesAnySizeBetweenItsEnds() {
    #expect((try? LibcameraStreamChoice.choose(Self.imx708, preferring: .nv12, size: Size(width: 4608, height: 2592)).get()) != nil)
    #expect((try? LibcameraStreamChoice.choose(Self.imx708, preferring: .nv12, size: Size(width: 4609, height: 2592)).get()) == nil)
  }

  @Test func planesSharingOneDmabufAreOneMapToTheirFurthestEnd() {
    // NV12 640x480 as libcamera's allocators give it: one fd, chroma after luma.
    let layout = PlaneLayout(planes: [(fd: 7, offset: 0, length: 307_200), (fd: 7, offset: 307_200, length: 153_600)])
    #expect(layout.maps == [PlaneLayout.Map(fd: 7, length: 460_800)])
    #expect(layout.planes.map(\.map) == [0, 0])
    #expect(layout.planes.map(\.offset) == [0, 307_200])
  }

  @Test func planesInTheirOwnDmabufsAreMappedEach() {
    let layout = PlaneLayout(planes: [(fd: 3, offset: 0, length: 100), (fd: 4, offset: 0, length: 50), (fd: 5, offset: 0, length: 50)])
    #expect(layout.maps.map(\.fd) == [3, 4, 5])
    #expect(layout.planes.map(\.map) == [0, 1, 2])
  }
}
