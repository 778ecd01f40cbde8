/// What a movie's sound track holds: AAC-LC in an `mp4a` sample entry whose `esds` carries the
/// AudioSpecificConfig, kept whole so that a recovered file is finished with the entry it started with.
public struct AudioTrackFormat: Sendable, Equatable {
  public let sampleRate: Int
  public let channels: Int
  /// Frames in each sample (an AAC frame): the track's every sample lasts this many ticks of `sampleRate`.
  public let frameLength: Int
  /// The `stsd` entry, size and type included.
  let sampleEntry: [UInt8]

  /// The sample entry's type: `mp4a`.
  public var codec: String { String(decoding: sampleEntry[4..<8], as: UTF8.self) }

  /// AAC in MP4 (ISO/IEC 14496-14): `audioSpecificConfig` as the encoder gives it (two bytes for AAC-LC).
  public static func aac(
    sampleRate: Int, channels: Int, audioSpecificConfig: [UInt8], bitRate: Int, frameLength: Int = 1024
  ) -> AudioTrackFormat {
    var out = BoxBuilder()
    out.box("mp4a") { entry in
      entry.zeros(6)
      entry.u16(1)  // data reference index
      entry.zeros(8)  // version, revision, vendor (ISO: reserved)
      entry.u16(UInt16(channels))
      entry.u16(16)  // sample size
      entry.zeros(4)  // pre-defined, reserved
      entry.u32(UInt32(sampleRate) << 16)  // 16.16
      entry.fullBox("esds") { esds in
        // ES_Descriptor > DecoderConfigDescriptor > DecoderSpecificInfo, and the SLConfigDescriptor MP4 asks.
        let specific = descriptor(0x05, audioSpecificConfig)
        var config = BoxBuilder()
        config.u8(0x40)  // object type: Audio ISO/IEC 14496-3
        config.u8(0x05 << 2 | 1)  // stream type audio, upstream 0, reserved 1
        let buffer = UInt32(6144 / 8 * channels)  // the most an AAC frame can be
        config.u8(UInt8(buffer >> 16))
        config.u16(UInt16(buffer & 0xFFFF))
        config.u32(UInt32(bitRate))  // maximum
        config.u32(UInt32(bitRate))  // average
        var stream = BoxBuilder()
        stream.u16(0)  // ES_ID: the track's, in MP4
        stream.u8(0)  // no dependence, URL or OCR stream
        stream.bytes += descriptor(0x04, config.bytes + specific)
        stream.bytes += descriptor(0x06, [0x02])  // predefined: MP4
        esds.bytes += descriptor(0x03, stream.bytes)
      }
    }
    return AudioTrackFormat(sampleRate: sampleRate, channels: channels, frameLength: frameLength, sampleEntry: out.bytes)
  }

  /// An MPEG-4 descriptor: its tag, its size in the four-byte form (as FFmpeg writes it), its bytes.
  private static func descriptor(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
    let size = UInt32(content.count)
    return [tag, UInt8(0x80 | (size >> 21) & 0x7F), UInt8(0x80 | (size >> 14) & 0x7F), UInt8(0x80 | (size >> 7) & 0x7F),
      UInt8(size & 0x7F)] + content
  }

  /// The AudioSpecificConfig inside the entry's `esds` (the DecoderSpecificInfo's bytes).
  public var audioSpecificConfig: [UInt8]? {
    guard sampleEntry.count > 36,
      let esds = BoxReader.children(of: sampleEntry, in: 36..<sampleEntry.count).first(where: { $0.type == "esds" })
    else { return nil }
    // Walk the descriptors: 0x03 and 0x04 hold others after their own fields, 0x05 is the config.
    var at = esds.content.lowerBound + 4
    while at < esds.content.upperBound {
      let tag = sampleEntry[at]
      at += 1
      var size = 0
      for _ in 0..<4 where at < esds.content.upperBound {
        let byte = sampleEntry[at]
        at += 1
        size = size << 7 | Int(byte & 0x7F)
        if byte & 0x80 == 0 { break }
      }
      switch tag {
      case 0x03: at += 3  // ES_ID and flags (ours has no dependence, URL or OCR)
      case 0x04: at += 13  // object type, stream type, buffer, two rates
      case 0x05: return at + size <= esds.content.upperBound ? Array(sampleEntry[at..<at + size]) : nil
      default: at += size
      }
    }
    return nil
  }

  /// An entry read back from a file (recovery), as it was written; `timescale` is its track's (the rate).
  static func read(entry: [UInt8], timescale: UInt32) -> AudioTrackFormat? {
    guard entry.count >= 36, String(decoding: entry[4..<8], as: UTF8.self) == "mp4a" else { return nil }
    var reader = BoxReader(entry, at: 8 + 16)
    guard let channels = reader.u16(), channels > 0 else { return nil }
    return AudioTrackFormat(sampleRate: Int(timescale), channels: Int(channels), frameLength: 1024, sampleEntry: entry)
  }
}
