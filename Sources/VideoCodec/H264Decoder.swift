import CAVCodec
import Imaging

/// H.264 from an MP4 (length-prefixed samples, parameter sets in the `avcC`) decoded by libavcodec's own
/// decoder, a picture per sample (kioskcam's movies have no B-frames; anyone else's come out late and are
/// still shown in order). Not thread-safe: one thread decodes a movie, in decode order.
public final class H264Decoder {
  private let av: kioskcam_libav
  private var context: UnsafeMutablePointer<AVCodecContext>?
  private var packet: UnsafeMutablePointer<AVPacket>?
  private var frame: UnsafeMutablePointer<AVFrame>?

  public init(configuration record: [UInt8]) throws(CodecError) {
    av = try LibAV.api()
    guard let codec = av.avcodec_find_decoder(AV_CODEC_ID_H264) else { throw CodecError("libavcodec has no H.264 decoder") }
    guard let context = av.avcodec_alloc_context3(codec) else { throw CodecError("avcodec_alloc_context3 failed") }
    self.context = context
    // The decoder owns its copy of the avcC, padded as libavcodec reads past the end.
    let padded = kioskcam_input_buffer_padding()
    guard let extradata = av.av_mallocz(record.count + padded)?.assumingMemoryBound(to: UInt8.self) else {
      av.avcodec_free_context(&self.context)
      throw CodecError("av_mallocz failed")
    }
    record.withUnsafeBufferPointer { extradata.update(from: $0.baseAddress!, count: record.count) }
    context.pointee.extradata = extradata
    context.pointee.extradata_size = Int32(record.count)
    context.pointee.thread_count = 1
    let status = av.avcodec_open2(context, codec, nil)
    guard status >= 0 else {
      av.avcodec_free_context(&self.context)
      throw CodecError("avcodec_open2 (H.264 decoder)", status)
    }
    packet = av.av_packet_alloc()
    frame = av.av_frame_alloc()
    guard packet != nil, frame != nil else {
      av.av_packet_free(&packet)
      av.av_frame_free(&frame)
      av.avcodec_free_context(&self.context)
      throw CodecError("av_packet_alloc or av_frame_alloc failed")
    }
  }

  deinit {
    av.av_frame_free(&frame)
    av.av_packet_free(&packet)
    av.avcodec_free_context(&context)
  }

  /// Decodes one sample; `body` sees the picture that came out of it, if one did (valid only inside `body`).
  public func decode<T>(_ sample: [UInt8], _ body: (YCbCrPlaneView) -> T) throws(CodecError) -> T? {
    guard let packet, let frame else { return nil }
    // av_new_packet pads the data as the decoder needs.
    var status = av.av_new_packet(packet, Int32(sample.count))
    guard status >= 0 else { throw CodecError("av_new_packet", status) }
    defer { av.av_packet_unref(packet) }
    sample.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: sample.count) }
    status = av.avcodec_send_packet(context, packet)
    guard status >= 0 else { throw CodecError("avcodec_send_packet", status) }
    status = av.avcodec_receive_frame(context, frame)
    if status == kioskcam_averror_eagain() { return nil }
    guard status >= 0 else { throw CodecError("avcodec_receive_frame", status) }
    defer { av.av_frame_unref(frame) }
    let f = frame.pointee
    guard f.format == AV_PIX_FMT_YUV420P.rawValue || f.format == AV_PIX_FMT_YUVJ420P.rawValue else {
      throw CodecError("decoded H.264 picture is pixel format \(f.format), not 4:2:0")
    }
    let width = Int(f.width)
    let height = Int(f.height)
    let view = YCbCrPlaneView(
      width: width, height: height, chromaWidth: (width + 1) / 2, chromaHeight: (height + 1) / 2,
      luma: UnsafePointer(f.data.0!), cb: UnsafePointer(f.data.1!), cr: UnsafePointer(f.data.2!),
      lumaStride: Int(f.linesize.0), chromaStride: Int(f.linesize.1))
    return body(view)
  }
}
