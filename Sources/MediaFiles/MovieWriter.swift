/// A movie that survives a power cut, as bytes: the caller does the I/O. Motion-JPEG in a QuickTime `.MOV`,
/// or H.264 in an `.MP4` (`VideoTrackFormat`), with AAC sound as a second track where `audio` says so; the
/// layout is the same.
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
  /// The codec and container: what the sample entry says.
  public let format: VideoTrackFormat
  /// The longest a fragment may be, in nanoseconds: the most a power cut can lose.
  public let fragmentLimit: Int64
  /// The sound track (track 2), if any: its samples ride in the video's fragments (`MovieWriter+Audio`).
  public let audio: AudioTrackFormat?
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
    /// Per sample: whether it decodes on its own (every JPEG; an H.264 IDR picture).
    var syncs: [Bool]
    /// The sound in this fragment: its first byte, after the pictures in the same mdat, and each sample's size.
    var audioOffset: UInt64 = 0
    var audioSizes: [UInt32] = []
  }

  /// Everything written so far, fragments complete.
  public internal(set) var length: UInt64 = 0
  var fragments: [Fragment] = []
  var headerOffset: UInt64 = 0
  private var firstTimestamp: Int64?
  /// The newest frame: its duration is known only when the next one comes.
  private var newest: Sample?
  /// Samples of the fragment being gathered, durations known.
  private var gathering: [(sample: Sample, duration: UInt32)] = []
  private var gatheringTicks: UInt64 = 0
  /// Decode time of the first sample of the next fragment.
  var decodeTime: UInt64 = 0
  /// Sound samples (AAC frames) that go into the next fragment.
  var audioWaiting: [[UInt8]] = []

  struct Sample: Sendable {
    var bytes: [UInt8]
    var tick: UInt64
    var sync: Bool
  }

  /// `format` nil: Motion-JPEG in QuickTime.
  public init(
    width: Int, height: Int, format: VideoTrackFormat? = nil, fragmentLimit: Int64 = 1_000_000_000,
    frameRate: Int? = nil, created: UInt32 = 0, audio: AudioTrackFormat? = nil
  ) {
    self.audio = audio
    self.created = created
    self.width = width
    self.height = height
    self.format = format ?? .motionJPEG(width: width, height: height)
    self.fragmentLimit = fragmentLimit
    if let frameRate, frameRate > 0, Int(Self.timescale) % frameRate == 0 {
      grid = UInt64(Int(Self.timescale) / frameRate)
    } else {
      grid = 1
    }
  }

  /// The recording's start, for the first fragment to carry (set before that fragment is cut); read back
  /// from it when a crash cut the recording short.
  public var recordingStart: RecordingStart?

  /// Samples in complete fragments: what a power cut now would keep.
  public var samplesWritten: Int { fragments.reduce(0) { $0 + $1.sizes.count } }
  /// Their duration in track ticks.
  public var ticksWritten: UInt64 { fragments.reduce(0) { $0 + $1.durations.reduce(0) { $0 + UInt64($1) } } }

  /// The start of the file: `ftyp` and the fragmented `moov`.
  public mutating func start() -> [UInt8] {
    var out = BoxBuilder()
    Self.fileType(&out, format.container)
    headerOffset = UInt64(out.bytes.count)
    movie(&out, fragmented: true)
    length = UInt64(out.bytes.count)
    return out.bytes
  }

  /// Takes one frame (a whole JPEG, or an H.264 access unit as an MP4 sample) with its capture time
  /// (nanoseconds, CLOCK_MONOTONIC); returns a complete fragment to append when the one being gathered is
  /// full. A sync frame that is not a JPEG starts a fragment of its own, so each fragment decodes alone.
  public mutating func append(_ sample: [UInt8], timestamp: Int64, sync: Bool = true) -> [UInt8]? {
    let first = firstTimestamp ?? timestamp
    firstTimestamp = first
    // Ticks from the first frame, never from the previous one: rounding never accumulates into drift.
    var tick = (Self.ticks(timestamp - first) + grid / 2) / grid * grid
    var emitted: [UInt8]?
    if let previous = newest {
      // A timestamp that does not move forward still gets one tick: a zero duration is not a frame.
      tick = max(tick, previous.tick + grid)
      let duration = UInt32(clamping: tick - previous.tick)
      let startsGroup = previous.sync && !format.allSync
      if !gathering.isEmpty, startsGroup || Self.nanoseconds(gatheringTicks + UInt64(duration)) > fragmentLimit {
        emitted = cutFragment()
      }
      gathering.append((previous, duration))
      gatheringTicks += UInt64(duration)
    }
    newest = Sample(bytes: sample, tick: tick, sync: sync)
    return emitted
  }

  /// At stop: the newest frame lasts until `end` (the moment the recording stopped, nanoseconds on the
  /// frames' clock, on the grid at or below it) but no longer than the frame before it, and one grid step if
  /// its own time is already there; with no frame before it, `fallback` nanoseconds.
  /// Whatever was gathered becomes the last fragment.
  public mutating func flush(end: Int64?, fallback: Int64 = 40_000_000) -> [UInt8]? {
    // Sound past the last picture is never written.
    defer { audioWaiting = [] }
    if let last = newest {
      let duration = lastDuration(last, end: end, fallback: fallback)
      let startsGroup = last.sync && !format.allSync
      if !gathering.isEmpty, startsGroup || Self.nanoseconds(gatheringTicks + UInt64(duration)) > fragmentLimit {
        // The previous fragment is full: write it now and the last frame in a fragment of its own.
        let full = cutFragment()
        gathering.append((last, duration))
        gatheringTicks += UInt64(duration)
        newest = nil
        return full + cutFragment()
      }
      gathering.append((last, duration))
      gatheringTicks += UInt64(duration)
      newest = nil
    }
    return gathering.isEmpty ? nil : cutFragment()
  }

  /// Where the pictures will end once `flush(end:fallback:)` has given the newest frame its duration, on the
  /// frames' clock: the sound is waited for up to there, not only to the stop, since the last picture may
  /// last up to one grid step past it. Nil before the first frame.
  public func picturesEnd(end: Int64?, fallback: Int64 = 40_000_000) -> Int64? {
    guard let first = firstTimestamp, let last = newest else { return nil }
    return first + Self.nanoseconds(last.tick + UInt64(lastDuration(last, end: end, fallback: fallback)))
  }

  private func lastDuration(_ last: Sample, end: Int64?, fallback: Int64) -> UInt32 {
    let previous = gathering.last?.duration ?? fragments.last?.durations.last
    var duration = previous ?? UInt32(max(grid, (Self.ticks(fallback) + grid / 2) / grid * grid))
    if let end, let first = firstTimestamp {
      let untilEnd = Self.ticks(end - first) / grid * grid
      // A last frame that the grid put at or past the stop lasts one step, not the gap before it (a gap of
      // dropped frames would carry the movie past its stop).
      duration = min(duration, UInt32(clamping: untilEnd > last.tick ? untilEnd - last.tick : grid))
    }
    return duration
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

  private func gatheringTicks(of samples: [(sample: Sample, duration: UInt32)]) -> UInt64 {
    samples.reduce(0) { $0 + UInt64($1.duration) }
  }

  private mutating func cutFragment() -> [UInt8] {
    let samples = gathering
    gathering = []
    gatheringTicks = 0
    let sound = takeAudio(toVideoTicks: decodeTime + gatheringTicks(of: samples))
    let sequence = UInt32(fragments.count + 1)
    let payload = samples.reduce(0) { $0 + $1.sample.bytes.count }
    func moof(dataOffset: UInt32) -> [UInt8] {
      var out = BoxBuilder()
      out.box("moof") { moof in
        moof.fullBox("mfhd") { $0.u32(sequence) }
        moof.box("traf") { traf in
          // default-base-is-moof: offsets count from this moof, so the fragment means the same wherever it is.
          traf.fullBox("tfhd", flags: 0x02_0000) { $0.u32(1) }
          traf.fullBox("tfdt", version: 1) { $0.u64(decodeTime) }
          // data-offset-present, sample-duration-present, sample-size-present, and sample-flags-present
          // where not every sample is a sync sample.
          traf.fullBox("trun", flags: format.allSync ? 0x000301 : 0x000701) { trun in
            trun.u32(UInt32(samples.count))
            trun.u32(dataOffset)
            for sample in samples {
              trun.u32(sample.duration)
              trun.u32(UInt32(sample.sample.bytes.count))
              if !format.allSync { trun.u32(sample.sample.sync ? Self.syncFlags : Self.dependentFlags) }
            }
          }
        }
        if let audio, !sound.isEmpty { audioTrackFragment(&moof, audio, sound, dataOffset: dataOffset + UInt32(payload)) }
        if sequence == 1, let recordingStart { recordingStartBox(&moof, recordingStart) }
      }
      return out.bytes
    }
    let moofSize = moof(dataOffset: 0).count
    var bytes = moof(dataOffset: UInt32(moofSize + 8))
    let soundBytes = sound.reduce(0) { $0 + $1.count }
    var header = BoxBuilder()
    header.u32(UInt32(8 + payload + soundBytes))
    header.fourCC("mdat")
    bytes += header.bytes
    bytes.reserveCapacity(bytes.count + payload + soundBytes)
    for sample in samples { bytes += sample.sample.bytes }
    for sample in sound { bytes += sample }
    let first = length + UInt64(moofSize + 8)
    fragments.append(
      Fragment(
        moofOffset: length, firstSampleOffset: first,
        sizes: samples.map { UInt32($0.sample.bytes.count) }, durations: samples.map(\.duration),
        syncs: samples.map(\.sample.sync), audioOffset: first + UInt64(payload), audioSizes: sound.map { UInt32($0.count) }))
    decodeTime += samples.reduce(0) { $0 + UInt64($1.duration) }
    length += UInt64(bytes.count)
    return bytes
  }

  /// trun sample flags (ISO/IEC 14496-12 8.8.3.1): depends on no other sample; depends on others, not sync.
  static let syncFlags: UInt32 = 0x0200_0000
  static let dependentFlags: UInt32 = 0x0101_0000

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
