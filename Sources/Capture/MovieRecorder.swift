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

/// One recording: frames from the loop go through a bounded queue to encoders (one per core, any order)
/// and on to one writer that appends them in capture order as fragments of at most `fragmentLimit`, each
/// fsynced, into a hidden file in the roll; `stop` finishes the file in place and publishes it.
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
  /// Frames between the loop and the file: two per encoder plus two while the writer fsyncs. More would
  /// only add to what a crash loses; a slower machine drops frames (counted) instead.
  public static let queueBound = 2 * max(1, System.coreCount) + 2

  /// The recorded frame size: the camera's, or smaller by the preset.
  public let width: Int
  public let height: Int
  private let quality: Int
  private let halvings: Int
  private let sourceFormat: String
  private let uniqueID: String
  private let roll: CameraRoll
  private let folder: String
  private let name: String
  private let file: any RecordingOutput
  private let encoders = DispatchQueue(label: "kioskcam.movie-encode", attributes: .concurrent)
  private let writerQueue = DispatchQueue(label: "kioskcam.movie-writer")
  private let inFlight = DispatchGroup()

  private struct EncodedFrame {
    /// Empty when the frame did not encode.
    var jpeg: [UInt8]
    var timestamp: Int64
    var sequence: UInt32
  }

  /// Frames and counters passed between the loop, the encoders and the writer.
  private struct Handover {
    var submitted = 0
    /// Encoded frames waiting for the writer, by index.
    var ready: [Int: EncodedFrame] = [:]
    /// Let in and not yet taken by the writer.
    var queued = 0
    var dropped = 0
    var failed = 0
    var writeError: String?
    /// When the kiosk stopped the recording, on the frames' clock: the last frame lasts until then.
    var end: Int64?
  }

  /// The file's side: the writer queue's alone.
  private struct Output {
    var writer: MovieWriter
    var nextToWrite = 0
    var writeError: String?
    var firstTimestamp: Int64?
    var firstSequence: UInt32 = 0
    var finished = false
  }

  private let handover = Mutex(Handover())
  private let output: Mutex<Output>

  public convenience init(
    roll: CameraRoll, width: Int, height: Int, frameRate: Int, preset: MovieQuality, sourceFormat: String,
    passthrough: Bool, tag: String
  ) throws(RollError) {
    let recording = try roll.createRecording(tag: tag)
    try self.init(
      roll: roll, recording: recording, output: recording, width: width, height: height, frameRate: frameRate,
      preset: preset, sourceFormat: sourceFormat, passthrough: passthrough, tag: tag)
  }

  /// `output` is where the bytes go: the recording's own file, or a test's stand-in in front of it.
  init(
    roll: CameraRoll, recording: RecordingFile, output file: any RecordingOutput, width: Int, height: Int,
    frameRate: Int, preset: MovieQuality, sourceFormat: String, passthrough: Bool, tag: String
  ) throws(RollError) {
    self.roll = roll
    self.sourceFormat = sourceFormat
    uniqueID = tag
    // The camera's own JPEG frames go in untouched: resizing them would mean decoding and encoding each one.
    halvings = passthrough ? 0 : preset.halvings(width: width, height: height)
    var (width, height) = (width, height)
    for _ in 0..<halvings { (width, height) = ((width + 1) / 2, (height + 1) / 2) }
    self.width = width
    self.height = height
    quality = preset.jpegQuality
    folder = recording.folder
    name = recording.name
    self.file = file
    var writer = MovieWriter(
      width: width, height: height, fragmentLimit: Self.fragmentLimit, frameRate: frameRate,
      created: UInt32(clamping: WallClock.unixSeconds() + MovieWriter.epochOffset))
    let header = writer.start()
    do {
      try file.append(header)
      try file.sync()
    } catch {
      roll.removeRecording(folder: recording.folder, name: recording.name)
      throw .io(error)
    }
    output = Mutex(Output(writer: writer))
  }

  public var dropped: Int { handover.withLock { $0.dropped + $0.failed } }
  /// Frames lost before they reached `submit` (the camera's sequence gaps, a queue in front of this one):
  /// the record counts them with the ones dropped here.
  public func countDropped(_ frames: Int) {
    guard frames > 0 else { return }
    handover.withLock { $0.dropped += frames }
  }
  /// The write that failed (ENOSPC, EIO), once one has: the recording cannot go on.
  public var writeFailure: String? { handover.withLock { $0.writeError } }
  /// Frames taken and not yet written: the benchmark waits on it instead of dropping.
  public var pending: Int { handover.withLock { $0.queued } }

  /// From the loop thread: takes a copy of one frame, or counts it dropped when the queue is full.
  /// `crop`: the digital zoom's rectangle, cut out and scaled back to the frame's size on the encoder's thread.
  public func submit(_ frame: StillFrame, timestamp: Int64, sequence: UInt32, crop: PixelRect? = nil) {
    let index: Int? = handover.withLock { state in
      guard state.queued < Self.queueBound, state.writeError == nil else {
        state.dropped += 1
        return nil
      }
      state.queued += 1
      defer { state.submitted += 1 }
      return state.submitted
    }
    guard let index else { return }
    inFlight.enter()
    let (quality, halvings) = (quality, halvings)
    encoders.async { [self] in
      // A frame that does not encode is not a frame of the movie; the ones after it must not wait for it.
      let jpeg = Self.encode(frame, quality: quality, halvings: halvings, crop: crop) ?? []
      handover.withLock { $0.ready[index] = EncodedFrame(jpeg: jpeg, timestamp: timestamp, sequence: sequence) }
      writerQueue.async { [self] in drain() }
      inFlight.leave()
    }
  }

  /// JPEG for one frame: YUYV and NV12 compressed from their planes, cut to `crop` (the digital zoom) and
  /// halved `halvings` times first; MJPEG as the camera made it, or, zoomed, decoded, cut and compressed again
  /// (at the frame's size, which a passthrough recording has).
  static func encode(_ frame: StillFrame, quality: Int, halvings: Int = 0, crop: PixelRect? = nil) -> [UInt8]? {
    if let crop, frame.format == .mjpeg { return try? StillPipeline.encode(frame, quality: quality, crop: crop).jpeg }
    let frame = crop.map { StillPipeline.zoomed(frame, to: $0) } ?? frame
    // The movie keeps only the picture, not the padding after it.
    if frame.format == .mjpeg { return Array(frame.bytes[0..<JPEGStructure.endBeforePadding(frame.bytes)]) }
    guard halvings > 0 else { return try? StillPipeline.encode(frame, quality: quality).jpeg }
    guard var planes = try? StillPipeline.planes(of: frame).halved() else { return nil }
    for _ in 1..<halvings { planes = planes.halved() }
    return try? JPEGEncoder.encode(planes, quality: quality)
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
        }
      }
    }
  }

  private enum WriteOutcome { case written, notEncoded, lost }

  /// One frame into the file: the I/O of the writer, under its own lock only.
  private func write(_ next: EncodedFrame, to output: inout Output) -> WriteOutcome {
    guard !next.jpeg.isEmpty else { return .notEncoded }
    guard output.writeError == nil else { return .lost }
    var trial = output.writer
    if let fragment = trial.append(next.jpeg, timestamp: next.timestamp) {
      do {
        try file.append(fragment)
        try file.sync()
      } catch {
        // The file stays whole up to the last fragment; this frame and the ones after are lost.
        output.writeError = "\(error)"
        return .lost
      }
    }
    output.writer = trial
    if output.firstTimestamp == nil {
      output.firstTimestamp = next.timestamp
      output.firstSequence = next.sequence
      // Where the movie's time starts on CLOCK_MONOTONIC: how much a crash lost can be told from the log.
      log("movie first frame \(next.sequence) at \(Instant(nanoseconds: next.timestamp))")
    }
    return .written
  }

  /// Stops taking frames; once the ones in flight are written, finishes the file, publishes it and calls
  /// `done` (on the writer queue).
  public func stop(at end: Int64? = nil, _ done: @escaping @Sendable (Result<MovieSummary, RollError>) -> Void) {
    handover.withLock { $0.end = end }
    inFlight.notify(queue: writerQueue) { [self] in
      done(finish())
    }
  }

  /// `stop`, waited for: the service's shutdown must publish the movie before it goes, and benches and tests
  /// read the summary.
  public func stopAndWait(at end: Int64? = nil) -> Result<MovieSummary, RollError> {
    let finished = DispatchSemaphore(value: 0)
    let outcome = Mutex<Result<MovieSummary, RollError>?>(nil)
    stop(at: end) { result in
      outcome.withLock { $0 = result }
      finished.signal()
    }
    finished.wait()
    return outcome.withLock { $0! }
  }

  private func finish() -> Result<MovieSummary, RollError> {
    let end = handover.withLock { $0.end }
    let (frames, seconds, writeError, bytes, first): (Int, Double, String?, Int, (Int64, UInt32)?) = output.withLock {
      output in
      var bytes = 0
      if !output.finished {
        output.finished = true
        var writer = output.writer
        do throws(SystemCallError) {
          if output.writeError == nil, let last = writer.flush(end: end) {
            do throws(SystemCallError) {
              try file.append(last)
              try file.sync()
              output.writer = writer
            } catch {
              output.writeError = "\(error)"
            }
          }
          // Whatever a failed write left past the last whole fragment goes, so the file ends where its
          // fragments end.
          try file.truncate(to: output.writer.length)
          _ = try Self.finishInPlace(file, output.writer)
          bytes = Int(try file.size())
        } catch {
          output.writeError = output.writeError ?? "\(error)"
        }
      }
      return (
        output.writer.samplesWritten, Double(MovieWriter.nanoseconds(output.writer.ticksWritten)) / 1e9,
        output.writeError, bytes, output.firstTimestamp.map { ($0, output.firstSequence) }
      )
    }
    let dropped = handover.withLock { state in
      state.writeError = writeError
      return state.dropped + state.failed
    }
    guard frames > 0 else {
      roll.removeRecording(folder: folder, name: name)
      return .failure(.unavailable("no frame was recorded\(writeError.map { ": \($0)" } ?? "")"))
    }
    do {
      let item = try roll.publishRecording(folder: folder, name: name, kind: .movie)
      return .success(
        MovieSummary(
          item: item, frames: frames, dropped: dropped, seconds: seconds, recovered: false, writeError: writeError,
          roll: roll, bytes: bytes, width: width, height: height,
          captured: first.map { WallClock.dateTime(atMonotonic: Instant(nanoseconds: $0.0)).isoText } ?? "",
          sourceFormat: sourceFormat, firstSequence: first?.1 ?? 0, uniqueID: uniqueID))
    } catch {
      return .failure(error)
    }
  }
}

enum System {
  /// Cores this process may run on: one encoder each.
  static var coreCount: Int {
    max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  }
}
