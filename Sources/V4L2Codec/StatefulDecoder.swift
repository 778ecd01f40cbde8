#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import LinuxIO

/// One raw picture out of a decoder, tightly packed (no stride padding), with the timestamp of the coded
/// buffer it came from.
public struct DecodedPicture: Sendable {
  public let bytes: [UInt8]
  public let timestamp: Int64
  public let layout: RawLayout
}

/// The kernel's memory-to-memory stateful video decoder interface (dev-decoder.rst): the Pi 4's
/// bcm2835-codec decodes MJPEG and H264 this way, and vicodec FWHT.
///
/// The coded format and buffers on OUTPUT first, STREAMON, then coded data in. The CAPTURE queue is set up
/// only when the driver has parsed the stream's header and says so with V4L2_EVENT_SOURCE_CHANGE: only then
/// are the picture's size and the buffers it needs known. `finish` drains with V4L2_DEC_CMD_STOP until the
/// CAPTURE buffer flagged V4L2_BUF_FLAG_LAST.
public final class StatefulDecoder {
  public let path: String
  public let driver: String
  /// The decoded picture's layout, once the stream's header has been parsed.
  public private(set) var layout: RawLayout?

  private let device: CodecDevice
  private let raw: FourCC
  private let output: PlaneQueue
  private let capture: PlaneQueue
  private var timestamps: [Int64: Int64] = [:]
  private var lastSeen = false

  public init(path: String, coded: FourCC, raw: FourCC, codedBufferSize: Int = 1 << 20, buffers: Int = 4)
    throws(CodecDeviceError)
  {
    let device = try CodecDevice(path: path)
    self.path = path
    self.device = device
    self.raw = raw
    driver = device.driver
    output = PlaneQueue(device, type: V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE)
    capture = PlaneQueue(device, type: V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE)

    var format = v4l2_format()
    format.type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE.rawValue
    format.fmt.pix_mp.pixelformat = coded.code
    format.fmt.pix_mp.num_planes = 1
    format.fmt.pix_mp.plane_fmt.0.sizeimage = UInt32(codedBufferSize)
    try device.control("VIDIOC_S_FMT OUTPUT", CV4L2_VIDIOC_S_FMT(), &format)
    guard format.fmt.pix_mp.pixelformat == coded.code else {
      throw CodecDeviceError(path, "its OUTPUT queue takes no \(coded) (offers \(device.formats(V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE)))")
    }
    try device.subscribe(V4L2_EVENT_SOURCE_CHANGE)
    try output.allocate(max(2, buffers))
    try output.streamOn()
  }

  /// Queues one piece of the coded stream (a whole picture, or any part where the format is a continuous
  /// byte stream); returns the pictures decoded by then. Waits only when the driver holds every OUTPUT buffer.
  public func decode(_ bytes: [UInt8], timestamp: Int64) throws(CodecDeviceError) -> [DecodedPicture] {
    guard !lastSeen else { throw CodecDeviceError(path, "the stream was drained") }
    let pictures = try device.pump(until: { !output.free.isEmpty }, awaiting: "OUTPUT buffer back", service)
    let index = output.free[0]
    let plane = output.planes[index][0]
    guard bytes.count <= plane.length else {
      throw CodecDeviceError(path, "\(bytes.count) coded bytes do not fit its \(plane.length)-byte buffer")
    }
    bytes.withUnsafeBytes { plane.base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    let stamp = timeval(nanoseconds: timestamp)
    timestamps[stamp.nanoseconds] = timestamp
    try output.queue(index, bytesUsed: [bytes.count], timestamp: stamp)
    return pictures + (try service())
  }

  /// One coded buffer that is a whole picture decoding alone (an MJPEG frame, as the preview hands them over
  /// one at a time) in, its picture out, waited for; pictures of earlier buffers that come out first are
  /// dropped. A driver that gives nothing for it within the stuck timeout is an error.
  public func decodeWhole(_ bytes: [UInt8], timestamp: Int64) throws(CodecDeviceError) -> DecodedPicture {
    var pictures = try decode(bytes, timestamp: timestamp)
    while true {
      if let picture = pictures.last(where: { $0.timestamp == timestamp }) { return picture }
      pictures.removeAll()
      guard !lastSeen else { throw CodecDeviceError(path, "the stream ended before the picture came out") }
      guard try device.wait(milliseconds: CodecDevice.stuckAfterMilliseconds) else {
        throw CodecDeviceError(path, "no picture for the buffer in \(CodecDevice.stuckAfterMilliseconds) ms")
      }
      pictures = try service()
    }
  }

  /// Drains: every picture of what was queued comes out, then the queues stop.
  public func finish() throws(CodecDeviceError) -> [DecodedPicture] {
    guard !lastSeen else { return [] }
    var pictures = try service()
    // A stream whose header never parsed has no CAPTURE queue to drain: there is nothing to wait for.
    if capture.streaming {
      var command = v4l2_decoder_cmd()
      command.cmd = UInt32(V4L2_DEC_CMD_STOP)
      try device.control("VIDIOC_DECODER_CMD STOP", CV4L2_VIDIOC_DECODER_CMD(), &command)
      pictures += try device.pump(until: { lastSeen }, awaiting: "last buffer of the drain", service)
    }
    output.release()
    capture.release()
    lastSeen = true
    return pictures
  }

  /// OUTPUT buffers back, the header's news acted on, decoded pictures out.
  private func service() throws(CodecDeviceError) -> [DecodedPicture] {
    while case .buffer = try output.dequeue() {}
    while let event = device.nextEvent() {
      if event == UInt32(V4L2_EVENT_SOURCE_CHANGE) { try setUpCapture() }
    }
    guard capture.streaming, let layout else { return [] }
    var pictures: [DecodedPicture] = []
    while !lastSeen {
      switch try capture.dequeue() {
      case .none: return pictures
      case .pipe: lastSeen = true
      case .buffer(let buffer):
        let plane = capture.planes[buffer.index][0]
        if (buffer.bytesUsed.first ?? 0) > 0, !buffer.isError,
          let bytes = layout.unpack(UnsafeRawBufferPointer(start: plane.base, count: plane.length))
        {
          let stamp = buffer.timestamp.nanoseconds
          pictures.append(
            DecodedPicture(bytes: bytes, timestamp: timestamps.removeValue(forKey: stamp) ?? stamp, layout: layout))
        }
        if buffer.isLast { lastSeen = true } else { try capture.queue(buffer.index, bytesUsed: [0]) }
      }
    }
    return pictures
  }

  /// The stream's header is parsed: read the picture it describes, ask for the raw format wanted, and give
  /// CAPTURE the buffers the driver says it needs, plus two to work with.
  private func setUpCapture() throws(CodecDeviceError) {
    var format = v4l2_format()
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue
    try device.control("VIDIOC_G_FMT CAPTURE", CV4L2_VIDIOC_G_FMT(), &format)
    if format.fmt.pix_mp.pixelformat != raw.code {
      format.fmt.pix_mp.pixelformat = raw.code
      format.fmt.pix_mp.num_planes = 1
      try device.control("VIDIOC_S_FMT CAPTURE", CV4L2_VIDIOC_S_FMT(), &format)
    }
    let pix = format.fmt.pix_mp
    // The picture is the compose rectangle; the buffer's rows may run past it to the codec's block size.
    var visible = v4l2_selection()
    visible.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    visible.target = UInt32(V4L2_SEL_TGT_COMPOSE)
    let shown = device.attempt(CV4L2_VIDIOC_G_SELECTION(), &visible) == nil ? visible.r : v4l2_rect(
      left: 0, top: 0, width: pix.width, height: pix.height)
    guard pix.pixelformat == raw.code, pix.num_planes == 1,
      let decoded = RawLayout(
        format: raw, width: Int(shown.width), height: Int(shown.height), stride: Int(pix.plane_fmt.0.bytesperline),
        bufferHeight: Int(pix.height), sizeImage: Int(pix.plane_fmt.0.sizeimage))
    else {
      throw CodecDeviceError(path, "its CAPTURE queue gives no single-plane \(raw) (offers \(device.formats(V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE)))")
    }
    if capture.count > 0 { capture.release() }
    layout = decoded
    let needed = Int(device.readControl(CV4L2_CID_MIN_BUFFERS_FOR_CAPTURE()) ?? 1)
    try capture.allocate(max(1, needed) + 2)
    for index in capture.free {
      try capture.queue(index, bytesUsed: [0])
    }
    try capture.streamOn()
  }

  deinit {
    output.release()
    capture.release()
  }
}
