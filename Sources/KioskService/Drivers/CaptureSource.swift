import Camera
import KioskCore
import LinuxIO

/// What the camera session needs of a capture stream: buffers out and back, the stream's format, its zoom
/// control. `CameraStream` (V4L2) and `LibcameraCaptureStream` are the real ones; the unit tests script their own.
protocol CaptureStream: AnyObject {
  var path: String { get }
  /// The driver's name for the device: the still's EXIF Model.
  var card: String { get }
  var format: StreamFormat { get }
  var zoomControl: CameraZoomRange? { get }
  /// Watched by the loop: readable when a buffer is filled, an error when the device goes.
  var descriptor: FileDescriptor { get }
  func start() throws(CameraError)
  func dequeue() throws(CameraError) -> DequeuedBuffer?
  func withBytes<Result>(of buffer: borrowing DequeuedBuffer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result
  func requeue(_ buffer: consuming DequeuedBuffer) throws(CameraError)
  func exposureAndGain() -> (exposure100Microseconds: Int?, gain: Int?)
  func setZoom(_ value: Int) throws(CameraError)
  func stop()
}

extension CameraStream: CaptureStream {}

/// Where the camera session gets a camera when it opens one again (a retry, the camera button).
protocol CaptureSource {
  func open(_ path: String, _ settings: Config.Camera) throws(CameraError) -> any CaptureStream
  /// `device = auto`: the capture device the still-camera probe finds now, if any.
  func find(_ config: Config) -> (result: ProbeResult, path: String?)
  /// The movie camera's verdict on a camera back, without measuring its rate again.
  func movieCamera(_ config: Config) -> ProbeResult
}

/// The cameras V4L2 has, found and opened as the capability probe finds and opens them.
///
/// Under `backend = auto` it looks at V4L2 alone: the service keeps the backend its camera came from at start,
/// and a libcamera camera found on a retry could not be opened here.
struct V4L2CaptureSource: CaptureSource {
  func open(_ path: String, _ settings: Config.Camera) throws(CameraError) -> any CaptureStream {
    try CameraSession.open(path, settings)
  }

  func find(_ config: Config) -> (result: ProbeResult, path: String?) {
    let (result, found) = CapabilityProbe.stillCamera(Self.v4l2Only(config))
    return (result, found?.path)
  }

  func movieCamera(_ config: Config) -> ProbeResult {
    CapabilityProbe.movieCamera(Self.v4l2Only(config), measure: false)
  }

  private static func v4l2Only(_ config: Config) -> Config {
    var config = config
    config.camera.backend = .v4l2
    return config
  }
}
