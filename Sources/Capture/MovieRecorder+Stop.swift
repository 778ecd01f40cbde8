import CameraRoll
import Dispatch
import KioskCore
import LinuxIO
import MediaFiles
import Synchronization

/// Ending a recording: the frames in flight written, the encoder drained, the last fragment and the sound up to
/// the stop, the file finished in place and published, and its summary for the record.
extension MovieRecorder {
  /// Stops taking frames; once the ones in flight are written, finishes the file, publishes it and calls
  /// `done` (on the writer's thread).
  public func stop(at end: Int64? = nil, _ done: @escaping @Sendable (Result<MovieSummary, RollError>) -> Void) {
    handover.withLock { $0.end = end }
    // Every frame let in has had its drain queued on the writer by the time it leaves the group.
    inFlight.notify(queue: .global()) { [self] in
      writerThread.async { [self] in done(finish()) }
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
    var audioSeconds = 0.0
    let (frames, seconds, writeError, bytes, first): (Int, Double, String?, Int, (Int64, UInt32)?) = output.withLock {
      output in
      var bytes = 0
      if !output.finished {
        output.finished = true
        if output.writeError == nil, let h264 = output.h264 {
          // The pictures still inside the H.264 encoder, out, before the last frame's duration is settled.
          _ = appendSamples(h264.finish(), to: &output)
        }
        var writer = output.writer
        if output.writeError == nil, let sound {
          // Up to the end of the last picture, which may last a frame past the stop (the sound is heard there
          // too, a period or two later); the writer cuts what was heard after it.
          let until = writer.picturesEnd(end: end) ?? end
          for packet in sound.take() + sound.finish(until: until) { writer.appendAudio(packet) }
        }
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
      audioSeconds = Double(output.writer.audioNanosecondsWritten) / 1e9
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
          sourceFormat: sourceFormat, firstSequence: first?.1 ?? 0, uniqueID: uniqueID, encoding: encoding,
          audioSeconds: audioSeconds))
    } catch {
      // Not published (the card went read-only, or away): what it holds is recovered when it is back.
      roll.abandonRecording(name: name)
      return .failure(error)
    }
  }
}
