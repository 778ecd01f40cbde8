import CLibcameraShim
import Camera
import KioskCore
import LibcameraFakes
import Testing

@testable import LibcameraCamera

/// Zoom through libcamera's ScalerCrop: the crop each factor asks for, and the capture stream asking for it on
/// every request after a change. No camera on the virtual board has ScalerCrop (libcamera 0.4.0 gives it only
/// in its ipu3, mali-c55, rkisp1 and Raspberry Pi pipelines), so these limits are shaped like a Pi's.
@Suite struct SensorCropTests {
  /// Camera Module 3 (imx708, 4608x2592) in its binned 2304x1296 mode streaming 16:9: the default crop is the
  /// whole array; a Pi's ISP takes crops down to 32x32 of its input, 64x64 of the array binned.
  static let cameraModule3 = SensorCrop(widest: (0, 0, 4608, 2592), smallest: (64, 64))!

  static func fields(_ rect: (x: Int, y: Int, width: Int, height: Int)) -> [Int] { [rect.x, rect.y, rect.width, rect.height] }
  static func fields(_ rect: kioskcam_lc_rect?) -> [Int]? {
    rect.map { [Int($0.x), Int($0.y), Int($0.width), Int($0.height)] }
  }

  @Test func theCropShrinksAboutTheCentreOnEvenPixels() {
    let crop = Self.cameraModule3
    #expect(crop.maximumHundredths == 4050, "2592 rows down to 64")
    #expect(crop.range == CameraZoomRange(minimum: 100, maximum: 4050, step: 1, kind: .sensorCrop))
    #expect(Self.fields(crop.rectangle(hundredths: 100)) == [0, 0, 4608, 2592])
    #expect(Self.fields(crop.rectangle(hundredths: 200)) == [1152, 648, 2304, 1296])
    #expect(Self.fields(crop.rectangle(hundredths: 250)) == [1382, 778, 1842, 1036])
    #expect(Self.fields(crop.rectangle(hundredths: 90)) == [0, 0, 4608, 2592], "never wider than the default")
    let tightest = crop.rectangle(hundredths: 100_000)
    #expect(tightest.height == 64 && tightest.width >= 64, "never below the pipeline's smallest crop")
    for factor in stride(from: 100, through: 4050, by: 37) {
      let cut = crop.rectangle(hundredths: factor)
      for value in Self.fields(cut) { #expect(value % 2 == 0) }
      #expect(cut.x >= 0 && cut.y >= 0 && cut.x + cut.width <= 4608 && cut.y + cut.height <= 2592)
      #expect(abs(cut.x - (4608 - cut.x - cut.width)) <= 2 && abs(cut.y - (2592 - cut.y - cut.height)) <= 2)
    }
  }

  /// A 4:3 sensor (imx219, 3280x2464) streaming 16:9: the pipeline's default is already cut to 16:9, and the
  /// zoom keeps to it, offset and all, rather than going back to the whole array.
  @Test func aDefaultCutToTheStreamsShapeKeepsItsShapeAndPlace() {
    let crop = SensorCrop(widest: (0, 310, 3280, 1844), smallest: (64, 64))!
    let cut = crop.rectangle(hundredths: 200)
    #expect(Self.fields(cut) == [820, 770, 1640, 922])
    #expect(abs(Double(cut.width) / Double(cut.height) - 3280.0 / 1844.0) < 0.01)
  }

  @Test func noCropOrOneThatCannotShrinkIsNoZoom() {
    #expect(SensorCrop(widest: (0, 0, 0, 0), smallest: (0, 0)) == nil, "zero sizes: the camera has no ScalerCrop")
    #expect(SensorCrop(widest: (0, 0, 640, 480), smallest: (640, 480))?.range == nil)
  }

  @Test func everyRequestAfterAZoomAsksForItsCrop() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(LibcameraCaptureStreamTests.sensor)
    camera.scalerCrop = (kioskcam_lc_rect(x: 0, y: 0, width: 4608, height: 2592), kioskcam_lc_size(width: 64, height: 64))
    let (stream, manager) = try LibcameraCaptureStreamTests().open(camera, format: .nv12, size: Size(width: 4, height: 3), in: fake)
    #expect(stream.zoomControl == Self.cameraModule3.range)
    try stream.start()
    #expect(camera.queuedCrops.count == 4 && camera.queuedCrops.allSatisfy { $0 == nil }, "the pipeline's own crop until asked")

    let picture = [[UInt8](repeating: 16, count: 12), [UInt8](repeating: 128, count: 8)]
    func cycle(_ sequence: UInt32) throws {
      camera.complete(sequence: sequence, timestampNanoseconds: UInt64(sequence), planes: picture)
      guard let buffer = try stream.dequeue() else { throw LibcameraCaptureStreamTests.NoFrame() }
      try stream.requeue(buffer)
    }
    try stream.setZoom(200)
    try cycle(1)
    try cycle(2)
    #expect(camera.queuedCrops.suffix(2).map(Self.fields) == [[1152, 648, 2304, 1296], [1152, 648, 2304, 1296]])
    try stream.setZoom(100)
    try cycle(3)
    #expect(Self.fields(camera.queuedCrops.last!) == [0, 0, 4608, 2592], "1.0x is the widest crop, asked for")
    // A failed frame's buffer goes straight back, with the crop too.
    camera.complete(sequence: 4, timestampNanoseconds: 4, planes: [[]], status: .error)
    try stream.setZoom(400)
    #expect(try LibcameraCaptureStreamTests().nothingWaiting(stream), "the failed frame is not lent")
    #expect(Self.fields(camera.queuedCrops.last!) == [1728, 972, 1152, 648])
    withExtendedLifetime(manager) {}
  }

  @Test func aCameraWithoutScalerCropHasNoZoomControl() throws {
    let fake = FakeLibcamera()
    let camera = FakeLibcameraCamera(LibcameraCaptureStreamTests.webcam)
    let (stream, manager) = try LibcameraCaptureStreamTests().open(camera, format: .yuyv, size: Size(width: 8, height: 2), in: fake)
    #expect(stream.zoomControl == nil)
    #expect(throws: CameraError.self) { try stream.setZoom(200) }
    withExtendedLifetime(manager) {}
  }
}
