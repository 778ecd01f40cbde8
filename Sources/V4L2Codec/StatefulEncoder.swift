#if canImport(Glibc)
  import Glibc
#endif
import CV4L2
import LinuxIO

/// One coded picture as the codec handed it out, with the capture time of the raw picture it came from.
public struct CodedPacket: Sendable, Equatable {
  public let bytes: [UInt8]
  public let timestamp: Int64
  public let keyframe: Bool
}

/// What a stream is encoded as: the coded format asked of the CAPTURE queue, the raw format given to the
/// OUTPUT queue, and the hints a hardware encoder takes as controls (where it has them).
public struct EncoderSettings: Sendable, Equatable {
  public var coded: FourCC
  public var raw: FourCC
  public var width: Int
  public var height: Int
  public var frameRate: Int
  /// Bits a second, for encoders with a rate control; nil leaves the driver's default.
  public var bitRate: Int?
  public var buffers: Int

  public init(coded: FourCC, raw: FourCC, width: Int, height: Int, frameRate: Int, bitRate: Int? = nil, buffers: Int = 4) {
    self.coded = coded
    self.raw = raw
    self.width = width
    self.height = height
    self.frameRate = max(1, frameRate)
    self.bitRate = bitRate
    self.buffers = max(2, buffers)
  }
}

/// The kernel's memory-to-memory stateful video encoder interface (Documentation/userspace-api/media/v4l/
/// dev-encoder.rst), for any coded format: the Pi 4's bcm2835-codec makes H264 this way, and vicodec FWHT.
///
/// Initialisation follows the document's order: the coded format on CAPTURE first (it may change what
/// OUTPUT accepts), then the raw format on OUTPUT, the frame interval, buffers on both queues, STREAMON.
/// Each raw picture's timestamp is copied by the driver to the coded buffer made from it. `finish` drains
/// (V4L2_ENC_CMD_STOP, then CAPTURE buffers until one carries V4L2_BUF_FLAG_LAST); dropping the encoder
/// without `finish` abandons the stream (STREAMOFF on both queues throws away what the driver holds).
public final class StatefulEncoder {
  public let path: String
  public let driver: String
  /// The raw picture as the driver wants it in an OUTPUT buffer (its stride may be padded).
  public let layout: RawLayout
  /// The driver has V4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME: a keyframe can be asked for by time.
  public let forcesKeyframes: Bool

  private let device: CodecDevice
  private let output: PlaneQueue
  private let capture: PlaneQueue
  private var timestamps: [Int64: Int64] = [:]
  private var lastSeen = false

  public init(path: String, settings: EncoderSettings) throws(CodecDeviceError) {
    let device = try CodecDevice(path: path)
    self.path = path
    self.device = device
    driver = device.driver
    output = PlaneQueue(device, type: V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE)
    capture = PlaneQueue(device, type: V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE)

    var coded = v4l2_format()
    coded.type = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue
    coded.fmt.pix_mp.pixelformat = settings.coded.code
    coded.fmt.pix_mp.width = UInt32(settings.width)
    coded.fmt.pix_mp.height = UInt32(settings.height)
    coded.fmt.pix_mp.num_planes = 1
    // A raw picture's size is a generous bound for one coded picture; the driver adjusts it.
    coded.fmt.pix_mp.plane_fmt.0.sizeimage = UInt32(settings.width * settings.height * 3 / 2)
    try device.control("VIDIOC_S_FMT CAPTURE", CV4L2_VIDIOC_S_FMT(), &coded)
    guard coded.fmt.pix_mp.pixelformat == settings.coded.code else {
      throw CodecDeviceError(path, "its CAPTURE queue makes no \(settings.coded) (offers \(device.formats(V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE)))")
    }

    var raw = v4l2_format()
    raw.type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE.rawValue
    raw.fmt.pix_mp.pixelformat = settings.raw.code
    raw.fmt.pix_mp.width = UInt32(settings.width)
    raw.fmt.pix_mp.height = UInt32(settings.height)
    raw.fmt.pix_mp.num_planes = 1
    // What x264 is told too: BT.709 primaries, the sRGB transfer, the BT.601 matrix, limited range; an
    // encoder writes it into the stream's VUI.
    raw.fmt.pix_mp.colorspace = V4L2_COLORSPACE_SRGB.rawValue
    raw.fmt.pix_mp.xfer_func = UInt8(V4L2_XFER_FUNC_SRGB.rawValue)
    raw.fmt.pix_mp.ycbcr_enc = UInt8(V4L2_YCBCR_ENC_601.rawValue)
    raw.fmt.pix_mp.quantization = UInt8(V4L2_QUANTIZATION_LIM_RANGE.rawValue)
    try device.control("VIDIOC_S_FMT OUTPUT", CV4L2_VIDIOC_S_FMT(), &raw)
    let pix = raw.fmt.pix_mp
    guard pix.pixelformat == settings.raw.code, pix.num_planes == 1,
      let layout = RawLayout(
        format: settings.raw, width: settings.width, height: settings.height,
        stride: Int(pix.plane_fmt.0.bytesperline), bufferHeight: Int(pix.height), sizeImage: Int(pix.plane_fmt.0.sizeimage))
    else {
      throw CodecDeviceError(
        path, "its OUTPUT queue takes no single-plane \(settings.raw) \(settings.width)x\(settings.height) (offers \(device.formats(V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE)), gave \(pix.width)x\(pix.height))")
    }
    guard Int(pix.width) == settings.width else {
      throw CodecDeviceError(path, "it encodes \(pix.width) columns, not \(settings.width)")
    }
    // A codec of blocks pads the lines (360 to 368, 1080 to 1088); the picture is the crop rectangle.
    if Int(pix.height) != settings.height {
      var crop = v4l2_selection()
      crop.type = V4L2_BUF_TYPE_VIDEO_OUTPUT.rawValue  // the selection API names single-planar types
      crop.target = UInt32(V4L2_SEL_TGT_CROP)
      crop.r = v4l2_rect(left: 0, top: 0, width: UInt32(settings.width), height: UInt32(settings.height))
      try device.control("VIDIOC_S_SELECTION CROP", CV4L2_VIDIOC_S_SELECTION(), &crop)
      guard crop.r.width == UInt32(settings.width), crop.r.height == UInt32(settings.height) else {
        throw CodecDeviceError(path, "it crops \(crop.r.width)x\(crop.r.height), not \(settings.width)x\(settings.height)")
      }
    }
    self.layout = layout

    var rate = v4l2_streamparm()
    rate.type = V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE.rawValue
    rate.parm.output.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(settings.frameRate))
    _ = device.attempt(CV4L2_VIDIOC_S_PARM(), &rate)  // a hint the document allows a driver to ignore
    // A keyframe a second where the driver counts them itself; the recorder may also ask for one by time.
    device.setControl(CV4L2_CID_MPEG_VIDEO_GOP_SIZE(), Int32(settings.frameRate))
    if let bitRate = settings.bitRate { device.setControl(CV4L2_CID_MPEG_VIDEO_BITRATE(), Int32(clamping: bitRate)) }
    if settings.coded == .h264 {
      // High profile, as x264 is asked; an IDR picture each GOP, so a player can start at any keyframe.
      device.setControl(CV4L2_CID_MPEG_VIDEO_H264_PROFILE(), Int32(V4L2_MPEG_VIDEO_H264_PROFILE_HIGH.rawValue))
      device.setControl(CV4L2_CID_MPEG_VIDEO_H264_I_PERIOD(), Int32(settings.frameRate))
    }
    forcesKeyframes = device.readControl(CV4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME()) != nil

    try output.allocate(settings.buffers)
    try capture.allocate(settings.buffers)
    for index in capture.free {
      try capture.queue(index, bytesUsed: [0])
    }
    try output.streamOn()
    try capture.streamOn()
  }

  /// Fills a free OUTPUT buffer with `fill` and queues it; returns the coded pictures ready by then (a codec
  /// works behind its input, so these are usually of earlier pictures). Waits only when the driver holds
  /// every OUTPUT buffer.
  public func encode(
    timestamp: Int64, keyframe: Bool = false, _ fill: (UnsafeMutableRawBufferPointer, RawLayout) -> Bool
  ) throws(CodecDeviceError) -> [CodedPacket] {
    guard !lastSeen else { throw CodecDeviceError(path, "the stream was drained") }
    let packets = try device.pump(until: { !output.free.isEmpty }, awaiting: "OUTPUT buffer back", collect)
    let index = output.free[0]
    let plane = output.planes[index][0]
    guard fill(UnsafeMutableRawBufferPointer(start: plane.base, count: plane.length), layout) else {
      throw CodecDeviceError(path, "the picture did not fit the encoder's \(layout.width)x\(layout.height) buffer")
    }
    if keyframe && forcesKeyframes { device.setControl(CV4L2_CID_MPEG_VIDEO_FORCE_KEY_FRAME(), 1) }
    let stamp = timeval(nanoseconds: timestamp)
    timestamps[stamp.nanoseconds] = timestamp
    try output.queue(index, bytesUsed: [layout.sizeImage], timestamp: stamp)
    return packets + (try collect())
  }

  /// Drains the stream: every picture queued so far comes out, then the queues stop.
  public func finish() throws(CodecDeviceError) -> [CodedPacket] {
    guard !lastSeen else { return [] }
    var command = v4l2_encoder_cmd()
    command.cmd = UInt32(V4L2_ENC_CMD_STOP)
    try device.control("VIDIOC_ENCODER_CMD STOP", CV4L2_VIDIOC_ENCODER_CMD(), &command)
    let packets = try device.pump(until: { lastSeen }, awaiting: "last buffer of the drain", collect)
    output.release()
    capture.release()
    return packets
  }

  /// Takes back the OUTPUT buffers the codec is done with, and every coded picture it has made, giving each
  /// CAPTURE buffer straight back to it.
  private func collect() throws(CodecDeviceError) -> [CodedPacket] {
    while case .buffer = try output.dequeue() {}
    var packets: [CodedPacket] = []
    while !lastSeen {
      switch try capture.dequeue() {
      case .none: return packets
      case .pipe: lastSeen = true
      case .buffer(let buffer):
        let used = buffer.bytesUsed.first ?? 0
        if used > 0 && !buffer.isError {
          let plane = capture.planes[buffer.index][0]
          let stamp = buffer.timestamp.nanoseconds
          packets.append(
            CodedPacket(
              bytes: Array(UnsafeRawBufferPointer(start: plane.base, count: min(used, plane.length))),
              timestamp: timestamps.removeValue(forKey: stamp) ?? stamp, keyframe: buffer.isKeyframe))
        }
        if buffer.isLast { lastSeen = true } else { try capture.queue(buffer.index, bytesUsed: [0]) }
      }
    }
    return packets
  }

  deinit {
    output.release()
    capture.release()
  }
}
