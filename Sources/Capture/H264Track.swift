import CameraRoll
import KioskCore
import LinuxIO
import MediaFiles
import VideoCodec

/// A recording's H.264 stream, on the writer's thread: the encoder, the keyframe each second of the frames'
/// own time, and packets turned into MP4 samples.
struct H264Track {
  /// A keyframe a second at most: where a player can seek to, and the most a GOP spans.
  static let keyframeInterval: Int64 = 1_000_000_000

  struct Sample {
    var bytes: [UInt8]
    var timestamp: Int64
    var sync: Bool
  }

  private let encoder: any H264Encoding
  let encoding: MovieEncoding
  /// The sample entry for the MP4.
  let format: VideoTrackFormat
  private var lastKeyframe: Int64?
  private var lastPicture: Int64?

  /// Opens the encoder on `writer` (x264's own threads are made from the thread that opens it): `device`'s
  /// when the probe found a V4L2 one, else x264 at the settings' preset.
  init(_ settings: H264Settings, encoder choice: H264EncoderChoice, on writer: BackgroundWorker) throws(RollError) {
    let opened: any H264Encoding
    do {
      opened = try writer.sync {
        Result { () throws(CodecError) -> any H264Encoding in
          switch choice {
          case .v4l2(let device): return try V4L2H264Encoder(device, settings)
          case .x264: return try H264Encoder(settings)
          }
        }
      }.get()
    } catch {
      throw .unavailable("H.264 encoder: \(error)")
    }
    let named: String
    switch choice {
    case .v4l2(let device): named = "V4L2 \(device.driver)"
    case .x264: named = settings.preset.rawValue
    }
    try self.init(opened, settings, preset: named)
  }

  /// The track of an encoder already open; `preset` is how the record names it.
  init(_ opened: any H264Encoding, _ settings: H264Settings, preset: String) throws(RollError) {
    guard let configuration = AVCDecoderConfiguration(annexB: opened.header) else {
      throw .unavailable("H.264 encoder gave no SPS and PPS")
    }
    encoder = opened
    encoding = MovieEncoding(
      codec: .h264, profile: configuration.profileName, level: configuration.levelName, bitRate: settings.bitRate,
      preset: preset)
    format = .avc(width: settings.width, height: settings.height, configuration: configuration.record, colour: .camera)
  }

  /// One picture in; the samples that came out. x264 counts pictures between keyframes, and a board too slow
  /// for the rate (frames dropped at the queue) would stretch that past the second, so this asks for one by
  /// time: a picture is a keyframe when the next, as far after it as it is after the last, would be past
  /// the second.
  mutating func encode(_ picture: H264Picture, timestamp: Int64) throws(CodecError) -> [Sample] {
    let step = lastPicture.map { timestamp - $0 } ?? 0
    let due = lastKeyframe.map { timestamp - $0 + step > Self.keyframeInterval } ?? true
    if due { lastKeyframe = timestamp }
    lastPicture = timestamp
    return Self.samples(try encoder.encode(picture, timestamp: timestamp, keyframe: due))
  }

  /// The pictures still inside the encoder, at the end.
  func finish() -> [Sample] { Self.samples((try? encoder.finish()) ?? []) }

  private static func samples(_ packets: [H264Packet]) -> [Sample] {
    // A V4L2 encoder may give its parameter sets a buffer of their own: nothing of a picture is left of it.
    packets.map { Sample(bytes: AVCStream.sample($0.bytes), timestamp: $0.timestamp, sync: $0.keyframe) }
      .filter { !$0.bytes.isEmpty }
  }
}
