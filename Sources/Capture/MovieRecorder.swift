#if canImport(Glibc)
  import Glibc
#endif
import CameraRoll
import Dispatch
import Imaging
import JPEGCodec
import KioskCore
import LinuxIO
import MediaFiles
import Synchronization
import VideoCodec

/// One recording: frames from the loop go through a bounded queue to encoders (one per core, any order)
/// and on to one writer that appends them in capture order as fragments of at most `fragmentLimit`, each
/// fsynced, into a hidden file in the roll; `stop` finishes the file in place and publishes it.
///
/// Motion-JPEG: each frame is a JPEG of its own (the camera's, or compressed by an encoder). H.264: the
/// encoders only convert frames into pictures, and the writer runs the one stateful H.264 encoder (whose
/// own threads use the other cores) in capture order before it appends the packets.
///
/// The queue is lossless up to its bound: a frame let in is always written; a frame that finds it full is
/// counted as dropped and the recording goes on.
///
/// Two locks, so that a slow card never reaches the loop: `handover` is all the loop thread ever takes,
/// and only to pass a frame or read a counter; `output` is the writer's, held across its writes and fsyncs,
/// and the loop never takes it.
public final class MovieRecorder: Sendable {
  /// Fragments of a quarter second: a crash loses this, the frames still in the queue and the newest frame,
  /// and the promise is one second. On the emulated board (12 fps delivered, CPU saturated) half-second
  /// fragments and a 12-frame queue lost 1.3 s.
  static let fragmentLimit: Int64 = 250_000_000
  // H.264 fragments start at each keyframe too (H264Track), and between them every `fragmentLimit`: a
  // fragment needs no keyframe of its own, the file decodes from its start, and the promise is a second lost.
  /// H.264 frames between the loop and the encoder: the encoder is the slow part, and every frame waiting for
  /// it is a frame a crash loses (150-300 ms each on the loaded emulated board, where 3 lost 1.15 s).
  static let h264QueueBound = 2
  /// The bound of this recording's queue.
  public let queueBound: Int
  /// Room kept below the roll's largest file for what finishing the movie writes after it is stopped: the
  /// frames and sound still queued and the index (a few MiB for hours of frames). FAT's 4 GiB is reached by
  /// a 1080p Motion-JPEG movie in about 6 minutes (12 MB/s).
  static let finishingRoom: UInt64 = 64 << 20
  /// The size at which the recording asks to be stopped (`reachedLargestFile`); nil: no limit it can reach.
  let stopSize: UInt64?
  /// Frames between the loop and the file: two per encoder plus two while the writer fsyncs. More would
  /// only add to what a crash loses; a slower machine drops frames (counted) instead.
  public static let queueBound = 2 * CPUUse.threads() + 2

  /// The recorded frame size: the camera's, or smaller by the preset.
  public let width: Int
  public let height: Int
  private let quality: Int
  private let halvings: Int
  let sourceFormat: String
  public let codec: MovieCodec
  /// What the record and the log say it was encoded as.
  public let encoding: MovieEncoding
  /// The sound, for the microphone's thread to hand its periods to; nil for a silent movie.
  public let sound: MovieSound?
  let uniqueID: String
  let roll: CameraRoll
  let folder: String
  let name: String
  let file: any RecordingOutput
  /// One thread a core, each taking every n-th frame, and the writer's own thread (the H.264 encoder and its
  /// threads on it): all give way to the loop and the viewfinder (`ThreadPriority.yielding`). What they
  /// cannot take in time is dropped at `submit` and counted, never queued past `queueBound`, so a crash loses
  /// no more for it.
  private let encoders: [BackgroundWorker]
  let writerThread = BackgroundWorker(name: "\(MovieRecorder.threadName)writer", niceness: ThreadPriority.yielding)
  /// What every thread of a recording is named from, x264's too (a thread takes its creator's name): the movie's
  /// CPU is theirs (`CPUUse.threadsNanoseconds(named:)`).
  public static let threadName = "kioskcam.movie-"
  let inFlight = DispatchGroup()

  enum Payload {
    case jpeg([UInt8])
    case picture(H264Picture)
    /// The frame did not encode or convert.
    case none
  }

  struct EncodedFrame {
    var payload: Payload
    var timestamp: Int64
    var sequence: UInt32
  }

  /// Frames and counters passed between the loop, the encoders and the writer.
  struct Handover {
    var submitted = 0
    /// Encoded frames waiting for the writer, by index.
    var ready: [Int: EncodedFrame] = [:]
    /// Let in and not yet taken by the writer.
    var queued = 0
    var dropped = 0
    var failed = 0
    var writeError: String?
    var writeErrno: Errno?
    /// The file passed `stopSize`.
    var reachedLargestFile = false
    /// When the kiosk stopped the recording, on the frames' clock: the last frame lasts until then.
    var end: Int64?
  }

  /// The file's side: the writer queue's alone.
  struct Output {
    var writer: MovieWriter
    var h264: H264Track?
    var nextToWrite = 0
    var writeError: String?
    var writeErrno: Errno?
    var firstTimestamp: Int64?
    var firstSequence: UInt32 = 0
    var finished = false
  }

  let handover = Mutex(Handover())
  let output: Mutex<Output>

  public convenience init(
    roll: CameraRoll, width: Int, height: Int, frameRate: Int, preset: MovieQuality, sourceFormat: String,
    passthrough: Bool, codec: MovieCodec = .mjpeg, h264Encoder: H264EncoderChoice = .unprobed,
    sound: SoundInput? = nil, tag: String
  ) throws(RollError) {
    let recording = try roll.createRecording(tag: tag, extension: codec.fileExtension)
    try self.init(
      roll: roll, recording: recording, output: recording, width: width, height: height, frameRate: frameRate,
      preset: preset, sourceFormat: sourceFormat, passthrough: passthrough, codec: codec,
      h264Encoder: h264Encoder, sound: sound, tag: tag, largestFile: (try? FileSystemSpace(path: roll.root))?.largestFile)
  }

  /// `output` is where the bytes go: the recording's own file, or a test's stand-in in front of it.
  /// `largestFile`: the largest file the roll's file system keeps, if a movie can reach it.
  init(
    roll: CameraRoll, recording: RecordingFile, output file: any RecordingOutput, width: Int, height: Int,
    frameRate: Int, preset: MovieQuality, sourceFormat: String, passthrough: Bool, codec: MovieCodec = .mjpeg,
    h264Encoder: H264EncoderChoice = .unprobed, sound input: SoundInput? = nil, tag: String, largestFile: UInt64? = nil
  ) throws(RollError) {
    self.roll = roll
    // One read of the cores for the encoders and x264's threads alike (affinity and quota may change).
    encoders = (0..<CPUUse.threads()).map {
      BackgroundWorker(name: "\(MovieRecorder.threadName)encode-\($0)", niceness: ThreadPriority.yielding)
    }
    // A limit too small to keep the room below it (a test's) keeps a quarter of itself instead.
    stopSize = largestFile.map { $0 - min(Self.finishingRoom, $0 / 4) }
    self.sourceFormat = sourceFormat
    self.codec = codec
    // Every frame waiting is a frame a crash loses: at a low rate the count alone (six frames, 0.6 s at 10 fps,
    // beside the driver's four buffers and a fragment) passes the second a crash may cost; 0.3 s of frames
    // at most (a kill on the loaded emulated board lost 1.15 s at 10 fps). 25 and 30 fps keep the count.
    queueBound = codec == .h264 ? Self.h264QueueBound : min(Self.queueBound, max(2, frameRate * 3 / 10))
    uniqueID = tag
    // The camera's own JPEG frames go into a Motion-JPEG movie untouched: resizing them would mean decoding
    // and encoding each one. H.264 decodes them anyway.
    halvings = passthrough && codec == .mjpeg ? 0 : preset.halvings(width: width, height: height)
    var (width, height) = (width, height)
    for _ in 0..<halvings { (width, height) = ((width + 1) / 2, (height + 1) / 2) }
    // 4:2:0 pictures have whole chroma samples only.
    if codec == .h264 { (width, height) = (width & ~1, height & ~1) }
    self.width = width
    self.height = height
    quality = preset.jpegQuality
    folder = recording.folder
    name = recording.name
    self.file = file
    let created = UInt32(clamping: WallClock.unixSeconds() + MovieWriter.epochOffset)
    var h264: H264Track?
    var writer: MovieWriter
    // Sound goes into MP4 only; an encoder that does not open leaves the movie silent, never failed.
    var sound: MovieSound?
    if let input, codec == .h264 {
      do {
        sound = try MovieSound(sampleRate: input.sampleRate, channels: input.channels)
      } catch {
        log("movie sound off: \(error)")
      }
    }
    self.sound = sound
    switch codec {
    case .mjpeg:
      encoding = .motionJPEG
      writer = MovieWriter(
        width: width, height: height, fragmentLimit: Self.fragmentLimit, frameRate: frameRate, created: created)
    case .h264:
      let settings = H264Settings(
        width: width, height: height, frameRate: frameRate,
        bitRate: preset.h264BitRate(width: width, height: height, frameRate: frameRate),
        threads: H264Settings.threadsBesideTheLoop(threads: encoders.count), preset: h264Encoder.preset)
      let track: H264Track
      do {
        track = try H264Track(settings, encoder: h264Encoder, on: writerThread)
      } catch {
        roll.removeRecording(folder: recording.folder, name: recording.name)
        throw error
      }
      var encoding = track.encoding
      encoding.audio = sound?.encoding
      self.encoding = encoding
      h264 = track
      writer = MovieWriter(
        width: width, height: height, format: track.format, fragmentLimit: Self.fragmentLimit, frameRate: frameRate,
        created: created, audio: sound?.format)
    }
    let header = writer.start()
    do {
      try file.append(header)
      try file.sync()
    } catch {
      roll.removeRecording(folder: recording.folder, name: recording.name)
      throw .io(error)
    }
    output = Mutex(Output(writer: writer, h264: h264))
  }

  public var dropped: Int { handover.withLock { $0.dropped + $0.failed } }
  /// Frames lost before they reached `submit` (the camera's sequence gaps, a queue in front of this one):
  /// the record counts them with the ones dropped here.
  public func countDropped(_ frames: Int) {
    guard frames > 0 else { return }
    handover.withLock { $0.dropped += frames }
  }
  /// The file came near the largest one the roll's file system keeps: the recording must stop now, while
  /// there is still room to finish it.
  public var reachedLargestFile: Bool { handover.withLock { $0.reachedLargestFile } }
  /// The write that failed (ENOSPC, EIO), once one has: the recording cannot go on.
  public var writeFailure: String? { handover.withLock { $0.writeError } }
  /// How that write failed if the card did (EIO, read-only), not because it was full.
  public var writeFault: StorageFault? { handover.withLock { $0.writeErrno.flatMap { StorageFault(errno: $0) } } }
  /// Frames taken and not yet written: the benchmark waits on it instead of dropping.
  public var pending: Int { handover.withLock { $0.queued } }

  /// From the loop thread: takes a copy of one frame, or counts it dropped when the queue is full.
  /// `crop`: the digital zoom's rectangle, cut out and scaled back to the frame's size on the encoder's thread.
  public func submit(_ frame: StillFrame, timestamp: Int64, sequence: UInt32, crop: PixelRect? = nil) {
    let index: Int? = handover.withLock { state in
      guard state.queued < queueBound, state.writeError == nil else {
        state.dropped += 1
        return nil
      }
      state.queued += 1
      defer { state.submitted += 1 }
      return state.submitted
    }
    guard let index else { return }
    inFlight.enter()
    let (quality, halvings, codec, width, height) = (quality, halvings, codec, width, height)
    encoders[index % encoders.count].async { [self] in
      // A frame that does not encode is not a frame of the movie; the ones after it must not wait for it.
      let payload: Payload
      switch codec {
      case .mjpeg: payload = MovieJPEG.frame(frame, quality: quality, halvings: halvings, crop: crop).map(Payload.jpeg) ?? .none
      case .h264:
        payload = MoviePictures.picture(frame, width: width, height: height, crop: crop).map(Payload.picture) ?? .none
      }
      handover.withLock { $0.ready[index] = EncodedFrame(payload: payload, timestamp: timestamp, sequence: sequence) }
      writerThread.async { [self] in drain() }
      inFlight.leave()
    }
  }

  /// On the writer queue: appends every frame whose turn has come, writing and fsyncing each full fragment.
  private func drain() {
    output.withLock { output in
      while !output.finished {
        let turn = output.nextToWrite
        guard let next = handover.withLock({ state -> EncodedFrame? in
          guard let next = state.ready.removeValue(forKey: turn) else { return nil }
          state.queued -= 1
          return next
        }) else { return }
        output.nextToWrite += 1
        let outcome = write(next, to: &output)
        guard outcome != .written else { continue }
        handover.withLock { state in
          if outcome == .notEncoded { state.failed += 1 } else { state.dropped += 1 }
          state.writeError = output.writeError
          state.writeErrno = output.writeErrno
        }
      }
    }
  }

  private enum WriteOutcome { case written, notEncoded, lost }

  /// One frame into the file: the I/O of the writer, under its own lock only.
  private func write(_ next: EncodedFrame, to output: inout Output) -> WriteOutcome {
    guard output.writeError == nil else { return .lost }
    switch next.payload {
    case .none:
      return .notEncoded
    case .jpeg(let jpeg):
      guard append(jpeg, timestamp: next.timestamp, sync: true, to: &output) else { return .lost }
    case .picture(let picture):
      let samples: [H264Track.Sample]
      do {
        samples = try output.h264?.encode(picture, timestamp: next.timestamp) ?? []
      } catch {
        return .notEncoded
      }
      guard appendSamples(samples, to: &output) else { return .lost }
    }
    noteFirst(next, &output)
    return .written
  }

  func appendSamples(_ samples: [H264Track.Sample], to output: inout Output) -> Bool {
    samples.allSatisfy { append($0.bytes, timestamp: $0.timestamp, sync: $0.sync, to: &output) }
  }

  /// One sample into the writer, and the fragment it completes, if any, into the file and fsynced. False
  /// when the write failed: the file stays whole up to the last fragment; this sample and the ones after are lost.
  private func append(_ sample: [UInt8], timestamp: Int64, sync: Bool, to output: inout Output) -> Bool {
    var trial = output.writer
    // The sound heard so far rides in the fragment this picture may complete.
    for packet in sound?.take() ?? [] { trial.appendAudio(packet) }
    if let fragment = trial.append(sample, timestamp: timestamp, sync: sync) {
      do {
        try file.append(fragment)
        try file.sync()
      } catch {
        output.writeError = "\(error)"
        output.writeErrno = error.errno
        return false
      }
      // The writer's length is the file's: its header and every fragment written.
      if let stopSize, trial.length >= stopSize { handover.withLock { $0.reachedLargestFile = true } }
    }
    output.writer = trial
    return true
  }

  private func noteFirst(_ next: EncodedFrame, _ output: inout Output) {
    if output.firstTimestamp == nil {
      output.firstTimestamp = next.timestamp
      output.firstSequence = next.sequence
      output.writer.recordingStart = RecordingStart(
        sourceFormat: sourceFormat, bitRate: encoding.bitRate, sequence: next.sequence,
        unixMilliseconds: WallClock.unixNanoseconds(atMonotonic: Instant(nanoseconds: next.timestamp)) / 1_000_000)
      sound?.picturesStarted(at: next.timestamp)
      // Where the movie's time starts on CLOCK_MONOTONIC: how much a crash lost can be told from the log.
      log("movie first frame \(next.sequence) at \(Instant(nanoseconds: next.timestamp))")
    }
  }

  deinit {
    for encoder in encoders { encoder.finish() }
    writerThread.finish()
  }
}
