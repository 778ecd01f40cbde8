/// What a movie's record needs that only the recording knew: the camera's format, the encoder's bit rate,
/// and the first frame's sequence number and wall-clock time. The recorder hands it to the writer once the
/// first frame is in (a fragment is cut only when a later frame comes), and the first fragment carries it as a `uuid` box of ours inside its `moof` (readers skip a box they do not know;
/// once finished, the `moof` is retyped `free` with it), so a recording a crash cut short is recovered with
/// a whole record.
public struct RecordingStart: Sendable, Equatable {
  /// The camera's fourcc: `MJPG`, `YUYV`, `NV12`.
  public let sourceFormat: String
  /// Bits a second the encoder was set to; nil for Motion-JPEG, which keeps the camera's frames.
  public let bitRate: Int?
  public let sequence: UInt32
  public let unixMilliseconds: Int64

  public init(sourceFormat: String, bitRate: Int?, sequence: UInt32, unixMilliseconds: Int64) {
    self.sourceFormat = sourceFormat
    self.bitRate = bitRate
    self.sequence = sequence
    self.unixMilliseconds = unixMilliseconds
  }
}

extension MovieWriter {
  /// The box's extended type: ISO BMFF's way for a box nobody else defines (made once, at random).
  static let recordingStartType: [UInt8] = [
    0x6B, 0x63, 0x61, 0x6D, 0x3E, 0x51, 0x4A, 0x0F, 0x9B, 0x2C, 0xD4, 0x17, 0x85, 0x60, 0x0E, 0xA3,
  ]

  func recordingStartBox(_ out: inout BoxBuilder, _ start: RecordingStart) {
    out.box("uuid") { box in
      box.bytes += Self.recordingStartType
      box.u8(1)  // version
      box.fourCC(String((start.sourceFormat + "    ").prefix(4)))
      box.u32(UInt32(clamping: start.bitRate ?? 0))
      box.u32(start.sequence)
      box.u64(UInt64(bitPattern: start.unixMilliseconds))
    }
  }

  /// The recording's start from a fragment's `moof` (or one retyped `free`), if it carries one.
  static func recordingStart(inMoof moof: [UInt8]) -> RecordingStart? {
    for child in BoxReader.children(of: moof, in: 8..<moof.count) where child.type == "uuid" {
      guard child.content.count >= 16 + 1 + 4 + 4 + 4 + 8,
        Array(moof[child.content.lowerBound..<child.content.lowerBound + 16]) == recordingStartType
      else { continue }
      var reader = BoxReader(moof, at: child.content.lowerBound + 16)
      guard reader.u8() == 1, let format = reader.fourCC(), let bitRate = reader.u32(), let sequence = reader.u32(),
        let milliseconds = reader.u64()
      else { return nil }
      var source = format
      while source.hasSuffix(" ") { source.removeLast() }
      return RecordingStart(
        sourceFormat: source, bitRate: bitRate == 0 ? nil : Int(bitRate), sequence: sequence,
        unixMilliseconds: Int64(bitPattern: milliseconds))
    }
    return nil
  }
}
