import CLibcameraShim
import KioskCore

/// Zoom by libcamera's ScalerCrop: the rectangle of the sensor's pixel array the ISP scales to the stream.
/// Cropping there, before the picture is scaled down, keeps detail a crop of the finished frame has lost: on a
/// Camera Module 3 (4608x2592) streaming 1920x1080, a 2.4x crop still reads one sensor pixel per output pixel.
///
/// The zoom is the pipeline's default crop (the widest, at the stream's aspect ratio) shrunk about its centre by
/// the factor, down to the smallest crop the pipeline takes.
struct SensorCrop {
  /// controls::ScalerCrop's default, in the pixel array's coordinates.
  let widest: (x: Int, y: Int, width: Int, height: Int)
  /// Its smallest size.
  let smallest: (width: Int, height: Int)

  /// Nil when a size is zero: the camera has no ScalerCrop.
  init?(widest: (x: Int, y: Int, width: Int, height: Int), smallest: (width: Int, height: Int)) {
    guard widest.width > 0, widest.height > 0, smallest.width > 0, smallest.height > 0 else { return nil }
    self.widest = widest
    self.smallest = smallest
  }

  /// The limits the shim reported at configure.
  init?(_ granted: kioskcam_lc_stream) {
    let (widest, smallest) = (granted.crop_default, granted.crop_minimum)
    self.init(
      widest: (Int(widest.x), Int(widest.y), Int(widest.width), Int(widest.height)),
      smallest: (Int(smallest.width), Int(smallest.height)))
  }

  /// The largest factor, in hundredths, that keeps the crop at least the smallest size.
  var maximumHundredths: Int {
    min(widest.width * 100 / smallest.width, widest.height * 100 / smallest.height)
  }

  /// The zoom's range, nil when the smallest crop leaves no step beyond 1.0x.
  var range: CameraZoomRange? {
    let maximum = maximumHundredths
    return maximum > 100 ? CameraZoomRange(minimum: 100, maximum: maximum, step: 1, kind: .sensorCrop) : nil
  }

  /// The crop at `hundredths` (clamped to the range): each side 100/hundredths of the widest, on even
  /// coordinates and sizes (sensors read pixels in Bayer pairs), never below the smallest, about the centre.
  func rectangle(hundredths: Int) -> (x: Int, y: Int, width: Int, height: Int) {
    let factor = max(100, min(hundredths, maximumHundredths))
    guard factor > 100 else { return widest }
    let cut = Zoom.centredCut(width: widest.width, height: widest.height, keeping: 100, of: factor, minimum: smallest)
    return (widest.x + cut.x, widest.y + cut.y, cut.width, cut.height)
  }
}
