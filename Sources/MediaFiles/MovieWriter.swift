/// A Motion-JPEG QuickTime movie that survives a power cut, as bytes: the caller does the I/O.
///
/// While recording, the file is fragmented: `ftyp`, a `moov` whose `mvex` announces fragments, then one
/// `moof` + `mdat` pair per fragment of at most `fragmentLimit`. Each fragment is complete on its own, so a
/// file cut anywhere plays up to its last complete fragment, and `recover` rebuilds the writer from it.
///
/// Finishing turns it into a regular movie without moving a byte of picture: a new `moov` with the whole
/// sample table (one chunk per fragment) is appended, then the fragmented `moov` and every `moof` are
/// retyped `free` in place (4 bytes each). Players that do not know fragments (and those that do) then see
/// one index and plain `mdat`s. Until the retyping is done the file is still the fragmented movie with a
/// trailing box, which `recover` reads the same way.
public struct MovieWriter: Sendable {
  /// Ticks per second of the video track. 150 makes 25 and 30 fps exact, and it is at most 210: ffmpeg takes
  /// a timescale that low as the stream's frame rate and so its time base, where every frame keeps a tick
  /// of its own. With 90 kHz it falls back to the average rate, and a camera that delivers in bursts (vivid
  /// under emulation: 20 ms then 245 ms) gets two frames on one tick: "non monotonically increasing dts".
  public static let timescale: UInt32 = 150
  /// Ticks per second of the movie header (durations in tkhd and mvhd).
  static let movieTimescale: UInt32 = 1000

  public let width: Int
  public let height: Int
  /// The longest a fragment may be, in nanoseconds: the most a power cut can lose.
  public let fragmentLimit: Int64
  /// Ticks of one frame period of the camera's nominal rate, when 150 is a multiple of it (25, 30 fps), else 1.
  /// Frame times are rounded to that grid (a frame that would share a slot moves to the next one), so every
  /// duration is a whole number of periods: ffmpeg then finds the rate exactly and gives each frame its own
  /// tick, where a camera delivering in bursts (vivid under emulation: 16 ms, then 245 ms) once made it
  /// guess 29.97 fps and put two frames on one tick ("non monotonically increasing dts").
  public let grid: UInt64
  /// When the recording started, in QuickTime's seconds since 1904-01-01 UTC (0 = unknown): the movie's
  /// creation date for players and exiftool, and, read back from the header, a recovered movie's date.
  public private(set) var created: UInt32

  /// Seconds between QuickTime's epoch (1904) and Unix's (1970).
  public static let epochOffset: Int64 = 2_082_844_800

  struct Fragment: Sendable, Equatable {
    var moofOffset: UInt64
    var firstSampleOffset: UInt64
    var sizes: [UInt32]
    var durations: [UInt32]
  }

  /// Everything written so far, fragments complete.
  public internal(set) var length: UInt64 = 0
  var fragments: [Fragment] = []
  var headerOffset: UInt64 = 0
  private var firstTimestamp: Int64?
  /// The newest frame: its duration is known only when the next one comes.
  private var newest: (jpeg: [UInt8], tick: UInt64)?
  /// Samples of the fragment being gathered, durations known.
  private var gathering: [(jpeg: [UInt8], duration: UInt32)] = []
  private var gatheringTicks: UInt64 = 0
  /// Decode time of the first sample of the next fragment.
  var decodeTime: UInt64 = 0

  public init(
    width: Int, height: Int, fragmentLimit: Int64 = 1_000_000_000, frameRate: Int? = nil, created: UInt32 = 0
  ) {
    self.created = created
    self.width = width
    self.height = height
    self.fragmentLimit = fragmentLimit
    if let frameRate, frameRate > 0, Int(Self.timescale) % frameRate == 0 {
      grid = UInt64(Int(Self.timescale) / frameRate)
    } else {
      grid = 1
    }
  }

  /// Samples in complete fragments: what a power cut now would keep.
  public var samplesWritten: Int { fragments.reduce(0) { $0 + $1.sizes.count } }
  /// Their duration in track ticks.
  public var ticksWritten: UInt64 { fragments.reduce(0) { $0 + $1.durations.reduce(0) { $0 + UInt64($1) } } }

  /// The start of the file: `ftyp` and the fragmented `moov`.
  public mutating func start() -> [UInt8] {
    var out = BoxBuilder()
    Self.fileType(&out)
    headerOffset = UInt64(out.bytes.count)
    movie(&out, fragmented: true)
    length = UInt64(out.bytes.count)
    return out.bytes
  }

  /// Takes one frame (a whole JPEG) with its capture time (nanoseconds, CLOCK_MONOTONIC); returns a
  /// complete fragment to append when the one being gathered is full.
  public mutating func append(_ jpeg: [UInt8], timestamp: Int64) -> [UInt8]? {
    let first = firstTimestamp ?? timestamp
    firstTimestamp = first
    // Ticks from the first frame, never from the previous one: rounding never accumulates into drift.
    var tick = (Self.ticks(timestamp - first) + grid / 2) / grid * grid
    var emitted: [UInt8]?
    if let previous = newest {
      // A timestamp that does not move forward still gets one tick: a zero duration is not a frame.
      tick = max(tick, previous.tick + grid)
      let duration = UInt32(clamping: tick - previous.tick)
      if !gathering.isEmpty, Self.nanoseconds(gatheringTicks + UInt64(duration)) > fragmentLimit {
        emitted = cutFragment()
      }
      gathering.append((previous.jpeg, duration))
      gatheringTicks += UInt64(duration)
    }
    newest = (jpeg, tick)
    return emitted
  }

  /// At stop: the newest frame lasts until `end` (the moment the recording stopped, nanoseconds on the
  /// frames' clock, on the grid at or below it) but no longer than the frame before it, and one grid step if
  /// its own time is already there; with no frame before it, `fallback` nanoseconds.
  /// Whatever was gathered becomes the last fragment.
  public mutating func flush(end: Int64?, fallback: Int64 = 40_000_000) -> [UInt8]? {
    if let last = newest {
      let previous = gathering.last?.duration ?? fragments.last?.durations.last
      var duration = previous ?? UInt32(max(grid, (Self.ticks(fallback) + grid / 2) / grid * grid))
      if let end, let first = firstTimestamp {
        let untilEnd = Self.ticks(end - first) / grid * grid
        // A last frame that the grid put at or past the stop lasts one step, not the gap before it (a gap of
        // dropped frames would carry the movie past its stop).
        duration = min(duration, UInt32(clamping: untilEnd > last.tick ? untilEnd - last.tick : grid))
      }
      if !gathering.isEmpty, Self.nanoseconds(gatheringTicks + UInt64(duration)) > fragmentLimit {
        // The previous fragment is full: write it now and the last frame in a fragment of its own.
        let full = cutFragment()
        gathering.append((last.jpeg, duration))
        gatheringTicks += UInt64(duration)
        newest = nil
        return full + cutFragment()
      }
      gathering.append((last.jpeg, duration))
      gatheringTicks += UInt64(duration)
      newest = nil
    }
    return gathering.isEmpty ? nil : cutFragment()
  }

  /// How to make the written fragments a regular movie: append `tail` at `length`, make it durable, then
  /// write the four bytes `free` at each offset of `retype` (the type fields of the old moov and the moofs).
  public struct Finish: Sendable {
    public let tail: [UInt8]
    public let retype: [UInt64]
    public static let free: [UInt8] = Array("free".utf8)
  }

  public func finish() -> Finish {
    var out = BoxBuilder()
    movie(&out, fragmented: false)
    // The type field is the second word of a box.
    return Finish(tail: out.bytes, retype: ([headerOffset] + fragments.map(\.moofOffset)).map { $0 + 4 })
  }

  // MARK: Fragments

  private mutating func cutFragment() -> [UInt8] {
    let samples = gathering
    gathering = []
    gatheringTicks = 0
    let sequence = UInt32(fragments.count + 1)
    func moof(dataOffset: UInt32) -> [UInt8] {
      var out = BoxBuilder()
      out.box("moof") { moof in
        moof.fullBox("mfhd") { $0.u32(sequence) }
        moof.box("traf") { traf in
          // default-base-is-moof: offsets count from this moof, so the fragment means the same wherever it is.
          traf.fullBox("tfhd", flags: 0x02_0000) { $0.u32(1) }
          traf.fullBox("tfdt", version: 1) { $0.u64(decodeTime) }
          // data-offset-present, sample-duration-present, sample-size-present.
          traf.fullBox("trun", flags: 0x000301) { trun in
            trun.u32(UInt32(samples.count))
            trun.u32(dataOffset)
            for sample in samples {
              trun.u32(sample.duration)
              trun.u32(UInt32(sample.jpeg.count))
            }
          }
        }
      }
      return out.bytes
    }
    let moofSize = moof(dataOffset: 0).count
    var bytes = moof(dataOffset: UInt32(moofSize + 8))
    let payload = samples.reduce(0) { $0 + $1.jpeg.count }
    var header = BoxBuilder()
    header.u32(UInt32(8 + payload))
    header.fourCC("mdat")
    bytes += header.bytes
    bytes.reserveCapacity(bytes.count + payload)
    for sample in samples { bytes += sample.jpeg }
    fragments.append(
      Fragment(
        moofOffset: length, firstSampleOffset: length + UInt64(moofSize + 8), sizes: samples.map { UInt32($0.jpeg.count) },
        durations: samples.map(\.duration)))
    decodeTime += samples.reduce(0) { $0 + UInt64($1.duration) }
    length += UInt64(bytes.count)
    return bytes
  }

  // MARK: Headers

  static func fileType(_ out: inout BoxBuilder) {
    // QuickTime's own brand: a .MOV that QuickTime, ffmpeg and the ISO readers all take.
    out.box("ftyp") { ftyp in
      ftyp.fourCC("qt  ")
      ftyp.u32(0x2005_0300)
      ftyp.fourCC("qt  ")
    }
  }

  private func movie(_ out: inout BoxBuilder, fragmented: Bool) {
    let all = fragmented ? [] : fragments
    let mediaTicks = all.reduce(UInt64(0)) { $0 + $1.durations.reduce(0) { $0 + UInt64($1) } }
    let movieTicks = UInt32(clamping: mediaTicks * UInt64(Self.movieTimescale) / UInt64(Self.timescale))
    out.box("moov") { moov in
      moov.fullBox("mvhd") { mvhd in
        mvhd.u32(created)  // creation and modification time
        mvhd.u32(created)
        mvhd.u32(Self.movieTimescale)
        mvhd.u32(movieTicks)
        mvhd.u32(0x0001_0000)  // rate 1.0
        mvhd.u16(0x0100)  // volume 1.0
        mvhd.zeros(10)
        mvhd.unityMatrix()
        mvhd.zeros(24)  // preview, poster, selection and current times
        mvhd.u32(2)  // next track ID
      }
      moov.box("trak") { trak in
        trak.fullBox("tkhd", flags: 0x3) { tkhd in  // enabled, in movie
          tkhd.u32(created)
          tkhd.u32(created)
          tkhd.u32(1)  // track ID
          tkhd.u32(0)
          tkhd.u32(movieTicks)
          tkhd.zeros(8)
          tkhd.u16(0)  // layer
          tkhd.u16(0)  // alternate group
          tkhd.u16(0)  // volume: a video track has none
          tkhd.u16(0)
          tkhd.unityMatrix()
          tkhd.u32(UInt32(width) << 16)
          tkhd.u32(UInt32(height) << 16)
        }
        trak.box("mdia") { mdia in
          mdia.fullBox("mdhd") { mdhd in
            mdhd.u32(created)
            mdhd.u32(created)
            mdhd.u32(Self.timescale)
            mdhd.u32(UInt32(clamping: mediaTicks))
            mdhd.u16(0x55C4)  // language "und"
            mdhd.u16(0)
          }
          mdia.fullBox("hdlr") { hdlr in
            hdlr.fourCC("mhlr")
            hdlr.fourCC("vide")
            hdlr.zeros(12)
            hdlr.bytes += Array("VideoHandler".utf8) + [0]
          }
          mdia.box("minf") { minf in
            minf.fullBox("vmhd", flags: 1) { $0.zeros(8) }
            minf.box("dinf") { dinf in
              dinf.fullBox("dref") { dref in
                dref.u32(1)
                dref.fullBox("url ", flags: 1) { _ in }  // the media is in this file
              }
            }
            minf.box("stbl") { stbl in sampleTable(&stbl, all) }
          }
        }
      }
      if fragmented {
        moov.box("mvex") { mvex in
          mvex.fullBox("trex") { trex in
            trex.u32(1)  // track ID
            trex.u32(1)  // sample description
            trex.u32(0)
            trex.u32(0)
            trex.u32(0)  // flags: every JPEG is a sync sample
          }
        }
      }
    }
  }

  private func sampleTable(_ stbl: inout BoxBuilder, _ fragments: [Fragment]) {
    stbl.fullBox("stsd") { stsd in
      stsd.u32(1)
      stsd.box("jpeg") { entry in
        entry.zeros(6)
        entry.u16(1)  // data reference index
        entry.u16(0)  // version
        entry.u16(0)  // revision
        entry.u32(0)  // vendor
        entry.u32(0)  // temporal quality
        entry.u32(512)  // spatial quality
        entry.u16(UInt16(width))
        entry.u16(UInt16(height))
        entry.u32(72 << 16)
        entry.u32(72 << 16)
        entry.u32(0)  // data size
        entry.u16(1)  // frames per sample
        let name = Array("Photo - JPEG".utf8)
        entry.u8(UInt8(name.count))
        entry.bytes += name
        entry.zeros(31 - name.count)
        entry.u16(24)  // depth
        entry.u16(0xFFFF)  // no colour table
      }
    }
    // Durations, run-length coded.
    var runs: [(count: UInt32, duration: UInt32)] = []
    for duration in fragments.flatMap(\.durations) {
      if let last = runs.last, last.duration == duration {
        runs[runs.count - 1].count += 1
      } else {
        runs.append((1, duration))
      }
    }
    stbl.fullBox("stts") { stts in
      stts.u32(UInt32(runs.count))
      for run in runs {
        stts.u32(run.count)
        stts.u32(run.duration)
      }
    }
    // One chunk per fragment; a new entry only where the number of samples a chunk changes.
    var chunkRuns: [(firstChunk: UInt32, samples: UInt32)] = []
    for (index, fragment) in fragments.enumerated() where chunkRuns.last?.samples != UInt32(fragment.sizes.count) {
      chunkRuns.append((UInt32(index + 1), UInt32(fragment.sizes.count)))
    }
    stbl.fullBox("stsc") { stsc in
      stsc.u32(UInt32(chunkRuns.count))
      for run in chunkRuns {
        stsc.u32(run.firstChunk)
        stsc.u32(run.samples)
        stsc.u32(1)
      }
    }
    let sizes = fragments.flatMap(\.sizes)
    stbl.fullBox("stsz") { stsz in
      stsz.u32(0)
      stsz.u32(UInt32(sizes.count))
      for size in sizes { stsz.u32(size) }
    }
    // 64-bit chunk offsets: a long recording passes 4 GiB.
    stbl.fullBox("co64") { co64 in
      co64.u32(UInt32(fragments.count))
      for fragment in fragments { co64.u64(fragment.firstSampleOffset) }
    }
  }

  // MARK: Time

  static func ticks(_ nanoseconds: Int64) -> UInt64 {
    let value = max(0, nanoseconds)
    return UInt64(value / 1_000_000_000) * UInt64(timescale)
      + (UInt64(value % 1_000_000_000) * UInt64(timescale) + 500_000_000) / 1_000_000_000
  }

  /// Track ticks as nanoseconds.
  public static func nanoseconds(_ ticks: UInt64) -> Int64 {
    Int64(ticks / UInt64(timescale)) * 1_000_000_000 + Int64(ticks % UInt64(timescale)) * 1_000_000_000 / Int64(timescale)
  }
}
