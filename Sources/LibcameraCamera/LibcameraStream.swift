#if canImport(Glibc)
  import Glibc
#endif
import CLibcameraShim
import Camera
import KioskCore
import LinuxIO

/// A frame libcamera filled, out of the camera until `requeue` gives it back (the compiler sees to that).
public struct LibcameraFrame: ~Copyable {
  public let index: Int
  public let sequence: UInt32
  /// Nanoseconds: the sensor's timestamp (controls::SensorTimestamp) when `sensorTimestamp`, else the buffer's.
  public let timestampNanoseconds: UInt64
  public let sensorTimestamp: Bool
  /// False when libcamera reports the frame as failed: its bytes are not a picture.
  public let complete: Bool
  public let bytesUsed: [Int]
  /// controls::ExposureTime in microseconds and controls::AnalogueGain, where the pipeline reports them.
  public let exposureMicroseconds: Int?
  public let analogueGain: Float?
}

/// One acquired libcamera camera streaming one viewfinder stream into mmapped buffers. The eventfd is watched
/// by the loop; `dequeue` returns nil when nothing is waiting and throws `.unplugged` once the camera is gone.
public final class LibcameraStream {
  public let id: String
  public let granted: kioskcam_lc_stream
  private let manager: LibcameraManager
  private let handle: OpaquePointer
  private let buffers = MappedBuffers()
  private var api: kioskcam_lc_api { manager.library.api }

  public init(_ manager: LibcameraManager, id: String, choice: LibcameraStreamChoice, bufferCount: Int = 4)
    throws(CameraError)
  {
    self.manager = manager
    self.id = id
    let api = manager.library.api
    var opened: OpaquePointer?
    try LibcameraCall.check { api.kioskcam_lc_camera_open(manager.handle, id, &opened, $0, $1) }
    handle = opened!
    // From here deinit closes the camera whatever throws next.
    var stream = kioskcam_lc_stream()
    let fourcc = choice.fourcc.utf8.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    do throws(CameraError) {
      try LibcameraCall.check {
        api.kioskcam_lc_camera_configure(
          opened, fourcc, UInt32(choice.size.width), UInt32(choice.size.height), UInt32(bufferCount), &stream, $0, $1)
      }
      granted = stream
      for index in 0..<stream.buffer_count {
        var planes = [kioskcam_lc_plane](repeating: kioskcam_lc_plane(), count: Int(KIOSKCAM_LC_MAX_PLANES))
        var count: UInt32 = 0
        try LibcameraCall.check { api.kioskcam_lc_buffer_planes(opened, index, &planes, &count, $0, $1) }
        let layout = PlaneLayout(planes: planes.prefix(Int(count)).map { ($0.fd, Int($0.offset), Int($0.length)) })
        do { try buffers.add(layout) } catch { throw CameraError.io(error) }
      }
    } catch {
      api.kioskcam_lc_camera_close(opened)
      throw error
    }
  }

  deinit { api.kioskcam_lc_camera_close(handle) }

  /// Readable when a frame completed or the camera went away; the stream owns it.
  public var descriptor: FileDescriptor { FileDescriptor(rawValue: api.kioskcam_lc_camera_eventfd(handle)) }

  /// Starts the camera and queues every buffer (cropped on the sensor's side to `crop` when given);
  /// `frameRate` > 0 fixes the frame duration where the camera lets it be set (controls::FrameDurationLimits),
  /// 0 leaves the pipeline's.
  public func start(frameRate: Int = 0, crop: (x: Int, y: Int, width: Int, height: Int)? = nil) throws(CameraError) {
    try LibcameraCall.check { api.kioskcam_lc_camera_start(handle, UInt32(max(0, frameRate)), $0, $1) }
    for index in 0..<granted.buffer_count { try queue(Int(index), crop: crop) }
  }

  /// The next completed frame, nil when none is waiting; `.unplugged` once the camera went away.
  public func dequeue() throws(CameraError) -> LibcameraFrame? {
    var frame = kioskcam_lc_frame()
    let status = try LibcameraCall.status(passing: [-EAGAIN]) { api.kioskcam_lc_camera_dequeue(handle, &frame, $0, $1) }
    if status == -EAGAIN { return nil }
    let used = withUnsafeBytes(of: frame.bytes_used) { raw in
      raw.bindMemory(to: UInt32.self).prefix(Int(frame.plane_count)).map(Int.init)
    }
    return LibcameraFrame(
      index: Int(frame.index), sequence: frame.sequence, timestampNanoseconds: frame.timestamp_ns,
      sensorTimestamp: frame.sensor_timestamp != 0, complete: frame.status == UInt32(KIOSKCAM_LC_FRAME_SUCCESS),
      bytesUsed: used, exposureMicroseconds: frame.exposure_us >= 0 ? Int(frame.exposure_us) : nil,
      analogueGain: frame.analogue_gain > 0 ? frame.analogue_gain : nil)
  }

  /// The frame's planes, each cut to the bytes libcamera filled.
  public func withPlanes<Result>(of frame: borrowing LibcameraFrame, _ body: ([UnsafeRawBufferPointer]) -> Result)
    -> Result
  {
    body(planes(ofBuffer: frame.index, used: frame.bytesUsed))
  }

  /// Buffer `index`'s planes, each cut to `used` (a plane with no count is whole).
  func planes(ofBuffer index: Int, used: [Int]) -> [UnsafeRawBufferPointer] {
    buffers.planes[index].enumerated().map { plane, bytes in
      UnsafeRawBufferPointer(rebasing: bytes[..<min(bytes.count, plane < used.count ? used[plane] : bytes.count)])
    }
  }

  /// Buffer `index`'s planes whole, as mapped: where they lie relative to each other.
  func mappedPlanes(ofBuffer index: Int) -> [UnsafeRawBufferPointer] { buffers.planes[index] }

  /// Gives the frame back to libcamera, cropped on the sensor's side to `crop` (controls::ScalerCrop) when given.
  public func requeue(_ frame: consuming LibcameraFrame, crop: (x: Int, y: Int, width: Int, height: Int)? = nil)
    throws(CameraError)
  {
    try queue(frame.index, crop: crop)
  }

  /// Queues buffer `index` (at start, or again after its frame was dequeued).
  func queue(_ index: Int, crop: (x: Int, y: Int, width: Int, height: Int)?) throws(CameraError) {
    if let crop {
      var rectangle = kioskcam_lc_rect(
        x: Int32(crop.x), y: Int32(crop.y), width: UInt32(crop.width), height: UInt32(crop.height))
      try LibcameraCall.check { api.kioskcam_lc_camera_queue(handle, UInt32(index), &rectangle, $0, $1) }
    } else {
      try LibcameraCall.check { api.kioskcam_lc_camera_queue(handle, UInt32(index), nil, $0, $1) }
    }
  }

  public func stop() throws(CameraError) {
    try LibcameraCall.check { api.kioskcam_lc_camera_stop(handle, $0, $1) }
  }
}
