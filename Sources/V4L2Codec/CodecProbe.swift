import CV4L2
import LinuxIO

/// One memory-to-memory codec node and the formats on its two queues, as found at probe time.
public struct CodecInfo: Sendable, Equatable {
  public let path: String
  public let driver: String
  public let card: String
  /// What the codec takes in (its OUTPUT queue) and gives out (its CAPTURE queue), in the driver's order.
  public let takes: [FourCC]
  public let gives: [FourCC]

  /// The raw formats among `raw` it encodes into `coded`, if it is such an encoder.
  public func encodes(_ coded: FourCC, from raw: [FourCC]) -> [FourCC] {
    gives.contains(coded) ? raw.filter(takes.contains) : []
  }

  /// The raw formats among `raw` it decodes `coded` into, if it is such a decoder.
  public func decodes(_ coded: FourCC, to raw: [FourCC]) -> [FourCC] {
    takes.contains(coded) ? raw.filter(gives.contains) : []
  }

  /// `/dev/video11 (bcm2835-codec): YU12,NV12 to H264`
  public var summary: String {
    "\(path) (\(driver)): \(takes.map(\.description).joined(separator: ",")) to \(gives.map(\.description).joined(separator: ","))"
  }
}

public enum CodecProbe {
  /// Every `/dev/video*` node that is a multi-planar memory-to-memory device, in number order.
  public static func codecs(in directory: String = "/dev") -> [CodecInfo] {
    DirectoryListing.numberedNodes(in: directory, prefix: "video").compactMap { path in
      guard let device = try? CodecDevice(path: path) else { return nil }
      return CodecInfo(
        path: path, driver: device.driver, card: device.card,
        takes: device.formats(V4L2_BUF_TYPE_VIDEO_OUTPUT_MPLANE), gives: device.formats(V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE))
    }
  }

  /// The first codec that decodes `coded` into one of `raw` (the caller's preferred order).
  public static func decoder(for coded: FourCC, to raw: [FourCC], among codecs: [CodecInfo]) -> (CodecInfo, FourCC)? {
    for codec in codecs {
      if let format = codec.decodes(coded, to: raw).first { return (codec, format) }
    }
    return nil
  }

  /// The first codec that encodes `coded` from one of `raw` (the caller's preferred order).
  public static func encoder(for coded: FourCC, from raw: [FourCC], among codecs: [CodecInfo]) -> (CodecInfo, FourCC)? {
    for codec in codecs {
      if let format = codec.encodes(coded, from: raw).first { return (codec, format) }
    }
    return nil
  }
}

extension CodecInfo: Encodable {
  private enum CodingKeys: String, CodingKey { case path, driver, card, takes, gives }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(path, forKey: .path)
    try container.encode(driver, forKey: .driver)
    try container.encode(card, forKey: .card)
    try container.encode(takes.map(\.description), forKey: .takes)
    try container.encode(gives.map(\.description), forKey: .gives)
  }
}
