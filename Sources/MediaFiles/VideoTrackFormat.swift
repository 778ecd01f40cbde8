/// What a movie's video track holds and which container it is written in: the sample entry players read
/// the codec from, whole, so that a recovered file is finished with exactly the description it started with.
public struct VideoTrackFormat: Sendable, Equatable {
  public enum Container: Sendable, Equatable {
    /// QuickTime `.MOV`: Motion-JPEG.
    case quickTime
    /// ISO base media `.MP4`: H.264, which browsers and phones play.
    case mp4
  }

  public let container: Container
  /// The `stsd` entry (a `jpeg` or `avc1` box), size and type included.
  let sampleEntry: [UInt8]
  /// Every sample is a sync sample (Motion-JPEG): no sync table and no per-sample flags.
  let allSync: Bool

  /// The sample entry's type: `jpeg`, `avc1`.
  public var codec: String { String(decoding: sampleEntry[4..<8], as: UTF8.self) }

  init(container: Container, sampleEntry: [UInt8], allSync: Bool) {
    self.container = container
    self.sampleEntry = sampleEntry
    self.allSync = allSync
  }

  public static func motionJPEG(width: Int, height: Int) -> VideoTrackFormat {
    var out = BoxBuilder()
    out.box("jpeg") { entry in
      visualSampleEntry(&entry, width: width, height: height, compressor: "Photo - JPEG", quickTime: true)
    }
    return VideoTrackFormat(container: .quickTime, sampleEntry: out.bytes, allSync: true)
  }

  /// H.264 in MP4: `configuration` is the `avcC` payload (`AVCDecoderConfiguration.record`), `colour` what
  /// the samples' numbers mean, said in the container too (the stream's VUI says it as well).
  public static func avc(width: Int, height: Int, configuration: [UInt8], colour: VideoColour) -> VideoTrackFormat {
    var out = BoxBuilder()
    out.box("avc1") { entry in
      visualSampleEntry(&entry, width: width, height: height, compressor: "", quickTime: false)
      entry.box("avcC") { $0.bytes += configuration }
      // nclx: the colour of an ISO file, as ffmpeg and browsers read it (H.273's code points).
      entry.box("colr") { colr in
        colr.fourCC("nclx")
        colr.u16(colour.primaries)
        colr.u16(colour.transfer)
        colr.u16(colour.matrix)
        colr.u8(colour.fullRange ? 0x80 : 0)
      }
      entry.box("pasp") { pasp in
        pasp.u32(1)
        pasp.u32(1)
      }
    }
    return VideoTrackFormat(container: .mp4, sampleEntry: out.bytes, allSync: false)
  }

  /// The SPS and PPS of an `avc1` entry's `avcC`; nil for anything else.
  public var avcConfiguration: AVCDecoderConfiguration? {
    guard codec == "avc1", sampleEntry.count > 86 else { return nil }
    // After the 78 bytes of the visual sample entry: its boxes.
    guard let avcC = BoxReader.children(of: sampleEntry, in: 86..<sampleEntry.count).first(where: { $0.type == "avcC" })
    else { return nil }
    return AVCDecoderConfiguration(record: Array(sampleEntry[avcC.content]))
  }

  /// A sample entry read back from a file (recovery), as it was written.
  static func read(entry: [UInt8], container: Container) -> VideoTrackFormat? {
    guard entry.count >= 86 else { return nil }
    let type = String(decoding: entry[4..<8], as: UTF8.self)
    return VideoTrackFormat(container: container, sampleEntry: entry, allSync: type == "jpeg")
  }

  /// The fields every visual sample entry starts with. QuickTime's version, vendor and qualities sit where
  /// ISO has reserved zeros; a QuickTime reader takes zeros too, but ours says what it is.
  private static func visualSampleEntry(
    _ entry: inout BoxBuilder, width: Int, height: Int, compressor: String, quickTime: Bool
  ) {
    entry.zeros(6)
    entry.u16(1)  // data reference index
    entry.zeros(12)  // version, revision, vendor, temporal quality (ISO: pre-defined and reserved)
    entry.u32(quickTime ? 512 : 0)  // spatial quality
    entry.u16(UInt16(width))
    entry.u16(UInt16(height))
    entry.u32(72 << 16)
    entry.u32(72 << 16)
    entry.u32(0)  // data size
    entry.u16(1)  // frames per sample
    let name = Array(compressor.utf8.prefix(31))
    entry.u8(UInt8(name.count))
    entry.bytes += name
    entry.zeros(31 - name.count)
    entry.u16(24)  // depth
    entry.u16(0xFFFF)  // no colour table
  }
}

/// What a video's sample values mean (ITU-T H.273 code points), for the container's `colr` box.
public struct VideoColour: Sendable, Equatable {
  public var primaries: UInt16
  public var transfer: UInt16
  public var matrix: UInt16
  public var fullRange: Bool

  public init(primaries: UInt16, transfer: UInt16, matrix: UInt16, fullRange: Bool) {
    self.primaries = primaries
    self.transfer = transfer
    self.matrix = matrix
    self.fullRange = fullRange
  }

  /// A webcam's picture as kioskcam records it: sRGB primaries and transfer (BT.709 primaries, IEC 61966-2-1),
  /// BT.601 numbers (what JPEG and V4L2's YUYV use), limited range (what players assume and browsers honour).
  public static let camera = VideoColour(primaries: 1, transfer: 13, matrix: 6, fullRange: false)
}
