import LinuxIO
import MediaFiles
import V4L2Codec
import VideoCodec

/// Where a recording's H.264 comes from: libx264 (its own API), or a V4L2 memory-to-memory encoder. One
/// thread encodes, in capture order; the encoder is made on that thread and handed over once.
protocol H264Encoding: AnyObject, Sendable {
  /// SPS and PPS, Annex B, for the MP4's `avcC`.
  var header: [UInt8] { get }
  func encode(_ picture: H264Picture, timestamp: Int64, keyframe: Bool) throws(CodecError) -> [H264Packet]
  func finish() throws(CodecError) -> [H264Packet]
}

extension H264Encoder: H264Encoding {}

/// A V4L2 H.264 encoder the probe found and tried (the Pi 4's bcm2835-codec at /dev/video11), and the raw
/// format it takes the pictures in.
/// Which H.264 encoder a recording opens: what the `h264-encoder` probe chose.
public enum H264EncoderChoice: Sendable, Equatable {
  /// libx264, at the preset measured to hold the camera's rate.
  case x264(H264Preset)
  /// A V4L2 memory-to-memory encoder, which the probe tried with a picture.
  case v4l2(V4L2H264Device)

  /// Before any probe (tests, the bench): x264's superfast, which holds 720p30 on two cores here.
  public static let unprobed = H264EncoderChoice.x264(.superfast)

  /// The x264 preset, for the settings (a V4L2 encoder has none).
  var preset: H264Preset {
    if case .x264(let preset) = self { return preset }
    return .superfast
  }
}

public struct V4L2H264Device: Sendable, Equatable {
  public let path: String
  public let driver: String
  public let raw: FourCC

  public init(path: String, driver: String, raw: FourCC) {
    self.path = path
    self.driver = driver
    self.raw = raw
  }
}

/// H.264 from the kernel's stateful encoder interface (`V4L2Codec.StatefulEncoder`, the code vicodec tests
/// with FWHT): the recorder's 4:2:0 pictures copied into its OUTPUT buffers, its packets out with their
/// pictures' capture times, a keyframe asked for by time where the driver takes FORCE_KEY_FRAME.
public final class V4L2H264Encoder: H264Encoding, @unchecked Sendable {
  // Unchecked: made on the recorder's writer thread and used only there.
  let header: [UInt8]
  private let encoder: StatefulEncoder

  init(_ device: V4L2H264Device, _ settings: H264Settings) throws(CodecError) {
    let wanted = Self.settings(device, settings)
    header = try Self.parameterSets(device, wanted)
    do {
      encoder = try StatefulEncoder(path: device.path, settings: wanted)
    } catch {
      throw CodecError("\(error)")
    }
  }

  public static func settings(_ device: V4L2H264Device, _ settings: H264Settings) -> EncoderSettings {
    EncoderSettings(
      coded: .h264, raw: device.raw, width: settings.width, height: settings.height, frameRate: settings.frameRate,
      bitRate: settings.bitRate)
  }

  /// The SPS and PPS `device` makes at `settings`, Annex B. A V4L2 encoder hands them out with its first coded
  /// picture (in front of it, or in a buffer of their own), not when it opens, and the MP4's header needs them
  /// before any frame: one grey picture through a stream of its own gives them (the same settings give the
  /// same parameter sets), and the recording's stream then starts afresh.
  public static func parameterSets(_ device: V4L2H264Device, _ settings: EncoderSettings) throws(CodecError) -> [UInt8] {
    var packets: [CodedPacket] = []
    do {
      let trial = try StatefulEncoder(path: device.path, settings: settings)
      let grey = [UInt8](repeating: 128, count: trial.layout.tightSize)
      packets = try grey.withUnsafeBytes { tight throws(CodecDeviceError) in
        try trial.encode(timestamp: 0, keyframe: true) { buffer, layout in layout.pack(tight, into: buffer) }
      }
      packets += try trial.finish()
    } catch {
      throw CodecError("\(error)")
    }
    guard let header = parameterSets(in: packets.map(\.bytes)) else {
      throw CodecError("\(device.path) (\(device.driver)) gave no SPS and PPS with its first picture")
    }
    return header
  }

  /// The first SPS and PPS among coded packets, as an Annex B header (each behind a 4-byte start code).
  static func parameterSets(in packets: [[UInt8]]) -> [UInt8]? {
    var sps: ArraySlice<UInt8>?
    var pps: ArraySlice<UInt8>?
    for unit in packets.lazy.flatMap(AVCStream.nalUnits) {
      switch AVCStream.type(unit) {
      case 7: sps = sps ?? unit
      case 8: pps = pps ?? unit
      default: break
      }
    }
    guard let sps, let pps else { return nil }
    return [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps
  }

  func encode(_ picture: H264Picture, timestamp: Int64, keyframe: Bool) throws(CodecError) -> [H264Packet] {
    let planes = picture.target
    do {
      return try encoder.encode(timestamp: timestamp, keyframe: keyframe) { buffer, layout in
        layout.pack(
          luma: planes.luma, lumaStride: planes.lumaStride, cb: planes.cb, cr: planes.cr,
          chromaStride: planes.chromaStride, into: buffer)
      }.map(Self.packet)
    } catch {
      throw CodecError("\(error)")
    }
  }

  func finish() throws(CodecError) -> [H264Packet] {
    do {
      return try encoder.finish().map(Self.packet)
    } catch {
      throw CodecError("\(error)")
    }
  }

  private static func packet(_ coded: CodedPacket) -> H264Packet {
    H264Packet(bytes: coded.bytes, timestamp: coded.timestamp, keyframe: coded.keyframe)
  }
}
