import CameraRoll
import LinuxIO
import Foundation
import Imaging
import JPEGCodec
import KioskCore
import MediaFiles
import TestPeers
import Testing
import VideoCodec

@testable import Capture

/// H.264 movies made by the recorder from synthetic camera frames, checked by ffprobe and ffmpeg (nobody here
/// wrote them) for what phones and browsers need: High profile, 4:2:0 limited range with its colour said,
/// keyframes a second apart, every frame there, colours right after a decode; and by our own box reader for
/// the layout.
@Suite(.serialized) struct H264MovieTests {
  static let width = 320
  static let height = 180
  static let rate = 30

  /// 100% colour bars in BT.601 limited range (white, yellow, cyan, green, magenta, red, blue, black), and
  /// the RGB each must decode to.
  static let bars: [(y: UInt8, cb: UInt8, cr: UInt8)] = [
    (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34), (106, 202, 222), (81, 90, 240), (41, 240, 110),
    (16, 128, 128),
  ]
  static let barsRGB: [(Int, Int, Int)] = [
    (255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0),
  ]

  /// Bars on the top two thirds, and below them a grey box that moves a step each frame, so that every frame
  /// differs and the encoder has motion to code.
  static func yuyvFrame(_ index: Int) -> StillFrame {
    let stride = width * 2
    var bytes = [UInt8](repeating: 0, count: stride * height)
    for y in 0..<height {
      for pair in 0..<(width / 2) {
        let x = pair * 2
        var (luma, cb, cr): (UInt8, UInt8, UInt8)
        if y < height * 2 / 3 {
          (luma, cb, cr) = bars[x * bars.count / width]
        } else {
          let box = (index * 4) % (width - 32)
          (luma, cb, cr) = (x >= box && x < box + 32) ? (180, 128, 128) : (16, 128, 128)
        }
        let at = y * stride + pair * 4
        bytes[at] = luma
        bytes[at + 1] = cb
        bytes[at + 2] = luma
        bytes[at + 3] = cr
      }
    }
    return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: stride, range: .limited, bytes: bytes)
  }

  /// The same picture as a webcam's full-range JPEG.
  static func mjpegFrame(_ index: Int) throws -> StillFrame {
    let planes = try StillPipeline.planes(of: yuyvFrame(index))
    let jpeg = try JPEGEncoder.encode(planes, quality: 95)
    return StillFrame(format: .mjpeg, width: width, height: height, bytesPerLine: 0, range: .full, bytes: jpeg)
  }

  struct Recorded {
    let summary: MovieSummary
    let path: String
    let root: String
  }

  /// `count` frames at 30 fps with a little jitter through a real recorder into a real roll.
  static func record(
    _ count: Int, interval: Int64 = 33_333_333, frame: (Int) throws -> StillFrame
  ) throws -> Recorded {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-h264-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recorder = try MovieRecorder(
      roll: roll, width: width, height: height, frameRate: rate, preset: .high, sourceFormat: "YUYV", passthrough: false,
      codec: .h264, tag: "h264")
    let start: Int64 = 3_000_000_000
    for index in 0..<count {
      let jitter = Int64([0, 2, -1, 1][index % 4]) * 1_000_000
      recorder.submit(try frame(index), timestamp: start + Int64(index) * interval + jitter, sequence: UInt32(index))
      // Lossless for the test: every frame is taken before the next comes.
      while recorder.pending > 0 { usleep(500) }
    }
    let summary = try recorder.stopAndWait(at: start + Int64(count) * interval).get()
    return Recorded(summary: summary, path: "\(root)/\(summary.item.relativePath)", root: root)
  }

  static func probe(_ path: String) throws -> [String: Any] {
    let result = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-count_frames", "-show_streams", "-show_format", "-of", "json", path,
    ])
    #expect(result.status == 0, "ffprobe: \(result.stderr)")
    return try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
  }

  @Test func aMovieIsHighProfile420LimitedRangeWithItsColourSaidAndEveryFrameThere() throws {
    let movie = try Self.record(75) { Self.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    #expect(movie.summary.item.relativePath.hasSuffix("/IMG_0001.MP4"))
    #expect(movie.summary.frames == 75)
    let info = try Self.probe(movie.path)
    let streams = try #require(info["streams"] as? [[String: Any]])
    #expect(streams.count == 1, "video only")
    let video = try #require(streams.first)
    #expect(video["codec_name"] as? String == "h264")
    #expect(video["profile"] as? String == "High")
    #expect(video["pix_fmt"] as? String == "yuv420p")
    #expect(video["color_range"] as? String == "tv")
    #expect(video["color_space"] as? String == "smpte170m")
    #expect(video["color_primaries"] as? String == "bt709")
    #expect(video["color_transfer"] as? String == "iec61966-2-1")
    #expect(video["width"] as? Int == Self.width && video["height"] as? Int == Self.height)
    #expect(Int(video["nb_read_frames"] as? String ?? "") == movie.summary.frames, "ffprobe counts the frames the record says")
    let duration = try #require(Double(video["duration"] as? String ?? ""))
    #expect(abs(duration - 2.5) <= 1.0 / 30 + 0.001, "75 frames at 30 fps last 2.5 s, ffprobe says \(duration)")
    let format = try #require(info["format"] as? [String: Any])
    #expect((format["format_name"] as? String ?? "").contains("mp4"))
  }

  @Test func ffmpegDecodesEveryFrameInSilenceAndTheBarsComeBackInTheirColours() throws {
    let movie = try Self.record(45) { Self.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let decode = try peer(["/usr/bin/ffmpeg", "-v", "error", "-i", movie.path, "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg said: \(decode.stderr)")
    try Self.expectBars(movie.path, at: 0.75)
  }

  @Test func aWebcamsFullRangeJPEGIsSqueezedToLimitedRangeNotClipped() throws {
    let movie = try Self.record(30) { try Self.mjpegFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    try Self.expectBars(movie.path, at: 0.5)
    // The stream's own numbers (decoded to its own yuv420p, no conversion): the white bar at 235 and the
    // black under the bars at 16, where a full-range picture copied as it is would give 255 and 0.
    let luma = try Self.rawFrame(movie.path, at: 0.5, pixelFormat: "yuv420p")
    #expect(luma.count == Self.width * Self.height * 3 / 2, "one 4:2:0 frame")
    guard luma.count == Self.width * Self.height * 3 / 2 else { return }
    let white = Int(luma[Self.height / 3 * Self.width + Self.width / 16])
    let black = Int(luma[(Self.height - 4) * Self.width + Self.width - 4])
    #expect(abs(white - 235) <= 4, "white at \(white)")
    #expect(abs(black - 16) <= 4, "black at \(black)")
  }

  static func rawFrame(_ path: String, at seconds: Double, pixelFormat: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = [
      "-v", "error", "-ss", "\(seconds)", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", pixelFormat, "-",
    ]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let bytes = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    return bytes
  }

  /// ffmpeg's own decode of the frame at `seconds` to RGB, sampled in the middle of each bar.
  static func expectBars(_ path: String, at seconds: Double) throws {
    let rgb = try rawFrame(path, at: seconds, pixelFormat: "rgb24")
    #expect(rgb.count == width * height * 3, "one RGB frame")
    guard rgb.count == width * height * 3 else { return }
    let y = height / 3
    for (index, expected) in barsRGB.enumerated() {
      let x = (index * width + width / 2) / barsRGB.count
      let at = (y * width + x) * 3
      let got = (Int(rgb[at]), Int(rgb[at + 1]), Int(rgb[at + 2]))
      let off = max(abs(got.0 - expected.0), abs(got.1 - expected.1), abs(got.2 - expected.2))
      #expect(off <= 16, "bar \(index) decodes to \(got), expected \(expected)")
    }
  }

  /// The repository's board/virtual/play-movie.py: Debian's chromium, headless, plays the file from a page.
  static func playInChromium(_ path: String, probeY: Double = 1.0 / 3) throws -> [String: Any] {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("board/virtual/play-movie.py").path
    let played = try peer([script, path, "\(probeY)"])
    #expect(played.status == 0, "play-movie.py: \(played.stderr)")
    return try #require(JSONSerialization.jsonObject(with: Data(played.stdout.utf8)) as? [String: Any], "\(played.stdout)")
  }

  @Test func chromiumPlaysItToTheEndSeeksToTheMiddleAndDrawsTheBars() throws {
    let movie = try Self.record(90) { Self.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let played = try Self.playInChromium(movie.path)
    #expect(played["error"] == nil, "chromium: \(played["error"] ?? "")")
    #expect(played["canPlay"] as? String == "probably")
    let duration = played["duration"] as? Double ?? 0
    #expect(abs(duration - 3.0) <= 1.0 / 30 + 0.001, "90 frames at 30 fps; chromium says \(duration) s")
    #expect(played["ended"] as? Bool == true, "played to the end")
    let seeked = played["seekedTo"] as? Double ?? -1
    #expect(abs(seeked - 1.5) <= 0.05, "a seek to the middle landed at \(seeked)")
    let samples = (played["samples"] as? [[Int]]) ?? []
    #expect(samples.count == Self.barsRGB.count)
    for (index, (got, expected)) in zip(samples, Self.barsRGB).enumerated() where got.count == 3 {
      let off = max(abs(got[0] - expected.0), abs(got[1] - expected.1), abs(got[2] - expected.2))
      #expect(off <= 24, "bar \(index) drawn as \(got) in chromium, expected \(expected)")
    }
  }

  /// Review mode's reader: the index our reader makes of the finished file, and the frames libavcodec's
  /// decoder gives for it, as XRGB with the bars in their colours (frame 0 and one decoded through 44 others).
  @Test func reviewModeDecodesTheMoviesFramesInOrder() throws {
    let movie = try Self.record(60) { Self.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: movie.path)))
    let index = try MovieIndex.read(length: UInt64(bytes.count)) { offset, count in
      Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
    }
    #expect(index.codec == "avc1" && index.samples.count == 60 && index.decoderConfiguration != nil)
    let frames = try MovieFrames(index) { sample in Array(bytes[Int(sample.offset)..<Int(sample.offset) + sample.size]) }
    for number in [0, 45] {
      let fitted = try frames.picture(number, screenWidth: Self.width, screenHeight: Self.height, orientation: PreviewOrientation(rotation: 0, mirror: false))
      let picture = fitted.picture
      #expect(picture.width == Self.width && picture.height == Self.height)
      let y = Self.height / 3
      for (bar, expected) in Self.barsRGB.enumerated() {
        let x = (bar * Self.width + Self.width / 2) / Self.barsRGB.count
        let at = (y * Self.width + x) * 4
        // XRGB8888 little-endian: blue, green, red, unused.
        let got = (Int(picture.pixels[at + 2]), Int(picture.pixels[at + 1]), Int(picture.pixels[at]))
        let off = max(abs(got.0 - expected.0), abs(got.1 - expected.1), abs(got.2 - expected.2))
        #expect(off <= 24, "frame \(number), bar \(bar): \(got), expected \(expected)")
      }
    }
    #expect(throws: (any Error).self, "H.264 is decoded forwards only") {
      try frames.picture(10, screenWidth: Self.width, screenHeight: Self.height, orientation: PreviewOrientation(rotation: 0, mirror: false))
    }
  }

  /// A board too slow for the camera keeps a frame in seven (the rest dropped at the queue): keyframes still
  /// come each second of the movie, not each 60 frames (12 s of it).
  @Test(arguments: [Int64(33_333_333), 233_333_333])
  func keyframesComeAtLeastEverySecondAndEachFragmentStartsWithOne(interval: Int64) throws {
    let movie = try Self.record(interval > 100_000_000 ? 30 : 100, interval: interval) { Self.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let frames = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "frame=key_frame,pts_time", "-of", "csv=p=0",
      movie.path,
    ])
    let keys = frames.stdout.split(separator: "\n").compactMap { line -> Double? in
      let fields = line.split(separator: ",")
      return fields.count == 2 && fields[0] == "1" ? Double(fields[1]) : nil
    }
    #expect(keys.first == 0, "the movie starts on a keyframe")
    let gaps = zip(keys.dropFirst(), keys).map { $0 - $1 }
    #expect(keys.count >= 4 && gaps.allSatisfy { $0 <= 1.0 + 0.001 }, "keyframes at \(keys)")
    // Our reader: the sync table lists the same keyframes, and the finished file's chunks (one per
    // fragment) each begin at one.
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: movie.path)))
    let boxes = MovieFilesTests.topLevel(bytes).map(\.0)
    #expect(boxes.first == "ftyp" && boxes.last == "moov" && !boxes.contains("moof"))
    let stbl = ["moov", "trak", "mdia", "minf", "stbl"]
    let stss = try #require(MovieFilesTests.child(bytes, path: stbl + ["stss"]), "a sync sample table")
    let syncCount = bytes[stss.lowerBound + 4..<stss.lowerBound + 8].reduce(0) { $0 << 8 | Int($1) }
    #expect(syncCount == keys.count)
    let co64 = try #require(MovieFilesTests.child(bytes, path: stbl + ["co64"]))
    let chunks = bytes[co64.lowerBound + 4..<co64.lowerBound + 8].reduce(0) { $0 << 8 | Int($1) }
    // Every keyframe starts a fragment (and so a chunk); fragments of at most a quarter second fall between.
    #expect(chunks >= keys.count && chunks >= movie.summary.frames / 8, "\(chunks) chunks for \(keys.count) keyframes")
    let stsc = try #require(MovieFilesTests.child(bytes, path: stbl + ["stsc"]))
    var firsts: [Int] = []
    var sample = 1
    let runs = bytes[stsc.lowerBound + 4..<stsc.lowerBound + 8].reduce(0) { $0 << 8 | Int($1) }
    let entries = (0..<runs).map { run -> (Int, Int) in
      let at = stsc.lowerBound + 8 + run * 12
      let word = { (offset: Int) in bytes[at + offset..<at + offset + 4].reduce(0) { $0 << 8 | Int($1) } }
      return (word(0), word(4))
    }
    for chunk in 1...chunks {
      firsts.append(sample)
      sample += entries.last { $0.0 <= chunk }?.1 ?? 0
    }
    let syncNumbers = (0..<syncCount).map { index in
      bytes[stss.lowerBound + 8 + index * 4..<stss.lowerBound + 12 + index * 4].reduce(0) { $0 << 8 | Int($1) }
    }
    #expect(Set(syncNumbers).isSubset(of: Set(firsts)), "keyframes \(syncNumbers) each first in a chunk: \(firsts)")
  }

  @Test func aRecordingCutByACrashIsRecoveredToItsLastWholeFragmentAndPlays() throws {
    // The finished movie's bytes up to a point inside its last fragment, as a power cut leaves the hidden file.
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-h264cut-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    var frames: [StillFrame] = []
    for index in 0..<80 { frames.append(Self.yuyvFrame(index)) }
    let pieces = try Self.fragmentedBytes(frames)
    let cut = pieces.dropLast().reduce([], +) + pieces.last!.prefix(pieces.last!.count / 2)
    let recovered = try #require(MovieWriter.recover(length: UInt64(cut.count)) { offset, count in
      Array(cut[Int(offset)..<min(cut.count, Int(offset) + count)])
    })
    #expect(recovered.format.codec == "avc1" && recovered.format.container == .mp4)
    // What the record needs, from the recorder itself: the camera's format, the encoder's rate, the first frame.
    let start = try #require(recovered.recordingStart, "the recording's start in its first fragment")
    #expect(start.sourceFormat == "YUYV" && start.sequence == 0 && (start.bitRate ?? 0) > 100_000, "\(start)")
    let whole = pieces.dropFirst().dropLast().count
    #expect(recovered.samplesWritten < 80 && recovered.samplesWritten >= 80 - 8, "\(whole) whole fragments kept, the cut one dropped")
    let finish = recovered.finish()
    var file = Array(cut[0..<Int(recovered.length)]) + finish.tail
    for offset in finish.retype { file.replaceSubrange(Int(offset)..<Int(offset) + 4, with: MovieWriter.Finish.free) }
    let path = "\(root)/recovered.MP4"
    try Data(file).write(to: URL(fileURLWithPath: path))
    let decode = try peer(["/usr/bin/ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg said: \(decode.stderr)")
    let video = try #require((try Self.probe(path)["streams"] as? [[String: Any]])?.first)
    #expect(Int(video["nb_read_frames"] as? String ?? "") == recovered.samplesWritten)
  }

  /// The file as the recorder writes it while recording: header, then each fragment.
  static func fragmentedBytes(_ frames: [StillFrame]) throws -> [[UInt8]] {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-h264raw-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recording = try roll.createRecording(tag: "cut", extension: "MP4")
    let file = PieceRecorder(recording)
    let recorder = try MovieRecorder(
      roll: roll, recording: recording, output: file, width: width, height: height, frameRate: rate, preset: .high,
      sourceFormat: "YUYV", passthrough: false, codec: .h264, tag: "cut")
    for (index, frame) in frames.enumerated() {
      recorder.submit(frame, timestamp: Int64(index) * 33_333_333, sequence: UInt32(index))
      while recorder.pending > 0 { usleep(500) }
    }
    _ = recorder.stopAndWait(at: Int64(frames.count) * 33_333_333)
    return file.pieces
  }
}

/// The recording's file, keeping each append apart: where the fragments begin and end.
final class PieceRecorder: RecordingOutput, @unchecked Sendable {
  let inner: RecordingFile
  private(set) var pieces: [[UInt8]] = []
  init(_ inner: RecordingFile) { self.inner = inner }
  func append(_ bytes: [UInt8]) throws(SystemCallError) {
    pieces.append(bytes)
    try inner.append(bytes)
  }
  func write(_ bytes: [UInt8], at offset: UInt64) throws(SystemCallError) { try inner.write(bytes, at: offset) }
  func sync() throws(SystemCallError) { try inner.sync() }
  func truncate(to length: UInt64) throws(SystemCallError) { try inner.truncate(to: length) }
  func size() throws(SystemCallError) -> UInt64 { try inner.size() }
}

/// The preset the service measures at start: the slowest that leaves room in the frame interval. The rates
/// are far from any machine's edge (1 fps: a second a picture; 1000 fps at 1080p: a millisecond), so the
/// answers do not depend on how busy this machine is.
@Suite struct H264PresetChoiceTests {
  @Test func aRateEveryPresetHoldsGetsTheSlowestPreset() throws {
    let settings = H264Settings(width: 320, height: 180, frameRate: 1, bitRate: 100_000, threads: 1)
    let choice = try H264PresetChoice.measure(settings, pictures: 3)
    #expect(choice.preset == .veryfast && choice.holdsRate, "\(choice.evidence)")
    #expect(choice.milliseconds.map(\.0) == [.ultrafast, .superfast, .veryfast], "every preset measured, fastest first")
  }

  @Test func aRateNoPresetHoldsGetsTheFastestAndSaysSo() throws {
    let settings = H264Settings(width: 1920, height: 1080, frameRate: 1000, bitRate: 8_000_000, threads: 1)
    let choice = try H264PresetChoice.measure(settings, pictures: 2)
    #expect(choice.preset == .ultrafast && !choice.holdsRate, "\(choice.evidence)")
    #expect(choice.milliseconds.count == 1, "the slower presets are not tried")
    #expect(choice.evidence.contains("too slow for the rate"))
  }
}
