import CameraRoll
import KioskCore
import LinuxIO
import MediaFiles

extension MovieRecorder {
  /// Appends the regular index and retypes the fragment boxes, each step durable before the next. On a full
  /// disk the index may not fit: the file then stays a fragmented movie, which players read just as well.
  static func finishInPlace(_ file: any RecordingOutput, _ writer: MovieWriter) throws(SystemCallError) -> Bool {
    let finish = writer.finish()
    do {
      try file.write(finish.tail, at: writer.length)
      try file.sync()
    } catch {
      try file.truncate(to: writer.length)
      try file.sync()
      return false
    }
    for offset in finish.retype { try file.write(MovieWriter.Finish.free, at: offset) }
    try file.sync()
    return true
  }

  /// When a recovered movie's first frame was taken: from the start its first fragment carries (to the
  /// millisecond), else from its header's creation time (to the second; a file from before that box).
  static func captured(_ writer: MovieWriter) -> String {
    if let start = writer.recordingStart {
      return WallClock.dateTime(unixNanoseconds: start.unixMilliseconds * 1_000_000).isoText
    }
    guard writer.created != 0 else { return "" }
    return WallClock.dateTime(unixNanoseconds: (Int64(writer.created) - MovieWriter.epochOffset) * 1_000_000_000).isoText
  }

  /// A recovered movie's codec from its sample entries; its bit rate from the start it carries.
  static func encoding(_ writer: MovieWriter) -> MovieEncoding {
    var encoding = MovieEncoding(writer.format, audio: writer.audio)
    if encoding.codec == .h264 { encoding.bitRate = writer.recordingStart?.bitRate }
    return encoding
  }

  /// At start: every recording a crash left is finished from its complete fragments and published, its
  /// record marked recovered; one with no complete frame is removed. Never left hidden.
  public static func recoverInterrupted(_ roll: CameraRoll) -> [Result<MovieSummary, RollError>] {
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
            _ = try finishInPlace(recording, writer)
            bytes = Int(try recording.file.size())
          }
        } catch {
          throw .io(error)
        }
        guard let writer, writer.samplesWritten > 0 else {
          roll.removeRecording(folder: folder, name: name)
          results.append(.failure(.nothingToRecover("\(folder)/\(name)")))
          continue
        }
        let item = try roll.publishRecording(folder: folder, name: name, kind: .movie)
        results.append(
          .success(
            MovieSummary(
              item: item, frames: writer.samplesWritten, dropped: 0,
              seconds: Double(MovieWriter.nanoseconds(writer.ticksWritten)) / 1e9, recovered: true, writeError: nil,
              roll: roll, bytes: bytes, width: writer.width, height: writer.height,
              captured: captured(writer), sourceFormat: writer.recordingStart?.sourceFormat ?? "",
              firstSequence: writer.recordingStart?.sequence ?? 0,
              uniqueID: String(name.dropFirst(CameraRoll.recordingPrefix.count).prefix { $0 != "." }),
              encoding: encoding(writer),
              audioSeconds: Double(writer.audioNanosecondsWritten) / 1e9)))
      } catch {
        results.append(.failure(error))
      }
    }
    return results
  }
}

