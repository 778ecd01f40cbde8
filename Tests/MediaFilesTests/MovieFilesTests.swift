import CameraRoll
import Foundation
import Imaging
import JPEGCodec
import Capture
import MediaFiles
import TestPeers
import Testing

/// Movies from the writer, checked by our own box reader for the layout and by ffprobe and ffmpeg, which
/// nobody here wrote, for what players see: a finished file and one recovered after a cut.
@Suite struct MovieFilesTests {
  static let width = 160
  static let height = 96

  /// Frames 40 ms apart with a few milliseconds of jitter, like a real camera; a JPEG that changes per frame.
  static func frames(_ count: Int) throws -> [(jpeg: [UInt8], timestamp: Int64)] {
    let base = try StillPipeline.encode(SyntheticFrames.yuyv(width: width, height: height), quality: 80).jpeg
    return (0..<count).map { index in
      let jitter = Int64([0, 3, -2, 1][index % 4]) * 1_000_000
      // A COM segment after SOI makes every frame's bytes (and size) different.
      let comment: [UInt8] = [0xFF, 0xFE, 0x00, 0x06] + Array(String(format: "%04d", index).utf8)
      return (Array(base[0..<2]) + comment + base[2...], 5_000_000_000 + Int64(index) * 40_000_000 + jitter)
    }
  }

  /// Writes `frames` fragmented; returns the writer and the bytes of the file.
  static func record(_ frames: [(jpeg: [UInt8], timestamp: Int64)], fragment: Int64 = 1_000_000_000) -> (MovieWriter, [UInt8]) {
    var writer = MovieWriter(width: width, height: height, fragmentLimit: fragment)
    var file = writer.start()
    for frame in frames {
      if let piece = writer.append(frame.jpeg, timestamp: frame.timestamp) { file += piece }
    }
    if let piece = writer.flush(end: nil) { file += piece }
    #expect(UInt64(file.count) == writer.length)
    return (writer, file)
  }

  static func finished(_ writer: MovieWriter, _ file: [UInt8]) -> [UInt8] {
    let finish = writer.finish()
    var bytes = file + finish.tail
    for offset in finish.retype { bytes.replaceSubrange(Int(offset)..<Int(offset) + 4, with: MovieWriter.Finish.free) }
    return bytes
  }

  static func temporary(_ bytes: [UInt8]) throws -> String {
    let path = NSTemporaryDirectory() + "kioskcam-movie-\(UUID().uuidString).MOV"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// Top-level boxes as (type, size), read with nothing but the sizes and types in the file.
  static func topLevel(_ bytes: [UInt8]) -> [(String, Int)] {
    var boxes: [(String, Int)] = []
    var offset = 0
    while offset + 8 <= bytes.count {
      let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      boxes.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), size))
      guard size >= 8 else { break }
      offset += size
    }
    return boxes
  }

  static func child(_ bytes: [UInt8], path: [String]) -> Range<Int>? {
    var range = 0..<bytes.count
    for name in path {
      var offset = range.lowerBound
      var found: Range<Int>?
      while offset + 8 <= range.upperBound {
        let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        if String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self) == name {
          found = offset + 8..<offset + size
          break
        }
        offset += max(size, 8)
      }
      guard let found else { return nil }
      range = found
    }
    return range
  }

  @Test func whileRecordingTheFileIsAHeaderAndFragmentsOfAtMostASecond() throws {
    let frames = try Self.frames(60)
    let (writer, file) = Self.record(frames)
    let types = Self.topLevel(file).map(\.0)
    #expect(Array(types.prefix(2)) == ["ftyp", "moov"])
    #expect(Self.child(file, path: ["moov", "mvex", "trex"]) != nil, "the header announces fragments")
    let fragments = Array(types.dropFirst(2))
    #expect(fragments.count == 6, "60 frames of 40 ms make 2.4 s: two full fragments of 25 and one of 10")
    #expect(fragments == Array(repeating: ["moof", "mdat"], count: 3).flatMap { $0 })
    #expect(writer.samplesWritten == 60)
  }

  @Test func aFinishedMovieHasOneIndexAndPlainMediaData() throws {
    let (writer, file) = Self.record(try Self.frames(60))
    let movie = Self.finished(writer, file)
    let types = Self.topLevel(movie).map(\.0)
    #expect(types.filter { $0 == "moov" }.count == 1)
    #expect(types.last == "moov")
    #expect(!types.contains("moof"))
    #expect(types.filter { $0 == "mdat" }.count == 3)
    let stsz = try #require(Self.child(movie, path: ["moov", "trak", "mdia", "minf", "stbl", "stsz"]))
    let count = movie[stsz.lowerBound + 8..<stsz.lowerBound + 12].reduce(0) { $0 << 8 | Int($1) }
    #expect(count == 60)
    let co64 = try #require(Self.child(movie, path: ["moov", "trak", "mdia", "minf", "stbl", "co64"]))
    #expect(movie[co64.lowerBound + 4..<co64.lowerBound + 8].reduce(0) { $0 << 8 | Int($1) } == 3, "one chunk a fragment")
    #expect(Self.child(movie, path: ["moov", "mvex"]) == nil, "no fragments announced any more")
  }

  @Test(arguments: [1, 2, 60, 151])
  func ffprobeAndFFmpegReadAFinishedMovie(count: Int) throws {
    let frames = try Self.frames(count)
    let (writer, file) = Self.record(frames)
    let path = try Self.temporary(Self.finished(writer, file))
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Self.expectPlays(path, frames: count, from: frames.first!.timestamp, to: frames.last!.timestamp)
  }

  /// Intervals between vivid's buffer timestamps under software emulation, in ms, as a board recording had them.
  static let burstyIntervals: [Int64] = [35, 34, 27, 245, 72, 260, 20, 309, 33, 334, 56, 115, 50, 57, 64, 128, 66, 166, 84, 134, 48, 140, 16, 189, 60, 136, 23, 172, 37, 230, 2, 1, 90]

  @Test func aCameraThatDeliversInBurstsStillGivesAMovieFFmpegDecodesInSilence() throws {
    let base = try Self.frames(Self.burstyIntervals.count + 1)
    var time: Int64 = 7_000_000_000
    var frames = [(jpeg: base[0].jpeg, timestamp: time)]
    for (index, interval) in Self.burstyIntervals.enumerated() {
      time += interval * 1_000_000
      frames.append((base[index + 1].jpeg, time))
    }
    let (writer, file) = Self.record(frames)
    let path = try Self.temporary(Self.finished(writer, file))
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Self.expectPlays(
      path, frames: frames.count, from: frames.first!.timestamp, to: frames.last!.timestamp,
      lastFrame: Double(Self.burstyIntervals.last!) / 1000)
  }

  /// The bursts of the board's kill test: a regular 29.97 fps start (vivid's rate, 33.367 ms), so ffmpeg
  /// settles on a frame rate, then frames 2 to 16 ms apart. On the 30 fps grid every frame keeps a tick of
  /// its own; without the grid ffmpeg said "non monotonically increasing dts" on the board's recording.
  @Test func aBurstAfterARegularStartStaysOnTheCamerasFrameGrid() throws {
    let regular: Int64 = 33_367
    let burst: [Int64] = [16_000, 50_000, 33_000, 17_000, 49_000, 2_000, 64_000, 33_000, 100_000, 5_000, 28_000]
    let intervals = Array(repeating: regular, count: 30) + burst + Array(repeating: regular, count: 20)
    let base = try Self.frames(intervals.count + 1)
    var time: Int64 = 9_000_000_000
    var frames = [(jpeg: base[0].jpeg, timestamp: time)]
    for (index, interval) in intervals.enumerated() {
      time += interval * 1000
      frames.append((base[index + 1].jpeg, time))
    }
    var writer = MovieWriter(width: Self.width, height: Self.height, frameRate: 30)
    #expect(writer.grid == 5)
    var file = writer.start()
    for frame in frames { if let piece = writer.append(frame.jpeg, timestamp: frame.timestamp) { file += piece } }
    if let piece = writer.flush(end: nil) { file += piece }
    let path = try Self.temporary(Self.finished(writer, file))
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Self.expectPlays(
      path, frames: frames.count, from: frames.first!.timestamp, to: frames.last!.timestamp, lastFrame: 0.0334)
  }

  @Test func theLastFrameLastsUntilTheStopButNoLongerThanTheOneBefore() throws {
    let frames = try Self.frames(3)  // 5.000, 5.043, 5.078 s
    var writer = MovieWriter(width: Self.width, height: Self.height)
    _ = writer.start()
    for frame in frames { _ = writer.append(frame.jpeg, timestamp: frame.timestamp) }
    var stoppedSoon = writer
    _ = stoppedSoon.flush(end: frames[2].timestamp + 10_000_000)
    #expect(MovieWriter.nanoseconds(stoppedSoon.ticksWritten) == 86_666_666, "13 ticks: 6 + 6 + 1 (the 10 ms until the stop, at 150 Hz)")
    _ = writer.flush(end: frames[2].timestamp + 2_000_000_000)
    #expect(writer.ticksWritten == 6 + 6 + 6, "a late stop does not stretch the last frame past its predecessor")
  }

  /// After a gap of dropped frames, a last frame that the 30 fps grid puts past the stop lasts one step: the
  /// gap before it would have carried the movie past its stop (seen on the board: 3.067 s for a 3 s maximum).
  @Test func aLastFrameTheGridPutsPastTheStopLastsOneStep() throws {
    let jpeg = try Self.frames(1)[0].jpeg
    var writer = MovieWriter(width: Self.width, height: Self.height, frameRate: 30)
    _ = writer.start()
    let start: Int64 = 5_000_000_000
    // 0 s, 0.2 s (a gap), 0.29 s: on the grid of 5 ticks at 150 Hz, ticks 0, 30 and 45.
    for offset: Int64 in [0, 200_000_000, 290_000_000] { _ = writer.append(jpeg, timestamp: start + offset) }
    _ = writer.flush(end: start + 291_000_000)  // the stop's grid line is tick 40, before the last frame's
    #expect(writer.ticksWritten == 30 + 15 + 5, "one step, not the 15 ticks of the frame before")
  }

  @Test(arguments: [0, 1, 17, 5000])
  func aMovieCutAnywhereInItsLastFragmentIsRecoveredUpToTheFragmentBefore(cutShort: Int) throws {
    let frames = try Self.frames(100)
    // Fragments as the service writes them, and no finish: the power went.
    let (complete, file) = Self.record(frames, fragment: 500_000_000)
    // Where the last fragment starts, by the sizes in the file: what a cut inside it must fall back to.
    let offsets = Self.topLevel(file).reduce(into: [0]) { $0.append($0.last! + $1.1) }
    let lastMoof = offsets[Self.topLevel(file).lastIndex { $0.0 == "moof" }!]
    func recover(_ bytes: [UInt8]) throws -> MovieWriter {
      try #require(
        MovieWriter.recover(length: UInt64(bytes.count)) { offset, count in
          Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        })
    }
    let kept = cutShort == 0 ? 100 : try recover(Array(file.prefix(lastMoof))).samplesWritten
    #expect(kept >= 100 - 13 && (kept < 100 || cutShort == 0), "at most one fragment of 500 ms is lost")
    #expect(complete.samplesWritten == 100)
    let cut = Array(file.prefix(file.count - cutShort))
    let recovered = try recover(cut)
    #expect(recovered.samplesWritten == kept)
    let path = try Self.temporary(Self.finished(recovered, Array(cut.prefix(Int(recovered.length)))))
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Self.expectPlays(path, frames: kept, from: frames[0].timestamp, to: frames[kept - 1].timestamp)
  }

  @Test func anInterruptedFinishIsRecoveredToo() throws {
    let (writer, file) = Self.record(try Self.frames(40), fragment: 500_000_000)
    let finish = writer.finish()
    // The new index is on disk, one moof already retyped, then the power went.
    var bytes = file + finish.tail
    bytes.replaceSubrange(Int(finish.retype[1])..<Int(finish.retype[1]) + 4, with: MovieWriter.Finish.free)
    let recovered = try #require(
      MovieWriter.recover(length: UInt64(bytes.count)) { offset, count in
        Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
      })
    #expect(recovered.samplesWritten == 40)
    #expect(recovered.length == UInt64(file.count), "the old index is cut off")
    #expect(recovered.finish().tail == finish.tail)
  }

  /// The recording's start is in the movie header: exiftool reads it as the creation date of the finished
  /// movie, and a recovered one gets it back from the header a crash left.
  @Test func theCreationDateIsWrittenAndRecovered() throws {
    // 2026-11-29 12:00:00 UTC in QuickTime's seconds since 1904.
    let created = UInt32(1_795_953_600 + MovieWriter.epochOffset)
    var writer = MovieWriter(width: Self.width, height: Self.height, fragmentLimit: 500_000_000, created: created)
    var file = writer.start()
    for frame in try Self.frames(30) {
      if let piece = writer.append(frame.jpeg, timestamp: frame.timestamp) { file += piece }
    }
    let recovered = try #require(
      MovieWriter.recover(length: UInt64(file.count)) { offset, count in
        Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
      })
    #expect(recovered.created == created)
    if let piece = writer.flush(end: nil) { file += piece }
    let path = try Self.temporary(Self.finished(writer, file))
    defer { try? FileManager.default.removeItem(atPath: path) }
    // QuickTime dates are UTC; without -api QuickTimeUTC exiftool prints them as stored.
    let exif = try peer(["/usr/bin/exiftool", "-s3", "-CreateDate", "-TrackCreateDate", "-MediaCreateDate", path])
    #expect(exif.stdout == "2026:11:29 12:00:00\n2026:11:29 12:00:00\n2026:11:29 12:00:00\n", "\(exif.stdout)\(exif.stderr)")
  }

  /// The recording's start (camera format, first frame's sequence and time) rides in the first fragment:
  /// recovered from a file a crash cut short, and ffmpeg still reads the file, cut short and finished, without a
  /// word about the box it does not know.
  @Test func theRecordingsStartRidesInTheFirstFragmentAndIsRecovered() throws {
    let start = RecordingStart(sourceFormat: "MJPG", bitRate: nil, sequence: 4711, unixMilliseconds: 1_795_953_600_123)
    var writer = MovieWriter(width: Self.width, height: Self.height, fragmentLimit: 500_000_000)
    var file = writer.start()
    for (index, frame) in try Self.frames(40).enumerated() {
      if index == 1 { writer.recordingStart = start }  // the recorder notes its first frame once it is in
      if let piece = writer.append(frame.jpeg, timestamp: frame.timestamp) { file += piece }
    }
    let recovered = try #require(
      MovieWriter.recover(length: UInt64(file.count)) { offset, count in
        Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
      })
    #expect(recovered.samplesWritten > 0 && recovered.samplesWritten < 40, "cut short: \(recovered.samplesWritten)")
    #expect(recovered.recordingStart == start)
    let (plain, _) = Self.record(try Self.frames(3))
    #expect(plain.recordingStart == nil, "a writer nobody told carries none")
    for (label, bytes) in [("cut short", file), ("finished", Self.finished(recovered, Array(file.prefix(Int(recovered.length)))))] {
      let path = try Self.temporary(bytes)
      defer { try? FileManager.default.removeItem(atPath: path) }
      let decode = try peer(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
      #expect(decode.status == 0 && decode.stderr.isEmpty, "\(label): \(decode.stderr)")
    }
  }

  /// A recording a crash left is published with a whole record: its camera's format, its first frame's
  /// sequence number, and its capture time to the millisecond, as a recording stopped in time gets them.
  @Test func aRecoveredMovieHasAWholeRecord() throws {
    let root = NSTemporaryDirectory() + "kioskcam-recovered-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let unix: Int64 = 1_795_953_600_250
    var writer = MovieWriter(width: Self.width, height: Self.height, fragmentLimit: 500_000_000)
    writer.recordingStart = RecordingStart(sourceFormat: "YUYV", bitRate: nil, sequence: 812, unixMilliseconds: unix)
    var file = writer.start()
    for frame in try Self.frames(40) {
      if let piece = writer.append(frame.jpeg, timestamp: frame.timestamp) { file += piece }
    }
    let folder = "100TESTS"
    try FileManager.default.createDirectory(atPath: "\(root)/DCIM/\(folder)", withIntermediateDirectories: true)
    try Data(file).write(to: URL(fileURLWithPath: "\(root)/DCIM/\(folder)/\(CameraRoll.recordingPrefix)crashed.MOV"))

    let results = MovieRecorder.recoverInterrupted(roll)
    let summary = try #require(results.first).get()
    MovieSummary.report(.success(summary))
    let record = try #require(CameraRoll.readRecords(root: root)[summary.item.relativePath])
    #expect(record.recovered == true && record.sourceFormat == "YUYV" && record.frameSequence == 812, "\(record)")
    #expect(record.captured == WallClock.dateTime(unixNanoseconds: unix * 1_000_000).isoText, "\(record.captured)")
    #expect(record.captured.contains(".250"), "to the millisecond: \(record.captured)")
    #expect(record.frames == summary.frames && summary.frames > 0)
  }

  @Test func aFileWithoutItsHeaderHasNothingToRecover() {
    let (_, file) = Self.record([])
    #expect(MovieWriter.recover(length: 20) { offset, count in Array(file[Int(offset)..<min(20, Int(offset) + count)]) } == nil)
  }

  /// ffprobe: codec, size, every frame counted, duration within a frame of the timestamps; ffmpeg decodes all
  /// of it without a word.
  static func expectPlays(_ path: String, frames: Int, from first: Int64, to last: Int64, lastFrame: Double = 0.040) throws {
    let probe = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
      "stream=codec_name,width,height,nb_read_frames,duration", "-of", "default=noprint_wrappers=1", path,
    ])
    #expect(probe.status == 0)
    #expect(probe.stderr.isEmpty, "ffprobe: \(probe.stderr)")
    var fields: [String: String] = [:]
    for line in probe.stdout.split(separator: "\n") {
      let parts = line.split(separator: "=", maxSplits: 1)
      if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
    }
    #expect(fields["codec_name"] == "mjpeg")
    #expect(fields["width"] == "\(width)")
    #expect(fields["height"] == "\(height)")
    #expect(fields["nb_read_frames"] == "\(frames)")
    let duration = try #require(Double(fields["duration"] ?? ""), "ffprobe: \(probe.stdout)")
    // The last frame lasts as long as the one before it: with no stop time given, that is all anyone knows.
    let expected = Double(last - first) / 1e9 + lastFrame
    #expect(abs(duration - expected) <= 0.040, "ffprobe duration \(duration) s, timestamps say \(expected) s")
    let decode = try peer(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
    #expect(decode.status == 0)
    #expect(decode.stdout.isEmpty && decode.stderr.isEmpty, "ffmpeg: \(decode.stderr)")
  }
}
