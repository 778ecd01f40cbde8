import CameraRoll
import Foundation
import Imaging
import KioskCore
import LinuxIO
import Synchronization
import TestPeers
import Testing
import VideoCodec

@testable import Capture
@testable import MediaFiles

/// H.264 movies with sound, made by the recorder from synthetic frames and a synthetic microphone (periods
/// of 1024 frames stamped as ALSA stamps them), judged by ffprobe, ffmpeg and chromium, and by our own box
/// reader for the layout: an AAC-LC track beside the pictures in the same fragments, lined up with them.
@Suite(.serialized) struct SoundMovieTests {
  static let rate = 48_000
  static let period = 1024
  static let start: Int64 = 3_000_000_000
  static let interval: Int64 = 33_333_333

  /// One grey frame (luma `level`) of H264MovieTests' size: the picture the A/V test switches.
  static func flatFrame(_ level: UInt8, _ index: Int) -> StillFrame {
    let (width, height) = (H264MovieTests.width, H264MovieTests.height)
    var bytes = [UInt8](repeating: 128, count: width * height * 2)
    for at in stride(from: 0, to: bytes.count, by: 2) { bytes[at] = level }
    // A small box that moves, so that no two frames are the same picture.
    for y in 0..<8 { for x in 0..<8 { bytes[(y * width + (index * 3 + x) % width) * 2] = level > 100 ? 16 : 235 } }
    return StillFrame(format: .yuyv, width: width, height: height, bytesPerLine: width * 2, range: .limited, bytes: bytes)
  }

  /// `count` frames at 30 fps and the microphone's periods around them, from `lead` before the first frame
  /// to past the stop, each stamped with a little jitter; `signal(t)` is the sound at `t` seconds of the movie.
  static func record(
    _ count: Int, lead: Int64 = 200_000_000, jitter: Bool = true, output: ((RecordingFile) -> any RecordingOutput)? = nil,
    signal: (Double) -> Double, picture: (Int) -> StillFrame
  ) throws -> (summary: MovieSummary, path: String, root: String) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-sound-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    let roll = try CameraRoll(root: root, suffix: "TESTS")
    let recording = try roll.createRecording(tag: "sound", extension: "MP4")
    let file: any RecordingOutput = output?(recording) ?? recording
    let recorder = try MovieRecorder(
      roll: roll, recording: recording, output: file, width: H264MovieTests.width,
      height: H264MovieTests.height, frameRate: 30, preset: .high, sourceFormat: "YUYV", passthrough: false, codec: .h264,
      sound: SoundInput(sampleRate: rate, channels: 1), tag: "sound")
    let sound = try #require(recorder.sound)
    var heard = 0  // periods given
    func periodTime(_ index: Int) -> Int64 { start - lead + Int64(index) * Int64(period) * 1_000_000_000 / Int64(rate) }
    func hear(until time: Int64) {
      while periodTime(heard + 1) <= time {
        let first = periodTime(heard)
        let samples = (0..<period).map { frame -> Int16 in
          let t = Double(first - start) / 1e9 + Double(frame) / Double(rate)
          return Int16(max(-32767, min(32767, (signal(t) * 32767).rounded())))
        }
        // ALSA's period stamps wobble by a scheduler tick; the sample count is what the track keeps.
        let wobble: Int64 = jitter ? Int64([0, 3, -2, 1, -4][heard % 5]) * 1_000_000 : 0
        sound.take(samples, time: first + wobble)
        heard += 1
      }
    }
    for index in 0..<count {
      let time = start + Int64(index) * interval
      hear(until: time)
      recorder.submit(picture(index), timestamp: time, sequence: UInt32(index))
      while recorder.pending > 0 { usleep(500) }
    }
    let stop = start + Int64(count) * interval
    hear(until: stop + 100_000_000)
    let summary = try recorder.stopAndWait(at: stop).get()
    return (summary, "\(root)/\(summary.item.relativePath)", root)
  }

  /// A 1 kHz tone at half scale.
  static func tone(_ t: Double) -> Double { 0.5 * sin(2 * Double.pi * 1000 * t) }

  /// The decoded sound, mono 16-bit at 48 kHz, as ffmpeg gives it.
  static func decodedSound(_ path: String) throws -> [Int16] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = ["-v", "error", "-i", path, "-map", "0:a", "-f", "s16le", "-ac", "1", "-ar", "48000", "-"]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let bytes = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
  }

  /// The power of `frequency` in `samples` (Goertzel), relative to the whole signal's.
  static func goertzel(_ samples: ArraySlice<Int16>, frequency: Double, rate: Double = 48_000) -> Double {
    let coefficient = 2 * cos(2 * Double.pi * frequency / rate)
    var (s1, s2) = (0.0, 0.0)
    var energy = 0.0
    for sample in samples {
      let x = Double(sample)
      energy += x * x
      let s0 = x + coefficient * s1 - s2
      (s2, s1) = (s1, s0)
    }
    let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
    return energy > 0 ? power / (energy * Double(samples.count) / 2) : 0
  }

  @Test func aMovieWithSoundHasAnAACLCTrackAtItsRateWithTheToneAndTheLengthOfThePictures() throws {
    let movie = try Self.record(75, signal: Self.tone) { H264MovieTests.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let info = try H264MovieTests.probe(movie.path)
    let streams = try #require(info["streams"] as? [[String: Any]])
    #expect(streams.count == 2, "pictures and sound")
    let video = try #require(streams.first { $0["codec_type"] as? String == "video" })
    let audio = try #require(streams.first { $0["codec_type"] as? String == "audio" })
    #expect(audio["codec_name"] as? String == "aac")
    #expect(audio["profile"] as? String == "LC")
    #expect(audio["sample_rate"] as? String == "48000")
    #expect(audio["channels"] as? Int == 1)
    #expect(Int(video["nb_read_frames"] as? String ?? "") == 75)
    let videoSeconds = try #require(Double(video["duration"] as? String ?? ""))
    let audioSeconds = try #require(Double(audio["duration"] as? String ?? ""))
    #expect(abs(audioSeconds - videoSeconds) <= 0.05, "sound \(audioSeconds) s, pictures \(videoSeconds) s")
    let decode = try peer(["/usr/bin/ffmpeg", "-v", "error", "-i", movie.path, "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg said: \(decode.stderr)")
    // The tone is there, and it is the tone: 1 kHz dominates its neighbours.
    let pcm = try Self.decodedSound(movie.path)
    #expect(abs(Double(pcm.count) / 48_000 - audioSeconds) < 0.03, "\(pcm.count) samples decoded")
    let middle = pcm[(pcm.count / 4)..<(pcm.count * 3 / 4)]
    let at1k = Self.goertzel(middle, frequency: 1000)
    for other in [500.0, 1500, 2000, 3000] {
      #expect(at1k > 1000 * Self.goertzel(middle, frequency: other), "1 kHz \(at1k), \(other) Hz \(Self.goertzel(middle, frequency: other))")
    }
    #expect(at1k > 0.8, "most of the sound is at 1 kHz: \(at1k)")
    // The record says what the sound is.
    let record = movie.summary.record
    #expect(record.audio == "aac" && record.audioProfile == "LC" && record.audioSampleRate == 48_000 && record.audioChannels == 1)
    #expect(abs((record.audioDurationSeconds ?? 0) - audioSeconds) < 0.002)
  }

  /// Our reader: a second trak, a sound handler, an mp4a entry whose esds holds the encoder's
  /// AudioSpecificConfig (AAC-LC, 48 kHz, one channel), both traks' samples in each chunk's fragment.
  @Test func theSoundTrackIsAnMP4AEntryWithTheEncodersConfigInTheSameFragments() throws {
    let movie = try Self.record(40, signal: Self.tone) { H264MovieTests.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: movie.path)))
    let moov = try #require(MovieFilesTests.child(bytes, path: ["moov"]))
    let traks = Self.children(bytes, in: moov).filter { $0.type == "trak" }
    #expect(traks.count == 2)
    let sound = try #require(traks.last)
    let mdia = try #require(Self.children(bytes, in: sound.range).first { $0.type == "mdia" })
    let hdlr = try #require(Self.children(bytes, in: mdia.range).first { $0.type == "hdlr" })
    #expect(String(decoding: bytes[hdlr.range.lowerBound + 8..<hdlr.range.lowerBound + 12], as: UTF8.self) == "soun")
    let mdhd = try #require(Self.children(bytes, in: mdia.range).first { $0.type == "mdhd" })
    #expect(Self.word(bytes, mdhd.range.lowerBound + 12) == 48_000, "the track counts in samples")
    let minf = try #require(Self.children(bytes, in: mdia.range).first { $0.type == "minf" })
    let stbl = try #require(Self.children(bytes, in: minf.range).first { $0.type == "stbl" })
    let stsd = try #require(Self.children(bytes, in: stbl.range).first { $0.type == "stsd" })
    let entry = try #require(Self.children(bytes, in: (stsd.range.lowerBound + 8)..<stsd.range.upperBound).first)
    #expect(entry.type == "mp4a")
    let entryBytes = Array(bytes[(entry.range.lowerBound - 8)..<entry.range.upperBound])
    let format = try #require(AudioTrackFormat.read(entry: entryBytes, timescale: 48_000))
    let config = try #require(format.audioSpecificConfig)
    // 5 bits object type (2: AAC LC), 4 bits frequency index (3: 48 kHz), 4 bits channel configuration (1).
    #expect(config.count >= 2 && config[0] >> 3 == 2 && (config[0] & 7) << 1 | config[1] >> 7 == 3 && (config[1] >> 3) & 15 == 1)
    let encoders = try AACEncoder(sampleRate: 48_000, channels: 1).audioSpecificConfig
    #expect(config == encoders)
    // stts: every AAC frame 1024 samples; co64: each sound chunk inside the mdat of a picture chunk's fragment.
    let stts = try #require(Self.children(bytes, in: stbl.range).first { $0.type == "stts" })
    #expect(Self.word(bytes, stts.range.lowerBound + 4) == 1 && Self.word(bytes, stts.range.lowerBound + 12) == 1024)
    let co64 = try #require(Self.children(bytes, in: stbl.range).first { $0.type == "co64" })
    let chunks = Self.word(bytes, co64.range.lowerBound + 4)
    #expect(chunks >= 4, "sound in most fragments: \(chunks) chunks")
    let mdats = Self.children(bytes, in: 0..<bytes.count).filter { $0.type == "mdat" }
    for chunk in 0..<chunks {
      let offset = Self.word(bytes, co64.range.lowerBound + 8 + chunk * 8) << 32 | Self.word(bytes, co64.range.lowerBound + 12 + chunk * 8)
      #expect(mdats.contains { $0.range.contains(offset) }, "sound chunk \(chunk) at \(offset) is in an mdat")
    }
  }

  /// Five moments at which the picture switches (grey to black and back) and a beep starts: in the decoded
  /// file each beep's onset is within 10 ms of the first frame of the new picture (the encoder's priming
  /// is taken out, and jittery period stamps do not move the sound). The board's test allows a frame
  /// interval more; here the clock is synthetic.
  @Test func eachBeepStartsWithThePictureItCameWith() throws {
    let beeps = [12, 27, 41, 58, 72].map { Double($0) / 30 }  // on frame times
    func phase(_ t: Double) -> Int { beeps.filter { $0 <= t + 1e-9 }.count }
    let movie = try Self.record(
      85, signal: { t in beeps.contains { t >= $0 && t < $0 + 0.08 } ? Self.tone(t) : 0 },
      picture: { index in Self.flatFrame(phase(Double(index) / 30) % 2 == 0 ? 180 : 16, index) })
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let offsets = try Self.syncOffsets(movie.path, moments: beeps.count)
    print("A/V offsets (sound onset - picture change), ms: \(offsets.map { Int(($0 * 1000).rounded()) })")
    #expect(offsets.count == beeps.count, "\(offsets)")
    for offset in offsets { #expect(abs(offset) <= 0.010, "offset \(offset * 1000) ms") }
  }

  /// For each picture change (mean luma jumps) the onset of the next beep (1 ms envelope past half the
  /// tone's), in seconds of the decoded file: onset minus change.
  static func syncOffsets(_ path: String, moments: Int) throws -> [Double] {
    let times = try peer([
      "/usr/bin/ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path,
    ]).stdout.split(separator: "\n").compactMap { line in
      // "0.033333" or "0.000000," (the first frame's line has an empty side-data field after it).
      line.split(separator: ",").first.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }
    #expect(times.count >= 2 && times[0] == 0 && abs(times[1] - 1.0 / 30) < 0.001, "frame times \(times.prefix(3))")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    process.arguments = ["-v", "error", "-i", path, "-map", "0:v", "-vf", "scale=16:16", "-f", "rawvideo", "-pix_fmt", "gray", "-"]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let grey = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
    process.waitUntilExit()
    let means = stride(from: 0, to: grey.count - 255, by: 256).map { grey[$0..<$0 + 256].reduce(0) { $0 + Int($1) } / 256 }
    var changes: [Double] = []
    for index in 1..<min(means.count, times.count) where abs(means[index] - means[index - 1]) > 60 { changes.append(times[index]) }
    let pcm = try decodedSound(path)
    let window = 48
    let envelope = stride(from: 0, to: pcm.count - window, by: window).map { at in
      (pcm[at..<at + window].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)).squareRoot()
    }
    let half = 0.5 * 32767 * 0.5 / 2.0.squareRoot()
    return changes.prefix(moments).compactMap { change in
      let from = max(0, Int((change - 0.1) * 1000))
      guard let onset = envelope[from...].firstIndex(where: { $0 > half }) else { return nil }
      return Double(onset * window) / 48_000 - change
    }
  }

  @Test func aRecordingWithSoundCutByACrashKeepsBothTracksToItsLastWholeFragment() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskcam-soundcut-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let pieces = Mutex<PieceRecorder?>(nil)
    let movie = try Self.record(
      60, output: { recording in
        let file = PieceRecorder(recording)
        pieces.withLock { $0 = file }
        return file
      }, signal: Self.tone, picture: { H264MovieTests.yuyvFrame($0) })
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    // What the hidden file held before the finish (the header and the fragments, each appended; the finish
    // writes in place), the last fragment cut in two.
    let fragments = try #require(pieces.withLock { $0 }).pieces
    let cut = fragments.dropLast().reduce([], +) + fragments.last!.prefix(fragments.last!.count / 2)
    let recovered = try #require(MovieWriter.recover(length: UInt64(cut.count)) { offset, count in
      Array(cut[Int(offset)..<min(cut.count, Int(offset) + count)])
    })
    #expect(recovered.audio?.sampleRate == 48_000 && recovered.audio?.channels == 1, "the sound track comes back")
    #expect(recovered.audioSamplesWritten > 0 && recovered.samplesWritten > 0 && recovered.samplesWritten < 60)
    let finish = recovered.finish()
    var file = Array(cut[0..<Int(recovered.length)]) + finish.tail
    for offset in finish.retype { file.replaceSubrange(Int(offset)..<Int(offset) + 4, with: MovieWriter.Finish.free) }
    let path = "\(root)/recovered.MP4"
    try Data(file).write(to: URL(fileURLWithPath: path))
    let decode = try peer(["/usr/bin/ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
    #expect(decode.status == 0 && decode.stderr.isEmpty, "ffmpeg said: \(decode.stderr)")
    let streams = try #require(try H264MovieTests.probe(path)["streams"] as? [[String: Any]])
    #expect(streams.map { $0["codec_name"] as? String } == ["h264", "aac"])
    #expect(Int(streams.first?["nb_read_frames"] as? String ?? "") == recovered.samplesWritten)
    let pcm = try Self.decodedSound(path)
    #expect(pcm.count > 48_000 / 2, "the sound up to the cut: \(pcm.count) samples")
    if pcm.count > 4096 { #expect(Self.goertzel(pcm[2048...], frequency: 1000) > 0.8) }
  }

  @Test func chromiumPlaysAMovieWithSoundToTheEndAndDecodesTheSound() throws {
    let movie = try Self.record(60, signal: Self.tone) { H264MovieTests.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let played = try H264MovieTests.playInChromium(movie.path)
    #expect(played["error"] == nil, "chromium: \(played["error"] ?? "")")
    #expect(played["canPlaySound"] as? String == "probably")
    let duration = played["duration"] as? Double ?? 0
    #expect(abs(duration - 2.0) <= 0.05, "60 frames at 30 fps; chromium says \(duration) s")
    #expect(played["ended"] as? Bool == true, "played to the end")
    #expect((played["audioBytes"] as? Int ?? 0) > 0, "chromium decoded the sound: \(played["audioBytes"] ?? "nothing")")
  }

  /// A slow encoder writes its pictures seconds after their sound was heard: the sound waits for the pictures
  /// of its moment, in each fragment and at the end, and never runs more than an AAC frame past them.
  @Test func soundHeardAheadOfTheEncodedPicturesWaitsForThemAndEndsWithThem() {
    let audio = AudioTrackFormat.aac(sampleRate: 48_000, channels: 1, audioSpecificConfig: [0x11, 0x88], bitRate: 64_000)
    var writer = MovieWriter(width: 16, height: 16, format: .motionJPEG(width: 16, height: 16), frameRate: 30, audio: audio)
    _ = writer.start()
    // Three seconds of sound are in before the first of 45 pictures (1.5 s).
    for _ in 0..<141 { writer.appendAudio([UInt8](repeating: 0x21, count: 10)) }
    let frameTime = 1024.0 / 48_000
    for index in 0..<45 {
      _ = writer.append([0xFF, 0xD8, UInt8(index)], timestamp: Int64(index) * 33_333_333)
      let pictures = Double(MovieWriter.nanoseconds(writer.ticksWritten)) / 1e9
      let sound = Double(writer.audioNanosecondsWritten) / 1e9
      #expect(sound <= pictures + frameTime + 1e-9, "after picture \(index): sound \(sound) s, pictures \(pictures) s")
    }
    _ = writer.flush(end: 45 * 33_333_333)
    let pictures = Double(MovieWriter.nanoseconds(writer.ticksWritten)) / 1e9
    let sound = Double(writer.audioNanosecondsWritten) / 1e9
    #expect(abs(pictures - 1.5) < 0.001 && sound >= pictures - 1e-9 && sound <= pictures + frameTime, "sound \(sound) s, pictures \(pictures) s")
  }

  /// A movie recorded without a microphone has no sound track at all (not a silent one), and plays.
  @Test func withoutAMicrophoneTheMovieHasOneStreamAndTheRecordSaysNone() throws {
    let movie = try H264MovieTests.record(20) { H264MovieTests.yuyvFrame($0) }
    defer { try? FileManager.default.removeItem(atPath: movie.root) }
    let streams = try #require(try H264MovieTests.probe(movie.path)["streams"] as? [[String: Any]])
    #expect(streams.map { $0["codec_type"] as? String } == ["video"])
    #expect(movie.summary.record.audio == "none" && movie.summary.record.audioSampleRate == nil)
  }

  static func children(_ bytes: [UInt8], in range: Range<Int>) -> [(type: String, range: Range<Int>)] {
    var found: [(String, Range<Int>)] = []
    var offset = range.lowerBound
    while offset + 8 <= range.upperBound {
      let size = word(bytes, offset)
      guard size >= 8, offset + size <= range.upperBound else { break }
      found.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset + 8..<offset + size))
      offset += size
    }
    return found
  }

  static func word(_ bytes: [UInt8], _ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
}

/// The sound's timeline, pure: jitter inside the tolerance never moves the sound, a lost period becomes
/// silence, a microphone clock that runs fast or slow is held to the camera's over an hour.
@Suite struct AudioTimelineTests {
  static let rate = 48_000

  static func time(_ frames: Int64) -> Int64 { frames * 1_000_000_000 / Int64(rate) }

  @Test func soundBeforeTheFirstPictureIsDroppedAndAGapBeforeItIsSilence() {
    var early = AudioTimeline(rate: Self.rate, channels: 1)
    #expect(early.take([Int16](repeating: 1, count: 1024), time: 1_000_000_000).isEmpty, "kept until the origin is known")
    // The origin 10 ms into the period: 480 frames before it go.
    #expect(early.start(at: 1_010_000_000).count == 1024 - 480)
    var late = AudioTimeline(rate: Self.rate, channels: 1)
    _ = late.start(at: 1_000_000_000)
    let first = late.take([Int16](repeating: 1, count: 1024), time: 1_010_000_000)
    #expect(first.count == 480 + 1024 && first.prefix(480).allSatisfy { $0 == 0 }, "10 ms of silence first")
  }

  @Test func jitterInsideTheToleranceIsIgnoredAndALostPeriodIsSilence() {
    var timeline = AudioTimeline(rate: Self.rate, channels: 2)
    _ = timeline.start(at: 0)
    var handed = 0
    for period in 0..<50 {
      let wobble = Int64([0, 4, -3, 2, -5][period % 5]) * 1_000_000
      handed += timeline.take([Int16](repeating: 1, count: 2048), time: Self.time(Int64(period) * 1024) + wobble).count / 2
    }
    #expect(handed == 50 * 1024 && timeline.silenceFrames == 0 && timeline.droppedFrames == 0)
    // Period 50 never came (an overrun): 51 brings 1024 frames of silence before it.
    let next = timeline.take([Int16](repeating: 1, count: 2048), time: Self.time(51 * 1024))
    #expect(next.count == 2 * 2048 && timeline.silenceFrames == 1024)
  }

  /// A microphone whose clock runs 0.1% fast against CLOCK_MONOTONIC (far worse than a real crystal) over an
  /// hour: the count is put right each time it is a tolerance away, never further.
  @Test(arguments: [1.001, 0.999])
  func aDriftingMicrophoneIsHeldWithinTheToleranceForAnHour(speed: Double) {
    var timeline = AudioTimeline(rate: Self.rate, channels: 1)
    _ = timeline.start(at: 0)
    let periods = 3600 * Self.rate / 1024
    var worst: Int64 = 0
    let samples = [Int16](repeating: 1, count: 1024)
    for period in 0..<periods {
      // The device delivers 1024 of its frames per period; on the monotonic clock they take 1024 / speed.
      let time = Int64(Double(Self.time(Int64(period) * 1024)) / speed)
      _ = timeline.take(samples, time: time)
      let heard = Self.time(timeline.handed)
      let end = time + Int64(Double(Self.time(1024)) / speed)
      worst = max(worst, abs(heard - end))
    }
    #expect(worst <= AudioTimeline.tolerance + Self.time(1024), "worst \(worst / 1_000_000) ms off over an hour")
    #expect(speed > 1 ? timeline.droppedFrames > 0 : timeline.silenceFrames > 0)
  }
}
