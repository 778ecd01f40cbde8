import MediaFiles
import Testing
import VideoCodec

@testable import Capture

/// What the recorder does with a V4L2 H.264 encoder's output, which this machine has none of (vicodec makes
/// FWHT only; the board's stateful encoder code is tested with it in CodecDeviceTests): x264's own packets
/// stand in, shaped as the kernel's encoders hand them out, with the parameter sets in front of the first
/// picture or in a buffer of their own.
@Suite struct V4L2H264Tests {
  /// x264's header and its packets for `count` grey pictures 1/30 s apart, the first a keyframe.
  static func x264Stream(count: Int) throws -> (header: [UInt8], packets: [H264Packet]) {
    let encoder = try H264Encoder(H264Settings(width: 64, height: 48, frameRate: 30, bitRate: 200_000, threads: 1))
    var packets: [H264Packet] = []
    for index in 0..<count {
      let picture = try H264Picture(width: 64, height: 48)
      let target = picture.target
      for row in 0..<48 { (target.luma + row * target.lumaStride).update(repeating: UInt8(64 + index), count: 64) }
      for row in 0..<24 {
        (target.cb + row * target.chromaStride).update(repeating: 128, count: 32)
        (target.cr + row * target.chromaStride).update(repeating: 128, count: 32)
      }
      packets += try encoder.encode(picture, timestamp: Int64(index) * 33_333_333, keyframe: index == 0)
    }
    return (encoder.header, packets + (try encoder.finish()))
  }

  /// Pretends to be a V4L2 encoder: `packets` out, all at once, for the first picture in.
  final class Replay: H264Encoding, @unchecked Sendable {
    let header: [UInt8]
    var packets: [H264Packet]
    init(header: [UInt8], packets: [H264Packet]) {
      self.header = header
      self.packets = packets
    }
    func encode(_ picture: H264Picture, timestamp: Int64, keyframe: Bool) throws(CodecError) -> [H264Packet] {
      defer { packets = [] }
      return packets
    }
    func finish() throws(CodecError) -> [H264Packet] { [] }
  }

  @Test func theParameterSetsAreFoundInFrontOfTheFirstPictureOrInABufferOfTheirOwn() throws {
    let (header, packets) = try Self.x264Stream(count: 3)
    let wanted = try #require(AVCDecoderConfiguration(annexB: header)).record
    let first: [UInt8] = header + packets[0].bytes
    let joined: [[UInt8]] = [first] + packets.dropFirst().map { $0.bytes }
    let separate: [[UInt8]] = [header] + packets.map { $0.bytes }
    for stream in [joined, separate] {
      let found = try #require(V4L2H264Encoder.parameterSets(in: stream))
      #expect(AVCDecoderConfiguration(annexB: found)?.record == wanted)
    }
    #expect(V4L2H264Encoder.parameterSets(in: packets.map(\.bytes)) == nil, "none without them")
  }

  @Test func aBufferOfParameterSetsAloneIsNoSampleAndTheOnesInFrontOfAPictureStayOut() throws {
    let (header, packets) = try Self.x264Stream(count: 3)
    let first = packets[0]
    let shaped = [H264Packet(bytes: header, timestamp: first.timestamp, keyframe: true),
      H264Packet(bytes: header + first.bytes, timestamp: first.timestamp, keyframe: true)] + packets.dropFirst()
    let settings = H264Settings(width: 64, height: 48, frameRate: 30, bitRate: 200_000, threads: 1)
    var track = try H264Track(Replay(header: header, packets: shaped), settings, preset: "V4L2 test")
    let samples = try track.encode(try H264Picture(width: 64, height: 48), timestamp: 0)
    #expect(samples.count == packets.count, "one sample a picture: \(samples.map(\.bytes.count))")
    #expect(samples.map(\.bytes) == packets.map { AVCStream.sample($0.bytes) }, "each the picture's NAL units alone")
    #expect(samples.first?.sync == true)
    #expect(track.encoding.preset == "V4L2 test")
  }
}
