#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import Imaging
import KioskCore
import LinuxIO

/// A driver buffer lent to us between dequeue and requeue; the compiler sees that every one goes back.
public struct DequeuedBuffer: ~Copyable {
  public let index: Int
  public let bytesUsed: Int
  public let info: FrameInfo
  /// The driver flagged the buffer as damaged (V4L2_BUF_FLAG_ERROR).
  public let damaged: Bool

  public init(index: Int, bytesUsed: Int, info: FrameInfo, damaged: Bool) {
    self.index = index
    self.bytesUsed = bytesUsed
    self.info = info
    self.damaged = damaged
  }
}

/// The negotiated stream, which may differ from what was asked: drivers round sizes.
public struct StreamFormat: Sendable, Equatable {
  public let format: PixelFormat
  public let width: Int
  public let height: Int
  public let bytesPerLine: Int
  public let imageSize: Int
  /// Only an explicit full-range flag means full range: V4L2's default for YCbCr is limited.
  public let range: YCbCrRange

  public init(format: PixelFormat, width: Int, height: Int, bytesPerLine: Int, imageSize: Int, range: YCbCrRange) {
    self.format = format
    self.width = width
    self.height = height
    self.bytesPerLine = bytesPerLine
    self.imageSize = imageSize
    self.range = range
  }
}

/// A V4L2 capture stream with mmap buffers, dequeued without blocking from the event loop.
public final class CameraStream {
  public let path: String
  /// The device's name as its driver gives it (`v4l2_capability.card`): the still's EXIF Model.
  public let card: String
  public let format: StreamFormat
  /// The camera's own zoom control (V4L2_CID_ZOOM_ABSOLUTE), found at open; nil: digital zoom only.
  public let zoomControl: CameraZoomRange?
  private let device: V4L2Device
  private let buffers: [BufferMapping]
  private var streaming = false

  /// Buffers the driver cycles through; enough that the loop can hold one while the driver fills others.
  public static let bufferCount = 4

  public init(path: String, format wanted: PixelFormat, size: Size, frameRate: Int) throws(CameraError) {
    self.path = path
    device = try V4L2Device(path: path, nonBlocking: true)
    var capability = v4l2_capability()
    try device.control("VIDIOC_QUERYCAP", CV4L2_VIDIOC_QUERYCAP(), &capability)
    let caps =
      capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
    guard caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0, caps & UInt32(V4L2_CAP_STREAMING) != 0 else {
      throw .absent("\(path): not a streaming video capture device (\(cString(capability.driver)))")
    }
    card = cString(capability.card)
    zoomControl = device.zoomRange

    var request = v4l2_format()
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    request.fmt.pix.width = UInt32(size.width)
    request.fmt.pix.height = UInt32(size.height)
    request.fmt.pix.pixelformat = Self.fourcc(wanted)
    request.fmt.pix.field = V4L2_FIELD_NONE.rawValue
    try device.control("VIDIOC_S_FMT", CV4L2_VIDIOC_S_FMT(), &request)
    guard request.fmt.pix.pixelformat == Self.fourcc(wanted) else {
      throw .unsupported("\(path): cannot deliver \(wanted.fourcc), offers \(FourCC(code: request.fmt.pix.pixelformat))")
    }
    format = StreamFormat(
      format: wanted, width: Int(request.fmt.pix.width), height: Int(request.fmt.pix.height),
      bytesPerLine: Int(request.fmt.pix.bytesperline), imageSize: Int(request.fmt.pix.sizeimage),
      range: request.fmt.pix.quantization == V4L2_QUANTIZATION_FULL_RANGE.rawValue ? .full : .limited)

    var parameters = v4l2_streamparm()
    parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    parameters.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(frameRate))
    // Not every driver lets the rate be set; the stream then runs at the driver's rate.
    try? device.control("VIDIOC_S_PARM", CV4L2_VIDIOC_S_PARM(), &parameters)

    var buffersRequest = v4l2_requestbuffers()
    buffersRequest.count = UInt32(Self.bufferCount)
    buffersRequest.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    buffersRequest.memory = V4L2_MEMORY_MMAP.rawValue
    try device.control("VIDIOC_REQBUFS", CV4L2_VIDIOC_REQBUFS(), &buffersRequest)
    guard buffersRequest.count >= 2 else { throw .unsupported("\(path): driver granted \(buffersRequest.count) buffers") }

    var mappings: [BufferMapping] = []
    for index in 0..<buffersRequest.count {
      var buffer = Self.emptyBuffer(index: index)
      try device.control("VIDIOC_QUERYBUF", CV4L2_VIDIOC_QUERYBUF(), &buffer)
      guard let base = v4l2_mmap(nil, Int(buffer.length), PROT_READ | PROT_WRITE, MAP_SHARED, device.raw, Int64(buffer.m.offset)),
        base != MAP_FAILED
      else { throw CameraError(SystemCallError("v4l2_mmap", Errno.current), device: path) }
      mappings.append(BufferMapping(base: base, length: Int(buffer.length)))
    }
    buffers = mappings
  }

  public var descriptor: FileDescriptor { device.descriptor }

  /// Queues every buffer and starts the stream.
  public func start() throws(CameraError) {
    for index in buffers.indices {
      var buffer = Self.emptyBuffer(index: UInt32(index))
      try device.control("VIDIOC_QBUF", CV4L2_VIDIOC_QBUF(), &buffer)
    }
    var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
    try device.control("VIDIOC_STREAMON", CV4L2_VIDIOC_STREAMON(), &type)
    streaming = true
  }

  /// The next filled buffer, or nil if none is ready yet (EAGAIN is not an error on a non-blocking device).
  public func dequeue() throws(CameraError) -> DequeuedBuffer? {
    var buffer = Self.emptyBuffer(index: 0)
    let result = CV4L2_ioctl(device.raw, CV4L2_VIDIOC_DQBUF(), &buffer)
    if result == -1 {
      let error = Errno.current
      if error == .wouldBlock || error == .interrupted { return nil }
      throw CameraError(SystemCallError("VIDIOC_DQBUF", error), device: path)
    }
    let time = Instant(seconds: Int64(buffer.timestamp.tv_sec), nanoseconds: Int64(buffer.timestamp.tv_usec) * 1000)
    return DequeuedBuffer(
      index: Int(buffer.index), bytesUsed: Int(buffer.bytesused),
      info: FrameInfo(sequence: buffer.sequence, timestamp: time),
      damaged: buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0)
  }

  /// The bytes the driver filled, valid until the buffer is requeued.
  public func withBytes<Result>(of buffer: borrowing DequeuedBuffer, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    let mapping = buffers[buffer.index]
    return body(UnsafeRawBufferPointer(start: mapping.base, count: min(buffer.bytesUsed, mapping.length)))
  }

  /// Gives the buffer back to the driver.
  public func requeue(_ buffer: consuming DequeuedBuffer) throws(CameraError) {
    var request = Self.emptyBuffer(index: UInt32(buffer.index))
    try device.control("VIDIOC_QBUF", CV4L2_VIDIOC_QBUF(), &request)
  }

  /// The camera's exposure and gain as its controls report them now; nil for a control it does not have.
  /// Exposure is in 100 µs units (V4L2_CID_EXPOSURE_ABSOLUTE); gain is in the driver's own units (V4L2_CID_GAIN).
  public func exposureAndGain() -> (exposure100Microseconds: Int?, gain: Int?) {
    func read(_ id: UInt32) -> Int? {
      var control = v4l2_control(id: id, value: 0)
      guard (try? device.control("VIDIOC_G_CTRL", CV4L2_VIDIOC_G_CTRL(), &control)) != nil else { return nil }
      return Int(control.value)
    }
    return (read(CV4L2_CID_EXPOSURE_ABSOLUTE()), read(CV4L2_CID_GAIN()))
  }

  /// Sets the camera's own zoom (V4L2_CID_ZOOM_ABSOLUTE) to `value`, one of its range's.
  public func setZoom(_ value: Int) throws(CameraError) {
    try device.setZoom(value)
  }

  public func stop() {
    guard streaming else { return }
    var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
    try? device.control("VIDIOC_STREAMOFF", CV4L2_VIDIOC_STREAMOFF(), &type)
    streaming = false
  }

  deinit { stop() }

  private static func emptyBuffer(index: UInt32) -> v4l2_buffer {
    var buffer = v4l2_buffer()
    buffer.index = index
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    buffer.memory = V4L2_MEMORY_MMAP.rawValue
    return buffer
  }

  static func fourcc(_ format: PixelFormat) -> UInt32 {
    switch format {
    case .yuyv: CV4L2_PIX_FMT_YUYV()
    case .nv12: CV4L2_PIX_FMT_NV12()
    case .mjpeg: CV4L2_PIX_FMT_MJPEG()
    }
  }
}

/// One driver buffer mapped into our memory with libv4l2 (which may hand out a converted copy).
final class BufferMapping {
  let base: UnsafeMutableRawPointer
  let length: Int
  init(base: UnsafeMutableRawPointer, length: Int) {
    self.base = base
    self.length = length
  }
  deinit { _ = v4l2_munmap(base, length) }
}
