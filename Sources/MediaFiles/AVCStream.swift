/// H.264 as an encoder hands it out (Annex B: NAL units behind start codes) turned into what MP4 holds
/// (each NAL unit behind its 4-byte length, parameter sets in the sample entry's `avcC`). Bytes in, bytes out.
public enum AVCStream {
  /// The NAL units of an Annex B byte stream, start codes (3 or 4 bytes) removed.
  public static func nalUnits(_ stream: [UInt8]) -> [ArraySlice<UInt8>] {
    var units: [ArraySlice<UInt8>] = []
    var start: Int?
    var index = 0
    let count = stream.count
    while index + 2 < count {
      if stream[index] == 0, stream[index + 1] == 0, stream[index + 2] == 1 {
        if let start {
          // A 4-byte start code's leading zero belongs to it, not to the unit before.
          var end = index
          while end > start, stream[end - 1] == 0 { end -= 1 }
          units.append(stream[start..<end])
        }
        index += 3
        start = index
      } else {
        index += 1
      }
    }
    if let start, start < count { units.append(stream[start..<count]) }
    return units.filter { !$0.isEmpty }
  }

  /// The NAL unit type (the low five bits of its first byte): 5 IDR slice, 6 SEI, 7 SPS, 8 PPS, 9 AUD.
  public static func type(_ unit: ArraySlice<UInt8>) -> UInt8 { unit.first.map { $0 & 0x1F } ?? 0 }

  /// One access unit as an MP4 sample: every NAL unit behind its length. Parameter sets and access unit
  /// delimiters stay out (the sample entry has the former; MP4 needs no delimiters).
  public static func sample(_ accessUnit: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(accessUnit.count + 16)
    for unit in nalUnits(accessUnit) where ![7, 8, 9].contains(type(unit)) {
      let length = UInt32(unit.count)
      out += [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
      out += unit
    }
    return out
  }

  /// A sample (length-prefixed) back to its NAL units: for decoding, and for tests that look inside.
  public static func units(ofSample sample: [UInt8]) -> [ArraySlice<UInt8>]? {
    var units: [ArraySlice<UInt8>] = []
    var offset = 0
    while offset + 4 <= sample.count {
      let length = sample[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      guard length > 0, offset + 4 + length <= sample.count else { return nil }
      units.append(sample[offset + 4..<offset + 4 + length])
      offset += 4 + length
    }
    return offset == sample.count ? units : nil
  }
}

/// The `avcC` box's payload (ISO/IEC 14496-15's AVCDecoderConfigurationRecord), made from the encoder's
/// sequence and picture parameter sets.
public struct AVCDecoderConfiguration: Sendable, Equatable {
  public let sequenceParameterSet: [UInt8]
  public let pictureParameterSet: [UInt8]

  /// From the encoder's global header (Annex B with one SPS and one PPS); nil when either is missing.
  public init?(annexB header: [UInt8]) {
    let units = AVCStream.nalUnits(header)
    guard let sps = units.first(where: { AVCStream.type($0) == 7 }), sps.count >= 4,
      let pps = units.first(where: { AVCStream.type($0) == 8 })
    else { return nil }
    sequenceParameterSet = Array(sps)
    pictureParameterSet = Array(pps)
  }

  /// From an `avcC` payload (the first SPS and PPS it lists).
  public init?(record: [UInt8]) {
    var reader = BoxReader(record, at: 5)
    guard let spsCount = reader.u8(), spsCount & 0x1F >= 1, let spsLength = reader.u16(),
      reader.remaining >= Int(spsLength) + 3
    else { return nil }
    let sps = Array(record[reader.position..<reader.position + Int(spsLength)])
    reader.position += Int(spsLength)
    guard let ppsCount = reader.u8(), ppsCount >= 1, let ppsLength = reader.u16(), reader.remaining >= Int(ppsLength),
      sps.count >= 4
    else { return nil }
    sequenceParameterSet = sps
    pictureParameterSet = Array(record[reader.position..<reader.position + Int(ppsLength)])
  }

  /// profile_idc: 66 Baseline, 77 Main, 100 High.
  public var profile: UInt8 { sequenceParameterSet[1] }
  /// level_idc, ten times the level: 31 is level 3.1.
  public var level: UInt8 { sequenceParameterSet[3] }

  public var profileName: String {
    switch profile {
    case 66: sequenceParameterSet[2] & 0x40 != 0 ? "Constrained Baseline" : "Baseline"
    case 77: "Main"
    case 88: "Extended"
    case 100: "High"
    case 110: "High 10"
    case 122: "High 4:2:2"
    case 244: "High 4:4:4"
    default: "profile \(profile)"
    }
  }

  /// "4.0", "3.1".
  public var levelName: String { "\(level / 10).\(level % 10)" }

  public var record: [UInt8] {
    var out: [UInt8] = [1, profile, sequenceParameterSet[2], level, 0xFF]  // 4-byte NAL lengths
    out.append(0xE1)  // one SPS
    out += [UInt8(sequenceParameterSet.count >> 8), UInt8(sequenceParameterSet.count & 0xFF)] + sequenceParameterSet
    out.append(1)  // one PPS
    out += [UInt8(pictureParameterSet.count >> 8), UInt8(pictureParameterSet.count & 0xFF)] + pictureParameterSet
    if [100, 110, 122, 144].contains(profile) {
      // The High profiles' extension; what the encoder is given: 4:2:0 and 8 bits.
      out += [0xFC | 1, 0xF8 | 0, 0xF8 | 0, 0] as [UInt8]
    }
    return out
  }
}
