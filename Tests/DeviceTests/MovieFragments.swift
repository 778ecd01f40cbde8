import Foundation

/// The fragments of a finished movie read back from its bytes by the test's own box walker (ISO/IEC 14496-12),
/// not by the product's reader: a finished file keeps each `moof` retyped `free` in place, so each one's
/// `trun` still says how long its samples last.
enum MovieFragments {
  struct Box {
    let type: String
    let payload: Range<Int>
  }

  static func boxes(_ bytes: [UInt8], in range: Range<Int>) -> [Box] {
    var found: [Box] = []
    var at = range.lowerBound
    while at + 8 <= range.upperBound {
      var size = Int(u32(bytes, at))
      let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
      var header = 8
      if size == 1, at + 16 <= range.upperBound {
        size = Int(u64(bytes, at + 8))
        header = 16
      }
      if size == 0 { size = range.upperBound - at }
      guard size >= header, at + size <= range.upperBound else { break }
      found.append(Box(type: type, payload: (at + header)..<(at + size)))
      at += size
    }
    return found
  }

  struct Fragment {
    let seconds: Double
    let samples: Int
  }

  /// Each fragment of the video track (how long, how many samples), in file order; nil when the file has no
  /// video track.
  static func videoFragments(_ bytes: [UInt8]) -> [Fragment]? {
    let top = boxes(bytes, in: 0..<bytes.count)
    guard let moov = top.last(where: { $0.type == "moov" }) else { return nil }
    var timescale: UInt32?
    var trackID: UInt32?
    for trak in boxes(bytes, in: moov.payload) where trak.type == "trak" {
      let children = boxes(bytes, in: trak.payload)
      guard let mdia = children.first(where: { $0.type == "mdia" }) else { continue }
      let media = boxes(bytes, in: mdia.payload)
      guard let hdlr = media.first(where: { $0.type == "hdlr" }),
        String(decoding: bytes[(hdlr.payload.lowerBound + 8)..<(hdlr.payload.lowerBound + 12)], as: UTF8.self) == "vide",
        let mdhd = media.first(where: { $0.type == "mdhd" }), let tkhd = children.first(where: { $0.type == "tkhd" })
      else { continue }
      let version = bytes[mdhd.payload.lowerBound]
      timescale = u32(bytes, mdhd.payload.lowerBound + (version == 1 ? 20 : 12))
      trackID = u32(bytes, tkhd.payload.lowerBound + (bytes[tkhd.payload.lowerBound] == 1 ? 20 : 12))
    }
    guard let timescale, let trackID, timescale > 0 else { return nil }
    var fragments: [Fragment] = []
    // A fragment: a `moof`, or one retyped `free` whose payload begins with its `mfhd`.
    for box in top where box.type == "moof" || (box.type == "free" && box.payload.count > 8
      && String(decoding: bytes[(box.payload.lowerBound + 4)..<(box.payload.lowerBound + 8)], as: UTF8.self) == "mfhd")
    {
      for traf in boxes(bytes, in: box.payload) where traf.type == "traf" {
        let parts = boxes(bytes, in: traf.payload)
        guard let tfhd = parts.first(where: { $0.type == "tfhd" }), u32(bytes, tfhd.payload.lowerBound + 4) == trackID else {
          continue
        }
        let tfhdFlags = u32(bytes, tfhd.payload.lowerBound) & 0xFF_FFFF
        // tfhd's optional fields in order: base data offset (8), description index (4), default duration (4).
        var optional = tfhd.payload.lowerBound + 8
        if tfhdFlags & 0x1 != 0 { optional += 8 }
        if tfhdFlags & 0x2 != 0 { optional += 4 }
        let defaultDuration = tfhdFlags & 0x8 != 0 ? u32(bytes, optional) : 0
        var ticks: UInt64 = 0
        var samples = 0
        for trun in parts where trun.type == "trun" {
          let flags = u32(bytes, trun.payload.lowerBound) & 0xFF_FFFF
          let count = Int(u32(bytes, trun.payload.lowerBound + 4))
          samples += count
          var at = trun.payload.lowerBound + 8
          if flags & 0x1 != 0 { at += 4 }
          if flags & 0x4 != 0 { at += 4 }
          let fields = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }.count
          for _ in 0..<count {
            ticks += UInt64(flags & 0x100 != 0 ? u32(bytes, at) : defaultDuration)
            at += 4 * fields
          }
        }
        fragments.append(Fragment(seconds: Double(ticks) / Double(timescale), samples: samples))
      }
    }
    return fragments
  }

  static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[at + $1]) }
  }

  static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
    (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[at + $1]) }
  }
}
