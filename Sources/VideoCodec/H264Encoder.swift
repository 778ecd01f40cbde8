#if canImport(Glibc)
  import Glibc
#endif
import CAVCodec
import Imaging

/// A picture the encoder takes: an AVFrame of its own 4:2:0 planes, filled in place (on any thread) and then
/// handed to `H264Encoder.encode`, which takes it over.
public final class H264Picture: @unchecked Sendable {
  // Unchecked: one thread fills the planes, then the encoder's thread owns it; never both at once.
  let frame: UnsafeMutablePointer<AVFrame>

  public init(width: Int, height: Int) throws(CodecError) {
    guard let frame = av_frame_alloc() else { throw CodecError("av_frame_alloc failed") }
    frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
    frame.pointee.width = Int32(width)
    frame.pointee.height = Int32(height)
    let status = av_frame_get_buffer(frame, 0)
    guard status >= 0 else {
      var owned: UnsafeMutablePointer<AVFrame>? = frame
      av_frame_free(&owned)
      throw CodecError("av_frame_get_buffer", status)
    }
    self.frame = frame
  }

  deinit {
    var owned: UnsafeMutablePointer<AVFrame>? = frame
    av_frame_free(&owned)
  }

  /// Its planes, to be written before it is encoded.
  public var target: I420Target {
    let f = frame.pointee
    return I420Target(
      width: Int(f.width), height: Int(f.height), luma: f.data.0!, cb: f.data.1!, cr: f.data.2!,
      lumaStride: Int(f.linesize.0), chromaStride: Int(f.linesize.1))
  }
}

/// H.264 through libavcodec's libx264, High profile, 4:2:0 limited range, the colour said in the stream,
/// no B-frames (a packet per picture, decode order = display order), parameter sets in the global header.
/// Not thread-safe: one thread encodes, in capture order. Unchecked Sendable: it is made on the thread that
/// will encode with it (so that x264's own threads inherit that thread's priority) and handed over once.
public final class H264Encoder: @unchecked Sendable {
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  private var nextPTS: Int64 = 0
  /// Capture times by the pts given to the encoder: x264's frame threads hand packets out a few pictures late.
  private var timestamps: [Int64: Int64] = [:]
  public let settings: H264Settings
  /// SPS and PPS, for the MP4's `avcC`.
  public let header: [UInt8]

  /// Whether this libavcodec has libx264: the `h264-encoder` capability's evidence.
  public static var available: Bool { avcodec_find_encoder_by_name("libx264") != nil }
  /// "libx264 through libavcodec 59.37.100 (FFmpeg 5.1.9-0+deb12u1)".
  public static var identity: String {
    let version = avcodec_version()
    return "libx264 through libavcodec \(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF) (FFmpeg \(String(cString: av_version_info())))"
  }

  public init(_ settings: H264Settings) throws(CodecError) {
    self.settings = settings
    // x264's banner and statistics would go to the service's log once per movie; errors still do.
    av_log_set_level(AV_LOG_ERROR)
    guard let codec = avcodec_find_encoder_by_name("libx264") else { throw CodecError("libavcodec has no libx264 encoder") }
    guard let context = avcodec_alloc_context3(codec) else { throw CodecError("avcodec_alloc_context3 failed") }
    self.context = context
    let c = context
    c.pointee.width = Int32(settings.width)
    c.pointee.height = Int32(settings.height)
    c.pointee.pix_fmt = AV_PIX_FMT_YUV420P
    c.pointee.time_base = AVRational(num: 1, den: Int32(settings.frameRate))
    c.pointee.framerate = AVRational(num: Int32(settings.frameRate), den: 1)
    c.pointee.bit_rate = Int64(settings.bitRate)
    // A buffer of two seconds and a peak of 1.5 times the average: the rate a card and a download hold.
    c.pointee.rc_max_rate = Int64(settings.bitRate) * 3 / 2
    c.pointee.rc_buffer_size = Int32(clamping: settings.bitRate * 2)
    c.pointee.gop_size = Int32(settings.keyInterval)
    c.pointee.max_b_frames = 0
    c.pointee.thread_count = Int32(settings.threads)
    c.pointee.flags |= kioskcam_codec_flag_global_header()
    c.pointee.color_range = AVCOL_RANGE_MPEG
    c.pointee.colorspace = AVCOL_SPC_SMPTE170M
    c.pointee.color_primaries = AVCOL_PRI_BT709
    c.pointee.color_trc = AVCOL_TRC_IEC61966_2_1
    av_opt_set(c.pointee.priv_data, "preset", settings.preset.x264Preset, 0)
    if let parameters = settings.preset.x264Parameters { av_opt_set(c.pointee.priv_data, "x264-params", parameters, 0) }
    av_opt_set(c.pointee.priv_data, "profile", "high", 0)
    // A picture asked to be a keyframe is an IDR picture, which a player can start from.
    av_opt_set(c.pointee.priv_data, "forced-idr", "1", 0)
    var status = avcodec_open2(c, codec, nil)
    guard status >= 0 else {
      avcodec_free_context(&self.context)
      throw CodecError("avcodec_open2 (libx264 \(settings.width)x\(settings.height))", status)
    }
    header = [UInt8](UnsafeBufferPointer(start: c.pointee.extradata, count: Int(c.pointee.extradata_size)))
    packet = av_packet_alloc()
    status = packet == nil ? -12 : 0
    guard status == 0 else {
      avcodec_free_context(&self.context)
      throw CodecError("av_packet_alloc", status)
    }
  }

  deinit {
    av_packet_free(&packet)
    avcodec_free_context(&context)
  }

  /// One picture in, captured at `timestamp`; the packets that are ready out (none for the first few).
  /// `keyframe`: this picture is an IDR picture, whatever the count since the last one.
  public func encode(_ picture: H264Picture, timestamp: Int64, keyframe: Bool = false) throws(CodecError) -> [H264Packet] {
    picture.frame.pointee.pts = nextPTS
    picture.frame.pointee.pict_type = keyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
    timestamps[nextPTS] = timestamp
    nextPTS += 1
    let status = avcodec_send_frame(context, picture.frame)
    guard status >= 0 else { throw CodecError("avcodec_send_frame", status) }
    return try receive()
  }

  /// At the end: every picture still inside the encoder, out. The encoder takes nothing after.
  public func finish() throws(CodecError) -> [H264Packet] {
    let status = avcodec_send_frame(context, nil)
    guard status >= 0 || status == kioskcam_averror_eof() else { throw CodecError("avcodec_send_frame (drain)", status) }
    return try receive()
  }

  private func receive() throws(CodecError) -> [H264Packet] {
    var out: [H264Packet] = []
    while true {
      let status = avcodec_receive_packet(context, packet)
      if status == kioskcam_averror_eagain() || status == kioskcam_averror_eof() { return out }
      guard status >= 0, let packet else { throw CodecError("avcodec_receive_packet", status) }
      let p = packet.pointee
      let bytes = [UInt8](UnsafeBufferPointer(start: p.data, count: Int(p.size)))
      let timestamp = timestamps.removeValue(forKey: p.pts) ?? 0
      out.append(H264Packet(bytes: bytes, timestamp: timestamp, keyframe: p.flags & kioskcam_pkt_flag_key() != 0))
      av_packet_unref(packet)
    }
  }
}
