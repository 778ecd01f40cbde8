import Foundation
import Testing

/// The V4L2 memory-to-memory encoder and decoder code (V4L2Codec, run by `kioskcam-m2m` in the guest) on
/// a real kernel driver: vicodec's stateful FWHT encoder and decoder, built out of tree, on the multi-planar
/// API a Pi's bcm2835-codec speaks. v4l2-ctl, a client nobody here wrote, decodes what ours encoded, and
/// encodes what ours then decodes.
extension BoardDeviceTests {
  static let codecSize = (width: 640, height: 360)  // vicodec's smallest; 360 lines are coded as 368
  static let codecFrames = 12

  @Test func picturesRoundTripThroughOurStatefulEncoderAndDecoderOnVicodec() throws {
    let share = try #require(Board.share)
    let tool = try #require(Board.tool("kioskcam-m2m"))
    // The nodes by the names the driver registered them under (sysfs), not by our own listing.
    let named = try Board.run(
      "for n in /sys/class/video4linux/video*; do echo \"$(cat $n/name)=/dev/${n##*/}\"; done").stdout
    let nodes = Dictionary(
      named.split(separator: "\n").compactMap { line -> (String, String)? in
        let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
        return parts.count == 2 ? (parts[0], parts[1]) : nil
      }, uniquingKeysWith: { first, _ in first })
    let encoder = try #require(nodes["stateful-encoder"], "vicodec's encoder in \(named)")
    let decoder = try #require(nodes["stateful-decoder"], "vicodec's decoder in \(named)")
    let listed = try Board.run("\(tool) list").stdout
    #expect(listed.contains("\(encoder) (vicodec): YU12,"), "\(listed)")
    #expect(listed.contains(" to FWHT\n"), "\(listed)")
    #expect(listed.contains("\(decoder) (vicodec): FWHT to YU12,"), "\(listed)")

    let folder = "\(share)/codec"
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let input = Self.movingPictures(frames: Self.codecFrames)
    try Data(input).write(to: URL(fileURLWithPath: "\(folder)/in.yuv"))
    let (width, height) = Self.codecSize
    let expectedStamps = (0..<Self.codecFrames).map { 5_000_000_000 + Int64($0) * 33_333_333 }

    // A stream dropped after 3 pictures with no drain, then two whole streams in the same process.
    let encoded = try Board.run(
      "cd \(folder) && \(tool) encode \(encoder) --coded FWHT --raw YU12 --size \(width)x\(height) --in in.yuv "
        + "--out ours.fwht --abandon-after 3 --streams 2", timeout: 300)
    try #require(encoded.status == 0, "\(encoded.stderr)")
    let lines = encoded.stdout.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    let packets = lines.filter { $0["bytes"] != nil }
    for stream in [1, 2] {
      let ours = packets.filter { $0["stream"] as? Int == stream }
      #expect(ours.count == Self.codecFrames, "stream \(stream): one packet a picture, drained to the last")
      #expect(ours.compactMap { ($0["timestamp"] as? NSNumber)?.int64Value } == expectedStamps, "timestamps carried through")
    }
    #expect(packets.filter { $0["stream"] as? Int == 0 }.count <= 3)
    let first = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/ours.fwht"))
    let second = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/ours.fwht.2"))
    #expect(first == second, "a second stream after the first (and after one abandoned) encodes the same pictures the same")
    let frames = try #require(Self.fwhtFrames(Array(first)), "FWHT framing")
    #expect(frames.map(\.count) == packets.filter { $0["stream"] as? Int == 1 }.compactMap { $0["bytes"] as? Int })
    #expect(frames.allSatisfy { Self.fwhtSize($0) == (width, height) }, "each header says \(width)x\(height)")

    // Ours decodes ours; v4l2-ctl decodes ours too, and must give the same pictures byte for byte.
    let sizes = frames.map { String($0.count) }.joined(separator: ",")
    let decoded = try Board.run(
      "cd \(folder) && \(tool) decode \(decoder) --coded FWHT --raw YU12 --in ours.fwht --out ours.yuv --packets \(sizes)"
        + " && v4l2-ctl -d \(decoder) --set-fmt-video=pixelformat=YU12 --stream-mmap --stream-out-mmap"
        + " --stream-from ours.fwht --stream-to peer.yuv", timeout: 300)
    try #require(decoded.status == 0, "\(decoded.stderr)")
    let stamps = decoded.stdout.split(separator: "\n").compactMap {
      ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any])?["timestamp"] as? NSNumber
    }.map(\.int64Value)
    #expect(stamps == expectedStamps)
    let ours = Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/ours.yuv")))
    let peer = Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/peer.yuv")))
    #expect(ours.count == input.count)
    // Compared as a flag: a failure printing two 4 MB arrays takes minutes.
    let firstDifference =
      ours.indices.first { $0 >= peer.count || ours[$0] != peer[$0] } ?? (ours.count == peer.count ? nil : ours.count)
    #expect(firstDifference == nil, "our decoder and v4l2-ctl's agree on our stream byte for byte")
    let quality = Self.lumaPSNR(input, ours)
    print("vicodec round trip, luma PSNR per picture: \(quality.map { String(format: "%.1f", $0) })")
    #expect(quality.count == Self.codecFrames && quality.allSatisfy { $0 >= 40 }, "\(quality)")

    // The preview's V4L2 frame decoder (a Pi's MJPEG preview, here on FWHT): a picture waited for per packet,
    // read through the plane view the preview draws from, the same pictures as the stream decoder's.
    let previewed = try Board.run(
      "cd \(folder) && \(tool) preview-decode \(decoder) --coded FWHT --in ours.fwht --out preview.yuv --packets \(sizes)",
      timeout: 300)
    try #require(previewed.status == 0, "\(previewed.stderr)")
    let previewLines = previewed.stdout.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    #expect(previewLines.count == Self.codecFrames && previewLines.allSatisfy { $0["width"] as? Int == width && $0["height"] as? Int == height }, "\(previewed.stdout)")
    print("the preview's V4L2 frame decoder on vicodec, microseconds a picture: \(previewLines.compactMap { $0["microseconds"] as? Int })")
    let preview = Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/preview.yuv")))
    let sameAsOurs = preview == ours  // a flag: a failure printing two 4 MB arrays takes minutes
    #expect(sameAsOurs, "the preview's decoder and the stream decoder agree byte for byte (\(preview.count) and \(ours.count) bytes)")

    // And a stream v4l2-ctl encoded decodes through ours to the same pictures.
    let peerEncoded = try Board.run(
      "cd \(folder) && v4l2-ctl -d \(encoder) --set-fmt-video-out=width=\(width),height=\(height),pixelformat=YU12"
        + " --set-selection-output target=crop,width=\(width),height=\(height) --stream-mmap --stream-out-mmap"
        + " --stream-from in.yuv --stream-to peer.fwht", timeout: 300)
    try #require(peerEncoded.status == 0, "\(peerEncoded.stderr)")
    let peerFrames = try #require(
      Self.fwhtFrames(Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/peer.fwht")))), "v4l2-ctl's framing")
    #expect(peerFrames.count == Self.codecFrames)
    let fromPeer = try Board.run(
      "cd \(folder) && \(tool) decode \(decoder) --coded FWHT --raw YU12 --in peer.fwht --out from-peer.yuv "
        + "--packets \(peerFrames.map { String($0.count) }.joined(separator: ","))", timeout: 300)
    try #require(fromPeer.status == 0, "\(fromPeer.stderr)")
    let peerQuality = Self.lumaPSNR(input, Array(try Data(contentsOf: URL(fileURLWithPath: "\(folder)/from-peer.yuv"))))
    #expect(peerQuality.count == Self.codecFrames && peerQuality.allSatisfy { $0 >= 40 }, "\(peerQuality)")
  }

  /// YU12 pictures with edges, gradients and motion, so that P-frames have something to predict.
  static func movingPictures(frames: Int) -> [UInt8] {
    let (width, height) = codecSize
    var bytes: [UInt8] = []
    bytes.reserveCapacity(frames * width * height * 3 / 2)
    for frame in 0..<frames {
      for y in 0..<height {
        for x in 0..<width {
          let bar = ((x + frame * 6) / 80) % 2 == 0 ? 60 : 0
          bytes.append(UInt8(truncatingIfNeeded: (x * 180 / width) + bar + (y / 90) * 8))
        }
      }
      for plane in 0..<2 {
        for y in 0..<(height / 2) {
          for x in 0..<(width / 2) {
            bytes.append(UInt8(truncatingIfNeeded: 128 + (plane == 0 ? (x - 160) / 3 : (y - 90) / 2) + frame))
          }
        }
      }
    }
    return bytes
  }

  /// FWHT frames by their headers (codec-fwht.h: two magic words, then eight big-endian words, the last the
  /// compressed size after the 44-byte header); nil when a magic word is wrong.
  static func fwhtFrames(_ stream: [UInt8]) -> [ArraySlice<UInt8>]? {
    var frames: [ArraySlice<UInt8>] = []
    var offset = 0
    while offset + 44 <= stream.count {
      guard stream[offset..<(offset + 8)].elementsEqual([0x4f, 0x4f, 0x4f, 0x4f, 0xff, 0xff, 0xff, 0xff]) else { return nil }
      let size = bigEndian(stream, offset + 40)
      guard offset + 44 + size <= stream.count else { return nil }
      frames.append(stream[offset..<(offset + 44 + size)])
      offset += 44 + size
    }
    return offset == stream.count ? frames : nil
  }

  static func fwhtSize(_ frame: ArraySlice<UInt8>) -> (Int, Int) {
    (bigEndian(Array(frame), 12), bigEndian(Array(frame), 16))
  }

  static func bigEndian(_ bytes: [UInt8], _ at: Int) -> Int {
    (0..<4).reduce(0) { $0 << 8 | Int(bytes[at + $1]) }
  }

  /// Luma PSNR of each picture of `decoded` against `original`, in dB.
  static func lumaPSNR(_ original: [UInt8], _ decoded: [UInt8]) -> [Double] {
    let (width, height) = codecSize
    let pictureSize = width * height * 3 / 2
    guard decoded.count == original.count else { return [] }
    return (0..<(original.count / pictureSize)).map { picture in
      let start = picture * pictureSize
      var squared = 0
      for index in start..<(start + width * height) {
        let difference = Int(original[index]) - Int(decoded[index])
        squared += difference * difference
      }
      let mean = Double(squared) / Double(width * height)
      return mean == 0 ? 99 : 10 * log10(255 * 255 / mean)
    }
  }
}
