import CAVCodec

/// AAC-LC through libavcodec's own `aac` encoder (native, no licence beyond FFmpeg's LGPL): a movie's sound.
/// Takes interleaved signed 16-bit frames, a frame of `frameLength` at a time, and hands out one packet for
/// each, raw (no ADTS headers: MP4 carries the AudioSpecificConfig in its `esds` instead).
///
/// Not thread-safe: one thread encodes. Unchecked Sendable: made on one thread and handed over once.
public final class AACEncoder: @unchecked Sendable {
  private let av: kioskcam_libav
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var frame: UnsafeMutablePointer<AVFrame>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  private var nextPTS: Int64 = 0
  public let sampleRate: Int
  public let channels: Int
  public let bitRate: Int
  /// Frames in each packet: 1024 for AAC-LC.
  public let frameLength: Int
  /// Frames of silence the encoder puts before the first input frame (its priming): 1024 for FFmpeg's.
  public let priming: Int
  /// ISO/IEC 14496-3's AudioSpecificConfig, for the MP4's `esds`.
  public let audioSpecificConfig: [UInt8]

  /// "AAC-LC through libavcodec's aac 59.37.100": the `microphone` evidence (opens libavcodec).
  public static var identity: String {
    do {
      let version = try LibAV.api().avcodec_version()
      return "AAC-LC through libavcodec's aac \(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)"
    } catch {
      return "AAC-LC: \(error)"
    }
  }

  /// 64 kbit/s a channel: transparent enough for a room's sound, and a few percent of a movie's bits.
  public static func bitRate(channels: Int) -> Int { 64_000 * max(1, channels) }

  public init(sampleRate: Int, channels: Int, bitRate: Int? = nil) throws(CodecError) {
    self.sampleRate = sampleRate
    self.channels = channels
    let bitRate = bitRate ?? Self.bitRate(channels: channels)
    self.bitRate = bitRate
    av = try LibAV.api()
    // Errors only: at info level the aac encoder prints its average quantiser at every close, into the journal.
    av.av_log_set_level(AV_LOG_ERROR)
    guard let codec = av.avcodec_find_encoder_by_name("aac") else { throw CodecError("libavcodec has no aac encoder") }
    guard let c = av.avcodec_alloc_context3(codec) else { throw CodecError("avcodec_alloc_context3 failed") }
    context = c
    c.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP  // the only one FFmpeg's aac takes
    c.pointee.sample_rate = Int32(sampleRate)
    av.av_channel_layout_default(&c.pointee.ch_layout, Int32(channels))
    c.pointee.bit_rate = Int64(bitRate)
    c.pointee.profile = FF_PROFILE_AAC_LOW
    c.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
    c.pointee.flags |= kioskcam_codec_flag_global_header()
    // The fast coder: the default two-loop search costs several times the CPU for a room's sound.
    _ = av.av_opt_set(c.pointee.priv_data, "aac_coder", "fast", 0)
    var status = av.avcodec_open2(c, codec, nil)
    guard status >= 0 else {
      av.avcodec_free_context(&context)
      throw CodecError("avcodec_open2 (aac \(sampleRate) Hz, \(channels) channels)", status)
    }
    frameLength = Int(c.pointee.frame_size)
    priming = Int(c.pointee.initial_padding)
    audioSpecificConfig = [UInt8](UnsafeBufferPointer(start: c.pointee.extradata, count: Int(c.pointee.extradata_size)))
    frame = av.av_frame_alloc()
    packet = av.av_packet_alloc()
    guard let frame, packet != nil, frameLength > 0, !audioSpecificConfig.isEmpty else {
      av.av_frame_free(&self.frame)
      av.av_packet_free(&packet)
      av.avcodec_free_context(&context)
      throw CodecError("aac: no frame, packet or AudioSpecificConfig")
    }
    frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
    frame.pointee.nb_samples = Int32(frameLength)
    frame.pointee.sample_rate = Int32(sampleRate)
    _ = av.av_channel_layout_copy(&frame.pointee.ch_layout, &c.pointee.ch_layout)
    status = av.av_frame_get_buffer(frame, 0)
    guard status >= 0 else {
      av.av_frame_free(&self.frame)
      av.av_packet_free(&packet)
      av.avcodec_free_context(&context)
      throw CodecError("av_frame_get_buffer (aac)", status)
    }
  }

  deinit {
    av.av_frame_free(&frame)
    av.av_packet_free(&packet)
    av.avcodec_free_context(&context)
  }

  /// One frame of `frameLength` interleaved samples in; the packets that are ready out.
  public func encode(_ samples: ArraySlice<Int16>) throws(CodecError) -> [[UInt8]] {
    precondition(samples.count == frameLength * channels, "one AAC frame at a time")
    guard let frame else { return [] }
    // The encoder may still hold the buffer of the frame before: a fresh one then, never a write under it.
    var status = av.av_frame_make_writable(frame)
    guard status >= 0 else { throw CodecError("av_frame_make_writable (aac)", status) }
    let scale = Float(1) / 32768
    for channel in 0..<channels {
      let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self)
      var at = samples.startIndex + channel
      for index in 0..<frameLength {
        plane[index] = Float(samples[at]) * scale
        at += channels
      }
    }
    frame.pointee.pts = nextPTS
    nextPTS += Int64(frameLength)
    status = av.avcodec_send_frame(context, frame)
    guard status >= 0 else { throw CodecError("avcodec_send_frame (aac)", status) }
    return try receive()
  }

  /// At the end: the packets still inside the encoder (its lookahead).
  public func finish() throws(CodecError) -> [[UInt8]] {
    let status = av.avcodec_send_frame(context, nil)
    guard status >= 0 || status == kioskcam_averror_eof() else { throw CodecError("avcodec_send_frame (aac drain)", status) }
    return try receive()
  }

  private func receive() throws(CodecError) -> [[UInt8]] {
    var out: [[UInt8]] = []
    while true {
      let status = av.avcodec_receive_packet(context, packet)
      if status == kioskcam_averror_eagain() || status == kioskcam_averror_eof() { return out }
      guard status >= 0, let packet else { throw CodecError("avcodec_receive_packet (aac)", status) }
      out.append([UInt8](UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))))
      av.av_packet_unref(packet)
    }
  }
}
