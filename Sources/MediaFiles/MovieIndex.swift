/// Where each frame of a finished QuickTime movie is and when it is shown: what playback on the kiosk needs,
/// read from the `moov` sample table (ours, with one chunk per fragment and 64-bit offsets, or anyone's with
/// `stco` and several samples a chunk). Bytes in, table out: the caller reads the file.
public struct MovieIndex: Sendable, Equatable {
  public struct Sample: Sendable, Equatable {
    public let offset: UInt64
    public let size: Int
    /// When the frame is shown, from the start of the movie, and for how long.
    public let time: Int64
    public let duration: Int64
  }

  public let width: Int
  public let height: Int
  /// The sample entry's format: `jpeg` (Photo - JPEG) or `mjpa` for Motion-JPEG, `avc1` for H.264.
  public let codec: String
  public let samples: [Sample]
  /// H.264's `avcC` payload (its parameter sets), which a decoder starts from; nil for Motion-JPEG.
  public var decoderConfiguration: [UInt8]? = nil

  /// The whole length of the movie, nanoseconds.
  public var duration: Int64 { samples.last.map { $0.time + $0.duration } ?? 0 }

  public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
    case noMovieBox
    case malformed(String)
    public var description: String {
      switch self {
      case .noMovieBox: "no finished movie index (moov) in the file"
      case .malformed(let what): "movie index: \(what)"
      }
    }
  }

  /// `read(offset, count)` returns up to `count` bytes of the file at `offset`. The top level is walked box
  /// by box (64-bit sizes too), and the last `moov` is the index: ours appends the finished one at the end.
  public static func read(length: UInt64, _ read: (UInt64, Int) -> [UInt8]) throws(Problem) -> MovieIndex {
    var offset: UInt64 = 0
    var movie: (offset: UInt64, size: UInt64)?
    while offset + 8 <= length {
      var reader = BoxReader(read(offset, 16))
      guard let small = reader.u32(), let type = reader.fourCC() else { break }
      var size = UInt64(small)
      if small == 1 {
        guard let large = reader.u64() else { break }
        size = large
      } else if small == 0 {
        size = length - offset  // to the end of the file
      }
      guard size >= 8, offset + size <= length else { break }
      if type == "moov" { movie = (offset, size) }
      offset += size
    }
    guard let movie else { throw .noMovieBox }
    guard movie.size < 1 << 28 else { throw .malformed("moov of \(movie.size) bytes") }
    return try parse(moov: read(movie.offset, Int(movie.size)))
  }

  /// The first video track of a whole `moov` box.
  public static func parse(moov bytes: [UInt8]) throws(Problem) -> MovieIndex {
    func child(_ type: String, of range: Range<Int>, skip: Int = 0) -> Range<Int>? {
      BoxReader.children(of: bytes, in: (range.lowerBound + skip)..<range.upperBound).first { $0.type == type }?.content
    }
    /// The rows of a full box that is a count and then `fields` 32-bit words a row.
    func table(_ type: String, in stbl: Range<Int>, fields: Int) throws(Problem) -> [[UInt32]] {
      guard let box = child(type, of: stbl) else { throw .malformed("no \(type)") }
      var reader = BoxReader(bytes, at: box.lowerBound + 4)
      guard let count = reader.u32(), Int(count) * fields * 4 <= box.count else { throw .malformed("short \(type)") }
      return try (0..<Int(count)).map { (_) throws(Problem) -> [UInt32] in
        try (0..<fields).map { (_) throws(Problem) -> UInt32 in
          guard let value = reader.u32() else { throw .malformed("short \(type)") }
          return value
        }
      }
    }
    let whole = 8..<bytes.count
    for trak in BoxReader.children(of: bytes, in: whole) where trak.type == "trak" {
      guard let mdia = child("mdia", of: trak.content), let hdlr = child("hdlr", of: mdia),
        hdlr.count >= 12, String(decoding: bytes[hdlr.lowerBound + 8..<hdlr.lowerBound + 12], as: UTF8.self) == "vide"
      else { continue }
      guard let mdhd = child("mdhd", of: mdia), let minf = child("minf", of: mdia), let stbl = child("stbl", of: minf)
      else { throw .malformed("video track without mdhd or sample table") }
      var header = BoxReader(bytes, at: mdhd.lowerBound)
      guard let versionFlags = header.u32() else { throw .malformed("short mdhd") }
      header.position += versionFlags >> 24 == 1 ? 16 : 8
      guard let timescale = header.u32(), timescale > 0 else { throw .malformed("mdhd timescale 0") }

      // stsd: the first sample entry's format and size (after 6 reserved bytes, index, 16 bytes of versions).
      guard let stsd = child("stsd", of: stbl), let entry = BoxReader.children(of: bytes, in: (stsd.lowerBound + 8)..<stsd.upperBound).first
      else { throw .malformed("no sample description") }
      var description = BoxReader(bytes, at: entry.content.lowerBound + 24)
      guard let width = description.u16(), let height = description.u16() else { throw .malformed("short sample description") }

      let durations = try table("stts", in: stbl, fields: 2).flatMap { run in
        [UInt32](repeating: run[1], count: Int(run[0]))
      }
      let chunkRuns = try table("stsc", in: stbl, fields: 3)
      let sizes: [Int]
      guard let stsz = child("stsz", of: stbl) else { throw .malformed("no stsz") }
      var sizeReader = BoxReader(bytes, at: stsz.lowerBound + 4)
      guard let fixed = sizeReader.u32(), let count = sizeReader.u32(), Int(count) <= bytes.count else {
        throw .malformed("short stsz")
      }
      if fixed != 0 {
        sizes = [Int](repeating: Int(fixed), count: Int(count))
      } else {
        var list: [Int] = []
        list.reserveCapacity(Int(count))
        for _ in 0..<count {
          guard let size = sizeReader.u32() else { throw .malformed("short stsz") }
          list.append(Int(size))
        }
        sizes = list
      }
      var chunkOffsets: [UInt64] = []
      if let co64 = child("co64", of: stbl) {
        var reader = BoxReader(bytes, at: co64.lowerBound + 4)
        let count = reader.u32() ?? 0
        for _ in 0..<count {
          guard let value = reader.u64() else { throw .malformed("short co64") }
          chunkOffsets.append(value)
        }
      } else if let stco = child("stco", of: stbl) {
        var reader = BoxReader(bytes, at: stco.lowerBound + 4)
        let count = reader.u32() ?? 0
        for _ in 0..<count {
          guard let value = reader.u32() else { throw .malformed("short stco") }
          chunkOffsets.append(UInt64(value))
        }
      } else {
        throw .malformed("no chunk offsets")
      }
      guard durations.count == sizes.count else {
        throw .malformed("\(durations.count) durations for \(sizes.count) samples")
      }

      // Chunk by chunk: each run of stsc says how many samples its chunks hold, up to the next run's first chunk.
      var samples: [Sample] = []
      samples.reserveCapacity(sizes.count)
      var time: UInt64 = 0
      func nanoseconds(_ ticks: UInt64) -> Int64 {
        Int64(ticks / UInt64(timescale)) * 1_000_000_000 + Int64(ticks % UInt64(timescale) * 1_000_000_000 / UInt64(timescale))
      }
      for (runIndex, run) in chunkRuns.enumerated() {
        let first = Int(run[0])
        let last = runIndex + 1 < chunkRuns.count ? Int(chunkRuns[runIndex + 1][0]) - 1 : chunkOffsets.count
        guard first >= 1, last <= chunkOffsets.count else { throw .malformed("stsc names chunk \(last) of \(chunkOffsets.count)") }
        for chunk in stride(from: first, through: last, by: 1) {
          var offset = chunkOffsets[chunk - 1]
          for _ in 0..<run[1] {
            guard samples.count < sizes.count else { throw .malformed("chunks hold more samples than stsz lists") }
            let index = samples.count
            let duration = UInt64(durations[index])
            samples.append(
              Sample(
                offset: offset, size: sizes[index], time: nanoseconds(time),
                duration: nanoseconds(time + duration) - nanoseconds(time)))
            offset += UInt64(sizes[index])
            time += duration
          }
        }
      }
      guard !samples.isEmpty else { throw .malformed("no frames") }
      guard samples.count == sizes.count else { throw .malformed("chunks hold \(samples.count) of \(sizes.count) samples") }
      // A visual sample entry's own boxes follow its 78 bytes of fields.
      let avcC = BoxReader.children(of: bytes, in: (entry.content.lowerBound + 78)..<entry.content.upperBound)
        .first { $0.type == "avcC" }
      return MovieIndex(
        width: Int(width), height: Int(height), codec: entry.type, samples: samples,
        decoderConfiguration: avcC.map { Array(bytes[$0.content]) })
    }
    throw .malformed("no video track")
  }
}
