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

/// What a finished (or recovered) movie is, for the loop and the record.
public struct MovieSummary: Sendable {
  public let item: RollItem
  public let frames: Int
  public let dropped: Int
  public let seconds: Double
  public let recovered: Bool
  /// A write that failed (ENOSPC, EIO): the file is whole up to the fragment before it.
  public let writeError: String?
  /// What the record needs besides.
  let roll: CameraRoll
  public let bytes: Int
  let width: Int
  let height: Int
  /// Wall-clock time of the first frame; empty for a recovered movie, whose start nobody wrote down.
  let captured: String
  let sourceFormat: String
  let firstSequence: UInt32
  let uniqueID: String
}

/// One recording: frames from the loop go through a bounded queue to encoders (one per core, any order)
/// and on to one writer that appends them in capture order as fragments of at most `fragmentLimit`, each
/// fsynced, into a hidden file in the roll; `stop` finishes the file in place and publishes it.
///
/// The queue is lossless up to its bound: a frame let in is always written; a frame that finds it full is
/// counted as dropped and the recording goes on.
public final class MovieRecorder: Sendable {
  /// Fragments of a quarter second: a crash loses this, the frames still in the queue and the newest frame,
  /// and the promise is one second. On the emulated board (12 fps delivered, CPU saturated) half-second
  /// fragments and a 12-frame queue lost 1.3 s.
  static let fragmentLimit: Int64 = 250_000_000
  /// Frames between the loop and the file: two per encoder plus two while the writer fsyncs. More would
  /// only add to what a crash loses; a slower machine drops frames (counted) instead.
  public static let queueBound = 2 * max(1, System.coreCount) + 2

  /// The recorded frame size: the camera's, or smaller by the preset.
  let width: Int
  let height: Int
  private let quality: Int
  private let halvings: Int
  private let sourceFormat: String
  private let uniqueID: String
  private let roll: CameraRoll
  private let folder: String
  private let name: String
  private let encoders = DispatchQueue(label: "kioskcam.movie-encode", attributes: .concurrent)
  private let writerQueue = DispatchQueue(label: "kioskcam.movie-writer")
  private let inFlight = DispatchGroup()

  private struct State {
    var file: RecordingFile?
    var writer: MovieWriter
    var submitted = 0
    /// Encoded frames waiting for the ones before them, by index.
    var ready: [Int: (jpeg: [UInt8], timestamp: Int64, sequence: UInt32)] = [:]
    var nextToWrite = 0
    var queued = 0
    var dropped = 0
    var failed = 0
    var writeError: String?
    var firstTimestamp: Int64?
    var firstSequence: UInt32 = 0
    /// When the kiosk stopped the recording, on the frames' clock: the last frame lasts until then.
    var end: Int64?
  }
  private let state: Mutex<State>

  public init(
    roll: CameraRoll, width: Int, height: Int, frameRate: Int, preset: MovieQuality, sourceFormat: String,
    passthrough: Bool, tag: String
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
    let recording = try roll.createRecording(tag: tag)
    folder = recording.folder
    name = recording.name
    var writer = MovieWriter(
      width: width, height: height, fragmentLimit: Self.fragmentLimit, frameRate: frameRate,
      created: UInt32(clamping: WallClock.unixSeconds() + MovieWriter.epochOffset))
    let header = writer.start()
    do {
      try recording.file.writeAll(header)
      try recording.file.sync()
    } catch {
      roll.removeRecording(folder: recording.folder, name: recording.name)
      throw .io(error)
    }
    state = Mutex(State(file: recording, writer: writer))
  }

  public var dropped: Int { state.withLock { $0.dropped + $0.failed } }
  /// The write that failed (ENOSPC, EIO), once one has: the recording cannot go on.
  public var writeFailure: String? { state.withLock { $0.writeError } }
  /// Frames taken and not yet written: the benchmark waits on it instead of dropping.
  public var pending: Int { state.withLock { $0.queued } }

  /// From the loop thread: takes a copy of one frame, or counts it dropped when the queue is full.
  /// `crop`: the digital zoom's rectangle, cut out and scaled back to the frame's size on the encoder's thread.
  public func submit(_ frame: StillFrame, timestamp: Int64, sequence: UInt32, crop: PixelRect? = nil) {
    let index: Int? = state.withLock { state in
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
      let jpeg = Self.encode(frame, quality: quality, halvings: halvings, crop: crop)
      state.withLock { state in
        if let jpeg {
          state.ready[index] = (jpeg, timestamp, sequence)
        } else {
          // A frame that does not encode is not a frame of the movie; the ones after it must not wait for it.
          state.ready[index] = ([], timestamp, sequence)
        }
      }
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
    if frame.format == .mjpeg {
      var end = frame.bytes.count
      // Cameras pad MJPEG buffers with zeros after EOI; the movie keeps only the picture.
      while end > 2, frame.bytes[end - 1] == 0 { end -= 1 }
      return Array(frame.bytes[0..<end])
    }
    guard halvings > 0 else { return try? StillPipeline.encode(frame, quality: quality).jpeg }
    guard var planes = try? StillPipeline.planes(of: frame).halved() else { return nil }
    for _ in 1..<halvings { planes = planes.halved() }
    return try? JPEGEncoder.encode(planes, quality: quality)
  }

  /// On the writer queue: appends every frame whose turn has come, writing and fsyncing each full fragment.
  private func drain() {
    state.withLock { state in
      while let next = state.ready.removeValue(forKey: state.nextToWrite) {
        state.nextToWrite += 1
        state.queued -= 1
        guard !next.jpeg.isEmpty else {
          state.failed += 1
          continue
        }
        guard state.writeError == nil else {
          state.dropped += 1
          continue
        }
        var trial = state.writer
        let fragment = trial.append(next.jpeg, timestamp: next.timestamp)
        if let fragment {
          do {
            try state.file?.file.writeAll(fragment)
            try state.file?.file.sync()
          } catch {
            // The file stays whole up to the last fragment; this frame and the ones after are lost.
            state.writeError = "\(error)"
            state.dropped += 1
            continue
          }
        }
        state.writer = trial
        if state.firstTimestamp == nil {
          state.firstTimestamp = next.timestamp
          state.firstSequence = next.sequence
          // Where the movie's time starts on CLOCK_MONOTONIC: how much a crash lost can be told from the log.
          log("movie first frame \(next.sequence) at \(Instant(nanoseconds: next.timestamp))")
        }
      }
    }
  }

  /// Stops taking frames; once the ones in flight are written, finishes the file, publishes it and calls
  /// `done` (on the writer queue).
  public func stop(at end: Int64? = nil, _ done: @escaping @Sendable (Result<MovieSummary, RollError>) -> Void) {
    state.withLock { $0.end = end }
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
    let roll = roll
    let (frames, dropped, seconds, writeError, bytes, first): (Int, Int, Double, String?, Int, (Int64, UInt32)?) = state.withLock { state in
      var writeError = state.writeError
      var bytes = 0
      if let recording = state.file {
        state.file = nil
        var writer = state.writer
        do throws(SystemCallError) {
          if writeError == nil, let last = writer.flush(end: state.end) {
            do throws(SystemCallError) {
              try recording.file.writeAll(last)
              try recording.file.sync()
              state.writer = writer
            } catch {
              writeError = "\(error)"
              writer = state.writer
            }
          }
          // Whatever a failed write left past the last whole fragment goes, so the file ends where its
          // fragments end.
          try recording.file.truncate(to: state.writer.length)
          _ = try Self.finishInPlace(recording.file, state.writer)
          bytes = Int(try recording.file.size())
        } catch {
          writeError = writeError ?? "\(error)"
        }
      }
      state.writeError = writeError
      return (
        state.writer.samplesWritten, state.dropped + state.failed,
        Double(MovieWriter.nanoseconds(state.writer.ticksWritten)) / 1e9, writeError, bytes,
        state.firstTimestamp.map { ($0, state.firstSequence) }
      )
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

  /// Appends the regular index and retypes the fragment boxes, each step durable before the next. On a full
  /// disk the index may not fit: the file then stays a fragmented movie, which players read just as well.
  static func finishInPlace(_ file: borrowing OwnedFD, _ writer: MovieWriter) throws(SystemCallError) -> Bool {
    let finish = writer.finish()
    do {
      try file.writeAll(finish.tail, at: writer.length)
      try file.sync()
    } catch {
      try file.truncate(to: writer.length)
      try file.sync()
      return false
    }
    for offset in finish.retype { try file.writeAll(MovieWriter.Finish.free, at: offset) }
    try file.sync()
    return true
  }

  /// At start: every recording a crash left is finished from its complete fragments and published, its
  /// record marked recovered; one with no complete frame is removed. Never left hidden.
  static func recoverInterrupted(_ roll: CameraRoll) -> [Result<MovieSummary, RollError>] {
    var results: [Result<MovieSummary, RollError>] = []
    for (folder, name) in roll.interruptedRecordings() {
      do throws(RollError) {
        let recording = try roll.openRecording(folder: folder, name: name)
        let writer: MovieWriter?
        var bytes = 0
        do throws(SystemCallError) {
          let length = try recording.file.size()
          writer = MovieWriter.recover(length: length) { offset, count in (try? recording.file.read(at: offset, count: count)) ?? [] }
          if let writer, writer.samplesWritten > 0 {
            try recording.file.truncate(to: writer.length)
            _ = try finishInPlace(recording.file, writer)
            bytes = Int(try recording.file.size())
          }
        } catch {
          throw .io(error)
        }
        guard let writer, writer.samplesWritten > 0 else {
          roll.removeRecording(folder: folder, name: name)
          results.append(.failure(.unavailable("\(folder)/\(name): no complete fragment, removed")))
          continue
        }
        let item = try roll.publishRecording(folder: folder, name: name, kind: .movie)
        results.append(
          .success(
            MovieSummary(
              item: item, frames: writer.samplesWritten, dropped: 0,
              seconds: Double(MovieWriter.nanoseconds(writer.ticksWritten)) / 1e9, recovered: true, writeError: nil,
              roll: roll, bytes: bytes, width: writer.width, height: writer.height,
              captured: writer.created == 0
                ? "" : WallClock.dateTime(unixNanoseconds: (Int64(writer.created) - MovieWriter.epochOffset) * 1_000_000_000).isoText,
              sourceFormat: "",
              firstSequence: 0, uniqueID: String(name.dropFirst(CameraRoll.recordingPrefix.count).prefix { $0 != "." }))))
      } catch {
        results.append(.failure(error))
      }
    }
    return results
  }
}

enum System {
  /// Cores this process may run on: one encoder each.
  static var coreCount: Int {
    max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  }
}
