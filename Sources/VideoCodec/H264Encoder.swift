import CX264
import Imaging

/// A picture the encoder takes: an x264 picture of its own 4:2:0 planes, filled in place (on any thread) and
/// then handed to `H264Encoder.encode`, which copies it in.
public final class H264Picture: @unchecked Sendable {
  // Unchecked: one thread fills the planes, then the encoder's thread reads them; never both at once.
  let picture: UnsafeMutablePointer<x264_picture_t>
  private let width: Int
  private let height: Int

  public init(width: Int, height: Int) throws(CodecError) {
    let picture = UnsafeMutablePointer<x264_picture_t>.allocate(capacity: 1)
    picture.initialize(to: x264_picture_t())
    // Planes of an even size: x264's chroma rows are half the luma's rounded down, a target's rounded up.
    guard x264_picture_alloc(picture, X264_CSP_I420, Int32((width + 1) & ~1), Int32((height + 1) & ~1)) == 0 else {
      picture.deallocate()
      throw CodecError("x264_picture_alloc (\(width)x\(height)) failed")
    }
    self.picture = picture
    self.width = width
    self.height = height
  }

  deinit {
    x264_picture_clean(picture)
    picture.deallocate()
  }

  /// Its planes, to be written before it is encoded.
  public var target: I420Target {
    let image = picture.pointee.img
    return I420Target(
      width: width, height: height, luma: image.plane.0!, cb: image.plane.1!, cr: image.plane.2!,
      lumaStride: Int(image.i_stride.0), chromaStride: Int(image.i_stride.1))
  }
}

/// H.264 through libx264's own API, High profile, 4:2:0 limited range, the colour said in the stream,
/// no B-frames (a packet per picture, decode order = display order), parameter sets in the global header.
/// Not thread-safe: one thread encodes, in capture order. Unchecked Sendable: it is made on the thread that
/// will encode with it (so that x264's own threads inherit that thread's priority) and handed over once.
public final class H264Encoder: @unchecked Sendable {
  private let encoder: OpaquePointer
  /// The pts clock's ticks a second, and the first picture's capture time, pts 0.
  static let clock: Int64 = 90_000
  private var firstTimestamp: Int64?
  private var lastPTS: Int64?
  /// Capture times by the pts given to the encoder: x264's frame threads hand packets out a few pictures late.
  private var timestamps: [Int64: Int64] = [:]
  /// x264's SEI naming its version and options, for the front of the first packet.
  private var pendingSEI: [UInt8]
  public let settings: H264Settings
  /// SPS and PPS, for the MP4's `avcC`.
  public let header: [UInt8]

  /// Whether this libx264 encodes 4:2:0 (a build may be limited to one other chroma format): the
  /// `h264-encoder` capability's evidence. The library itself is linked, so it is there.
  public static var available: Bool { x264_chroma_format == 0 || x264_chroma_format == X264_CSP_I420 }
  /// "libx264 core 164 r3095 baee400": the API build and revision of the x264.h built against.
  public static var identity: String { "libx264 core \(X264_BUILD)\(X264_VERSION)" }

  public init(_ settings: H264Settings) throws(CodecError) {
    self.settings = settings
    var param = try Self.parameters(settings)
    defer { x264_param_cleanup(&param) }
    guard let encoder = kioskcam_x264_encoder_open(&param) else {
      throw CodecError("x264_encoder_open (\(settings.width)x\(settings.height)) failed")
    }
    self.encoder = encoder
    var nals: UnsafeMutablePointer<x264_nal_t>?
    var count: Int32 = 0
    guard x264_encoder_headers(encoder, &nals, &count) >= 0, let nals else {
      x264_encoder_close(encoder)
      throw CodecError("x264_encoder_headers failed")
    }
    // x264's SEI (its version and options) is no parameter set: it stays out of the avcC, and goes in front of
    // the first picture, where tools that name the encoder look for it.
    var header: [UInt8] = []
    var sei: [UInt8] = []
    for nal in UnsafeBufferPointer(start: nals, count: Int(count)) {
      let payload = UnsafeBufferPointer(start: nal.p_payload, count: Int(nal.i_payload))
      if nal.i_type == Int32(NAL_SEI.rawValue) { sei += payload } else { header += payload }
    }
    self.header = header
    pendingSEI = sei
  }

  deinit { x264_encoder_close(encoder) }

  /// x264's parameters for `settings`: the preset's, then the movie's size, rate, bit rate and colour.
  private static func parameters(_ settings: H264Settings) throws(CodecError) -> x264_param_t {
    var param = x264_param_t()
    let preset = settings.preset
    guard x264_param_default_preset(&param, preset.x264Preset, nil) == 0 else {
      throw CodecError("x264_param_default_preset: no preset \(preset.x264Preset)")
    }
    // "name=value:name=value", as ffmpeg's -x264-params takes them.
    for option in (preset.x264Parameters ?? "").split(separator: ":") {
      let pair = option.split(separator: "=", maxSplits: 1).map(String.init)
      guard x264_param_parse(&param, pair[0], pair.count > 1 ? pair[1] : nil) == 0 else {
        x264_param_cleanup(&param)
        throw CodecError("x264_param_parse: \(option) refused")
      }
    }
    param.i_width = Int32(settings.width)
    param.i_height = Int32(settings.height)
    param.i_csp = X264_CSP_I420
    param.i_fps_num = UInt32(settings.frameRate)
    param.i_fps_den = 1
    // Each picture's own capture time, on a 90 kHz clock: a recording that takes fewer of the camera's frames
    // (a movie's pace, a slow board) spends the bit rate over the seconds, not over a count of pictures.
    param.b_vfr_input = 1
    param.i_timebase_num = 1
    param.i_timebase_den = UInt32(Self.clock)
    param.rc.i_rc_method = X264_RC_ABR
    param.rc.i_bitrate = Int32(clamping: settings.bitRate / 1000)
    // A buffer of two seconds and a peak of 1.5 times the average: the rate a card and a download hold.
    param.rc.i_vbv_max_bitrate = Int32(clamping: settings.bitRate * 3 / 2 / 1000)
    param.rc.i_vbv_buffer_size = Int32(clamping: settings.bitRate * 2 / 1000)
    param.i_keyint_max = Int32(settings.keyInterval)
    param.i_bframe = 0
    param.i_threads = Int32(settings.threads)
    // SPS and PPS once, in `header` (the MP4 has them in its sample entry); start codes, as `AVCStream` splits.
    param.b_repeat_headers = 0
    param.b_annexb = 1
    // Limited range, BT.709 primaries, sRGB's transfer, BT.601 matrix: what the camera's pictures are.
    param.vui.b_fullrange = 0
    param.vui.i_colorprim = 1
    param.vui.i_transfer = 13
    param.vui.i_colmatrix = 6
    // x264's banner and statistics would go to the service's log once per movie; errors still do.
    param.i_log_level = X264_LOG_ERROR
    guard x264_param_apply_profile(&param, "high") == 0 else {
      x264_param_cleanup(&param)
      throw CodecError("x264_param_apply_profile: High refused")
    }
    return param
  }

  /// One picture in, captured at `timestamp`; the packets that are ready out (none for the first few).
  /// `keyframe`: this picture is an IDR picture, whatever the count since the last one.
  public func encode(
    _ picture: H264Picture, timestamp: Int64, keyframe: Bool = false
  ) throws(CodecError) -> [H264Packet] {
    let origin = firstTimestamp ?? timestamp
    firstTimestamp = origin
    // x264 wants every pts later than the one before: two pictures within a tick of the clock get the next.
    let pts = max(lastPTS.map { $0 + 1 } ?? 0, (timestamp - origin) / (1_000_000_000 / Self.clock))
    lastPTS = pts
    picture.picture.pointee.i_pts = pts
    // An IDR picture, not just an I picture: a player can start from it.
    picture.picture.pointee.i_type = keyframe ? X264_TYPE_IDR : X264_TYPE_AUTO
    timestamps[pts] = timestamp
    return try encode(picture.picture)
  }

  /// At the end: every picture still inside the encoder, out. The encoder takes nothing after.
  public func finish() throws(CodecError) -> [H264Packet] {
    var out: [H264Packet] = []
    while x264_encoder_delayed_frames(encoder) > 0 { out += try encode(nil) }
    return out
  }

  /// `input` in (nil drains), and the picture x264 hands out, if any, as one packet of its NAL units.
  private func encode(_ input: UnsafeMutablePointer<x264_picture_t>?) throws(CodecError) -> [H264Packet] {
    var nals: UnsafeMutablePointer<x264_nal_t>?
    var count: Int32 = 0
    var output = x264_picture_t()
    let size = x264_encoder_encode(encoder, &nals, &count, input, &output)
    guard size >= 0 else { throw CodecError("x264_encoder_encode\(input == nil ? " (drain)" : "") failed") }
    guard size > 0, let nals else { return [] }
    // The NAL units are valid until the next call: copied now.
    var bytes = pendingSEI
    pendingSEI = []
    bytes.reserveCapacity(bytes.count + Int(size))
    for nal in UnsafeBufferPointer(start: nals, count: Int(count)) {
      bytes += UnsafeBufferPointer(start: nal.p_payload, count: Int(nal.i_payload))
    }
    let timestamp = timestamps.removeValue(forKey: output.i_pts) ?? 0
    return [H264Packet(bytes: bytes, timestamp: timestamp, keyframe: output.b_keyframe != 0)]
  }
}
